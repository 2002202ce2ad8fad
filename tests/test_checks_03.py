"""The chapter 03 checkers accept the solutions and explain plausible wrong answers in words."""

import pytest

import mini_autograd as ma
from course.checks_03 import (
    check_exp_backward,
    check_half_hooks,
    check_mul_saving,
    check_version_check,
)
from mini_autograd.ops.arithmetic import MulBackward0
from mini_autograd.ops.elementwise import ExpBackward0
from mini_autograd.saved import SavedTensor
from mini_autograd.tensor import Tensor

pytest.importorskip("torch")


def one_line(capsys):
    """The single line a check printed."""
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def stub(*args):
    raise NotImplementedError("Exercise 3.x: stub")


# --- solutions, as in exercises/sources/03_saved_tensors.py -----------------------------------


def mul_saves(self, other):
    return {
        "self": self if other.requires_grad else None,
        "other": other if self.requires_grad else None,
    }


def exp_backward(node, g):
    return (g * node.saved("result"),)


MESSAGE = (
    "one of the variables needed for gradient computation has been modified by an inplace "
    "operation: {described} is at version {version}; expected version {saved_version} instead. "
    "Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
    "with torch.autograd.set_detect_anomaly(True, check_nan=False)."
)
TYPE_NAMES = {ma.float16: "HalfTensor", ma.float32: "FloatTensor", ma.float64: "DoubleTensor"}


def check_version(tensor, saved_version, producer_name):
    if tensor._version == saved_version:
        return
    described = f"[torch.{TYPE_NAMES[tensor.dtype]} {list(tensor.shape)}]"
    if producer_name is not None:
        described += f", which is output 0 of {producer_name[: producer_name.rfind('Backward')]},"
    raise RuntimeError(
        MESSAGE.format(described=described, version=tensor._version, saved_version=saved_version)
    )


def pack_half(t):
    return (t.dtype, t.to(ma.float16))


def unpack_half(packed):
    dtype, half = packed
    return half.to(dtype)


# --- 3.1 ---------------------------------------------------------------------------------------


def test_mul_saving_accepts_the_solution(capsys):
    assert check_mul_saving(mul_saves)
    assert "Exercise 3.1: correct ✓" in one_line(capsys)


def test_mul_saving_says_not_done_yet_for_the_stub(capsys):
    assert not check_mul_saving(stub)
    assert one_line(capsys).startswith("Exercise 3.1: not done yet — ")


def test_mul_saving_names_the_wasted_tensor(capsys):
    assert not check_mul_saving(lambda self, other: {"self": self, "other": other})
    line = one_line(capsys)
    assert "only a requires grad" in line
    assert "saves {other} but yours saves {other, self}" in line
    assert "wasted memory" in line


def test_mul_saving_names_the_missing_tensor(capsys):
    assert not check_mul_saving(lambda self, other: {"self": None, "other": None})
    assert "does not keep other, needed for a's gradient" in one_line(capsys)


def test_mul_saving_explains_a_wrong_return_value(capsys):
    assert not check_mul_saving(lambda self, other: [self, other])
    assert 'must return a dict with the keys "self" and "other"' in one_line(capsys)


def test_mul_saving_leaves_the_engine_as_it_was(capsys):
    check_mul_saving(lambda self, other: {"self": self, "other": other})
    capsys.readouterr()
    a = ma.tensor([1.0, 2.0], requires_grad=True)
    node = (a * ma.tensor([3.0, 4.0])).grad_fn
    assert isinstance(node, MulBackward0) and node._saved["self"] is None


# --- 3.2 ---------------------------------------------------------------------------------------


def test_exp_backward_accepts_the_solution(capsys):
    assert check_exp_backward(exp_backward)
    assert "Exercise 3.2: correct ✓" in one_line(capsys)


def test_exp_backward_says_not_done_yet_for_the_stub(capsys):
    assert not check_exp_backward(stub)
    assert one_line(capsys).startswith("Exercise 3.2: not done yet — ")


