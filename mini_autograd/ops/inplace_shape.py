"""In-place changes of shape: unsqueeze_ and transpose_ (the same memory seen with new strides,
recorded), resize_ and resize_as_ (new sizes, as torch's storage keeps its first elements)."""

import math

import numpy as np

from ..core import errors, inference
from ..core.grad_mode import GradMode
from ..core.node import Node, gradient_edge
from .inplace import _check_inplace_allowed, _set_history, announce
from .recording import check_tensor
from .shape import TransposeBackward0, normalize_dim, shape_arg


class UnsqueezeBackward1(Node):
    """self.unsqueeze_(dim):  d self = g squeezed at dim."""

    __slots__ = ()

    def apply(self, g):
        return (g.squeeze(self.args),)


class TransposeBackward1(TransposeBackward0):
    """self.transpose_(dim0, dim1):  d self = g swapped back."""

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
