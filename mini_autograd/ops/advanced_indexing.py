"""Indexing with index tensors, PyTorch's list of them (None for a dim taken whole):
self[indices] (index: IndexBackward0) and values put at the indices (index_put:
IndexPutBackward0), each the other's backward.

Their dims are placed by numpy's rule: index tensors side by side put their broadcast shape
where they stand, apart they put it first.
"""

import numpy as np

from ..core.errors import scalar_type_name
from ..core.node import Node
from ..core.tensor import Tensor
from .broadcasting import sum_to
from .recording import check_tensor, record, save, wants_grad


class SavesIndices(Node):
    """A node that saved `indices`, PyTorch's Tensor?[]: index tensors, None for a whole dim."""

    __slots__ = ()

    def saved(self, name):
        if name == "indices":  # Node.saved unpacks only the tuples that start with a tensor
            return tuple(None if s is None else s.unpack(self) for s in self._saved[name])
        return super().saved(name)


class IndexBackward0(SavesIndices):
    """out = self[indices]:  d self = zeros with g added at the indices (repeats accumulate)."""

    __slots__ = ()

    def apply(self, g):
        return (index_put_into_zeros(g, self._saved["self_sym_sizes"], self.saved("indices")),)


class IndexPutBackward0(SavesIndices):
    """out = self with values put at indices (added, with accumulate):
    d self = g, with 0 at the indices unless accumulate;  d values = g at the indices, summed to
    values' shape."""

    __slots__ = ()

    def apply(self, g):
        indices, values_shape = self.saved("indices"), self.args
        grad_self = grad_values = None
        if self.needs_input_grad(0):
            if self._saved["accumulate"]:
                grad_self = g
            else:
                grad_self = index_put_copy(g, indices, Tensor._make(np.zeros((), g._data.dtype)))
        if self.needs_input_grad(1):
            grad_values = sum_to(index(g, indices), values_shape)
        return grad_self, grad_values


class IndexPutImplBackward0(IndexPutBackward0):
    """The backward of an index (zeros with g added at the indices), recorded for create_graph."""

    __slots__ = ()


def numpy_key(shape, indices):
    """PyTorch's list of index tensors as a numpy index, after PyTorch's checks of them."""
    key, shapes, dim = [], [], 0
    for i in indices:
        if i is None:
            key.append(slice(None))
            dim += 1
            continue
        array = i._data
        if array.dtype == bool:
            for j, n in enumerate(array.shape):
                if n != shape[dim + j]:
                    raise IndexError(
                        f"The shape of the mask {list(array.shape)} at index {j} does not match "
                        f"the shape of the indexed tensor {list(shape)} at index {dim + j}"
                    )
            shapes += [(int(np.count_nonzero(array)),)] * array.ndim  # numpy takes its nonzeros
            dim += array.ndim
        else:
            shapes.append(array.shape)
            dim += 1
        key.append(array)
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        listed = ", ".join(str(list(s)) for s in shapes)
        raise IndexError(
            f"shape mismatch: indexing tensors could not be broadcast together with shapes {listed}"
        ) from None
    return tuple(key)


def index(self, indices):
    """self[indices] for PyTorch's list of index tensors (None: a whole dim), by numpy's rule:
    index tensors side by side put their broadcast shape where they stand, apart they put it first.

    backward: zeros with g added at the indices (IndexBackward0).
    """
    key = numpy_key(self._data.shape, indices)
    try:
        data = self._data[key]
    except IndexError as error:
        raise IndexError(str(error).replace(" axis ", " dimension ")) from None
    if not wants_grad(self):  # record saves no tuple holding None: saved here
        return Tensor._make(data)
    saved = {"indices": saved_indices(indices), "self_sym_sizes": self._data.shape}
    return record(IndexBackward0, data, (self,), saved)


def checked_key(self, indices, values, op):
    """The numpy index `indices` make, after PyTorch's checks of the arguments."""
    check_tensor(values, op, "values", 2)
    for i in indices:
        if i is not None and i._data.dtype.kind not in "biu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if values._data.dtype != self._data.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{scalar_type_name(self)} for the destination and {scalar_type_name(values)} for "
            "the source."
        )
    if len(indices) > self._data.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self._data.ndim}")
    return numpy_key(self._data.shape, indices)


def put_values(data, key, values, accumulate):
    """data[key] = values (+= with accumulate, repeats adding up), or PyTorch's errors."""
    try:  # the shape of data[key], from a stand-in of data that holds no memory
        result_shape = np.broadcast_to(np.False_, data.shape)[key].shape
    except IndexError as error:
        raise IndexError(str(error).replace(" axis ", " dimension ")) from None
    if not _broadcasts_to(values._data.shape, result_shape):
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(values._data.shape)} cannot be "
            f"broadcast to indexing result of shape {list(result_shape)}"
        )
    if accumulate:
        np.add.at(data, key, values._data)
    else:
        data[key] = values._data


def _broadcasts_to(shape, target):
    """Whether `shape` broadcasts to exactly `target`."""
    if len(shape) > len(target):
        return False
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


def saved_indices(indices):
    """The indices saved, None staying None (record saves only tuples of tensors)."""
    return tuple(save(i) for i in indices)


def index_put_copy(self, indices, values, accumulate=False):
    """index_put for PyTorch's list of index tensors (None: a whole dim)."""
    key = checked_key(self, indices, values, "index_put")
    data = self._data.copy()
    put_values(data, key, values, accumulate)
    if not wants_grad(self, values):  # record saves no tuple holding None: saved here
        return Tensor._make(data)
    saved = {"accumulate": accumulate, "indices": saved_indices(indices)}
    return record(IndexPutBackward0, data, (self, values), saved, args=values._data.shape)


def index_put_into_zeros(values, shape, indices):
    """zeros(shape) with values added at indices (repeats accumulate): the backward of an index."""
    data = np.zeros(shape, values._data.dtype)
    np.add.at(data, numpy_key(shape, indices), values._data)
    if not wants_grad(values):  # record saves no tuple holding None: saved here
        return Tensor._make(data)
    saved = {"accumulate": True, "indices": saved_indices(indices)}
    return record(IndexPutImplBackward0, data, (None, values), saved, args=values._data.shape)
