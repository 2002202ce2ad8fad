"""The profiler, as torch.autograd.profiler and torch.profiler: `with profile() as prof:` records
the operations run inside, and `prof.key_averages().table(sort_by=...)` prints PyTorch's table.

mini_autograd's operations are Python functions, so the profiler follows Python's calls (with
sys.settrace, only while it records; a debugger's or coverage's tracing pauses meanwhile): every
call of an operation (`x * y`, `torch.exp(x)`, `F.linear`), of a custom Function, of a node's
backward in a backward pass, and every `record_function` block is an event, timed from call to
return. An event's "CPU total" includes the events it calls (a backward node's operations, say);
its "Self CPU" does not. Operations are named after mini_autograd's functions (`aten::mul`),
nodes as PyTorch names them. Tracing slows Python calls down, so the times are larger than
without the profiler; compare them with each other.
"""

import contextlib
import enum
import sys
import time

from ..core import arrays, engine
from ..core.tensor import Tensor
from ..ops import methods
from .function import Function
from .profiler_util import EventList, FunctionEvent, FunctionEventAvg, _format_time  # noqa: F401

_recorder = None  # the _Recorder of the profile that records now, if any


def kineto_available():
    """False: mini_autograd's profiler traces Python calls; it has no Kineto (PyTorch's C++ tracer)."""
    return False


def _profiler_enabled():
    """True while a profile records."""
    return _recorder is not None


class ProfilerActivity(enum.Enum):
    """What torch.profiler can record; mini_autograd records the CPU only."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


def _operation_names():
    """{code object: event name} for the operations: Tensor methods and torch.* and F.* functions."""
    from .. import ops
    from ..nn import functional

    functions = [*methods.METHODS.values(), *(getattr(ops, name) for name in ops.__all__)]
    functions += [
        f
        for name, f in vars(functional).items()
        if getattr(f, "__module__", None) == functional.__name__ and not name.startswith("_")
    ]
    names = {}
    for function in functions:
        code = getattr(function, "__code__", None)
        if code is not None:
            names[code] = f"aten::{function.__name__.removesuffix('_method')}"
    names[Function.apply.__func__.__code__] = None  # named after the Function's class
    return names


# where the engine calls each node (arrays.run; anomaly mode's check in between)
_RUNS_NODES = {arrays.run.__code__, engine._run_backward.__code__}


class _Recorder:
    """Turns the calls of operations into FunctionEvents, while a profile records."""

    def __init__(self, record_shapes):
        self.names = _operation_names()
        self.record_shapes = record_shapes
        self.events = EventList()
        self.open = []  # the events whose call has not returned yet, innermost last

    def start(self, name, input_shapes=None):
        """Open an event named `name`, inside the innermost open one."""
        now = time.perf_counter_ns() / 1e3
        event = FunctionEvent(len(self.events), name, 0, now, now, input_shapes)
        if self.open:
            event.set_cpu_parent(self.open[-1])
            self.open[-1].append_cpu_child(event)
        self.events.append(event)
        self.open.append(event)

    def stop(self):
        """Close the innermost open event."""
        self.open.pop().time_range.end = time.perf_counter_ns() / 1e3

    def on_call(self, frame, what, arg):
        """sys.settrace's callback, at each Python call: open an event for an operation's call.

        It returns the frame's own callback, which closes the event when the call returns (and
        sees no line of the operation: f_trace_lines is off); other calls are not followed.
        """
        code = frame.f_code
        if code in self.names:
            name = self.names[code] or frame.f_locals["cls"].__name__
        elif code.co_name == "apply" and frame.f_back and frame.f_back.f_code in _RUNS_NODES:
            name = frame.f_locals["self"].name()  # a node, run by the engine
        else:
            return None
        frame.f_trace_lines = False
        self.start(name, _input_shapes(frame) if self.record_shapes else None)
        return self.on_return

    def on_return(self, frame, what, arg):
        """The callback of an operation's frame: close its event when it returns."""
        if what == "return":
            self.stop()


def _input_shapes(frame):
    """The shape of each argument of a call, as a list ([] for an argument that is not a tensor)."""
    code = frame.f_code
    arguments = [frame.f_locals[name] for name in code.co_varnames[: code.co_argcount]]
    return [list(a.shape) if isinstance(a, Tensor) else [] for a in arguments]


