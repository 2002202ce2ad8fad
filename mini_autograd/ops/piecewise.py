"""Piecewise functions: where, clamp, maximum and minimum, masked_fill.

The gradient flows to whichever value was chosen, and is 0 for the rest.
"""

import numpy as np

from ..core.errors import CPP_TYPE_NAMES, scalar_type_name
from ..core.node import Node
from ..core.tensor import Tensor
from .broadcasting import broadcast_shape, summed_to_inputs
from .derivatives import (
    ClampBackward1,
    ClampMaxBackward0,
    ClampMaxBackward1,
    ClampMinBackward0,
    ClampMinBackward1,
    MaskedFillBackward0,
    MaskedFillBackward1,
    MaximumBackward0,
    MinimumBackward0,
    WhereBackward0,
    inside,
)
from .promotion import as_tensor, result_type
from .recording import check_tensor, record


class ClampBackward0(Node):
    """out = min(max(self, min), max), tensors:  g goes to self, min or max, whichever is out.

    d self = g where min <= self <= max; d min = g where self < min (and min < max);
    d max = g where self > max (or max < min, when max wins over min).
    """

    __slots__ = ()

    def apply(self, g):
        x, low, high = self.saved("self"), self.saved("min"), self.saved("max")
        to_low = to_high = None
        if self.needs_input_grad(1):
            below = x < low
            to_low = below if high is None else Tensor._make(below._data & (low < high)._data)
        if self.needs_input_grad(2):
            above = x > high
            to_high = above if low is None else Tensor._make(above._data | (high < low)._data)
        return summed_to_inputs(
            self,
            where(inside(x, low, high), g, 0) if self.needs_input_grad(0) else None,
            None if to_low is None else where(to_low, g, 0),
            None if to_high is None else where(to_high, g, 0),
        )


def where(condition, input=None, other=None):
    """input where condition is True, else other (numbers allowed); backward: g to the one chosen.

    where(condition) alone gives the indices where it is True, one tensor per dimension.
    """
    if input is None and other is None:
        return tuple(Tensor._make(i) for i in np.nonzero(condition._data))
    if condition._data.dtype != np.bool_:
        raise RuntimeError(
            "where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{scalar_type_name(condition)}"
        )
    dtype = result_type(input, other)
    input, other = as_tensor(input, dtype), as_tensor(other, dtype)
    broadcast_shape(condition, input, other)
    data = np.where(condition._data, input._data.astype(dtype), other._data.astype(dtype))
    return record(WhereBackward0, data, (input, other), {"condition": condition}, broadcasts=True)


def where_method(self, condition, other):
    """self.where(condition, other) is where(condition, self, other)."""
    return where(condition, self, other)


def clamp(self, min=None, max=None):
    """min(max(self, min), max), bounds numbers or tensors; backward: g where inside, else 0."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp(self, {"max": max, "min": min}, ClampBackward0)
    return _clamp(self, {"max": max, "min": min}, ClampBackward1)


clip = clamp


def clamp_min(self, min):
    """max(self, min), elementwise; backward: g where self >= min, else 0 (to min if a tensor)."""
    node_type = ClampMinBackward1 if isinstance(min, Tensor) else ClampMinBackward0
    return _clamp(self, {"min": min}, node_type)


def clamp_max(self, max):
    """min(self, max), elementwise; backward: g where self <= max, else 0 (to max if a tensor)."""
    node_type = ClampMaxBackward1 if isinstance(max, Tensor) else ClampMaxBackward0
    return _clamp(self, {"max": max}, node_type)


def _clamp(self, bounds, node_type):
    low, high = bounds.get("min"), bounds.get("max")
    tensors = [b for b in (low, high) if isinstance(b, Tensor)]
    broadcast_shape(self, *tensors)
    dtype = result_type(self, *[b for b in (low, high) if b is not None])
    data = self._data.astype(dtype)
    if low is not None:
        data = np.maximum(data, as_tensor(low, dtype)._data.astype(dtype))
    if high is not None:
        data = np.minimum(data, as_tensor(high, dtype)._data.astype(dtype))
    if not tensors:  # numbers are saved as they are; no edges for them
        return record(node_type, data, (self,), {**bounds, "self": self})
    inputs = (self, low, high) if node_type is ClampBackward0 else (self, *tensors)
    return record(node_type, data, inputs, {**bounds, "self": self}, broadcasts=True)


def maximum(self, other):
    """The larger of self and other, elementwise (NaN wins); backward: g to the larger."""
    return _extreme(self, other, "maximum", np.maximum, MaximumBackward0)


def minimum(self, other):
    """The smaller of self and other, elementwise (NaN wins); backward: g to the smaller."""
    return _extreme(self, other, "minimum", np.minimum, MinimumBackward0)


def _extreme(self, other, name, numpy_fn, node_type):
    check_tensor(other, name, "other", 2)
    broadcast_shape(self, other)
    dtype = result_type(self, other)
    data = numpy_fn(self._data.astype(dtype), other._data.astype(dtype))
    saved = {"other": other, "self": self}
    return record(node_type, data, (self, other), saved, broadcasts=True)


def masked_fill(self, mask, value):
    """self with `value` (a number or 0-d tensor) where mask is True; backward: g, 0 where filled."""
    if mask._data.dtype != np.bool_:
        raise RuntimeError(
            "masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{CPP_TYPE_NAMES[mask._data.dtype.name]}"
        )
    if isinstance(value, Tensor) and value._data.ndim:
        raise RuntimeError(
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value._data.ndim} dimension(s)."
        )
    broadcast_shape(mask, self)
    fill = value._data if isinstance(value, Tensor) else value
    data = np.where(mask._data, np.asarray(fill).astype(self._data.dtype), self._data)
    if not isinstance(value, Tensor):
        return record(MaskedFillBackward0, data, (self,), {"mask": mask}, broadcasts=True)
    return record(MaskedFillBackward1, data, (self, value), {"mask": mask}, broadcasts=True)
