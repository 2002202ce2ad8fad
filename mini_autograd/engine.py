"""The backward engine: runs the recorded graph in reverse, without recursion.

1. Count, for every node reachable from the outputs, how many edges point into it.
2. Start with the output nodes; a node runs once all gradients flowing into it have arrived.
   Among ready nodes the most recently created runs first (PyTorch's order on the CPU).
3. After a node runs, its saved tensors are released unless retain_graph=True.
"""

import heapq
import itertools
import warnings

import numpy as np

from . import diagnose
from .grad_mode import _State
from .node import AccumulateGrad, _sequence, edge_of
from .tensor import Tensor


class BackwardCall:
    """One call of backward() or autograd.grad(), numbered from 1 (diagnosis names it)."""

    __slots__ = ("number", "api", "site", "roots", "sequence_mark")

    def __init__(self, number, api, site=None, roots=None, sequence_mark=None):
        self.number = number
        self.api = api
        self.site = site
        self.roots = roots  # diagnosis mode only: the graph this call went through
        self.sequence_mark = sequence_mark  # diagnosis mode only: nodes numbered below are older

    def __repr__(self):
        where = f" at {self.site}" if self.site else ""
        return f"{self.api} call #{self.number}{where}"


_call_numbers = itertools.count(1)
CREATE_GRAPH_CYCLE_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter "
    "and its gradient which can cause a memory leak. We recommend using autograd.grad when "
    "creating the graph to avoid this. If you have to use this function, make sure to reset the "
    ".grad fields of your parameters to None after use to break the cycle and avoid the leak."
)
_warned = set()  # torch gives some warnings once per process


def warn_once(message):
    """A UserWarning the first time only, as torch's TORCH_WARN_ONCE."""
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, UserWarning, stacklevel=4)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(tensors)/d(leaf) into leaf.grad for every leaf (or only `inputs`)."""
    tensors = _as_tuple(tensors)
    grads = _initial_grads(tensors, grad_tensors)
    keep_graph = create_graph if retain_graph is None else retain_graph
    if create_graph:
        warn_once(CREATE_GRAPH_CYCLE_WARNING)
    targets = None
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        for t in inputs:
            if _check_differentiable(t).grad_fn is not None:
                t.retain_grad()  # as PyTorch does: a non-leaf input gets its .grad that way
        targets = [edge_of(t) for t in inputs]
    captured = run_backward(tensors, grads, keep_graph, create_graph, targets, "backward")
    if targets is not None:
        for (node, _), g in zip(targets, captured):
            if g is not None and type(node) is AccumulateGrad:
                node.apply(g)  # a leaf input: its hooks, then .grad += g


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    allow_unused=None,
    materialize_grads=False,
):
    """Return d(outputs)/d(inputs) without touching any .grad."""
    outputs, inputs = _as_tuple(outputs), _as_tuple(inputs)
    grads = _initial_grads(outputs, grad_outputs)
    for t in inputs:
        _check_differentiable(t)
    keep_graph = create_graph if retain_graph is None else retain_graph
    targets = [edge_of(t) for t in inputs]
    captured = run_backward(outputs, grads, keep_graph, create_graph, targets, "autograd.grad")
    allow_unused = materialize_grads if allow_unused is None else allow_unused
    result = []
    for i, (t, g) in enumerate(zip(inputs, captured)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:
                g = Tensor._make(t._data * 0)
        result.append(g)
    return tuple(result)


def run_backward(roots, root_grads, keep_graph, create_graph, targets=None, api="backward"):
    """Run the graph from `roots`; return the gradients that reached `targets` (edges), if given.

    Without targets every AccumulateGrad runs (leaves get .grad). With targets, only nodes that
    lead to a target run, and the gradients arriving at the targets are returned instead.
    """
    root_edges = [edge_of(t) for t in roots]
    call = BackwardCall(next(_call_numbers), api)
    if diagnose.State.enabled:
        call.site, call.roots, call.sequence_mark = (
            diagnose.call_site(),
            root_edges,
            next(_sequence),
        )
    dependencies = _count_dependencies(e[0] for e in root_edges)
    wanted = None if targets is None else _nodes_leading_to(root_edges, targets)
    target_slot = {} if targets is None else {edge: i for i, edge in enumerate(targets)}
    captured = [None] * len(target_slot)

    buffers, ready, order = {}, [], itertools.count()
    for (node, nr), g in zip(root_edges, root_grads):
        _add_to_buffer(buffers, node, nr, g)
    for node in buffers:
        if dependencies.get(node, 0) == 0 and (wanted is None or node in wanted):
            heapq.heappush(ready, (-node._sequence_nr, next(order), node))

    previous_mode, _State.enabled = _State.enabled, create_graph
    previous_call, diagnose.current_call = diagnose.current_call, call  # calls can nest
    try:
        while ready:
            node = heapq.heappop(ready)[2]
            grads = buffers.pop(node, [None])
            if node._tensor_hooks or node._pre_hooks:
                grads = _run_pre_hooks(node, grads)
            if target_slot:
                for nr, g in enumerate(grads):
                    slot = target_slot.get((node, nr))
                    if slot is not None:
                        captured[slot] = g
                if type(node) is AccumulateGrad or not any(
                    n in wanted for n, _ in node.next_functions
                ):
                    continue
            if grads[0] is None and all(g is None for g in grads):
                outputs = (None,) * len(node.next_functions)
            else:
                outputs = node.apply(*grads)
                if node._hooks:
                    outputs = _run_post_hooks(node, outputs, grads)
            if not keep_graph and node._saved:
                node.release_saved(call)
            for (next_node, nr), g in zip(node.next_functions, outputs):
                if next_node is None or (wanted is not None and next_node not in wanted):
                    continue
                if g is not None:
                    _add_to_buffer(buffers, next_node, nr, g)
                remaining = dependencies[next_node] - 1
                dependencies[next_node] = remaining
                if remaining == 0:
                    heapq.heappush(ready, (-next_node._sequence_nr, next(order), next_node))
    finally:
        _State.enabled = previous_mode
        diagnose.current_call = previous_call
    return captured


def _count_dependencies(start_nodes):
    """How many edges point into each node reachable from `start_nodes` (iterative DFS)."""
    dependencies = {}
    stack = [n for n in start_nodes if n is not None]
    seen = set(stack)
    while stack:
        node = stack.pop()
        for next_node, _ in node.next_functions:
            if next_node is not None:
                dependencies[next_node] = dependencies.get(next_node, 0) + 1
                if next_node not in seen:
                    seen.add(next_node)
                    stack.append(next_node)
    return dependencies


def _nodes_leading_to(root_edges, targets):
    """The set of nodes from which some target edge's node can be reached (targets included)."""
    target_nodes = {node for node, _ in targets if node is not None}
    leads = set()
    # Iterative post-order DFS: a node leads to a target if it is one or a child leads to one.
    visited = set()
    for root, _ in root_edges:
        if root is None or root in visited:
            continue
        visited.add(root)
        stack = [(root, iter(root.next_functions))]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                if node in target_nodes or any(n in leads for n, _ in node.next_functions):
                    leads.add(node)
            elif child[0] is not None and child[0] not in visited:
                visited.add(child[0])
                stack.append((child[0], iter(child[0].next_functions)))
    return leads


