"""einsum: a product of tensors summed over the indices the equation leaves out, built from
operations autograd already knows (diagonal, permute, reshape, *, sum), so its backward (and a
double backward) is theirs. It multiplies everything out before summing: simple, not frugal.
"""

import string

from .arithmetic import mul
from .diagonal import diagonal
from .reductions import sum as sum_
from .shape import permute, reshape

_ELLIPSIS_LETTERS = string.ascii_uppercase  # the dims "..." stands for, named from the end


def _expand_ellipsis(term, ndim):
    if "..." not in term:
        return term
    n = ndim - (len(term) - 3)
    return term.replace("...", _ELLIPSIS_LETTERS[len(_ELLIPSIS_LETTERS) - n :])


def _parse(equation, operands):
    """(the subscripts of each operand, those of the output), with "..." spelled out."""
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    terms = lhs.split(",")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    terms = [_expand_ellipsis(t, x.dim()) for t, x in zip(terms, operands)]
    broadcast = max(terms, key=lambda t: sum(c.isupper() for c in t))
    dims = "".join(c for c in broadcast if c.isupper())
    if arrow:
        return terms, rhs.replace("...", dims)
    once = sorted(c for c in set("".join(terms)) if c.islower() and "".join(terms).count(c) == 1)
    return terms, dims + "".join(once)


def _without_repeats(x, term):
    """x and its subscripts, each index repeated within it replaced by that diagonal (last)."""
    while len(set(term)) < len(term):
        c = next(c for c in term if term.count(c) > 1)
        p = term.index(c)
        q = term.index(c, p + 1)
        x = diagonal(x, 0, p, q)
        term = term[:p] + term[p + 1 : q] + term[q + 1 :] + c
    return x, term


def einsum(equation, *operands):
    """Sum of products over the indices the equation names: einsum("ij,jk->ik", a, b) is a @ b."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    terms, output = _parse(equation, operands)
    order = output + "".join(dict.fromkeys(c for c in "".join(terms) if c not in output))
    product = None
    for x, term in zip(operands, terms):
        x, term = _without_repeats(x, term)
        x = permute(x, sorted(range(len(term)), key=lambda i: order.index(term[i])))
        sizes = {c: n for c, n in zip(sorted(term, key=order.index), x.shape)}
        x = reshape(x, [sizes.get(c, 1) for c in order])
        product = x if product is None else mul(product, x)
    summed = tuple(range(len(output), len(order)))
    return sum_(product, summed) if summed else product
