"""Hooks: the user's functions that the engine calls on gradients as they flow, where PyTorch does.

    tensor.register_hook(fn)     fn(grad) before the tensor's gradient goes on (may replace it)
    node.register_prehook(fn)    fn(grad_outputs) before the node runs
    node.register_hook(fn)       fn(grad_inputs, grad_outputs) after it runs
    leaf.register_post_accumulate_grad_hook(fn)   fn(leaf) once its .grad is updated
    saved_tensors_hooks(p, u)    every tensor saved inside is kept as p(tensor), read as u(packed)

A leaf's hooks live on the tensor, a non-leaf's on the node that made it, by output number.
retain_grad() is one more tensor hook, which PyTorch always runs last.
"""

import weakref

from . import errors

# The active (pack, unpack) pairs of `saved_tensors_hooks`, innermost last.
saved_tensors_hook_stack = []


def add_post_accumulate_grad_hook(tensor, hook):
    """Register fn(tensor), which the leaf's AccumulateGrad runs after it updates .grad."""
    if not tensor.requires_grad:
        raise RuntimeError(errors.HOOK_WITHOUT_GRAD)
    if tensor.grad_fn is not None:
        raise RuntimeError(errors.POST_ACCUMULATE_ON_NON_LEAF)
    hooks = post_accumulate_grad_hooks(tensor)
    if not hooks:
        hooks = tensor._post_accumulate_grad_hooks = []
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


def post_accumulate_grad_hooks(tensor):
    """The leaf's post-accumulate hooks (an unset slot until the first one is registered)."""
    return getattr(tensor, "_post_accumulate_grad_hooks", None)


class saved_tensors_hooks:
    """Context manager: every tensor saved inside is stored as `pack(tensor)`, read back as `unpack(packed)`."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        saved_tensors_hook_stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        saved_tensors_hook_stack.pop()
        return False


class RemovableHandle:
    """Returned by `register_hook`; `.remove()` takes the hook out again."""

    def __init__(self, hooks, hook):
        self._hooks = hooks
        self._hook = hook

    def remove(self):
        """Unregister the hook (no error if it is already gone)."""
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


class RetainGradHook:
    """The hook retain_grad() installs: stores each gradient that reaches the tensor in .grad."""

    def __init__(self, tensor):
        self.tensor_ref = weakref.ref(tensor)

    def __call__(self, grad):
        tensor = self.tensor_ref()
        if tensor is not None:
            if tensor._grad is None:
                tensor._grad = grad.detach().clone() if grad.grad_fn is None else grad
            else:
                tensor._grad = tensor._grad + grad


class HookDict:
    """The hooks of a dict assigned to a leaf's `_backward_hooks`, run in order as one hook."""

    def __init__(self, hooks):
        self.hooks = hooks

    def __call__(self, grad):
        for hook in list(self.hooks.values()):
            result = hook(grad)
            if result is not None:
                grad = result
        return grad


def _get_backward_hooks(tensor):
    return getattr(tensor, "_assigned_backward_hooks", None)


def _set_backward_hooks(tensor, hooks):
    # As PyTorch's setter: a leaf's hooks become the dict's (those it had are dropped);
    # a non-leaf only keeps the dict (register_hook is what hooks a non-leaf's node).
    tensor._assigned_backward_hooks = hooks
    if tensor.grad_fn is None:
        tensor._hooks = None if hooks is None else [HookDict(hooks)]


backward_hooks_property = property(
    _get_backward_hooks, _set_backward_hooks, doc="The dict of hooks last assigned, or None."
)


def tensor_hooks(tensor, create=False):
    """The list of `tensor`'s hooks: a leaf's own, or its node's for its output number."""
    node = tensor.grad_fn
    if node is None:
        if tensor._hooks is None and create:
            tensor._hooks = []
        return tensor._hooks if tensor._hooks is not None else []
    if node._tensor_hooks is None:
        if not create:
            return []
        node._tensor_hooks = {}
    if create:
        return node._tensor_hooks.setdefault(tensor._output_nr, [])
    return node._tensor_hooks.get(tensor._output_nr, [])


def add_tensor_hook(tensor, hook):
    """Register hook(grad) on `tensor`, before retain_grad's if there is one; returns its handle."""
    hooks = tensor_hooks(tensor, create=True)
    position = len(hooks) - (1 if hooks and type(hooks[-1]) is RetainGradHook else 0)
    hooks.insert(position, hook)
    return RemovableHandle(hooks, hook)


def retains_grad(tensor):
    """Whether retain_grad() was called on `tensor`."""
    return any(type(h) is RetainGradHook for h in tensor_hooks(tensor))


class NodeHooks:
    """A node's own hooks: register_hook and register_prehook (a mixin of Node)."""

    __slots__ = ()

    def register_hook(self, hook):
        """hook(grad_inputs, grad_outputs) runs after this node; may return new grad_inputs."""
        return _add_node_hook(self, "_hooks", hook)

    def register_prehook(self, hook):
        """hook(grad_outputs) runs before this node; may return new grad_outputs."""
        return _add_node_hook(self, "_pre_hooks", hook)


def _add_node_hook(node, attribute, hook):
    hooks = getattr(node, attribute)
    if hooks is None:
        hooks = []
        setattr(node, attribute, hooks)
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


def run_pre_hooks(node, grads):
    """The hooks that run before `node`: its tensors' hooks, then its own pre-hooks."""
    if node._tensor_hooks:
        grads = run_tensor_hooks(node, grads)
    for hook in list(node._pre_hooks or ()):
        result = hook(tuple(grads))
        if result is not None:
            grads = list(_checked(hook, result, len(grads)))
    return grads


def run_tensor_hooks(node, grads):
    """The hooks of the tensors `node` made, each on its tensor's gradient (None too, as in PyTorch)."""
    grads = list(grads)
    for nr, hooks in node._tensor_hooks.items():
        if nr >= len(grads):
            grads.extend([None] * (nr + 1 - len(grads)))
        for hook in list(hooks):
            if grads[nr] is None and type(hook) is RetainGradHook:
                continue  # retain_grad keeps nothing when no gradient came
            result = hook(grads[nr])
            if result is not None:
                grads[nr] = result
    return grads


def run_post_hooks(node, outputs, grads):
    """The hooks that run after `node`, on its gradients for its inputs and the ones it got."""
    for hook in list(node._hooks):
        result = hook(tuple(outputs), tuple(grads))
        if result is not None:
            outputs = _checked(hook, result, len(outputs))
    return outputs


def _checked(hook, result, expected):
    """A node hook's replacement gradients, which must be as many as the ones it was given."""
    result = tuple(result)
    if len(result) != expected:
        name = getattr(hook, "__name__", type(hook).__name__)
        raise RuntimeError(
            errors.HOOK_RESULT_COUNT.format(name=name, got=len(result), expected=expected)
        )
    return result
