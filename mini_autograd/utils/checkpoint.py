"""Activation checkpointing, as in torch.utils.checkpoint: trade compute for memory.

    out = checkpoint(block, x, use_reentrant=False)   # block's intermediates are not kept
    out.sum().backward()                              # block runs again to get them back

Two implementations, as in PyTorch:

* non-reentrant (`use_reentrant=False`, recommended): the forward runs under a
  `saved_tensors_hooks` whose pack hook keeps a small handle (a `_Holder`) instead of each saved
  tensor. The first unpack in a backward call re-runs the function (same grad mode, same RNG state)
  under a second pair of hooks that fills every holder with its recomputed tensor, and stops as
  soon as the last one is filled (early stop). A recomputed tensor is handed out once, then
  dropped. Checkpoints nest: a checkpoint's inputs are saved like any tensor, so an inner one
  recomputes its parent first.
* reentrant (`use_reentrant=True`, the default when the argument is missing, with a warning): a
  custom autograd.Function runs the function under no_grad and saves only its inputs; its backward
  runs it again under enable_grad and calls autograd.backward on those outputs (a backward call
  inside the backward call), so it only works with `.backward()` without `inputs`.

Out of scope here: devices other than the CPU, autocast, selective checkpointing
(`create_selective_checkpoint_contexts`, which needs torch's dispatch modes) and torch.compile.
`debug=True` logs the recorded backward nodes (mini_autograd has no operator dispatch to log).
"""

import contextlib
import itertools
import os
import traceback
import warnings
import weakref
from collections import defaultdict

from ..autograd.function import Function
from ..autograd.graph import saved_tensors_hooks
from ..core import engine_state, events
from ..core.backward_calls import backward as autograd_backward
from ..core.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..core.saved import SavedTensor
from ..core.tensor import Tensor
from ..nn import Sequential
from ..random import get_rng_state, set_rng_state

__all__ = [
    "CheckpointError",
    "CheckpointFunction",
    "GraphExecGroup",
    "check_backward_validity",
    "checkpoint",
    "checkpoint_sequential",
    "detach_variable",
    "noop_context_fn",
    "set_checkpoint_debug_enabled",
    "set_checkpoint_early_stop",
]

USE_REENTRANT_MISSING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in "
    "PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants."
)
SEQUENTIAL_USE_REENTRANT_MISSING = (
    "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
    "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants."
)
REENTRANT_WITH_INPUTS = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
    "`inputs` parameter to .backward(). To resolve this error, you can either set "
    "use_reentrant=False, or call .backward() without passing the `inputs` argument."
)
CONTEXT_SUPPRESSED = (
    "torch.utils.checkpoint: the forward context provided by context_fn suppressed an exception "
    "raised during the checkpointed forward. This is not supported because checkpoint cannot "
    "return a value for a failed forward."
)
DEBUG_TIP = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint‑debug mode globally.

If this error occurs under torch.compile with automatic_dynamic_shapes enabled,
it may be because the recomputation selected a different compiled graph than the
forward pass (e.g., a dynamic graph instead of the original static graph).
To fix this, either:
  - Use torch._dynamo.mark_dynamic() to explicitly mark varying dimensions as
    dynamic upfront, avoiding the static-to-dynamic transition.
  - Call torch._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache
    reordering, which can change which graph is checked first between forward
    and recompute.
See https://github.com/pytorch/pytorch/issues/166926 for more details and
workaround examples.
"""  # torch's text, word for word (torch.compile included), so that errors read the same
DEBUG_TEMPLATE = """ \
An error happened while unpacking tensors; dumping logs of latest computation
because you passed `debug=True` to `torch.utils.checkpoint.checkpoint()`.

+------------------------------------------------------------------------------+
|        1. Stack traces of the operators that ran in the original forward     |
+------------------------------------------------------------------------------+

