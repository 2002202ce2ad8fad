"""Watch backward free the saved tensors, node by node, in the order the engine runs them.

    with ma.freeing_log() as log:
        loss.backward()
    print(log)        # one line per node: what it saved, and the bytes freed once it had run

It observes the core's events (events.py): node_released for each node, backward_finished to
close each call with its total. Outside the block nothing is watched.
"""

from ..core import events


class freeing_log:
    """Context manager: a log of the saved tensors each backward call frees inside the block."""

    def __init__(self):
        self.calls = []  # [(call, [(node name, [(attribute, bytes)])])], in order

    def __enter__(self):
        events.attach(events.node_released, self._released)
        events.attach(events.backward_finished, self._finished)
        return self

    def __exit__(self, *exc):
        events.detach(events.node_released, self._released)
        events.detach(events.backward_finished, self._finished)
        return False

    def _nodes_of(self, call):
        """The list of nodes freed by `call`, the last call logged (made on its first event)."""
        if not self.calls or self.calls[-1][0] is not call:
            self.calls.append((call, []))
        return self.calls[-1][1]

    def _released(self, node, call):
        saved = [(name, s.nbytes) for name, s in node.saved_tensors_info()]
        nodes = self._nodes_of(call)
        if saved:
            nodes.append((node.name(), saved))

    def _finished(self, call):
        self._nodes_of(call)  # a call that freed nothing (retain_graph=True) is logged too

    @property
    def freed_bytes(self):
        """The bytes of all the saved tensors freed inside the block."""
        return sum(n for _, nodes in self.calls for _, saved in nodes for _, n in saved)

    def __repr__(self):
        lines = []
        for call, nodes in self.calls:
            total = sum(n for _, saved in nodes for _, n in saved)
            lines.append(f"{call}: freed {total} bytes")
            for name, saved in nodes:
                items = ", ".join(f"{attribute} ({n} B)" for attribute, n in saved)
                lines.append(f"  {name:<20} {items}")
        return "\n".join(lines) or "no backward call"
