"""Module: the container for parameters, buffers and sub-modules, with PyTorch's names and rules.

As in torch.nn.Module, a Parameter assigned as an attribute goes into `_parameters`, a Module into
`_modules`, a tensor given to `register_buffer` into `_buffers`; attribute reads find them there.
"""

from collections import OrderedDict, namedtuple
from collections.abc import Mapping

import numpy as np

from ..core import dtypes
from ..core.dtypes import TENSOR_TYPE_NAMES as _TYPE_NAMES
from ..core.grad_mode import no_grad
from ..core.tensor import Tensor, as_array
from . import hooks
from .parameter import Parameter

# The dicts of a module's hooks (id -> hook) and of their flags (id -> True), as in PyTorch.
_HOOK_DICTS = (
    "_forward_pre_hooks",
    "_forward_pre_hooks_with_kwargs",
    "_forward_hooks",
    "_forward_hooks_with_kwargs",
    "_forward_hooks_always_called",
    "_backward_pre_hooks",
    "_backward_hooks",
)


def _typename(value):
    """What PyTorch's errors call a value's type: 'torch.FloatTensor' for a tensor, else its class."""
    if isinstance(value, Tensor):
        return f"torch.{_TYPE_NAMES.get(value._data.dtype.name, 'Tensor')}"
    return type(value).__name__


def _size(shape):
    """A shape as PyTorch prints it in messages: torch.Size([2, 3])."""
    return f"torch.Size({list(shape)})"


