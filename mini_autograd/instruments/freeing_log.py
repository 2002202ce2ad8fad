"""Watch backward free the saved tensors, node by node, in the order the engine runs them.

    with ma.freeing_log() as log:
        loss.backward()
    print(log)        # one line per node: what it saved, and the bytes freed once it had run

Releasing a saved tensor drops the graph's reference to it; its memory comes back only when
nothing else holds the array: a leaf or a parameter the program keeps, or a tensor another node
saved too, stays. The log tells the two apart by watching the array through a weak reference.

It observes the core's events (events.py): node_releasing and node_released for each node,
backward_finished to close each call with its total. Outside the block nothing is watched.
"""

import weakref

import numpy as np

from ..core import events
from ..core.tensor_data import TensorData


def _memory_owners(value):
    """Weak references to the arrays that own the memory `value` holds: a tensor, an array, or
    what a pack hook made (a tuple, list or dict of them); none for anything else."""
    if isinstance(value, (tuple, list)):
        return [owner for item in value for owner in _memory_owners(item)]
    if isinstance(value, dict):
        return _memory_owners(list(value.values()))
    array = value._data if isinstance(value, TensorData) else value
    if not isinstance(array, np.ndarray):
        return []
    while isinstance(array.base, np.ndarray):  # a view keeps its base, which owns the memory
        array = array.base
    return [weakref.ref(array)]


class freeing_log:
    """Context manager: a log of the saved tensors each backward call frees inside the block."""

    def __init__(self):
        self.calls = []  # [(call, [(node name, [(attribute, bytes, memory returned)])])], in order
        self._owners = {}  # node -> [(attribute, bytes, weak references to the memory's owners)]

    def __enter__(self):
        events.attach(events.node_releasing, self._releasing)
        events.attach(events.node_released, self._released)
        events.attach(events.backward_finished, self._finished)
        return self

    def __exit__(self, *exc):
        events.detach(events.node_releasing, self._releasing)
        events.detach(events.node_released, self._released)
        events.detach(events.backward_finished, self._finished)
        return False

    def _nodes_of(self, call):
        """The list of nodes freed by `call`, the last call logged (made on its first event)."""
        if not self.calls or self.calls[-1][0] is not call:
            self.calls.append((call, []))
        return self.calls[-1][1]

    def _releasing(self, node, call):
        self._owners[node] = [
            (name, s.nbytes, _memory_owners(s._value))
            for name, s in node.saved_tensors_info()
            if not s.is_freed
        ]

    def _released(self, node, call):
        owners = self._owners.pop(node, [])
        saved = [(name, n, all(o() is None for o in held)) for name, n, held in owners]
        nodes = self._nodes_of(call)
        if saved:
            nodes.append((node.name(), saved))

    def _finished(self, call):
        self._nodes_of(call)  # a call that freed nothing (retain_graph=True) is logged too

    @property
    def freed_bytes(self):
        """The bytes whose memory the backward calls inside the block gave back."""
        return sum(
            n for _, nodes in self.calls for _, saved in nodes for _, n, back in saved if back
        )

    def __repr__(self):
        lines = []
        for call, nodes in self.calls:
            released = [(n, back) for _, saved in nodes for _, n, back in saved]
            freed = sum(n for n, back in released if back)
            kept = sum(n for n, back in released if not back)
            lines.append(f"{call}: freed {freed} bytes" + (f" ({kept} still held)" if kept else ""))
            for name, saved in nodes:
                items = ", ".join(
                    f"{attribute} ({n} B{'' if back else ', still held elsewhere'})"
                    for attribute, n, back in saved
                )
                lines.append(f"  {name:<20} {items}")
        return "\n".join(lines) or "no backward call"
