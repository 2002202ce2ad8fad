"""Reductions: sum, mean, prod, max and min, amax and amin, argmax, std and var, logsumexp, all
and any, count_nonzero, norm; along a dim: cumsum and cumprod, sort, topk, kthvalue.

Every `dim` may also be given as numpy's `axis=`, and `keepdim` as `keepdims=`, as torch allows
(numpy_names).
"""

import math
import warnings

import numpy as np

from .. import return_types
from ..core import dtypes
from ..core.errors import SCALAR_TYPE_NAMES, scalar_type_name
from ..core.node import Node
from ..core.tensor import Tensor
from .derivatives import (
    MeanBackward0,
    MeanBackward1,
    SumBackward0,
    SumBackward1,
    cast,
    div_scalar,
    expand_back,
    mul_scalar,
)
from .indexing import ScatterBackward0, flip, scatter_into_zeros
from .piecewise import masked_fill, maximum, minimum, where
from .promotion import float_values
from .recording import record
from .shape import cat, normalize_dim


def numpy_names(op, dim, keepdim, axis, keepdims=None):
    """(dim, keepdim), where numpy's names for them were used: axis= and keepdims= (torch takes
    both; giving a dim both ways is an error)."""
    if axis is not None:
        if dim is not None:
            raise TypeError(f"{op}() got an unexpected keyword argument 'axis'")
        dim = axis
    if keepdims is not None:
        if keepdim:
            raise TypeError(f"{op}() got an unexpected keyword argument 'keepdims'")
        keepdim = keepdims
    return dim, keepdim


def require_dim(op, dim):
    """PyTorch's error for an operation called without its dim (which numpy's axis= may give)."""
    if dim is None:
        raise TypeError(f'{op}() missing 1 required positional arguments: "dim"')


def _in_dtype(self, dtype):
    """self's values in `dtype` (the dtype= of sum, mean, cumsum...)."""
    return self._data.astype(dtypes.to_numpy(dtype))


def _to_input_dtype(g, dtype):
    """The gradient in the input's dtype where dtype= changed it (PyTorch's engine casts it)."""
    return g if g._data.dtype == dtype else cast(g, dtype)


def _normalize_dims(dim, ndim):
    """dim (int, tuple or None) as a sorted tuple of non-negative dims, or None for 'all'."""
    if dim is None:
        return None
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return tuple(sorted(normalize_dim(d, ndim) for d in dims))


def _unsqueeze_dims(g, dims):
    """Put back the dims a reduction without keepdim removed (ascending, so each lands in place)."""
    for d in dims:
        g = g.unsqueeze(d)
    return g


class MaxBackward1(Node):
    """out = max(self):  d self = g shared evenly among the elements equal to the max."""

    __slots__ = ()

    def apply(self, g):
        return (_evenly_distribute(g, self.saved("self"), self.saved("result")),)


class MinBackward1(MaxBackward1):
    """out = min(self):  d self = g shared evenly among the elements equal to the min."""

    __slots__ = ()


def _evenly_distribute(g, x, value):
    """zeros with g / count where x equals value (NaN counts as equal to a NaN result)."""
    ties = np.isnan(x._data) if np.isnan(value._data) else x._data == value._data
    zeros = Tensor._make(np.zeros_like(x._data))
    return masked_fill(zeros, Tensor._make(ties), g / Tensor._make(ties.sum()))


class MaxBackward0(Node):
    """(values, indices) = max(self, dim):  d self = g at the indices, 0 elsewhere."""

    __slots__ = ()

    def apply(self, g):
        s = self._saved
        dim, indices = s["dim"], self.saved("indices")
        if not s["keepdim"]:
            g, indices = g.unsqueeze(dim), indices.unsqueeze(dim)
        return (scatter_into_zeros(g, s["self_sym_sizes"], dim, indices, ScatterBackward0),)


class MinBackward0(MaxBackward0):
    """(values, indices) = min(self, dim):  d self = g at the indices, 0 elsewhere."""

    __slots__ = ()


class ProdBackward0(Node):
    """out = prod(self):  d self = g * out / self (the product of the other elements)."""

    __slots__ = ()

    def apply(self, g):
        x = self.saved("self")
        if x._data.ndim == 0:
            return (g,)
        return (_prod_backward(g, x, self.saved("result"), None),)


