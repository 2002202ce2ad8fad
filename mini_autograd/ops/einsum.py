"""einsum, computed as ATen computes it (aten/src/ATen/native/Linear.cpp, ported; PyTorch,
BSD-3-Clause): every operand's dims aligned to one order (the output's labels, then the summed
ones; diagonals for repeated labels, size-1 dims for missing ones), then the operands contracted
left to right, each pair by sumproduct_pair (a permute, a reshape to 3-D, one bmm, a view and a
permute back). Built from operations autograd already knows, so the graph is PyTorch's and its
backward (and double backward) are theirs.
"""

from .arithmetic import mul
from .compositions import movedim
from .diagonal import diagonal
from .linalg import bmm
from .reductions import sum as sum_
from .shape import permute, reshape, unsqueeze, view

_LETTERS = 26
_ELLIPSIS = 2 * _LETTERS  # the code of "..." among the labels 0..51 (A-Z, then a-z)


def _subscript(label):
    return ord(label) - ord("A") if label.isupper() else ord(label) - ord("a") + _LETTERS


def _label(subscript):
    return chr(subscript + ord("A")) if subscript < _LETTERS else chr(subscript - _LETTERS + 97)


def _parse_operands(lhs, num_ops):
    """The labels of each operand (codes; _ELLIPSIS for "..."), with PyTorch's errors."""
    op_labels, current, in_ellipsis, i = [[] for _ in range(num_ops)], 0, False, 0
    while i < len(lhs):
        label = lhs[i]
        if label == ".":
            if in_ellipsis:
                raise RuntimeError(
                    f"einsum(): found '.' for operand {current} for which an ellipsis was already "
                    "found"
                )
            if not lhs.startswith("...", i):
                raise RuntimeError(
                    f"einsum(): found '.' for operand {current} that is not part of any ellipsis"
                )
            op_labels[current].append(_ELLIPSIS)
            in_ellipsis, i = True, i + 2
        elif label == ",":
            current += 1
            if current >= num_ops:
                raise RuntimeError(
                    "einsum(): fewer operands were provided than specified in the equation"
                )
            in_ellipsis = False
        elif label != " ":
            if not label.isascii() or not label.isalpha():
                raise RuntimeError(
                    f"einsum(): invalid subscript given at index {i} in the equation string, "
                    "subscripts must be in [a-zA-Z]"
                )
            op_labels[current].append(_subscript(label))
        i += 1
    if current != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return op_labels