{forward_traces}
+------------------------------------------------------------------------------+
|        2. Stack traces of the operators that ran during recomputation        |
+------------------------------------------------------------------------------+

{recompute_traces}
+------------------------------------------------------------------------------+
|       3. Log of operators in the original forward and recomputation          |
+------------------------------------------------------------------------------+

Operations executed during the original forward:

{forward_ops}

Operations executed during recomputation:

{recompute_ops}

+------------------------------------------------------------------------------+
 ERROR: Detected non-determinism while running activation checkpointing

 You are seeing this error because you passed `debug=True` to checkpoint and
 tensors to be saved during the original forward and differ between those saved
 during recomputation. This can happen if different operators were ran in the
 original forward and in the recomputation.
--------------------------------------------------------------------------------
"""


class CheckpointError(RuntimeError):
    """What checkpoint raises when the recomputation does not match the forward."""


# Settings that override the arguments of checkpoint (None: use the argument).
_checkpoint_debug_enabled = None
_enable_checkpoint_early_stop = None
_graph_exec_group = None  # the GraphExecGroup entered now, if any


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Inside, checkpoint's `debug` is `enabled` whatever is passed (None: the argument counts)."""
    global _checkpoint_debug_enabled
    previous, _checkpoint_debug_enabled = _checkpoint_debug_enabled, enabled
    try:
        yield
    finally:
        _checkpoint_debug_enabled = previous


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Checkpoints run inside stop (or not) their recomputation early, whatever `early_stop` says;
    the setting is taken at forward time and holds for their backward."""
    global _enable_checkpoint_early_stop
    previous, _enable_checkpoint_early_stop = _enable_checkpoint_early_stop, enable
    try:
        yield
    finally:
        _enable_checkpoint_early_stop = previous


class GraphExecGroup:
    """Backward calls inside one group share one recomputation per checkpoint; they must not
    need the same saved tensor (only for use_reentrant=False)."""

    def __enter__(self):
        global _graph_exec_group
        if _graph_exec_group is not None:
            raise RuntimeError(
                f"GraphExecGroup contexts cannot be nested. Already inside group {_graph_exec_group}"
            )
        _graph_exec_group = self
        return self

    def __exit__(self, *exc):
        global _graph_exec_group
        _graph_exec_group = None


def noop_context_fn():
    """The default context_fn: no context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs):
    """The tensors of the tuple `inputs` detached, each keeping its requires_grad."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}"
        )
    out = []
    for inp in inputs:
        if isinstance(inp, Tensor):
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            inp = x
        out.append(inp)
    return tuple(out)


def check_backward_validity(inputs):
    """Warn when no input tensor requires grad (the reentrant checkpoint then gives None)."""
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn(
            "None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2
        )


@contextlib.contextmanager
def _forward_rng_state(state):
    """Run with the RNG state of the forward (None: leave the RNG alone), then put back the
    state it had outside (torch.random.fork_rng)."""
    if state is None:
        yield
        return
    outside = get_rng_state()
    set_rng_state(state)
    try:
        yield
    finally:
        set_rng_state(outside)


class CheckpointFunction(Function):
    """The reentrant checkpoint: forward under no_grad saving the inputs; backward recomputes
    under enable_grad and runs a backward call of its own through the recomputed graph."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.fwd_cpu_state = get_rng_state() if preserve_rng_state else None
        # non-tensor inputs stay on ctx; tensors are saved, with a None in their place
        ctx.inputs = [None if isinstance(arg, Tensor) else arg for arg in args]
        ctx.tensor_indices = [i for i, arg in enumerate(args) if isinstance(arg, Tensor)]
        ctx.save_for_backward(*(arg for arg in args if isinstance(arg, Tensor)))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *args):
        if not engine_state.is_checkpoint_valid():
            raise RuntimeError(REENTRANT_WITH_INPUTS)
        inputs = list(ctx.inputs)
        for i, tensor in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = tensor
        with _forward_rng_state(ctx.fwd_cpu_state):
            detached_inputs = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached_inputs)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [
            (out, grad)
            for out, grad in zip(outputs, args)
            if isinstance(out, Tensor) and out.requires_grad
        ]
        if not pairs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary"
            )
        autograd_backward([out for out, _ in pairs], [grad for _, grad in pairs])
        grads = tuple(inp.grad if isinstance(inp, Tensor) else None for inp in detached_inputs)
        return (None, None, *grads)


