"""Saved-tensor memory: the bytes a graph keeps alive for its backward, in mini_autograd and torch.

    saved_bytes(loss)      # bytes held by the live saved tensors reachable from loss
    saved_tensors(loss)    # the same, one row per saved tensor (printed as a table)
    ledger = Ledger()      # saved bytes and time, step by step, across a training loop
    memory_in_use(loss)    # the memory an out-of-memory error is about (below)

A saved tensor is counted by the memory it keeps alive: its whole storage (torch's
`untyped_storage().nbytes()`, mini_autograd's underlying numpy array), each storage once. A saved
view keeps all of the storage it looks into alive, and two nodes that saved the same tensor (a
weight used at every step of a loop) hold one copy, not two. Counting storages rather than each
tensor's own numel() * element_size() also makes both libraries agree where one saves views into
a single buffer and the other separate arrays (torch's LSTM cell saves its four gates that way).

The learner's own engine (`my_autograd.py`) is read the way torch is, so the same calls work on it:

    saved_tensors(loss_mine)   # my_autograd's graph: the same rows as torch's for the same program

Real memory. `memory_in_use(loss)` is the figure to watch when a loop runs out of memory, taken at
the same point of every iteration (just before backward, say):

* on a CUDA device, `torch.cuda.memory_allocated(device)`: every live tensor of the process on
  that device (parameters, gradients, optimizer state, data and graph), as the caching allocator
  counts it (blocks of at least 512 bytes, the cache itself not included): what an out-of-memory
  error reports as "allocated by PyTorch";
* on the CPU, `graph_storage_bytes(loss)`: the bytes of the distinct storages the graph keeps
  alive, its live saved tensors and its leaves (the tensors its AccumulateGrad nodes hold: the
  parameters, and data that requires grad), each storage once. It leaves out what the graph
  does not hold (gradients, optimizer state, data without grad) and the nodes' own small
  objects, so it is a lower bound of what the process uses; but it is exact, the same on every
  run, and drops as soon as the graph lets go. torch has no allocator counter on the CPU, and
  the process's resident memory is no substitute: it jumps by megabytes at the first iteration
  (code and buffers loaded on first use), moves in whole pages, and need not fall when tensors
  are freed, so a graph growing by kilobytes per step does not show in it.

torch is never imported here, except to read the CUDA counter. A node without
`saved_tensors_info` (torch's, or the learner's) is read through its `_saved_*` attributes, as
PyTorch exposes them: reading a freed one raises.
A saved tensor's storage is torch's `untyped_storage()` where it has one, else the numpy array
that `tensor.detach().numpy()` gives (its base array, when it is a view).
"""

import contextlib
import time
from dataclasses import dataclass

import numpy as np

from .graph_walk import graph_nodes


@dataclass(frozen=True)
class SavedInfo:
    """One saved tensor: the node that saved it, the attribute, its shape, bytes held, freed?"""

    node: str
    attribute: str
    shape: tuple | None  # None once freed: torch cannot tell the shape of a freed tensor
    nbytes: int  # bytes of its storage while alive, 0 once freed
    freed: bool
    shared: bool  # its storage was already counted on an earlier row


class SavedTensors:
    """The saved tensors of a graph, one `SavedInfo` per row; `total` counts each storage once."""

    def __init__(self, rows):
        self.rows = rows

    @property
    def total(self):
        """Bytes held by the live saved tensors, each storage counted once."""
        return sum(row.nbytes for row in self.rows if not row.shared)

    def __repr__(self):
        header = ("node", "attribute", "shape", "bytes", "freed")
        cells = [header, *(_cells(row) for row in self.rows)]
        widths = [max(len(cell[i]) for cell in cells) for i in range(len(header))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(cell, widths)).rstrip() for cell in cells]
        lines.append(f"total: {self.total} bytes held (each storage counted once)")
        return "\n".join(lines)


def _cells(row):
    """The text cells of one table row."""
    shape = "-" if row.shape is None else str(tuple(row.shape))
    nbytes = f"{row.nbytes} (shared)" if row.shared else str(row.nbytes)
    return (row.node, row.attribute, shape, nbytes, "yes" if row.freed else "no")


