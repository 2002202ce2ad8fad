"""In-place operations: they change the tensor's memory, bump its version, and (when recording)
make the tensor's grad_fn the new operation, as PyTorch does."""

import numpy as np

from .. import dtypes
from ..grad_mode import _State
from ..node import Node, edge_of
from ..tensor import Tensor
from . import arithmetic
from .recording import SCALAR_TYPE_NAMES, as_tensor, result_type
from .shape import MULTI_OUTPUT_VIEWS


class ZeroBackward0(Node):
    """self.zero_():  d self = 0."""

    __slots__ = ()

    def apply(self, g):
        return (g * 0,)


class FillBackward2(ZeroBackward0):
    """self.fill_(value):  d self = 0."""

    __slots__ = ()


def _check_inplace_allowed(self):
    """PyTorch's errors for in-place changes to a leaf that requires grad, a view of one, or one
    of the views split or unbind return."""
    if not _State.enabled or not self.requires_grad:
        return  # e.g. a detached tensor: it shares the version counter, but is no view for autograd
    if isinstance(self.grad_fn, MULTI_OUTPUT_VIEWS):
        op = self.grad_fn.name().removesuffix("Backward0")
        raise RuntimeError(
            f"Output {self._output_nr} of {op} is a view and is being modified inplace. This view "
            "is the output of a function that returns multiple views. Such functions do not allow "
            "the output views to be modified inplace. You should replace the inplace operation by "
            "an out-of-place one."
        )
    if self.grad_fn is None:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    owner = self._version_owner
    if owner is not None and owner.requires_grad:
        if owner.grad_fn is None:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an in-place operation."
            )
        raise RuntimeError(
            "mini_autograd does not support in-place operations on a view of a tensor that requires "
            "grad; write the result to a new tensor instead (out-of-place)."
        )


def _check_castable(self, other, true_division=False):
    """PyTorch's error when the result of `self op other` cannot be written back into self."""
    dtype = result_type(self, other)
    if true_division and dtype.kind != "f":
        dtype = dtypes.default_float()
    target = self._data.dtype
    if (dtype.kind == "f" and target.kind != "f") or (dtype.kind != "b" and target.kind == "b"):
        raise RuntimeError(
            f"result type {SCALAR_TYPE_NAMES[dtype.name]} can't be cast to the desired output "
            f"type {SCALAR_TYPE_NAMES[target.name]}"
        )
    return as_tensor(other, dtype)


def _binary_inplace(self, other, recorded_op, numpy_op, alpha=1):
    """self = self (op) alpha * other, written into self's memory; recorded like the out-of-place op."""
    other = _check_castable(self, other)
    _check_inplace_allowed(self)
    try:
        shape = np.broadcast_shapes(self._data.shape, other._data.shape)
    except ValueError:
        raise arithmetic.broadcast_error(self, other) from None
    if shape != self._data.shape:  # checked first, so a failed op leaves self untouched
        raise RuntimeError(
            f"output with shape {list(self._data.shape)} doesn't match the broadcast shape {list(shape)}"
        )
    if _State.enabled and (self.requires_grad or other.requires_grad):
        source = self
        if recorded_op is arithmetic.mul and other.requires_grad:
            # The node must keep self's value from before the change, so it gets a copy.
            source = Tensor._make(
                self._data.copy(), self.requires_grad, self.grad_fn, self._output_nr
            )
        out = recorded_op(source, other) if alpha == 1 else recorded_op(source, other, alpha)
        self.grad_fn, self.requires_grad = out.grad_fn, True
        result = out._data
    else:
        result = numpy_op(self._data, other._data if alpha == 1 else alpha * other._data)
    np.copyto(self._data, result, casting="same_kind")
    self._bump_version()
    return self


def add_(self, other, alpha=1):
    """self += alpha * other, in place."""
    return _binary_inplace(self, other, arithmetic.add, np.add, alpha)


def sub_(self, other, alpha=1):
    """self -= alpha * other, in place."""
    return _binary_inplace(self, other, arithmetic.sub, np.subtract, alpha)


def mul_(self, other):
    """self *= other, in place."""
    return _binary_inplace(self, other, arithmetic.mul, np.multiply)


def div_(self, other):
    """self /= other, in place (recorded only outside grad mode or on tensors without grad)."""
    other = _check_castable(self, other, true_division=True)
    if _State.enabled and (self.requires_grad or other.requires_grad):
        raise RuntimeError(
            "mini_autograd records div_ only under no_grad(); use `x = x / y` instead"
        )
    _check_inplace_allowed(self)
    np.copyto(self._data, self._data / other._data, casting="same_kind")
    self._bump_version()
    return self


def _fill(self, value, node_type):
    _check_inplace_allowed(self)
    self._data[...] = value
    self._bump_version()
    if _State.enabled and self.requires_grad:
        self.grad_fn = node_type((edge_of(self),))
    return self


def zero_(self):
    """Set every element to 0, in place."""
    return _fill(self, 0, ZeroBackward0)


def fill_(self, value):
    """Set every element to `value`, in place."""
    return _fill(self, value, FillBackward2)


def copy_(self, src):
    """Copy src's values into self (used under no_grad, e.g. to load weights)."""
    src = as_tensor(src, self._data.dtype)
    if _State.enabled and (self.requires_grad or src.requires_grad):
        raise RuntimeError(
            "mini_autograd supports copy_ only under no_grad(); wrap it in `with no_grad():`"
        )
    self._data[...] = src._data
    self._bump_version()
    return self
