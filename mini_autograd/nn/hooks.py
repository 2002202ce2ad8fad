"""Module hooks, as in torch.nn.Module: functions called around forward, and in backward with the
gradients of the module's inputs and outputs.

Forward hooks are plain calls. Backward hooks need the module's boundary in the graph: as in
PyTorch, the inputs and the outputs pass through an identity Function (BackwardHookFunction),
whose two `BackwardHookFunctionBackward` nodes see the gradients of the outputs (first) and of the
inputs (last), and call the hooks from there.
"""

import warnings
import weakref
from collections import OrderedDict

from ..autograd.function import Function
from ..core.grad_mode import is_grad_enabled
from ..core.tensor import Tensor

# Hooks of every module, run before each module's own (PyTorch's global hooks, for debugging).
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_with_kwargs = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()


class RemovableHandle:
    """What a register_*_hook method returns: `.remove()` (or leaving a `with` block) unregisters."""

    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        extras = [extra_dict] if isinstance(extra_dict, dict) else extra_dict or []
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def remove(self):
        """Take the hook out of its dict (and the flags kept for it); nothing if already gone."""
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            hooks = ref()
            if hooks is not None:
                hooks.pop(self.id, None)

    def __getstate__(self):
        # the dicts themselves, so that a deep copy's handle points into the copied dicts
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state):
        hooks, self.id, extras = state
        self.hooks_dict_ref = weakref.ref(hooks if hooks is not None else OrderedDict())
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras if d is not None)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.remove()


