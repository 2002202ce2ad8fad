"""Custom operations, as in torch.autograd.Function: static forward(ctx, ...) and backward(ctx, ...)."""

import numpy as np

from ..grad_mode import _State, no_grad
from ..node import Node, edge_of
from ..saved import SavedTensor
from ..tensor import Tensor


class BackwardCFunction(Node):
    """The node of a custom Function; it is also the `ctx` its forward and backward receive."""

    def save_for_backward(self, *tensors):
        """Keep these tensors for backward; read them back as ctx.saved_tensors (freed after backward)."""
        self._to_save = tensors

    @property
    def saved_tensors(self):
        """The tensors given to save_for_backward (PyTorch's error if backward freed them)."""
        return self.saved("saved_tensors") if self._saved else ()

    def mark_non_differentiable(self, *tensors):
        """Outputs that never get a gradient (e.g. indices)."""
        self._non_differentiable = {id(t) for t in tensors}

    def apply(self, *grads):
        """Call the Function's backward with one gradient per output; keep those for tensor inputs."""
        grads = tuple(
            Tensor._make(np.zeros(shape, dtype)) if g is None else g
            for g, (shape, dtype) in zip(grads, self._info)
        )
        result = self._forward_cls.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        if len(result) != len(self.needs_input_grad):
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients "
                f"(expected {len(self.needs_input_grad)}, got {len(result)})"
            )
        return tuple(result[i] for i in self._tensor_positions)


class FunctionMeta(type):
    """Gives each Function subclass its own node class, named '<Name>Backward' as in PyTorch."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})


class Function(metaclass=FunctionMeta):
    """Subclass with static `forward(ctx, *args)` and `backward(ctx, *grads)`; call `.apply`."""

    @staticmethod
    def forward(ctx, *args):
        """Compute the outputs (graph recording is off in here)."""
        raise NotImplementedError("a Function subclass must implement forward(ctx, ...)")

    @staticmethod
    def backward(ctx, *grads):
        """Return one gradient per forward argument (None for non-tensors)."""
        raise NotImplementedError("a Function subclass must implement backward(ctx, ...)")

    @classmethod
    def apply(cls, *args):
        """Run forward and, if any tensor input requires grad, record a `<Name>Backward` node."""
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in positions]
        recording = _State.enabled and any(t.requires_grad for t in tensors)
        ctx = cls._backward_cls(tuple(edge_of(t) for t in tensors) if recording else ())
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        ctx._tensor_positions = positions
        ctx._to_save = ()
        ctx._non_differentiable = set()
        with no_grad():
            outputs = cls.forward(ctx, *args)
        single = not isinstance(outputs, tuple)
        outputs = (outputs,) if single else outputs
        if recording:
            outputs = tuple(_attach(ctx, out, i, args) for i, out in enumerate(outputs))
            ctx._info = tuple((o._data.shape, o._data.dtype) for o in outputs)
            ctx._saved = {"saved_tensors": tuple(_save(t, outputs) for t in ctx._to_save)}
        elif ctx._to_save:
            ctx._saved = {"saved_tensors": tuple(SavedTensor(t) for t in ctx._to_save)}
        ctx._to_save = ()  # a saved output held here would keep its own node alive (a cycle)
        return outputs[0] if single else outputs


def _attach(ctx, out, output_nr, args):
    if not isinstance(out, Tensor):
        return out
    if any(out is a for a in args):
        out = Tensor._make(out._data)
    if id(out) not in ctx._non_differentiable and out._data.dtype.kind == "f":
        out.grad_fn, out.requires_grad, out._output_nr = ctx, True, output_nr
    return out


def _save(t, outputs):
    if t is None:
        return None
    return SavedTensor(t, is_output=any(t is o for o in outputs))