class ProdBackward1(Node):
    """out = prod(self, dim):  d self = g * out / self (the product of the others along dim)."""

    __slots__ = ()

    def apply(self, g):
        s, x, result = self._saved, self.saved("self"), self.saved("result")
        if x._data.ndim == 0:
            return (g,)
        d = normalize_dim(s["dim"], x._data.ndim)
        if not s["keepdim"]:
            g, result = g.unsqueeze(d), result.unsqueeze(d)
        return (_prod_backward(g, x, result, d),)


def _prod_backward(g, x, result, dim):
    """g * the product of the other elements (along dim, or of all for None): g * out / self."""
    if not np.any(x._data == 0):
        return g * (result / x)
    # out / self would be 0 / 0: multiply the other elements, one position at a time
    flat = x.reshape(-1) if dim is None else x
    d = 0 if dim is None else dim
    others = []
    for i in range(flat._data.shape[d]):
        alone = np.zeros([n if a == d else 1 for a, n in enumerate(flat._data.shape)], bool)
        alone[(0,) * d + (i,)] = True
        others.append(prod(masked_fill(flat, Tensor._make(alone), 1), d, keepdim=True))
    return g * cat(others, d).reshape(x._data.shape)


class VarBackward0(Node):
    """out = var(self, dim):  d self = g * 2 * (self - mean(self, dim)) / (N - correction)."""

    __slots__ = ()

    def apply(self, g):
        return (_var_backward(g, self.saved("self"), self._saved),)


class StdBackward0(Node):
    """out = sqrt(var(self, dim)):  d self = var's backward of g / (2 * out), 0 where out = 0."""

    __slots__ = ()

    def apply(self, g):
        return (_std_backward(g, self.saved("self"), self.saved("result"), self._saved),)


class VarMeanBackward0(Node):
    """(var, mean) = var_mean(self, dim):  d self = var's backward of g_var + mean's of g_mean."""

    __slots__ = ()

    def apply(self, g_var=None, g_mean=None):
        x = self.saved("self")
        g = None if g_var is None else _var_backward(g_var, x, self._saved)
        return (_plus_mean_backward(g, g_mean, x, self._saved),)


class StdMeanBackward0(Node):
    """(std, mean) = std_mean(self, dim):  d self = std's backward of g_std + mean's of g_mean."""

    __slots__ = ()

    def apply(self, g_std=None, g_mean=None):
        x = self.saved("self")
        g = None if g_std is None else _std_backward(g_std, x, self.saved("result0"), self._saved)
        return (_plus_mean_backward(g, g_mean, x, self._saved),)


def _plus_mean_backward(g, g_mean, x, saved):
    """g plus mean's backward of g_mean (either may be None), as PyTorch's var_mean_backward."""
    if g_mean is None:
        return g
    dims = _normalize_dims(saved["dim"], x._data.ndim)
    count = x._data.size // (g_mean._data.size or 1)
    g_self = div_scalar(expand_back(g_mean, dims, saved["keepdim"], x._data.shape), count)
    return g_self if g is None else g + g_self


def _std_backward(g, x, result, saved):
    """var's backward of g / (2 * out), 0 where out = 0."""
    g_var = masked_fill(g / mul_scalar(result, 2), result == 0, 0)
    return _var_backward(g_var, x, saved)


def _var_backward(g, x, saved):
    """2 / (N - correction) * g * (self - mean), as PyTorch writes it (so create_graph agrees)."""
    dim, correction = saved["dim"], saved["correction"]
    correction = 1 if correction is None else correction
    if x._data.ndim == 0 or dim is None:
        dof = x._data.size - correction
        if dof <= 0:  # 2 / 0: infinite, and NaN where self equals its mean
            return g * where(x == x.mean(), math.nan, math.inf)
        return mul_scalar(g, 2.0 / dof) * (x - x.mean())
    dims = _normalize_dims(dim, x._data.ndim)
    if not saved["keepdim"] and x._data.ndim > 1:
        g = _unsqueeze_dims(g, dims)
    dof = math.prod(x._data.shape[d] for d in dims) - correction
    return mul_scalar(g, 2.0 / dof if dof else math.inf) * (x - x.mean(dim, keepdim=True))


