"""Shape operations: views (reshape, transpose, x[key]...), joining (cat, stack) and splitting.

Views share memory and the version counter with the tensor they look into, as in PyTorch. The
index tensors of a key (x[[0, 2]], x[mask]) go to advanced_indexing.py, which makes a copy.
"""

import operator
import warnings

import numpy as np

from ..core.dtypes import TENSOR_TYPE_NAMES as _TYPE_NAMES
from ..core.errors import warn_once
from ..core.grad_mode import GradMode
from ..core.inference import inference_mode, inference_tensor, view_in_inference_mode
from ..core.node import Node, gradient_edge
from ..core.tensor import Tensor
from ..core.tensor_data import other_library
from .advanced_indexing import index, index_put_into_zeros
from .derivatives import (
    AliasBackward0,
    ExpandBackward0,
    PermuteBackward0,
    ReshapeAliasBackward0,
    SqueezeBackward0,
    SqueezeBackward1,
    SqueezeBackward4,
    TBackward0,
    TransposeBackward0,
    UnsafeViewBackward0,
    UnsqueezeBackward0,
    ViewBackward0,
)
from .recording import record, wants_grad

INT64_MAX = 2**63 - 1


def normalize_dim(dim, ndim):
    """dim as a non-negative index, or PyTorch's IndexError."""
    low, high = (-ndim, ndim - 1) if ndim else (-1, 0)
    if not low <= dim <= high:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{low}, {high}], but got {dim})"
        )
    return dim % ndim if ndim else 0


def _view_of(self, data, node_type=None, saved=None, args=None):
    """A tensor that shares `self`'s memory and version counter, recorded with `node_type`."""
    if self._is_inference:  # a view of an inference tensor is one too, outside autograd
        return inference_tensor(data)
    if node_type is None:
        out = Tensor._make(data)
    else:
        out = record(node_type, data, (self,), saved, args=args)
    _mark_view(out, self if self._view_base is None else self._view_base)
    if self._view_base is not None and out._view_made_in_no_grad is False:
        made_in = self._view_made_in_no_grad
        if made_in is True or made_in in ("inference_mode", "multi_output"):  # so is its view
            out._view_made_in_no_grad = made_in
    return out


def _mark_view(view, base):
    """view looks into base's memory: it shares base's version, and remembers the version its
    history was made at (see Tensor.grad_fn) and whether it was made in no_grad mode."""
    view._view_base = base
    view._base_version_at_view = base._version_counter[0]
    view._view_made_in_no_grad = not GradMode.enabled
    if inference_mode.active:
        view_in_inference_mode(view, base)


def reshape(self, *shape):
    """The same elements in a new shape: a view when possible, else a copy (as PyTorch does; the
    view of a non-contiguous tensor is recorded as its _reshape_alias)."""
    shape = shape_arg(shape)
    node_type = ViewBackward0 if self._data.flags.c_contiguous else ReshapeAliasBackward0
    try:
        return _viewed(self, shape, node_type)
    except RuntimeError as error:
        if "view size is not compatible" not in str(error):
            raise
    copy = self.clone()
    data = copy._data.reshape(shape)
    return record(UnsafeViewBackward0, data, (copy,), {"self_sym_sizes": copy._data.shape})


def view(self, *shape):
    """The same memory seen with a new shape; fails where a copy would be needed."""
    return _viewed(self, shape_arg(shape), ViewBackward0)


def _viewed(self, shape, node_type):
    """self's memory seen with `shape`, recorded by node_type; PyTorch's errors where it cannot."""
    if min(shape, default=0) < -1:  # numpy would read any negative size as "infer it"
        i = min(i for i, s in enumerate(shape) if s < -1)
        raise RuntimeError(
            f"invalid shape dimension {shape[i]} at index {i} of shape {list(shape)}"
        )
    try:
        data = np.reshape(self._data, shape, copy=False)
    except ValueError as error:
        if "unknown dimension" in str(error):
            raise RuntimeError("only one dimension can be inferred") from None
        if "copy" not in str(error) and "cannot reshape" in str(error):
            raise RuntimeError(
                f"shape '{list(shape)}' is invalid for input of size {self._data.size}"
            ) from None
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None
    return _view_of(self, data, node_type, {"self_sym_sizes": self._data.shape})


