"""Arithmetic with a Python number as PyTorch's backward formulas write it: the .Scalar
overloads (mul.Scalar records MulBackward1, not MulBackward0), and the zeros a formula makes
outside the graph."""

import numpy as np

from ..node import Node
from ..tensor import Tensor
from .recording import record


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


def mul_scalar(self, other):
    """self * a number, as PyTorch's backward formulas write it (mul.Scalar: MulBackward1)."""
    return record(MulBackward1, self._data * other, (self,), {"other": other})


def div_scalar(self, other):
    """self / a number, as PyTorch's backward formulas write it (div.Scalar: DivBackward1)."""
    return record(DivBackward1, self._data / other, (self,), {"other": other})


def add_scalar(self, other):
    """self + a number, as PyTorch's backward formulas write it (add.Scalar: AddBackward1)."""
    return record(AddBackward1, self._data + other, (self,))


def sub_scalar(self, other):
    """self - a number, as PyTorch's backward formulas write it (sub.Scalar: SubBackward1)."""
    return record(SubBackward1, self._data - other, (self,))


def zero_outside_graph(like):
    """A 0-d zero in like's dtype, outside the graph (PyTorch's at::zeros({}, grad.options()))."""
    return Tensor._make(np.zeros((), like._data.dtype))


def zeros_outside_graph(like):
    """Zeros shaped as `like`, outside the graph (PyTorch's zeros_like in a backward formula)."""
    return Tensor._make(np.zeros_like(like._data))
