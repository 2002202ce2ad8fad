"""Lazy modules, as in torch.nn: LazyLinear, LazyConv1d/2d, LazyBatchNorm1d/2d take their input
size from their first input. Until then their parameters are UninitializedParameters (and their
buffers UninitializedBuffers), which hold no values; the first call materializes them, draws them
as the non-lazy layer draws its own (so the same seed gives PyTorch's weights), and turns the
module into that layer (`cls_to_become`). PyTorch's torch/nn/modules/lazy.py and parameter.py."""

import sys
from collections import OrderedDict

import numpy as np

from ..core import dtypes
from ..core.device import check as check_device
from ..core.grad_mode import no_grad
from ..core.tensor import Tensor
from .conv import Conv1d, Conv2d
from .layers import Linear
from .normalization import BatchNorm1d, BatchNorm2d, _BatchNorm
from .parameter import Parameter

_SLOT = Tensor._data  # the slot that holds a tensor's array, under the property below

_SHAPE_ERROR = (
    "Can't access the shape of an uninitialized parameter or buffer. This error usually happens "
    "in `load_state_dict` when trying to load an uninitialized parameter into an initialized one. "
    "Call `forward` to initialize the parameters before accessing their attributes."
)


# --- parameters and buffers without values ---------------------------------------------------------
class UninitializedTensorMixin:
    """What UninitializedParameter and UninitializedBuffer share: no values until materialize()."""

    __slots__ = ()
    cls_to_become = None

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        check_device(device)
        np_dtype = dtypes.default_float() if dtype is None else dtypes.to_numpy(dtype)
        tensor = Tensor._make_plain(np.empty(0, np_dtype), requires_grad=requires_grad)
        tensor.__class__ = cls
        return tensor

    def __init__(self, *args, **kwargs):
        pass  # made by __new__

    @property
    def _data(self):
        """Refused, as PyTorch refuses every operation on it but a few (below)."""
        raise ValueError(
            f"Attempted to use an uninitialized parameter in <function "
            f"{sys._getframe(1).f_code.co_qualname}>. This error happens when you are using a "
            "`LazyModule` or explicitly manipulating "
            f"`torch.nn.parameter.{type(self).__name__}` objects. When using LazyModules Call "
            "`forward` with a dummy batch to initialize the parameters before calling torch functions"
        )

    @_data.setter
    def _data(self, array):
        _SLOT.__set__(self, array)

    def _empty(self):
        """The empty tensor it stands on (its dtype)."""
        return Tensor._make_plain(_SLOT.__get__(self))

    data = property(_empty, Tensor.data.fset, doc="An empty tensor of its dtype.")
    dtype = property(lambda self: self._empty().dtype, doc="The dtype it will have.")

    def size(self, dim=None):
        """torch.Size([0]), as PyTorch's."""
        return self._empty().size(dim)

    def is_floating_point(self):
        """True for a float dtype."""
        return self._empty().is_floating_point()

    def to(self, *args, **kwargs):
        """An empty tensor in the dtype asked for (what Module.to stores in its .data)."""
        return self._empty().to(*args, **kwargs)

    def cpu(self):
        """self."""
        return self

    @property
    def shape(self):
        """Refused: it has none yet."""
        raise RuntimeError(_SHAPE_ERROR)

    def share_memory_(self):
        """Refused, as in PyTorch."""
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`."
        )

    def materialize(self, shape, device=None, dtype=None):
        """Give it `shape` (empty values, its dtype unless `dtype`) and make it cls_to_become."""
        check_device(device)
        np_dtype = _SLOT.__get__(self).dtype if dtype is None else dtypes.to_numpy(dtype)
        _SLOT.__set__(self, np.empty(tuple(shape), np_dtype))
        self.__class__ = self.cls_to_become

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, dtype=self.dtype)
        return memo[id(self)]

    def __repr__(self):
        return f"<{type(self).__name__}>"


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape is not known yet; materialize() makes it a Parameter."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return super().__new__(cls, requires_grad, device, dtype)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet; materialize() makes it a Tensor."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        return super().__new__(cls, requires_grad, device, dtype)


def is_lazy(param):
    """Whether `param` is an UninitializedParameter or an UninitializedBuffer."""
    return isinstance(param, UninitializedTensorMixin)


# --- the modules ----------------------------------------------------------------------------------
class LazyModuleMixin:
    """A module whose parameters take their shapes from its first input (initialize_parameters)."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(
            self._infer_parameters, with_kwargs=True
        )

    def initialize_parameters(self, *args, **kwargs):
        """Materialize the parameters from the first input; each lazy module defines it."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}"
        )

    def has_uninitialized_params(self):
        """Whether a parameter or buffer of this module is still uninitialized."""
        values = (*self._parameters.values(), *self._buffers.values())
        return any(is_lazy(value) for value in values)

    def _infer_parameters(self, module, args, kwargs=None):
        """The forward pre-hook: initialize from the input, then become cls_to_become."""
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        delattr(module, "_initialize_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _lazy_load_hook(self, state_dict, prefix):
        """Before load_state_dict: materialize what the state_dict gives values for."""
        for name, value in (*self._parameters.items(), *self._buffers.items()):
            given = state_dict.get(prefix + name)
            if is_lazy(value) and given is not None and not is_lazy(given):
                with no_grad():
                    value.materialize(tuple(given.shape))

    def state_dict(self, *, prefix="", keep_vars=False):
        """As Module's, the uninitialized tensors given as they are."""
        state = super().state_dict(prefix=prefix, keep_vars=True)
        return OrderedDict(
            (k, v if keep_vars or is_lazy(v) else v.detach()) for k, v in state.items()
        )


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose in_features is taken from input.shape[-1]."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        """Linear's, once the parameters have their shapes."""
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        """in_features = input.shape[-1]; weight and bias materialized and drawn."""
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(
                    f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                    f"in_features from self.weight: {self.weight.shape[-1]}"
                )
            self.in_features = input.shape[-1]


class _LazyConvXdMixin(LazyModuleMixin):
    """A convolution whose in_channels is taken from the input's channel dim."""

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):  # fmt: skip
        super().__init__(
            0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device, dtype
        )
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        """The convolution's, once the parameters have their shapes."""
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        """in_channels from the input; weight and bias materialized and drawn."""
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            per_group = self.in_channels // self.groups
            self.weight.materialize((self.out_channels, per_group, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input):
        """input.shape[1] when batched, input.shape[0] when not."""
        unbatched = self._dims + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(
                f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                f"{self.__class__.__name__}, but got input of size: {input.shape}"
            )
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]


class LazyConv1d(_LazyConvXdMixin, Conv1d):
    """A Conv1d whose in_channels is taken from input.size(1)."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConvXdMixin, Conv2d):
    """A Conv2d whose in_channels is taken from input.size(1)."""

    cls_to_become = Conv2d


class _LazyNormBase(LazyModuleMixin, _BatchNorm):
    """A batch norm whose num_features is taken from input.shape[1]."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):  # fmt: skip
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.register_buffer("running_mean", UninitializedBuffer(device=device, dtype=dtype))
            self.register_buffer("running_var", UninitializedBuffer(device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", Tensor._make(np.array(0, np.int64)))

    def reset_parameters(self):
        """The batch norm's, once the parameters have their shapes."""
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        """num_features = input.shape[1]; weight, bias and running statistics materialized."""
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase):
    """A BatchNorm1d whose num_features is taken from input.size(1)."""

    cls_to_become = BatchNorm1d
    dims = BatchNorm1d.dims


class LazyBatchNorm2d(_LazyNormBase):
    """A BatchNorm2d whose num_features is taken from input.size(1)."""

    cls_to_become = BatchNorm2d
    dims = BatchNorm2d.dims


__all__ = [
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyLinear",
    "LazyModuleMixin",
    "UninitializedBuffer",
    "UninitializedParameter",
    "UninitializedTensorMixin",
    "is_lazy",
]
