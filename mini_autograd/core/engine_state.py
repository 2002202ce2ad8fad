"""What the engine is doing now: the questions torch._C answers about the backward call running.

autograd.graph's multi-grad hooks ask them, to know which of their tensors' gradients will come.
"""

from . import errors
from .engine import _running, current_call
from .node import AccumulateGrad


def current_graph_task_id():
    """The number of the backward call running now, or -1 (torch._C._current_graph_task_id)."""
    call = current_call()
    return -1 if call is None else call.number


def is_checkpoint_valid():
    """False inside a backward call given `inputs` (autograd.grad, backward(inputs=...)), or
    nested in one (torch.autograd._is_checkpoint_valid)."""
    return all(call.graph is None or call.graph[2] is None for call in _running)


def will_engine_execute_node(node):
    """Whether the backward call running now runs `node` (torch._C._will_engine_execute_node)."""
    call = current_call()
    if call is None or call.graph is None:
        raise RuntimeError(errors.NOT_IN_BACKWARD)
    dependencies, root_edges, wanted = call.graph
    if call.api == "autograd.grad" and type(node) is AccumulateGrad and node in wanted:
        raise RuntimeError(errors.LEAF_IN_AUTOGRAD_GRAD)
    if wanted is not None:
        return node in wanted
    return node in dependencies or any(node is root for root, _ in root_edges)
