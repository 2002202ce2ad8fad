"""Elementwise functions: exp log tanh sigmoid relu sqrt abs, and copies."""

import numpy as np

from ..node import Node
from ..tensor import Tensor
from .recording import record, save, wants_grad


class ExpBackward0(Node):
    """out = exp(self):  d self = g * out."""

    __slots__ = ()

    def apply(self, g):
        return (g * self.saved("result"),)


class LogBackward0(Node):
    """out = log(self):  d self = g / self."""

    __slots__ = ()

    def apply(self, g):
        return (g / self.saved("self"),)


class TanhBackward0(Node):
    """out = tanh(self):  d self = g * (1 - out**2)."""

    __slots__ = ()

    def apply(self, g):
        result = self.saved("result")
        return (g * (1 - result * result),)


class SigmoidBackward0(Node):
    """out = 1 / (1 + exp(-self)):  d self = g * out * (1 - out)."""

    __slots__ = ()

    def apply(self, g):
        result = self.saved("result")
        return (g * (result * (1 - result)),)


class ReluBackward0(Node):
    """out = max(self, 0):  d self = g where out > 0, else 0."""

    __slots__ = ()

    def apply(self, g):
        return (threshold_backward(g, self.saved("result")),)


class ThresholdBackwardBackward0(Node):
    """out = g where self > 0, else 0:  d g = gg where self > 0,  d self = 0."""

    __slots__ = ()

    def apply(self, gg):
        return (
            threshold_backward(gg, self.saved("self")) if self.needs_input_grad(0) else None,
            gg * 0 if self.needs_input_grad(1) else None,
        )


class SqrtBackward0(Node):
    """out = sqrt(self):  d self = g / (2 * out)."""

    __slots__ = ()

    def apply(self, g):
        return (g / (self.saved("result") * 2),)


class AbsBackward0(Node):
    """out = |self|:  d self = g * sign(self)."""

    __slots__ = ()

    def apply(self, g):
        return (g * sgn(self.saved("self")),)


class SgnBackward0(Node):
    """out = sign(self):  d self = 0."""

    __slots__ = ()

    def apply(self, g):
        return (g * 0,)


class CloneBackward0(Node):
    """out = a copy of self:  d self = g."""

    __slots__ = ()

    def apply(self, g):
        return (g,)


class ToCopyBackward0(Node):
    """out = self cast to another dtype:  d self = g cast back."""

    __slots__ = ()

    def apply(self, g):
        return (cast(g, self._info),)


def _unary(node_type, self, data, keep):
    """Record a one-input operation that keeps its input ('self') or its output ('result')."""
    if not wants_grad(self):
        return Tensor._make(data)
    if keep == "self":
        return record(node_type, data, (self,), {"self": save(self)})
    return record(node_type, data, (self,), {}, save_result_as="result")


def exp(self):
    """e ** self."""
    return _unary(ExpBackward0, self, np.exp(self._data), "result")


def log(self):
    """Natural logarithm."""
    return _unary(LogBackward0, self, np.log(self._data), "self")


def tanh(self):
    """Hyperbolic tangent."""
    return _unary(TanhBackward0, self, np.tanh(self._data), "result")


def sigmoid(self):
    """1 / (1 + e ** -self)."""
    return _unary(SigmoidBackward0, self, _sigmoid(self._data), "result")


def _sigmoid(x):
    # Written with exp of a non-positive number only, so it never overflows.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def relu(self):
    """max(self, 0)."""
    return _unary(ReluBackward0, self, np.maximum(self._data, 0), "result")


def threshold_backward(g, result):
    """relu's backward, g where result > 0; recorded so that create_graph can differentiate it."""
    data = np.where(result._data > 0, g._data, 0).astype(g._data.dtype, copy=False)
    if not wants_grad(g, result):
        return Tensor._make(data)
    saved = {"self": save(result), "threshold": 0}
    return record(ThresholdBackwardBackward0, data, (g, result), saved)


def sgn(self):
    """The sign of each element (-1, 0 or 1); abs's backward uses it."""
    data = np.sign(self._data)
    if not wants_grad(self):
        return Tensor._make(data)
    return record(SgnBackward0, data, (self,), {"self": save(self)}, save_result_as="result")


def sqrt(self):
    """Square root."""
    return _unary(SqrtBackward0, self, np.sqrt(self._data), "result")


def abs(self):
    """Absolute value."""
    return _unary(AbsBackward0, self, np.abs(self._data), "self")


def clone(self):
    """A copy with its own memory, still connected to the graph."""
    data = self._data.copy()
    if not wants_grad(self):
        return Tensor._make(data)
    return record(CloneBackward0, data, (self,))


def contiguous(self):
    """self when its elements are already laid out row by row in memory, else clone(self)."""
    return self if self._data.flags.c_contiguous else clone(self)


def is_contiguous(self):
    """True when the elements are laid out row by row in memory (no view has reordered them)."""
    return self._data.flags.c_contiguous


def cast(self, np_dtype):
    """self converted to another dtype (recorded as ToCopyBackward0)."""
    data = self._data.astype(np_dtype)
    if not wants_grad(self):
        return Tensor._make(data)
    return record(ToCopyBackward0, data, (self,), info=self._data.dtype)