class LogsumexpBackward0(Node):
    """out = log(sum(exp(self), dim)):  d self = g * exp(self - out), the softmax of self."""

    __slots__ = ()

    def apply(self, g):
        s, x, result = self._saved, self.saved("self"), self.saved("result")
        if not s["keepdim"] and x._data.ndim:
            dims = _normalize_dims(s["dim"], x._data.ndim)
            g, result = _unsqueeze_dims(g, dims), _unsqueeze_dims(result, dims)
        return (g * (x - result).exp(),)


def sum(self, dim=None, keepdim=False, dtype=None, axis=None, keepdims=None):
    """Sum of all elements, or over `dim` (an int or a tuple), in `dtype` if given.

    backward: g broadcast back (and cast back to self's dtype).
    """
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names("sum", dim, keepdim, axis, keepdims)
    dims = _normalize_dims(dim, self._data.ndim)
    x = self._data if dtype is None else _in_dtype(self, dtype)
    # (np.add.reduce, which np.sum calls: an overflow's warning then names this module)
    data = np.asarray(np.add.reduce(x, axis=dims, keepdims=keepdim))
    changed = None if dtype is None else self._data.dtype  # the gradient is cast back to it
    if dims is None:
        saved = {"self_sym_sizes": self._data.shape}
        return record(SumBackward0, data, (self,), saved, args=changed)
    saved = {"dim": _as_given(dim), "keepdim": keepdim, "self_sym_sizes": self._data.shape}
    return record(SumBackward1, data, (self,), saved, args=(dims, changed))


def mean(self, dim=None, keepdim=False, dtype=None, axis=None, keepdims=None):
    """Mean of all elements, or over `dim`, in `dtype` if given.

    backward: g / (number averaged), broadcast back (and cast back to self's dtype).
    """
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names("mean", dim, keepdim, axis, keepdims)
    x = self._data if dtype is None else _in_dtype(self, dtype)
    if x.dtype.kind != "f":
        raise RuntimeError(
            f"mean(): could not infer output dtype. {'Input' if dtype is None else 'Optional'} "
            "dtype must be either a floating point or complex dtype. Got: "
            f"{SCALAR_TYPE_NAMES[x.dtype.name]}"
        )
    dims = _normalize_dims(dim, self._data.ndim)
    data = np.asarray(np.mean(x, axis=dims, keepdims=keepdim), dtype=x.dtype)
    saved = {"self_sym_numel": self._data.size, "self_sym_sizes": self._data.shape}
    changed = None if dtype is None else self._data.dtype  # the gradient is cast back to it
    if dims is None:
        return record(MeanBackward0, data, (self,), saved, args=changed)
    saved.update(dim=_as_given(dim), keepdim=keepdim)
    return record(MeanBackward1, data, (self,), saved, args=(dims, changed))


def max(self, dim=None, keepdim=False, axis=None, keepdims=None):
    """The largest element; with `dim`, (values, indices) along it; with a tensor, maximum().

    backward: g to the largest element (shared among ties when there is no dim).
    """
    return _extreme("max", self, dim, keepdim, axis, keepdims)


def min(self, dim=None, keepdim=False, axis=None, keepdims=None):
    """The smallest element; with `dim`, (values, indices) along it; with a tensor, minimum().

    backward: g to the smallest element (shared among ties when there is no dim).
    """
    return _extreme("min", self, dim, keepdim, axis, keepdims)


# name: numpy's reduction and arg-reduction, the result type, the op for a tensor `dim`, and the
# nodes without and with a dim
_EXTREMES = {
    "max": (np.max, np.argmax, return_types.max, maximum, MaxBackward1, MaxBackward0),
    "min": (np.min, np.argmin, return_types.min, minimum, MinBackward1, MinBackward0),
}