def saved_tensors(roots):
    """Every tensor saved by the graph of `roots`, as a printable `SavedTensors` table."""
    rows, counted = [], set()
    for node in graph_nodes(roots):
        for attribute, shape, nbytes, storage in node_saved(node):
            shared = storage in counted
            if storage is not None:
                counted.add(storage)
            rows.append(SavedInfo(node.name(), attribute, shape, nbytes, storage is None, shared))
    return SavedTensors(rows)


def saved_bytes(roots):
    """Bytes held by the live saved tensors reachable from `roots`, each storage counted once."""
    return saved_tensors(roots).total


def node_saved(node):
    """(attribute, shape, bytes, storage key) per tensor `node` saved; key None once freed."""
    found = _ma_saved(node) if hasattr(node, "saved_tensors_info") else _attribute_saved(node)
    return sorted(found, key=lambda entry: entry[0])


def _ma_saved(node):
    info = node.saved_tensors_info()
    names = [name for name, _ in info]
    found = []
    for i, (name, saved) in enumerate(info):
        if names.count(name) > 1:
            name = f"{name}[{names[:i].count(name)}]"
        if saved.is_freed:
            found.append((name, None, 0, None))
            continue
        array = _ma_array(saved)
        if array is None:  # packed by a saved_tensors_hooks pack hook: only its size is known
            found.append((name, None, saved.nbytes, id(saved)))
            continue
        storage = _root_array(array)
        found.append((name, array.shape, storage.nbytes, id(storage)))
    return found


def _ma_array(saved):
    """The numpy array a live mini_autograd SavedTensor holds (None if a pack hook replaced it)."""
    from ..core.tensor import Tensor

    value = saved._value
    if isinstance(value, Tensor):
        return value._data
    return value if isinstance(value, np.ndarray) else None


def _attribute_saved(node):
    """A torch node's (or the learner's engine's) saved tensors, read from its `_saved_*` names."""
    found = []
    for attr in dir(node):
        if not attr.startswith("_saved_"):
            continue
        name = attr[len("_saved_") :]
        try:
            value = getattr(node, attr)
        except RuntimeError:  # reading a freed saved tensor raises, in torch and in the learner's
            found.append((name, None, 0, None))
            continue
        tensors = value if isinstance(value, (tuple, list)) else [value]
        tensors = [t for t in tensors if is_tensor(t)]
        for i, tensor in enumerate(tensors):
            label = f"{name}[{i}]" if len(tensors) > 1 else name
            nbytes, key = _storage(tensor)
            found.append((label, tuple(tensor.shape), nbytes, key))
    return found


def is_tensor(value):
    """A tensor of torch, mini_autograd or the learner's engine (sizes and other settings are not)."""
    return hasattr(value, "grad_fn") and hasattr(value, "shape") and hasattr(value, "detach")


def as_numpy(tensor):
    """A tensor's values as numpy, from any of the three engines: the one conversion the
    instruments, the course's checks and the tests use."""
    if hasattr(tensor, "cpu"):  # torch's force copies a GPU tensor, and makes a ZeroTensor real
        return tensor.numpy(force=True)
    return tensor.detach().numpy()  # the learner's engine


def _storage(tensor):
    """(bytes, key) of the memory `tensor` keeps alive: its storage, each counted once by key."""
    if hasattr(tensor, "untyped_storage"):  # torch
        storage = tensor.untyped_storage()
        return storage.nbytes(), (str(tensor.device), storage.data_ptr())
    array = _root_array(np.asarray(as_numpy(tensor)))  # the learner's engine: its numpy array
    return array.nbytes, id(array)


def _root_array(array):
    """The array that owns the memory `array` views (through numpy's strided-view wrappers too)."""
    base = array.base
    while base is not None:
        if isinstance(base, np.ndarray):
            array = base
        base = getattr(base, "base", None)
    return array


@dataclass
class Step:
    """One recorded step of a loop: its number, the saved bytes recorded, and its duration."""

    number: int
    saved_bytes: int | None = None
    seconds: float | None = None


