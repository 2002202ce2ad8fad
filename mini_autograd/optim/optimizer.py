"""Optimizer: parameter groups, per-parameter state, step(), state_dict(), as torch.optim has them."""

import copy
import warnings
from collections import defaultdict

import numpy as np

from ..core import dtypes
from ..core.grad_mode import enable_grad, no_grad
from ..core.tensor import Tensor
from ._pointwise import add, add_


class Optimizer:
    """Parameter groups (dicts: "params" and the options) and `state`, a dict per parameter.

    `param_groups[i]` holds its own options (lr, ...), those not given taken from `defaults`;
    `state[p]` holds what the update of parameter p carries from step to step. A subclass
    gives `_update(param, grad, group)`: torch's single-tensor update of one parameter.
    """

    def __init__(self, params, defaults):
        self.defaults = defaults
        if defaults.get("differentiable"):
            raise NotImplementedError(
                "mini_autograd's optimizers do not record their updates (differentiable=True)"
            )
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                "dicts, but got " + typename(params)
            )
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __repr__(self):
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    def add_param_group(self, param_group):
        """Append a group {"params": tensors, option: value...}; options it lacks come from defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            param_group["params"] = list(params)
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    + typename(param)
                )
            if not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            param_group.setdefault(name, default)
        ids = [id(p) for p in param_group["params"]]
        if len(ids) != len(set(ids)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, "
                "this will cause an error; see github.com/pytorch/pytorch/issues/40967 for more "
                "information",
                stacklevel=3,
            )
        taken = {id(p) for group in self.param_groups for p in group["params"]}
        if not taken.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Forget the gradients before the next backward: .grad = None, or zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        if p.grad.grad_fn is not None:
                            p.grad.detach_()
                        else:
                            p.grad.requires_grad_(False)
                        p.grad.zero_()

    def step(self, closure=None):
        """Update every parameter that has a gradient, in place; returns closure()'s loss."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                for param in group["params"]:
                    if param.grad is not None:
                        self._update(param, param.grad._data, group)
        return loss

    def _stepped_state(self, param, **buffers):
        """param's state, its `step` counted on; made at the first step, with a zero buffer for
        each name given True."""
        state = self.state[param]
        if not state:
            state["step"] = step_tensor()
            for name, wanted in buffers.items():
                if wanted:
                    state[name] = buffer_like(param)
        add_(state["step"], 1)
        return state

    def _update(self, param, grad, group):
        """Change `param` in place from its gradient (a numpy array), `group`'s options and state."""
        raise NotImplementedError

    def state_dict(self):
        """{"state": {index: state}, "param_groups": [{..., "params": [index...]}]}: parameters by index."""
        index = {}
        param_groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            param_groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": param_groups}

    def load_state_dict(self, state_dict):
        """Take the state and the groups' options from a state_dict(); the parameters stay ours."""
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group"
            )
        params = {
            i: p for g, s in zip(groups, saved_groups) for i, p in zip(s["params"], g["params"])
        }
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in params:
                state[params[k]] = {key: _cast(params[k], key, value) for key, value in v.items()}
            else:
                state[k] = v
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
        self.state, self.param_groups = state, saved_groups


def _cast(param, key, value):
    """A loaded state value: tensors in the parameter's dtype, except `step`, kept as it is."""
    if isinstance(value, Tensor) and key != "step" and param.is_floating_point():
        return value.to(param.dtype)
    return value


def check_non_negative(value, what):
    """torch's error for an option that must be >= 0: "Invalid learning rate: -1"."""
    if not 0.0 <= value:
        raise ValueError(f"Invalid {what}: {value}")


def check_betas(betas):
    """torch's error for an Adam-style beta outside [0, 1): "Invalid beta parameter at index 1: 1.0"."""
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")


def followed_grad(param, grad, maximize, weight_decay):
    """The gradient a step follows: negated to maximize, plus weight_decay * param (L2 decay)."""
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = add(grad, param._data, weight_decay)
    return grad


def step_tensor():
    """A new `step` count: a 0-d tensor of the default float dtype (float32), as torch keeps it."""
    return Tensor._make(np.array(0.0, dtypes.default_float()))


def buffer_like(param, value=0):
    """A new state buffer: param's shape and dtype, every element `value` (torch.full_like)."""
    return Tensor._make(np.full_like(param._data, value))


def typename(obj):
    """The name torch's errors give: "mini_autograd.FloatTensor" for a tensor, else module.qualname."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"
