"""Comparisons: elementwise ones give bool tensors outside the graph; equal and allclose a bool."""

import numpy as np

from ..core import dtypes
from ..core.errors import SCALAR_TYPE_NAMES, scalar_type_name
from ..core.tensor import Tensor
from .broadcasting import broadcast_shape
from .promotion import promote
from .recording import check_tensor


def _compare(op):
    def compare(self, other):
        if not isinstance(other, (Tensor, bool, int, float, np.number, np.bool_)):
            return NotImplemented  # so `x == None` is False, as in PyTorch
        other, a, b = promote(self, other)
        broadcast_shape(self, other)
        return Tensor._make(np.asarray(op(a, b)))

    compare.__doc__ = f"Elementwise {op.__name__}, in the promoted dtype (a bool tensor)."
    return compare


eq = _compare(np.equal)
ne = _compare(np.not_equal)
lt = _compare(np.less)
le = _compare(np.less_equal)
gt = _compare(np.greater)
ge = _compare(np.greater_equal)


def equal(self, other):
    """True when both have the same shape and the same values (NaN is not equal to itself)."""
    check_tensor(other, "equal", "other", 2)
    return self._data.shape == other._data.shape and bool(np.all(self._data == other._data))


def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|self - other| <= atol + rtol * |other| elementwise, or equal (infinities included)."""
    check_tensor(other, "isclose", "other", 2)
    if self._data.dtype != other._data.dtype:
        raise RuntimeError(f"{scalar_type_name(self)} did not match {scalar_type_name(other)}")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if value < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {value:g}")
    broadcast_shape(self, other)
    a, b = self._data, other._data
    close = a == b
    if equal_nan and a.dtype.kind == "f":
        close |= np.isnan(a) & np.isnan(b)
    if rtol or atol:
        if a.dtype.kind != "f":
            a, b = a.astype(dtypes.default_float()), b.astype(dtypes.default_float())
        with np.errstate(invalid="ignore"):  # inf - inf: not close, as in PyTorch
            error = np.abs(a - b)
            close |= np.isfinite(error) & (error <= atol + np.abs(rtol * b))
    return Tensor._make(np.asarray(close))


def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when isclose(self, other) holds for every element (a Python bool)."""
    check_tensor(other, "allclose", "other", 2)
    return bool(isclose(self, other, rtol, atol, equal_nan)._data.all())


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of `elements` is among test_elements (a bool tensor; not differentiable)."""
    a = elements._data if isinstance(elements, Tensor) else np.asarray(elements)
    b = test_elements._data if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return Tensor._make(np.isin(a, b, assume_unique=assume_unique, invert=invert))


def signbit(self):
    """Whether each element's sign bit is set (True for -0.0 too; a bool tensor)."""
    return Tensor._make(np.signbit(self._data))


# --- elementwise tests and logical operations: bool tensors, outside the graph ---------------
def _predicate(name, numpy_test, what):
    def predicate(self):
        check_tensor(self, name, "input", 1)
        return Tensor._make(np.asarray(numpy_test(self._data)))

    predicate.__name__ = predicate.__qualname__ = name
    predicate.__doc__ = f"Whether each element {what} (a bool tensor)."
    return predicate


def _logical(name, numpy_op):
    def logical(self, other):
        check_tensor(self, name, "input", 1)
        check_tensor(other, name, "other", 2)
        broadcast_shape(self, other)
        return Tensor._make(np.asarray(numpy_op(self._data, other._data)))

    logical.__name__ = logical.__qualname__ = name
    logical.__doc__ = f"Elementwise {numpy_op.__name__} of the elements' truth (non-zero) values."
    return logical


def _all_true(array):
    return np.ones(array.shape, dtype=bool)


PREDICATES = {
    name: _predicate(name, test, what)
    for name, test, what in (
        ("isnan", np.isnan, "is NaN"),
        ("isinf", np.isinf, "is +inf or -inf"),
        ("isfinite", np.isfinite, "is finite (neither infinite nor NaN)"),
        ("isposinf", np.isposinf, "is +inf"),
        ("isneginf", np.isneginf, "is -inf"),
        ("isreal", _all_true, "is real (all of a real tensor's are)"),
        ("logical_not", np.logical_not, "is zero"),
    )
}
LOGICAL = {
    name: _logical(name, op)
    for name, op in (
        ("logical_and", np.logical_and),
        ("logical_or", np.logical_or),
        ("logical_xor", np.logical_xor),
    )
}


def bitwise_not(self):
    """~self: each bool negated, each integer's bits flipped (floats are refused, as in torch)."""
    if self._data.dtype.kind in "fc":
        name = SCALAR_TYPE_NAMES.get(self._data.dtype.name, self._data.dtype.name)
        raise NotImplementedError(f"\"bitwise_not_cpu\" not implemented for '{name}'")
    return Tensor._make(np.invert(self._data))


def invert(self):
    """The ~ operator: bitwise_not of an integer or bool tensor."""
    if self._data.dtype.kind in "fc":
        raise TypeError(
            "~ (operator.invert) is only implemented on integer and Boolean-type tensors"
        )
    return bitwise_not(self)
