"""Writing through an index: `x[key] = value`, index_put_ and index_put.

`x[key] = value` does what PyTorch does. The basic entries of key (ints, slices, None, ...) make a
view of x, and value is copied into that view (copy_, or fill_ for a 0-d value): an in-place
change of a view, which autograd records on x as CopySlices (see inplace.py). Index tensors in key
(lists, tensors, bool masks) then put value at the elements they name: index_put_, recorded as
IndexPutBackward0. Either way x's version goes up by one.
"""

import numpy as np

from ..core.dtypes import TENSOR_TYPE_NAMES
from ..core.node import gradient_edge
from ..core.tensor import Tensor
from ..core.tensor_data import other_library
from .advanced_indexing import (
    IndexPutBackward0,
    checked_key,
    index_put_copy,
    put_values,
    saved_indices,
)
from .inplace import _check_inplace_allowed, copy_, fill_, record_in_place
from .recording import wants_grad
from .shape import apply_key, expand, view


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


def index_put_(self, indices, values, accumulate=False):
    """self[indices] = values (self[indices] += values with accumulate), in place; indices is a
    tuple of index tensors. backward: IndexPutBackward0."""
    return _put_in_place(self, _indices_arg(indices, "index_put_"), values, accumulate)


def _put_in_place(self, indices, values, accumulate):
    """index_put_ for PyTorch's list of index tensors (None: a whole dim), as setitem makes it."""
    key = checked_key(self, indices, values, "index_put_")
    _check_inplace_allowed(self, values)
    put_values(self._data, key, values, accumulate)
    self._bump_version()
    if wants_grad(self, values):  # in place: record would make a new tensor
        saved = {"accumulate": accumulate, "indices": saved_indices(indices)}
        node = IndexPutBackward0(
            (gradient_edge(self), gradient_edge(values)), saved, values._data.shape
        )
        record_in_place(self, node)
    return self


def index_put(self, indices, values, accumulate=False):
    """A copy of self with values put at indices (added, with accumulate); backward:
    IndexPutBackward0."""
    return index_put_copy(self, _indices_arg(indices, "index_put"), values, accumulate)
