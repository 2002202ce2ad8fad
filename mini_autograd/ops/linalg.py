"""Matrix products: mm, mv, dot and matmul (which picks one of them, as PyTorch does), addmm,
outer; and the parts of a matrix: trace, diag, tril and triu."""

import numpy as np

from ..core.errors import CPP_TYPE_NAMES, SCALAR_TYPE_NAMES
from ..core.node import Node
from ..core.tensor import Tensor
from .arithmetic import mul
from .broadcasting import broadcasting
from .derivatives import (
    AddmmBackward0,
    BmmBackward0,
    DotBackward0,
    MmBackward0,
    MvBackward0,
    TraceBackward0,
    TrilBackward0,
    TriuBackward0,
)
from .recording import record, saved_for_each_other
from .shape import UnsafeViewBackward0, squeeze_dim_of_matmul, unsqueeze


def _saved_matrices(first, a, second, b):
    """A matrix product's saved inputs (in PyTorch's order, by name): each matrix for the other's
    gradient, its sizes, and its strides where it needs a gradient itself (else PyTorch saves ())."""
    saved = {}
    for name, matrix, other in ((first, a, b), (second, b, a)):
        saved[name] = matrix if other.requires_grad else None
        saved[f"{name}_sym_sizes"] = matrix._data.shape
        saved[f"{name}_sym_strides"] = _strides(matrix._data) if matrix.requires_grad else ()
    return saved


def _strides(array):
    """The strides in elements, as PyTorch counts them (numpy's are in bytes)."""
    return tuple(s // array.itemsize for s in array.strides)


def _check_dtypes(a, b, op="mm"):
    """PyTorch's dtype-mismatch error (each product words it its own way)."""
    if a._data.dtype != b._data.dtype:
        x, y = a._data.dtype.name, b._data.dtype.name
        if op == "dot":
            raise RuntimeError(
                "dot : expected both vectors to have same dtype, but found "
                f"{SCALAR_TYPE_NAMES[x]} and {SCALAR_TYPE_NAMES[y]}"
            )
        if op == "bmm":
            raise RuntimeError(
                f"expected scalar type {SCALAR_TYPE_NAMES[x]} but found {SCALAR_TYPE_NAMES[y]}"
            )
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {CPP_TYPE_NAMES[x]} != {CPP_TYPE_NAMES[y]}"
        )


def mm(self, mat2):
    """Matrix product of two 2-D tensors."""
    for name, operand in (("self", self), ("mat2", mat2)):
        if operand._data.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix")
    if self._data.shape[1] != mat2._data.shape[0]:
        (n, k), (k2, m) = self._data.shape, mat2._data.shape
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")
    _check_dtypes(self, mat2)
    data = self._data @ mat2._data
    return record(MmBackward0, data, (self, mat2), _saved_matrices("mat2", mat2, "self", self))


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
    saved = saved_for_each_other("mat2", mat2, "self", self)
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
    saved = saved_for_each_other("self", self, "vec", vec)
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
    saved = saved_for_each_other("self", self, "tensor", other)
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
    if _should_fold(self, other):
        return _folded(self, other)
    return _batched(self, other)


def _should_fold(self, other):
    """PyTorch's choice (should_fold) for a product of a 3-D or larger tensor with a vector or a
    matrix: one mm or mv on the larger tensor flattened, when that needs no copy of it, or when
    the smaller one requires grad (a smaller backward then)."""
    a, b = self._data.ndim, other._data.ndim
    larger, smaller = (self, other) if a >= b else (other, self)
    if not (larger._data.ndim >= 3 and smaller._data.ndim <= 2):
        return False
    if smaller.requires_grad:
        return True
    if a == 2:
        return False
    data = larger._data if a >= b else np.swapaxes(larger._data, -1, -2)
    if data.size == 0:
        return True
    shape, strides = data.shape, _strides(data)
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(data.ndim - 2))


def _folded(self, other):
    """The larger tensor flattened to a matrix (its transpose when it is on the right), one mm or
    mv, the result unfolded (and transposed back)."""
    transpose = other._data.ndim > self._data.ndim
    t1 = other.mT if transpose else self
    t2 = (self.t() if self._data.ndim == 2 else self) if transpose else other
    shape = t1._data.shape[:-1]
    folded = t1.reshape(-1, t1._data.shape[-1])
    if t2._data.ndim == 2:
        out = _unsafe_view(mm(folded, t2), shape + (t2._data.shape[1],))
        return out.mT.contiguous() if transpose else out
    return _unsafe_view(mv(folded, t2), shape)


def _batched(self, other):
    """Both operands expanded to the broadcast batch dims and flattened to 3-D, one bmm, the
    result viewed with the batch dims (PyTorch's matmul for 3-D and larger operands)."""
    a, b = self._data.ndim, other._data.ndim
    n, m1 = self._data.shape[-2] if a > 1 else 1, self._data.shape[-1]
    m2 = other._data.shape[-2] if b > 1 else other._data.shape[0]
    p = other._data.shape[-1] if b > 1 else 1
    batches = self._data.shape[: max(a - 2, 0)], other._data.shape[: max(b - 2, 0)]
    batch = broadcasting(np.broadcast_shapes, *batches, *batches)
    count = int(np.prod(batch))
    lhs = self.expand(*batch, n, m1).reshape(count, n, m1)
    if b == 1:
        rhs = unsqueeze(other.expand(*batch, m2).reshape(count, m2), 2)
    else:
        rhs = other.expand(*batch, m2, p).reshape(count, m2, p)
    shape = batch + ((n,) if a > 1 else ()) + ((p,) if b > 1 else ())
    out = bmm(lhs, rhs)
    return _unsafe_view(out.squeeze(-1) if b == 1 else out, shape)