def checkpoint(
    function,
    *args,
    use_reentrant=None,
    context_fn=noop_context_fn,
    determinism_check="default",
    debug=False,
    early_stop=True,
    **kwargs,
):
    """function(*args, **kwargs), keeping only the inputs for backward, which recomputes the rest.

    use_reentrant: pass it (False recommended); missing, it warns and is True, as in PyTorch 2.13.
    preserve_rng_state (keyword, default True): recompute with the forward's RNG state.
    context_fn: returns two context managers, one for the forward and one for the recomputation.
    determinism_check: "default" compares shape, dtype and device of each recomputed saved tensor
    with the forward's; "none" does not. debug: errors also list the operations of both runs.
    early_stop: stop recomputing once every saved tensor is back (see set_checkpoint_early_stop).
    context_fn, determinism_check, debug, early_stop and **kwargs need use_reentrant=False.
    """
    if use_reentrant is None:
        warnings.warn(USE_REENTRANT_MISSING, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
            )
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(
        function, preserve, context_fn, determinism_check, debug, early_stop, args, kwargs
    )


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):  # noqa: A002
    """Run `functions` (an nn.Sequential or a list) on `input` in `segments` chunks, each but the
    last one checkpointed."""
    if use_reentrant is None:
        warnings.warn(SEQUENTIAL_USE_REENTRANT_MISSING, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):  # noqa: A002
            for j in range(start, end + 1):
                input = functions[j](input)
            return input

        return forward

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(
            run_function(start, end, functions),
            input,
            use_reentrant=use_reentrant,
            preserve_rng_state=preserve,
        )
    return run_function(end + 1, len(functions) - 1, functions)(input)


def _checkpoint_without_reentrant(
    function, preserve, context_fn, determinism_check, debug, early_stop, args, kwargs
):
    """The non-reentrant checkpoint: run `function` with the frame's hooks on its saved tensors."""
    unpack_error_cb = None
    if debug if _checkpoint_debug_enabled is None else _checkpoint_debug_enabled:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        context_fn, unpack_error_cb = _debug_context_and_cb()
    if determinism_check not in _METADATA_FNS:
        raise ValueError(
            f"determinism_check should be one of {list(_METADATA_FNS)}, but got {determinism_check}"
        )
    forward_context, recompute_context = context_fn()
    fwd_cpu_state = get_rng_state() if preserve else None

    def recompute_fn(*inputs):
        with _forward_rng_state(fwd_cpu_state), recompute_context:
            function(*inputs, **kwargs)

    if _enable_checkpoint_early_stop is not None:
        early_stop = _enable_checkpoint_early_stop
    frame = _CheckpointFrame(
        recompute_fn, early_stop, unpack_error_cb, _METADATA_FNS[determinism_check]
    )
    if not is_grad_enabled():  # nothing will be saved: no checkpoint needed
        return function(*args, **kwargs)
    frame.save_inputs(*args)
    suppressed = True
    with _checkpoint_hook(frame), forward_context:
        output = function(*args, **kwargs)
        suppressed = False
    if suppressed:
        raise RuntimeError(CONTEXT_SUPPRESSED)
    frame.forward_completed = True
    return output


def _default_meta_extractor(x):
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_METADATA_FNS = {"default": _default_meta_extractor, "none": lambda _: None}


class _Handle:
    """The key of one recomputed tensor: dropping it drops the tensor (a WeakKeyDictionary)."""


