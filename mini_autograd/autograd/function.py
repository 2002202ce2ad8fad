"""Custom operations, as in torch.autograd.Function: you write forward and backward, autograd
records one `<Name>Backward` node for each call of `.apply`.

Two ways to write forward, as in PyTorch 2:
- `forward(ctx, *args)`, which also fills `ctx` (save_for_backward, attributes, mark_dirty...);
- `forward(*args)` plus `setup_context(ctx, inputs, output)`, which fills `ctx` afterwards.
"""

import functools
import inspect
import warnings

import numpy as np

from ..core.errors import FREED as FREED_MESSAGE
from ..core.grad_mode import GradMode, is_grad_enabled, no_grad
from ..core.node import UINT64_MAX, AccumulateGrad, Node, gradient_edge
from ..core.saved import SavedTensor
from ..core.tensor import Tensor
from ..core.tensor_data import numpy_grad_dtype
from ..ops.broadcasting import sum_to
from ..ops.derivatives import cast
from ..ops.inplace import MULTI_OUTPUT_VIEW, VIEW_OF_LEAF_IN_PLACE, rebase_history, view_error
from ..ops.recording import announce

DIRTY_NOT_AN_INPUT = (
    "ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have been "
    "mutated should be passed to ctx.mark_dirty()."
)
DIRTY_VIEW_WITH_OUTPUTS = (
    "If your Function modifies inplace an input that is a view of another Tensor, your Function "
    "cannot return more than one Tensor. This is not supported by the current autograd engine. "
    "You should either make sure the input is not a view (using .clone() for example) or make "
    "your Function only return one Tensor (potentially splitting it into two Functions: one doing "
    "the inplace that returns a single Tensor and a second one that does the other operations). "
    "You can ask on the forum https://discuss.pytorch.org/ if you need help to do this change."
)
BACKWARD_AND_VJP = (
    "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You should only "
    "implement one of them."
)
CLEARED_ON_ACCESS = (
    "saved_tensors can only be accessed once when clear_saved_tensors_on_access=True is set on "
    "the autograd.Function. Either access saved_tensors only once, or set "
    "clear_saved_tensors_on_access=False."
)