def _extreme(name, self, dim, keepdim, axis, keepdims):
    numpy_fn, numpy_arg, result_type, elementwise, whole, along_dim = _EXTREMES[name]
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(name, dim, keepdim, axis, keepdims)
    if isinstance(dim, Tensor):
        return elementwise(self, dim)
    if dim is None:
        _check_not_empty(self, name, "Specify the reduction dim with the 'dim' argument.")
        data = np.asarray(numpy_fn(self._data))
        return record(whole, data, (self,), {"self": self}, save_result_as="result")
    d = _reduced_dim(self, dim, name)
    indices = Tensor._make(np.asarray(numpy_arg(self._data, axis=d, keepdims=keepdim)))
    data = numpy_fn(self._data, axis=d, keepdims=keepdim)
    return _values_and_indices(result_type, along_dim, self, data, indices, dim, keepdim)


def _values_and_indices(result_type, node_type, self, data, indices, dim, keepdim):
    """(values, indices) picked along dim; the values recorded by a node that sends g back to
    the indices (MaxBackward0's saved values)."""
    saved = {"dim": dim, "indices": indices, "keepdim": keepdim, "self_sym_sizes": self._data.shape}
    return result_type(record(node_type, data, (self,), saved), indices)


def _check_not_empty(self, name, advice=""):
    if self._data.size == 0:
        message = f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
        if advice:
            raise RuntimeError(f"{message} {advice}")
        raise IndexError(message)


def _reduced_dim(self, dim, name):
    """dim as a non-negative index, after PyTorch's check that it is not empty."""
    d = normalize_dim(dim, self._data.ndim)
    if self._data.ndim and self._data.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    return d


def argmax(self, dim=None, keepdim=False, axis=None, keepdims=None):
    """The index of the largest element (of the flattened tensor when dim is None); not differentiable."""
    return _arg_extreme("argmax", self, dim, keepdim, axis, keepdims)


def argmin(self, dim=None, keepdim=False, axis=None, keepdims=None):
    """The index of the smallest element (of the flattened tensor when dim is None)."""
    return _arg_extreme("argmin", self, dim, keepdim, axis, keepdims)


def _arg_extreme(name, self, dim, keepdim, axis, keepdims):
    numpy_arg = np.argmax if name == "argmax" else np.argmin
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(name, dim, keepdim, axis, keepdims)
    if dim is None:
        _check_not_empty(self, name)
        index = numpy_arg(self._data)
        return Tensor._make(np.full((1,) * self._data.ndim if keepdim else (), index))
    d = _reduced_dim(self, dim, name)
    return Tensor._make(np.asarray(numpy_arg(self._data, axis=d, keepdims=keepdim)))


def prod(self, dim=None, keepdim=False, axis=None, keepdims=None):
    """The product of all elements, or along `dim`; backward: g * out / self (with zeros too)."""
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names("prod", dim, keepdim, axis, keepdims)
    d = None if dim is None else normalize_dim(dim, self._data.ndim)
    dtype = np.int64 if self._data.dtype.kind in "biu" else None  # PyTorch's for integers
    data = np.asarray(np.prod(self._data, d, dtype, keepdims=keepdim and dim is not None))
    if dim is None:
        return record(ProdBackward0, data, (self,), {"self": self}, save_result_as="result")
    saved = {"dim": dim, "keepdim": keepdim, "self": self}
    return record(ProdBackward1, data, (self,), saved, save_result_as="result")


def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None):
    """sum((self - mean)**2) / (N - correction) over `dim`: correction 1 unless unbiased=False.

    backward: g * 2 * (self - mean) / (N - correction).
    """
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names("var", dim, keepdim, axis, keepdims)
    return _variance(self, dim, unbiased, keepdim, correction, "var")


def var_mean(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(var, mean) over dim, in one call, recorded by one VarMeanBackward0 node (two outputs)."""
    return _variance(self, dim, unbiased, keepdim, correction, "var_mean")


def std_mean(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean) over dim, in one call, recorded by one StdMeanBackward0 node (two outputs)."""
    return _variance(self, dim, unbiased, keepdim, correction, "std_mean")


def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None):
    """sqrt(var(self, dim, ...)): the standard deviation; backward: var's, times g / (2 * out)."""
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names("std", dim, keepdim, axis, keepdims)
    return _variance(self, dim, unbiased, keepdim, correction, "std")


