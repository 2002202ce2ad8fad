"""The backward engine: runs the recorded graph in reverse, without recursion.

1. Count, for every node reachable from the outputs, how many edges point into it.
2. Start with the output nodes; a node runs once all gradients flowing into it have arrived.
   Among ready nodes the most recently created runs first (PyTorch's order on the CPU).
3. After a node runs, its saved tensors are released unless retain_graph=True.
"""

import heapq
import itertools
import warnings
from collections.abc import Mapping

import numpy as np

from . import diagnose
from .grad_mode import GradMode
from .node import AccumulateGrad, GradientEdge, _sequence_numbers, edge_of
from .tensor import RetainGradHook, Tensor


class BackwardCall:
    """One call of backward() or autograd.grad(), numbered from 1 (diagnosis names it)."""

    __slots__ = ("number", "api", "site", "roots", "sequence_mark", "graph")

    def __init__(self, number, api, site=None, roots=None, sequence_mark=None):
        self.number = number
        self.api = api
        self.site = site
        self.roots = roots  # diagnosis mode only: the graph this call went through
        self.sequence_mark = sequence_mark  # diagnosis mode only: nodes numbered below are older
        self.graph = None  # while it runs: (dependencies, root edges, wanted nodes or None)

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
ONLY_INPUTS_WARNING = (
    "only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
    "gradient for other parts of the graph, please use torch.autograd.backward."
)
_warned = set()  # torch gives some warnings once per process