def _addindent(text, spaces):
    """Indent every line of `text` but the first (how a child's repr nests in its parent's)."""
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line for line in rest])


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict returns: the keys it did not find, and those it did not expect."""

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class Module:
    """Base class of layers: assign Parameters and Modules as attributes and they are registered."""

    def __init__(self):
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", {})
        for name in _HOOK_DICTS:
            object.__setattr__(self, name, OrderedDict())

    # --- registering ---------------------------------------------------------------------------
    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if isinstance(value, (Parameter, Module)) and params is None:
            kind = "parameters" if isinstance(value, Parameter) else "module"
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if isinstance(value, Parameter):
            self._forget(name, keep=params)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            params[name] = None
        elif isinstance(value, Module):
            self._forget(name, keep=self._modules)
            self._modules[name] = value
        elif params is not None and name in self._modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as child module '{name}' "
                    "(torch.nn.Module or None expected)"
                )
            self._modules[name] = None
        elif params is not None and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as buffer '{name}' "
                    "(torch.nn.Buffer, torch.Tensor or None expected)"
                )
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name, keep):
        """Drop `name` from the instance and every registry but `keep` (where it keeps its place)."""
        self.__dict__.pop(name, None)
        for registry in (self._parameters, self._buffers, self._modules):
            if registry is not keep:
                registry.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name):
        # Only called when normal lookup fails: parameters, buffers and modules live in dicts.
        for registry in ("_parameters", "_buffers", "_modules"):
            found = self.__dict__.get(registry)
            if found is not None and name in found:
                return found[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for registry in (self._parameters, self._buffers, self._modules):
            if name in registry:
                del registry[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted({*super().__dir__(), *self._parameters, *self._buffers, *self._modules})

    def _check_name(self, kind, name, registry):
        """PyTorch's checks of a new parameter, buffer or module name."""
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in registry:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            suffix = f", got: {name}" if kind == "module" else ""
            raise KeyError(f'{kind} name can\'t contain "."{suffix}')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')

    def register_parameter(self, name, param):
        """Add a Parameter (or None) under `name`."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name("parameter", name, self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
            )
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, compute "
                "the value in the forward() method."
            )
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Add a tensor that is state but not a parameter (in state_dict unless persistent=False)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name("buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                "(torch Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        """Add a child module (or None) under `name`."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        self._check_name("module", name, self._modules)
        self._modules[name] = module

    register_module = add_module

    # --- computing -----------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        """What the layer computes; subclasses implement it."""
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args, **kwargs):
        """forward(*args, **kwargs), with the hooks around it when there are any (nn/hooks.py)."""
        if (
            self._forward_pre_hooks
            or self._forward_hooks
            or self._backward_pre_hooks
            or self._backward_hooks
            or hooks.any_global_hooks()
        ):
            return hooks.call_with_hooks(self, args, kwargs)
        return self.forward(*args, **kwargs)

    # --- hooks ---------------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) before forward; it may return new args (a single value is wrapped
        in a tuple). with_kwargs: hook(module, args, kwargs) returning None or (args, kwargs)."""
        flags = [(self._forward_pre_hooks_with_kwargs, with_kwargs)]
        return hooks.register(self._forward_pre_hooks, hook, prepend=prepend, flags=flags)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """hook(module, args, output) after forward; it may return a new output.
        with_kwargs: hook(module, args, kwargs, output); always_call: also when forward raises."""
        flags = [
            (self._forward_hooks_with_kwargs, with_kwargs),
            (self._forward_hooks_always_called, always_call),
        ]
        return hooks.register(self._forward_hooks, hook, prepend=prepend, flags=flags)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) when the gradients of the outputs are known; it may return
        new grad_output."""
        return hooks.register(self._backward_pre_hooks, hook, prepend=prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) when the gradients of the inputs are computed;
        it may return new grad_input. Tuples, None for non-tensor arguments."""
        return hooks.register(self._backward_hooks, hook, prepend=prepend)

    # --- walking the tree ----------------------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(dotted name, module) for this module and every module below it, each once."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(
                    memo, prefix + ("." if prefix else "") + name, remove_duplicate
                )

    def modules(self):
        """This module and every module below it."""
        return (module for _, module in self.named_modules())

    def named_children(self):
        """(name, module) for the direct sub-modules."""
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self):
        """The direct sub-modules."""
        return (module for _, module in self.named_children())

    def _named_members(self, registry, prefix, recurse, remove_duplicate=True):
        """(dotted name, tensor) from one registry of every module; a shared tensor comes once."""
        seen = set()
        modules = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in getattr(module, registry).items():
                if value is None or id(value) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, parameter) pairs, in registration order, sub-modules included."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        """Every parameter of this module and its sub-modules."""
        return (p for _, p in self.named_parameters(recurse=recurse))

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, buffer) pairs, sub-modules included."""
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        """Every buffer of this module and its sub-modules."""
        return (b for _, b in self.named_buffers(recurse=recurse))

    def apply(self, fn):
        """Call fn(module) on every sub-module, then on self (e.g. to initialise weights); returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # --- state ---------------------------------------------------------------------------------
    def state_dict(self, *, prefix="", keep_vars=False):
        """An ordered dict of name -> tensor: parameters and persistent buffers (detached, sharing memory)."""
        state = OrderedDict()
        own = [*self._parameters.items()] + [
            (k, b) for k, b in self._buffers.items() if k not in self._non_persistent_buffers_set
        ]
        for name, value in own:
            if value is not None:
                state[prefix + name] = value if keep_vars else value.detach()
        for name, module in self._modules.items():
            if module is not None:
                state.update(module.state_dict(prefix=prefix + name + ".", keep_vars=keep_vars))
        return state

    def load_state_dict(self, state_dict, strict=True):
        """Copy weights in by name; accepts a torch state_dict so a torch model and its twin share weights."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        for name, module in self.named_modules():  # lazy modules materialize what is given
            if hasattr(type(module), "_lazy_load_hook"):
                module._lazy_load_hook(state_dict, name + "." if name else "")
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        with no_grad():
            for name, target in own.items():
                if name not in state_dict:
                    continue
                array = as_array(state_dict[name])
                if array.shape != target.shape:
                    errors.append(
                        f"size mismatch for {name}: copying a param with shape {_size(array.shape)} "
                        f"from checkpoint, the shape in current model is {_size(target.shape)}."
                    )
                    continue
                target.copy_(Tensor._make(np.asarray(array, dtype=target._data.dtype)))
        if strict:
            for kind, keys in (("Unexpected", unexpected), ("Missing", missing)):
                if keys:
                    listed = ", ".join(f'"{k}"' for k in keys)
                    errors.insert(0, f"{kind} key(s) in state_dict: {listed}. ")
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errors)
            )
        return _IncompatibleKeys(missing, unexpected)

    def zero_grad(self, set_to_none=True):
        """Forget the accumulated gradients (set to None, as PyTorch does by default)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                p.grad.detach_()
                p.grad.zero_()

    def requires_grad_(self, requires_grad=True):
        """Set requires_grad on every parameter (e.g. False to freeze the module); returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def train(self, mode=True):
        """Switch training mode on or off, for this module and every sub-module; returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """Switch training mode off (Dropout passes its input through); returns self."""
        return self.train(False)

    def to(self, *args, **kwargs):
        """Cast the floating-point parameters and buffers in place (they stay the same objects); returns self."""
        with no_grad():
            for module in self.modules():
                for t in (*module._parameters.values(), *module._buffers.values()):
                    if t is not None and t.is_floating_point():
                        t.data = t.to(*args, **kwargs)
                        if t.grad is not None:
                            t.grad.data = t.grad.to(*args, **kwargs)
        return self

    def cpu(self):
        """self (mini_autograd runs on the CPU only)."""
        return self

    def float(self):
        """Cast floating-point parameters and buffers to float32; returns self."""
        return self.to(dtypes.float32)

    def double(self):
        """Cast floating-point parameters and buffers to float64; returns self."""
        return self.to(dtypes.float64)

    # --- printing ------------------------------------------------------------------------------
    def extra_repr(self):
        """The text inside the parentheses of this module's repr."""
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        extra = self.extra_repr().split("\n") if self.extra_repr() else []
        children = [
            f"({name}): " + _addindent(repr(module), 2) for name, module in self._modules.items()
        ]
        lines = extra + children
        if not lines:
            return f"{self._get_name()}()"
        if len(extra) == 1 and not children:
            return f"{self._get_name()}({extra[0]})"
        return f"{self._get_name()}(\n  " + "\n  ".join(lines) + "\n)"
