"""The zeros a backward formula makes outside the graph (the .Scalar overloads that formulas
call, mul_scalar and its relatives, are in the table of derivatives.py)."""

import numpy as np

from ..tensor import Tensor


def zero_outside_graph(like):
    """A 0-d zero in like's dtype, outside the graph (PyTorch's at::zeros({}, grad.options()))."""
    return Tensor._make(np.zeros((), like._data.dtype))


def zeros_outside_graph(like):
    """Zeros shaped as `like`, outside the graph (PyTorch's zeros_like in a backward formula)."""
    return Tensor._make(np.zeros_like(like._data))
