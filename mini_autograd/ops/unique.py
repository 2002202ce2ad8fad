"""unique and unique_consecutive: the distinct values (sorted), or the runs of equal ones, with
where each element went (inverse) and how many there were (counts). Not differentiable: as in
PyTorch, the values are recorded by a node whose backward raises."""

import numpy as np

from ..core.node import Node
from ..core.tensor import Tensor
from .recording import record
from .shape import normalize_dim


class _NoDerivative(Node):
    """The node of an operation without a derivative: backward raises PyTorch's error."""

    __slots__ = ()

    def apply(self, *grads):
        raise NotImplementedError(f"the derivative for '{self.args}' is not implemented.")


class Unique2Backward0(_NoDerivative):
    """out = unique(self): no derivative."""

    __slots__ = ()


class UniqueDimBackward0(_NoDerivative):
    """out = unique(self, dim): no derivative."""

    __slots__ = ()


class UniqueConsecutiveBackward0(_NoDerivative):
    """out = unique_consecutive(self): no derivative."""

    __slots__ = ()


def _result(self, values, inverse, counts, return_inverse, return_counts, node_type, name):
    out = record(node_type, values, (self,), args=name)
    extra = [
        Tensor._make(a.astype(np.int64))
        for a, wanted in ((inverse, return_inverse), (counts, return_counts))
        if wanted
    ]
    return (out, *extra) if extra else out


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The distinct values in order (of the flattened tensor, or the distinct slices along dim)."""
    x = input._data
    if dim is None:
        values, inverse, counts = np.unique(x.reshape(-1), return_inverse=True, return_counts=True)
        inverse = inverse.reshape(x.shape)
        node_type, name = Unique2Backward0, "_unique2"
    else:
        d = normalize_dim(dim, x.ndim)
        values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True, axis=d)
        inverse = inverse.reshape(-1)
        node_type, name = UniqueDimBackward0, "unique_dim"
    return _result(input, values, inverse, counts, return_inverse, return_counts, node_type, name)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """One element (or slice along dim) of each run of equal consecutive ones."""
    x = input._data
    if dim is None:
        x, d = x.reshape(-1), 0
    else:
        d = normalize_dim(dim, x.ndim)
    moved = np.moveaxis(x, d, 0)
    if moved.shape[0] == 0:
        starts = np.zeros(0, bool)
    else:
        differs = (moved[1:] != moved[:-1]).reshape(moved.shape[0] - 1, -1).any(axis=1)
        starts = np.concatenate([[True], differs])
    values = np.moveaxis(moved[starts], 0, d)
    inverse = np.cumsum(starts) - 1
    if dim is None:
        inverse = inverse.reshape(input._data.shape)
    counts = np.diff(np.append(np.flatnonzero(starts), starts.size))
    return _result(
        input, values, inverse, counts, return_inverse, return_counts,
        UniqueConsecutiveBackward0, "unique_consecutive",
    )  # fmt: skip