class _Holder:
    """What the pack hook saves instead of a tensor: per backward call (gid), the handle of its
    recomputed value, or None once unpacked."""

    def __init__(self):
        self.handles = {}


class _StopRecomputationError(Exception):
    """Raised by the recomputation's pack hook once every saved tensor is back (early stop)."""


def _internal_assert(cond):
    if not cond:
        raise AssertionError(
            "Something went unexpectedly wrong in activation checkpoint. "
            "Please report this bug by filing an issue to PyTorch."
        )


class _CheckpointFrame:
    """One checkpointed call: its inputs, weak links to its holders in saving order, and per
    backward call (gid) the tensors recomputed so far."""

    def __init__(self, recompute_fn, early_stop, unpack_error_cb, metadata_fn):
        self.recompute_fn = recompute_fn
        self.early_stop = early_stop
        self.unpack_error_cb = unpack_error_cb
        self.metadata_fn = metadata_fn
        self.saved_args = []
        self.weak_holders = []
        self.x_metadatas = []  # one per holder
        self.recomputed = defaultdict(weakref.WeakKeyDictionary)  # gid: {handle: tensor}
        self.recomp_counter = defaultdict(int)  # gid: tensors saved by the recomputation so far
        self.is_recomputed = defaultdict(bool)
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def save_inputs(self, *args):
        """Save the tensor inputs as saved tensors: inside an outer checkpoint, its hooks pack them."""
        self.saved_args = [SavedTensor(arg) if isinstance(arg, Tensor) else arg for arg in args]

    def get_inputs(self):
        return [arg.unpack() if isinstance(arg, SavedTensor) else arg for arg in self.saved_args]

    def check_recomputed_tensors_match(self, gid):
        """Raise CheckpointError if the recomputation saved other tensors than the forward."""
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter[gid]}.\n"
                f"{DEBUG_TIP}"
            )
        mismatched = ""
        for idx, weak_holder in enumerate(self.weak_holders):
            holder = weak_holder()
            if holder is None:  # freed by an earlier backward: not recomputed
                continue
            _internal_assert(holder.handles.get(gid) in self.recomputed[gid])
            x_meta = self.x_metadatas[idx]
            recomputed_meta = self.metadata_fn(self.recomputed[gid][holder.handles[gid]])
            if x_meta != recomputed_meta:
                mismatched += (
                    f"tensor at position {idx}:\n"
                    f"saved metadata: {x_meta}\n"
                    f"recomputed metadata: {recomputed_meta}\n"
                )
        if mismatched:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                f"different metadata than during the forward pass.\n{mismatched}.\n{DEBUG_TIP}"
            )


class _recomputation_hook(saved_tensors_hooks):
    """The hooks during a recomputation: each saved tensor fills the next holder of the frame."""

    def __init__(self, target_frame_ref, gid):
        def pack_hook(x):
            x = x.detach() if x.requires_grad else x
            frame = target_frame_ref()
            recomp_idx = frame.recomp_counter[gid]
            frame.recomp_counter[gid] += 1
            if recomp_idx >= len(frame.weak_holders):
                if not frame.forward_completed:  # a backward inside the forward, no early stop
                    frame.ignore_saved_mismatch = True
                    return x
                raise CheckpointError(
                    "torch.utils.checkpoint: trying to save more tensors during recomputation "
                    f"than during the original forward pass.\n{DEBUG_TIP}"
                )
            holder = frame.weak_holders[recomp_idx]()
            if holder is not None:  # else an earlier backward freed it: nothing to fill
                _internal_assert(holder.handles.get(gid) is None)
                holder.handles[gid] = _Handle()
                frame.recomputed[gid][holder.handles[gid]] = x
            if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
                raise _StopRecomputationError
            return x  # a backward through the recomputed graph itself may need it

        super().__init__(pack_hook, lambda x: x)


_temporary_gids = itertools.count()


