"""Data types: thin names over numpy dtypes, printed and compared like PyTorch's."""

import numpy as np


class dtype:
    """A tensor element type; `is_floating_point` says whether it can require gradients."""

    __slots__ = ("name", "numpy", "is_floating_point")

    def __init__(self, name):
        self.name = name
        self.numpy = np.dtype(name)
        self.is_floating_point = self.numpy.kind == "f"

    def __repr__(self):
        return f"mini_autograd.{self.name}"


float16 = dtype("float16")
float32 = dtype("float32")
float64 = dtype("float64")
int32 = dtype("int32")
int64 = dtype("int64")
bool_ = dtype("bool")
bool_.name = "bool"

_BY_NUMPY = {d.numpy: d for d in (float16, float32, float64, int32, int64, bool_)}
DEFAULT_FLOAT = np.dtype("float32")


def from_numpy(np_dtype):
    """The mini_autograd dtype for a numpy dtype."""
    try:
        return _BY_NUMPY[np_dtype]
    except KeyError:
        raise TypeError(f"mini_autograd has no dtype for numpy's {np_dtype}") from None


def to_numpy(d):
    """The numpy dtype for a mini_autograd dtype, a numpy dtype or a torch dtype."""
    if d is None:
        return None
    if isinstance(d, dtype):
        return d.numpy
    name = str(d).replace("torch.", "")
    try:
        return np.dtype(name)
    except TypeError:
        raise TypeError(f"unknown dtype {d!r}; use mini_autograd.float32 or float64") from None
