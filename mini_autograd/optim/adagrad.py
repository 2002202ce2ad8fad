"""Adagrad: steps divided by the root of the sum of all squared gradients so far."""

from ._pointwise import addcdiv_, addcmul_, sqrt
from .optimizer import Optimizer, buffer_like, check_non_negative, followed_grad, step_tensor


class Adagrad(Optimizer):
    """sum += g * g, p -= lr / (1 + (t - 1) * lr_decay) * g / (sqrt(sum) + eps),
    g = grad + weight_decay * p; sum starts at initial_accumulator_value."""

    def __init__(
        self,
        params,
        lr=1e-2,
        lr_decay=0,
        weight_decay=0,
        initial_accumulator_value=0,
        eps=1e-10,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        fused=None,
    ):
        check_non_negative(lr, "learning rate")
        check_non_negative(lr_decay, "lr_decay value")
        check_non_negative(weight_decay, "weight_decay value")
        check_non_negative(initial_accumulator_value, "initial_accumulator_value value")
        check_non_negative(eps, "epsilon value")
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:  # unlike the others, Adagrad makes its state up front
            for p in group["params"]:
                self.state[p]["step"] = step_tensor()
                self.state[p]["sum"] = buffer_like(p, initial_accumulator_value)

    def _update(self, param, grad, group):
        state = self._stepped_state(param)
        step = state["step"].item()
        grad = followed_grad(param, grad, group["maximize"], group["weight_decay"])
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        addcmul_(state["sum"], grad, grad, 1)
        std = sqrt(state["sum"]._data) + group["eps"]
        addcdiv_(param, grad, std, -clr)
