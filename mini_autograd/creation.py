"""Ways to make tensors: zeros, ones, randn, rand, arange, full, and the random seed."""

import numpy as np

from . import dtypes
from .tensor import Tensor, check_can_require_grad

_rng = np.random.default_rng(0)


def manual_seed(seed):
    """Seed mini_autograd's random generator (numpy's, not PyTorch's: the numbers differ)."""
    global _rng
    _rng = np.random.default_rng(seed)
    return _rng


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    if not all(isinstance(s, (int, np.integer)) and s >= 0 for s in size):
        raise TypeError(f"sizes must be non-negative integers, got {size}")
    return tuple(int(s) for s in size)


def _leaf(array, requires_grad, dtype):
    if dtype is not None:
        array = array.astype(dtypes.to_numpy(dtype), copy=False)
    check_can_require_grad(
        array,
        requires_grad,
        "Only Tensors of floating point and complex dtype can require gradients",
    )
    return Tensor._make(array, bool(requires_grad))


def zeros(*size, requires_grad=False, dtype=None):
    """A tensor of zeros."""
    return _leaf(np.zeros(_size(size), dtypes.DEFAULT_FLOAT), requires_grad, dtype)


def ones(*size, requires_grad=False, dtype=None):
    """A tensor of ones."""
    return _leaf(np.ones(_size(size), dtypes.DEFAULT_FLOAT), requires_grad, dtype)


def full(size, fill_value, requires_grad=False, dtype=None):
    """A tensor filled with `fill_value`."""
    return _leaf(np.full(_size((size,)), fill_value, dtypes.DEFAULT_FLOAT), requires_grad, dtype)


def randn(*size, requires_grad=False, dtype=None):
    """Standard normal samples."""
    return _leaf(_rng.standard_normal(_size(size), dtype=np.float32), requires_grad, dtype)


def rand(*size, requires_grad=False, dtype=None):
    """Uniform samples in [0, 1)."""
    return _leaf(_rng.random(_size(size), dtype=np.float32), requires_grad, dtype)


def randint(low, high, size, dtype=None):
    """Random integers in [low, high)."""
    return _leaf(_rng.integers(low, high, _size((size,)), dtype=np.int64), False, dtype)


def arange(start, end=None, step=1, requires_grad=False, dtype=None):
    """Evenly spaced values in [start, end)."""
    if end is None:
        start, end = 0, start
    array = np.arange(start, end, step)
    if array.dtype == np.float64:
        array = array.astype(dtypes.DEFAULT_FLOAT)
    return _leaf(array, requires_grad, dtype)


def zeros_like(t, requires_grad=False, dtype=None):
    """Zeros with t's shape and dtype."""
    return _leaf(np.zeros_like(t._data), requires_grad, dtype)


def ones_like(t, requires_grad=False, dtype=None):
    """Ones with t's shape and dtype."""
    return _leaf(np.ones_like(t._data), requires_grad, dtype)


def randn_like(t, requires_grad=False, dtype=None):
    """Normal samples with t's shape and dtype."""
    return _leaf(_rng.standard_normal(t._data.shape).astype(t._data.dtype), requires_grad, dtype)
