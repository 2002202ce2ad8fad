"""Checks for chapter 00 (the warm-up), against PyTorch (course/check.py has the scaffold).

    check_finite_difference(finite_difference_grad)   # 0.3: a central-difference gradient

Exercises 0.1 and 0.2 are checked by course.check.check, against numpy and PyTorch.
"""

from __future__ import annotations

import numpy as np

from course.check import Feedback, as_array, call, checker, difference, load_torch, named_mistake

# --- 0.3: finite_difference_grad -----------------------------------------------------------------

EPS = 1e-3  # large enough that a one-sided difference is off by ~eps, the central one by ~eps**2
_W = np.random.default_rng(3).normal(size=(2, 2, 2))


def _functions():
    """(what, f(lib, x), x) for the check: several functions (lib is numpy or torch) and shapes."""
    rng = np.random.default_rng(30)
    sin_square = lambda lib, x: lib.sum(lib.sin(x) * x**2)  # noqa: E731
    return [
        ("sum(sin(x) * x**2)", sin_square, np.linspace(-3.0, 3.0, 7)),
        ("sum(sin(x) * x**2)", sin_square, rng.normal(size=(2, 3))),
        (
            "sum(W * exp(x / 2)), W a fixed array",
            lambda lib, x: lib.sum(lib.asarray(_W) * lib.exp(x / 2)),
            rng.normal(size=(2, 2, 2)),
        ),
        ("log(sum(exp(x)))", lambda lib, x: lib.log(lib.sum(lib.exp(x))), rng.normal(size=4)),
    ]


def torch_gradient(f, x):
    """The gradient of f(torch, .) at x, by PyTorch's autograd, as float64 numpy."""
    torch = load_torch()
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    return torch.autograd.grad(f(torch, t), t)[0].numpy()


def _differences(f, x, eps):
    """{slip: the estimate it gives}: the central difference (None) and the typical slips."""

    def at(move):
        return float(f(x + move))

    central, forward, backward, rows = (np.zeros(x.shape) for _ in range(4))
    for index in np.ndindex(x.shape):
        step = np.zeros(x.shape)
        step[index] = eps
        central[index] = (at(step) - at(-step)) / (2 * eps)
        forward[index] = (at(step) - at(0)) / eps
        backward[index] = (at(0) - at(-step)) / eps
    for i in range(len(x)):  # a loop over range(len(x)): x[i] is a whole row of a 2-D x
        step = np.zeros(x.shape)
        step[i] = eps
        rows[i] = (at(step) - at(-step)) / (2 * eps)
    whole = np.full(x.shape, (at(eps) - at(-eps)) / (2 * eps))
    return {
        None: central,
        "forward": forward,
        "backward": backward,
        "twice": 2 * central,
        "whole": whole,
        "rows": rows,
    }


SLIPS = {
    "forward": "your estimate is a one-sided difference (f(x + eps e_i) - f(x)) / eps: its error shrinks only like eps ({off} from PyTorch's gradient here, with eps={eps}), the central difference's like eps**2 ({central}); take the two points on either side of x, x + eps e_i and x - eps e_i",
    "backward": "your estimate is a one-sided difference (f(x) - f(x - eps e_i)) / eps: its error shrinks only like eps ({off} from PyTorch's gradient here, with eps={eps}), the central difference's like eps**2 ({central}); take the two points on either side of x, x + eps e_i and x - eps e_i",
    "twice": "your estimate is twice the gradient: the two points x + eps e_i and x - eps e_i are 2 * eps apart, so divide their difference by 2 * eps",
    "whole": "every entry of your estimate holds one number, the change of f when all the entries of x move at once: nudge a single entry at a time (e_i is 1 at index i and 0 elsewhere)",
    "rows": "each row of your estimate holds one number: for a 2-D x, x[i] is a whole row, so a loop over range(len(x)) moves a row at a time; loop over every index of x.shape, one entry at a time",
}


