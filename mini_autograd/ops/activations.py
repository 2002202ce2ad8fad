"""Activation functions of torch.nn.functional: softplus, elu, selu, silu, gelu, hardtanh, relu6,
logsigmoid, mish.

Where PyTorch computes a backward in one kernel (softplus_backward, elu_backward, gelu_backward,
hardtanh_backward, log_sigmoid_backward), that backward is an operation of its own here too, with
its own node (SoftplusBackwardBackward0...), so `create_graph=True` records PyTorch's graph.
silu and mish differentiate their backward as the elementary operations it is made of, as PyTorch.
The nodes whose formulas fit in an expression (softplus's, hardtanh's, logsigmoid's, silu's and
mish's) are in the table of derivatives.py; elu's and gelu's, whose second derivatives take code,
here.
"""

import math

import numpy as np

from ..core.errors import SCALAR_TYPE_NAMES
from ..core.node import Node
from ..core.tensor import Tensor
from .derivatives import (
    HardtanhBackward0,
    LogSigmoidBackward0,
    MishBackward0,
    SiluBackward0,
    SoftplusBackward0,
    _erf,
    _sigmoid,
    add_scalar,
    mul_scalar,
    one_minus,
)
from .inplace_elementwise import in_place
from .recording import record

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
SQRT_HALF = math.sqrt(0.5)
INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
GELU_TANH_K, GELU_TANH_C = math.sqrt(2 / math.pi), 0.044715


def _check_float(self, kernel):
    """PyTorch's error for an activation kernel that has no integer version."""
    if self._data.dtype.kind != "f":
        name = SCALAR_TYPE_NAMES[self._data.dtype.name]
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")


# --- softplus ----------------------------------------------------------------------------------
def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold.

    backward: g * sigmoid(beta * x) (g where beta * x > threshold).
    """
    _check_float(input, "softplus_cpu")
    x = input._data
    bx = x * beta
    data = np.where(bx > threshold, x, np.logaddexp(0, bx) / beta).astype(x.dtype, copy=False)
    saved = {"beta": beta, "self": input, "threshold": threshold}
    return record(SoftplusBackward0, data, (input,), saved)


# --- elu and selu ------------------------------------------------------------------------------
class EluBackward0(Node):
    """out = scale * (self if self > 0 else alpha * (exp(input_scale * self) - 1)):
    d self = g * scale, or g * scale * alpha * input_scale * exp(input_scale * self)."""

    __slots__ = ()

    def apply(self, g):
        s = self._saved
        return (elu_backward(g, s["alpha"], s["scale"], s["input_scale"], self.saved("self")),)


class EluBackward1(Node):
    """self = elu(self) in place:  d self = g * scale where result > 0, else
    g * input_scale * (result + alpha * scale), elu's slope written with its result."""

    __slots__ = ()

    def apply(self, g):
        s = self._saved
        return (
            elu_backward(g, s["alpha"], s["scale"], s["input_scale"], self.saved("result"), True),
        )


class EluBackwardBackward0(Node):
    """out = elu's backward of g:  d g = elu's backward of gg;
    d self_or_result = gg * g * input_scale * (elu's second derivative, written with self or
    the result) where self_or_result < 0, else 0."""

    __slots__ = ()

    def apply(self, gg):
        s, x = self._saved, self.saved("self_or_result")
        alpha, scale, input_scale = s["alpha"], s["scale"], s["input_scale"]
        is_result = s["is_result"]
        grad_g = None
        if self.needs_input_grad(0):
            grad_g = elu_backward(gg, alpha, scale, input_scale, x, is_result)
        grad_x = None
        if self.needs_input_grad(1):
            go = mul_scalar(gg * self.saved("grad_output"), input_scale)
            negative = Tensor._make((x._data < 0).astype(x._data.dtype))
            if not is_result:
                go = elu_backward(go, alpha, scale, input_scale, x)
            grad_x = go * negative
        return grad_g, grad_x


ELU_NEGATIVE_SLOPE = (
    "In-place elu backward calculation is triggered with a negative slope which is not supported. "
    "This is caused by calling in-place forward function with a negative slope, please call "
    "out-of-place version instead."
)


def elu(input, alpha=1.0, inplace=False):
    """x where x > 0, else alpha * (exp(x) - 1); backward: g, or g * alpha * exp(x).
    In place (inplace=True) it is recorded as EluBackward1, which saves the result."""
    return _elu_(input, alpha, 1, 1) if inplace else _elu(input, alpha, 1, 1)