def _add_to_buffer(buffers, node, nr, g):
    buffer = buffers.get(node)
    if buffer is None:
        buffer = buffers[node] = [None] * (nr + 1)
    elif len(buffer) <= nr:
        buffer.extend([None] * (nr + 1 - len(buffer)))
    buffer[nr] = g if buffer[nr] is None else buffer[nr] + g


def _run_pre_hooks(node, grads):
    tensor_hooks = node._tensor_hooks
    if tensor_hooks:
        grads = list(grads)
        for nr, hooks in tensor_hooks.items():
            if nr < len(grads) and grads[nr] is not None:
                for hook in list(hooks):
                    result = hook(grads[nr])
                    if result is not None:
                        grads[nr] = result
    if node._pre_hooks:
        for hook in list(node._pre_hooks):
            result = hook(tuple(grads))
            if result is not None:
                grads = list(_checked_hook_result(hook, result, len(grads)))
    return grads


def _run_post_hooks(node, outputs, grads):
    for hook in list(node._hooks):
        result = hook(tuple(outputs), tuple(grads))
        if result is not None:
            outputs = _checked_hook_result(hook, result, len(outputs))
    return outputs


def _checked_hook_result(hook, result, expected):
    """A node hook's replacement gradients, which must be as many as the ones it was given."""
    result = tuple(result)
    if len(result) != expected:
        name = getattr(hook, "__name__", type(hook).__name__)
        raise RuntimeError(
            f"hook '{name}' has returned an incorrect number of values (got {len(result)}, but "
            f"expected {expected})"
        )
    return result


def _as_tuple(x):
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _check_differentiable(t):
    if not isinstance(t, Tensor):
        raise TypeError(f"expected a Tensor, got {type(t).__name__}")
    if not t.requires_grad:
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    return t


def _initial_grads(outputs, grad_outputs):
    """The gradient each output starts with: given, or 1 for a one-element output."""
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else _as_tuple(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grad_outputs)} gradients")
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not isinstance(out, Tensor):
            raise TypeError(f"backward expects Tensors, got {type(out).__name__} at position {i}")
        if not out.requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        if g is None:
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = Tensor._make(np.ones_like(out._data))
        else:
            if not isinstance(g, Tensor):
                g = Tensor(g, dtype=out.dtype)
            if not isinstance(g, Tensor) or g.shape != out.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of torch.Size({list(g.shape)}) "
                    f"and output[{i}] has a shape of torch.Size({list(out.shape)})."
                )
        grads.append(g)
    return grads
