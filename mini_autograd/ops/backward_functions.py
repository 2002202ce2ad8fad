"""PyTorch's backward functions: the operations its backward formulas call, each with a backward.

tanh's backward is not `g * (1 - out**2)` written with Tensor operations but one operation,
tanh_backward(g, out); under create_graph=True it records a TanhBackwardBackward0 node, which
saves what PyTorch saves, so the gradient can be differentiated again. Without create_graph
(grad mode is off inside backward) nothing is recorded: each is one numpy expression.

    tanh_backward(g, out)                  g * (1 - out**2)             TanhBackwardBackward0
    sigmoid_backward(g, out)               g * (1 - out) * out          SigmoidBackwardBackward0
    threshold_backward(g, self, t)         g where self > t, else 0     ThresholdBackwardBackward0
    softmax_backward_data(g, out, dim)     out * (g - sum(g * out))     SoftmaxBackwardDataBackward0
    log_softmax_backward_data(g, out, dim) g - exp(out) * sum(g)        LogSoftmaxBackwardDataBackward0
    mse_loss_backward(g, self, target, r)  2 * (self - target) * g / N  MseLossBackwardBackward0
"""

import numpy as np

from ..node import Node
from .broadcasting import sum_to
from .recording import record, result_type
from .scalar import add_scalar, div_scalar, mul_scalar, zeros_outside_graph
from .shape import normalize_dim

MEAN = 1  # PyTorch's reduction codes: 0 none, 1 mean, 2 sum


class TanhBackwardBackward0(Node):
    """out = g * (1 - output**2):  d g = tanh_backward(gg, output),  d output = gg * (-2 * output * g)."""

    __slots__ = ()

    def apply(self, gg):
        grad_output, output = self.saved("grad_output"), self.saved("output")
        return (
            tanh_backward(gg, output) if self.needs_input_grad(0) else None,
            gg * (mul_scalar(output, -2) * grad_output) if self.needs_input_grad(1) else None,
        )


def tanh_backward(grad_output, output):
    """tanh's backward from its output: grad_output * (1 - output**2)."""
    y = output._data
    data = grad_output._data * (1 - y * y)
    saved = {"grad_output": grad_output, "output": output}
    return record(TanhBackwardBackward0, data, (grad_output, output), saved)


class SigmoidBackwardBackward0(Node):
    """out = g * (1 - output) * output:  d g = sigmoid_backward(gg, output),
    d output = gg * g * (-2 * output + 1)."""

    __slots__ = ()

    def apply(self, gg):
        grad_output, output = self.saved("grad_output"), self.saved("output")
        grad_out = None
        if self.needs_input_grad(1):
            grad_out = gg * grad_output * add_scalar(mul_scalar(output, -2), 1)
        return (sigmoid_backward(gg, output) if self.needs_input_grad(0) else None, grad_out)


def sigmoid_backward(grad_output, output):
    """sigmoid's backward from its output: grad_output * (1 - output) * output."""
    y = output._data
    data = grad_output._data * (1 - y) * y
    saved = {"grad_output": grad_output, "output": output}
    return record(SigmoidBackwardBackward0, data, (grad_output, output), saved)


class ThresholdBackwardBackward0(Node):
    """out = g where self > threshold, else 0:  d g = threshold_backward(gg, self, threshold),
    d self = 0 (zeros outside the graph)."""

    __slots__ = ()

    def apply(self, gg):
        self_, threshold = self.saved("self"), self._saved["threshold"]
        return (
            threshold_backward(gg, self_, threshold) if self.needs_input_grad(0) else None,
            zeros_outside_graph(gg) if self.needs_input_grad(1) else None,
        )


def threshold_backward(grad_output, self, threshold):
    """relu's backward (self its output, threshold 0): 0 where self <= threshold, else grad_output.

    NaN is not <= threshold, so its gradient passes, as in PyTorch.
    """
    data = np.where(self._data <= threshold, 0, grad_output._data)
    saved = {"self": self, "threshold": threshold}
    return record(ThresholdBackwardBackward0, data, (grad_output, self), saved)


