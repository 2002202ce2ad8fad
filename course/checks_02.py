"""Checks for the exercise of chapter 02 (backward) that stays in the notebook.

    check_gradcheck(gradcheck)   # 2.5: a finite-difference gradient checker

The check feeds the learner's gradcheck correct functions and functions whose backward formulas
carry planted bugs (patched into mini_autograd's node classes only while it runs), and prints
exactly one line: correct, "not done yet", or what is wrong in plain words. An ordinary mistake
never escapes as a traceback.

Exercises 2.1 to 2.4 (the backward formulas of `*` and `@`, dependency counting, the run loop)
moved to the build track: the learner writes them in exercises/my_autograd.py, and
course/specs.py checks them.
"""

from __future__ import annotations

from collections.abc import Callable
from unittest import mock

import numpy as np

from course.check import verdict
from mini_autograd.ops.arithmetic import MulBackward0
from mini_autograd.ops.broadcasting import summed_to_inputs
from mini_autograd.ops.elementwise import TanhBackward0


class _Problem(Exception):
    """A mistake found in the learner's code, described in plain words.

    `hint=False` when the description already says how to fix it.
    """

    def __init__(self, message, hint=True):
        super().__init__(message)
        self.hint = hint


def _rng():
    return np.random.default_rng(20)


def _say(exercise_id, text):
    print(f"Exercise {exercise_id}: {text}")


def _not_done(exercise_id, hint):
    _say(exercise_id, f"not done yet — {hint}")


def _correct(exercise_id, text):
    _say(exercise_id, f"correct ✓ — {text}")


def _run_check(exercise_id, todo, hint, body):
    """Run body(); turn NotImplementedError, _Problem and other errors into one line.

    `todo` says what to write (for "not done yet"); `hint` how, after a mistake.
    """
    try:
        message = body()
    except NotImplementedError:
        _not_done(exercise_id, todo)
        return False
    except _Problem as problem:
        _say(exercise_id, f"{problem} Hint: {hint}" if problem.hint else str(problem))
        return False
    except RecursionError:
        _say(
            exercise_id,
            f"your code hit Python's recursion limit (RecursionError). Hint: {hint}",
        )
        return False
    except Exception as error:  # an ordinary mistake in the learner's code: report, don't raise
        _say(exercise_id, f"your code raised {type(error).__name__}: {error}. Hint: {hint}")
        return False
    _correct(exercise_id, message)
    return True


# --- Exercise 2.5: a finite-difference gradient checker --------------------------------------


def _negated_other_mul(self, g):
    """MulBackward0 with a planted bug: the gradient of `other` has the wrong sign."""
    return summed_to_inputs(
        self,
        g * self.saved("other") if self.needs_input_grad(0) else None,
        -g * self.saved("self") if self.needs_input_grad(1) else None,
    )


def _tanh_without_square(self, g):
    """TanhBackward0 with a planted bug: 1 - out instead of 1 - out**2."""
    return (g * (1 - self.saved("result")),)


def _report(result, count, description):
    try:
        values = [float(v) for v in result]
    except TypeError:
        raise _Problem(
            f"gradcheck must return a list with one number per input, but for {description} it "
            f"returned a {type(result).__name__}."
        ) from None
    if len(values) != count:
        raise _Problem(
            f"gradcheck must return one number per input ({count} for {description}), but it "
            f"returned {len(values)}."
        )
    for i, v in enumerate(values):
        if v < 0:
            raise _Problem(
                f"your gradcheck returned a negative gap ({v:.3g} for input {i} of {description}): "
                "a gap is a distance, so take the absolute value, np.abs(backward - numerical), "
                "before the max; without it a gradient that is too small everywhere looks fine.",
                hint=False,
            )
    return values


GRADCHECK_TOLERANCE = 1e-8  # central differences with eps=1e-6 agree to ~1e-10; one-sided to ~1e-7


def _gradcheck_body(learner):
    rng = _rng()
    a, b = rng.normal(size=(2, 3)), rng.normal(size=3)
    A, B = rng.normal(size=(2, 3)) * 0.5, rng.normal(size=(3, 2)) * 0.5

    def mul_tanh(x, y):
        return (x * y).tanh().sum()

    def mm_exp(x, y):
        return (x @ y).exp().mean()

    correct = [
        ("(a * b).tanh().sum() with b broadcast over the rows of a", mul_tanh, (a, b)),
        ("(A @ B).exp().mean()", mm_exp, (A, B)),
    ]
    for description, fn, arrays in correct:
        values = _report(learner(fn, *arrays), len(arrays), description)
        for i, v in enumerate(values):
            if not v < GRADCHECK_TOLERANCE:
                raise _Problem(
                    f"on the correct function {description}, your gradcheck reports a gap of "
                    f"{v:.3g} for input {i}, where backward and central differences agree to "
                    f"about 1e-10 in float64 (a gap under {GRADCHECK_TOLERANCE:.0e} is expected): "
                    "use the central difference (f(x + eps) - f(x - eps)) / (2 * eps) with "
                    "eps=1e-6 in float64; a one-sided (f(x + eps) - f(x)) / eps is off by about eps.",
                    hint=False,
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
        with mock.patch.object(node_class, "apply", buggy):
            values = _report(learner(mul_tanh, a_pos, b_neg), 2, f"a function using {bug}")
        for i, (v, is_wrong) in enumerate(zip(values, wrong)):
            if is_wrong and not v > 1e-3:
                raise _Problem(
                    f"your gradcheck did not notice a wrong backward formula: with {bug}, it "
                    f"reported {v:.3g} for input {i}, whose gradient is wrong. Compare the "
                    "gradient from backward() with the finite-difference one."
                )
            if not is_wrong and not v < 1e-6:
                raise _Problem(
                    f"with {bug}, your gradcheck reported {v:.3g} for input {i}, but that "
                    "input's gradient is right: only input 1 should be blamed."
                )
    return (
        "your gradcheck passes 2 correct functions and catches 2 planted bugs in backward "
        "formulas, naming the right inputs."
    )


@verdict
def check_gradcheck(gradcheck: Callable) -> bool:
    """Exercise 2.5: gradcheck(fn, *arrays) -> the largest |backward - numerical| per input."""
    hint = (
        "make float64 tensors with requires_grad=True and call fn(...).backward(); then for each "
        "entry of each input compute (f(x + eps) - f(x - eps)) / (2 * eps) with fresh tensors, "
        "and return, per input, the largest absolute difference"
    )
    todo = "write gradcheck: per input, the largest |backward gradient - finite difference|"
    return _run_check("2.5", todo, hint, lambda: _gradcheck_body(gradcheck))
