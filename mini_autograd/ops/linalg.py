"""Matrix products: mm, mv, dot and matmul (which picks one of them, as PyTorch does)."""

import numpy as np

from ..node import Node
from ..tensor import Tensor
from .recording import record, save, wants_grad
from .shape import squeeze_dim_of_matmul, unsqueeze


def _strides(array):
    # Saved only for an input that needs a gradient (otherwise PyTorch saves an empty tuple).
    return tuple(s // array.itemsize for s in array.strides)


class MmBackward0(Node):
    """out = self @ mat2:  d self = g @ mat2.T,  d mat2 = self.T @ g."""

    __slots__ = ()

    def apply(self, g):
        return (
            mm(g, self.saved("mat2").t()) if self.needs_input_grad(0) else None,
            mm(self.saved("self").t(), g) if self.needs_input_grad(1) else None,
        )


class BmmBackward0(Node):
    """out = self @ mat2 per batch:  d self = g @ mat2^T,  d mat2 = self^T @ g."""

    __slots__ = ()

    def apply(self, g):
        return (
            bmm(g, self.saved("mat2").transpose(1, 2)) if self.needs_input_grad(0) else None,
            bmm(self.saved("self").transpose(1, 2), g) if self.needs_input_grad(1) else None,
        )


class MvBackward0(Node):
    """out = self @ vec:  d self = outer(g, vec),  d vec = self.T @ g."""

    __slots__ = ()

    def apply(self, g):
        return (
            unsqueeze(g, 1) * self.saved("vec") if self.needs_input_grad(0) else None,
            mv(self.saved("self").t(), g) if self.needs_input_grad(1) else None,
        )


class DotBackward0(Node):
    """out = self . tensor:  d self = g * tensor,  d tensor = g * self."""

    __slots__ = ()

    def apply(self, g):
        return (
            g * self.saved("tensor") if self.needs_input_grad(0) else None,
            g * self.saved("self") if self.needs_input_grad(1) else None,
        )


_CPP_NAMES = {"float64": "double", "float32": "float", "float16": "c10::Half", "int64": "long int"}
_SCALAR_NAMES = {"float64": "Double", "float32": "Float", "float16": "Half", "int64": "Long"}


def _check_dtypes(a, b, op="mm"):
    """PyTorch's dtype-mismatch error (each product words it its own way)."""
    if a._data.dtype != b._data.dtype:
        x, y = a._data.dtype.name, b._data.dtype.name
        if op == "dot":
            raise RuntimeError(
                "dot : expected both vectors to have same dtype, but found "
                f"{_SCALAR_NAMES.get(x, x)} and {_SCALAR_NAMES.get(y, y)}"
            )
        if op == "bmm":
            raise RuntimeError(
                f"expected scalar type {_SCALAR_NAMES.get(x, x)} but found {_SCALAR_NAMES.get(y, y)}"
            )
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {_CPP_NAMES.get(x, x)} != {_CPP_NAMES.get(y, y)}"
        )


def mm(self, mat2):
    """Matrix product of two 2-D tensors."""
    if self._data.ndim != 2 or mat2._data.ndim != 2:
        raise RuntimeError(
            f"self must be a matrix (got {self._data.ndim}-D and {mat2._data.ndim}-D)"
        )
    if self._data.shape[1] != mat2._data.shape[0]:
        (n, k), (k2, m) = self._data.shape, mat2._data.shape
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")
    _check_dtypes(self, mat2)
    data = self._data @ mat2._data
    if not wants_grad(self, mat2):
        return Tensor._make(data)
    saved = {
        "mat2": save(mat2) if self.requires_grad else None,
        "mat2_sym_sizes": mat2._data.shape,
        "mat2_sym_strides": _strides(mat2._data) if mat2.requires_grad else (),
        "self": save(self) if mat2.requires_grad else None,
        "self_sym_sizes": self._data.shape,
        "self_sym_strides": _strides(self._data) if self.requires_grad else (),
    }
    return record(MmBackward0, data, (self, mat2), saved)


def bmm(self, mat2):
    """Batched matrix product of two 3-D tensors."""
    for name, t in (("batch1", self), ("batch2", mat2)):
        if t._data.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    expected = [self._data.shape[0], self._data.shape[2]]
    if list(mat2._data.shape[:2]) != expected:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: {expected} but got: "
            f"{list(mat2._data.shape[:2])}."
        )
    _check_dtypes(self, mat2, "bmm")
    data = self._data @ mat2._data
    if not wants_grad(self, mat2):
        return Tensor._make(data)
    saved = {
        "mat2": save(mat2) if self.requires_grad else None,
        "self": save(self) if mat2.requires_grad else None,
    }
    return record(BmmBackward0, data, (self, mat2), saved)


