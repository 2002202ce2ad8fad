"""NAdam: Adam with Nesterov momentum, its momentum coefficient warming up (Dozat, 2016)."""

import numpy as np

from ..core import dtypes
from ..core.tensor import Tensor
from ._pointwise import addcdiv_, addcmul_, lerp_, mul_, sqrt
from .optimizer import Optimizer, check_betas, check_non_negative, followed_grad


class NAdam(Optimizer):
    """mu_t = beta1 (1 - 0.96**(t psi) / 2), m and v as Adam's, then
    p -= lr (1 - mu_t) / (1 - prod mu) * g / d + lr mu_{t+1} / (1 - prod mu * mu_{t+1}) * m / d,
    d = sqrt(v / (1 - beta2**t)) + eps, psi the momentum_decay."""

    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        momentum_decay=4e-3,
        decoupled_weight_decay=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
    ):
        check_non_negative(lr, "learning rate")
        check_non_negative(eps, "epsilon value")
        check_betas(betas)
        check_non_negative(weight_decay, "weight_decay value")
        check_non_negative(momentum_decay, "momentum_decay value")
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _update(self, param, grad, group):
        fresh = not self.state[param]
        state = self._stepped_state(param, exp_avg=True, exp_avg_sq=True)
        if fresh:  # torch's order: step, mu_product (a float32 scalar), exp_avg, exp_avg_sq
            buffers = {key: state.pop(key) for key in ("exp_avg", "exp_avg_sq")}
            state["mu_product"] = Tensor._make(np.array(1.0, dtypes.default_float()))
            state.update(buffers)
        beta1, beta2 = group["betas"]
        lr, weight_decay, eps = group["lr"], group["weight_decay"], group["eps"]
        exp_avg, exp_avg_sq, mu_product = state["exp_avg"], state["exp_avg_sq"], state["mu_product"]
        step = state["step"].item()
        bias_correction2 = 1 - beta2**step
        decoupled = group["decoupled_weight_decay"]
        if decoupled and weight_decay != 0:
            mul_(param, 1 - lr * weight_decay)
        grad = followed_grad(param, grad, group["maximize"], 0 if decoupled else weight_decay)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * group["momentum_decay"])))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * group["momentum_decay"])))
        mul_(mu_product, mu)
        lerp_(exp_avg, grad, 1 - beta1)
        addcmul_(mul_(exp_avg_sq, beta2), grad, grad, 1 - beta2)
        dtype = exp_avg_sq._data.dtype.type
        denom = sqrt(exp_avg_sq._data / dtype(bias_correction2)) + dtype(eps)
        product = mu_product.item()
        addcdiv_(param, grad, denom, -lr * (1.0 - mu) / (1.0 - product))
        addcdiv_(param, exp_avg._data, denom, (-lr * mu_next) / (1.0 - product * mu_next))