def _unsafe_view(t, shape):
    data = t._data.reshape(shape)
    return record(UnsafeViewBackward0, data, (t,), {"self_sym_sizes": t._data.shape})


def addmm(self, mat1, mat2, *, beta=1, alpha=1):
    """beta * self + alpha * (mat1 @ mat2), self broadcast (a linear layer's bias add, fused).

    backward: beta * g to self, alpha * g @ mat2.T to mat1, alpha * mat1.T @ g to mat2.
    """
    for name, t in (("self", self), ("mat1", mat1)):
        if t._data.dtype != mat2._data.dtype:
            raise RuntimeError(
                f"{name} and mat2 must have the same dtype, but got "
                f"{SCALAR_TYPE_NAMES[t._data.dtype.name]} and "
                f"{SCALAR_TYPE_NAMES[mat2._data.dtype.name]}"
            )
    if mat1._data.shape[1] != mat2._data.shape[0]:
        (n, k), (k2, m) = mat1._data.shape, mat2._data.shape
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")
    data = mat1._data @ mat2._data
    if alpha != 1:
        data *= alpha
    if beta != 0:  # beta = 0 ignores self, NaN included (PyTorch's rule)
        data += self._data if beta == 1 else beta * self._data
    saved = {"alpha": alpha, "beta": beta, **_saved_matrices("mat1", mat1, "mat2", mat2)}
    return record(AddmmBackward0, data, (self, mat1, mat2), saved, broadcasts=True)


def outer(self, vec2):
    """The outer product of two vectors, out[i, j] = self[i] * vec2[j], recorded as PyTorch
    computes it: self.reshape(-1, 1) * vec2; backward: g @ vec2 to self, g.T @ self to vec2."""
    for name, t in (("self", self), ("vec2", vec2)):
        if t._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t._data.ndim}-D")
    return mul(self.reshape(self._data.shape[0], 1), vec2)


def _diagonal_selector(rows, cols, offset):
    """The 0/1 matrix E with E @ diag = the flattened (rows x cols) matrix with diag on its
    `offset` diagonal, so that flat.T @ E reads that diagonal back."""
    start_row, start_col = (0, offset) if offset >= 0 else (-offset, 0)
    length = max(0, min(rows - start_row, cols - start_col))
    selector = np.zeros((rows * cols, length))
    i = np.arange(length)
    selector[(start_row + i) * cols + start_col + i, i] = 1
    return selector


def trace(self):
    """The sum of the diagonal of a matrix (integers give int64); backward: g on the diagonal."""
    if self._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self._data.ndim}")
    if self._data.dtype == np.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    wide = np.int64 if self._data.dtype.kind in "iu" else None  # PyTorch's for integers
    data = np.asarray(np.trace(self._data, dtype=wide))
    return record(TraceBackward0, data, (self,), {"self_sym_sizes": self._data.shape})


class DiagonalBackward0_copy(Node):  # noqa: N801 (PyTorch's name)
    """out = the `offset` diagonal of self (a copy):  d self = zeros with g on that diagonal."""

    __slots__ = ()

    def apply(self, g):
        s = self._saved
        rows, cols = s["self_sym_sizes"]
        selector = Tensor._make(_diagonal_selector(rows, cols, s["offset"]).astype(g._data.dtype))
        return (mv(selector, g).reshape(rows, cols),)


class DiagEmbedBackward0(Node):
    """out = a matrix with self on its `offset` diagonal:  d self = that diagonal of g."""

    __slots__ = ()

    def apply(self, g):
        rows, cols = g._data.shape
        selector = _diagonal_selector(rows, cols, self._saved["offset"]).astype(g._data.dtype)
        return (mv(Tensor._make(selector.T.copy()), g.reshape(rows * cols)),)


def diag(self, diagonal=0):
    """A vector: the `diagonal` diagonal of a matrix; a matrix: the vector on that diagonal.

    backward: g put back on (or read off) that diagonal.
    """
    x = self._data
    if x.ndim == 2:
        data = np.diagonal(x, diagonal).copy()
        saved = {"dim1": 0, "dim2": 1, "offset": diagonal, "self_sym_sizes": x.shape}
        return record(DiagonalBackward0_copy, data, (self,), saved)
    if x.ndim != 1:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x.ndim}D")
    data = np.diag(x, diagonal)
    return record(DiagEmbedBackward0, data, (self,), {"dim1": -2, "dim2": -1, "offset": diagonal})


def tril(self, diagonal=0):
    """The lower triangle of the matrices (last two dims): 0 above the `diagonal` diagonal.

    backward: tril(g).
    """
    return _triangle(self, diagonal, "tril", np.tril, TrilBackward0)


def triu(self, diagonal=0):
    """The upper triangle of the matrices (last two dims): 0 below the `diagonal` diagonal.

    backward: triu(g).
    """
    return _triangle(self, diagonal, "triu", np.triu, TriuBackward0)


def _triangle(self, diagonal, name, numpy_fn, node_type):
    if self._data.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    data = numpy_fn(self._data, diagonal)
    return record(node_type, data, (self,), {"diagonal": diagonal})
