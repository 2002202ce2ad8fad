"""Arithmetic with broadcasting: + - * / ** and negation.

A Python number operand (`x * 4`) takes part as PyTorch's wrapped number (recording.py), and
the backward formulas are PyTorch's, down to how they scale by a number (mul.Scalar).
"""

import math

import numpy as np

from .. import dtypes
from ..node import Node
from ..tensor import Tensor
from .recording import float_values, promote, record, save, sum_to, wants_grad


class AddBackward0(Node):
    """out = self + alpha * other:  d self = g,  d other = alpha * g."""

    __slots__ = ()

    def apply(self, g):
        alpha = self._saved["alpha"]
        return (
            sum_to(g, self._info[0]) if self.needs_input_grad(0) else None,
            sum_to(g if alpha == 1 else mul_scalar(g, alpha), self._info[1])
            if self.needs_input_grad(1)
            else None,
        )


class SubBackward0(Node):
    """out = self - alpha * other:  d self = g,  d other = -alpha * g."""

    __slots__ = ()

    def apply(self, g):
        alpha = self._saved["alpha"]
        return (
            sum_to(g, self._info[0]) if self.needs_input_grad(0) else None,
            sum_to(-g if alpha == 1 else mul_scalar(-g, alpha), self._info[1])
            if self.needs_input_grad(1)
            else None,
        )


class RsubBackward1(Node):
    """out = other - alpha * self, other a number:  d self = -alpha * g."""

    __slots__ = ()

    def apply(self, g):
        alpha = self._saved["alpha"]
        return (-g if alpha == 1 else mul_scalar(-g, alpha),)


class MulBackward0(Node):
    """out = self * other:  d self = g * other,  d other = g * self."""

    __slots__ = ()

    def apply(self, g):
        return (
            sum_to(g * self.saved("other"), self._info[0]) if self.needs_input_grad(0) else None,
            sum_to(g * self.saved("self"), self._info[1]) if self.needs_input_grad(1) else None,
        )


class DivBackward0(Node):
    """out = self / other:  d self = g / other,  d other = -g * ((self / other) / other)."""

    __slots__ = ()

    def apply(self, g):
        other = self.saved("other")
        grad_self = grad_other = None
        if self.needs_input_grad(0):
            grad_self = sum_to(g / other, self._info[0])
        if self.needs_input_grad(1):
            grad_other = sum_to(-g * ((self.saved("self") / other) / other), self._info[1])
        return grad_self, grad_other


class ReciprocalBackward0(Node):
    """out = 1 / self:  d self = -g * out**2."""

    __slots__ = ()

    def apply(self, g):
        result = self.saved("result")
        return (-g * (result * result),)


class NegBackward0(Node):
    """out = -self:  d self = -g."""

    __slots__ = ()

    def apply(self, g):
        return (-g,)


class PowBackward0(Node):
    """out = self ** exponent, exponent a number:  d self = g * (exponent * self**(exponent - 1)).

    The exponent counts as a float (2 gives self ** 1.0 and a MulBackward1 by 2.0); exponent 0
    gives zeros, outside the graph.
    """

    __slots__ = ()

    def apply(self, g):
        exponent = float(self._saved["exponent"])
        base = self.saved("self")
        if exponent == 0:
            return (zeros_outside_graph(base),)
        return (g * mul_scalar(base ** (exponent - 1), exponent),)


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
            grad_base = sum_to(where(zero_exponent, zero_outside_graph(g), grad), self._info[0])
        if self.needs_input_grad(1):
            zero_base = Tensor._make((base._data == 0) & (exponent._data >= 0))
            grad = g * where(zero_base, zero_outside_graph(g), result * base.log())
            grad_exponent = sum_to(grad, self._info[1])
        return grad_base, grad_exponent


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
            factor = where(
                Tensor._make(self.saved("exponent")._data >= 0), zero_outside_graph(g), factor
            )
        return (g * factor,)


class MulBackward1(Node):
    """out = self * other, other a number (mul.Scalar, inside backward formulas):  d self = g * other."""

    __slots__ = ()

    def apply(self, g):
        return (mul_scalar(g, self._saved["other"]),)


class DivBackward1(Node):
    """out = self / other, other a number (div.Scalar):  d self = g / other."""

    __slots__ = ()

    def apply(self, g):
        return (div_scalar(g, self._saved["other"]),)


class AddBackward1(Node):
    """out = self + other, other a number (add.Scalar):  d self = g."""

    __slots__ = ()

    def apply(self, g):
        return (g,)


class SubBackward1(AddBackward1):
    """out = self - other, other a number (sub.Scalar):  d self = g."""

    __slots__ = ()


def zero_outside_graph(like):
    """A 0-d zero in like's dtype, outside the graph (PyTorch's at::zeros({}, grad.options()))."""
    return Tensor._make(np.zeros((), like._data.dtype))


def zeros_outside_graph(like):
    """Zeros shaped as `like`, outside the graph (PyTorch's zeros_like in a backward formula)."""
    return Tensor._make(np.zeros_like(like._data))


def broadcast_error(a, b):
    """PyTorch's error for two tensors (or shapes) that do not broadcast; it names the last bad dim."""
    a, b = (x._data.shape if isinstance(x, Tensor) else x for x in (a, b))
    ndim = max(len(a), len(b))
    a, b = (1,) * (ndim - len(a)) + tuple(a), (1,) * (ndim - len(b)) + tuple(b)
    i = max(i for i in range(ndim) if a[i] != b[i] and 1 not in (a[i], b[i]))
    return RuntimeError(
        f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) at "
        f"non-singleton dimension {i}"
    )