class BackwardCFunction(Node):
    """The node of a custom Function; it is also the `ctx` its forward and backward receive."""

    runs_without_gradients = True  # as in PyTorch, backward runs even if no gradient came
    # False (set by forward): outputs marked non-differentiable get None, even when other
    # missing gradients are materialized as zeros
    _materialize_non_diff_grads = True
    _non_differentiable_outputs = ()  # their positions among the outputs

    def __init__(self, next_functions):
        super().__init__(next_functions)
        self._to_save = ()
        self._dirty = ()
        self._non_differentiable = ()
        self._materialize_grads = True
        self._freed_by = None
        self._cleared = False
        self._input_metadata = ()  # (shape, dtype) of each forward argument; None: not a tensor
        self._output_metadata = ()  # (shape, dtype) of each output; None: not a tensor

    def save_for_backward(self, *tensors):
        """Keep these tensors (or None) for backward; read them back as ctx.saved_tensors."""
        self._to_save = tensors

    @property
    def saved_tensors(self):
        """The tensors given to save_for_backward (PyTorch's error once backward freed them)."""
        if self._cleared:
            raise RuntimeError(CLEARED_ON_ACCESS)
        saved = self._saved["saved_tensors"] if self._saved else ()
        unpacked = tuple(None if s is None else s.unpack(self) for s in saved)
        if self._freed_by is not None:  # as in PyTorch, even when nothing was saved
            raise RuntimeError(FREED_MESSAGE)
        if self._forward_cls.clear_saved_tensors_on_access and self._saved:
            self._saved["saved_tensors"], self._cleared = (), True
        return unpacked

    @property
    def saved_variables(self):
        """saved_tensors, under its deprecated name."""
        message = "'saved_variables' is deprecated; use 'saved_tensors'"
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return self.saved_tensors

    @property
    def _raw_saved_tensors(self):
        """The SavedTensors of save_for_backward (a None too), e.g. to register_hooks on them."""
        if self._freed_by is not None:
            raise RuntimeError(FREED_MESSAGE)
        saved = self._saved["saved_tensors"] if self._saved else ()
        return tuple(_saved_none() if s is None else s for s in saved)

    def mark_dirty(self, *tensors):
        """Inputs that forward modified in place (they must be returned as outputs)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        """Outputs that never get a gradient (e.g. indices); backward still receives zeros for them."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        """False: backward receives None, not zeros, for outputs that got no gradient."""
        self._materialize_grads = bool(value)

    def release_variables(self, backward_call):
        """Free the saved tensors and remember it, so ctx.saved_tensors raises afterwards."""
        super().release_variables(backward_call)
        self._freed_by = backward_call

    def apply(self, *grads):
        """Call the Function's backward with one gradient per output; check what it returns."""
        grads = grads + (None,) * (len(self._output_metadata) - len(grads))
        if self._materialize_grads:
            kept_none = () if self._materialize_non_diff_grads else self._non_differentiable_outputs
            grads = tuple(
                Tensor._make(np.zeros(*info))
                if g is None and info is not None and i not in kept_none
                else g
                for i, (g, info) in enumerate(zip(grads, self._output_metadata))
            )
        backward = self._user_backward()
        if self._forward_cls.boxed_grads_call:  # backward(ctx, grads) gets one list it may empty
            return self._checked(backward(self, list(grads)))
        return self._checked(backward(self, *grads))

    def _user_backward(self):
        """The Function's backward, or its vjp (another name for it); not both, as in PyTorch."""
        cls = self._forward_cls
        if cls.backward is not Function.backward and cls.vjp is not Function.vjp:
            raise RuntimeError(BACKWARD_AND_VJP)
        return cls.vjp if cls.vjp is not Function.vjp else cls.backward

    def _checked(self, result):
        """backward's result as one gradient per tensor input, with PyTorch's errors and fixes."""
        result = result if isinstance(result, tuple) else (result,)
        expected = len(self._input_metadata)
        if len(result) > expected and all(g is None for g in result[expected:]):
            result = result[:expected]  # extra trailing Nones are allowed
        if len(result) != expected:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients "
                f"(expected {expected}, got {len(result)})"
            )
        checked = []  # (gradient, (shape, dtype)) for each tensor input
        for position, (g, info) in enumerate(zip(result, self._input_metadata)):
            if info is None:
                if g is not None:
                    raise RuntimeError(
                        f"function {self.name()} returned a gradient different than None at "
                        f"position {position + 1}, but the corresponding forward input was not a "
                        "Variable"
                    )
                continue
            if g is not None and not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            checked.append((g, info))
        return tuple(
            g if g is None or edge[0] is None else self._fitted(index, g, *info, edge[0])
            for index, ((g, info), edge) in enumerate(zip(checked, self.next_functions))
        )

    def _fitted(self, index, g, shape, dtype, next_node):
        """A gradient summed down to its input's shape (if it broadcasts) and cast to its dtype
        (a leaf's grad_dtype, where it goes to a leaf: None lets any dtype through)."""
        if type(next_node) is AccumulateGrad:
            dtype = numpy_grad_dtype(next_node.variable)
        if g.shape != shape:
            try:
                broadcastable = np.broadcast_shapes(shape, g.shape) == tuple(g.shape)
            except ValueError:
                broadcastable = False
            if not broadcastable:
                raise RuntimeError(
                    f"Function {self.name()} returned an invalid gradient at index {index} - got "
                    f"{list(g.shape)} but expected shape compatible with {list(shape)}"
                )
            g = sum_to(g, shape)
        return g if dtype is None or g._data.dtype == dtype else cast(g, dtype)

    def __dir__(self):
        # PyTorch lists no `_saved_*` attributes for a custom Function's node (mini_autograd's
        # `_saved_saved_tensors` stays readable, for the pictures of viz.py).
        return object.__dir__(self)

    def __repr__(self):
        # A Python class, so PyTorch prints it with its module: <torch.autograd.function.XBackward ...>
        return f"<{type(self).__module__}.{type(self).__qualname__} object #{self._sequence_nr_}>"