def _variance(self, dim, unbiased, keepdim, correction, name):
    if isinstance(dim, bool):  # std(False): PyTorch's std(unbiased) form
        dim, unbiased = None, dim
    if self._data.dtype.kind != "f":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    # what the node saves: the correction as given, or as unbiased / a dim implies it
    if correction is None and (unbiased is not None or dim is not None):
        correction = 0 if unbiased is False else 1
    dims = _normalize_dims(dim, self._data.ndim)
    x = self._data
    count = x.size if dims is None else math.prod(x.shape[d] for d in dims)
    dof = count - (1 if correction is None else correction)
    if dof <= 0:
        warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel).",
            UserWarning,
            stacklevel=3,
        )
    means = x.mean(axis=dims, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.sum((x - means) ** 2, axis=dims, keepdims=keepdim) / np.maximum(dof, 0)
    data = np.asarray(np.sqrt(values) if name.startswith("std") else values, dtype=x.dtype)
    saved = {
        "correction": correction,
        "dim": None if dim is None else _as_given(dim),
        "keepdim": keepdim,
        "self": self,
    }
    if name == "std":
        return record(StdBackward0, data, (self,), saved, save_result_as="result")
    if name == "var":
        return record(VarBackward0, data, (self,), saved)
    means = np.asarray(means if keepdim else np.squeeze(means, dims), dtype=x.dtype)
    if name == "var_mean":
        first = record(VarMeanBackward0, data, (self,), saved)
    else:
        first = record(StdMeanBackward0, data, (self,), saved, save_result_as="result0")
    node = first.grad_fn
    return first, Tensor._make(means) if node is None else Tensor._make(means, True, node, 1)


def logsumexp(self, dim=None, keepdim=False, axis=None, keepdims=None):
    """log(sum(exp(self))) over dim, computed without overflow; backward: g * softmax(self)."""
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names("logsumexp", dim, keepdim, axis, keepdims)
    require_dim("logsumexp", dim)
    dims = _normalize_dims(dim, self._data.ndim)
    x = float_values(self)
    shift = np.max(x, axis=dims, keepdims=True)
    shift = np.where(np.isinf(shift), 0, shift)  # all -inf (or an inf): nothing to shift
    summed = np.sum(np.exp(x - shift), axis=dims, keepdims=True)
    data = np.log(summed) + shift
    if not keepdim:
        data = np.squeeze(data, dims)
    data = np.asarray(data, dtype=x.dtype)
    saved = {"dim": _as_given(dim), "keepdim": keepdim, "self": self}
    return record(LogsumexpBackward0, data, (self,), saved, save_result_as="result")


def all(self, dim=None, keepdim=False, axis=None, keepdims=None):
    """True where every element (over dim) is nonzero: a bool tensor (uint8 for uint8)."""
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names("all", dim, keepdim, axis, keepdims)
    return _logical(self, dim, keepdim, np.all)


def any(self, dim=None, keepdim=False, axis=None, keepdims=None):
    """True where some element (over dim) is nonzero: a bool tensor (uint8 for uint8)."""
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names("any", dim, keepdim, axis, keepdims)
    return _logical(self, dim, keepdim, np.any)


def _logical(self, dim, keepdim, numpy_fn):
    dims = _normalize_dims(dim, self._data.ndim)
    data = np.asarray(numpy_fn(self._data, axis=dims, keepdims=keepdim))
    return Tensor._make(data.astype(np.uint8) if self._data.dtype == np.uint8 else data)


def _as_given(dim):
    """PyTorch saves `dim` as a tuple, as the user wrote it (negative dims stay negative)."""
    return (dim,) if isinstance(dim, int) else tuple(dim)


class LinalgVectorNormBackward0(Node):
    """out = ||self||_ord over dim:  d self = g * sign(self) * |self|**(ord-1) / out**(ord-1).

    For ord=2 that is g * self / out; for ord=1, g * sign(self); for ord=inf, g * sign(self)
    shared among the entries whose |value| is the largest. Where out is 0 the gradient is 0.
    """

    __slots__ = ()
    order_name = "ord"  # what the node calls p

    def apply(self, g):
        s = self._saved
        x, result = self.saved("self"), self.saved("result")
        dims, order = self.args, s[self.order_name]
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


class NormBackward1(LinalgVectorNormBackward0):
    """out = ||self||_p over dim, as at::norm(self, p, dim, keepdim) (the norm ATen's own
    composites call, such as pairwise_distance): the gradient of LinalgVectorNormBackward0."""

    __slots__ = ()
    order_name = "p"


def _vector_norm(self, order, dims, keepdim):
    """The p-norm values of self over dims, in self's dtype (PyTorch's checks first)."""
    if isinstance(order, str) or not order > 0:
        raise ValueError(f"norm: mini_autograd supports p > 0, inf and 'fro', got p={order!r}")
    if self._data.dtype.kind != "f":
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{scalar_type_name(self)}"
        )
    magnitude = np.abs(self._data)
    if order == np.inf:
        values = np.max(magnitude, axis=dims, keepdims=keepdim)
    elif order == 1:
        values = np.sum(magnitude, axis=dims, keepdims=keepdim)
    elif order == 2:
        values = np.sqrt(np.sum(magnitude * magnitude, axis=dims, keepdims=keepdim))
    else:
        values = np.sum(magnitude**order, axis=dims, keepdims=keepdim) ** (1 / order)
    return np.asarray(values, dtype=self._data.dtype)


