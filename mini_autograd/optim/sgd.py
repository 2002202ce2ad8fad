"""SGD: stochastic gradient descent, with momentum, dampening, Nesterov and weight decay."""

from ..core.tensor import Tensor
from ._pointwise import add, add_, mul_
from .optimizer import Optimizer, check_non_negative, followed_grad


class SGD(Optimizer):
    """p -= lr * g, g = grad + weight_decay * p; with momentum g becomes buf = momentum * buf +
    (1 - dampening) * g (buf = g at the first step), or g + momentum * buf with nesterov."""

    def __init__(
        self,
        params,
        lr=1e-3,
        momentum=0,
        dampening=0,
        weight_decay=0,
        nesterov=False,
        *,
        maximize=False,
        foreach=None,
        differentiable=False,
        fused=None,
    ):
        check_non_negative(lr, "learning rate")
        check_non_negative(momentum, "momentum value")
        check_non_negative(weight_decay, "weight_decay value")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def _update(self, param, grad, group):
        momentum = group["momentum"]
        grad = followed_grad(param, grad, group["maximize"], group["weight_decay"])
        if momentum != 0:
            state = self.state[param]
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = Tensor._make(grad.copy())
            else:
                add_(mul_(buf, momentum), grad, 1 - group["dampening"])
            grad = add(grad, buf._data, momentum) if group["nesterov"] else buf._data
        add_(param, grad, -group["lr"])