def warn_once(message):
    """A UserWarning the first time only, as torch's TORCH_WARN_ONCE."""
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, UserWarning, stacklevel=4)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(tensors)/d(leaf) into leaf.grad for every leaf (or only `inputs`)."""
    inputs = None if inputs is None else _inputs_tuple(inputs, "backward")
    tensors = _as_tuple(tensors)
    grads = _make_grads(tensors, grad_tensors)
    retain_graph = create_graph if retain_graph is None else retain_graph
    _check_outputs(tensors, grads)
    targets = None if inputs is None else [_input_edge(x, accumulate_grad=True) for x in inputs]
    if create_graph:
        warn_once(CREATE_GRAPH_CYCLE_WARNING)
    run_backward(tensors, grads, retain_graph, create_graph, targets)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    only_inputs=True,
    allow_unused=None,
    is_grads_batched=False,
    materialize_grads=False,
):
    """Return d(outputs)/d(inputs) without touching any .grad (a dict for a dict of inputs)."""
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but "
            "got: allow_unused=False."
        )
    allow_unused = materialize_grads if allow_unused is None else allow_unused
    outputs, inputs_tuple = _as_tuple(outputs), _inputs_tuple(inputs, "grad")
    if not only_inputs:
        warnings.warn(ONLY_INPUTS_WARNING, FutureWarning, stacklevel=2)
    if is_grads_batched:
        raise NotImplementedError(
            "mini_autograd does not support is_grads_batched=True: call autograd.grad once per "
            "row of grad_outputs instead."
        )
    grads = _make_grads(outputs, grad_outputs)
    retain_graph = create_graph if retain_graph is None else retain_graph
    _check_outputs(outputs, grads)
    targets = [_input_edge(x, accumulate_grad=False) for x in inputs_tuple]
    result = run_backward(outputs, grads, retain_graph, create_graph, targets, accumulate_grad=False)
    for i, g in enumerate(result):
        if g is None and not allow_unused:
            raise RuntimeError(
                f"The differentiated Tensor at index {i} appears to not have been used in the "
                "graph. Set allow_unused=True if this is the desired behavior."
            )
    if materialize_grads:
        result = [
            _zeros_for(x, create_graph) if g is None else g for x, g in zip(inputs_tuple, result)
        ]
    if type(inputs) is dict:
        return dict(zip(inputs, result))
    return tuple(result)


def run_backward(roots, root_grads, retain_graph, create_graph, targets=None, accumulate_grad=True):
    """Run the graph from `roots`; with `targets` (edges), only the nodes that lead to them.

    backward() (accumulate_grad) runs every node on the way, the targets' own nodes included, so
    leaves get their .grad. autograd.grad() captures the gradients that arrive at the targets and
    returns them; a target's own node runs only when it leads to another target.
    """
    root_edges = [edge_of(t) for t in roots]
    call = BackwardCall(next(_call_numbers), "backward" if accumulate_grad else "autograd.grad")
    if diagnose.DiagnosisMode.enabled:
        call.site, call.roots, call.sequence_mark = (
            diagnose.call_site(),
            root_edges,
            next(_sequence_numbers),
        )
    dependencies = _count_dependencies(e[0] for e in root_edges)
    wanted = None if targets is None else _nodes_leading_to(root_edges, targets)
    captures = {} if accumulate_grad else _captures_by_node(targets)
    captured = [None] * (0 if accumulate_grad else len(targets))
    call.graph = (dependencies, root_edges, wanted)

    buffers, ready, order = {}, [], itertools.count()
    for (node, nr), g in zip(root_edges, root_grads):
        _add_to_buffer(buffers, node, nr, g)
    for node in buffers:
        if dependencies.get(node, 0) == 0 and (wanted is None or node in wanted):
            heapq.heappush(ready, (-node._sequence, next(order), node))

    previous_mode, GradMode.enabled = GradMode.enabled, create_graph
    previous_call, diagnose.current_call = diagnose.current_call, call  # calls can nest
    try:
        while ready:
            node = heapq.heappop(ready)[2]
            grads = buffers.pop(node, [None])
            if captures and not _capture(node, grads, captures, captured, wanted):
                continue  # autograd.grad needs nothing more from this node
            if node._tensor_hooks or node._pre_hooks:
                grads = _run_pre_hooks(node, grads)
            if grads[0] is None and _nothing_to_compute(node, grads):
                outputs = (None,) * len(node.next_functions)
            else:
                outputs = node.apply(*grads)
            if node._hooks:
                outputs = _run_post_hooks(node, outputs, grads)
            if not retain_graph and node._saved is not None:
                node.release_saved(call)
            for (next_node, nr), g in zip(node.next_functions, outputs):
                if next_node is None or (wanted is not None and next_node not in wanted):
                    continue
                if g is not None:
                    _add_to_buffer(buffers, next_node, nr, g)
                remaining = dependencies[next_node] - 1
                dependencies[next_node] = remaining
                if remaining == 0:
                    heapq.heappush(ready, (-next_node._sequence, next(order), next_node))
    finally:
        GradMode.enabled = previous_mode
        diagnose.current_call = previous_call
        call.graph = None
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


def _captures_by_node(targets):
    """{node: [(input_nr, slot)]}: where autograd.grad finds the gradient of each target."""
    captures = {}
    for slot, (node, nr) in enumerate(targets):
        captures.setdefault(node, []).append((nr, slot))
    return captures


def _capture(node, grads, captures, captured, wanted):
    """autograd.grad: keep the gradients that reach a target at `node`; True if `node` must run.

    As in PyTorch, a node that runs (it leads to another target) gives its gradients as they
    arrived, and one that does not run gives them after its tensors' hooks.
    """
    runs = any(n in wanted for n, _ in node.next_functions)
    slots = captures.get(node)
    if slots:
        if not runs and node._tensor_hooks:
            grads = _run_tensor_hooks(node, grads)
        for nr, slot in slots:
            captured[slot] = grads[nr] if nr < len(grads) else None
    return runs


def _add_to_buffer(buffers, node, nr, g):
    buffer = buffers.get(node)
    if buffer is None:
        buffer = buffers[node] = [None] * (nr + 1)
    elif len(buffer) <= nr:
        buffer.extend([None] * (nr + 1 - len(buffer)))
    buffer[nr] = g if buffer[nr] is None else buffer[nr] + g


def _nothing_to_compute(node, grads):
    """True when no gradient reached a built-in node: its backward would give None everywhere.

    PyTorch still runs a custom Function's backward (on zeros, unless set_materialize_grads(False))
    and an Error node then.
    """
    return not node.runs_without_gradients and all(g is None for g in grads)


def _run_pre_hooks(node, grads):
    """The hooks that run before `node`: its tensors' hooks, then its own pre-hooks."""
    if node._tensor_hooks:
        grads = _run_tensor_hooks(node, grads)
    if node._pre_hooks:
        for hook in list(node._pre_hooks):
            result = hook(tuple(grads))
            if result is not None:
                grads = list(_checked_hook_result(hook, result, len(grads)))
    return grads


