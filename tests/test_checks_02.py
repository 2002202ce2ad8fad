"""The chapter 02 checker (2.5, gradcheck) accepts the solution, rejects plausible mistakes in
plain words, and says "not done yet" for an untouched stub, always in exactly one line and without
a traceback. Exercises 2.1 to 2.4 moved to the build track (course/specs.py)."""

from unittest import mock

import numpy as np
import pytest

import mini_autograd as ma
from course import checks_02
from mini_autograd.ops.derivatives import ExpBackward0
from tests.exercise_answers import answer, not_done

# --- the solution and its variants ----------------------------------------------------------

gradcheck = answer("02_backward", "gradcheck")


def gradcheck_variant(
    fn, *arrays, eps=1e-6, dtype=np.float64, one_sided=False, use_backward=True, signed=None
):
    """gradcheck with a slip: the arrays' own dtype (dtype=None), a one-sided difference, no
    backward at all, or a signed gap."""
    arrays = [np.asarray(a, dtype=dtype) for a in arrays]
    tensors = [ma.tensor(a.copy(), requires_grad=True) for a in arrays]
    fn(*tensors).backward()
    gaps = []
    for i, t in enumerate(tensors):
        numerical = np.zeros_like(arrays[i])
        for index in np.ndindex(arrays[i].shape):
            plus = [a.copy() for a in arrays]
            minus = [a.copy() for a in arrays]
            plus[i][index] += eps
            if not one_sided:
                minus[i][index] -= eps
            f_plus = fn(*[ma.tensor(a) for a in plus]).item()
            f_minus = fn(*[ma.tensor(a) for a in minus]).item()
            numerical[index] = (f_plus - f_minus) / (eps if one_sided else 2 * eps)
        analytic = t.grad.numpy() if use_backward else numerical
        if signed == "backward - numerical":
            gaps.append(float((analytic - numerical).max()))
        elif signed == "numerical - backward":
            gaps.append(float((numerical - analytic).max()))
        else:
            gaps.append(float(np.abs(analytic - numerical).max()))
    return gaps


CHECKS = [
    ("2.5", checks_02.check_gradcheck, gradcheck),
]


@pytest.mark.parametrize(("exercise_id", "check", "solution"), CHECKS, ids=[c[0] for c in CHECKS])
def test_solution_is_accepted(one_line, exercise_id, check, solution):
    assert check(solution)
    assert "correct ✓" in one_line(f"Exercise {exercise_id}: ")


@pytest.mark.parametrize(("exercise_id", "check", "solution"), CHECKS, ids=[c[0] for c in CHECKS])
def test_stub_says_not_done_yet(one_line, exercise_id, check, solution):
    assert not check(not_done)
    assert one_line(f"Exercise {exercise_id}: ").startswith(
        f"Exercise {exercise_id}: not done yet — "
    )


# --- 2.5: weak gradient checkers ---------------------------------------------------------------


def test_gradcheck_that_never_calls_backward(one_line):
    assert not checks_02.check_gradcheck(
        lambda fn, *a: gradcheck_variant(fn, *a, use_backward=False)
    )
    line = one_line("Exercise 2.5: ")
    assert "did not notice a wrong backward formula" in line and "input 1" in line


def test_gradcheck_in_float32(one_line):
    assert not checks_02.check_gradcheck(lambda fn, *a: gradcheck_variant(fn, *a, dtype=np.float32))
    line = one_line("Exercise 2.5: ")
    assert "on the correct function" in line and "input 0" in line


def test_gradcheck_one_sided(one_line):
    one_sided = lambda fn, *a: gradcheck_variant(fn, *a, eps=1e-4, one_sided=True)  # noqa: E731
    assert not checks_02.check_gradcheck(one_sided)
    assert "on the correct function" in one_line("Exercise 2.5: ")