def sumproduct_pair(left, right, sum_dims, keepdim):
    """(left * right).sum(sum_dims), both with the same number of dims: the dims in both and the
    output (lro), in left only (lo), in right only (ro) and summed, through one bmm."""
    if not sum_dims:
        return mul(left, right)
    dims = left.ndim
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(dims):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                if left.shape[i] != right.shape[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= left.shape[i]
            elif sl:
                left = sum_(left, i, True)
            elif sr:
                right = sum_(right, i, True)
        elif sl and sr:
            if left.shape[i] != right.shape[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    out_size = [left.shape[d] for d in lro + lo] + [1] * len(sum_dims)
    out_size += [right.shape[d] for d in ro]
    lpermutation = lro + lo + list(sum_dims) + ro
    rpermutation = lro + list(sum_dims) + ro + lo
    opermutation = [0] * len(out_size)
    for i, d in enumerate(lro + lo + list(sum_dims) + ro):
        opermutation[d] = i
    left = reshape(permute(left, lpermutation), (lro_size, lo_size, sum_size))
    right = reshape(permute(right, rpermutation), (lro_size, sum_size, ro_size))
    result = permute(view(bmm(left, right), out_size), opermutation)
    if not keepdim:
        sizes = [n for i, n in enumerate(result.shape) if i not in sum_dims]
        result = view(result, sizes)
    return result


def einsum(equation, *operands):
    """Sum of products over the indices the equation names: einsum("ij,jk->ik", a, b) is a @ b."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    lhs, arrow, rhs = equation.partition("->")
    op_labels = _parse_operands(lhs, len(operands))
    label_count, ell_num_dim = _count_labels(operands, op_labels)
    label_perm_index, perm_index, ell_index, out_num_dim = _output_positions(
        lhs, rhs, arrow, label_count, ell_num_dim
    )
    ops, dim_counts = _aligned(
        operands, op_labels, label_perm_index, perm_index, ell_num_dim, ell_index
    )
    result = _contract(ops, dim_counts, out_num_dim, perm_index)
    if perm_index - out_num_dim > 0:
        if len(operands) > 1:  # the summed dims are all 1 now: viewed away
            return view(result, result.shape[:out_num_dim])
        return sum_(result, list(range(out_num_dim, perm_index)))
    return result


def _count_labels(operands, op_labels):
    """How often each label appears over the operands, and the most dims an ellipsis covers."""
    label_count = [0] * _ELLIPSIS
    ell_num_dim = 0
    for i, (operand, labels) in enumerate(zip(operands, op_labels)):
        ndims, nlabels = operand.ndim, len(labels)
        has_ellipsis = _ELLIPSIS in labels
        if has_ellipsis:
            nlabels -= 1
            ell_num_dim = max(ell_num_dim, ndims - nlabels)
        for label in labels:
            if label != _ELLIPSIS:
                label_count[label] += 1
        if (nlabels > ndims) if has_ellipsis else (nlabels != ndims):
            relation = "is more than" if has_ellipsis else "does not match"
            tail = "" if has_ellipsis else " and no ellipsis was given"
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({nlabels}) {relation} the "
                f"number of dimensions ({ndims}) for operand {i}{tail}"
            )
    return label_count, ell_num_dim


def _output_positions(lhs, rhs, arrow, label_count, ell_num_dim):
    """Where each label goes (the output's first, then the summed ones), as ATen numbers them:
    (label_perm_index, the number of dims, the ellipsis' first dim, the output's dims)."""
    label_perm_index = [-1] * _ELLIPSIS
    perm_index = ell_index = 0
    ell_in_output = False
    if not arrow:
        perm_index, ell_in_output = ell_num_dim, True
        for label in range(_ELLIPSIS):
            if label_count[label] == 1:
                label_perm_index[label] = perm_index
                perm_index += 1
    else:
        i = 0
        while i < len(rhs):
            label = rhs[i]
            if label == ".":
                if ell_in_output:
                    raise RuntimeError(
                        "einsum(): found '.' for output but an ellipsis (...) was already found"
                    )
                if not rhs.startswith("...", i):
                    raise RuntimeError(
                        "einsum(): found '.' for output that is not part of any ellipsis (...)"
                    )
                ell_index, perm_index, ell_in_output = perm_index, perm_index + ell_num_dim, True
                i += 2
            elif label != " ":
                if not label.isascii() or not label.isalpha():
                    raise RuntimeError(
                        f"einsum(): invalid subscript given at index {len(lhs) + 2 + i} in the "
                        "equation string, subscripts must be in [a-zA-Z]"
                    )
                index = _subscript(label)
                if not (label_count[index] > 0 and label_perm_index[index] == -1):
                    why = (
                        "appears more than once in the output"
                        if label_perm_index[index] > -1
                        else "does not appear in the equation for any input operand"
                    )
                    raise RuntimeError(f"einsum(): output subscript {label} {why}")
                label_perm_index[index] = perm_index
                perm_index += 1
            i += 1
    out_num_dim = perm_index
    if not ell_in_output:
        ell_index, perm_index = perm_index, perm_index + ell_num_dim
    for label in range(_ELLIPSIS):
        if label_count[label] > 0 and label_perm_index[label] == -1:
            label_perm_index[label] = perm_index
            perm_index += 1
    return label_perm_index, perm_index, ell_index, out_num_dim


def _contract(ops, dim_counts, out_num_dim, perm_index):
    """Multiply the aligned operands pairwise, left to right, summing each dim once no operand
    still to come has it (ATen's order)."""
    while len(ops) > 1:
        a, b = ops.pop(0), ops.pop(0)
        sum_dims, a_dims, b_dims = [], [], []
        for dim in range(out_num_dim, perm_index):
            if a.shape[dim] != 1 and b.shape[dim] != 1:
                dim_counts[dim] -= 1
                if dim_counts[dim] == 1:
                    sum_dims.append(dim)
                    dim_counts[dim] = 0
            elif dim_counts[dim] == 1:
                if a.shape[dim] != 1:
                    a_dims.append(dim)
                    dim_counts[dim] = 0
                elif b.shape[dim] != 1:
                    b_dims.append(dim)
                    dim_counts[dim] = 0
        if a_dims:
            a = sum_(a, a_dims, True)
        if b_dims:
            b = sum_(b, b_dims, True)
        ops.insert(0, sumproduct_pair(a, b, sum_dims, True))
    return ops[0]


def _aligned(operands, op_labels, label_perm_index, perm_index, ell_num_dim, ell_index):
    """Each operand with its dims in the common order (diagonals taken, size-1 dims added), and
    for each dim the number of operands where it is not 1."""
    label_size = [1] * _ELLIPSIS
    ell_sizes = [1] * ell_num_dim
    dim_counts = [0] * perm_index
    ops = []
    for i, (op, labels) in enumerate(zip(operands, op_labels)):
        permutation = [-1] * perm_index
        dim = 0
        for s in labels:
            if s == _ELLIPSIS:
                ndim = operands[i].ndim - (len(labels) - 1)
                for j in range(ell_num_dim - ndim, ell_num_dim):
                    if op.shape[dim] != 1:
                        if ell_sizes[j] not in (1, op.shape[dim]):
                            raise RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand {i}has "
                                f"size {op.shape[dim]} which does not broadcast with previously "
                                f"seen ellipsis with size {ell_sizes[j]} for the respective "
                                "dimension"
                            )
                        ell_sizes[j] = op.shape[dim]
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[label_perm_index[s]] == -1:
                if op.shape[dim] != 1:
                    if label_size[s] not in (1, op.shape[dim]):
                        raise RuntimeError(
                            f"einsum(): subscript {_label(s)} has size {op.shape[dim]} for operand "
                            f"{i} which does not broadcast with previously seen size "
                            f"{label_size[s]}"
                        )
                    label_size[s] = op.shape[dim]
                    dim_counts[label_perm_index[s]] += 1
                permutation[label_perm_index[s]] = dim
                dim += 1
            else:  # a repeated label: its diagonal, in the place of the first
                prev_dim = permutation[label_perm_index[s]]
                if op.shape[dim] != op.shape[prev_dim]:
                    raise RuntimeError(
                        f"einsum(): subscript {_label(s)} is repeated for operand {i} but the "
                        f"sizes don't match, {op.shape[dim]} != {op.shape[prev_dim]}"
                    )
                op = movedim(diagonal(op, 0, prev_dim, dim), -1, prev_dim)
        for k, value in enumerate(permutation):
            if value == -1:
                op = unsqueeze(op, dim)
                permutation[k] = dim
                dim += 1
        ops.append(permute(op, permutation))
    return ops, dim_counts
