"""softmax and log_softmax along one dimension, computed stably."""

import numpy as np

from ..core.errors import SCALAR_TYPE_NAMES
from .derivatives import LogSoftmaxBackward0, SoftmaxBackward0
from .recording import record
from .reductions import numpy_names, require_dim
from .shape import normalize_dim


def _log_softmax_data(x, dim):
    shifted = x - x.max(axis=dim, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))


def _prepare(self, dim, dtype, axis, name):
    """(self in `dtype`, dim as given, dim as an index), after PyTorch's checks."""
    if axis is not None:
        dim, _ = numpy_names(name, dim, False, axis)
    require_dim(name, dim)
    if dtype is not None:
        self = self.to(dtype)  # recorded as ToCopyBackward0, as in PyTorch
    d = normalize_dim(dim, self._data.ndim)
    if self._data.dtype.kind != "f":
        kernel = (
            f"{name}_lastdim_kernel_impl" if d == self._data.ndim - 1 else f"{name}_kernel_impl"
        )
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{SCALAR_TYPE_NAMES[self._data.dtype.name]}'"
        )
    return self, dim, d


def softmax(self, dim=None, dtype=None, axis=None):
    """exp(self) normalised to sum to 1 along `dim` (in `dtype` if given).

    backward: out * (g - sum(g * out, dim)).
    """
    self, dim, d = _prepare(self, dim, dtype, axis, "softmax")
    shifted = np.exp(self._data - self._data.max(axis=d, keepdims=True))
    data = shifted / shifted.sum(axis=d, keepdims=True)
    return record(SoftmaxBackward0, data, (self,), {"dim": dim}, "result")


def log_softmax(self, dim=None, dtype=None, axis=None):
    """log(softmax(self, dim)), without overflow (in `dtype` if given).

    backward: g - exp(out) * sum(g, dim).
    """
    self, dim, d = _prepare(self, dim, dtype, axis, "log_softmax")
    data = _log_softmax_data(self._data, d)
    return record(LogSoftmaxBackward0, data, (self,), {"dim": dim}, "result")