def test_gradcheck_one_sided_with_the_default_eps(one_line):
    one_sided = lambda fn, *a: gradcheck_variant(fn, *a, one_sided=True)  # noqa: E731
    assert not checks_02.check_gradcheck(one_sided)
    line = one_line("Exercise 2.5: ")
    assert "on the correct function" in line and "use the central difference" in line


@pytest.mark.parametrize("signed", ["backward - numerical", "numerical - backward"])
def test_gradcheck_without_the_absolute_value(one_line, signed):
    no_abs = lambda fn, *a: gradcheck_variant(fn, *a, signed=signed)  # noqa: E731
    assert not checks_02.check_gradcheck(no_abs)
    line = one_line("Exercise 2.5: ")
    assert "negative gap" in line and "absolute value" in line


def test_gradcheck_wrong_return(one_line):
    assert not checks_02.check_gradcheck(lambda fn, *a: True)
    assert "one number per input" in one_line("Exercise 2.5: ")


def test_gradcheck_in_the_arrays_own_dtype(one_line):
    """Given float32 arrays, a checker that does not convert them to float64 reports noise."""
    assert not checks_02.check_gradcheck(lambda fn, *a: gradcheck_variant(fn, *a, dtype=None))
    line = one_line("Exercise 2.5: ")
    assert "given float32 arrays" in line and "in float64" in line and "rounding" in line


def gradcheck_slip(fn, *arrays, eps=1e-6, slip=None):
    """gradcheck with one of the slips the check names (see the test below)."""
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]  # no copy of float64 arrays
    if slip not in ("caller's arrays not restored", "caller's arrays restored"):
        arrays = [a.copy() for a in arrays]
    needs_grad = [slip != "requires_grad on input 0 only" or i == 0 for i in range(len(arrays))]
    tensors = [ma.tensor(a.copy(), requires_grad=r) for a, r in zip(arrays, needs_grad)]
    if slip != "backward per input":
        fn(*tensors).backward()

    def f(values):
        return fn(*[ma.tensor(v) for v in values]).item()

    gaps = []
    for i, t in enumerate(tensors):
        if slip == "backward per input":
            fn(*tensors).backward()
        if slip in ("totals", "entries against the whole-input nudge"):
            plus = [a + eps if k == i else a for k, a in enumerate(arrays)]
            minus = [a - eps if k == i else a for k, a in enumerate(arrays)]
            numerical = (f(plus) - f(minus)) / (2 * eps)
        else:
            numerical = np.zeros(arrays[i].shape)
            for index in np.ndindex(arrays[i].shape):
                if "restored" in str(slip):
                    arrays[i][index] += eps
                    f_plus = f(arrays)
                    arrays[i][index] -= 2 * eps
                    f_minus = f(arrays)
                    if slip == "caller's arrays restored":  # some entries come back 1 ulp off
                        arrays[i][index] += eps
                else:
                    plus, minus = [a.copy() for a in arrays], [a.copy() for a in arrays]
                    plus[i][index] += eps
                    minus[i][index] -= eps
                    f_plus, f_minus = f(plus), f(minus)
                numerical[index] = (f_plus - f_minus) / (eps if slip == "over eps" else 2 * eps)
        analytic = np.asarray(None if t.grad is None else t.grad.numpy(), dtype=np.float64)
        if slip == "input 0's grad for every input":
            analytic = tensors[0].grad.numpy()
        gap = np.abs(analytic - numerical)
        if slip == "totals":
            gap = abs(analytic.sum() - numerical)
        elif slip == "relative":
            gap = gap / np.abs(numerical)
        elif slip == "relative to the larger":
            gap = gap / np.maximum(np.abs(numerical), np.abs(analytic))
        reduce = {"sum": np.sum, "mean": np.mean}.get(slip, np.max)
        gaps.append(float(reduce(gap)))
    return gaps


def test_gradcheck_that_nudges_the_callers_arrays_and_puts_them_back(one_line):
    assert checks_02.check_gradcheck(
        lambda fn, *a: gradcheck_slip(fn, *a, slip="caller's arrays restored")
    )
    assert one_line().startswith("Exercise 2.5: correct ✓")


