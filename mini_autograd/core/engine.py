"""The backward engine: runs the recorded graph in reverse, without recursion.

1. Count, for every node reachable from the outputs, how many edges point into it.
2. Start with the output nodes; a node runs once all gradients flowing into it have arrived.
   Among ready nodes the most recently created runs first (PyTorch's order on the CPU).
3. After a node runs, its saved tensors are released unless retain_graph=True.

backward() and autograd.grad() check their arguments first (backward_calls.py); where the call
stops, for given inputs, is in graph_targets.py, its queue in ready_queue.py, its hooks in hooks.py.
"""

import concurrent.futures
import heapq
import itertools

from . import events
from .arrays import held_only_by, post_hooks, pre_hooks, run
from .grad_mode import GradMode
from .graph_targets import Captures, leading_only, nodes_leading_to
from .node import AccumulateGrad, gradient_edge
from .ready_queue import Ready


class BackwardCall:
    """One call of backward() or autograd.grad(), numbered from 1."""

    __slots__ = ("number", "api", "graph", "__weakref__")

    def __init__(self, number, api):
        self.number, self.api = number, api
        self.graph = None  # while it runs: (dependencies, root edges, wanted nodes or None)

    def __repr__(self):
        return f"{self.api} call #{self.number}"


_call_numbers = itertools.count(1)
_running = []  # the calls running now, innermost last (a hook may call backward)
NESTED_CALLS_PER_THREAD = 50  # PyTorch's engine hops to a new thread every 60
apply_node = None  # or what each node's apply goes through: anomaly mode's checks (autograd/)


def run_backward(roots, root_grads, retain_graph, create_graph, targets=None, accumulate_grad=True):
    """Run the graph from `roots`; with `targets` (edges), only the nodes that lead to them.

    backward() (accumulate_grad) runs every node on the way, the targets' own nodes included, so
    leaves get their .grad. autograd.grad() captures the gradients that arrive at the targets and
    returns them; a target's own node runs only when it leads to another target.
    """
    args = (roots, root_grads, retain_graph, create_graph, targets, accumulate_grad)
    if _running and len(_running) % NESTED_CALLS_PER_THREAD == 0:
        # a backward called from a node, deep down: on a fresh thread's stack, as PyTorch does
        with concurrent.futures.ThreadPoolExecutor(1) as fresh_thread:
            return fresh_thread.submit(_run_backward, *args).result()
    return _run_backward(*args)


def _run_backward(roots, root_grads, retain_graph, create_graph, targets, accumulate_grad):
    root_edges = [gradient_edge(t) for t in roots]
    call = BackwardCall(next(_call_numbers), "backward" if accumulate_grad else "autograd.grad")
    dependencies = compute_dependencies(node for node, _ in root_edges)
    wanted = None if targets is None else nodes_leading_to(root_edges, targets)
    captures = None if accumulate_grad else Captures(targets, wanted)
    call.graph = (dependencies, root_edges, wanted)

    buffers, ready = {}, []
    for (node, nr), g in zip(root_edges, root_grads):  # arrays, unless create_graph (arrays.py)
        _add_to_buffer(buffers, node, nr, g if create_graph or g is None else g._data)
    for node in buffers:
        if dependencies.get(node, 0) == 0 and (wanted is None or node in wanted):
            heapq.heappush(ready, Ready(node))

    previous_mode = _start(call, root_edges, create_graph)
    try:
        while ready:
            node = heapq.heappop(ready).node
            grads = buffers.pop(node, [None])
            if captures is not None and not captures.take(node, grads):
                continue  # autograd.grad needs nothing more from this node
            if node._tensor_hooks or node._pre_hooks:
                grads = pre_hooks(node, grads)
            if grads[0] is None and _nothing_to_compute(node, grads):
                outputs = (None,) * len(node.next_functions)
            elif apply_node is None and type(node) is AccumulateGrad and not create_graph:
                outputs = node.apply(owned=held_only_by(grads), grad=grads[0])  # owned= first
            elif apply_node is None and (create_graph or hasattr(type(node).apply, "takes_arrays")):
                outputs = node.apply(*grads)  # (the common case of arrays.run, without a call)
            else:
                outputs = run(node, grads) if apply_node is None else apply_node(node, grads)
            if wanted is not None:  # as in PyTorch, no gradient for an edge that leads to no target
                outputs = leading_only(node, outputs, wanted)
            if node._hooks:
                outputs = post_hooks(node, outputs, grads)
            if not retain_graph and node._saved is not None:
                node.release_variables(call)
            for (next_node, nr), g in zip(node.next_functions, outputs):
                if next_node is None or (wanted is not None and next_node not in wanted):
                    continue
                if g is not None:
                    _add_to_buffer(buffers, next_node, nr, g)
                remaining = dependencies[next_node] - 1
                dependencies[next_node] = remaining
                if remaining == 0:
                    heapq.heappush(ready, Ready(next_node))
            outputs = g = None  # the buffers alone hold the gradients now (see held_only_by)
    finally:
        _finish(call, previous_mode)
    return [] if captures is None else captures.results()


def _start(call, root_edges, create_graph):
    """While a call runs, grad mode is create_graph and the call is current; returns the mode before."""
    previous_mode, GradMode.enabled = GradMode.enabled, create_graph
    _running.append(call)
    for observer in events.backward_started:
        observer(call, root_edges)
    return previous_mode


def _finish(call, previous_mode):
    """The call is over: grad mode back as it was, and the observers told."""
    GradMode.enabled = previous_mode
    _running.pop()
    call.graph = None
    for observer in list(events.backward_finished):  # an observer may detach itself
        observer(call)


def compute_dependencies(start_nodes):
    """How many edges point into each node reachable from `start_nodes` (iterative DFS)."""
    dependencies = {}
    stack = list(dict.fromkeys(n for n in start_nodes if n is not None))  # a root given twice: once
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


def _add_to_buffer(buffers, node, nr, g):
    """Add gradient `g` for input `nr` of `node` to what already arrived there."""
    buffer = buffers.get(node)
    if buffer is None:
        if nr == 0:
            buffers[node] = [g]  # the first gradient for a node's first input: most often
            return
        buffer = buffers[node] = [None] * (nr + 1)
    elif len(buffer) <= nr:
        buffer.extend([None] * (nr + 1 - len(buffer)))
    buffer[nr] = g if buffer[nr] is None else buffer[nr] + g


def _nothing_to_compute(node, grads):
    """True when no gradient reached a built-in node (PyTorch runs a custom Function's anyway)."""
    return not node.runs_without_gradients and all(g is None for g in grads)


def current_call():
    """The backward call running now (the innermost one), or None."""
    return _running[-1] if _running else None