def flatten(self, start_dim=0, end_dim=-1):
    """Merge dims start_dim..end_dim into one."""
    if self._data.ndim == 0:
        return reshape(self, 1)
    start, end = normalize_dim(start_dim, self._data.ndim), normalize_dim(end_dim, self._data.ndim)
    if start == end:
        return self  # nothing to merge: PyTorch returns the tensor itself
    shape = self._data.shape
    return reshape(self, *shape[:start], -1, *shape[end + 1 :])


def transpose(self, dim0, dim1):
    """Swap two dimensions (a view)."""
    d0, d1 = normalize_dim(dim0, self._data.ndim), normalize_dim(dim1, self._data.ndim)
    data = np.swapaxes(self._data, d0, d1)
    return _view_of(self, data, TransposeBackward0, {"dim0": dim0, "dim1": dim1})


def t(self):
    """Transpose of a matrix of at most 2 dims (a view)."""
    if self._data.ndim > 2:
        raise RuntimeError(
            f"t() expects a tensor with <= 2 dimensions, but self is {self._data.ndim}D"
        )
    return _view_of(self, self._data.T, TBackward0, {})


def permute(self, *dims):
    """Reorder the dimensions (a view)."""
    dims = shape_arg(dims)
    if len(dims) != self._data.ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {self._data.ndim} "
            f"is not equal to len(dims) = {len(dims)}"
        )
    order = tuple(normalize_dim(d, self._data.ndim) for d in dims)
    if len(set(order)) != len(order):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _view_of(self, self._data.transpose(order), PermuteBackward0, {"dims": dims}, args=order)


def T(self):
    """All dimensions reversed (PyTorch records it as a permute)."""
    return permute(self, *range(self._data.ndim - 1, -1, -1))


def unsqueeze(self, dim):
    """Insert a dimension of size 1 at `dim` (a view)."""
    d = normalize_dim(dim, self._data.ndim + 1)
    return _view_of(self, np.expand_dims(self._data, d), UnsqueezeBackward0, {"dim": dim}, args=d)


def squeeze(self, dim=None):
    """Remove dimensions of size 1 (all, or only `dim`)."""
    sizes = {"self_sym_sizes": self._data.shape}
    if dim is None:
        return _view_of(self, np.squeeze(self._data), SqueezeBackward0, sizes)
    d = normalize_dim(dim, self._data.ndim)
    data = np.squeeze(self._data, d) if self._data.shape[d] == 1 else self._data.view()
    return _view_of(self, data, SqueezeBackward1, dict(dim=dim, **sizes))


def squeeze_dim_of_matmul(self, dim):
    """The squeeze matmul does after `vector @ matrix` (recorded as SqueezeBackward4)."""
    sizes = {"dim": dim, "self_sym_sizes": self._data.shape}
    return _view_of(self, np.squeeze(self._data, dim), SqueezeBackward4, sizes)


def expand(self, *sizes):
    """Broadcast to a larger shape without copying (-1 keeps a size)."""
    sizes = shape_arg(sizes)
    lead = len(sizes) - self._data.ndim
    if lead < 0 or min(sizes[:lead], default=0) < 0:
        raise _expand_error(self, sizes)
    target = tuple(self._data.shape[i - lead] if s == -1 else s for i, s in enumerate(sizes))
    try:
        data = np.broadcast_to(self._data, target)
    except ValueError:
        raise _expand_error(self, sizes) from None
    if self._data.flags.writeable:  # as in PyTorch, writing into an expanded tensor is allowed
        data = np.lib.stride_tricks.as_strided(self._data, data.shape, data.strides)
    if data.shape == self._data.shape and not wants_grad(self):  # a no-op, nothing to record
        return Tensor._make(self._data)
    return _view_of(self, data, ExpandBackward0, {"self_sym_sizes": self._data.shape})


def expand_as(self, other):
    """expand(self, *other.shape)."""
    return expand(self, *other._data.shape)


def view_as(self, other):
    """view(self, *other.shape)."""
    return view(self, *other._data.shape)


def reshape_as(self, other):
    """reshape(self, *other.shape)."""
    return reshape(self, *other._data.shape)


