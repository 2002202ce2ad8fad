"""The pointwise operations torch's optimizers are written with, rounded as torch's CPU rounds.

The in-place ones (`add_`, `mul_`, ...) change a Tensor (a parameter or a state buffer) in its
memory and bump its version, as the torch methods of the same name do; the others return a
numpy array. Operands are numpy arrays; a Python number is first cast to the result's dtype,
as torch casts a scalar argument. torch's CPU kernels for add(alpha=), lerp and addcmul end in
one fused multiply-add (FMA: a single rounding); `_fma` rounds once too for float32, computing
in float64, where the product of two float32 numbers is exact. numpy has no float64 FMA, so in
float64 the last bit may differ from torch's.
"""

import numpy as np

# Elements of float64 scratch per block of an in-place FMA: 64 KiB, which malloc serves from
# memory it keeps. One float64 temporary the size of a large parameter instead made malloc give
# memory back to the system and fault it in again at every step (a third of an MLP step).
BLOCK = 8192


def _fma(a, b, c, out=None):
    """a * b + c, rounded once below float64 (as an FMA instruction does); written into `out`
    when given (a parameter or a state: no copy made, as the in-place operations want)."""
    dtype = c.dtype
    if dtype.itemsize >= 8:
        return np.add(a * b, c, out=out)
    if out is None or out.size <= BLOCK:
        product = np.multiply(a, b, dtype=np.float64)
        if out is None:
            return np.add(product, c, out=product).astype(dtype)
        return np.add(product, c, out=out, casting="same_kind")  # rounded once more, into out
    a, b, c = (np.broadcast_to(x, out.shape) for x in (a, b, c))
    rows = max(1, BLOCK * out.shape[0] // out.size)
    scratch = np.empty((rows, *out.shape[1:]))
    for start in range(0, len(out), rows):
        block, product = slice(start, start + rows), scratch[: len(out) - start]
        np.multiply(a[block], b[block], out=product, dtype=np.float64)
        np.add(product, c[block], out=out[block], casting="same_kind")
    return out


def add(x, other, alpha=1, out=None):
    """x + alpha * other (torch's x.add(other, alpha=alpha))."""
    return _fma(other, x.dtype.type(alpha), x, out)


def addcmul(x, t1, t2, value=1, out=None):
    """x + value * t1 * t2."""
    return _fma(x.dtype.type(value) * t1, t2, x, out)


def _bumped(t):
    """t, after an in-place change of its memory: its version counts one more."""
    t._bump_version()
    return t


def add_(t, other, alpha=1):
    """t += alpha * other."""
    add(t._data, other, alpha, out=t._data)
    return _bumped(t)


def mul_(t, value):
    """t *= value."""
    np.multiply(t._data, t._data.dtype.type(value), out=t._data)
    return _bumped(t)


def addcmul_(t, t1, t2, value=1):
    """t += value * t1 * t2."""
    addcmul(t._data, t1, t2, value, out=t._data)
    return _bumped(t)


def addcdiv_(t, t1, t2, value=1):
    """t += value * t1 / t2."""
    np.add(t._data, t._data.dtype.type(value) * t1 / t2, out=t._data, casting="same_kind")
    return _bumped(t)


def lerp_(t, end, weight):
    """t += weight * (end - t); for weight >= 0.5, t = end - (1 - weight) * (end - t), as torch."""
    w = t._data.dtype.type(weight)
    if abs(w) < 0.5:
        _fma(w, end - t._data, t._data, out=t._data)
    else:
        _fma(w - 1, end - t._data, end, out=t._data)
    return _bumped(t)


def maximum_(t, other):
    """t = max(t, other), elementwise (torch.maximum(t, other, out=t))."""
    np.maximum(t._data, other, out=t._data, casting="same_kind")
    return _bumped(t)


def sqrt(x):
    """The square root of each element, correctly rounded. torch's CPU sqrt (MKL's) is 1 ulp off
    on some elements: in float32 the one difference left between these optimizers and torch's."""
    return np.sqrt(x)
