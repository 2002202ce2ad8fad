"""The engine's ready queue: nodes whose gradients have all arrived, newest first.

PyTorch's ReadyQueue is a std::priority_queue compared by sequence number alone. heapq sifts
the same way (the same child chosen on a tie, the same stop on equal keys), so entries that
compare equal, the AccumulateGrad nodes that all share the largest number, come out in the
order PyTorch's heap gives them: neither creation order nor its reverse.
"""


class Ready:
    """A node in the ready queue, ordered by its sequence number alone, the largest first."""

    __slots__ = ("key", "node")

    def __init__(self, node):
        self.key, self.node = -node._sequence_nr_, node

    def __lt__(self, other):
        return self.key < other.key
