"""Checks for the exercise of chapter 03 (saved tensors) that stays in the notebook.

    check_half_hooks(pack, unpack)       # 3.4: a saved_tensors_hooks pair storing float16

The check runs a small model under the learner's hooks, compares the gradients with PyTorch's on
the same program, prints exactly one line (correct, not done yet, or what differs and why) and
returns True or False. An ordinary mistake is reported in words, never as a traceback.

Exercises 3.1 to 3.3 (what `*` saves, the backward of `exp`, the version check) moved to the
build track: the learner writes them in exercises/my_autograd.py, and course/specs.py checks them.
"""

from __future__ import annotations

import numpy as np

import mini_autograd as ma
from course.check import gradient_problem as _grad_problem
from course.check import not_done as _not_done
from course.check import raised as _raised
from course.check import verdict
from course.check import wrong as _wrong
from mini_autograd.tensor import Tensor


class _Mistake(Exception):
    """Something the learner's code did that the check explains in words."""


def _torch():
    import torch

    return torch


def _grad_array(tensor):
    grad = tensor.grad
    return None if grad is None else np.asarray(grad.detach().cpu().numpy(), np.float64)


# --- 3.4: float16 saved-tensor hooks ------------------------------------------------------------


def _hook_model_arrays():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(32, 16)).astype(np.float32)
    w1 = (rng.normal(size=(16, 24)) * 0.3).astype(np.float32)
    w2 = (rng.normal(size=(24, 8)) * 0.3).astype(np.float32)
    return x, w1, w2


def _hook_model(lib, x, w1, w2):
    h = (x @ w1).tanh()
    return ((h @ w2).sigmoid() * 2).exp().mean()


def _nbytes(obj):
    """Bytes of the arrays inside what a pack hook returned (tensors, arrays, containers)."""
    if isinstance(obj, Tensor):
        return obj._data.nbytes
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, (bytes, bytearray)):
        return len(obj)
    if isinstance(obj, (tuple, list)):
        return sum(_nbytes(item) for item in obj)
    if isinstance(obj, dict):
        return sum(_nbytes(item) for item in obj.values())
    if hasattr(obj, "element_size") and hasattr(obj, "numel"):  # a torch tensor
        return obj.element_size() * obj.numel()
    return 0


def _arrays_in(obj):
    """The arrays inside what a pack hook returned (tensors, arrays, containers), as numpy."""
    if isinstance(obj, Tensor):
        return [obj._data]
    if isinstance(obj, np.ndarray):
        return [obj]
    if isinstance(obj, (tuple, list)):
        return [a for item in obj for a in _arrays_in(item)]
    if isinstance(obj, dict):
        return [a for item in obj.values() for a in _arrays_in(item)]
    if hasattr(obj, "detach") and hasattr(obj, "numel"):  # a torch tensor
        return [obj.detach().cpu().numpy()]
    return []


def _holds_values(packed, t):
    """Whether what pack returned holds t's values (to float16 rounding), or bytes we can't read."""
    if isinstance(packed, (bytes, bytearray)) or (
        isinstance(packed, (tuple, list)) and any(isinstance(p, (bytes, bytearray)) for p in packed)
    ):
        return True
    values = np.asarray(t._data, np.float64)
    for array in _arrays_in(packed):
        if array.size == values.size and np.allclose(
            np.asarray(array, np.float64).reshape(values.shape), values, rtol=2e-3, atol=1e-4
        ):
            return True
    return False


def _describe_packed(packed):
    text = repr(packed) if packed is None or isinstance(packed, (int, str)) else None
    return text or f"a {type(packed).__name__} with no tensor data in it"


