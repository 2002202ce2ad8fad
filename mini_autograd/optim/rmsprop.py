"""RMSprop: steps divided by a running root mean square of the gradient."""

from ._pointwise import add_, addcdiv_, addcmul, addcmul_, lerp_, mul_, sqrt
from .optimizer import Optimizer, check_non_negative, followed_grad


class RMSprop(Optimizer):
    """v = alpha * v + (1 - alpha) * g * g, avg = sqrt(v) + eps (centered: sqrt(v - mean(g)**2)),
    p -= lr * g / avg; with momentum buf = momentum * buf + g / avg, p -= lr * buf."""

    def __init__(
        self,
        params,
        lr=1e-2,
        alpha=0.99,
        eps=1e-8,
        weight_decay=0,
        momentum=0,
        centered=False,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ):
        check_non_negative(lr, "learning rate")
        check_non_negative(eps, "epsilon value")
        check_non_negative(momentum, "momentum value")
        check_non_negative(weight_decay, "weight_decay value")
        check_non_negative(alpha, "alpha value")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "capturable": capturable,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _update(self, param, grad, group):
        state = self._stepped_state(
            param,
            square_avg=True,
            momentum_buffer=group["momentum"] > 0,
            grad_avg=group["centered"],
        )
        alpha, lr = group["alpha"], group["lr"]
        square_avg = state["square_avg"]
        grad = followed_grad(param, grad, group["maximize"], group["weight_decay"])
        addcmul_(mul_(square_avg, alpha), grad, grad, 1 - alpha)
        if group["centered"]:
            grad_avg = lerp_(state["grad_avg"], grad, 1 - alpha)._data
            avg = sqrt(addcmul(square_avg._data, grad_avg, grad_avg, -1))
        else:
            avg = sqrt(square_avg._data)
        avg += group["eps"]
        if group["momentum"] > 0:
            buf = addcdiv_(mul_(state["momentum_buffer"], group["momentum"]), grad, avg)
            add_(param, buf._data, -lr)
        else:
            addcdiv_(param, grad, avg, -lr)
