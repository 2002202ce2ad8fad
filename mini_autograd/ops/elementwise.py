"""Elementwise functions: exp log sin cos tanh sigmoid relu sqrt abs, their relatives (exp2 log2
log10 tan asin acos atan atan2 sinh cosh erf), rounding, and copies (the in-place forms, exp_
and the others, are in inplace_elementwise.py)."""

import math

import numpy as np

from .. import dtypes
from ..device import check as check_device
from ..node import Node
from ..tensor import Tensor
from . import backward_functions
from .arithmetic import reciprocal
from .broadcasting import broadcasting, summed_to_inputs
from .recording import SCALAR_TYPE_NAMES, check_tensor, float_values, promote, record
from .scalar import add_scalar, mul_scalar

LN2, LN10 = math.log(2), math.log(10)
TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_erf = np.frompyfunc(math.erf, 1, 1)  # numpy has no erf: math.erf, element by element


class ExpBackward0(Node):
    """out = exp(self):  d self = g * out."""

    __slots__ = ()

    def apply(self, g):
        return (g * self.saved("result"),)


class LogBackward0(Node):
    """out = log(self):  d self = g / self."""

    __slots__ = ()

    def apply(self, g):
        return (g / self.saved("self"),)


class Log1PBackward0(Node):
    """out = log(1 + self):  d self = g / (self + 1)."""

    __slots__ = ()

    def apply(self, g):
        return (g / add_scalar(self.saved("self"), 1),)


class Expm1Backward0(Node):
    """out = exp(self) - 1:  d self = g * (out + 1)."""

    __slots__ = ()

    def apply(self, g):
        return (g * add_scalar(self.saved("result"), 1),)


class SinBackward0(Node):
    """out = sin(self):  d self = g * cos(self)."""

    __slots__ = ()

    def apply(self, g):
        return (g * self.saved("self").cos(),)


class CosBackward0(Node):
    """out = cos(self):  d self = g * -sin(self)."""

    __slots__ = ()

    def apply(self, g):
        return (g * -self.saved("self").sin(),)


class TanBackward0(Node):
    """out = tan(self):  d self = g * (1 + out**2)."""

    __slots__ = ()

    def apply(self, g):
        return (g * add_scalar(self.saved("result") ** 2, 1),)


class AsinBackward0(Node):
    """out = asin(self):  d self = g * rsqrt(1 - self**2)."""

    __slots__ = ()

    def apply(self, g):
        x = self.saved("self")
        return (g * add_scalar(-x * x, 1).rsqrt(),)


class AcosBackward0(Node):
    """out = acos(self):  d self = g * -rsqrt(1 - self**2)."""

    __slots__ = ()

    def apply(self, g):
        x = self.saved("self")
        return (g * -add_scalar(-x * x, 1).rsqrt(),)


class AtanBackward0(Node):
    """out = atan(self):  d self = g / (self**2 + 1)."""

    __slots__ = ()

    def apply(self, g):
        x = self.saved("self")
        return (g / add_scalar(x * x, 1),)


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


class SinhBackward0(Node):
    """out = sinh(self):  d self = g * cosh(self)."""

    __slots__ = ()

    def apply(self, g):
        return (g * self.saved("self").cosh(),)


class CoshBackward0(Node):
    """out = cosh(self):  d self = g * sinh(self)."""

    __slots__ = ()

    def apply(self, g):
        return (g * self.saved("self").sinh(),)


class Log2Backward0(Node):
    """out = log2(self):  d self = g / (self * ln 2)."""

    __slots__ = ()

    def apply(self, g):
        return (g / mul_scalar(self.saved("self"), LN2),)


class Log10Backward0(Node):
    """out = log10(self):  d self = g / (self * ln 10)."""

    __slots__ = ()

    def apply(self, g):
        return (g / mul_scalar(self.saved("self"), LN10),)


class Exp2Backward0(Node):
    """out = 2 ** self:  d self = g * out * ln 2."""

    __slots__ = ()

    def apply(self, g):
        return (mul_scalar(g * self.saved("result"), LN2),)


class ErfBackward0(Node):
    """out = erf(self):  d self = 2 / sqrt(pi) * exp(-self**2) * g."""

    __slots__ = ()

    def apply(self, g):
        return (mul_scalar((-(self.saved("self") ** 2)).exp(), TWO_OVER_SQRT_PI) * g,)


class TanhBackward0(Node):
    """out = tanh(self):  d self = tanh_backward(g, out) = g * (1 - out**2)."""

    __slots__ = ()

    def apply(self, g):
        return (backward_functions.tanh_backward(g, self.saved("result")),)


class SigmoidBackward0(Node):
    """out = 1 / (1 + exp(-self)):  d self = sigmoid_backward(g, out) = g * (1 - out) * out."""

    __slots__ = ()

    def apply(self, g):
        return (backward_functions.sigmoid_backward(g, self.saved("result")),)


