"""Copying elements by position: gather, index_select, index_add, repeat, flip, roll,
masked_select (new memory, not views).

Their backwards put the gradient back where each element came from: scatter_add, index_add.
"""

import numpy as np

from ..core.errors import warn_once
from ..core.node import Node
from ..core.tensor import Tensor
from .broadcasting import broadcasting, sum_to
from .derivatives import FlipBackward0, mul_scalar
from .recording import check_tensor, record
from .shape import normalize_dim, shape_arg


class GatherBackward0(Node):
    """out = self.gather(dim, index):  d self = zeros with g added at index along dim."""

    __slots__ = ()

    def apply(self, g):
        s = self._saved
        shape = self.saved("self")._data.shape
        return (scatter_into_zeros(g, shape, s["dim"], self.saved("index"), ScatterAddBackward0),)


class ScatterBackward0(Node):
    """out = self.scatter(dim, index, src):  d self = g with 0 at index, d src = g.gather(dim,
    index) (max and min's backward records it for zeros.scatter, without a `self`)."""

    __slots__ = ()

    def apply(self, g):
        dim, index = self._saved["dim"], self.saved("index")
        wanted = self.next_functions[0][0] is not None  # no gradient wanted for self
        return (scatter(g, dim, index, 0) if wanted else None, gather(g, dim, index))


class ScatterBackward1(Node):
    """out = self.scatter(dim, index, value):  d self = g with 0 at index."""

    __slots__ = ()

    def apply(self, g):
        return (scatter(g, self._saved["dim"], self.saved("index"), 0),)


class ScatterAddBackward0(ScatterBackward0):
    """out = zeros.scatter_add(dim, index, src):  d src = g.gather(dim, index)."""

    __slots__ = ()


class IndexSelectBackward0(Node):
    """out = self.index_select(dim, index):  d self = zeros with g added at index along dim."""

    __slots__ = ()

    def apply(self, g):
        s = self._saved
        return (_index_add_into_zeros(g, s["self_sym_sizes"], s["dim"], self.saved("index")),)


class IndexAddBackward0(Node):
    """out = self.index_add(dim, index, source, alpha):  d self = g,
    d source = alpha * g.index_select(dim, index)."""

    __slots__ = ()

    def apply(self, g):
        grad_source, alpha = None, self._saved["alpha"]
        if self.needs_input_grad(1):
            grad_source = index_select(g, self._saved["dim"], self.saved("index"))
            if alpha != 1:
                grad_source = mul_scalar(grad_source, alpha)
        return (g if self.needs_input_grad(0) else None), grad_source


class RollBackward0(Node):
    """out = self rolled by shifts along dims:  d self = g rolled back."""

    __slots__ = ()

    def apply(self, g):
        shifts, dims = self._saved["shifts"], self._saved["dims"]
        return (roll(g, tuple(-s for s in shifts), dims),)


class MaskedSelectBackward0(Node):
    """out = the elements of self where mask is True (both broadcast), in order:
    d self = zeros with g put where mask is True, summed back to self's shape."""

    __slots__ = ()

    def apply(self, g):
        x, mask = self.saved("self"), self.saved("mask")
        shape = np.broadcast_shapes(x._data.shape, mask._data.shape)
        positions = Tensor._make(np.flatnonzero(np.broadcast_to(mask._data, shape)))
        spread = _index_add_into_zeros(g, (int(np.prod(shape)),), 0, positions)
        return (sum_to(spread.reshape(shape), x._data.shape),)


class RepeatBackward0(Node):
    """out = self tiled `repeats` times:  d self = g summed over the copies."""

    __slots__ = ()

    def apply(self, g):
        repeats, shape = self._saved["repeats"], self._saved["self_sym_sizes"]
        if 0 in repeats:
            return (Tensor._make(np.zeros(shape, dtype=g._data.dtype)),)
        lead = len(repeats) - len(shape)
        for _ in range(lead):
            g = g.sum(0)
        # view each repeated dim of size r * n as (r, n) and sum over the r copies
        sizes, copies = [], []
        for r, n in zip(repeats[lead:], shape):
            if r != 1:
                sizes.append(r)
                copies.append(len(sizes) - 1)
            sizes.append(n)
        return (g.reshape(sizes).sum(tuple(copies)) if copies else g,)


def apply(self, g):
    return (flip(g, *self._saved["dims"]),)


def _check_index(index, op, dtypes_text):
    if index._data.dtype not in (np.int32, np.int64):
        raise RuntimeError(f"{op}(): Expected dtype {dtypes_text} for index")


