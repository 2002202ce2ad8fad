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


def _fma(a, b, c):
    """a * b + c, rounded once below float64 (as an FMA instruction does)."""
    dtype = c.dtype
    if dtype.itemsize < 8:
        return (np.multiply(a, b, dtype=np.float64) + c).astype(dtype)
    return a * b + c


def add(x, other, alpha=1):
    """x + alpha * other (torch's x.add(other, alpha=alpha))."""
    return _fma(other, x.dtype.type(alpha), x)


def addcmul(x, t1, t2, value=1):
    """x + value * t1 * t2."""
    return _fma(x.dtype.type(value) * t1, t2, x)


def _set(t, values):
    """Write values into t's memory (views of t see them) and bump t's version; returns t."""
    np.copyto(t._data, values)
    t._bump_version()
    return t


def add_(t, other, alpha=1):
    """t += alpha * other."""
    return _set(t, add(t._data, other, alpha))


def mul_(t, value):
    """t *= value."""
    return _set(t, t._data * t._data.dtype.type(value))


def addcmul_(t, t1, t2, value=1):
    """t += value * t1 * t2."""
    return _set(t, addcmul(t._data, t1, t2, value))


def addcdiv_(t, t1, t2, value=1):
    """t += value * t1 / t2."""
    return _set(t, t._data + t._data.dtype.type(value) * t1 / t2)


def lerp_(t, end, weight):
    """t += weight * (end - t); for weight >= 0.5, t = end - (1 - weight) * (end - t), as torch."""
    w = t._data.dtype.type(weight)
    if abs(w) < 0.5:
        return _set(t, _fma(w, end - t._data, t._data))
    return _set(t, _fma(w - 1, end - t._data, end))


def maximum_(t, other):
    """t = max(t, other), elementwise (torch.maximum(t, other, out=t))."""
    return _set(t, np.maximum(t._data, other))


def sqrt(x):
    """The square root of each element, correctly rounded. torch's CPU sqrt (MKL's) is 1 ulp off
    on some elements: in float32 the one difference left between these optimizers and torch's."""
    return np.sqrt(x)