class ReluBackward0(Node):
    """out = max(self, 0):  d self = threshold_backward(g, out, 0) = g where out > 0, else 0."""

    __slots__ = ()

    def apply(self, g):
        return (backward_functions.threshold_backward(g, self.saved("result"), 0),)


class ThresholdBackwardBackward0(Node):
    """out = g where self > 0, else 0:  d g = gg where self > 0,  d self = 0."""

    __slots__ = ()

    def apply(self, gg):
        return (
            threshold_backward(gg, self.saved("self")) if self.needs_input_grad(0) else None,
            gg * 0 if self.needs_input_grad(1) else None,
        )


class SqrtBackward0(Node):
    """out = sqrt(self):  d self = g / (2 * out)."""

    __slots__ = ()

    def apply(self, g):
        return (g / (self.saved("result") * 2),)


class RsqrtBackward0(Node):
    """out = 1 / sqrt(self):  d self = -0.5 * g * out**3."""

    __slots__ = ()

    def apply(self, g):
        return (mul_scalar(g, -0.5) * self.saved("result") ** 3,)


class LeakyReluBackward0(Node):
    """out = self if self > 0 else negative_slope * self:  d self = g, or g * negative_slope."""

    __slots__ = ()

    def apply(self, g):
        return (leaky_relu_backward(g, self.saved("self"), self._saved["negative_slope"]),)


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


class LeakyReluBackwardBackward0(Node):
    """out = g where self > 0, else g * slope:  d g = gg where self > 0, else gg * slope; d self = 0."""

    __slots__ = ()

    def apply(self, gg):
        slope = self._saved["negative_slope"]
        return (
            leaky_relu_backward(gg, self.saved("self"), slope)
            if self.needs_input_grad(0)
            else None,
            gg * 0 if self.needs_input_grad(1) else None,
        )


class AbsBackward0(Node):
    """out = |self|:  d self = g * sign(self)."""

    __slots__ = ()

    def apply(self, g):
        return (g * sgn(self.saved("self")),)


class SgnBackward0(Node):
    """out = sign(self):  d self = 0."""

    __slots__ = ()

    def apply(self, g):
        return (g * 0,)


class SignBackward0(Node):
    """out = sign(self), a step function:  d self = 0."""

    __slots__ = ()

    def apply(self, g):
        return (Tensor._make(np.zeros_like(g._data)),)


class FloorBackward0(SignBackward0):
    """out = floor(self):  d self = 0."""

    __slots__ = ()


class CeilBackward0(SignBackward0):
    """out = ceil(self):  d self = 0."""

    __slots__ = ()


class RoundBackward0(SignBackward0):
    """out = round(self), halves to even:  d self = 0."""

    __slots__ = ()


class RoundBackward1(SignBackward0):
    """out = round(self, decimals):  d self = 0."""

    __slots__ = ()


class CloneBackward0(Node):
    """out = a copy of self:  d self = g."""

    __slots__ = ()

    def apply(self, g):
        return (g,)


class ToCopyBackward0(Node):
    """out = self cast to another dtype:  d self = g cast back."""

    __slots__ = ()

    def apply(self, g):
        return (cast(g, self.args),)


def _unary(node_type, self, data, keep=None):
    """Record a one-input operation that keeps its input ('self'), its output ('result') or nothing."""
    if keep == "self":
        return record(node_type, data, (self,), {"self": self})
    if keep == "result":
        return record(node_type, data, (self,), {}, save_result_as="result")
    return record(node_type, data, (self,), {})


def exp(self):
    """e ** self; backward: g * out."""
    return _unary(ExpBackward0, self, np.exp(float_values(self)), "result")


def expm1(self):
    """e ** self - 1, accurate near 0; backward: g * (out + 1)."""
    return _unary(Expm1Backward0, self, np.expm1(float_values(self)), "result")


def log(self):
    """Natural logarithm; backward: g / self."""
    return _unary(LogBackward0, self, np.log(float_values(self)), "self")


def log1p(self):
    """log(1 + self), accurate near 0; backward: g / (self + 1)."""
    return _unary(Log1PBackward0, self, np.log1p(float_values(self)), "self")


def exp2(self):
    """2 ** self; backward: g * out * ln 2."""
    return _unary(Exp2Backward0, self, np.exp2(float_values(self)), "result")


def log2(self):
    """Logarithm to base 2; backward: g / (self * ln 2)."""
    return _unary(Log2Backward0, self, np.log2(float_values(self)), "self")


def log10(self):
    """Logarithm to base 10; backward: g / (self * ln 10)."""
    return _unary(Log10Backward0, self, np.log10(float_values(self)), "self")


def erf(self):
    """The error function, 2 / sqrt(pi) * integral of exp(-t**2) from 0 to self.

    backward: g * 2 / sqrt(pi) * exp(-self**2).
    """
    x = float_values(self)
    return _unary(ErfBackward0, self, np.asarray(_erf(x), dtype=x.dtype), "self")