def gather(self, dim, index):
    """out[i][j] = self[index[i][j]][j] for dim 0 (self[i][index[i][j]] for dim 1, ...).

    backward: g added back at the gathered positions (scatter_add).
    """
    check_tensor(index, "gather", "index", 2)
    _check_index(index, "gather", "int32/int64")
    d = normalize_dim(dim, self._data.ndim)
    if index._data.ndim != self._data.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for i, (n, size) in enumerate(zip(index._data.shape, self._data.shape)):
        if i != d and n > size:
            raise RuntimeError(
                f"Size does not match at dimension {i} expected index {list(index.shape)} to be "
                f"no larger than self {list(self.shape)} apart from dimension {d}"
            )
    _check_in_bounds(index, d, self._data.shape[d])
    block = tuple(slice(None) if i == d else slice(n) for i, n in enumerate(index._data.shape))
    data = np.take_along_axis(self._data[block], index._data, axis=d)
    saved = {"dim": dim, "index": index, "self": self, "sparse_grad": False}
    return record(GatherBackward0, data, (self,), saved)


def _check_in_bounds(index, d, size):
    """PyTorch's error for an index outside 0..size-1 along dimension d (gather, scatter)."""
    out_of_bounds = (index._data < 0) | (index._data >= size)
    if out_of_bounds.any():
        raise RuntimeError(
            f"index {index._data[out_of_bounds][0]} is out of bounds for dimension {d} with "
            f"size {size}"
        )


SCATTER_REDUCE_DEPRECATED = (
    "The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a "
    "future PyTorch release. Use torch.scatter_reduce instead for more reduction options."
)


def scatter(self, dim, index, src=None, value=None, *, reduce=None):
    """self with src's elements (or `value`) written where index points along dim:
    out[index[i][j]][j] = src[i][j] for dim 0. reduce="add" or "multiply" combines instead.

    backward: self's gradient is g with zeros at those places; src's is g gathered from them.
    """
    if src is not None and not isinstance(src, Tensor):
        src, value = None, src  # scatter(dim, index, 2.0): the value form
    check_tensor(index, "scatter", "index", 2)
    if index._data.ndim != self._data.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if src is not None and src._data.dtype != self._data.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    d = normalize_dim(dim, self._data.ndim)
    if src is not None:
        _check_scatter_sizes(self, d, index, src)
    _check_in_bounds(index, d, self._data.shape[d])
    key = list(np.ix_(*[np.arange(n) for n in index._data.shape]))
    key[d] = index._data
    if src is None:
        values = np.asarray(value).astype(self._data.dtype)
    else:
        values = src._data[tuple(slice(n) for n in index._data.shape)]
    data = self._data.copy()
    if reduce is None:
        data[tuple(key)] = values
    else:
        if src is not None:
            warn_once(SCATTER_REDUCE_DEPRECATED, stacklevel=3)
        {"add": np.add, "multiply": np.multiply}[reduce].at(data, tuple(key), values)
    if src is None:
        return record(ScatterBackward1, data, (self,), {"dim": dim, "index": index})
    return record(ScatterBackward0, data, (self, src), {"dim": dim, "index": index})


def _check_scatter_sizes(self, d, index, src):
    """torch's error for an index larger than src, or than self outside dim d."""
    shapes = zip(index._data.shape, self._data.shape, src._data.shape)
    if any(n > s or (i != d and n > m) for i, (n, m, s) in enumerate(shapes)):
        raise RuntimeError(
            f"Expected index {list(index.shape)} to be no larger than self {list(self.shape)} "
            f"apart from dimension {d} and to be no larger size than src {list(src.shape)}"
        )


def scatter_into_zeros(src, shape, dim, index, node_type):
    """zeros(shape) with src added at index along dim (the backward of gather, max and min)."""
    d = normalize_dim(dim, len(shape))
    key = list(np.ix_(*[np.arange(n) for n in index._data.shape]))
    key[d] = index._data
    data = np.zeros(shape, dtype=src._data.dtype)
    np.add.at(data, tuple(key), src._data)
    return record(node_type, data, (None, src), {"dim": dim, "index": index})


def index_select(self, dim, index):
    """The slices self[..., i, ...] along dim for each i in index (a 1-d or 0-d tensor).

    backward: g added back at those slices (index_add).
    """
    check_tensor(index, "index_select", "index", 2)
    if index._data.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    _check_index(index, "index_select", "int32 or int64")
    d = normalize_dim(dim, self._data.ndim)
    size = self._data.shape[d]
    positions = index._data.reshape(-1)
    bad = positions[(positions < 0) | (positions >= size)]
    if bad.size:
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad[0]} axis_dim={size}")
    data = np.take(self._data, positions, axis=d)
    saved = {"dim": dim, "index": index, "self_sym_sizes": self._data.shape}
    return record(IndexSelectBackward0, data, (self,), saved)


