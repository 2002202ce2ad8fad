"""Reductions: sum, mean, max."""

from collections import namedtuple

import numpy as np

from ..node import Node
from ..tensor import Tensor
from .recording import record, save, wants_grad
from .shape import normalize_dim

_SCALAR_NAMES = {"int64": "Long", "int32": "Int", "bool": "Bool"}  # PyTorch's names for dtypes
MaxResult = namedtuple("max", ["values", "indices"])


def _normalize_dims(dim, ndim):
    """dim (int, tuple or None) as a sorted tuple of non-negative dims, or None for 'all'."""
    if dim is None:
        return None
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return tuple(sorted(normalize_dim(d, ndim) for d in dims))


def _expand_back(g, dims, keepdim, shape):
    """Broadcast a reduced gradient back to `shape` (the inverse of summing over `dims`)."""
    if dims is not None and not keepdim:
        for d in dims:  # ascending, so each dim lands where it was (PyTorch unsqueezes too)
            g = g.unsqueeze(d)
    return g.expand(*shape)


class SumBackward0(Node):
    """out = sum(self):  d self = g broadcast to self's shape."""

    __slots__ = ()

    def apply(self, g):
        return (_expand_back(g, None, False, self._saved["self_sym_sizes"]),)


class SumBackward1(Node):
    """out = sum(self, dim):  d self = g, with the summed dims put back, broadcast."""

    __slots__ = ()

    def apply(self, g):
        s = self._saved
        return (_expand_back(g, self._info, s["keepdim"], s["self_sym_sizes"]),)


class MeanBackward0(Node):
    """out = mean(self):  d self = g / numel, broadcast."""

    __slots__ = ()

    def apply(self, g):
        s = self._saved
        return (_expand_back(g, None, False, s["self_sym_sizes"]) / s["self_sym_numel"],)


class MeanBackward1(Node):
    """out = mean(self, dim):  d self = g / (number averaged), broadcast."""

    __slots__ = ()

    def apply(self, g):
        s = self._saved
        count = s["self_sym_numel"] // (g._data.size or 1)
        return (_expand_back(g, self._info, s["keepdim"], s["self_sym_sizes"]) / count,)


class MaxBackward1(Node):
    """out = max(self):  d self = g shared evenly among the elements equal to the max."""

    __slots__ = ()

    def apply(self, g):
        winners = (self.saved("self")._data == self.saved("result")._data).astype(g._data.dtype)
        return (g * Tensor._make(winners / winners.sum()),)


class MaxBackward0(Node):
    """(values, indices) = max(self, dim):  d self = g at the indices, 0 elsewhere."""

    __slots__ = ()

    def apply(self, g):
        s = self._saved
        dim, indices = self._info, self.saved("indices")._data
        if not s["keepdim"]:
            g = g.unsqueeze(dim)
            indices = np.expand_dims(indices, dim)
        shape = s["self_sym_sizes"]
        positions = np.arange(shape[dim]).reshape(
            [-1 if d == dim else 1 for d in range(len(shape))]
        )
        return (g * Tensor._make((positions == indices).astype(g._data.dtype)),)


def sum(self, dim=None, keepdim=False):
    """Sum of all elements, or over `dim` (an int or a tuple)."""
    dims = _normalize_dims(dim, self._data.ndim)
    data = np.asarray(np.sum(self._data, axis=dims, keepdims=keepdim))
    if not wants_grad(self):
        return Tensor._make(data)
    if dims is None:
        return record(SumBackward0, data, (self,), {"self_sym_sizes": self._data.shape})
    saved = {"dim": _as_given(dim), "keepdim": keepdim, "self_sym_sizes": self._data.shape}
    return record(SumBackward1, data, (self,), saved, info=dims)


def mean(self, dim=None, keepdim=False):
    """Mean of all elements, or over `dim`."""
    if self._data.dtype.kind != "f":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {_SCALAR_NAMES.get(self.dtype.name, self.dtype.name)}"
        )
    dims = _normalize_dims(dim, self._data.ndim)
    data = np.asarray(np.mean(self._data, axis=dims, keepdims=keepdim), dtype=self._data.dtype)
    if not wants_grad(self):
        return Tensor._make(data)
    saved = {"self_sym_numel": self._data.size, "self_sym_sizes": self._data.shape}
    if dims is None:
        return record(MeanBackward0, data, (self,), saved)
    saved.update(dim=_as_given(dim), keepdim=keepdim)
    return record(MeanBackward1, data, (self,), saved, info=dims)


def max(self, dim=None, keepdim=False):
    """The largest element, or (values, indices) along `dim`."""
    if dim is None:
        data = np.asarray(self._data.max())
        if not wants_grad(self):
            return Tensor._make(data)
        return record(MaxBackward1, data, (self,), {"self": save(self)}, save_result_as="result")
    d = normalize_dim(dim, self._data.ndim)
    indices = Tensor._make(np.argmax(self._data, axis=d, keepdims=keepdim))
    data = np.max(self._data, axis=d, keepdims=keepdim)
    if not wants_grad(self):
        return MaxResult(Tensor._make(data), indices)
    saved = {"dim": dim, "keepdim": keepdim, "self_sym_sizes": self._data.shape}
    values = record(MaxBackward0, data, (self,), saved, info=d)
    values.grad_fn._saved["indices"] = save(indices)
    return MaxResult(values, indices)


def _as_given(dim):
    """PyTorch saves `dim` as a tuple, as the user wrote it (negative dims stay negative)."""
    return (dim,) if isinstance(dim, int) else tuple(dim)