def _expand_error(self, sizes):
    """PyTorch's error for an impossible expand (it checks the dims from the last one)."""
    shape, lead = self._data.shape, len(sizes) - self._data.ndim
    if lead < 0:
        described = f"torch.{_TYPE_NAMES.get(self._data.dtype.name, 'Tensor')}{{{list(shape)}}}"
        return RuntimeError(
            f"expand({described}, size={list(sizes)}): the number of sizes provided ({len(sizes)}) "
            f"must be greater or equal to the number of dimensions in the tensor ({len(shape)})"
        )
    for i in reversed(range(len(sizes))):
        if i < lead and sizes[i] < 0:
            return RuntimeError(
                f"The expanded size of the tensor ({sizes[i]}) isn't allowed in a leading, "
                f"non-existing dimension {i}"
            )
        if i >= lead and sizes[i] not in (-1, shape[i - lead]) and shape[i - lead] != 1:
            return RuntimeError(
                f"The expanded size of the tensor ({sizes[i]}) must match the existing size "
                f"({shape[i - lead]}) at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  "
                f"Tensor sizes: {list(shape)}"
            )
    return RuntimeError(f"cannot expand {list(shape)} to {list(sizes)}")


def shape_arg(shape):
    """Accept both f(2, 3) and f((2, 3))."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


# --- indexing ------------------------------------------------------------------------------
class SelectBackward0(Node):
    """out = self[..., index, ...] along dim:  d self = zeros with g placed at index."""

    __slots__ = ()

    def apply(self, g):
        return (_scatter(g, self._saved["self_sym_sizes"], self.args, SelectBackwardBackward0),)


class SliceBackward0(Node):
    """out = self[start:end:step] along dim:  d self = zeros with g placed in the slice."""

    __slots__ = ()

    def apply(self, g):
        return (_scatter(g, self._saved["self_sym_sizes"], self.args, SliceBackwardBackward0),)


class _ScatterBackward(Node):
    """out = zeros with self placed at `key`:  d self = g[key]."""

    __slots__ = ()

    def apply(self, g):
        return (getitem(g, self.args),)


class SelectBackwardBackward0(_ScatterBackward):
    """The backward of a select, recorded for create_graph."""

    __slots__ = ()


class SliceBackwardBackward0(_ScatterBackward):
    """The backward of a slice, recorded for create_graph."""

    __slots__ = ()


def _scatter(g, shape, key, node_type):
    """zeros(shape) with g placed at `key`, a basic index (ints and slices)."""
    data = np.zeros(shape, dtype=g._data.dtype)
    data[key] = g._data
    return record(node_type, data, (g,), args=key)


# The key entries that only make views; any other (lists, ranges, arrays, tensors, bools, numpy
# ints) goes through apply_key. A 0-d integer tensor selects there, as an int does.
_VIEW_ENTRIES = frozenset({int, slice, type(None), type(Ellipsis)})


def getitem(self, key):
    """self[key] as in PyTorch: ints select, slices slice, None adds a dim, ... stands for the
    dims not named (views, one node each, in order); then lists, ranges, tensors and bool masks
    take the elements they name (a copy, IndexBackward0), their dims placed as numpy does."""
    if key is Ellipsis:
        return _view_of(self, self._data, AliasBackward0)
    if type(key) in _VIEW_ENTRIES:
        return _basic_index(self, (key,), keep_full_slices=True)
    if type(key) is tuple and all(type(k) in _VIEW_ENTRIES for k in key):
        return _basic_index(self, key, keep_full_slices=False)
    out, indices = apply_key(self, key if isinstance(key, tuple) else (key,))
    if indices is not None:
        return index(out, indices)
    return _view_of(self, self._data, AliasBackward0) if out is self else out


def _basic_index(self, key, keep_full_slices, indices=None):
    """Apply the entries of key one after another, as PyTorch records them: ints select, slices
    slice, None adds a dim, ... stands for the dims not named (views, one node each). Index
    tensors go to the list `indices` (apply_key's), at their place; without it, an alias stands
    for self when nothing else was applied."""
    if indices is None and sum(k is not Ellipsis and k is not None for k in key) > self._data.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self._data.ndim}")
    out, dim, covered = self, 0, 0
    for position, k in enumerate(key):
        if isinstance(k, slice):
            out = _slice(out, dim, k, keep_full_slices)
            dim += 1
        elif k is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif k is Ellipsis:
            rest = key[position + 1 :]
            dim = out._data.ndim - sum(x is not None and x is not Ellipsis for x in rest)
            if indices is not None:  # a mask uses up one dim per mask dim
                dim -= sum(_dims_indexed(x) - 1 for x in rest if isinstance(x, Tensor))
        elif isinstance(k, (int, np.integer)):
            out = _select(out, dim, int(k))
        elif not isinstance(k, Tensor):
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                f"are valid indices (got {type(k).__name__})"
            )
        elif k._data.ndim == 0 and k._data.dtype != bool:
            out = _select(out, dim, int(k))
        else:
            if k._data.ndim == 0:  # True / False: a new dim of size 1, taken whole or not at all
                out = unsqueeze(out, dim)
                k = Tensor._make(np.zeros(1 if k._data else 0, dtype=np.int64))
            covered = _record_index(indices, covered, dim, k)
            dim += _dims_indexed(k)
    if out is self and indices is None:  # only full slices: PyTorch still returns a new view
        return _view_of(self, self._data, AliasBackward0)
    return out


def apply_key(self, key):
    """(self with the basic entries of `key` applied, the index tensors of key by position).

    The index tensors are PyTorch's list for index/index_put_: None for a dim they leave whole,
    up to the last dim they index; None instead of the list when key has no index tensor.
    """
    key = tuple(_index_entry(k) for k in key)
    if sum(_dims_indexed(k) for k in key) > self._data.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self._data.ndim}")
    indices = []
    out = _basic_index(self, key, False, indices)
    return out, tuple(indices) if indices else None


def _record_index(indices, covered, dim, tensor):
    """Append `tensor`, which indexes `dim`, after Nones for the dims before it; the dims covered."""
    while covered < dim:
        indices.append(None)
        covered += 1
    indices.append(tensor)
    return covered + _dims_indexed(tensor)


def _dims_indexed(k):
    """How many dims of the tensor an index entry uses up (a bool mask: one per mask dim)."""
    if k is None or k is Ellipsis:
        return 0
    if isinstance(k, Tensor) and k._data.dtype == bool:
        return k._data.ndim  # 0 for True / False, which add the dim they index
    return 1


def _index_entry(k):
    """A key entry as _basic_index takes it: lists, ranges, arrays and bools become tensors."""
    if isinstance(k, (bool, np.bool_)):
        return Tensor._make(np.asarray(k))
    if isinstance(k, (list, range, np.ndarray)):
        array = np.asarray(k)
        k = Tensor._make(array if array.size else array.astype(np.int64))
    if not isinstance(k, Tensor):
        return k
    kind = k._data.dtype.kind
    if kind not in "biu":
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if k._data.dtype == np.uint8:
        warnings.warn(
            "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool "
            "instead.",
            UserWarning,
            stacklevel=4,
        )
        return Tensor._make(k._data.astype(bool))
    return k


def _select(self, dim, index):
    size = self._data.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for dimension {dim} with size {size}")
    key = (slice(None),) * dim + (index, Ellipsis)  # `...`: numpy's view even of one element
    saved = {"dim": dim, "index": index, "self_sym_sizes": self._data.shape}
    return _view_of(self, self._data[key], SelectBackward0, saved, args=key)


def _slice(self, dim, k, keep_full):
    start, stop, step = k.start, k.stop, k.step
    if step is not None and step <= 0:
        raise ValueError("step must be greater than zero")
    size = self._data.shape[dim]
    if (
        not keep_full
        and (start in (None, 0))
        and (stop is None or stop >= size)
        and step in (None, 1)
    ):
        return self
    key = (slice(None),) * dim + (k,)
    saved = {
        "dim": dim,
        "end": INT64_MAX if stop is None else stop,
        "self_sym_sizes": self._data.shape,
        "start": 0 if start is None else start,
        "step": 1 if step is None else step,
    }
    return _view_of(self, self._data[key], SliceBackward0, saved, args=key)


# --- views of the memory itself: as_strided ---------------------------------------------------
class AsStridedBackward0(Node):
    """out = self.as_strided(size, stride, storage_offset):  d self = g added into zeros over the
    memory at the places out reads (repeats accumulate), read back where self's elements lie."""

    __slots__ = ()

    def apply(self, g):
        s = self._saved
        self_size, self_stride, self_offset, span = self.args
        offset = self_offset if s["storage_offset"] is None else s["storage_offset"]
        places = Tensor._make(memory_places(s["size"], s["stride"], offset))
        memory = index_put_into_zeros(g, (span,), (places,))
        return (as_strided(memory, self_size, self_stride, self_offset),)


def memory_layout(array):
    """(strides in elements, span): where array's elements lie from its first one; span is the
    number of elements from the first to the last, gaps included."""
    itemsize = array.itemsize
    if min(array.strides, default=0) < 0:
        raise RuntimeError(
            "mini_autograd reads a tensor's memory (as_strided, in-place changes of its views) "
            "only when its strides are not negative; clone() it first"
        )
    strides = tuple(s // itemsize for s in array.strides)
    span = 1 + sum((n - 1) * s for n, s in zip(array.shape, strides)) if array.size else 0
    return strides, span


def view_geometry(view, base):
    """(size, stride, storage_offset) of the array `view` in the memory of the array `base`."""
    itemsize = base.itemsize
    start = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return view.shape, tuple(s // itemsize for s in view.strides), start // itemsize


def memory_places(size, stride, storage_offset):
    """For each element of an as_strided view: its place in memory, offset + sum(i[k] * stride[k])."""
    places = np.full(size, storage_offset, dtype=np.int64)
    for dim, (n, step) in enumerate(zip(size, stride)):
        places += (np.arange(n) * step).reshape((n,) + (1,) * (len(size) - dim - 1))
    return places


def as_strided(self, size, stride, storage_offset=None):
    """A view of the memory self lies in: element i is at storage_offset + sum(i[k] * stride[k])
    (storage_offset: self's own by default); backward: AsStridedBackward0."""
    data, saved, args = strided_view(self, size, stride, storage_offset)
    return _view_of(self, data, AsStridedBackward0, saved, args)


def strided_view(self, size, stride, storage_offset):
    """as_strided's array, with what its node saves and its args (self's place in the memory)."""
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    base = self if self._view_base is None else self._view_base
    itemsize = self._data.itemsize
    _, span = memory_layout(base._data)
    self_size, self_stride, self_offset = view_geometry(self._data, base._data)
    offset = self_offset if storage_offset is None else int(storage_offset)
    needed = offset + 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    if needed > span:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
            f"itemsize {itemsize} requiring a storage size of {needed * itemsize} are out of "
            f"bounds for storage of size {span * itemsize}"
        )
    memory = np.lib.stride_tricks.as_strided(base._data, (span,), (itemsize,))
    data = np.lib.stride_tricks.as_strided(memory[offset:], size, [s * itemsize for s in stride])
    saved = {"size": size, "stride": stride, "storage_offset": storage_offset}
    return data, saved, (self_size, self_stride, self_offset, span)


def as_strided_node(base, size, stride, storage_offset):
    """The node base.as_strided(size, stride, storage_offset) records, for a base that owns its
    memory (made directly: the view it describes exists already)."""
    strides, span = memory_layout(base._data)
    saved = {"size": size, "stride": stride, "storage_offset": storage_offset}
    return AsStridedBackward0(
        (gradient_edge(base),), saved, args=(base._data.shape, strides, 0, span)
    )


# --- joining -------------------------------------------------------------------------------
class CatBackward0(Node):
    """out = cat(tensors, dim):  d tensors[i] = the slice of g that came from tensors[i]."""

    __slots__ = ()

    def apply(self, g):
        dim, sizes = self.args
        grads, start = [], 0
        for i, size in enumerate(sizes):
            needed = self.needs_input_grad(i)
            grads.append(_slice(g, dim, slice(start, start + size), True) if needed else None)
            start += size
        return tuple(grads)


class StackBackward0(Node):
    """out = stack(tensors, dim):  d tensors[i] = g selected at i along dim."""

    __slots__ = ()

    def apply(self, g):
        dim = self.args
        return tuple(
            _select(g, dim, i) if self.needs_input_grad(i) else None
            for i in range(len(self.next_functions))
        )


def cat(tensors, dim=0):
    """Join tensors along an existing dimension."""
    tensors = _tensor_list(tensors, "cat")
    d = normalize_dim(dim, tensors[0]._data.ndim)
    for i, t in enumerate(tensors[1:], 1):
        if t._data.ndim != tensors[0]._data.ndim:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {tensors[0]._data.ndim} and {t._data.ndim}"
            )
        for axis, (a, b) in enumerate(zip(tensors[0]._data.shape, t._data.shape)):
            if axis != d and a != b:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size {a} but "
                    f"got size {b} for tensor number {i} in the list."
                )
    data = np.concatenate([t._data for t in tensors], axis=d)
    sizes = tuple(t._data.shape[d] for t in tensors)
    return record(CatBackward0, data, tensors, {"dim": dim}, args=(d, sizes))