@verdict
def check_half_hooks(pack, unpack):
    """Exercise 3.4: the learner's hooks store every saved tensor of a small model."""
    label = "3.4"
    hint = "pack: t.to(ma.float16) (and remember t.dtype); unpack: convert back to that dtype"
    torch = _torch()
    arrays = _hook_model_arrays()
    theirs = [torch.tensor(a, requires_grad=i > 0) for i, a in enumerate(arrays)]
    _hook_model(torch, *theirs).backward()

    received, stored, originals = [], [], []

    def counting_pack(t):
        packed = pack(t)
        if packed is t:
            raise _Mistake(
                "pack returned the tensor itself, so nothing is saved: store a float16 copy"
            )
        if not _arrays_in(packed) and not _nbytes(packed):
            raise _Mistake(
                f"your pack hook returned {_describe_packed(packed)}, so the saved values must be "
                "hidden somewhere else (a closure, a dict, a global), where they still take full "
                "memory: unpack receives only what pack returned, so return the float16 copy "
                "itself, e.g. (t.dtype, t.to(ma.float16))"
            )
        if not _holds_values(packed, t):
            raise _Mistake(
                "what your pack hook returned does not hold the saved values (no tensor or array "
                f"in it matches the {tuple(t.shape)} tensor it was given, even to float16 "
                "rounding): store t.to(ma.float16), a copy of its values"
            )
        received.append(t._data.nbytes)
        stored.append(_nbytes(packed))
        halved = t._data.astype(np.float16).astype(t._data.dtype)
        originals.append((t.dtype, t.shape, t._data.copy(), halved, stored[-1] < received[-1]))
        return (len(originals) - 1, packed)

    def checking_unpack(ticket):
        index, packed = ticket
        value = unpack(packed)
        dtype, shape, original, halved, is_smaller = originals[index]
        if not isinstance(value, Tensor):
            raise _Mistake(f"unpack returned a {type(value).__name__}; it must return a Tensor")
        if value.shape != shape:
            raise _Mistake(f"unpack returned shape {tuple(value.shape)}, expected {tuple(shape)}")
        if value.dtype != dtype:
            raise _Mistake(
                f"unpack returned a {value.dtype} tensor for a saved {dtype} one: convert it "
                "back, or backward computes in the wrong precision"
            )
        if (
            is_smaller
            and not np.array_equal(original, halved)
            and np.array_equal(value._data, original)
        ):
            raise _Mistake(
                "unpack gave back the original full-precision values, which the float16 copy "
                "pack stored cannot hold: unpack must rebuild the tensor from what pack returned "
                "(the only thing it receives), not fetch the original from a closure or a dict, "
                "which keeps it in memory"
            )
        return value

    mine = [ma.tensor(a, requires_grad=i > 0) for i, a in enumerate(arrays)]
    try:
        with ma.autograd.graph.saved_tensors_hooks(counting_pack, checking_unpack):
            loss = _hook_model(ma, *mine)
        loss.backward()
    except NotImplementedError:
        return _not_done(label, hint)
    except _Mistake as mistake:
        return _wrong(label, f"{mistake}.")
    except Exception as error:
        return _raised(label, error, "while running the model with your hooks")
    ratio = sum(stored) / sum(received)
    if ratio > 0.5 + 1e-9:
        return _wrong(
            label,
            f"your pack hook stores {sum(stored)} bytes for {sum(received)} bytes of saved "
            f"tensors ({ratio:.0%}); float16 copies take half. Hint: {hint}.",
        )
    for name, m, t in zip(("w1", "w2"), mine[1:], theirs[1:]):
        problem = _grad_problem(_grad_array(m), _grad_array(t), atol=1e-3, rtol=1e-2)
        if problem:
            return _wrong(
                label,
                f"the gradient of {name} {problem} compared with PyTorch without hooks: more "
                "than float16 rounding explains. Does unpack give back the values pack stored?",
            )
        if m.grad.dtype != ma.float32:
            return _wrong(label, f"the gradient of {name} is {m.grad.dtype}, expected float32.")
    worst = max(
        float(np.max(np.abs(_grad_array(m) - _grad_array(t)))) for m, t in zip(mine[1:], theirs[1:])
    )
    print(
        f"Exercise {label}: correct ✓ — {len(received)} saved tensors take {sum(stored)} bytes "
        f"instead of {sum(received)} ({ratio:.0%}), and the gradients stay within "
        f"{_bucket(worst)} of PyTorch's float32 ones."
    )
    return True


def _bucket(value):
    """A stable upper bound for a small float difference (so stored outputs do not flicker)."""
    for bound in (1e-6, 1e-5, 1e-4, 1e-3, 1e-2):
        if value < bound:
            return f"{bound:.0e}"
    return f"{value:.1g}"
