"""Arithmetic with broadcasting: + - * / ** and negation.

A Python number operand (`x * 4`) takes part as PyTorch's wrapped number (recording.py), and
the backward formulas are PyTorch's, down to how they scale by a number (mul.Scalar). The
nodes' formulas are in the table of derivatives.py, but for the powers of a tensor exponent.
"""

import math

import numpy as np

from ..core import dtypes
from ..core.errors import warn_once
from ..core.node import Node
from ..core.tensor import Tensor
from .broadcasting import broadcasting, summed_to_inputs
from .derivatives import (
    AddBackward0,
    DivBackward0,
    MulBackward0,
    NegBackward0,
    PowBackward0,
    RsubBackward1,
    SubBackward0,
    mul_scalar,
    reciprocal,
    sub_scalar,
    zero_like,
)
from .piecewise import where
from .promotion import promote
from .recording import record, saved_for_each_other


class PowBackward1(Node):
    """out = self ** exponent, both tensors:  d self = g * (e * self**(e - 1)), 0 where e == 0;
    d e = g * out * log(self), 0 where self == 0 and e >= 0 (each masked with a where)."""

    __slots__ = ()

    def apply(self, g):
        base, exponent, result = self.saved("self"), self.saved("exponent"), self.saved("result")
        grad_base = grad_exponent = None
        if self.needs_input_grad(0):
            zero_exponent = Tensor._make(exponent._data == 0)
            grad = g * (exponent * base ** sub_scalar(exponent, 1))
            grad_base = where(zero_exponent, zero_like(g), grad)
        if self.needs_input_grad(1):
            zero_base = Tensor._make((base._data == 0) & (exponent._data >= 0))
            grad_exponent = g * where(zero_base, zero_like(g), result * base.log())
        return summed_to_inputs(self, grad_base, grad_exponent)


class PowBackward2(Node):
    """out = self ** exponent, self a number:  d exponent = g * (out * log(self)).

    For self == 0 the factor is 0 where exponent >= 0 (masked with a where).
    """

    __slots__ = ()

    def apply(self, g):
        base = self._saved["self"]
        # math.log raises where torch gives nan (base < 0) or -inf (base 0)
        log_base = math.log(base) if base > 0 else (-math.inf if base == 0 else math.nan)
        factor = mul_scalar(self.saved("result"), log_base)
        if base == 0:
            factor = where(Tensor._make(self.saved("exponent")._data >= 0), zero_like(g), factor)
        return (g * factor,)


def _check_not_bool(op, *operands):
    """PyTorch refuses - (and unary -) on bools: a mask is inverted with ~ or logical_not()."""
    is_bool = [
        isinstance(x, bool) or (isinstance(x, Tensor) and x._data.dtype == np.bool_)
        for x in operands
    ]
    if len(operands) == 2 and all(is_bool):
        raise RuntimeError(
            f"{op}, the `-` operator, with two bool tensors is not supported. Use the `^` or "
            "`logical_xor()` operator instead."
        )
    if any(is_bool):
        raise RuntimeError(
            f"{op}, the `-` operator, {'with' if len(operands) == 2 else 'on'} a bool tensor is "
            "not supported. If you are trying to invert a mask, use the `~` or `logical_not()` "
            "operator instead."
        )


def _check_alpha(dtype, alpha):
    """PyTorch's rules for alpha: no float alpha with integers, bool alpha only for bools."""
    if dtype.kind in "iu" and isinstance(alpha, float):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number."
        )
    if dtype.kind != "b" and isinstance(alpha, bool):
        raise RuntimeError("Boolean alpha only supported for Boolean results.")


ALPHA_FIRST_DEPRECATED = (
    "This overload of {name} is deprecated:\n\t{name}(Number alpha, Tensor other)\nConsider "
    "using one of the following signatures instead:\n\t{name}(Tensor other, *, Number alpha = 1)"
)


def alpha_first(name, other, alpha):
    """(other, alpha) from a call in PyTorch's deprecated order, add(self, alpha, other), which
    it still accepts, with a warning; any other call's arguments as they are."""
    if not isinstance(alpha, Tensor) or isinstance(other, Tensor):
        return other, alpha
    # once per process, whichever overload is used first
    warn_once(ALPHA_FIRST_DEPRECATED.format(name=name), stacklevel=3, key="alpha first")
    return alpha, other


