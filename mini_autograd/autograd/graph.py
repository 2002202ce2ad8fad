"""Graph utilities, as in torch.autograd.graph: the Node type, gradient edges, multi-tensor
hooks and the saved-tensor hooks."""

import contextlib

from ..core import engine_state, hooks, saved
from ..core.backward_calls import GradientEdge
from ..core.grad_mode import enable_grad
from ..core.node import Node
from ..core.tensor import Tensor
from .function import BackwardCFunction
from .mutation_on_saved import allow_mutation_on_saved_tensors

__all__ = [
    "GradientEdge",
    "Node",
    "allow_mutation_on_saved_tensors",
    "disable_saved_tensors_hooks",
    "get_gradient_edge",
    "increment_version",
    "register_multi_grad_hook",
    "save_on_cpu",
    "saved_tensors_hooks",
]


def _node_of(tensor):
    """The node the gradient of `tensor` goes to: its grad_fn, or (for a leaf) its AccumulateGrad."""
    if tensor.requires_grad and tensor.grad_fn is None:
        with enable_grad():  # as PyTorch does it, through a view (which takes a sequence number)
            return tensor.view_as(tensor).grad_fn.next_functions[0][0]
    if tensor.grad_fn is None:
        raise AssertionError("Expected gradient function to be set")
    return tensor.grad_fn


def get_gradient_edge(tensor):
    """The GradientEdge where the gradient of `tensor` arrives: grad(loss, edge) is grad(loss, tensor)."""
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require "
            "gradients"
        )
    node = _node_of(tensor)
    token = None
    if isinstance(node, BackwardCFunction):  # PyTorch's keeps a Python node alive through a view
        with enable_grad():
            token = tensor.view_as(tensor).grad_fn
    return GradientEdge(node, tensor._output_nr, ownership_token=token)


def increment_version(tensor):
    """Count an in-place change made behind autograd's back (on `.data`, say) on a tensor or several."""
    tensors = (tensor,) if isinstance(tensor, Tensor) else tensor
    try:
        tensors = list(tensors)
    except TypeError:
        raise RuntimeError("increment_version expect a Iterable[Tensor] as input") from None
    if not all(isinstance(t, Tensor) for t in tensors):
        raise RuntimeError("increment_version expects each element of the iterable to be a tensor")
    for t in tensors:
        t._bump_version()


class _MultiHandle:
    """The handle of register_multi_grad_hook: `.remove()` takes out the hook of every tensor."""

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        """Unregister the hooks."""
        for handle in self.handles:
            handle.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """fn(grads) once the gradients of all `tensors` this backward computes are there ("all",
    None for the others), or fn(grad) with the first one ("any")."""
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    if mode == "any":
        ran = set()  # the backward calls in which fn already ran

        def first_only(grad):
            call = engine_state.current_graph_task_id()
            if call not in ran:
                ran.add(call)
                fn(grad)

        return _MultiHandle(tuple(t.register_hook(first_only) for t in tensors if t.requires_grad))

    nodes = [_node_of(t) for t in tensors]
    waiting, buffers = {}, {}  # per backward call: hooks still to run, gradients so far

    def hook_for(index):
        def collect(grad):
            call = engine_state.current_graph_task_id()
            if call not in waiting:
                waiting[call] = sum(map(engine_state.will_engine_execute_node, nodes))
                buffers[call] = [None] * len(tensors)
            buffers[call][index] = grad
            waiting[call] -= 1
            if waiting[call] == 0:
                del waiting[call]
                fn(buffers.pop(call))

        return collect

    return _MultiHandle(tuple(t.register_hook(hook_for(i)) for i, t in enumerate(tensors)))


class _SavedTensorType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, saved.SavedTensor)


class SavedTensor(metaclass=_SavedTensorType):
    """torch.autograd.SavedTensor: what a node saved (node._raw_saved_*); only autograd makes one."""

    def __init__(self):
        raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")


# The message of the innermost `disable_saved_tensors_hooks`, or None when hooks are allowed.
_disabled_message = None


class saved_tensors_hooks(hooks.saved_tensors_hooks):
    """Context manager: every tensor saved inside is stored as `pack(tensor)`, read back as `unpack(packed)`."""

    def __enter__(self):
        if _disabled_message is not None:
            raise RuntimeError(_disabled_message)
        return super().__enter__()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU; mini_autograd's tensors always are, so only pin_memory copies."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            return (tensor.device, Tensor._make(tensor._data.copy()))  # PyTorch copies here

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Inside, starting saved_tensors_hooks (or entering with some active) raises `error_message`."""
    global _disabled_message
    previous = _disabled_message
    try:
        if hooks.saved_tensors_hook_stack:
            raise RuntimeError(error_message)
        _disabled_message = error_message
        yield
    finally:
        _disabled_message = previous
