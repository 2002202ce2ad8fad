"""Checks for the exercise of chapter 03 (saved tensors) that stays in the notebook.

    check_half_hooks(pack, unpack)       # 3.4: a saved_tensors_hooks pair storing float16

It runs a small model under the learner's hooks and compares the gradients with PyTorch's.
Exercises 3.1 to 3.3 are checked by the build track (course/specs.py).
"""

from __future__ import annotations

import numpy as np

import mini_autograd as ma
from course.check import Feedback, as_array, call, checker, difference, load_torch
from mini_autograd.instruments.memory import as_numpy

# --- 3.4: float16 saved-tensor hooks ------------------------------------------------------------


def _hook_model(lib, x, w1, w2):
    h = (x @ w1).tanh()
    return ((h @ w2).sigmoid() * 2).exp().mean()


def _contents(obj):
    """The arrays inside what a pack hook returned (tensors, arrays, containers; bytes as uint8)."""
    if isinstance(obj, (bytes, bytearray)):
        return [np.frombuffer(obj, np.uint8)]
    if isinstance(obj, np.ndarray):
        return [obj]
    if isinstance(obj, dict):
        obj = list(obj.values())
    if isinstance(obj, (tuple, list)):
        return [a for item in obj for a in _contents(item)]
    if hasattr(obj, "detach") and hasattr(obj, "numel"):  # a tensor of torch or mini_autograd
        return [as_numpy(obj)]
    return []


def _nbytes(obj):
    return sum(a.nbytes for a in _contents(obj))


def _holds_values(packed, t):
    """Whether what pack returned holds t's values (to float16 rounding), or bytes we can't read."""
    values = np.asarray(t._data, np.float64)
    return any(
        a.dtype == np.uint8
        or (a.size == values.size and np.allclose(a.reshape(values.shape), values, 2e-3, 1e-4))
        for a in _contents(packed)
    )


HINT = "pack: t.to(ma.float16) (and remember t.dtype); unpack: convert back to that dtype"