@pytest.mark.parametrize(
    ("slip", "words"),
    [
        ("totals", ["did not notice", "reversed", "check of totals", "one entry at a time"]),
        ("entries against the whole-input nudge", ["whole input is nudged at once"]),
        ("sum", ["the sum of the gaps", "return, per input, the largest"]),
        ("mean", ["the mean of the gaps", "dilutes one wrong entry"]),
        ("input 0's grad for every input", ["input 0's backward gradient", "own .grad"]),
        ("requires_grad on input 0 only", ["nan for input 1", "requires_grad=True"]),
        ("backward per input", ["for input 1", "(it accumulates)"]),
        ("caller's arrays not restored", ["changed the arrays it was given", "np.asarray"]),
        ("copy not restored", ["drifting points", "put each entry back"]),
        ("over eps", ["divided by eps, not 2 * eps", "2 * eps apart"]),
        ("relative", ["multiplied by 1000", "relative error"]),
        ("relative to the larger", ["multiplied by 1000", "relative error"]),
    ],
)
def test_gradcheck_slips_are_named(one_line, slip, words):
    assert not checks_02.check_gradcheck(lambda fn, *a: gradcheck_slip(fn, *a, slip=slip))
    line = one_line("Exercise 2.5: ")
    for word in words:
        assert word in line, line
    assert "use the central difference" not in line, line


def test_gradcheck_that_reads_a_missing_grad(one_line):
    def no_grad_for_input_1(fn, *arrays):
        tensors = [ma.tensor(a, requires_grad=i == 0) for i, a in enumerate(arrays)]
        fn(*tensors).backward()
        return [float(np.abs(t.grad.numpy()).max()) for t in tensors]

    assert not checks_02.check_gradcheck(no_grad_for_input_1)
    line = one_line("Exercise 2.5: ")
    assert "AttributeError" in line and "a .grad that is None" in line, line


def test_the_reversed_bug_keeps_the_total_and_changes_the_entries():
    """The premise of the third bug, against PyTorch: the gradient it gives for input 0 is
    PyTorch's with its entries in another order, so their sum is PyTorch's."""
    import torch

    x, y = (torch.tensor(v, requires_grad=True) for v in (checks_02._A_POS, checks_02._B_NEG))
    (x.exp() * y).sum().backward()
    with mock.patch.object(ExpBackward0, "formulas", checks_02._exp_reversed):
        grads = checks_02._pieces(checks_02._exp_mul, (checks_02._A_POS, checks_02._B_NEG))[0]
    assert np.isclose(grads[0].sum(), x.grad.sum().item())
    assert np.abs(grads[0] - x.grad.numpy()).max() > 0.1
    assert np.allclose(grads[1], y.grad.numpy())


def test_float32_central_differences_are_noise_next_to_torch():
    """The premise, against PyTorch: with eps=1e-6, float32 central differences of the check's
    correct function are far from torch's gradient; in float64 they agree to 1e-8."""
    import torch

    rng = np.random.default_rng(20)
    a, b = rng.normal(size=(2, 3)), rng.normal(size=3)
    x, y = torch.tensor(a, requires_grad=True), torch.tensor(b)
    (x * y).tanh().sum().backward()

    def central(dtype):
        f = lambda v: float(np.tanh(v * b.astype(dtype)).sum(dtype=dtype))  # noqa: E731
        grad = np.zeros(a.shape)
        for index in np.ndindex(a.shape):
            step = np.zeros(a.shape, dtype=dtype)
            step[index] = 1e-6
            v = a.astype(dtype)
            grad[index] = (f(v + step) - f(v - step)) / 2e-6
        return grad

    assert np.abs(central(np.float64) - x.grad.numpy()).max() < 1e-8
    assert np.abs(central(np.float32) - x.grad.numpy()).max() > 1e-3
