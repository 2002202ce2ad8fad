"""Adam: steps scaled by running averages of the gradient and of its square."""

from ._pointwise import addcdiv_, addcmul_, lerp_, maximum_, mul_, sqrt
from .optimizer import Optimizer, check_betas, check_non_negative, followed_grad


class Adam(Optimizer):
    """m = lerp(m, g, 1 - beta1), v = beta2 * v + (1 - beta2) * g * g (v = max(v) with amsgrad),
    p -= lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps), g = grad + wd * p."""

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        amsgrad=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
        fused=None,
        decoupled_weight_decay=False,
    ):
        check_non_negative(lr, "learning rate")
        check_non_negative(eps, "epsilon value")
        check_betas(betas)
        check_non_negative(weight_decay, "weight_decay value")
        if not all(isinstance(beta, float) for beta in betas):
            raise ValueError("betas must be either both floats or both Tensors")
        defaults = {
            "lr": lr,
            "betas": tuple(betas),
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)

    def _update(self, param, grad, group):
        state = self._stepped_state(
            param, exp_avg=True, exp_avg_sq=True, max_exp_avg_sq=group["amsgrad"]
        )
        beta1, beta2 = group["betas"]
        lr, weight_decay = group["lr"], group["weight_decay"]
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        decoupled = group["decoupled_weight_decay"]
        if decoupled and weight_decay != 0:
            mul_(param, 1 - lr * weight_decay)
        grad = followed_grad(param, grad, group["maximize"], 0 if decoupled else weight_decay)
        lerp_(exp_avg, grad, 1 - beta1)
        addcmul_(mul_(exp_avg_sq, beta2), grad, grad, 1 - beta2)
        step = state["step"].item()
        step_size = lr / (1 - beta1**step)
        bias_correction2_sqrt = (1 - beta2**step) ** 0.5
        if group["amsgrad"]:
            exp_avg_sq = maximum_(state["max_exp_avg_sq"], exp_avg_sq._data)
        denom = sqrt(exp_avg_sq._data) / bias_correction2_sqrt + group["eps"]
        addcdiv_(param, exp_avg._data, denom, -step_size)