class SoftmaxBackwardDataBackward0(Node):
    """out = output * (g - sum(g * output)):  d g = softmax_backward_data(gg, output, dim),
    d output = g * gg - sum(output * g) * gg - g * sum(output * gg)."""

    __slots__ = ()

    def apply(self, gg):
        grad_output, output = self.saved("grad_output"), self.saved("output")
        dim = self._saved["dim"]
        grad_out = None
        if self.needs_input_grad(1):
            grad_out = (
                grad_output * gg
                - (output * grad_output).sum(dim, keepdim=True) * gg
                - grad_output * (output * gg).sum(dim, keepdim=True)
            )
        return (
            softmax_backward_data(gg, output, dim) if self.needs_input_grad(0) else None,
            grad_out,
        )


def softmax_backward_data(grad_output, output, dim):
    """softmax's backward from its output: output * (grad_output - sum(grad_output * output, dim))."""
    g, y = grad_output._data, output._data
    data = y * (g - (g * y).sum(axis=normalize_dim(dim, y.ndim), keepdims=True))
    saved = {"dim": dim, "grad_output": grad_output, "output": output}
    return record(SoftmaxBackwardDataBackward0, data, (grad_output, output), saved)


class LogSoftmaxBackwardDataBackward0(Node):
    """out = g - exp(output) * sum(g):  d g = gg - sum(gg * exp(output)),
    d output = -sum(g) * exp(output) * gg."""

    __slots__ = ()

    def apply(self, gg):
        grad_output, output = self.saved("grad_output"), self.saved("output")
        dim = self._saved["dim"]
        return (
            gg - (gg * output.exp()).sum(dim, keepdim=True) if self.needs_input_grad(0) else None,
            -grad_output.sum(dim, keepdim=True) * output.exp() * gg
            if self.needs_input_grad(1)
            else None,
        )


def log_softmax_backward_data(grad_output, output, dim):
    """log_softmax's backward from its output: grad_output - exp(output) * sum(grad_output, dim)."""
    g, y = grad_output._data, output._data
    data = g - np.exp(y) * g.sum(axis=normalize_dim(dim, y.ndim), keepdims=True)
    saved = {"dim": dim, "grad_output": grad_output, "output": output}
    return record(LogSoftmaxBackwardDataBackward0, data, (grad_output, output), saved)


class MseLossBackwardBackward0(Node):
    """out = 2 * (self - target) * g / N:  d g = mse_loss_backward(gg, self, target),
    d self = 2 * gg * g / N,  d target = -(2 * gg * g / N)  (N = numel for a mean, else 1)."""

    __slots__ = ()

    def apply(self, gg):
        grad_output, self_, target = (
            self.saved("grad_output"),
            self.saved("self"),
            self.saved("target"),
        )
        reduction = self._saved["reduction"]
        grad_grad_output = grad_self = grad_target = None
        if self.needs_input_grad(0):
            grad = mse_loss_backward(gg, self_, target, reduction)
            grad_grad_output = sum_to(grad, grad_output._data.shape)
        if self.needs_input_grad(1):
            grad_self = _mse_loss_double_backward(gg * grad_output, self_, reduction)
        if self.needs_input_grad(2):
            grad_target = -_mse_loss_double_backward(gg * grad_output, target, reduction)
        return grad_grad_output, grad_self, grad_target


def _mse_loss_double_backward(grad, input, reduction):
    """2 * grad, divided by input's numel for a mean (PyTorch's mse_loss_double_backward)."""
    grad_input = mul_scalar(grad, 2)
    return div_scalar(grad_input, input._data.size) if reduction == MEAN else grad_input


def mse_loss_backward(grad_output, self, target, reduction):
    """mse_loss's backward: 2 / N * (self - target) * grad_output (N = numel for a mean, else 1),
    computed in the three tensors' common dtype and given in self's, as PyTorch's kernel does."""
    norm = 2.0 / self._data.size if reduction == MEAN else 2.0
    dtype = result_type(grad_output, self, target)
    x, t, g = (a._data.astype(dtype, copy=False) for a in (self, target, grad_output))
    data = (norm * (x - t) * g).astype(self._data.dtype, copy=False)
    saved = {
        "grad_output": grad_output,
        "reduction": reduction,
        "self": self,
        "target": target,
    }
    return record(MseLossBackwardBackward0, data, (grad_output, self, target), saved)