def add(self, other, alpha=1):
    """self + alpha * other, broadcasting; backward: g to self, alpha * g to other."""
    if alpha.__class__ is not int:
        other, alpha = alpha_first("add", other, alpha)
    other, a, b = promote(self, other)
    _check_alpha(a.dtype, alpha)
    data = broadcasting(np.add, a, b if alpha == 1 else alpha * b, self, other)
    return record(AddBackward0, data, (self, other), {"alpha": alpha}, broadcasts=True)


def sub(self, other, alpha=1):
    """self - alpha * other, broadcasting; backward: g to self, -alpha * g to other."""
    if alpha.__class__ is not int:
        other, alpha = alpha_first("sub", other, alpha)
    _check_not_bool("Subtraction", self, other)
    other, a, b = promote(self, other)
    _check_alpha(a.dtype, alpha)
    data = broadcasting(np.subtract, a, b if alpha == 1 else alpha * b, self, other)
    return record(SubBackward0, data, (self, other), {"alpha": alpha}, broadcasts=True)


def rsub(self, other):
    """other - self, for `number - tensor`; backward: -g."""
    if isinstance(other, Tensor):
        return sub(other, self)
    _check_not_bool("Subtraction", other, self)
    _, a, b = promote(self, other)
    data = b - a
    return record(RsubBackward1, data, (self,), {"alpha": 1})


def mul(self, other):
    """self * other, broadcasting; backward: g * other to self, g * self to other.

    Each input is saved only if the other one needs a gradient.
    """
    other, a, b = promote(self, other)
    data = broadcasting(np.multiply, a, b, self, other)
    saved = saved_for_each_other("other", other, "self", self)
    return record(MulBackward0, data, (self, other), saved, broadcasts=True)


@np.errstate(divide="ignore", invalid="ignore")
def true_divide(a, b, **out):
    """a / b for arrays, without numpy's warnings for x / 0 (PyTorch gives inf or nan silently);
    `out` as numpy's (out=, casting=)."""
    return np.true_divide(a, b, **out)


def div(self, other):
    """self / other (true division: integers give the default float), broadcasting.

    backward: g / other to self, -g * self / other**2 to other.
    """
    other, a, b = promote(self, other)
    if a.dtype.kind != "f":
        a, b = a.astype(dtypes.default_float()), b.astype(dtypes.default_float())
    data = broadcasting(true_divide, a, b, self, other)
    saved = {"other": other, "self": self if other.requires_grad else None}
    return record(DivBackward0, data, (self, other), saved, broadcasts=True)


def rdiv(self, other):
    """other / self for a number `other`: recorded as other * reciprocal(self), as in PyTorch."""
    if isinstance(other, Tensor):
        return div(other, self)
    return mul(reciprocal(self), other)


def neg(self):
    """-self; backward: -g."""
    _check_not_bool("Negation", self)
    return record(NegBackward0, -self._data, (self,))


def pow(self, exponent):
    """self ** exponent, for a number or a tensor exponent (and a number self: base ** tensor).

    backward: g * exponent * self**(exponent - 1) to self, g * out * log(self) to exponent.
    """
    if not isinstance(self, Tensor):
        return rpow(exponent, self)
    if not isinstance(exponent, (Tensor, int, float)):
        raise TypeError(f"unsupported exponent type {type(exponent).__name__}")
    exponent_tensor, a, b = promote(self, exponent)
    is_number = not isinstance(exponent, Tensor)
    if is_number and a.dtype.kind in "iu" and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    data = broadcasting(np.power, a, b, self, exponent_tensor)
    if is_number:
        return record(PowBackward0, data, (self,), {"exponent": exponent, "self": self})
    saved = {"exponent": exponent, "self": self}
    return record(PowBackward1, data, (self, exponent), saved, "result", broadcasts=True)


def rpow(self, base):
    """base ** self, for a number `base`; backward: g * out * log(base)."""
    if isinstance(base, Tensor):
        return pow(base, self)
    _, a, b = promote(self, base)
    data = b**a
    return record(PowBackward2, data, (self,), {"exponent": self, "self": base}, "result")
