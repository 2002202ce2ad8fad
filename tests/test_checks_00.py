"""course.checks_00 (0.3, finite_difference_grad) accepts the solution, says "not done yet" for
the stub, and names plausible mistakes in one line, without a traceback."""

import numpy as np
import pytest

from course import checks_00
from tests.exercise_answers import answer, not_done

finite_difference_grad = answer("00_warmup", "finite_difference_grad")


def nudged(f, x, eps=1e-6, *, points="central", in_place=False, restore=False):
    """finite_difference_grad with a slip: a one-sided difference (points "forward" or
    "backward"), or the entries of x itself nudged (and put back when `restore`)."""
    grad = np.zeros(x.shape)
    for index in np.ndindex(x.shape):
        step = np.zeros(x.shape)
        step[index] = eps
        if in_place:
            x[index] += eps
            f_plus = f(x)
            x[index] -= 2 * eps
            f_minus = f(x)
            if restore:  # x + eps - 2 * eps + eps: some entries come back 1 ulp off
                x[index] += eps
            grad[index] = (f_plus - f_minus) / (2 * eps)
        elif points == "forward":
            grad[index] = (f(x + step) - f(x)) / eps
        elif points == "backward":
            grad[index] = (f(x) - f(x - step)) / eps
    return grad


def analytic(f, x, eps=1e-6):
    """The derivative of the one function the notebook used to check with, f ignored."""
    return np.cos(x) * x**2 + 2 * x * np.sin(x)


def rows_at_a_time(f, x, eps=1e-6):
    grad = np.zeros(x.shape)
    for i in range(len(x)):
        step = np.zeros(x.shape)
        step[i] = eps
        grad[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


def test_solution_is_accepted(one_line):
    assert checks_00.check_finite_difference(finite_difference_grad)
    assert one_line("Exercise 0.3: correct ✓")


def test_x_restored_after_nudging_in_place_is_accepted(one_line):
    in_place = lambda f, x, eps=1e-6: nudged(f, x, eps, in_place=True, restore=True)  # noqa: E731
    assert checks_00.check_finite_difference(in_place)
    assert one_line("Exercise 0.3: correct ✓")


def test_stub_says_not_done_yet(one_line):
    assert not checks_00.check_finite_difference(not_done)
    assert one_line("Exercise 0.3: not done yet — ")


@pytest.mark.parametrize(
    "wrong, words",
    [
        (analytic, ["same array for f and for 3 * f", "does not use the f it is given"]),
        (
            lambda f, x, eps=1e-6: nudged(f, x, eps, in_place=True),
            ["changed the array x it was given", "entry (0,) was -3 and is -3.001"],
        ),
        (
            lambda f, x, eps=1e-6: nudged(f, x, eps, points="forward"),
            ["one-sided difference (f(x + eps e_i) - f(x)) / eps", "like eps**2"],
        ),
        (
            lambda f, x, eps=1e-6: nudged(f, x, eps, points="backward"),
            ["one-sided difference (f(x) - f(x - eps e_i)) / eps", "like eps**2"],
        ),
        (
            lambda f, x, eps=1e-6: finite_difference_grad(f, x),
            ["same array for eps=0.001 and eps=0.01", "does not use the eps"],
        ),
        (
            lambda f, x, eps=1e-6: 2 * finite_difference_grad(f, x, eps),
            ["twice the gradient", "2 * eps apart"],
        ),
        (
            lambda f, x, eps=1e-6: np.full(x.shape, (f(x + eps) - f(x - eps)) / (2 * eps)),
            ["all the entries of x move at once", "a single entry at a time"],
        ),
        (rows_at_a_time, ["x[i] is a whole row", "x of shape (2, 3)"]),
        (
            lambda f, x, eps=1e-6: finite_difference_grad(f, x, 1e-3),
            ["with eps=0.01 your function does not return", "does not use the eps"],
        ),
        (
            lambda f, x, eps=1e-6: finite_difference_grad(f, x, eps)[..., ::-1],
            ["differs from the central difference", "x of shape (2, 3)", "Hint: loop over"],
        ),
        (lambda f, x, eps=1e-6: finite_difference_grad(f, x, eps).ravel(), ["shape (6,)"]),
        (lambda f, x, eps=1e-6: None, ["returned None"]),
        (lambda f, x, eps=1e-6: 1 / 0, ["your code raised ZeroDivisionError"]),
    ],
    ids=[
        "ignores-f",
        "changes-x",
        "forward-difference",
        "backward-difference",
        "ignores-eps",
        "divided-by-eps",
        "whole-array-nudge",
        "rows-at-a-time",
        "eps-written-in",
        "entries-in-wrong-places",
        "flattened",
        "returns-none",
        "raises",
    ],
)
def test_plausible_mistake_is_named(one_line, wrong, words):
    assert not checks_00.check_finite_difference(wrong)
    line = one_line("Exercise 0.3: ")
    assert "Traceback" not in line
    for word in words:
        assert word in line, line


@pytest.mark.parametrize("case", range(4))
def test_premise_central_is_within_eps_squared_of_torch_and_one_sided_is_not(case):
    """With the check's eps=1e-3, on each of its functions, the central difference agrees with
    PyTorch's gradient to about eps**2, a one-sided difference only to about eps."""
    _, f, x = checks_00._functions()[case]
    estimates = checks_00._differences(lambda v: f(np, v), x, checks_00.EPS)
    true = checks_00.torch_gradient(f, x)
    assert np.abs(estimates[None] - true).max() < 1e-5
    assert np.abs(estimates["forward"] - true).max() > 1e-4
    assert np.abs(estimates["backward"] - true).max() > 1e-4
