"""Arithmetic with broadcasting: + - * / ** and negation."""

import numpy as np

from ..node import Node
from ..tensor import Tensor
from .recording import as_tensor, record, save, sum_to, wants_grad


class AddBackward0(Node):
    """out = self + alpha * other:  d self = g,  d other = alpha * g."""

    __slots__ = ()

    def apply(self, g):
        alpha = self._saved["alpha"]
        return (
            sum_to(g, self._info[0]) if self.needs_input_grad(0) else None,
            sum_to(g if alpha == 1 else g * alpha, self._info[1])
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
            sum_to(-g if alpha == 1 else g * -alpha, self._info[1])
            if self.needs_input_grad(1)
            else None,
        )


class RsubBackward1(Node):
    """out = other - alpha * self, other a number:  d self = -alpha * g."""

    __slots__ = ()

    def apply(self, g):
        alpha = self._saved["alpha"]
        return (-g if alpha == 1 else g * -alpha,)


class MulBackward0(Node):
    """out = self * other:  d self = g * other,  d other = g * self."""

    __slots__ = ()

    def apply(self, g):
        return (
            sum_to(g * self.saved("other"), self._info[0]) if self.needs_input_grad(0) else None,
            sum_to(g * self.saved("self"), self._info[1]) if self.needs_input_grad(1) else None,
        )


class DivBackward0(Node):
    """out = self / other:  d self = g / other,  d other = -g * self / other**2."""

    __slots__ = ()

    def apply(self, g):
        other = self.saved("other")
        grad_self = grad_other = None
        if self.needs_input_grad(0):
            grad_self = sum_to(g / other, self._info[0])
        if self.needs_input_grad(1):
            grad_other = sum_to(-g * self.saved("self") / (other * other), self._info[1])
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
    """out = self ** exponent, exponent a number:  d self = g * exponent * self**(exponent - 1)."""

    __slots__ = ()

    def apply(self, g):
        exponent = self._saved["exponent"]
        if exponent == 0:
            return (g * 0,)
        return (g * (self.saved("self") ** (exponent - 1) * exponent),)


class PowBackward1(Node):
    """out = self ** exponent, both tensors:  d self = g * e * self**(e-1),  d e = g * out * log(self)."""

    __slots__ = ()

    def apply(self, g):
        base, exponent = self.saved("self"), self.saved("exponent")
        grad_base = grad_exponent = None
        if self.needs_input_grad(0):
            grad_base = sum_to(g * exponent * base ** (exponent - 1), self._info[0])
        if self.needs_input_grad(1):
            grad_exponent = sum_to(g * self.saved("result") * base.log(), self._info[1])
        return grad_base, grad_exponent


class PowBackward2(Node):
    """out = self ** exponent, self a number:  d exponent = g * out * log(self)."""

    __slots__ = ()

    def apply(self, g):
        return (g * self.saved("result") * float(np.log(self._saved["self"])),)


def broadcast_error(a, b):
    """PyTorch's error for two shapes that do not broadcast (it names the last bad dimension)."""
    ndim = max(a._data.ndim, b._data.ndim)
    sa, sb = (
        (1,) * (ndim - a._data.ndim) + a._data.shape,
        (1,) * (ndim - b._data.ndim) + b._data.shape,
    )
    i = max(i for i in range(ndim) if sa[i] != sb[i] and 1 not in (sa[i], sb[i]))
    return RuntimeError(
        f"The size of tensor a ({sa[i]}) must match the size of tensor b ({sb[i]}) at "
        f"non-singleton dimension {i}"
    )


def add(self, other, alpha=1):
    """self + alpha * other, broadcasting."""
    other = as_tensor(other, self)
    try:
        data = self._data + other._data if alpha == 1 else self._data + alpha * other._data
    except ValueError:
        raise broadcast_error(self, other) from None
    if not wants_grad(self, other):
        return Tensor._make(data)
    return record(AddBackward0, data, (self, other), {"alpha": alpha}, broadcasts=True)


def sub(self, other, alpha=1):
    """self - alpha * other, broadcasting."""
    other = as_tensor(other, self)
    try:
        data = self._data - other._data if alpha == 1 else self._data - alpha * other._data
    except ValueError:
        raise broadcast_error(self, other) from None
    if not wants_grad(self, other):
        return Tensor._make(data)
    return record(SubBackward0, data, (self, other), {"alpha": alpha}, broadcasts=True)


def rsub(self, other):
    """other - self, for `number - tensor`."""
    if isinstance(other, Tensor):
        return sub(other, self)
    data = other - self._data
    if not wants_grad(self):
        return Tensor._make(data)
    return record(RsubBackward1, data, (self,), {"alpha": 1})


def mul(self, other):
    """self * other, broadcasting; saves each input only if the other one needs a gradient."""
    other = as_tensor(other, self)
    try:
        data = self._data * other._data
    except ValueError:
        raise broadcast_error(self, other) from None
    if not wants_grad(self, other):
        return Tensor._make(data)
    saved = {
        "other": save(other) if self.requires_grad else None,
        "self": save(self) if other.requires_grad else None,
    }
    return record(MulBackward0, data, (self, other), saved, broadcasts=True)


def div(self, other):
    """self / other, broadcasting."""
    other = as_tensor(other, self)
    try:
        data = self._data / other._data
    except ValueError:
        raise broadcast_error(self, other) from None
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
    """1 / self."""
    data = 1 / self._data
    if not wants_grad(self):
        return Tensor._make(data)
    return record(ReciprocalBackward0, data, (self,), {}, save_result_as="result")


def neg(self):
    """-self."""
    if not wants_grad(self):
        return Tensor._make(-self._data)
    return record(NegBackward0, -self._data, (self,))


def pow(self, exponent):
    """self ** exponent, for a number or a tensor exponent."""
    if not isinstance(exponent, Tensor):
        if not isinstance(exponent, (int, float)):
            raise TypeError(f"unsupported exponent type {type(exponent).__name__}")
        data = self._data**exponent
        if not wants_grad(self):
            return Tensor._make(data)
        return record(PowBackward0, data, (self,), {"exponent": exponent, "self": save(self)})
    try:
        data = self._data**exponent._data
    except ValueError:
        raise broadcast_error(self, exponent) from None
    if not wants_grad(self, exponent):
        return Tensor._make(data)
    saved = {"exponent": save(exponent), "self": save(self)}
    return record(PowBackward1, data, (self, exponent), saved, "result", broadcasts=True)


def rpow(self, base):
    """base ** self, for a number `base`."""
    if isinstance(base, Tensor):
        return pow(base, self)
    data = np.asarray(base, dtype=self._data.dtype) ** self._data
    if not wants_grad(self):
        return Tensor._make(data)
    return record(PowBackward2, data, (self,), {"exponent": save(self), "self": base}, "result")
