"""Weight initialisation, as in torch.nn.init: each function fills a tensor in place, under no_grad,
and returns it; the random ones draw from the default generator, as torch's do."""

import math
import warnings

import numpy as np

from ..core import dtypes
from ..core.device import check as check_device
from ..core.grad_mode import no_grad
from ..core.tensor import Tensor
from ..random import default_generator
from .parameter import Parameter


def _fill(tensor, array):
    """Write `array` into tensor's memory without recording it; returns tensor."""
    with no_grad():
        tensor.copy_(Tensor._make(array))
    return tensor


def _empty_parameter(shape, dtype=None, device=None):
    """A new Parameter of `shape`, in dtype (the default float if None), for an init function
    to fill: as in PyTorch, a layer's parameters are filled in place, so their version is 1."""
    check_device(device)
    np_dtype = dtypes.default_float() if dtype is None else dtypes.to_numpy(dtype)
    return Parameter(np.empty(shape, np_dtype))


def _uniform_parameter(shape, bound, dtype=None, device=None):
    """A new Parameter filled in place from U(-bound, bound): what a layer's reset_parameters
    draws."""
    return uniform_(_empty_parameter(shape, dtype, device), -bound, bound)


def uniform_(tensor, a=0.0, b=1.0):
    """Fill with samples from U(a, b)."""
    dtype = tensor._data.dtype  # first: an uninitialized parameter refuses it, as in torch
    return _fill(tensor, default_generator.uniform(tensor.shape, a, b, dtype))


def normal_(tensor, mean=0.0, std=1.0):
    """Fill with samples from N(mean, std**2)."""
    dtype = tensor._data.dtype  # first: an uninitialized parameter refuses it, as in torch
    return _fill(tensor, default_generator.normal(tensor.shape, mean, std, dtype))


def constant_(tensor, val):
    """Fill with val."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    """Fill with 1."""
    return constant_(tensor, 1.0)


def zeros_(tensor):
    """Fill with 0."""
    with no_grad():
        return tensor.zero_()


def calculate_gain(nonlinearity, param=None):
    """The factor that keeps activations' variance steady: 1, 5/3 (tanh), sqrt(2) (relu), ..."""
    linear = ("linear", "conv1d", "conv2d", "conv3d")
    linear += ("conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
    if nonlinearity in linear or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    """(fan_in, fan_out) = (size(1), size(0)), each times the size of one kernel (dims 2...)."""
    if tensor.ndim < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0):
    """Fill with U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a)


def xavier_normal_(tensor, gain=1.0):
    """Fill with N(0, std**2), std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std)


def _kaiming_std(tensor, a, mode, nonlinearity):
    """gain / sqrt(fan), or None (with PyTorch's warning) for a tensor without elements."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    return calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    """Fill with U(-bound, bound), bound = gain * sqrt(3 / fan) (He et al., 2015)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    """Fill with N(0, std**2), std = gain / sqrt(fan)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    return tensor if std is None else normal_(tensor, 0.0, std)
