"""Where a backward call stops: only the nodes that lead to given inputs, and their gradients.

backward(inputs=...) and autograd.grad(outputs, inputs) give the engine target edges. The
engine then runs only the nodes from which a target can be reached (`nodes_leading_to`), and
autograd.grad takes each target's gradient as it arrives instead of accumulating it (`Captures`).
"""

from .arrays import tensor_hooks, tensors


def nodes_leading_to(root_edges, targets):
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


def leading_only(node, outputs, wanted):
    """`node`'s gradients, None for each edge whose node leads to no target (not in `wanted`)."""
    pairs = zip(node.next_functions, outputs)
    return tuple(g if next_node in wanted else None for (next_node, _), g in pairs)


class Captures:
    """autograd.grad's targets: where each one's gradient arrives, and the gradients found there."""

    def __init__(self, targets, wanted):
        self.slots = {}  # {node: [(input_nr, position in the result)]}
        for slot, (node, nr) in enumerate(targets):
            self.slots.setdefault(node, []).append((nr, slot))
        self.wanted = wanted
        self.grads = [None] * len(targets)

    def take(self, node, grads):
        """Keep the gradients that reach a target at `node`; True if `node` must run all the same.

        As in PyTorch, a node that runs (it leads to another target) gives its gradients as they
        arrived, and one that does not run gives them after its tensors' hooks.
        """
        runs = any(n in self.wanted for n, _ in node.next_functions)
        slots = self.slots.get(node)
        if slots:
            if not runs and node._tensor_hooks:
                grads = tensor_hooks(node, grads)
            for nr, slot in slots:
                self.grads[slot] = grads[nr] if nr < len(grads) else None
        return runs

    def results(self):
        """The gradients found, as Tensors (None where none arrived)."""
        return tensors(self.grads)
