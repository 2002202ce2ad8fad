"""Module: the container for parameters and sub-modules, with PyTorch's names and state_dict."""

from collections import OrderedDict

import numpy as np

from ..grad_mode import no_grad
from ..tensor import Tensor, as_array
from .parameter import Parameter


class Module:
    """Base class of layers: assign Parameters and Modules as attributes and they are registered."""

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign before Module.__init__() call")
        self._parameters.pop(name, None)
        self._modules.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        object.__setattr__(self, name, value)

    def forward(self, *args, **kwargs):
        """What the layer computes; subclasses implement it."""
        raise NotImplementedError(f"{type(self).__name__} must implement forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def named_parameters(self, prefix=""):
        """(dotted name, parameter) pairs, in registration order, sub-modules included."""
        for name, p in self._parameters.items():
            yield prefix + name, p
        for name, module in self._modules.items():
            yield from module.named_parameters(prefix + name + ".")

    def parameters(self):
        """Every parameter of this module and its sub-modules."""
        return (p for _, p in self.named_parameters())

    def children(self):
        """The direct sub-modules."""
        return iter(self._modules.values())

    def state_dict(self):
        """An ordered dict of name -> tensor (detached, sharing memory with the parameters)."""
        return OrderedDict((name, p.detach()) for name, p in self.named_parameters())

    def load_state_dict(self, state_dict, strict=True):
        """Copy weights in by name; accepts a torch state_dict so a torch model and its twin share weights."""
        own = dict(self.named_parameters())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}: "
                f"missing keys {missing}, unexpected keys {unexpected}"
            )
        with no_grad():
            for name, value in state_dict.items():
                if name not in own:
                    continue
                array = as_array(value)
                if array.shape != own[name].shape:
                    raise RuntimeError(
                        f"size mismatch for {name}: copying a param with shape {tuple(array.shape)}, "
                        f"the shape in current model is {tuple(own[name].shape)}."
                    )
                own[name].copy_(Tensor._make(np.asarray(array, dtype=own[name]._data.dtype)))
        return missing, unexpected

    def zero_grad(self, set_to_none=True):
        """Forget the accumulated gradients (set to None, as PyTorch does by default)."""
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    def train(self, mode=True):
        """Switch training mode on (and for every sub-module)."""
        object.__setattr__(self, "training", mode)
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """Switch training mode off."""
        return self.train(False)

    def extra_repr(self):
        """The text inside the parentheses of this module's repr."""
        return ""

    def __repr__(self):
        lines = [
            f"  ({name}): " + repr(m).replace("\n", "\n  ") for name, m in self._modules.items()
        ]
        if not lines:
            return f"{type(self).__name__}({self.extra_repr()})"
        return f"{type(self).__name__}(\n" + "\n".join(lines) + "\n)"
