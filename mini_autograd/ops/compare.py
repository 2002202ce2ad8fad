"""Comparisons: elementwise, giving bool tensors that never require grad."""

import numpy as np

from ..tensor import Tensor


def _compare(op):
    def compare(self, other):
        other_data = other._data if isinstance(other, Tensor) else other
        return Tensor._make(np.asarray(op(self._data, other_data)))

    compare.__doc__ = f"Elementwise {op.__name__} (a bool tensor, outside the graph)."
    return compare


eq = _compare(np.equal)
ne = _compare(np.not_equal)
lt = _compare(np.less)
le = _compare(np.less_equal)
gt = _compare(np.greater)
ge = _compare(np.greater_equal)