def norm(self, p="fro", dim=None, keepdim=False):
    """The vector p-norm of all elements, or over `dim` (torch.linalg.vector_norm's node).

    p is 2 (or "fro", the default), 1, inf, or any other number above 0.
    """
    order = 2 if p == "fro" else p
    dims = _normalize_dims(dim, self._data.ndim)
    data = _vector_norm(self, order, dims, keepdim)
    saved = {
        "dim": None if dim is None else _as_given(dim),
        "keepdim": keepdim,
        "ord": order,
        "self": self,
    }
    return record(LinalgVectorNormBackward0, data, (self,), saved, "result", args=dims)


def norm_p(self, p, dim, keepdim=False):
    """||self||_p over dim, recorded as at::norm records it (NormBackward1): for the functions
    that PyTorch writes in C++ on top of it."""
    dims = _normalize_dims(dim, self._data.ndim)
    data = _vector_norm(self, p, dims, keepdim)
    saved = {"dim": dims, "keepdim": keepdim, "p": float(p), "self": self}
    return record(NormBackward1, data, (self,), saved, "result", args=dims)


def count_nonzero(self, dim=None, axis=None):
    """The number of elements that are not 0, in all or over `dim` (an int or a tuple): int64."""
    if axis is not None:
        dim, _ = numpy_names("count_nonzero", dim, False, axis)
    dims = _normalize_dims(dim, self._data.ndim)
    return Tensor._make(np.asarray(np.count_nonzero(self._data, axis=dims), dtype=np.int64))


# --- amax and amin: the gradient is shared among the elements equal to the extreme -------------
class AmaxBackward0(Node):
    """out = amax(self, dim):  d self = g / count where self equals out, 0 elsewhere."""

    __slots__ = ()

    def apply(self, g):
        x, result, dims = self.saved("self"), self.saved("result"), self.args
        if not self._saved["keepdim"]:
            g, result = _unsqueeze_dims(g, dims), _unsqueeze_dims(result, dims)
        mask = x == result
        return ((g / mask.sum(dims, keepdim=True)) * mask,)


class AminBackward0(AmaxBackward0):
    """out = amin(self, dim):  d self = g / count where self equals out, 0 elsewhere."""

    __slots__ = ()


def amax(self, dim=(), keepdim=False, axis=None, keepdims=None):
    """The largest value over `dim` (an int or a tuple; () for all); backward: g shared among ties."""
    return _amax_amin(self, dim, keepdim, axis, keepdims, "amax", np.max, AmaxBackward0)


def amin(self, dim=(), keepdim=False, axis=None, keepdims=None):
    """The smallest value over `dim` (an int or a tuple; () for all); backward: g shared among ties."""
    return _amax_amin(self, dim, keepdim, axis, keepdims, "amin", np.min, AminBackward0)