def index_add(self, dim, index, source, *, alpha=1):
    """self with alpha * source's slices added at index along dim (several at one index add up)."""
    check_tensor(index, "index_add", "index", 2)
    _check_index(index, "index_add_", "int32 or int64")
    d = normalize_dim(dim, self._data.ndim)
    positions = index._data.reshape(-1)
    if source._data.ndim > 0 and positions.size != source._data.shape[d]:
        raise RuntimeError(
            f"index_add_(): Number of indices ({positions.size}) should be equal to "
            f"source.size(dim): ({source._data.shape[d]}), for dim: {dim}"
        )
    if self._data.dtype != source._data.dtype:
        raise RuntimeError("index_add_(): self and source must have the same scalar type")
    data = self._data.copy()
    values = source._data if alpha == 1 else source._data * alpha
    np.add.at(data, (slice(None),) * d + (positions,), values.astype(data.dtype, copy=False))
    needed = source.requires_grad  # index and source serve source's gradient only
    saved = {
        "alpha": alpha,
        "dim": dim,
        "index": index if needed else None,
        "source": source if needed else None,
        "source_dim": source._data.ndim,
    }
    return record(IndexAddBackward0, data, (self, source), saved)


def roll(self, shifts, dims=None):
    """The elements shifted by `shifts` along dims (those that fall off the end come back at the
    start); without dims, along the flattened tensor."""
    shifts = (shifts,) if isinstance(shifts, (int, np.integer)) else tuple(shifts)
    dims = () if dims is None else (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    if len(shifts) != len(dims) and not (not dims and len(shifts) == 1):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}"
        )
    if dims:
        axes = tuple(normalize_dim(d, self._data.ndim) for d in dims)
        data = np.roll(self._data, shifts, axes)
    else:
        data = np.roll(self._data.reshape(-1), shifts[0]).reshape(self._data.shape)
    return record(RollBackward0, data, (self,), {"dims": dims, "shifts": shifts})


def masked_select(self, mask):
    """The elements of self where mask is True (both broadcast to one shape), as a 1-D tensor."""
    check_tensor(mask, "masked_select", "mask", 2)
    if mask._data.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = broadcasting(np.broadcast_shapes, self._data.shape, mask._data.shape, self, mask)
    data = np.broadcast_to(self._data, shape)[np.broadcast_to(mask._data, shape)]
    return record(MaskedSelectBackward0, data, (self,), {"mask": mask, "self": self})


def _index_add_into_zeros(source, shape, dim, index):
    """zeros(shape) with source's slices added at index along dim (index_select's backward)."""
    d = normalize_dim(dim, len(shape))
    data = np.zeros(shape, dtype=source._data.dtype)
    np.add.at(data, (slice(None),) * d + (index._data.reshape(-1),), source._data)
    saved = {
        "alpha": 1,
        "dim": dim,
        "index": index,
        "source": source,
        "source_dim": source._data.ndim,
    }
    return record(IndexAddBackward0, data, (None, source), saved)


def repeat(self, *repeats):
    """self tiled: repeat(2, 3) copies it twice along dim 0 and 3 times along dim 1.

    backward: the gradients of the copies, summed.
    """
    repeats = shape_arg(repeats)
    if len(repeats) < self._data.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of "
            "tensor"
        )
    padded = (1,) * (len(repeats) - self._data.ndim) + self._data.shape
    sizes = [r * n for r, n in zip(repeats, padded)]
    if min(sizes, default=0) < 0:
        negative = next(s for s in sizes if s < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative}: {sizes}")
    data = np.tile(self._data, repeats)
    saved = {"repeats": repeats, "self_sym_sizes": self._data.shape}
    return record(RepeatBackward0, data, (self,), saved)


def flip(self, *dims):
    """A copy with the order of the elements reversed along dims; backward: g reversed too."""
    if not dims:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    dims = shape_arg(dims)
    axes = [normalize_dim(d, self._data.ndim) for d in dims]
    for axis in axes:
        if axes.count(axis) > 1:
            raise RuntimeError(f"dim {axis} appears multiple times in the list of dims")
    data = np.flip(self._data, axes).copy()
    return record(FlipBackward0, data, (self,), {"dims": dims})