def test_exp_backward_reports_a_forgotten_incoming_gradient(capsys):
    assert not check_exp_backward(lambda node, g: (node.saved("result"),))
    line = one_line(capsys)
    assert "the gradient of x differs by up to" in line and "incoming gradient g" in line


def test_exp_backward_asks_for_a_tuple(capsys):
    assert not check_exp_backward(lambda node, g: g * node.saved("result"))
    assert "returns a tuple with one gradient per input" in one_line(capsys)


def test_exp_backward_must_go_through_the_version_check(capsys):
    def unchecked(node, g):
        return (g * Tensor._make(node._saved["result"]._value),)

    assert not check_exp_backward(unchecked)
    assert "node.saved('result')" in one_line(capsys)


def test_exp_backward_leaves_the_engine_as_it_was(capsys):
    check_exp_backward(stub)
    capsys.readouterr()
    assert ExpBackward0.apply is not stub
    x = ma.tensor([0.0, 1.0], requires_grad=True)
    x.exp().sum().backward()
    assert x.grad.tolist() == pytest.approx([1.0, 2.718281828], rel=1e-6)


# --- 3.3 ---------------------------------------------------------------------------------------


def test_version_check_accepts_the_solution(capsys):
    assert check_version_check(check_version)
    assert "Exercise 3.3: correct ✓" in one_line(capsys)


def test_version_check_says_not_done_yet_for_the_stub(capsys):
    assert not check_version_check(stub)
    assert one_line(capsys).startswith("Exercise 3.3: not done yet — ")


def test_version_check_that_never_raises_is_a_silent_wrong_gradient(capsys):
    assert not check_version_check(lambda tensor, saved_version, producer_name: None)
    assert "silently wrong gradient" in one_line(capsys)


def test_version_check_against_zero_is_too_strict(capsys):
    def against_zero(tensor, saved_version, producer_name):
        if tensor._version != 0:
            raise RuntimeError("modified")

    assert not check_version_check(against_zero)
    line = one_line(capsys)
    assert "a.mul_(2) before a**2 saves a" in line and "not with 0" in line


def test_version_check_points_at_the_first_different_character(capsys):
    def no_producer(tensor, saved_version, producer_name):
        if tensor._version != saved_version:
            check_version(tensor, saved_version, None)

    assert not check_version_check(no_producer)
    line = one_line(capsys)
    assert "your message differs from PyTorch's at character" in line
    assert "which is output 0 of Exp" in line


def test_version_check_leaves_the_engine_as_it_was(capsys):
    original = SavedTensor.unpack
    check_version_check(lambda tensor, saved_version, producer_name: None)
    capsys.readouterr()
    assert SavedTensor.unpack is original


# --- 3.4 ---------------------------------------------------------------------------------------


def test_half_hooks_accept_the_solution(capsys):
    assert check_half_hooks(pack_half, unpack_half)
    line = one_line(capsys)
    assert "Exercise 3.4: correct ✓" in line and "(50%)" in line


def test_half_hooks_say_not_done_yet_for_the_stub(capsys):
    assert not check_half_hooks(stub, stub)
    assert one_line(capsys).startswith("Exercise 3.4: not done yet — ")


def test_half_hooks_that_keep_the_tensor_save_nothing(capsys):
    assert not check_half_hooks(lambda t: t, lambda packed: packed)
    assert "pack returned the tensor itself" in one_line(capsys)


def test_half_hooks_that_copy_do_not_halve(capsys):
    assert not check_half_hooks(lambda t: t.detach().clone(), lambda packed: packed)
    assert "(100%); float16 copies take half" in one_line(capsys)


def test_half_hooks_must_convert_back(capsys):
    assert not check_half_hooks(lambda t: t.to(ma.float16), lambda packed: packed)
    assert "unpack returned a mini_autograd.float16 tensor" in one_line(capsys)


def test_half_hooks_that_crash_are_reported_without_traceback(capsys):
    assert not check_half_hooks(pack_half, lambda packed: packed.to(ma.float32))
    assert "your code raised AttributeError" in one_line(capsys)