@checker(
    "0.3",
    "loop over every index of x and nudge one entry at a time",
    "loop over np.ndindex(x.shape) and change one entry at a time",
)
def check_finite_difference(learner_fn):
    """Exercise 0.3: finite_difference_grad(f, x, eps) on several functions and shapes, with
    eps=1e-3, against the central difference and PyTorch; x must be left as it was."""
    cases = _functions()
    for what, f, x in cases:
        case = f"f(x) = {what}, x of shape {x.shape}, eps={EPS}"
        given = x.copy()
        got = call(learner_fn, lambda v, f=f: f(np, v), given, EPS, where=f" ({case})")
        moved = ~np.isclose(given, x, rtol=1e-12, atol=1e-12)  # a restored entry may be 1 ulp off
        if moved.any():
            index = tuple(int(i) for i in np.argwhere(moved)[0])
            raise Feedback(
                f"your function changed the array x it was given ({case}): entry {index} was {x[index]:.6g} and is {given[index]:.6g} after the call. The caller still needs x as it was: nudge a copy (a name assigned from x, y = x, is the same array, not a copy), or put each entry back after its two calls."
            )
        if got is None:
            raise Feedback(
                f"your function returned None ({case}); return the array of estimates, shaped like x."
            )
        got = as_array(got)
        estimates = _differences(lambda v, f=f: f(np, v), x, EPS)
        if difference(got, estimates[None], atol=1e-8, rtol=1e-8) is None:
            continue
        _explain(learner_fn, f, x, got, estimates, case)
    what, f, x = cases[0]
    other = call(learner_fn, lambda v: f(np, v), x.copy(), 10 * EPS)
    if difference(
        as_array(other), _differences(lambda v: f(np, v), x, 10 * EPS)[None], atol=1e-8, rtol=1e-8
    ):
        raise Feedback(
            f"with eps={10 * EPS} your function does not return the central difference at that eps (f(x) = {what}): it does not use the eps it is given. Nudge by eps, the function's argument."
        )
    return f"your estimates equal the central difference at the eps given, on {len(cases)} functions and shapes (within about eps**2 of PyTorch's gradient), and x is left as it was."


def _explain(learner_fn, f, x, got, estimates, case):
    """Feedback naming why the learner's estimate `got` of f's gradient at x is wrong."""
    if got.shape != x.shape:
        raise Feedback(
            f"your function returned an array of shape {got.shape} ({case}); return one estimate per entry of x, shaped like x."
        )
    tripled = call(learner_fn, lambda v: 3 * f(np, v), x.copy(), EPS, where=f" ({case})")
    if _same(tripled, got, rtol=1e-9):
        raise Feedback(
            f"your function returns the same array for f and for 3 * f ({case}): it does not use the f it is given. Compute the estimate from calls to f, so that it works for any function."
        )
    other = call(learner_fn, lambda v: f(np, v), x.copy(), 10 * EPS, where=f" ({case})")
    if _same(other, got, rtol=1e-12):
        raise Feedback(
            f"your function returns the same array for eps={EPS} and eps={10 * EPS} ({case}): it does not use the eps it is given. Nudge by eps, the function's argument."
        )
    true = torch_gradient(f, x)
    off = lambda estimate: f"{np.abs(estimate - true).max():.1g}"  # noqa: E731
    slips = ((slip, estimates[slip]) for slip in SLIPS if slip != "rows" or x.ndim > 1)
    slip = named_mistake(
        lambda estimate: difference(got, estimate, atol=1e-8, rtol=1e-8) is None, slips
    )
    if slip:
        words = SLIPS[slip].format(off=off(got), central=off(estimates[None]), eps=EPS)
        raise Feedback(f"on {case}, {words}.")
    problem = difference(got, estimates[None], atol=1e-8, rtol=1e-8)
    raise Feedback(
        f"your estimate differs from the central difference ({case}): {problem}.", hint=True
    )


def _same(result, got, rtol):
    """Whether another call's `result` is `got` again, to within `rtol`."""
    result = as_array(result)
    return result is not None and result.shape == got.shape and np.allclose(result, got, rtol, 0)