def _amax_amin(self, dim, keepdim, axis, keepdims, name, numpy_fn, node_type):
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(name, None if dim == () else dim, keepdim, axis, keepdims)
    given = _as_given(() if dim is None else dim)
    if not given:
        _check_not_empty(self, name, "Specify the reduction dim with the 'dim' argument.")
    dims = tuple(sorted(_reduced_dim(self, d, name) for d in given)) or tuple(range(self.ndim))
    data = np.asarray(numpy_fn(self._data, axis=dims, keepdims=keepdim))
    saved = {"dim": given, "keepdim": keepdim, "self": self}
    return record(node_type, data, (self,), saved, save_result_as="result", args=dims)


# --- cumsum and cumprod: running sums and products along a dim --------------------------------
def _reversed_cumsum(g, dim):
    """Sums from the end backwards along dim: flip, cumsum, flip (PyTorch's formula)."""
    return flip(cumsum(flip(g, dim), dim), dim)


class CumsumBackward0(Node):
    """out = cumsum(self, dim):  d self = g summed from the end backwards along dim."""

    __slots__ = ()

    def apply(self, g):
        g, dim = _to_input_dtype(g, self.args), self._saved["dim"]
        if g._data.size <= 1 or g._data.shape[dim] == 1:
            return (g,)
        return (_reversed_cumsum(g, dim),)


class CumprodBackward0(Node):
    """out = cumprod(self, dim):  d self = reversed_cumsum(out * g, dim) / self (without zeros)."""

    __slots__ = ()

    def apply(self, g):
        x, dim = self.saved("self"), self._saved["dim"]
        g = _to_input_dtype(g, x._data.dtype)
        if x._data.size <= 1 or x._data.shape[dim] == 1:
            return (g,)
        if np.any(x._data == 0):
            return (_cumprod_backward_with_zeros(g, x, normalize_dim(dim, x._data.ndim)),)
        return (_reversed_cumsum(self.saved("result") * g, dim) / x,)


def _cumprod_backward_with_zeros(g, x, dim):
    """d self[k] = sum over j >= k of g[j] * (the product of self[:j + 1] without self[k]);
    out / self would be 0 / 0, so each k multiplies the other elements itself."""
    n, pieces = x._data.shape[dim], []
    for k in range(n):
        at_k = np.zeros([n if a == dim else 1 for a in range(x._data.ndim)], bool)
        at_k[(0,) * dim + (k,)] = True
        before_k = np.cumsum(at_k, axis=dim) == 0  # j < k: out[j] does not depend on self[k]
        others = cumprod(masked_fill(x, Tensor._make(at_k), 1), dim)
        pieces.append(masked_fill(g * others, Tensor._make(before_k), 0).sum(dim, keepdim=True))
    return cat(pieces, dim)


def cumsum(self, dim=None, dtype=None, axis=None):
    """Running sums along dim: out[i] = self[0] + ... + self[i] (integers give int64).

    backward: g summed from the end: d self[i] = g[i] + ... + g[n - 1].
    """
    if axis is not None:
        dim, _ = numpy_names("cumsum", dim, False, axis)
    return _running(self, dim, dtype, "cumsum", np.cumsum, CumsumBackward0)


def cumprod(self, dim=None, dtype=None, axis=None):
    """Running products along dim: out[i] = self[0] * ... * self[i] (integers give int64).

    backward: d self[k] = sum over j >= k of g[j] * out[j] / self[k] (computed apart with zeros).
    """
    if axis is not None:
        dim, _ = numpy_names("cumprod", dim, False, axis)
    return _running(self, dim, dtype, "cumprod", np.cumprod, CumprodBackward0)


def _running(self, dim, dtype, name, numpy_fn, node_type):
    require_dim(name, dim)
    d = normalize_dim(dim, self._data.ndim)
    x = self._data if dtype is None else _in_dtype(self, dtype)
    wide = np.int64 if x.dtype.kind in "biu" else None  # PyTorch's for integers
    data = numpy_fn(x, axis=d, dtype=wide) if x.ndim else x.astype(wide or x.dtype)
    if node_type is CumsumBackward0:
        return record(node_type, data, (self,), {"dim": dim}, args=self._data.dtype)
    saved = {"dim": dim, "self": self}
    return record(node_type, data, (self,), saved, save_result_as="result")