def sin(self):
    """sin(self); backward: g * cos(self)."""
    return _unary(SinBackward0, self, np.sin(float_values(self)), "self")


def cos(self):
    """cos(self); backward: g * -sin(self)."""
    return _unary(CosBackward0, self, np.cos(float_values(self)), "self")


def tan(self):
    """tan(self); backward: g * (1 + out**2)."""
    return _unary(TanBackward0, self, np.tan(float_values(self)), "result")


def asin(self):
    """The angle whose sine is self (NaN outside [-1, 1]); backward: g / sqrt(1 - self**2)."""
    return _unary(AsinBackward0, self, np.arcsin(float_values(self)), "self")


def acos(self):
    """The angle whose cosine is self (NaN outside [-1, 1]); backward: -g / sqrt(1 - self**2)."""
    return _unary(AcosBackward0, self, np.arccos(float_values(self)), "self")


def atan(self):
    """The angle whose tangent is self; backward: g / (1 + self**2)."""
    return _unary(AtanBackward0, self, np.arctan(float_values(self)), "self")


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


def sinh(self):
    """Hyperbolic sine, (e**self - e**-self) / 2; backward: g * cosh(self)."""
    return _unary(SinhBackward0, self, np.sinh(float_values(self)), "self")


def cosh(self):
    """Hyperbolic cosine, (e**self + e**-self) / 2; backward: g * sinh(self)."""
    return _unary(CoshBackward0, self, np.cosh(float_values(self)), "self")


def tanh(self):
    """Hyperbolic tangent; backward: g * (1 - out**2)."""
    return _unary(TanhBackward0, self, np.tanh(float_values(self)), "result")


def sigmoid(self):
    """1 / (1 + e ** -self); backward: g * out * (1 - out)."""
    return _unary(SigmoidBackward0, self, _sigmoid(float_values(self)), "result")


def _sigmoid(x):
    # Written with exp of a non-positive number only, so it never overflows.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def relu(self):
    """max(self, 0); backward: g where out > 0, else 0."""
    return _unary(ReluBackward0, self, np.maximum(self._data, 0), "result")


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


def leaky_relu_backward(g, self, negative_slope):
    """leaky_relu's backward, recorded so that create_graph can differentiate it."""
    data = np.where(self._data > 0, g._data, g._data * negative_slope)
    saved = {"negative_slope": negative_slope, "self": self}
    return record(LeakyReluBackwardBackward0, data, (g, self), saved)


def threshold_backward(g, result):
    """relu's backward, g where result > 0; recorded so that create_graph can differentiate it."""
    data = np.where(result._data > 0, g._data, 0).astype(g._data.dtype, copy=False)
    saved = {"self": result, "threshold": 0}
    return record(ThresholdBackwardBackward0, data, (g, result), saved)


def sgn(self):
    """The sign of each element (-1, 0 or 1); abs's backward uses it."""
    data = np.sign(self._data)
    return record(SgnBackward0, data, (self,), {"self": self}, save_result_as="result")


def sqrt(self):
    """Square root; backward: g / (2 * out)."""
    return _unary(SqrtBackward0, self, np.sqrt(float_values(self)), "result")


def rsqrt(self):
    """1 / sqrt(self); backward: -0.5 * g * out**3."""
    return _unary(RsqrtBackward0, self, 1 / np.sqrt(float_values(self)), "result")


def square(self):
    """self ** 2, recorded as the power it is (PowBackward0); backward: g * 2 * self."""
    return self**2


def abs(self):
    """Absolute value; backward: g * sign(self)."""
    return _unary(AbsBackward0, self, np.abs(self._data), "self")


def sign(self):
    """-1, 0 or 1 for each element; backward: 0."""
    return _unary(SignBackward0, self, np.sign(self._data))


def _rounded(node_type, self, fn):
    # integers are already whole: PyTorch returns them unchanged (numpy would give floats)
    if self._data.dtype.kind != "f":
        return Tensor._make(self._data.copy())
    return _unary(node_type, self, fn(self._data))


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


def clone(self):
    """A copy with its own memory, still connected to the graph."""
    data = self._data.copy()
    return record(CloneBackward0, data, (self,))


def contiguous(self):
    """self when its elements are already laid out row by row in memory, else clone(self)."""
    return self if self._data.flags.c_contiguous else clone(self)


def is_contiguous(self):
    """True when the elements are laid out row by row in memory (no view has reordered them)."""
    return self._data.flags.c_contiguous


def cast(self, np_dtype):
    """self converted to another dtype (recorded as ToCopyBackward0; an integer or bool result
    is not recorded: it cannot require grad)."""
    data = self._data.astype(np_dtype)
    if data.dtype.kind != "f":
        return Tensor._make(data)
    return record(ToCopyBackward0, data, (self,), args=self._data.dtype)


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
