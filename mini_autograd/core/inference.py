"""Inference mode and inference tensors, as in PyTorch.

Inside `inference_mode()` nothing is recorded (as in no_grad) and every tensor made there is an
inference tensor: it counts no versions, so autograd may never save it for backward, nor see it
changed in place outside inference mode. A view made there of a normal tensor stays a normal
tensor (remembered as made in inference mode); a view of an inference tensor, made anywhere, is
an inference tensor and no view for autograd (ops/shape.py asks `_is_inference`).

Every tensor is made by `Tensor._make`: while inference mode is on, `Tensor._make` is the maker
of inference tensors below, so that the feature costs nothing outside it.
"""

from ._contextlib import context_decorator
from .grad_mode import GradMode
from .tensor import Tensor

INPLACE_OUTSIDE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details."
)
NO_VERSION = "Inference tensors do not track version counter."
REQUIRES_GRAD_OUTSIDE = (
    "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
)
_CLARIFY = (
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
    "code by moving both the view and the inplace either both inside the inference_mode block (if "
    "you don't want the inplace to be tracked) or both outside (if you want the inplace to be "
    "tracked)."
)
VIEW_IN_PLACE = (
    "A view was created in inference mode and is being modified inplace in normal mode. " + _CLARIFY
)
VIEW_CHANGED = (
    "A view was created in inference mode and its base or another view of its base has been "
    "modified inplace in normal mode. " + _CLARIFY
)


class InferenceTensor(Tensor):
    """A tensor made in inference mode (torch.is_inference): no version counter, no autograd."""

    __slots__ = ()
    _is_inference = True

    @property
    def _version(self):
        raise RuntimeError(NO_VERSION)

    def _bump_version(self):
        """Nothing to count: an inference tensor tracks no versions."""

    @Tensor.requires_grad.setter
    def requires_grad(self, value):
        _check_requires_grad(value)
        Tensor.requires_grad.fset(self, value)

    def requires_grad_(self, requires_grad=True):
        """As Tensor's; outside inference mode it may not start requiring grad."""
        _check_requires_grad(requires_grad)
        return Tensor.requires_grad_(self, requires_grad)

    def detach(self):
        """The same data, an inference tensor again."""
        return inference_tensor(self._data)

    data = property(detach, Tensor.data.fset, doc="The same data, an inference tensor again.")


def _check_requires_grad(value):
    if value and not inference_mode.active:
        raise RuntimeError(REQUIRES_GRAD_OUTSIDE)


_make = Tensor._make_plain


def _make_inference(data, requires_grad=False, grad_fn=None, output_nr=0):
    """Tensor._make while inference mode is on."""
    tensor = _make(data, requires_grad, grad_fn, output_nr)
    tensor.__class__ = InferenceTensor
    return tensor


def inference_tensor(data):
    """A new inference tensor holding `data`, whatever the mode."""
    return _make_inference(data)


_MAKERS = {False: Tensor.__dict__["_make_plain"], True: staticmethod(_make_inference)}


class inference_mode:
    """Context manager/decorator: as no_grad, and every tensor made inside is an inference tensor.

    `inference_mode(False)` switches it off inside an inference_mode block (and grad mode on).
    """

    active = False  # whether inference mode is on

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # used bare: @inference_mode, or inference_mode(mode=function)

    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        self.previous = (inference_mode.active, GradMode.enabled)
        _switch(self.mode, not self.mode)

    def __exit__(self, *exc):
        _switch(*self.previous)
        return False

    def __call__(self, fn):
        return context_decorator(self.clone, fn)

    def clone(self):
        """A copy of this context (a decorated function enters a fresh one at each call)."""
        return type(self)(self.mode)


def _switch(active, grad_enabled):
    inference_mode.active, GradMode.enabled = active, grad_enabled
    Tensor._make = _MAKERS[active]


def is_inference_mode_enabled():
    """True inside an inference_mode block."""
    return inference_mode.active


def is_inference(input):  # noqa: A002 (torch's name for the argument)
    """True when `input` is an inference tensor (made in inference mode, or a view of one)."""
    if not isinstance(input, Tensor):
        raise TypeError(
            "is_inference(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )
    return input._is_inference


def view_in_inference_mode(view, base):
    """A view made in inference mode of a normal tensor is a normal tensor, a leaf that requires
    grad as its base does (PyTorch's rule), and it remembers where it was made."""
    view.__class__ = Tensor
    view._requires_grad = base.requires_grad
    view._view_made_in_no_grad = "inference_mode"


def check_inplace(tensor):
    """PyTorch's error for an in-place change of an inference tensor outside inference mode."""
    if not inference_mode.active:
        raise RuntimeError(INPLACE_OUTSIDE)


TENSOR_METHODS = {"is_inference": is_inference}
