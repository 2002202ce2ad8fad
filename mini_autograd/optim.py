"""Optimizers, as in torch.optim: they update parameters in place (bumping their versions)."""

import numpy as np

from .grad_mode import no_grad


class Optimizer:
    """Holds the parameters and their per-parameter state; `step()` updates them in place."""

    def __init__(self, params, defaults):
        self.params = list(params)
        if not self.params:
            raise ValueError("optimizer got an empty parameter list")
        self.defaults = defaults
        self.state = {}

    def zero_grad(self, set_to_none=True):
        """Forget the gradients before the next backward."""
        for p in self.params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    def _gradients(self):
        """(p, g) for every parameter with a gradient; g includes weight decay (g + wd * p)."""
        decay = self.defaults["weight_decay"]
        for p in self.params:
            if p.grad is not None:
                g = p.grad._data
                yield p, (g + decay * p._data if decay else g)

    def _update(self, p, delta):
        """p -= delta, in place: the parameter's version goes up, as with torch's optimizers."""
        p._data -= delta
        p._bump_version()


class SGD(Optimizer):
    """p -= lr * g, with optional momentum (buf = momentum * buf + g) and weight decay."""

    def __init__(self, params, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        super().__init__(
            params,
            dict(
                lr=lr,
                momentum=momentum,
                dampening=dampening,
                weight_decay=weight_decay,
                nesterov=nesterov,
            ),
        )

    @no_grad()
    def step(self):
        """One update of every parameter that has a gradient."""
        d = self.defaults
        for p, g in self._gradients():
            if d["momentum"]:
                buf = self.state.get(p)
                if buf is None:
                    buf = self.state[p] = g.copy()
                else:
                    buf *= d["momentum"]
                    buf += (1 - d["dampening"]) * g
                g = g + d["momentum"] * buf if d["nesterov"] else buf
            self._update(p, d["lr"] * g)


class Adam(Optimizer):
    """Adam: m and v are running means of g and g**2; p -= lr * m_hat / (sqrt(v_hat) + eps)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    @no_grad()
    def step(self):
        """One update of every parameter that has a gradient."""
        d = self.defaults
        beta1, beta2 = d["betas"]
        for p, g in self._gradients():
            state = self.state.setdefault(
                p, {"step": 0, "m": np.zeros_like(p._data), "v": np.zeros_like(p._data)}
            )
            state["step"] += 1
            m, v, t = state["m"], state["v"], state["step"]
            m *= beta1
            m += (1 - beta1) * g
            v *= beta2
            v += (1 - beta2) * g * g
            step_size = d["lr"] / (1 - beta1**t)
            denominator = np.sqrt(v) / np.sqrt(1 - beta2**t) + d["eps"]
            self._update(p, (step_size * m / denominator).astype(p._data.dtype, copy=False))
