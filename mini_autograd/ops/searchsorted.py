"""searchsorted and bucketize: where values would go in a sorted sequence (integer indices, not
differentiable)."""

import numpy as np

from ..core.tensor import Tensor


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):  # noqa: A002
    """For each value of input, the index in sorted_sequence (along its last dim) before which it
    would go: after equal values with right=True (or side="right")."""
    side = side or ("right" if right else "left")
    seq = sorted_sequence._data
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter._data, axis=-1)
    values = input._data if isinstance(input, Tensor) else np.asarray(input)
    if seq.ndim <= 1:
        result = np.searchsorted(seq, values, side=side)
    else:
        result = np.empty(values.shape, np.int64)
        for index in np.ndindex(seq.shape[:-1]):
            result[index] = np.searchsorted(seq[index], values[index], side=side)
    return Tensor._make(np.asarray(result, np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries, *, out_int32=False, right=False):  # noqa: A002
    """For each value, the index of the bucket of the 1-D sorted boundaries it falls in."""
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)
