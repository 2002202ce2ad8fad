"""In-place changes of shape: unsqueeze_, squeeze_, transpose_ (swapdims_, swapaxes_), t_ and
as_strided_ (the same memory seen with new strides, recorded), resize_ and resize_as_ (new sizes,
as torch's storage keeps its first elements)."""

import math

import numpy as np

from ..core import errors, inference
from ..core.grad_mode import GradMode
from ..core.node import Node, gradient_edge
from .derivatives import SqueezeBackward0, SqueezeBackward4
from .inplace import _check_inplace_allowed, _set_history, announce
from .recording import check_tensor
from .shape import (
    AsStridedBackward0,
    TBackward0,
    TransposeBackward0,
    normalize_dim,
    shape_arg,
    strided_view,
)


class UnsqueezeBackward1(Node):
    """self.unsqueeze_(dim):  d self = g squeezed at dim."""

    __slots__ = ()

    def apply(self, g):
        return (g.squeeze(self.args),)


class TransposeBackward1(TransposeBackward0):
    """self.transpose_(dim0, dim1):  d self = g swapped back."""

    __slots__ = ()


class TBackward1(TBackward0):
    """self.t_():  d self = g transposed back."""

    __slots__ = ()


class SqueezeBackward3(SqueezeBackward0):
    """self.squeeze_():  d self = g with self's size-1 dims put back."""

    __slots__ = ()


class SqueezeBackward5(SqueezeBackward0):
    """self.squeeze_(dims):  d self = g with the size-1 dims among dims put back."""

    __slots__ = ()


class AsStridedBackward1(AsStridedBackward0):
    """self.as_strided_(size, stride, storage_offset):  as as_strided's backward."""

    __slots__ = ()


def _restride(self, data, node_type, saved, args=None):
    """self's array becomes `data` (the same memory, another shape or strides), recorded as
    node_type of what self was. A view stays a view of its base, which does not change: its
    history becomes node_type of what it was (no CopySlices), as in PyTorch."""
    recording = GradMode.enabled and self.requires_grad
    edge = gradient_edge(self) if recording else None  # (before the version changes)
    self._data = data
    self._bump_version()
    if recording:
        node = node_type((edge,), saved, args)
        _set_history(self, node)
        if self._view_base is not None:  # its history is up to date with its base's version
            self._base_version_at_view = self._view_base._version_counter[0]
        announce(node, self)
    return self


def unsqueeze_(self, dim):
    """Insert a dimension of size 1 at `dim`, in place: the same memory, a new shape."""
    _check_inplace_allowed(self)
    d = normalize_dim(dim, self._data.ndim + 1)
    return _restride(self, np.expand_dims(self._data, d), UnsqueezeBackward1, {"dim": dim}, d)


def transpose_(self, dim0, dim1):
    """Swap dimensions dim0 and dim1, in place: the same memory, swapped strides."""
    _check_inplace_allowed(self)
    d0, d1 = normalize_dim(dim0, self._data.ndim), normalize_dim(dim1, self._data.ndim)
    saved = {"dim0": dim0, "dim1": dim1}
    return _restride(self, np.swapaxes(self._data, d0, d1), TransposeBackward1, saved)


def swapdims_(self, dim0, dim1):
    """transpose_(dim0, dim1)."""
    return transpose_(self, dim0, dim1)


def t_(self):
    """Transpose a matrix of at most 2 dims, in place: the same memory, reversed strides."""
    if self._data.ndim > 2:
        raise RuntimeError(
            f"t_() expects a tensor with <= 2 dimensions, but self is {self._data.ndim}D"
        )
    _check_inplace_allowed(self)
    return _restride(self, self._data.T, TBackward1, {})


def squeeze_(self, dim=None):
    """Remove dimensions of size 1 (all, or those among `dim`, an int or a tuple), in place."""
    _check_inplace_allowed(self)
    sizes = {"self_sym_sizes": self._data.shape}
    if dim is None:
        return _restride(self, np.squeeze(self._data), SqueezeBackward3, sizes)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    ones = tuple(
        d for d in (normalize_dim(d, self._data.ndim) for d in dims) if self._data.shape[d] == 1
    )
    node_type = SqueezeBackward4 if isinstance(dim, int) else SqueezeBackward5
    return _restride(self, np.squeeze(self._data, ones), node_type, dict(dim=dim, **sizes))


def as_strided_(self, size, stride, storage_offset=None):
    """as_strided(size, stride, storage_offset), in place: self shows that part of its memory."""
    _check_inplace_allowed(self)
    data, saved, args = strided_view(self, size, stride, storage_offset)
    return _restride(self, data, AsStridedBackward1, saved, args)


def resize_(self, *sizes):
    """Give self the shape `sizes`, in place: its first elements stay, new ones are uninitialized."""
    sizes = shape_arg(sizes)
    if self.requires_grad and not inference.inference_mode.active:
        raise RuntimeError("cannot resize variables that require grad")
    if self._is_inference:
        inference.check_inplace(self)
    if min(sizes, default=0) < 0:
        raise RuntimeError("numel: integer multiplication overflow")
    if sizes == self._data.shape:
        return self  # nothing changes: no new version, as in torch
    numel, flat = math.prod(sizes), self._data.reshape(-1)
    if numel <= flat.size and np.shares_memory(flat, self._data):
        self._data = flat[:numel].reshape(sizes)  # the same memory, as torch's storage
    else:
        data = np.empty(numel, self._data.dtype)
        data[: min(numel, flat.size)] = flat[:numel]
        self._data = data.reshape(sizes)
    self._bump_version()
    return self


def resize_as_(self, the_template):
    """resize_ to the shape of `the_template`."""
    check_tensor(the_template, "resize_as_", "the_template", 1)
    return resize_(self, the_template._data.shape)


def set_(self, source=None):
    """Make self show source's memory (its shape and values; empty without source), in place.

    Autograd sees a new leaf: its old gradient accumulator, which the graph may hold, is let go.
    """
    if source is not None:
        check_tensor(source, "set_", "source", 1)
        if source._data.dtype != self._data.dtype:
            names = errors.CPP_TYPE_NAMES
            raise RuntimeError(
                f"Could not set tensor of type {names[source._data.dtype.name]} to a tensor of "
                f"type {names[self._data.dtype.name]}"
            )
    _check_inplace_allowed(self)
    self._data = np.empty(0, self._data.dtype) if source is None else source._data
    self._accumulator = None
    self._bump_version()
    return self