class FunctionMeta(type):
    """Gives each Function subclass its own node class, named '<Name>Backward' as in PyTorch."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})


class Function(metaclass=FunctionMeta):
    """Subclass with static `forward` (and optionally `setup_context`) and `backward`; call `.apply`."""

    # True: ctx.saved_tensors may be read once, and lets go of the tensors it returns.
    clear_saved_tensors_on_access = False
    # True: backward(ctx, grads) receives the gradients as one list, which it may empty as it goes.
    boxed_grads_call = False

    def __init__(self, *args, **kwargs):
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def forward(*args, **kwargs):
        """Compute the outputs, as `forward(ctx, *args)` or `forward(*args)` (recording is off here)."""
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Fill ctx after a `forward(*args)` that takes no ctx."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """Return one gradient per forward argument (None for non-tensors)."""
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    @staticmethod
    def vjp(ctx, *grad_outputs):
        """Another name for backward: define one of the two."""
        return Function.backward(ctx, *grad_outputs)

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward and, if grad mode is on and a tensor input requires grad, record `<Name>Backward`."""
        separate = cls.setup_context is not Function.setup_context
        if separate:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        args = _keywords_as_positions(cls.forward, args, kwargs, 0 if separate else 1)
        tensors = [a for a in args if isinstance(a, Tensor)]
        recording = GradMode.enabled and any(t.requires_grad for t in tensors)
        ctx = cls._backward_cls(tuple(gradient_edge(t) for t in tensors) if recording else ())
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        with no_grad():
            if separate:
                raw = cls.forward(*args)
                cls.setup_context(ctx, args, raw)
            else:
                raw = cls.forward(ctx, *args)
        single = not isinstance(raw, tuple)
        raw = (raw,) if single else raw
        outputs = _wrap_outputs(ctx, raw, args, recording)
        if recording:
            ctx._input_metadata = tuple(_shape_dtype(a) for a in args)
            ctx._output_metadata = tuple(_shape_dtype(o) for o in outputs)
            non_differentiable = ctx._non_differentiable
            ctx._non_differentiable_outputs = tuple(
                i for i, o in enumerate(raw) if any(o is n for n in non_differentiable)
            )
            ctx._saved = {"saved_tensors": _saved(ctx, args, raw, outputs, separate)}
            made = [o for o in outputs if isinstance(o, Tensor) and o._grad_fn is ctx]
            if made:
                announce(ctx, made[0])
        # a saved output or a dirty input held here would keep its own node alive (a cycle)
        ctx._to_save = ctx._dirty = ()
        return outputs[0] if single else outputs


_MISSING = object()


def _keywords_as_positions(forward, args, kwargs, first):
    """Keyword arguments put at their place among forward's parameters, as PyTorch's apply does."""
    if not kwargs:
        return args
    code = getattr(forward, "__code__", None)
    names = code.co_varnames[first : code.co_argcount] if code is not None else ()
    slots = [*args, *[_MISSING] * (len(names) - len(args))]
    used = len(args)
    for name, value in kwargs.items():
        if name not in names:
            raise TypeError(f"forward() got an unexpected keyword argument '{name}'")
        i = names.index(name)
        if i < len(args):
            raise TypeError(f"forward() got multiple values for argument '{name}'")
        slots[i], used = value, max(used, i + 1)
    for i, value in enumerate(slots[:used]):
        if value is _MISSING:
            raise TypeError(f"forward() missing required argument: '{names[i]}' (position {i})")
    return tuple(slots[:used])


def _wrap_outputs(ctx, raw, args, recording):
    """Forward's outputs, connected to ctx: inputs returned as they are become aliases, dirty
    inputs get ctx as their grad_fn, non-differentiable outputs are cut from the graph."""
    dirty = ctx._dirty
    if any(not any(d is o for o in raw) for d in dirty):
        raise RuntimeError(
            "Some elements marked as dirty during the forward method were not returned as "
            "output. The inputs that are modified inplace must all be outputs of the Function."
        )
    outputs = []
    for output_nr, out in enumerate(raw):
        if isinstance(out, Tensor):
            out = _wrap_output(ctx, out, output_nr, args, recording, raw)
            if out._view_base is not None:  # its history, ctx, is up to date with its base
                out._base_version_at_view = out._view_base._version_counter[0]
                if out._view_made_in_no_grad is True:  # made inside forward
                    out._view_made_in_no_grad = "custom_function"
        outputs.append(out)
    for d in dirty:
        d._bump_version()
    return tuple(outputs)


