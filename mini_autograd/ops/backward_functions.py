"""mse_loss's backward, an operation with a backward of its own (MseLossBackwardBackward0),
written out: it computes in the common dtype of three tensors. The other backward functions
PyTorch's formulas call (tanh_backward...) are the FUNCTIONS of derivatives.py's table."""

from ..core.node import Node
from .broadcasting import sum_to
from .derivatives import div_scalar, mul_scalar
from .promotion import result_type
from .recording import record

MEAN = 1  # PyTorch's reduction codes: 0 none, 1 mean, 2 sum


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