def _current_gid():
    """The group of recomputation: the GraphExecGroup, else the backward call, else a new one."""
    if _graph_exec_group is not None:
        return _graph_exec_group
    gid = engine_state.current_graph_task_id()
    return gid if gid != -1 else ("outside backward", next(_temporary_gids))


class _checkpoint_hook(saved_tensors_hooks):
    """The hooks during the forward: pack keeps a holder; the first unpack in a backward call
    recomputes, every unpack hands out (and forgets) its holder's recomputed tensor."""

    def __init__(self, frame):
        def pack_hook(x):
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            if frame.metadata_fn is not None:
                with no_grad():
                    frame.x_metadatas.append(frame.metadata_fn(x))
            return holder

        def unpack_hook(holder):
            gid = _current_gid()
            if not frame.is_recomputed[gid]:
                args = frame.get_inputs()
                try:
                    with _recomputation_hook(weakref.ref(frame), gid), enable_grad():
                        frame.recompute_fn(*args)
                except _StopRecomputationError:
                    pass
                frame.is_recomputed[gid] = True
                frame.check_recomputed_tensors_match(gid)
            _internal_assert(gid in holder.handles)
            if holder.handles[gid] is None:
                raise CheckpointError(_unpacked_twice_message())
            ret = frame.recomputed[gid][holder.handles[gid]]
            holder.handles[gid] = None
            return ret

        def unpack_hook_with_error_cb(holder):
            try:
                return unpack_hook(holder)
            except CheckpointError as e:
                frame.unpack_error_cb(e)

        unpack = unpack_hook if frame.unpack_error_cb is None else unpack_hook_with_error_cb
        super().__init__(pack_hook, unpack)


def _unpacked_twice_message():
    extra = ""
    if _graph_exec_group is not None:
        extra = (
            "Performing two backward calls that overlap (i.e. require the same saved activation "
            "in order to compute gradients) is not allowed while under the "
            "torch.utils.checkpoint.GraphExecGroup context. "
        )
    return (
        "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked "
        f"once. {extra}If you are calling ctx.saved_tensors in backward, make sure to do so only "
        "once. Otherwise please open an issue with details on your use case."
    )


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _OperationLog:
    """Records the backward nodes created inside (one line each) and where the user code made them."""

    def __init__(self):
        self.logs, self.tbs = None, None

    @contextlib.contextmanager
    def recording(self):
        self.logs, self.tbs = [], []

        def note(node, output):
            shape = list(output.shape) if isinstance(output, Tensor) else "?"
            self.logs.append(f"{node.name()}: {getattr(output, 'dtype', '?')}{shape}")
            stack = traceback.extract_stack()[:-1]
            self.tbs.append([f for f in stack if not f.filename.startswith(_PACKAGE_DIR)])

        events.attach(events.node_created, note)
        try:
            yield
        finally:
            events.detach(events.node_created, note)

    def traces(self, label):
        out = ""
        for i, (log, tb) in enumerate(zip(self.logs, self.tbs)):
            out += f"{log}   ({i + 1} of {len(self.logs)} in {label})\n\n"
            out += "".join(f"{f.filename}:{f.lineno}:{f.name}\n" for f in tb) + "\n\n"
        return out


def _debug_context_and_cb():
    """debug=True: a context_fn that logs both runs, and the callback that adds the logs to an error."""
    forward_log, recompute_log = _OperationLog(), _OperationLog()

    def unpack_error_cb(e):
        raise CheckpointError(
            DEBUG_TEMPLATE.format(
                forward_traces=forward_log.traces("original"),
                recompute_traces=recompute_log.traces("recompute"),
                forward_ops="\n".join(forward_log.logs),
                recompute_ops="\n".join(recompute_log.logs),
            )
        ) from e

    def context_fn():
        return forward_log.recording(), recompute_log.recording()

    return context_fn, unpack_error_cb
