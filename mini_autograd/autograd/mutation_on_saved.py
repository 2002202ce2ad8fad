"""allow_mutation_on_saved_tensors, as torch.autograd.graph's: inside it, a tensor saved for
backward and then modified in place is cloned just before the change, so backward reads the
value that was saved.

Saved tensors are packed as handles (saved-tensor hooks); an observer of the in-place changes
(events.tensor_modified) clones the saved tensors that share the changed memory at its version.
Tensors are told apart as PyTorch does: by object, data pointer and version (tid), and their
memory by data pointer and version (sid).
"""

import contextlib
import weakref
from collections import defaultdict

from ..core import events, hooks

BACKWARD_OUTSIDE = (
    "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
    "in which the graph was originally recorded."
)
_enabled = False  # whether an allow_mutation_on_saved_tensors block is running


def _sid(tensor):
    return (tensor._data.__array_interface__["data"][0], tensor._version)


def _tid(tensor):
    return (id(tensor), *_sid(tensor))


class _Handle:
    """What a node keeps of a saved tensor: the key to its original, or to its clone."""


class _AllowMutationOnSavedContext:
    """The state of one block: the saved tensors by handle, and which memory each looks into."""

    def __init__(self):
        self.cloned = weakref.WeakKeyDictionary()  # handle: the clone taken before a change
        self.original = weakref.WeakKeyDictionary()  # handle: the saved tensor itself
        self.tid_to_weakhandle = weakref.WeakValueDictionary()
        self.sid_to_tid = defaultdict(set)

    def clear(self):
        """Forget everything (done when the block ends)."""
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()


class _swap_with_cloned(hooks.saved_tensors_hooks):
    """Saved tensors are kept as handles, read back as the original or its clone."""

    def __init__(self, ctx):
        def pack_hook(tensor):
            tid = _tid(tensor)
            ctx.sid_to_tid[_sid(tensor)].add(tid)
            handle = ctx.tid_to_weakhandle.get(tid)
            if handle is None:  # the same tensor at the same version shares one handle
                handle = ctx.tid_to_weakhandle[tid] = _Handle()
                ctx.original[handle] = tensor
            return handle

        def unpack_hook(handle):
            if not _enabled:
                raise AssertionError(BACKWARD_OUTSIDE)
            if handle in ctx.cloned:
                return ctx.cloned[handle]
            if handle not in ctx.original:
                raise AssertionError(BACKWARD_OUTSIDE)
            return ctx.original[handle]

        super().__init__(pack_hook, unpack_hook)


def _clone_before_change(ctx):
    """The observer of in-place changes: clone what is saved of the memory about to change."""

    def maybe_clone(tensor):
        for tid in ctx.sid_to_tid.get(_sid(tensor), ()):
            handle = ctx.tid_to_weakhandle.get(tid)
            if handle is None or handle in ctx.cloned:  # freed by backward since, or cloned
                continue
            ctx.cloned[handle] = ctx.original.pop(handle).detach().clone()

    return maybe_clone


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Context manager: tensors saved for backward may be modified in place (they are cloned
    first); yields the block's state. Run both forward and backward inside it."""
    global _enabled
    ctx = _AllowMutationOnSavedContext()
    observer = _clone_before_change(ctx)
    events.attach(events.tensor_modified, observer)
    try:
        with _swap_with_cloned(ctx):
            try:
                if _enabled:
                    raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
                _enabled = True
                yield ctx
            finally:
                ctx.clear()
                _enabled = False
    finally:
        events.detach(events.tensor_modified, observer)