def stack(tensors, dim=0):
    """Join equally shaped tensors along a new dimension."""
    tensors = _tensor_list(tensors, "stack")
    d = normalize_dim(dim, tensors[0]._data.ndim + 1)
    for i, t in enumerate(tensors[1:], 1):
        if t._data.shape != tensors[0]._data.shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at "
                f"entry 0 and {list(t.shape)} at entry {i}"
            )
    data = np.stack([t._data for t in tensors], axis=d)
    return record(StackBackward0, data, tensors, {"dim": dim}, args=d)


def _tensor_list(tensors, name):
    tensors = tuple(tensors)
    if not tensors:
        if name == "cat":
            raise ValueError("torch.cat(): expected a non-empty list of Tensors")
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            foreign = other_library(t)
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but "
                + (foreign if foreign else f"got {type(t).__name__}")
            )
    return tensors


# --- splitting -----------------------------------------------------------------------------
class SplitBackward0(Node):
    """outs = split(self, split_size, dim):  d self = the outputs' gradients joined along dim.

    One node with an output per piece, as in PyTorch; a piece that got no gradient gives zeros.
    """

    __slots__ = ()

    def apply(self, *grads):
        dim, sizes = self.args
        like = next(g for g in grads if g is not None)
        parts = []
        for i, size in enumerate(sizes):
            g = grads[i] if i < len(grads) else None
            if g is None:
                shape = list(self._saved["self_sym_sizes"])
                shape[dim] = size
                g = Tensor._make(np.zeros(shape, dtype=like._data.dtype))
            parts.append(g)
        return (cat(parts, dim),)