def mv(self, vec):
    """Matrix times vector."""
    _check_dtypes(self, vec)
    if self._data.shape[1] != vec._data.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({self._data.shape[0]}), mat ({self._data.shape[0]}x"
            f"{self._data.shape[1]}), vec ({vec._data.shape[0]})"
        )
    data = self._data @ vec._data
    if not wants_grad(self, vec):
        return Tensor._make(data)
    saved = {
        "self": save(self) if vec.requires_grad else None,
        "vec": save(vec) if self.requires_grad else None,
    }
    return record(MvBackward0, data, (self, vec), saved)


def dot(self, other):
    """Inner product of two vectors."""
    _check_dtypes(self, other, "dot")
    if self._data.shape != other._data.shape:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{self._data.size}] and src "
            f"[{other._data.size}] to have the same number of elements, but got {self._data.size} "
            f"and {other._data.size} elements respectively"
        )
    data = np.asarray(self._data @ other._data)
    if not wants_grad(self, other):
        return Tensor._make(data)
    saved = {
        "self": save(self) if other.requires_grad else None,
        "tensor": save(other) if self.requires_grad else None,
    }
    return record(DotBackward0, data, (self, other), saved)


def matmul(self, other):
    """self @ other, dispatched like torch.matmul (dot, mv, mm, or folded/batched mm)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"matmul(): argument 'other' must be Tensor, not {type(other).__name__}")
    a, b = self._data.ndim, other._data.ndim
    if a == 0 or b == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {a}D and {b}D"
        )
    if a == 1 and b == 1:
        return dot(self, other)
    if a == 2 and b == 1:
        return mv(self, other)
    if a == 1 and b == 2:
        return squeeze_dim_of_matmul(mm(unsqueeze(self, 0), other), 0)
    if a == 2 and b == 2:
        return mm(self, other)
    if b == 2:
        # (..., n, k) @ (k, m): fold the leading dims into one mm, then unfold.
        folded = mm(self.reshape(-1, self._data.shape[-1]), other)
        return _unsafe_view(folded, self._data.shape[:-1] + (other._data.shape[1],))
    if a == 3 and b == 3 and self._data.shape[0] == other._data.shape[0]:
        batch = self._data.shape[0]
        lhs = self.expand(*self._data.shape).reshape(batch, *self._data.shape[1:])
        rhs = other.expand(*other._data.shape).reshape(batch, *other._data.shape[1:])
        out = bmm(lhs, rhs)
        return _unsafe_view(out, out._data.shape)
    raise RuntimeError(
        f"mini_autograd's matmul supports 1-D/2-D operands, (..., n, k) @ (k, m) and equal-batch "
        f"3-D @ 3-D; got {tuple(self.shape)} @ {tuple(other.shape)}"
    )


def _unsafe_view(t, shape):
    from .shape import UnsafeViewBackward0

    data = t._data.reshape(shape)
    if not wants_grad(t):
        return Tensor._make(data)
    return record(UnsafeViewBackward0, data, (t,), {"self_sym_sizes": t._data.shape})


class AddmmBackward0(Node):
    """out = beta * self + alpha * (mat1 @ mat2):  d self = g,  d mat1 = g @ mat2.T,  d mat2 = mat1.T @ g."""

    __slots__ = ()

    def apply(self, g):
        from .recording import sum_to

        return (
            sum_to(g, self._info) if self.needs_input_grad(0) else None,
            mm(g, self.saved("mat2").t()) if self.needs_input_grad(1) else None,
            mm(self.saved("mat1").t(), g) if self.needs_input_grad(2) else None,
        )


def addmm(self, mat1, mat2):
    """self + mat1 @ mat2 (the bias add of a linear layer, fused as in PyTorch)."""
    if mat1._data.shape[1] != mat2._data.shape[0]:
        (n, k), (k2, m) = mat1._data.shape, mat2._data.shape
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")
    data = mat1._data @ mat2._data
    data += self._data
    if not wants_grad(self, mat1, mat2):
        return Tensor._make(data)
    saved = {
        "alpha": 1,
        "beta": 1,
        "mat1": save(mat1) if mat2.requires_grad else None,
        "mat1_sym_sizes": mat1._data.shape,
        "mat1_sym_strides": _strides(mat1._data) if mat1.requires_grad else (),
        "mat2": save(mat2) if mat1.requires_grad else None,
        "mat2_sym_sizes": mat2._data.shape,
        "mat2_sym_strides": _strides(mat2._data) if mat2.requires_grad else (),
    }
    return record(AddmmBackward0, data, (self, mat1, mat2), saved, info=self._data.shape)
