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


class LinalgVectorNormBackward0(Node):
    """out = ||self||_ord over dim:  d self = g * sign(self) * |self|**(ord-1) / out**(ord-1).

    For ord=2 that is g * self / out; for ord=1, g * sign(self); for ord=inf, g * sign(self)
    shared among the entries whose |value| is the largest. Where out is 0 the gradient is 0.
    """

    __slots__ = ()

    def apply(self, g):
        s = self._saved
        x, result = self.saved("self"), self.saved("result")
        dims, order = self._info, s["ord"]
        if dims is not None and not s["keepdim"]:
            for d in dims:  # ascending, so each dim lands where it was
                g, result = g.unsqueeze(d), result.unsqueeze(d)
        dtype = x._data.dtype
        sign = Tensor._make(np.sign(x._data).astype(dtype))
        # sign(self) has a zero derivative; `+ x * 0` keeps self in the graph of the result, so
        # that with create_graph it requires grad (and has a zero second derivative) as in torch
        if order == 1:
            return (g * sign + x * 0,)
        if order == np.inf:
            winners = (np.abs(x._data) == result._data).astype(dtype)
            count = np.sum(winners, axis=dims, keepdims=True)
            return (g * sign * Tensor._make(winners / np.maximum(count, 1)) + x * 0,)
        # where the norm is 0, every entry is 0: divide by 1 there, so the gradient is 0
        safe = result + Tensor._make((result._data == 0).astype(dtype))
        if order == 2:
            return (x * (g / safe),)
        return (sign * x.abs() ** (order - 1) * (g / safe ** (order - 1)),)


def norm(self, p="fro", dim=None, keepdim=False):
    """The vector p-norm of all elements, or over `dim` (torch.linalg.vector_norm's node).

    p is 2 (or "fro", the default), 1, inf, or any other number above 0.
    """
    order = 2 if p == "fro" else p
    if isinstance(order, str) or not order > 0:
        raise ValueError(f"norm: mini_autograd supports p > 0, inf and 'fro', got p={p!r}")
    if self._data.dtype.kind != "f":
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{_SCALAR_NAMES.get(self.dtype.name, self.dtype.name)}"
        )
    dims = _normalize_dims(dim, self._data.ndim)
    magnitude = np.abs(self._data)
    if order == np.inf:
        values = np.max(magnitude, axis=dims, keepdims=keepdim)
    elif order == 1:
        values = np.sum(magnitude, axis=dims, keepdims=keepdim)
    elif order == 2:
        values = np.sqrt(np.sum(magnitude * magnitude, axis=dims, keepdims=keepdim))
    else:
        values = np.sum(magnitude**order, axis=dims, keepdims=keepdim) ** (1 / order)
    data = np.asarray(values, dtype=self._data.dtype)
    if not wants_grad(self):
        return Tensor._make(data)
    saved = {
        "dim": None if dim is None else _as_given(dim),
        "keepdim": keepdim,
        "ord": order,
        "self": save(self),
    }
    return record(LinalgVectorNormBackward0, data, (self,), saved, "result", info=dims)