class SplitWithSizesBackward0(SplitBackward0):
    """outs = split(self, [sizes...], dim):  d self = the outputs' gradients joined along dim."""

    __slots__ = ()


class UnbindBackward0(Node):
    """outs = the slices of self along dim:  d self = their gradients stacked (zeros if none)."""

    __slots__ = ()

    def apply(self, *grads):
        like = next(g for g in grads if g is not None)
        zeros = Tensor._make(np.zeros(like._data.shape, dtype=like._data.dtype))
        parts = [
            grads[i] if i < len(grads) and grads[i] is not None else zeros for i in range(self.args)
        ]
        return (stack(parts, self._saved["dim"]),)


def _views_of(self, pieces, node_type, saved, args):
    """Views of self that one multi-output node records (split, chunk, unbind)."""
    owner = self if self._view_base is None else self._view_base
    if not pieces:
        return ()
    if self._is_inference:
        return tuple(inference_tensor(p) for p in pieces)
    first = record(node_type, pieces[0], (self,), saved, args=args)
    node = first.grad_fn  # the other pieces are its other outputs
    outs = [first] + [
        Tensor._make(p) if node is None else Tensor._make(p, True, node, nr)
        for nr, p in enumerate(pieces[1:], 1)
    ]
    for out in outs:
        _mark_view(out, owner)
        if out._view_made_in_no_grad is False:  # made in grad mode: refused in place
            out._view_made_in_no_grad = "multi_output"
    return tuple(outs)


