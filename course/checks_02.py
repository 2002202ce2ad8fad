"""Checks for the exercise of chapter 02 (backward) that stays in the notebook.

    check_gradcheck(gradcheck)   # 2.5: a finite-difference gradient checker

It feeds the learner's gradcheck correct functions and functions whose backward formulas carry
planted bugs (patched into mini_autograd's nodes' formulas only while it runs). Exercises 2.1 to
2.4 are checked by the build track (course/specs.py).
"""

from __future__ import annotations

from unittest import mock

import numpy as np

from course.check import Feedback, call, checker
from mini_autograd.ops.derivatives import MulBackward0, TanhBackward0
from mini_autograd.ops.formulas import compiled

# --- Exercise 2.5: a finite-difference gradient checker --------------------------------------

# MulBackward0 with a planted bug: the gradient of `other` has the wrong sign.
_negated_other_mul = compiled({"self": "grad * other", "other": "-grad * self"}, ("other", "self"))
# TanhBackward0 with a planted bug: 1 - result instead of 1 - result**2.
_tanh_without_square = compiled({"self": "grad * (1 - result)"}, ("result",))


def _report(result, count, description):
    try:
        values = [float(v) for v in result]
    except TypeError:
        raise Feedback(
            f"gradcheck must return a list with one number per input, but for {description} it returned a {type(result).__name__}.",
            hint=True,
        ) from None
    if len(values) != count:
        raise Feedback(
            f"gradcheck must return one number per input ({count} for {description}), but it returned {len(values)}.",
            hint=True,
        )
    for i, v in enumerate(values):
        if v < 0:
            raise Feedback(
                f"your gradcheck returned a negative gap ({v:.3g} for input {i} of {description}): a gap is a distance, so take the absolute value, np.abs(backward - numerical), before the max; without it a gradient that is too small everywhere looks fine.",
            )
    return values


GRADCHECK_TODO = "write gradcheck: per input, the largest |backward gradient - finite difference|"
GRADCHECK_HINT = "make float64 tensors with requires_grad=True and call fn(...).backward(); then for each entry of each input compute (f(x + eps) - f(x - eps)) / (2 * eps) with fresh tensors, and return, per input, the largest absolute difference"
GRADCHECK_TOLERANCE = 1e-8  # central differences with eps=1e-6 agree to ~1e-10; one-sided to ~1e-7


@checker("2.5", GRADCHECK_TODO, GRADCHECK_HINT)
def check_gradcheck(learner):
    """Exercise 2.5: gradcheck(fn, *arrays) -> the largest |backward - numerical| per input."""
    rng = np.random.default_rng(20)
    a, b = rng.normal(size=(2, 3)), rng.normal(size=3)
    A, B = rng.normal(size=(2, 3)) * 0.5, rng.normal(size=(3, 2)) * 0.5

    mul_tanh = lambda x, y: (x * y).tanh().sum()  # noqa: E731
    mm_exp = lambda x, y: (x @ y).exp().mean()  # noqa: E731

    correct = [
        ("(a * b).tanh().sum() with b broadcast over the rows of a", mul_tanh, (a, b)),
        ("(A @ B).exp().mean()", mm_exp, (A, B)),
    ]
    for description, fn, arrays in correct:
        values = _report(call(learner, fn, *arrays), len(arrays), description)
        for i, v in enumerate(values):
            if not v < GRADCHECK_TOLERANCE:
                raise Feedback(
                    f"on the correct function {description}, your gradcheck reports a gap of {v:.3g} for input {i}, where backward and central differences agree to about 1e-10 in float64 (a gap under {GRADCHECK_TOLERANCE:.0e} is expected): use the central difference (f(x + eps) - f(x - eps)) / (2 * eps) with eps=1e-6 in float64; a one-sided (f(x + eps) - f(x)) / eps is off by about eps.",
                )
    # The same correct function given float32 arrays: a checker that works in the arrays' own
    # dtype loses the step of 1e-6 to float32 rounding (about 7 significant digits).
    description = f"{correct[0][0]}, given float32 arrays"
    values = _report(
        call(learner, mul_tanh, *(x.astype(np.float32) for x in (a, b))), 2, description
    )
    for i, v in enumerate(values):
        if not v < GRADCHECK_TOLERANCE:
            raise Feedback(
                f"on the correct function {description}, your gradcheck reports a gap of {v:.3g} for input {i}: float32 keeps about 7 significant digits, so a step of 1e-6 is mostly lost to rounding and the finite differences are noise. Whatever dtype the arrays come in, do the whole check (backward and finite differences) in float64.",
            )

    # The bugs run on inputs of fixed signs, so that each wrong gradient is off in one direction
    # only (the mul bug: too small for input 1; the tanh bug: too small for input 0 and too large
    # for input 1). A gradcheck without the absolute value then returns a negative gap.
    a_pos, b_neg = np.abs(a) + 0.1, -np.abs(b) - 0.1
    bugs = [
        (
            MulBackward0,
            _negated_other_mul,
            "MulBackward0 with the sign of the gradient for its second input flipped",
            [False, True],
        ),
        (
            TanhBackward0,
            _tanh_without_square,
            "TanhBackward0 computing g * (1 - out) instead of g * (1 - out**2)",
            [True, True],
        ),
    ]
    for node_class, buggy, bug, wrong in bugs:
        with mock.patch.object(node_class, "formulas", buggy):
            values = _report(call(learner, mul_tanh, a_pos, b_neg), 2, f"a function using {bug}")
        for i, (v, is_wrong) in enumerate(zip(values, wrong)):
            if is_wrong and not v > 1e-3:
                raise Feedback(
                    f"your gradcheck did not notice a wrong backward formula: with {bug}, it reported {v:.3g} for input {i}, whose gradient is wrong. Compare the gradient from backward() with the finite-difference one.",
                    hint=True,
                )
            if not is_wrong and not v < 1e-6:
                raise Feedback(
                    f"with {bug}, your gradcheck reported {v:.3g} for input {i}, but that input's gradient is right: only input 1 should be blamed.",
                    hint=True,
                )
    return "your gradcheck passes 2 correct functions and catches 2 planted bugs in backward formulas, naming the right inputs."
