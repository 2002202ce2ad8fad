"""The chapter 03 checker (3.4, float16 saved-tensor hooks) accepts the solution and explains
plausible wrong answers in words. Exercises 3.1 to 3.3 moved to the build track (course/specs.py)."""

import pytest

import mini_autograd as ma
from course.checks_03 import check_half_hooks
from tests.exercise_answers import answer, not_done

pytest.importorskip("torch")


pack_half = answer("03_saved_tensors", "pack_half")
unpack_half = answer("03_saved_tensors", "unpack_half")


# --- 3.4 ---------------------------------------------------------------------------------------


def test_half_hooks_accept_the_solution(one_line):
    assert check_half_hooks(pack_half, unpack_half)
    line = one_line()
    assert "Exercise 3.4: correct ✓" in line and "(50%)" in line


def test_half_hooks_say_not_done_yet_for_the_stub(one_line):
    assert not check_half_hooks(not_done, not_done)
    assert one_line().startswith("Exercise 3.4: not done yet — ")


def test_half_hooks_that_keep_the_tensor_save_nothing(one_line):
    assert not check_half_hooks(lambda t: t, lambda packed: packed)
    assert "pack returned the tensor itself" in one_line()


def test_half_hooks_that_copy_do_not_halve(one_line):
    assert not check_half_hooks(lambda t: t.detach().clone(), lambda packed: packed)
    assert "(100%); float16 copies take half" in one_line()


def test_half_hooks_that_halve_float32_only_keep_float64_whole(one_line):
    def pack(t):
        return (t.dtype, t.to(ma.float16) if t.dtype == ma.float32 else t.detach().clone())

    def unpack(packed):
        return packed[1].to(packed[0])

    assert not check_half_hooks(pack, unpack)
    assert "a float64 tensor must be stored in float16 too" in one_line("Exercise 3.4: ")


def test_half_hooks_must_convert_back(one_line):
    assert not check_half_hooks(lambda t: t.to(ma.float16), lambda packed: packed)
    assert "unpack returned a mini_autograd.float16 tensor" in one_line()


def test_half_hooks_that_crash_are_reported_without_traceback(one_line):
    assert not check_half_hooks(pack_half, lambda packed: packed.to(ma.float32))
    assert "your code raised AttributeError" in one_line()


def closure_hooks(token):
    """Hooks that hide each saved tensor in a dict and store only a token (or None)."""
    hidden = {}

    def pack(t):
        key = len(hidden)
        hidden[key] = t
        return token(key)

    def unpack(packed):
        return hidden[packed] if packed is not None else hidden[len(hidden) - 1]

    return pack, unpack


@pytest.mark.parametrize("token", [lambda key: key, lambda key: None], ids=["number", "None"])
def test_half_hooks_that_hide_the_tensor_in_a_closure(one_line, token):
    pack, unpack = closure_hooks(token)
    assert not check_half_hooks(pack, unpack)
    line = one_line()
    assert "closure" in line and "0 bytes" not in line


def test_half_hooks_that_store_half_but_unpack_the_hidden_original(one_line):
    hidden = []

    def pack(t):
        hidden.append(t)
        return (len(hidden) - 1, t.to(ma.float16))

    def unpack(packed):
        return hidden[packed[0]]

    assert not check_half_hooks(pack, unpack)
    line = one_line()
    assert "unpack" in line and "from what pack returned" in line


def test_half_hooks_that_store_other_values(one_line):
    assert not check_half_hooks(
        lambda t: (t.dtype, (t * 0).to(ma.float16)), lambda packed: packed[1].to(packed[0])
    )
    assert "does not hold the saved values" in one_line()


@pytest.mark.parametrize(
    "pack",
    [lambda t: t.to(ma.float16), lambda t: (t.dtype, t.to(ma.float16))],
    ids=["no-dtype-kept", "dtype-kept-but-unused"],
)
def test_half_hooks_that_convert_back_to_float32_fail_on_float64(one_line, pack):
    """unpack hard-codes float32: the float32 model passes, the float64 run names the mistake."""

    def unpack(packed):
        half = packed[1] if isinstance(packed, tuple) else packed
        return half.to(ma.float32)

    assert not check_half_hooks(pack, unpack)
    line = one_line()
    assert "on the model run in float64, unpack converted a saved tensor back to" in line, line
    assert "mini_autograd.float32, but the saved tensor was mini_autograd.float64" in line, line
    assert "Remember the dtype at pack time" in line, line


def test_half_hooks_that_keep_the_dtype_in_a_shared_variable_fail_on_mixed_dtypes(one_line):
    """The dtype kept in one variable for every call of pack: each model alone passes, a graph of
    float32 and float64 tensors gets one of them back in the other's dtype."""
    last = {}

    def pack(t):
        last["dtype"] = t.dtype
        return t.to(ma.float16)

    def unpack(packed):
        return packed.to(last["dtype"])

    assert not check_half_hooks(pack, unpack)
    line = one_line()
    assert "for a saved mini_autograd.float32 one" in line, line
    assert "not in a variable that every call of pack shares" in line, line