def _split(self, dim, sizes, node_type, saved):
    d = normalize_dim(dim, self._data.ndim)
    starts = np.cumsum([0, *sizes[:-1]]).tolist()
    pieces = [
        self._data[(slice(None),) * d + (slice(start, start + size),)]
        for start, size in zip(starts, sizes)
    ]
    return _views_of(self, pieces, node_type, saved, (d, sizes))


def _need_dims(self, name):
    if self._data.ndim == 0:
        raise RuntimeError(f"{name} expects at least a 1-dimensional tensor")


def chunk(self, chunks, dim=0):
    """Split into `chunks` pieces along `dim` (views; the last may be smaller, as in PyTorch).

    backward: the pieces' gradients joined along dim (SplitBackward0, as split).
    """
    _need_dims(self, "chunk")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    size = self._data.shape[normalize_dim(dim, self._data.ndim)]
    split_size = -(-size // chunks) if size else 1
    sizes = [min(split_size, size - start) for start in range(0, size, split_size)] or [0]
    saved = {"dim": dim, "self_sym_sizes": self._data.shape, "split_size": split_size}
    return _split(self, dim, sizes, SplitBackward0, saved)


def split(self, split_size_or_sections, dim=0):
    """Pieces of split_size along dim (the last may be smaller), or of the sizes in a list.

    Views of self; backward: the pieces' gradients joined along dim.
    """
    _need_dims(self, "split")
    size = self._data.shape[normalize_dim(dim, self._data.ndim)]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [int(n) for n in split_size_or_sections]
        if min(sizes, default=0) < 0:
            raise RuntimeError(
                "split_with_sizes expects split_sizes have only non-negative entries, but got "
                f"split_sizes={sizes}"
            )
        if sum(sizes) != size:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's "
                f"size at dimension {normalize_dim(dim, self._data.ndim)}), but got "
                f"split_sizes={sizes}"
            )
        saved = {"dim": dim, "self_sym_sizes": self._data.shape, "split_sizes": tuple(sizes)}
        return _split(self, dim, sizes, SplitWithSizesBackward0, saved)
    split_size = int(split_size_or_sections)
    if split_size < 0:
        raise RuntimeError(
            f"split expects split_size be non-negative, but got split_size={split_size}"
        )
    if split_size == 0 and size:
        raise RuntimeError(
            f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
        )
    sizes = [min(split_size, size - start) for start in range(0, size, split_size or 1)] or [0]
    saved = {"dim": dim, "self_sym_sizes": self._data.shape, "split_size": split_size}
    return _split(self, dim, sizes, SplitBackward0, saved)