def selu(input, inplace=False):
    """SELU_SCALE * elu(x, SELU_ALPHA): elu with the constants that keep activations normalised."""
    if inplace:
        return _elu_(input, SELU_ALPHA, SELU_SCALE, 1)
    return _elu(input, SELU_ALPHA, SELU_SCALE, 1)


def elu_(input, alpha=1.0):
    """elu(input, alpha, inplace=True)."""
    return _elu_(input, alpha, 1, 1)


def selu_(input):
    """selu(input, inplace=True)."""
    return _elu_(input, SELU_ALPHA, SELU_SCALE, 1)


def _elu_values(input, alpha, scale, input_scale):
    _check_float(input, "elu_cpu")
    x = input._data
    with np.errstate(over="ignore"):  # exp of a large x, for the branch that is not taken
        negative = scale * alpha * np.expm1(x * input_scale)
    return np.where(x > 0, scale * x, negative).astype(x.dtype, copy=False)


def _elu(input, alpha, scale, input_scale):
    data = _elu_values(input, alpha, scale, input_scale)
    saved = {"alpha": alpha, "input_scale": input_scale, "scale": scale, "self": input}
    return record(EluBackward0, data, (input,), saved)


def _elu_from_result(input, alpha, scale, input_scale):
    """elu recorded as its in-place form records it: EluBackward1, which saves the result."""
    data = _elu_values(input, alpha, scale, input_scale)
    saved = {"alpha": alpha, "input_scale": input_scale, "scale": scale}
    return record(EluBackward1, data, (input,), saved, save_result_as="result")


_elu_ = in_place(_elu_from_result, name="elu_")


def elu_backward(g, alpha, scale, input_scale, self_or_result, is_result=False):
    """elu's backward, from self or (is_result, for the in-place elu) from the result; recorded
    so create_graph can differentiate it."""
    if is_result and alpha < 0:
        raise RuntimeError(ELU_NEGATIVE_SLOPE)
    x, a = self_or_result._data, g._data
    # PyTorch's kernel: its constants in the tensor's dtype, its order of operations
    number = a.dtype.type
    negcoef, poscoef, negiptcoef = number(alpha) * number(scale), number(scale), number(input_scale)
    if is_result:  # alpha * scale * exp(self * input_scale) = result + alpha * scale, where <= 0
        negative = a * negiptcoef * (x + negcoef)
    else:
        with np.errstate(over="ignore"):  # exp of a large x, for the branch that is not taken
            negative = a * negiptcoef * negcoef * np.exp(x * negiptcoef)
    data = np.where(x <= 0, negative, a * poscoef)
    saved = {
        "alpha": alpha,
        "grad_output": g,
        "input_scale": input_scale,
        "is_result": is_result,
        "scale": scale,
        "self_or_result": self_or_result,
    }
    data = data.astype(g._data.dtype, copy=False)
    return record(EluBackwardBackward0, data, (g, self_or_result), saved)


# --- silu and mish: backwards made of elementary operations ------------------------------------
def silu(input, inplace=False):
    """x * sigmoid(x) (also called swish); backward: g * s * (1 + x * (1 - s)), s = sigmoid(x)."""
    if inplace:
        raise NotImplementedError("mini_autograd has no in-place silu; use inplace=False")
    _check_float(input, "silu_cpu")
    data = input._data * _sigmoid(input._data)
    return record(SiluBackward0, data, (input,), {"self": input})


def mish(input, inplace=False):
    """x * tanh(softplus(x)); backward: g * (t + x * sigmoid(x) * (1 - t**2)), t = tanh(softplus(x))."""
    if inplace:
        raise NotImplementedError("mini_autograd has no in-place mish; use inplace=False")
    _check_float(input, "mish_cpu")
    x = input._data
    data = (x * np.tanh(np.logaddexp(0, x))).astype(x.dtype, copy=False)
    return record(MishBackward0, data, (input,), {"self": input})


# --- gelu --------------------------------------------------------------------------------------
class GeluBackward0(Node):
    """out = self * Phi(self) (Phi: the normal distribution's CDF, or its tanh approximation):
    d self = g * (Phi(self) + self * phi(self))."""

    __slots__ = ()

    def apply(self, g):
        return (gelu_backward(g, self.saved("self"), self._saved["approximate"]),)