class Ledger:
    """Saved bytes and time per step across a training loop, for tables and plots.

    ledger = Ledger("retain_graph=True")
    for x_t in xs:
        with ledger.step():
            ...
            loss.backward(retain_graph=True)
            ledger.record(loss)
    """

    def __init__(self, label=""):
        self.label = label
        self.rows = []
        self._current = None  # the row of the step running now
        self._measuring = 0.0  # seconds spent in record() during the current step

    @contextlib.contextmanager
    def step(self):
        """Time the block as one step (the time record() spends measuring is left out)."""
        self._current = row = Step(len(self.rows) + 1)
        self.rows.append(row)
        self._measuring = 0.0
        start = time.perf_counter()
        try:
            yield row
        finally:
            row.seconds = time.perf_counter() - start - self._measuring
            self._current = None

    def record(self, *roots):
        """Record the saved bytes of the graph of `roots` now (a new row outside ledger.step())."""
        start = time.perf_counter()
        row = self._current
        if row is None:
            row = Step(len(self.rows) + 1)
            self.rows.append(row)
        row.saved_bytes = saved_bytes(list(roots))
        # The walk grows with the graph: counting it would make time grow for the wrong reason.
        self._measuring += time.perf_counter() - start

    def table(self, times=False):
        """The rows as text: step and saved bytes (and milliseconds with times=True)."""
        lines = [f"{self.label}:" if self.label else "", "step  saved bytes" + ("  ms" * times)]
        for row in self.rows:
            saved = "-" if row.saved_bytes is None else row.saved_bytes
            line = f"{row.number:>4}  {saved:>11}"
            if times and row.seconds is not None:
                line += f"  {row.seconds * 1e3:.2f}"
            lines.append(line)
        return "\n".join(line for line in lines if line)

    def plot(self, axes=None):
        """Saved bytes and ms per step on two axes (made if not given); returns the axes."""
        if axes is None:
            import matplotlib.pyplot as plt

            _, axes = plt.subplots(1, 2, figsize=(10, 3.5))
        steps = [row.number for row in self.rows]
        axes[0].plot(steps, [row.saved_bytes for row in self.rows], marker="o", label=self.label)
        axes[1].plot(
            steps, [(row.seconds or 0) * 1e3 for row in self.rows], marker="o", label=self.label
        )
        for ax, ylabel in zip(axes, ("saved bytes held", "ms per step")):
            ax.set_xlabel("step")
            ax.set_ylabel(ylabel)
            if self.label:
                ax.legend()
        return axes


def graph_storage_bytes(roots):
    """Bytes of the distinct storages the graph of `roots` keeps alive: live saved tensors, leaves."""
    counted, total = set(), 0
    for node in graph_nodes(roots):
        found = [(nbytes, key) for _, _, nbytes, key in node_saved(node) if key is not None]
        leaf = getattr(node, "variable", None)  # an AccumulateGrad holds its leaf alive
        if leaf is not None:
            found.append(_storage(leaf))
        for nbytes, key in found:
            if key not in counted:
                counted.add(key)
                total += nbytes
    return total


def memory_in_use(roots=(), device=None):
    """The bytes to watch for out-of-memory: CUDA's allocated bytes; on the CPU, the graph's."""
    device = _device(roots, device)
    if device.startswith("cuda"):
        import torch

        return torch.cuda.memory_allocated(device)
    return graph_storage_bytes(roots)


def memory_measure(roots=(), device=None):
    """What memory_in_use measures for these roots or this device, in words (for a plot's axis)."""
    device = _device(roots, device)
    if device.startswith("cuda"):
        return f"torch.cuda.memory_allocated({device!r})"
    return "bytes of the storages the graph holds"


def _device(roots, device):
    """The device named, else that of the first root tensor (nested lists allowed), else 'cpu'."""
    if device is not None:
        return str(device)
    stack = [roots]
    while stack:
        root = stack.pop(0)
        if isinstance(root, (list, tuple)):
            stack[:0] = list(root)
        elif is_tensor(root):
            return str(getattr(root, "device", "cpu"))
    return "cpu"
