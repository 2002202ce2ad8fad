"""softmax and log_softmax along one dimension, computed stably."""

import numpy as np

from ..node import Node
from ..tensor import Tensor
from .recording import record, wants_grad
from .shape import normalize_dim


class SoftmaxBackward0(Node):
    """out = exp(x) / sum(exp(x)):  d x = out * (g - sum(g * out))."""

    __slots__ = ()

    def apply(self, g):
        out = self.saved("result")
        return (out * (g - (g * out).sum(self._info, keepdim=True)),)


class LogSoftmaxBackward0(Node):
    """out = x - log(sum(exp(x))):  d x = g - exp(out) * sum(g)."""

    __slots__ = ()

    def apply(self, g):
        out = self.saved("result")
        return (g - out.exp() * g.sum(self._info, keepdim=True),)


def _log_softmax_data(x, dim):
    shifted = x - x.max(axis=dim, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))


def softmax(self, dim):
    """exp(self) normalised to sum to 1 along `dim`."""
    d = normalize_dim(dim, self._data.ndim)
    shifted = np.exp(self._data - self._data.max(axis=d, keepdims=True))
    data = shifted / shifted.sum(axis=d, keepdims=True)
    if not wants_grad(self):
        return Tensor._make(data)
    return record(SoftmaxBackward0, data, (self,), {"dim": dim}, "result", info=d)


def log_softmax(self, dim):
    """log(softmax(self, dim)), without overflow."""
    d = normalize_dim(dim, self._data.ndim)
    data = _log_softmax_data(self._data, d)
    if not wants_grad(self):
        return Tensor._make(data)
    return record(LogSoftmaxBackward0, data, (self,), {"dim": dim}, "result", info=d)