def _run_tensor_hooks(node, grads):
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


def _inputs_tuple(inputs, api):
    """`inputs` of backward() or grad() as a tuple: a tensor, an edge, a sequence or a dict's values."""
    if isinstance(inputs, (Tensor, GradientEdge)):
        return (inputs,)
    if type(inputs) is dict:
        inputs = inputs.values()
    elif isinstance(inputs, Mapping):
        raise TypeError(
            f"`inputs` argument to `{api}()` must be a dict, not {type(inputs).__name__}. Other "
            "Mapping types are not supported."
        )
    inputs = tuple(inputs)
    if not inputs:
        raise RuntimeError(f"`inputs` argument to `{api}()` cannot be empty.")
    return inputs


def _input_edge(x, accumulate_grad):
    """The edge where the gradient of input `x` arrives, after PyTorch's checks.

    backward() fills the .grad of a non-leaf input through retain_grad, as PyTorch does.
    """
    if isinstance(x, GradientEdge):
        return (x.node, x.output_nr)
    if not isinstance(x, Tensor):
        raise RuntimeError(
            f"all inputs have to be Tensors or GradientEdges, but got {type(x).__name__}"
        )
    if accumulate_grad:
        x.retain_grad()
    if not x.requires_grad:
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    return edge_of(x)


def _make_grads(outputs, grad_outputs):
    """The gradient each output starts with: given, or 1 for a one-element output (PyTorch's
    _make_grads: an output beyond the gradients given is left to _check_outputs)."""
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else _as_tuple(grad_outputs)
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not isinstance(out, Tensor):
            raise AssertionError("Expected output to be a torch.Tensor")
        if isinstance(g, Tensor):
            if g.shape != out.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of torch.Size({list(g.shape)}) "
                    f"and output[{i}] has a shape of torch.Size({list(out.shape)})."
                )
            if g._data.dtype != out._data.dtype:
                g = g.to(out.dtype)  # as PyTorch's engine does
        elif g is not None:
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
        elif out.requires_grad:
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = Tensor._make(np.ones_like(out._data))
        grads.append(g)
    return grads


def _check_outputs(outputs, grads):
    """PyTorch's engine checks: one gradient per output, and every output requires grad."""
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    for i, out in enumerate(outputs):
        if not out.requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )


def _zeros_for(x, create_graph):
    """materialize_grads: zeros shaped as input `x` (which requires grad under create_graph)."""
    if isinstance(x, GradientEdge):
        raise RuntimeError(
            "materialize_grads cannot be used when the given input is a GradientEdge"
        )
    return Tensor._make(np.zeros_like(x._data), create_graph)


def current_graph_task_id():
    """The number of the backward call running now, or -1 (torch._C._current_graph_task_id)."""
    call = diagnose.current_call
    return -1 if call is None else call.number


def will_engine_execute_node(node):
    """Whether the backward call running now runs `node` (torch._C._will_engine_execute_node)."""
    call = diagnose.current_call
    if call is None or call.graph is None:
        raise RuntimeError(
            "_get_should_execute_nodes should only be called during the backward pass"
        )
    dependencies, root_edges, wanted = call.graph
    if call.api == "autograd.grad" and type(node) is AccumulateGrad and node in wanted:
        raise RuntimeError(
            "A leaf node was passed to _will_engine_execute_node but we are currently running "
            "autograd.grad(). This is currently not supported."
        )
    if wanted is not None:
        return node in wanted
    return node in dependencies or any(node is root for root, _ in root_edges)
