"""Type promotion: the dtype of an operation on tensors and Python numbers, by PyTorch's rules,
and the wrapped numbers that stand for Python numbers in it."""

import numpy as np

from ..core import dtypes
from ..core.tensor import Tensor
from ..core.tensor_data import other_library


class WrappedNumber(Tensor):
    """A Python number made a 0-d tensor for an operation: PyTorch's "wrapped number".

    It keeps the number as bool, int64 or float64 (8 bytes for `x * 4` or `x / 2.5`) whatever
    the dtype of the tensor it meets, and counts as a number, not as a 0-d tensor, in type
    promotion: a node saves it as it is (MulBackward0's `other`), and the gradient it scales
    keeps its own dtype.
    """

    __slots__ = ()
    _is_wrapped_number = True


# The dtype of the wrapped number of a Python bool, int and float
_WRAPPED_DTYPES = {bool: np.dtype(np.bool_), int: np.dtype(np.int64), float: np.dtype(np.float64)}


def wrapped_number(x):
    """x as PyTorch wraps a number: a 0-d bool (Python bool), int64 (ints) or float64 tensor."""
    dtype = _WRAPPED_DTYPES.get(type(x))
    if dtype is None:  # numpy's numbers (its bools count as floats, as torch reads them)
        if isinstance(x, (int, np.integer)):
            dtype = _WRAPPED_DTYPES[int]
        elif isinstance(x, (float, np.floating, np.bool_)):
            dtype = _WRAPPED_DTYPES[float]
        else:
            raise _not_a_number(x)
    number = Tensor._make(np.asarray(x, dtype))
    number.__class__ = WrappedNumber
    return number


def number_dtype(x):
    """The dtype a Python number (or a wrapped one) counts as: bool, int64, or the default float."""
    if type(x) is WrappedNumber:
        x = x._data.item()
    if isinstance(x, bool):
        return np.dtype(bool)
    if isinstance(x, (int, np.integer)):
        return np.dtype(np.int64)
    return dtypes.default_float()


def promote_types(a, b):
    """The smaller dtype that holds both (a float always wins over an integer, as in PyTorch)."""
    if (a.kind == "f") != (b.kind == "f"):
        return a if a.kind == "f" else b
    return np.promote_types(a, b)


def _category(d):
    return "bif".index(d.kind if d.kind != "u" else "i")


def result_type(*operands):
    """The dtype of an operation on tensors and Python numbers, by PyTorch's rules.

    Tensors with dimensions decide; a 0-d tensor, then a number, counts only when it is of a
    higher kind (bool < integer < float): int64 tensor * 2.5 is float32 (the default float),
    float32 tensor + float64 0-d tensor stays float32, int64 tensor + float64 0-d is float64.
    A wrapped number counts as the number it wraps.
    """
    tiers = [None, None, None]  # tensors with dimensions, 0-d tensors, numbers
    for x in operands:
        if isinstance(x, Tensor) and type(x) is not WrappedNumber:
            tier, dtype = (0 if x._data.ndim else 1), x._data.dtype
        else:
            tier, dtype = 2, number_dtype(x)
        tiers[tier] = dtype if tiers[tier] is None else promote_types(tiers[tier], dtype)
    result = None
    for dtype in tiers:
        if dtype is not None and (result is None or _category(dtype) > _category(result)):
            result = dtype if result is None else promote_types(result, dtype)
    return result


def as_tensor(x, dtype):
    """`x` as a Tensor; a Python number becomes a 0-d tensor of `dtype`."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (int, float, bool, np.number, np.bool_)):
        return Tensor._make(np.asarray(x, dtype=dtype))
    raise _not_a_number(x)


def _not_a_number(x):
    """The TypeError for an operand that is neither a mini_autograd Tensor nor a number."""
    foreign = other_library(x)
    if foreign:
        return TypeError(f"expected a mini_autograd Tensor or a number, {foreign}")
    return TypeError(
        f"expected a mini_autograd Tensor or a number, got {type(x).__name__}; "
        "wrap data with mini_autograd.tensor(...)"
    )


def float_values(tensor):
    """The tensor's values; integers and bools as the default float (PyTorch's rule for exp, sin...)."""
    data = tensor._data
    return data if data.dtype.kind == "f" else data.astype(dtypes.default_float())


def promote(self, other):
    """(other as a tensor, self's values, other's values), both in the dtype of the result.

    A number `other` comes back as its wrapped number, which is what a node saves of it.
    """
    dtype = self._data.dtype
    if isinstance(other, Tensor):
        # (a number, wrapped or not, never changes a float tensor's dtype)
        same = dtype.kind == "f" if type(other) is WrappedNumber else other._data.dtype == dtype
        if not same or type(self) is WrappedNumber:
            dtype = result_type(self, other)
        elif other._data.dtype == dtype:
            return other, self._data, other._data  # nothing to convert (the usual case)
        return other, self._data.astype(dtype, copy=False), other._data.astype(dtype, copy=False)
    number = wrapped_number(other)
    if dtype.kind != "f" or type(self) is WrappedNumber:
        dtype = result_type(self, number)
    return number, self._data.astype(dtype, copy=False), np.asarray(other, dtype)