def split_with_sizes(self, split_sizes, dim=0):
    """split(self, list(split_sizes), dim): pieces of the given sizes (SplitWithSizesBackward0)."""
    return split(self, list(split_sizes), dim)


def unbind(self, dim=0):
    """The slices of self along dim, as a tuple of views; backward: their gradients stacked."""
    if self._data.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = normalize_dim(dim, self._data.ndim)
    pieces = [self._data[(slice(None),) * d + (i, Ellipsis)] for i in range(self._data.shape[d])]
    return _views_of(self, pieces, UnbindBackward0, {"dim": dim}, len(pieces))


def select(self, dim, index):
    """self[..., index, ...] at dimension dim (a view without that dimension); backward: g put
    back into zeros at `index` (SelectBackward0)."""
    if self._data.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    return self[(slice(None),) * normalize_dim(dim, self._data.ndim) + (index,)]


def narrow(self, dim, start, length):
    """self[..., start:start + length, ...] along dim (a view, recorded as a slice).

    backward: zeros with g placed in the slice.
    """
    if self._data.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    start, length = operator.index(start), operator.index(length)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = normalize_dim(dim, self._data.ndim)
    size = self._data.shape[d]
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})"
        )
    start = start + size if start < 0 else start
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    key = (slice(None),) * d + (slice(start, start + length),)
    saved = {
        "dim": dim,
        "end": start + length,
        "self_sym_sizes": self._data.shape,
        "start": start,
        "step": 1,
    }
    return _view_of(self, self._data[key], SliceBackward0, saved, args=key)


# --- grids -------------------------------------------------------------------------------------
MESHGRID_INDEXING_WARNING = (
    "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument."
)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 0-D or 1-D tensors: out[i] holds tensors[i] along dim i, the same for
    every index of the other dims (indexing='ij'); indexing='xy' swaps the first two dims (numpy's
    default). Each grid is its input viewed as (1, ..., n, ..., 1), then expanded: no copy.

    backward: d tensors[i] = g summed over every dim but its own.
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warn_once(MESHGRID_INDEXING_WARNING, stacklevel=2)
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    tensors = _tensor_list(tensors, "meshgrid")
    if len({t._data.dtype for t in tensors}) > 1:
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if indexing not in ("xy", "ij"):
        raise RuntimeError(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}'
        )
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError(
                f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}"
            )
    dims = list(range(len(tensors)))  # the dim of the grid each tensor runs along
    if indexing == "xy" and len(tensors) >= 2:
        dims[0], dims[1] = 1, 0
    sizes = [0] * len(tensors)
    for t, d in zip(tensors, dims):
        sizes[d] = t._data.size
    grids = []
    for t, d in zip(tensors, dims):
        along = [1] * len(tensors)
        along[d] = -1
        grids.append(expand(view(t, *along), *sizes))
    return tuple(grids)