@checker("3.4", HINT, HINT + ".")
def check_half_hooks(pack, unpack):
    """Exercise 3.4: the learner's hooks store every saved tensor of a small model."""
    torch, rng = load_torch(), np.random.default_rng(3)
    arrays = [
        rng.normal(size=(32, 16)),
        rng.normal(size=(16, 24)) * 0.3,
        rng.normal(size=(24, 8)) * 0.3,
    ]
    arrays = [a.astype(np.float32) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=i > 0) for i, a in enumerate(arrays)]
    _hook_model(torch, *theirs).backward()
    received, stored, originals = [], [], []

    def counting_pack(t):
        packed = pack(t)
        if packed is t:
            raise Feedback(
                "pack returned the tensor itself, so nothing is saved: store a float16 copy."
            )
        if not _nbytes(packed):
            shown = repr(packed) if packed is None or isinstance(packed, (int, str)) else None
            raise Feedback(
                f"your pack hook returned {shown or f'a {type(packed).__name__} with no tensor data in it'}, so the saved values must be hidden somewhere else (a closure, a dict, a global), where they still take full memory: unpack receives only what pack returned, so return the float16 copy itself, with whatever unpack needs to give back the original dtype."
            )
        if not _holds_values(packed, t):
            raise Feedback(
                f"what your pack hook returned does not hold the saved values (no tensor or array in it matches the {tuple(t.shape)} tensor it was given, even to float16 rounding): store a float16 copy of its values."
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
        if not isinstance(value, ma.Tensor):
            raise Feedback(f"unpack returned a {type(value).__name__}; it must return a Tensor.")
        if value.shape != shape:
            raise Feedback(f"unpack returned shape {tuple(value.shape)}, expected {tuple(shape)}.")
        if value.dtype != dtype and value.dtype == ma.float32 and dtype == ma.float64:
            raise Feedback(
                f"on the model run in float64, unpack converted a saved tensor back to {value.dtype}, but the saved tensor was {dtype}: a fixed float32 suits only float32 models. Remember the dtype at pack time (return it together with the float16 copy) and convert back to that dtype, whatever it was."
            )
        if value.dtype != dtype:
            raise Feedback(
                f"unpack returned a {value.dtype} tensor for a saved {dtype} one: convert it back, or backward computes in the wrong precision. Each saved tensor comes back in its own dtype: keep the dtype in what pack returns, not in a variable that every call of pack shares."
            )
        if (
            is_smaller
            and not np.array_equal(original, halved)
            and np.array_equal(value._data, original)
        ):
            raise Feedback(
                "unpack gave back the original full-precision values, which the float16 copy pack stored cannot hold: unpack must rebuild the tensor from what pack returned (the only thing it receives), not fetch the original from a closure or a dict, which keeps it in memory."
            )
        return value

    def run(tensors):
        with ma.autograd.graph.saved_tensors_hooks(counting_pack, checking_unpack):
            loss = _hook_model(ma, *tensors)
        loss.backward()

    mine = [ma.tensor(a, requires_grad=i > 0) for i, a in enumerate(arrays)]
    call(run, mine, where=" (while running the model with your hooks)")
    count, stored_bytes, received_bytes = len(received), sum(stored), sum(received)
    ratio = stored_bytes / received_bytes
    if ratio > 0.5 + 1e-9:
        raise Feedback(
            f"your pack hook stores {stored_bytes} bytes for {received_bytes} bytes of saved tensors ({ratio:.0%}); float16 copies take half.",
            hint=True,
        )
    for name, m, t in zip(("w1", "w2"), mine[1:], theirs[1:]):
        problem = difference(m.grad, t.grad, atol=1e-3, rtol=1e-2)
        if problem:
            raise Feedback(
                f"the gradient of {name} differs from PyTorch's without hooks ({problem}): more than float16 rounding explains. Does unpack give back the values pack stored?"
            )
        if m.grad.dtype != ma.float32:
            raise Feedback(f"the gradient of {name} is {m.grad.dtype}, expected float32.")
    # The same model in float64: unpack must give back the dtype pack was given, not float32.
    doubles = [ma.tensor(a.astype(np.float64), requires_grad=i > 0) for i, a in enumerate(arrays)]
    start = len(received)
    call(run, doubles, where=" (while running a float64 model with your hooks)")
    if sum(stored[start:]) > 0.25 * sum(received[start:]) + 1e-9:  # float16 is a quarter of float64
        raise Feedback(
            f"on the model run in float64, your pack hook stores {sum(stored[start:])} bytes for {sum(received[start:])} bytes of saved tensors: a float64 tensor must be stored in float16 too (a quarter of its bytes), whatever dtype it comes in."
        )
    for name, m, t in zip(("w1", "w2"), doubles[1:], theirs[1:]):
        if m.grad is None or m.grad.dtype != ma.float64:
            got = "no gradient" if m.grad is None else f"a {m.grad.dtype} gradient"
            raise Feedback(
                f"on the model run in float64, {name} got {got}, expected float64: unpack must give back each saved tensor in the dtype it had."
            )
        problem = difference(m.grad, t.grad, atol=1e-3, rtol=1e-2)
        if problem:
            raise Feedback(
                f"on the model run in float64, the gradient of {name} differs from PyTorch's without hooks ({problem}): more than float16 rounding explains."
            )
    # float32 times float64 in one graph: each saved tensor comes back in its own dtype.
    a = ma.tensor(arrays[0][0], requires_grad=True)
    b = ma.tensor(arrays[0][1].astype(np.float64), requires_grad=True)

    def run_mixed():
        with ma.autograd.graph.saved_tensors_hooks(counting_pack, checking_unpack):
            loss = (a * b).exp().sum()
        loss.backward()

    call(run_mixed, where=" (while running a float32 tensor times a float64 one with your hooks)")
    worst = max(
        float(np.max(np.abs(as_array(m.grad) - as_array(t.grad))))
        for m, t in zip(mine[1:], theirs[1:])
    )
    bound = next((f"{b:.0e}" for b in (1e-6, 1e-5, 1e-4, 1e-3, 1e-2) if worst < b), f"{worst:.1g}")
    return f"{count} saved tensors take {stored_bytes} bytes instead of {received_bytes} ({ratio:.0%}), and the gradients stay within {bound} of PyTorch's float32 ones."
