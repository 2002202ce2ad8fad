"""Writing through an index: `x[key] = value`, index_put_ and index_put.

`x[key] = value` does what PyTorch does. The basic entries of key (ints, slices, None, ...) make a
view of x, and value is copied into that view (copy_, or fill_ for a 0-d value): an in-place
change of a view, which autograd records on x as CopySlices (see inplace.py). Index tensors in key
(lists, tensors, bool masks) then put value at the elements they name: index_put_, recorded as
IndexPutBackward0. Either way x's version goes up by one.
"""

import numpy as np

from ..dtypes import TENSOR_TYPE_NAMES
from ..node import edge_of
from ..tensor import Tensor, other_library
from .inplace import _check_inplace_allowed, copy_, fill_, rebase_history
from .recording import check_tensor, record, save, scalar_type_name, sum_to, wants_grad
from .shape import SavesIndices, apply_key, expand, index, numpy_key, view


class IndexPutBackward0(SavesIndices):
    """out = self with values put at indices (added, with accumulate):
    d self = g, with 0 at the indices unless accumulate;  d values = g at the indices, summed to
    values' shape."""

    __slots__ = ()

    def apply(self, g):
        indices, values_shape = self.saved("indices"), self._info
        grad_self = grad_values = None
        if self.needs_input_grad(0):
            if self._saved["accumulate"]:
                grad_self = g
            else:
                grad_self = _put_copy(g, indices, Tensor._make(np.zeros((), g._data.dtype)))
        if self.needs_input_grad(1):
            grad_values = sum_to(index(g, indices), values_shape)
        return grad_self, grad_values


class IndexPutImplBackward0(IndexPutBackward0):
    """The backward of an index (zeros with g added at the indices), recorded for create_graph."""

    __slots__ = ()


def setitem(self, key, value):
    """self[key] = value (a number or a tensor, broadcast to self[key]): basic entries copy value
    into the view self[key] (recorded on self as CopySlices); index tensors put it at their
    elements (index_put_, IndexPutBackward0)."""
    value = _value_tensor(self, value)
    target, indices = apply_key(self, key if isinstance(key, tuple) else (key,))
    if indices is None:
        _copy_to(target, value)
    else:
        _put_in_place(target, indices, _without_leading_ones(value), False)


def _value_tensor(self, value):
    """The value of `self[key] = value` as a tensor: a number becomes a 0-d tensor of self's dtype."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, int, float, np.number, np.bool_)):
        return Tensor._make(np.asarray(value).astype(self._data.dtype))
    foreign = other_library(value)
    if foreign:
        raise TypeError(f"can't assign this value to a mini_autograd tensor: {foreign}")
    kind = type(value)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
    raise TypeError(f"can't assign a {name} to a torch.{TENSOR_TYPE_NAMES[self._data.dtype.name]}")


def _copy_to(target, value):
    """target's values = value's (PyTorch's copy_to): copy_ when the shapes match, fill_ for a
    0-d value, else value without its leading 1-dims (a view), expanded to target's shape."""
    if target._data.shape == value._data.shape:
        copy_(target, value)
    elif value._data.ndim == 0:
        fill_(target, value)
    else:
        value = view(value, _without_leading_ones_shape(value._data.shape))
        if value._data.shape != target._data.shape:
            value = expand(value, *target._data.shape)
        copy_(target, value)


def _without_leading_ones_shape(shape):
    ones = next((i for i, n in enumerate(shape) if n != 1), len(shape))
    return shape[ones:]


def _without_leading_ones(value):
    """value viewed without its leading 1-dims (itself when it has none), as setitem passes it."""
    shape = _without_leading_ones_shape(value._data.shape)
    return value if shape == value._data.shape else view(value, shape)


def _indices_arg(indices, op):
    """PyTorch's check that `indices`, given to index_put(_), is a tuple (or list) of tensors."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(
            f"{op}(): argument 'indices' (position 1) must be tuple of Tensors, not "
            f"{type(indices).__name__}"
        )
    for n, i in enumerate(indices):
        if not isinstance(i, Tensor):
            raise TypeError(
                f"expected Tensor as element {n} in argument 0, but got {type(i).__name__}"
            )
    return tuple(indices)


def _checked(self, indices, values, op):
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


def _put(data, key, values, accumulate):
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
    if len(shape) > len(target):
        return False
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


def _saved(indices, accumulate):
    return {"accumulate": accumulate, "indices": tuple(save(i) for i in indices)}


def index_put_(self, indices, values, accumulate=False):
    """self[indices] = values (self[indices] += values with accumulate), in place; indices is a
    tuple of index tensors. backward: IndexPutBackward0."""
    return _put_in_place(self, _indices_arg(indices, "index_put_"), values, accumulate)


def _put_in_place(self, indices, values, accumulate):
    """index_put_ for PyTorch's list of index tensors (None: a whole dim), as setitem makes it."""
    key = _checked(self, indices, values, "index_put_")
    _check_inplace_allowed(self, values)
    _put(self._data, key, values, accumulate)
    self._bump_version()
    if wants_grad(self, values):
        edges = (edge_of(self), edge_of(values))
        rebase_history(
            self, IndexPutBackward0(edges, _saved(indices, accumulate), values._data.shape)
        )
    return self


def index_put(self, indices, values, accumulate=False):
    """A copy of self with values put at indices (added, with accumulate); backward:
    IndexPutBackward0."""
    return _put_copy(self, _indices_arg(indices, "index_put"), values, accumulate)


def _put_copy(self, indices, values, accumulate=False):
    """index_put for PyTorch's list of index tensors (None: a whole dim)."""
    key = _checked(self, indices, values, "index_put")
    data = self._data.copy()
    _put(data, key, values, accumulate)
    if not wants_grad(self, values):
        return Tensor._make(data)
    saved = _saved(indices, accumulate)
    return record(IndexPutBackward0, data, (self, values), saved, info=values._data.shape)


def index_put_into_zeros(values, shape, indices):
    """zeros(shape) with values added at indices (repeats accumulate): the backward of an index."""
    data = np.zeros(shape, values._data.dtype)
    np.add.at(data, numpy_key(shape, indices), values._data)
    if not wants_grad(values):
        return Tensor._make(data)
    saved = _saved(indices, True)
    return record(IndexPutImplBackward0, data, (None, values), saved, info=values._data.shape)