# --- sort, topk, kthvalue: values chosen by position; the gradient goes back to each position --
class SortBackward0(Node):
    """(values, indices) = sort(self, dim):  d self = zeros with g put back at the indices."""

    __slots__ = ()

    def apply(self, g):
        s = self._saved
        if not s["self_sym_sizes"]:
            return (g,)
        dim, indices = s["dim"], self.saved("indices")
        return (scatter_into_zeros(g, s["self_sym_sizes"], dim, indices, ScatterBackward0),)


class TopkBackward0(SortBackward0):
    """(values, indices) = topk(self, k, dim):  d self = zeros with g put back at the indices."""

    __slots__ = ()


class KthvalueBackward0(MaxBackward0):
    """(values, indices) = kthvalue(self, k, dim):  d self = g at the index, 0 elsewhere."""

    __slots__ = ()


def _order(x, d, descending):
    """Indices that sort x along d, ties in their first order; NaN counts as the largest."""
    if not descending:
        return np.argsort(x, axis=d, kind="stable")
    key = -x.astype(np.int8) if x.dtype == np.bool_ else -x
    return np.lexsort((key, ~np.isnan(x) if x.dtype.kind == "f" else np.ones_like(x)), axis=d)


def sort(self, dim=None, descending=False, stable=False, axis=None):
    """(values, indices): the elements along dim (default -1) in order, and where each was.

    backward: g put back where each value came from.
    """
    if axis is not None:
        dim, _ = numpy_names("sort", dim, False, axis)
    dim = -1 if dim is None else dim
    return _select_positions(self, dim, _order, descending, SortBackward0, return_types.sort)


def topk(self, k, dim=None, largest=True, sorted=True, axis=None):
    """(values, indices) of the k largest (or smallest) elements along dim (default -1).

    backward: g put back where each value came from.
    """
    if axis is not None:
        dim, _ = numpy_names("topk", dim, False, axis)
    dim = -1 if dim is None else dim
    d = normalize_dim(dim, self._data.ndim)
    size = self._data.shape[d] if self._data.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")

    def first_k(x, axis, descending):
        return np.take(_order(x, axis, descending), np.arange(k), axis=axis)

    return _select_positions(self, dim, first_k, largest, TopkBackward0, return_types.topk)


def _select_positions(self, dim, order, descending, node_type, result_type):
    d = normalize_dim(dim, self._data.ndim)
    if self._data.ndim == 0:
        indices = np.zeros((), np.int64)
        data = self._data.copy()
    else:
        indices = order(self._data, d, descending)
        data = np.take_along_axis(self._data, indices, axis=d)
    indices = Tensor._make(indices)
    saved = {"dim": dim, "indices": indices, "self_sym_sizes": self._data.shape}
    return result_type(record(node_type, data, (self,), saved), indices)


def kthvalue(self, k, dim=None, keepdim=False, axis=None, keepdims=None):
    """(values, indices): the k-th smallest element along dim (default -1), k counted from 1.

    backward: g to the element chosen.
    """
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names("kthvalue", dim, keepdim, axis, keepdims)
    dim = -1 if dim is None else dim
    d = normalize_dim(dim, self._data.ndim)
    size = self._data.shape[d] if self._data.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if self._data.ndim == 0:
        indices = Tensor._make(np.zeros((), np.int64))
        data = self._data.copy()
    else:
        index = np.take(_order(self._data, d, False), [k - 1], axis=d)
        data = np.take_along_axis(self._data, index, axis=d)
        if not keepdim:
            index, data = np.squeeze(index, d), np.squeeze(data, d)
        indices = Tensor._make(index)
    return _values_and_indices(
        return_types.kthvalue, KthvalueBackward0, self, data, indices, dim, keepdim
    )


def argsort(self, dim=-1, descending=False, stable=False):
    """The indices that sort self along dim (sort's indices; not differentiable)."""
    if self._data.ndim == 0:
        return Tensor._make(np.zeros((), np.int64))
    return Tensor._make(_order(self._data, normalize_dim(dim, self._data.ndim), descending))