def register(hooks, hook, *, prepend=False, flags=()):
    """Add hook to the `hooks` dict under a new handle's id (first if prepend); `flags` are the
    dicts that mark it (with_kwargs, always_call) and forget it with it."""
    handle = RemovableHandle(hooks, extra_dict=[d for d, _ in flags])
    hooks[handle.id] = hook
    for marks, wanted in flags:
        if wanted:
            marks[handle.id] = True
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def register_module_forward_pre_hook(hook):
    """hook(module, args) before every module's forward (before the module's own pre-hooks)."""
    return register(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """hook(module, args, output) after every module's forward (before the module's own hooks)."""
    flags = [
        (_global_forward_hooks_with_kwargs, with_kwargs),
        (_global_forward_hooks_always_called, always_call),
    ]
    return register(_global_forward_hooks, hook, flags=flags)


def register_module_full_backward_pre_hook(hook):
    """hook(module, grad_output) for every module (before the module's own backward pre-hooks)."""
    return register(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    """hook(module, grad_input, grad_output) for every module (before the module's own)."""
    return register(_global_backward_hooks, hook)


class BackwardHookFunction(Function):
    """y = x for each tensor: a node at the module's boundary whose hooks see the gradients."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *args):
        return args


class BackwardHook:
    """The backward hooks of one module call: grad_output is caught at the outputs' boundary node,
    the hooks run at the inputs' one, with grad_input (None for non-tensor arguments)."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module, self.user_hooks, self.user_pre_hooks = module, user_hooks, user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = self.n_outputs = -1
        self.input_tensors_index = self.output_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        """values placed at `indices` of a tuple of `size` Nones."""
        packed = [None] * size
        for index, value in zip(indices, values):
            packed[index] = value
        return tuple(packed)

    def _apply_on_tensors(self, fn, args):
        """args with their tensors passed through BackwardHookFunction (fn gets its node), and the
        tensors' positions; args unchanged and None when no gradient will flow."""
        indices = [i for i, arg in enumerate(args) if isinstance(arg, Tensor)]
        tensors = [args[i] for i in indices]
        if not (any(t.requires_grad for t in tensors) and is_grad_enabled()):
            return args, None
        new_tensors = BackwardHookFunction.apply(*tensors)
        if not new_tensors:
            raise RuntimeError(
                "Cannot set Module backward hook for a Module with no input Tensors."
            )
        fn(next(t.grad_fn for t in new_tensors if t.grad_fn is not None))
        replaced = list(args)
        for index, tensor in zip(indices, new_tensors):
            replaced[index] = tensor
        return tuple(replaced), indices

    def setup_input_hook(self, args):
        """The inputs, through the node where the user hooks will run."""

        def hook(grad_input, _):
            if self.grad_outputs is None:  # the gradient did not come through the outputs
                return None
            grads = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, grads, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(grads):
                    raise RuntimeError(
                        "Backward hook returned an invalid number of grad_input, "
                        f"got {len(out)}, but expected {len(grads)}"
                    )
                grads = out
            self.grad_outputs = None
            return tuple(grads[i] for i in self.input_tensors_index)

        new_args, self.input_tensors_index = self._apply_on_tensors(
            lambda node: node.register_hook(hook), args
        )
        self.n_inputs = len(args)
        return new_args

    def setup_output_hook(self, result):
        """The outputs, through the node that catches grad_output and runs the pre-hooks."""

        def hook(_, grad_output):
            # one entry per output (the engine may stop at the last output that got a gradient)
            grad_output = (
                *grad_output,
                *[None] * (len(self.output_tensors_index) - len(grad_output)),
            )
            self.grad_outputs = self._pack_with_none(
                self.output_tensors_index, grad_output, self.n_outputs
            )
            for user_pre_hook in self.user_pre_hooks:
                new = user_pre_hook(self.module, self.grad_outputs)
                if new is None:
                    continue
                if len(new) != len(self.grad_outputs):
                    raise RuntimeError(
                        "Backward pre hook returned an invalid number of grad_output, "
                        f"got {len(new)}, but expected {len(self.grad_outputs)}"
                    )
                self.grad_outputs = new
            local_grad_outputs = self.grad_outputs
            if self.input_tensors_index is None:  # no input needs a gradient: call the hooks now
                warnings.warn(
                    "Full backward hook is firing when gradients are computed with respect to "
                    "module outputs since no inputs require gradients. See "
                    "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                    "#torch.nn.Module.register_full_backward_hook for more details.",
                    stacklevel=5,
                )
                grad_inputs = (None,) * self.n_inputs
                for user_hook in self.user_hooks:
                    res = user_hook(self.module, grad_inputs, self.grad_outputs)
                    if res is not None and not (
                        isinstance(res, tuple) and all(g is None for g in res)
                    ):
                        raise RuntimeError(
                            "Backward hook for Modules where no input requires gradient should "
                            "always return None or None for all gradients."
                        )
                self.grad_outputs = None
            return tuple(local_grad_outputs[i] for i in self.output_tensors_index)

        single = not isinstance(result, tuple)
        outputs = (result,) if single else result
        new_outputs, self.output_tensors_index = self._apply_on_tensors(
            lambda node: node.register_hook(hook), outputs
        )
        self.n_outputs = len(outputs)
        return new_outputs[0] if single else new_outputs


def any_global_hooks():
    """True when a hook for every module is registered."""
    return bool(
        _global_forward_pre_hooks
        or _global_forward_hooks
        or _global_backward_pre_hooks
        or _global_backward_hooks
    )


def _run_forward_pre_hooks(module, args, kwargs):
    """(args, kwargs) after the forward pre-hooks (global, then the module's), each of which may
    replace them."""
    for hook_id, hook in (*_global_forward_pre_hooks.items(), *module._forward_pre_hooks.items()):
        if hook_id in module._forward_pre_hooks_with_kwargs:
            new = hook(module, args, kwargs)
            if new is not None:
                if not (isinstance(new, tuple) and len(new) == 2):
                    raise RuntimeError(
                        "forward pre-hook must return None or a tuple of (new_args, "
                        f"new_kwargs), but got {new}."
                    )
                args, kwargs = new
        else:
            new = hook(module, args)
            if new is not None:
                args = new if isinstance(new, tuple) else (new,)
    return args, kwargs


def call_with_hooks(module, args, kwargs):
    """module.forward(*args, **kwargs) with every hook, in PyTorch's order: forward pre-hooks
    (global, then the module's), the inputs' backward boundary, forward, forward hooks, the
    outputs' boundary. If forward raises, the always_call forward hooks still run."""
    result = None
    called = set()
    always = {**_global_forward_hooks_always_called, **module._forward_hooks_always_called}
    forward_hooks = [*_global_forward_hooks.items(), *module._forward_hooks.items()]

    def run_forward_hook(hook_id, hook):
        if (
            hook_id in module._forward_hooks_with_kwargs
            or hook_id in _global_forward_hooks_with_kwargs
        ):
            return hook(module, args, kwargs, result)
        return hook(module, args, result)

    try:
        pre_hooks = [*_global_backward_pre_hooks.values(), *module._backward_pre_hooks.values()]
        hooks = [*_global_backward_hooks.values(), *module._backward_hooks.values()]
        args, kwargs = _run_forward_pre_hooks(module, args, kwargs)
        backward_hook = BackwardHook(module, hooks, pre_hooks) if hooks or pre_hooks else None
        if backward_hook:
            args = backward_hook.setup_input_hook(args)
        result = module.forward(*args, **kwargs)
        for hook_id, hook in forward_hooks:
            if hook_id in always:
                called.add(hook_id)
            new = run_forward_hook(hook_id, hook)
            if new is not None:
                result = new
        if backward_hook:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn(
                    "For backward hooks to be called, module output should be a Tensor or a "
                    f"tuple of Tensors but received {type(result)}",
                    stacklevel=3,
                )
            result = backward_hook.setup_output_hook(result)
        return result
    except Exception:
        for hook_id, hook in forward_hooks:
            if hook_id in always and hook_id not in called:
                try:
                    new = run_forward_hook(hook_id, hook)
                except Exception as error:  # noqa: BLE001 - forward's error is the one raised
                    scope = "global module" if hook_id in _global_forward_hooks else "module"
                    warnings.warn(
                        f"{scope} forward hook with ``always_call=True`` raised an exception that "
                        f"was silenced as another error was raised in forward: {error}",
                        stacklevel=3,
                    )
                    continue
                if new is not None:
                    result = new
        raise
