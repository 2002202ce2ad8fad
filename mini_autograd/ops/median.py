"""median and nanmedian: the middle element (the lower of the two middle ones for an even count,
never their mean), of the whole tensor or along a dim; median propagates NaN, nanmedian skips it.
"""

import numpy as np

from .. import return_types
from ..core.tensor import Tensor
from .recording import record
from .reductions import MaxBackward0, MaxBackward1, _order, _reduced_dim, _values_and_indices


class MedianBackward0(MaxBackward1):
    """out = median(self):  d self = g shared evenly among the elements equal to out."""

    __slots__ = ()


class NanmedianBackward0(MaxBackward1):
    """out = nanmedian(self):  d self = g shared evenly among the elements equal to out."""

    __slots__ = ()


class MedianBackward1(MaxBackward0):
    """(values, indices) = median(self, dim):  d self = g at the indices, 0 elsewhere."""

    __slots__ = ()


class NanmedianBackward1(MaxBackward0):
    """(values, indices) = nanmedian(self, dim):  d self = g at the indices, 0 elsewhere."""

    __slots__ = ()


def _middle(x, d, skip_nan):
    """Indices (keepdim) of the middle element along d; a NaN's (the first) where one counts."""
    order = _order(x, d, False)  # NaN sorts last
    nans = np.isnan(x).sum(axis=d, keepdims=True) if x.dtype.kind == "f" else 0
    n = x.shape[d]
    if skip_nan:
        k = np.maximum((n - nans - 1) // 2, 0)
    else:
        k = np.where(nans > 0, n - nans, (n - 1) // 2)
    return np.take_along_axis(
        order, np.broadcast_to(k, order.shape[:d] + (1,) + order.shape[d + 1 :]), d
    )


def median(self, dim=None, keepdim=False):
    """The middle element (lower middle for an even count; NaN if any); with dim, (values, indices).

    backward: g to the middle element (shared among its ties when there is no dim).
    """
    return _median(self, dim, keepdim, False)


def nanmedian(self, dim=None, keepdim=False):
    """median, with NaN ignored (NaN only where every element is NaN)."""
    return _median(self, dim, keepdim, True)


def _median(self, dim, keepdim, skip_nan):
    whole, along_dim, result_type = (
        (NanmedianBackward0, NanmedianBackward1, return_types.nanmedian)
        if skip_nan
        else (MedianBackward0, MedianBackward1, return_types.median)
    )
    x = self._data
    if dim is None:
        if x.size == 0:
            data = np.asarray(np.nan, x.dtype)
        else:
            flat = x.reshape(-1)
            data = flat[_middle(flat, 0, skip_nan)[0]]
        return record(whole, np.asarray(data), (self,), {"self": self}, save_result_as="result")
    d = _reduced_dim(self, dim, "median")
    if x.ndim == 0:
        index, data = np.zeros((), np.int64), x.copy()
    else:
        index = _middle(x, d, skip_nan)
        data = np.take_along_axis(x, index, axis=d)
        if not keepdim:
            index, data = np.squeeze(index, d), np.squeeze(data, d)
    return _values_and_indices(
        result_type, along_dim, self, data, Tensor._make(index), dim, keepdim
    )
