"""scatter_reduce and index_reduce: each element of src combined (sum, prod, mean, amax, amin)
into self at the position index gives it along dim; index_reduce takes one index per slice.

Their backwards are PyTorch's formulas (FunctionsManual.cpp, scatter_reduce_backward), written
with differentiable operations, so that a double backward goes through them.
"""

import warnings

import numpy as np

from ..core.node import Node
from ..core.tensor import Tensor
from .indexing import ScatterAddBackward0, scatter_into_zeros
from .piecewise import where
from .recording import record
from .shape import normalize_dim

_UFUNCS = {
    "sum": np.add,
    "mean": np.add,
    "prod": np.multiply,
    "amax": np.maximum,
    "amin": np.minimum,
}
_IDENTITY = {"sum": 0, "mean": 0, "prod": 1, "amax": -np.inf, "amin": np.inf}


class DelayedError(Node):
    """Put on a gradient that must not be differentiated again: running it raises `args`."""

    __slots__ = ()

    def name(self):
        """PyTorch prints the C++ name for this node."""
        return "torch::autograd::DelayedError"

    def apply(self, *grads):
        raise RuntimeError(self.args)


class ScatterReduceBackward0(Node):
    """out = self.scatter_reduce(dim, index, src, reduce):  PyTorch's scatter_reduce_backward."""

    __slots__ = ()

    def apply(self, g):
        s, (d, index, op) = self._saved, self.args
        x, src, result = self.saved("self"), self.saved(_SOURCE[op]), self.saved("result")
        return _backward(g, x, d, index, src, s["reduce"], s["include_self"], result, op)


class IndexReduceBackward0(ScatterReduceBackward0):
    """out = self.index_reduce(dim, index, source, reduce):  as scatter_reduce's, slice by slice."""

    __slots__ = ()


_SOURCE = {"scatter_reduce": "src", "index_reduce": "source"}


def _mask(array):
    return Tensor._make(array)


def _scatter_add(values, shape, d, index):
    return scatter_into_zeros(values, shape, d, index, ScatterAddBackward0)


def _backward(g, x, d, index, src, reduce, include_self, result, op):
    """(d self, d src), PyTorch's formulas for each reduction."""
    if reduce == "sum":
        grad_self, grad_src = g, g.gather(d, index)
    elif reduce == "mean":
        counts = _count(x._data.shape, d, index._data, include_self)
        n = _mask(counts.astype(g._data.dtype))
        grad_self, grad_src = g / n, g.gather(d, index) / n.gather(d, index)
    elif reduce == "prod":
        grad_self, grad_src = _prod_backward(g, x, d, index, src, include_self, result, op)
    else:  # amax, amin: g shared evenly among the values equal to the result
        value = result._data[_key(d, index._data)]
        self_is = (x._data == result._data).astype(g._data.dtype)
        src_is = (src._data == value).astype(g._data.dtype)
        n = self_is.copy()
        np.add.at(n, _key(d, index._data), src_is)
        share = g / _mask(n)
        grad_self, grad_src = share * _mask(self_is), share.gather(d, index) * _mask(src_is)
    if not include_self:
        scattered = np.zeros(x._data.shape, bool)
        scattered[_key(d, index._data)] = True
        grad_self = grad_self.masked_fill(_mask(scattered), 0)
    return grad_self, grad_src


def _prod_backward(g, x, d, index, src, include_self, result, op):
    """prod's gradients, exact where self or src hold zeros (PyTorch's formula)."""
    masked_self = x.masked_fill(_mask(x._data == 0), 1)
    masked_self_result = _reduced(masked_self, d, index, src, "prod", include_self)
    grad_self = g * masked_self_result / masked_self
    src_zero = src._data == 0
    zeros_at = np.zeros(x._data.shape)
    np.add.at(zeros_at, _key(d, index._data), src_zero)
    src_zeros = zeros_at[_key(d, index._data)]
    single_zero = _mask(src_zero & (src_zeros == 1))
    masked_src_result = _reduced(x, d, index, src.masked_fill(single_zero, 1), "prod", include_self)
    grad_src = where(
        single_zero,
        (g * masked_src_result).gather(d, index),
        (g * result).gather(d, index) / src.masked_fill(_mask(src_zero), 1),
    )
    if (src_zeros > 1).any():
        message = (
            f"{op}(): Double backward is unsupported for {_SOURCE[op]} when >1 zeros in "
            f"{_SOURCE[op]} are scattered to the same position in self"
        )
        grad_src = record(DelayedError, grad_src._data, (grad_src,), args=message)
    return grad_self, grad_src


def _key(d, index):
    """The positions index names along dim d, as a key for numpy's ufunc.at."""
    key = list(np.ix_(*[np.arange(n) for n in index.shape]))
    key[d] = index
    return tuple(key)


def _count(shape, d, index, include_self):
    counts = np.full(shape, 1 if include_self else 0)
    np.add.at(counts, _key(d, index), 1)
    return np.maximum(counts, 1)


def _reduced(
    x,
    d,
    index,
    src,
    reduce,
    include_self,
    node_type=ScatterReduceBackward0,
    op="scatter_reduce",
    saved=None,
):
    """The reduction of src into a copy of x, recorded by node_type."""
    key = _key(d, index._data)
    values = src._data[tuple(slice(n) for n in index._data.shape)]
    data = x._data.copy()
    if not include_self:
        data[key] = _IDENTITY[reduce]
    _UFUNCS[reduce].at(data, key, values)
    if reduce == "mean":
        data = data / _count(data.shape, d, index._data, include_self)
    if saved is None:
        saved = {"dim": d, "include_self": include_self, "index": index, "reduce": reduce}
        saved.update({"self": x, _SOURCE[op]: src})
    return record(node_type, data, (x, src), saved, save_result_as="result", args=(d, index, op))


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):  # noqa: A002
    """input with each src[i][j] combined into input[index[i][j]][j] (dim 0) by reduce:
    "sum", "prod", "mean", "amax" or "amin"; include_self=False leaves input's values out."""
    if reduce not in _UFUNCS:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    d = normalize_dim(dim, input._data.ndim)
    return _reduced(input, d, index, src, reduce, include_self)


def index_reduce(input, dim, index, source, reduce, *, include_self=True):  # noqa: A002
    """input with each slice source[..., i, ...] combined into input[..., index[i], ...] by
    reduce: "prod", "mean", "amax" or "amin"."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(
            "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
            f"{reduce}."
        )
    warnings.warn("index_reduce() is in beta and the API may change at any time.", stacklevel=2)
    d = normalize_dim(dim, input._data.ndim)
    shape = [1] * source._data.ndim
    shape[d] = -1
    full = Tensor._make(np.broadcast_to(index._data.reshape(shape), source._data.shape))
    saved = {"dim": dim, "include_self": include_self, "index": index, "reduce": reduce}
    saved.update({"self": input, "source": source})
    return _reduced(
        input, d, full, source, reduce, include_self, IndexReduceBackward0, "index_reduce", saved
    )