def broadcast_shape(*tensors):
    """The shape the tensors broadcast to, or PyTorch's error (tensor a: those before, b: the next)."""
    shape = ()
    for t in tensors:
        try:
            shape = np.broadcast_shapes(shape, t._data.shape)
        except ValueError:
            raise broadcast_error(shape, t._data.shape) from None
    return shape


def _broadcasting(numpy_op, a, b, self, other):
    """numpy_op(a, b), or PyTorch's error when self's and other's shapes do not broadcast."""
    try:
        return numpy_op(a, b)
    except ValueError:
        raise broadcast_error(self, other) from None


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


def add(self, other, alpha=1):
    """self + alpha * other, broadcasting; backward: g to self, alpha * g to other."""
    other, a, b = promote(self, other)
    _check_alpha(a.dtype, alpha)
    data = _broadcasting(np.add, a, b if alpha == 1 else alpha * b, self, other)
    if not wants_grad(self, other):
        return Tensor._make(data)
    return record(AddBackward0, data, (self, other), {"alpha": alpha}, broadcasts=True)


def sub(self, other, alpha=1):
    """self - alpha * other, broadcasting; backward: g to self, -alpha * g to other."""
    _check_not_bool("Subtraction", self, other)
    other, a, b = promote(self, other)
    _check_alpha(a.dtype, alpha)
    data = _broadcasting(np.subtract, a, b if alpha == 1 else alpha * b, self, other)
    if not wants_grad(self, other):
        return Tensor._make(data)
    return record(SubBackward0, data, (self, other), {"alpha": alpha}, broadcasts=True)


def rsub(self, other):
    """other - self, for `number - tensor`; backward: -g."""
    if isinstance(other, Tensor):
        return sub(other, self)
    _check_not_bool("Subtraction", other, self)
    _, a, b = promote(self, other)
    data = b - a
    if not wants_grad(self):
        return Tensor._make(data)
    return record(RsubBackward1, data, (self,), {"alpha": 1})


def mul(self, other):
    """self * other, broadcasting; backward: g * other to self, g * self to other.

    Each input is saved only if the other one needs a gradient.
    """
    other, a, b = promote(self, other)
    data = _broadcasting(np.multiply, a, b, self, other)
    if not wants_grad(self, other):
        return Tensor._make(data)
    saved = {
        "other": save(other) if self.requires_grad else None,
        "self": save(self) if other.requires_grad else None,
    }
    return record(MulBackward0, data, (self, other), saved, broadcasts=True)


def div(self, other):
    """self / other (true division: integers give the default float), broadcasting.

    backward: g / other to self, -g * self / other**2 to other.
    """
    other, a, b = promote(self, other)
    if a.dtype.kind != "f":
        a, b = a.astype(dtypes.default_float()), b.astype(dtypes.default_float())
    data = _broadcasting(np.true_divide, a, b, self, other)
    if not wants_grad(self, other):
        return Tensor._make(data)
    saved = {"other": save(other), "self": save(self) if other.requires_grad else None}
    return record(DivBackward0, data, (self, other), saved, broadcasts=True)


def rdiv(self, other):
    """other / self for a number `other`: recorded as other * reciprocal(self), as in PyTorch."""
    if isinstance(other, Tensor):
        return div(other, self)
    return mul(reciprocal(self), other)


def reciprocal(self):
    """1 / self; backward: -g * out**2."""
    data = 1 / float_values(self)
    if not wants_grad(self):
        return Tensor._make(data)
    return record(ReciprocalBackward0, data, (self,), {}, save_result_as="result")


def neg(self):
    """-self; backward: -g."""
    _check_not_bool("Negation", self)
    if not wants_grad(self):
        return Tensor._make(-self._data)
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
    data = _broadcasting(np.power, a, b, self, exponent_tensor)
    if not wants_grad(self, exponent_tensor):
        return Tensor._make(data)
    if is_number:
        return record(PowBackward0, data, (self,), {"exponent": exponent, "self": save(self)})
    saved = {"exponent": save(exponent), "self": save(self)}
    return record(PowBackward1, data, (self, exponent), saved, "result", broadcasts=True)


def rpow(self, base):
    """base ** self, for a number `base`; backward: g * out * log(base)."""
    if isinstance(base, Tensor):
        return pow(base, self)
    _, a, b = promote(self, base)
    data = b**a
    if not wants_grad(self):
        return Tensor._make(data)
    return record(PowBackward2, data, (self,), {"exponent": save(self), "self": base}, "result")


def mul_scalar(self, other):
    """self * a number, as PyTorch's backward formulas write it (mul.Scalar: MulBackward1)."""
    data = self._data * other
    if not wants_grad(self):
        return Tensor._make(data)
    return record(MulBackward1, data, (self,), {"other": other})


def div_scalar(self, other):
    """self / a number, as PyTorch's backward formulas write it (div.Scalar: DivBackward1)."""
    data = self._data / other
    if not wants_grad(self):
        return Tensor._make(data)
    return record(DivBackward1, data, (self,), {"other": other})


def add_scalar(self, other):
    """self + a number, as PyTorch's backward formulas write it (add.Scalar: AddBackward1)."""
    data = self._data + other
    if not wants_grad(self):
        return Tensor._make(data)
    return record(AddBackward1, data, (self,))


def sub_scalar(self, other):
    """self - a number, as PyTorch's backward formulas write it (sub.Scalar: SubBackward1)."""
    data = self._data - other
    if not wants_grad(self):
        return Tensor._make(data)
    return record(SubBackward1, data, (self,))


# Imported last: piecewise.py imports this module (broadcast_shape, div_scalar).
from .piecewise import where  # noqa: E402