class profile:
    """Context manager: record the operations run inside; then key_averages().table() shows them.

    The other arguments are PyTorch's, accepted so that its programs run; mini_autograd records
    names, CPU times and, with record_shapes, the shapes of the arguments (no memory, stacks or
    FLOPs).
    """

    def __init__(
        self,
        enabled=True,
        *,
        use_cuda=False,
        use_device=None,
        record_shapes=False,
        with_flops=False,
        profile_memory=False,
        with_stack=False,
        with_modules=False,
        use_kineto=False,
        use_cpu=True,
        experimental_config=None,
        acc_events=False,
        custom_trace_id_callback=None,
    ):
        if use_cuda or use_device not in (None, "cpu"):
            raise RuntimeError("mini_autograd runs on the CPU only: its profiler records the CPU")
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.function_events = None
        self._recorder = None

    def __enter__(self):
        if self.enabled:
            self._start()
        return self

    def __exit__(self, *exc):
        self._finish()
        return False

    def _start(self):
        global _recorder
        if _recorder is not None:
            raise RuntimeError(
                "mini_autograd's profiler is already recording (profiles do not nest)"
            )
        self._recorder = _recorder = _Recorder(self.record_shapes)
        self._previous = sys.gettrace()
        sys.settrace(_recorder.on_call)

    def _finish(self):
        global _recorder
        if self._recorder is None:
            return
        sys.settrace(self._previous)
        recorder, _recorder, self._recorder = self._recorder, None, None
        while recorder.open:  # calls that an exception left open
            recorder.stop()
        self.function_events = recorder.events

    def _events(self):
        if self.function_events is None:
            raise AssertionError("Expected profiling results")
        return self.function_events

    def key_averages(
        self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False
    ):
        """The events averaged by name (an EventList of FunctionEventAvg)."""
        return self._events().key_averages()

    def table(
        self,
        sort_by=None,
        row_limit=100,
        max_src_column_width=75,
        max_name_column_width=55,
        header=None,
        top_level_events_only=False,
    ):
        """Every event (not averaged) as PyTorch's table (no source column: no stacks recorded)."""
        return self._events().table(
            sort_by=sort_by,
            row_limit=row_limit,
            max_name_column_width=max_name_column_width,
            header=header,
            top_level_events_only=top_level_events_only,
        )

    def total_average(self):
        """All events added up into one FunctionEventAvg."""
        return self._events().total_average()

    @property
    def self_cpu_time_total(self):
        """The sum of the events' self CPU times, in microseconds."""
        return self._events().self_cpu_time_total

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace."""
        self._events().export_chrome_trace(path)

    def __str__(self):
        if self.function_events is None:
            return "<unfinished torch.autograd.profile>"
        return str(self.function_events)


class record_function(contextlib.ContextDecorator):
    """Context manager or decorator: the block becomes one event named `name` in the profile."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._entered = []  # the recorder of each entry not yet left (a decorator may recurse)

    def __enter__(self):
        self._entered.append(_recorder)
        if _recorder is not None:
            _recorder.start(self.name)
        return self

    def __exit__(self, *exc):
        recorder = self._entered.pop()
        if recorder is not None and recorder is _recorder:  # (the profile may have ended inside)
            recorder.stop()
        return False


class emit_itt:
    """Context manager: PyTorch marks each operation for Intel's ITT tools (VTune); mini_autograd
    has no ITT, so nothing is marked."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("ITT annotation context manager is not reentrant")
        self.entered = True
        return self

    def __exit__(self, *exc):
        return False


class TorchProfile(profile):
    """torch.profiler.profile: the same recording, with torch.profiler's arguments and methods."""

    def __init__(
        self,
        *,
        activities=None,
        schedule=None,
        on_trace_ready=None,
        record_shapes=False,
        profile_memory=False,
        with_stack=False,
        with_flops=False,
        with_modules=False,
        experimental_config=None,
        execution_trace_observer=None,
        acc_events=False,
        use_cuda=None,
        custom_trace_id_callback=None,
    ):
        if schedule is not None:
            raise NotImplementedError(
                "mini_autograd's profiler has no schedule: it records every step"
            )
        super().__init__(use_cuda=bool(use_cuda), record_shapes=record_shapes)
        self.on_trace_ready = on_trace_ready

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        """Start recording (what entering `with` does)."""
        self._start()

    def stop(self):
        """Stop recording, and hand the profile to on_trace_ready if one was given."""
        if self._recorder is not None:
            self._finish()
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)

    def step(self):
        """The end of one training step: recording goes on (there is no schedule)."""

    def events(self):
        """The recorded events."""
        return self._events()
