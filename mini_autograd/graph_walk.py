"""The one walk over a backward graph, for mini_autograd, torch and the learner's engine alike.

    graph_nodes(loss)                    # every node behind `loss`, breadth first
    graph_nodes([loss.grad_fn, other])   # from nodes, tensors, or nested lists of both

Only `next_functions` is read, so any engine with PyTorch's node attributes can be walked. The
order is the one the pictures number their nodes in ("node N from the top").
"""

from collections import deque


def graph_nodes(roots):
    """Every node reachable from `roots`, each once, breadth first, children in next_functions order."""
    order = [node for node in dict.fromkeys(_root_nodes(roots)) if node is not None]
    seen = set(order)
    queue = deque(order)
    while queue:
        for child, _ in queue.popleft().next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                order.append(child)
                queue.append(child)
    return order


def _root_nodes(roots):
    """The start nodes: a tensor gives its grad_fn, a node itself; lists and tuples nest."""
    if isinstance(roots, (list, tuple)):
        return [node for root in roots for node in _root_nodes(root)]
    if roots is None or hasattr(roots, "next_functions"):
        return [roots]
    return [roots.grad_fn]
