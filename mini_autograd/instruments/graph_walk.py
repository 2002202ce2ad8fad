"""The one walk over a backward graph, for mini_autograd, torch and the learner's engine alike.

    graph_nodes(loss)                       # every node behind `loss`, depth first
    graph_nodes([loss.grad_fn, other])      # from nodes, tensors, or nested lists of both
    graph_nodes(loss, breadth_first=True)   # the order the pictures number their nodes in

Only `next_functions` is read, so any engine with PyTorch's node attributes can be walked.
"""

from collections import deque


def graph_nodes(roots, breadth_first=False):
    """The backward nodes reachable from `roots`, each once, in next_functions order.

    Depth first (each node before the nodes below it), or level by level with `breadth_first`.
    """
    starts = _root_nodes(roots)
    pending = deque(starts if breadth_first else reversed(starts))
    order, seen = [], set()
    while pending:
        node = pending.popleft() if breadth_first else pending.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        order.append(node)
        children = [child for child, _ in node.next_functions]
        pending.extend(children if breadth_first else reversed(children))
    return order


def _root_nodes(roots):
    """The start nodes: a tensor gives its grad_fn, a node itself; lists and tuples nest."""
    if isinstance(roots, (list, tuple)):
        return [node for root in roots for node in _root_nodes(root)]
    if roots is None or hasattr(roots, "next_functions"):
        return [roots]
    return [roots.grad_fn]