class GeluBackwardBackward0(Node):
    """out = g * gelu'(self):  d g = gg * gelu'(self),  d self = gg * g * gelu''(self)."""

    __slots__ = ()

    def apply(self, gg):
        x, approximate = self.saved("self"), self._saved["approximate"]
        grad_g = gelu_backward(gg, x, approximate) if self.needs_input_grad(0) else None
        grad_x = None
        if self.needs_input_grad(1):
            grad_x = gg * self.saved("grad_output") * _gelu_second_derivative(x, approximate)
        return grad_g, grad_x


def _gelu_second_derivative(x, approximate):
    """gelu''(x) written with Tensor operations: phi(x) * (2 - x**2), or the tanh form's."""
    if approximate == "none":
        phi = mul_scalar(mul_scalar(x * x, -0.5).exp(), INV_SQRT_2PI)
        return phi * add_scalar(-(x * x), 2)
    k, c = GELU_TANH_K, GELU_TANH_C
    x2 = x * x
    t = mul_scalar(x + mul_scalar(x2 * x, c), k).tanh()
    du = mul_scalar(add_scalar(mul_scalar(x2, 3 * c), 1), k)  # d/dx of the argument of tanh
    sech2 = one_minus(t * t)
    # (1 - t**2) * (du - x * t * du**2 + 0.5 * x * 6 * k * c * x)
    return sech2 * (du - x * t * du * du + mul_scalar(x2, 3 * k * c))


def gelu(input, approximate="none"):
    """x * Phi(x), Phi the standard normal CDF 0.5 * (1 + erf(x / sqrt(2))); with
    approximate='tanh', Phi(x) ~ 0.5 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3))).

    backward: g * (Phi(x) + x * phi(x)), phi the normal density (or the tanh form's derivative).
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _check_float(input, "GeluKernelImpl")
    x = input._data
    data = (x * _gelu_cdf(x, approximate)[0]).astype(x.dtype, copy=False)
    saved = {"approximate": approximate, "self": input}
    return record(GeluBackward0, data, (input,), saved)


def _gelu_cdf(x, approximate):
    """(Phi(x), its derivative) in numpy: the exact normal CDF and density, or the tanh form's."""
    if approximate == "none":
        cdf = 0.5 * (1 + np.asarray(_erf(x * SQRT_HALF), dtype=x.dtype))
        return cdf, INV_SQRT_2PI * np.exp(-0.5 * x * x)
    t = np.tanh(GELU_TANH_K * (x + GELU_TANH_C * x**3))
    return 0.5 * (1 + t), 0.5 * (1 - t * t) * GELU_TANH_K * (1 + 3 * GELU_TANH_C * x * x)


def gelu_backward(g, self, approximate):
    """gelu's backward, g * (Phi + x * phi); recorded so create_graph can differentiate it."""
    x = self._data
    cdf, density = _gelu_cdf(x, approximate)
    data = (g._data * (cdf + x * density)).astype(g._data.dtype, copy=False)
    saved = {"approximate": approximate, "grad_output": g, "self": self}
    return record(GeluBackwardBackward0, data, (g, self), saved)


# --- hardtanh and relu6 ------------------------------------------------------------------------
def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """clamp(x, min_val, max_val); backward: g where min_val < x < max_val, else 0. In place
    (inplace=True) its node saves a clone of x taken before the change, as PyTorch's does."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return _hardtanh_(input, min_val, max_val)
    x = input._data
    data = np.clip(x, min_val, max_val).astype(x.dtype, copy=False)
    saved = {"max_val": max_val, "min_val": min_val, "self": input}
    return record(HardtanhBackward0, data, (input,), saved)


_hardtanh_ = in_place(hardtanh, keeps_self=True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """hardtanh(input, min_val, max_val, inplace=True)."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """min(max(x, 0), 6), recorded as hardtanh(x, 0, 6); backward: g where 0 < x < 6, else 0."""
    return hardtanh(input, 0, 6, inplace)


# --- logsigmoid --------------------------------------------------------------------------------
def logsigmoid(input):
    """log(sigmoid(x)) = min(x, 0) - log(1 + exp(-|x|)), without overflow.

    backward: g * sigmoid(-x) = g * (1 - sigmoid(x)).
    """
    _check_float(input, "log_sigmoid_cpu")
    x = input._data
    buffer = np.exp(-np.abs(x))  # what PyTorch's CPU kernel keeps for backward
    data = np.minimum(x, 0) - np.log1p(buffer)
    saved = {"buffer": Tensor._make(buffer), "self": input}
    return record(LogSigmoidBackward0, data, (input,), saved)
