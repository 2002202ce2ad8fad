"""Elementwise functions written out: atan2, leaky_relu, rounding, and copies and casts.

exp, log, sin, tanh, relu and the other elementwise operations of one tensor are one line each
in the table of derivatives.py, which makes their functions, nodes and in-place forms.
"""

import numpy as np

from ..core import dtypes
from ..core.device import check as check_device
from ..core.errors import SCALAR_TYPE_NAMES
from ..core.node import Node
from ..core.tensor import Tensor
from ..memory_format import contiguous_format, is_laid_out, laid_out, preserve_format
from .broadcasting import broadcasting, summed_to_inputs
from .derivatives import (
    CeilBackward0,
    CloneBackward0,
    FloorBackward0,
    LeakyReluBackward0,
    RoundBackward0,
    RoundBackward1,
    ThresholdBackward0,
    ThresholdBackward1,
    cast,
    leaky_relu_backward,
    reciprocal,
)
from .promotion import promote
from .recording import check_tensor, record


class Atan2Backward0(Node):
    """out = atan2(self, other):  d self = g * other / r2,  d other = g * -self / r2,
    r2 = self**2 + other**2 (and 1 / r2 taken as 0 at the origin)."""

    __slots__ = ()

    def apply(self, g):
        x, y = self.saved("self"), self.saved("other")
        r2 = x * x + y * y
        recip = reciprocal(r2).masked_fill(Tensor._make(r2._data == 0), 0)
        return summed_to_inputs(
            self,
            g * y * recip if self.needs_input_grad(0) else None,
            g * -x * recip if self.needs_input_grad(1) else None,
        )


class LeakyReluBackward1(Node):
    """self = leaky_relu(self) in place:  d self = g where result > 0, else g * negative_slope
    (the result has the input's sign, for a slope >= 0: in place, no slope below 0)."""

    __slots__ = ()

    def apply(self, g):
        slope = self._saved["negative_slope"]
        if slope < 0:
            raise RuntimeError(LEAKY_RELU_NEGATIVE_SLOPE)
        return (leaky_relu_backward(g, self.saved("result"), slope),)


LEAKY_RELU_NEGATIVE_SLOPE = (
    "In-place leakyReLu backward calculation is triggered with a negative slope which is not "
    "supported. This is caused by calling in-place forward function with a negative slope, please "
    "call out-of-place version instead. File an issue at https://github.com/pytorch/pytorch if you "
    "do require supporting in-place leakRelu backward calculation with negative slope"
)


def atan2(self, other):
    """The angle of the point (other, self), in (-pi, pi], broadcasting.

    backward: g * other / (self**2 + other**2) to self, -g * self / (self**2 + other**2) to other.
    """
    check_tensor(other, "atan2", "other", 2)
    other, a, b = promote(self, other)
    if a.dtype.kind != "f":
        a, b = a.astype(dtypes.default_float()), b.astype(dtypes.default_float())
    data = broadcasting(np.arctan2, a, b, self, other)
    saved = {"other": other, "self": self}
    return record(Atan2Backward0, data, (self, other), saved, broadcasts=True)


def leaky_relu(self, negative_slope=0.01):
    """self if self > 0 else negative_slope * self (torch.nn.functional.leaky_relu).

    backward: g where self > 0, else g * negative_slope.
    """
    saved = {"negative_slope": negative_slope, "self": self}
    return record(LeakyReluBackward0, _leaky_relu(self, negative_slope), (self,), saved)


def leaky_relu_from_result(self, negative_slope=0.01):
    """leaky_relu recorded as its in-place form records it (LeakyReluBackward1, which saves the
    result): inplace_elementwise.leaky_relu_ writes it into self."""
    saved = {"negative_slope": negative_slope}
    data = _leaky_relu(self, negative_slope)
    return record(LeakyReluBackward1, data, (self,), saved, save_result_as="result")


def _leaky_relu(self, negative_slope):
    x = self._data
    if x.dtype.kind != "f":
        name = SCALAR_TYPE_NAMES[x.dtype.name]
        raise NotImplementedError(f"\"leaky_relu_cpu\" not implemented for '{name}'")
    return np.where(x > 0, x, x * negative_slope)


def threshold(self, threshold, value):
    """value where self <= threshold, else self (NaN stays NaN).

    backward: g where self > threshold, else 0.
    """
    return _threshold(self, threshold, value, ThresholdBackward0)


def threshold_recorded_in_place(self, threshold, value):
    """threshold recorded as its in-place form records it (ThresholdBackward1, which saves self:
    inplace_elementwise.threshold_ gives it a clone taken before the change)."""
    return _threshold(self, threshold, value, ThresholdBackward1)


def _threshold(self, threshold, value, node_type):
    data = np.where(self._data <= threshold, value, self._data).astype(self._data.dtype)
    return record(node_type, data, (self,), {"self": self, "threshold": threshold})


def square(self):
    """self ** 2, recorded as the power it is (PowBackward0); backward: g * 2 * self."""
    return self**2


def _rounded(node_type, self, fn):
    # integers are already whole: PyTorch returns them unchanged (numpy would give floats)
    if self._data.dtype.kind != "f":
        return Tensor._make(self._data.copy())
    return record(node_type, fn(self._data), (self,), {})


def floor(self):
    """The largest whole number <= self; backward: 0."""
    return _rounded(FloorBackward0, self, np.floor)


def ceil(self):
    """The smallest whole number >= self; backward: 0."""
    return _rounded(CeilBackward0, self, np.ceil)


def round(self, decimals=None):
    """self rounded to `decimals` places, halves to even (0.5 -> 0, 1.5 -> 2); backward: 0."""
    if decimals is None:
        return _rounded(RoundBackward0, self, np.round)
    return _rounded(RoundBackward1, self, lambda x: np.round(x, decimals))


def clone(self, *, memory_format=None):
    """A copy with its own memory, still connected to the graph (laid out as memory_format
    asks; without one, row by row)."""
    data = self._data.copy() if memory_format is None else laid_out(self._data, memory_format)
    return record(CloneBackward0, data, (self,))


def contiguous(self, *, memory_format=contiguous_format):
    """self when its elements already lie in memory_format's order (row by row by default),
    else a clone laid out so."""
    if is_laid_out(self._data, memory_format):
        return self
    if memory_format is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return clone(self, memory_format=memory_format)


def is_contiguous(self, *, memory_format=contiguous_format):
    """True when the elements lie in memory in memory_format's order (row by row by default)."""
    return is_laid_out(self._data, memory_format)


def tensor_type(self, dtype=None, non_blocking=False, **kwargs):
    """x.type(): the name of x's legacy type ('mini_autograd.FloatTensor'). x.type(t): x cast to
    t, a dtype, a legacy type (FloatTensor; Tensor is the default dtype's) or its name
    ('torch.DoubleTensor'); x itself when it already has that dtype, as to() does."""
    if dtype is None:
        return f"mini_autograd.{dtypes.TENSOR_TYPE_NAMES[self._data.dtype.name]}"
    if dtype is Tensor:
        dtype = dtypes.get_default_dtype()
    elif isinstance(dtype, str) and ".cuda." in dtype:
        check_device("cuda")
    np_dtype = dtypes.from_tensor_type(dtype)
    return self if np_dtype == self._data.dtype else cast(self, np_dtype)