def _wrap_output(ctx, out, output_nr, args, recording, ctx_outputs):
    is_input = any(out is a for a in args)
    is_dirty = any(out is d for d in ctx._dirty)
    differentiable = (
        recording
        and out._data.dtype.kind == "f"
        and not any(out is n for n in ctx._non_differentiable)
    )
    if not differentiable:
        if is_input and (out.requires_grad or not is_dirty):
            return out.detach()  # an alias: same memory and version counter, no grad
        if out.requires_grad and out._view_base is None:  # a view stays one, as made in no_grad
            out.detach_()
        return out
    if is_dirty:
        owner = out._view_base
        if owner is not None and out.requires_grad and out._view_made_in_no_grad == "multi_output":
            raise view_error(out, "is being modified inplace", MULTI_OUTPUT_VIEW)  # checked first
        if out._grad_fn is None and out.requires_grad:  # the slot: the history before forward
            raise RuntimeError(
                "a leaf Variable that requires grad has been used in an in-place operation."
            )
        if out.requires_grad and owner is not None and owner.requires_grad:
            if owner.grad_fn is None:  # PyTorch's check_inplace, before any history is made
                raise RuntimeError(VIEW_OF_LEAF_IN_PLACE)
        if not is_input and owner is not None:  # PyTorch refuses a view, and warns otherwise
            raise RuntimeError(DIRTY_NOT_AN_INPUT)
        if not is_input:
            warnings.warn(DIRTY_NOT_AN_INPUT, stacklevel=4)
        elif owner is not None:  # the change is the base's too: CopySlices(base's history, ctx)
            if len(ctx_outputs) > 1:
                raise RuntimeError(DIRTY_VIEW_WITH_OUTPUTS)
            rebase_history(out, ctx)
            return out
    elif is_input:
        out = out.detach()  # returned as it is: the output is an alias, the input stays as it was
    out.grad_fn, out._requires_grad, out._output_nr = ctx, True, output_nr
    return out


def _saved(ctx, args, raw, outputs, separate):
    """SavedTensors for what forward or setup_context gave to ctx.save_for_backward."""
    saved = []
    for i, t in enumerate(ctx._to_save):
        if t is None:
            saved.append(None)
            continue
        if not isinstance(t, Tensor):
            raise TypeError(
                f"save_for_backward can only save variables, but argument {i} is of type "
                f"{type(t).__name__}"
            )
        returned_as_is = any(t is a for a in args) and any(t is o for o in raw)
        if separate and returned_as_is and not any(t is d for d in ctx._dirty):
            raise RuntimeError(
                "An input that has been returned as-is as output is being saved for backward. "
                "This is not supported if you override setup_context. You should return and "
                "save a view of the input instead, e.g. with x.view_as(x) or setup ctx inside "
                "the forward function itself."
            )
        # an output of ctx, a dirty view too (its grad_fn is its base's), as in PyTorch
        is_output = t.grad_fn is ctx or any(t is d for d in ctx._dirty)
        saved.append(SavedTensor(t, is_output=is_output))
    return tuple(saved)


def _saved_none():
    """A SavedTensor for a None given to save_for_backward: it holds nothing, takes no hooks."""
    saved = object.__new__(SavedTensor)
    saved._value = saved._unpack = saved._graph = saved._output_type = saved.freed_by = None
    return saved


def _shape_dtype(x):
    return (x._data.shape, x._data.dtype) if isinstance(x, Tensor) else None


class InplaceFunction(Function):
    """Kept for old code, as in PyTorch: a Function with an `inplace` flag. Use Function."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class Error(Node):
    """The node `once_differentiable` puts on what a backward returns: running it raises."""

    __slots__ = ("_number",)
    runs_without_gradients = True

    def __init__(self, next_functions):
        super().__init__(next_functions)
        self._number = self._sequence_nr_  # for repr (in PyTorch, the DelayedError maker takes it)
        self._sequence_nr_ = UINT64_MAX  # as PyTorch's Error node: it runs as soon as it is ready

    def name(self):
        """PyTorch prints the C++ name for this node."""
        return "torch::autograd::Error"

    def __repr__(self):
        return f"<Error object #{self._number}>"

    def apply(self, *grads):
        """Differentiating a once-differentiable backward is an error."""
        raise RuntimeError(
            "trying to differentiate twice a function that was marked with @once_differentiable"
        )


def once_differentiable(backward):
    """Decorate a backward that is not differentiable itself (it may use numpy inside)."""

    @functools.wraps(backward)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = backward(ctx, *args)
        if not is_grad_enabled() or not any(
            isinstance(a, Tensor) and a.requires_grad for a in args
        ):
            return outputs
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        # As in PyTorch: each gradient becomes an output of an Error node, whose inputs are new
        # leaves, so a backward through these gradients reaches the node and raises.
        leaves = [None if g is None else Tensor._make(g._data, True) for g in outputs]
        node = Error(tuple((None, 0) if x is None else gradient_edge(x) for x in leaves))
        wrapped = tuple(
            None if g is None else Tensor._make(g._data, True, node, i)
            for i, g in enumerate(outputs)
        )
        made = [w for w in wrapped if w is not None]
        if made:
            announce(node, made[0])
        return wrapped[0] if len(wrapped) == 1 else wrapped

    return wrapper
