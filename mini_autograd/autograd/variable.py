"""The legacy Variable, as torch.autograd.Variable: since PyTorch 0.4 every tensor is one."""

import warnings

import numpy as np

from ..core import dtypes, engine, events
from ..core.tensor import Tensor, check_can_require_grad

NO_BACKWARD_RUNNING = "Final callbacks can only be installed during backward pass."


class ExecutionEngine:
    """Variable._execution_engine: queue_callback(fn) runs fn once the running backward call ends
    (and a callback may queue another)."""

    def __init__(self):
        self._queued = {}  # backward call -> callbacks
        self._finishing = None  # the call whose callbacks run now

    def queue_callback(self, callback):
        """Run `callback()` when the backward call running now has finished its graph."""
        call = self._finishing or engine.current_call()
        if call is None:
            raise RuntimeError(NO_BACKWARD_RUNNING)
        self._queued.setdefault(call, []).append(callback)
        events.attach(events.backward_finished, self._run_queued)  # only while one waits

    def _run_queued(self, call):
        callbacks, self._finishing = self._queued.get(call, []), call
        try:
            while callbacks:
                callbacks.pop(0)()
        finally:
            self._queued.pop(call, None)
            self._finishing = None
            if not self._queued:
                events.detach(events.backward_finished, self._run_queued)


class VariableMeta(type):
    """isinstance(t, Variable) is True for every tensor, as in PyTorch."""

    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=VariableMeta):
    """Variable(tensor, requires_grad=False): a new leaf with the tensor's data and version counter."""

    _execution_engine = ExecutionEngine()

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn(
                "volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                UserWarning,
                stacklevel=2,
            )
        if data is None:
            return Tensor._make(np.zeros(0, dtype=dtypes.default_float()), bool(requires_grad))
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        check_can_require_grad(
            data._data,
            requires_grad,
            "Only Tensors of floating point and complex dtype can require gradients",
        )
        variable = data.detach()
        variable.requires_grad = bool(requires_grad)
        return variable


def _get_volatile(self):
    """False, with PyTorch's warning: volatile was removed (use no_grad)."""
    warnings.warn("volatile was removed (Variable.volatile is always False)", stacklevel=2)
    return False


def _set_volatile(self, value):
    warnings.warn(
        "volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
        stacklevel=2,
    )


TENSOR_METHODS = {"volatile": property(_get_volatile, _set_volatile)}
