"""Adadelta: steps scaled by the ratio of two running root mean squares, of past updates and
of gradients, so that the learning rate is 1 by default."""

from ._pointwise import add_, addcmul_, mul_, sqrt
from .optimizer import Optimizer, check_non_negative, followed_grad


class Adadelta(Optimizer):
    """v = rho * v + (1 - rho) * g * g;  delta = sqrt(u + eps) / sqrt(v + eps) * g;
    u = rho * u + (1 - rho) * delta * delta;  p -= lr * delta."""

    def __init__(
        self,
        params,
        lr=1.0,
        rho=0.9,
        eps=1e-6,
        weight_decay=0,
        foreach=None,
        *,
        capturable=False,
        maximize=False,
        differentiable=False,
    ):
        check_non_negative(lr, "learning rate")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_non_negative(eps, "epsilon value")
        check_non_negative(weight_decay, "weight_decay value")
        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "capturable": capturable,
            "foreach": foreach,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _update(self, param, grad, group):
        state = self._stepped_state(param, square_avg=True, acc_delta=True)
        rho, eps = group["rho"], group["eps"]
        grad = followed_grad(param, grad, group["maximize"], group["weight_decay"])
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        addcmul_(mul_(square_avg, rho), grad, grad, 1 - rho)
        std = sqrt(square_avg._data + eps)
        delta = sqrt(acc_delta._data + eps) / std * grad
        addcmul_(mul_(acc_delta, rho), delta, delta, 1 - rho)
        add_(param, delta, -group["lr"])
