"""The layers of a convolutional network, as in torch.nn: Conv1d, Conv2d, ConvTranspose1d,
ConvTranspose2d; MaxPool1d, MaxPool2d,
AvgPool1d, AvgPool2d, AdaptiveAvgPool2d; Dropout2d (and its function, dropout2d). Same
attributes, reprs and initialisation as PyTorch's, so the same seed gives the same weights."""

import math
import warnings

import numpy as np

from ..core import dtypes
from ..core.device import check as check_device
from ..core.tensor import Tensor
from ..ops import convolution, pooling
from ..random import default_generator
from . import init
from .module import Module
from .parameter import Parameter


def _ntuple(value, n):
    """An int repeated n times; a sequence as a tuple (torch.nn.modules.utils._single, _pair)."""
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


# --- convolutions ---------------------------------------------------------------------------------
class _ConvNd(Module):
    """A convolution layer: weight (out_channels, in_channels / groups, *kernel_size), bias
    (out_channels,); both drawn as PyTorch draws them (see reset_parameters)."""

    _dims = None  # the number of spatial dims, set by Conv1d and Conv2d
    _transposed = False  # ConvTranspose1d, ConvTranspose2d: weight (in, out / groups, *kernel)

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups=1,
        bias=True,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        super().__init__()
        n = self._dims
        kernel_size, stride, dilation = (_ntuple(v, n) for v in (kernel_size, stride, dilation))
        if not isinstance(padding, str):
            padding = _ntuple(padding, n)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}  # built as torch builds it: printed in its order
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}"
                )
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in {"zeros", "reflect", "replicate", "circular"}:
            raise ValueError(  # (torch prints its set in the order of its compiled file)
                "padding_mode must be one of {'zeros', 'reflect', 'replicate', 'circular'}, but "
                f"got padding_mode='{padding_mode}'"
            )
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = kernel_size, stride
        self.padding, self.dilation = padding, dilation
        self.transposed, self.output_padding = self._transposed, (0,) * n
        self.groups, self.padding_mode = groups, padding_mode
        self._reversed_padding_repeated_twice = _reversed_padding(padding, kernel_size, dilation)
        check_device(device)
        np_dtype = dtypes.default_float() if dtype is None else dtypes.to_numpy(dtype)
        shape = (out_channels, in_channels // groups, *kernel_size)
        if self._transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        self.weight = Parameter(Tensor._make(np.zeros(shape, np_dtype)))
        if bias:
            self.bias = Parameter(Tensor._make(np.zeros(out_channels, np_dtype)))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """weight from kaiming_uniform_(a=sqrt(5)), i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)), then
        bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in)); fan_in = in_channels / groups * prod(kernel_size)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        """conv(input, weight, bias) with the layer's stride, padding, dilation and groups."""
        if self.padding_mode != "zeros":
            raise NotImplementedError(
                f"mini_autograd's {type(self).__name__} pads with zeros only (padding_mode='zeros'), "
                f"not padding_mode='{self.padding_mode}'"
            )
        conv = convolution.conv1d if self._dims == 1 else convolution.conv2d
        return conv(
            input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


def _reversed_padding(padding, kernel_size, dilation):
    """The padding in F.pad's order (last dim first, before and after): a tuple, or for a padding
    string a list (for 'same' the total, dilation * (kernel - 1), split with the odd one after)."""
    if not isinstance(padding, str):
        return tuple(p for p in reversed(padding) for _ in range(2))
    reversed_padding = [0, 0] * len(kernel_size)
    if padding == "same":
        for i, (d, k) in enumerate(zip(reversed(dilation), reversed(kernel_size))):
            total = d * (k - 1)
            reversed_padding[2 * i], reversed_padding[2 * i + 1] = total // 2, total - total // 2
    return reversed_padding


class Conv1d(_ConvNd):
    """out[n, o, l] = bias[o] + sum over c, k of weight[o, c, k] * input[n, c, l stride + k dilation - padding]."""

    _dims = 1


class Conv2d(_ConvNd):
    """out[n, o, i, j] = bias[o] + sum over c, k, l of weight[o, c, k, l] * input[n, c, i sh + k dh - ph, j sw + l dw - pw]."""

    _dims = 2


class _ConvTransposeNd(_ConvNd):
    """A transposed convolution layer: weight (in_channels, out_channels / groups, *kernel_size)."""

    _transposed = True

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups=1,
        bias=True,
        dilation=1,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )
        self.output_padding = _ntuple(output_padding, self._dims)

    def _output_padding(self, input, output_size):
        """output_padding, or what makes the output `output_size` (checked as PyTorch checks it)."""
        if output_size is None:
            return self.output_padding
        n = self._dims
        non_spatial = 2 if input.ndim == n + 2 else 1
        if len(output_size) == non_spatial + n:
            output_size = output_size[non_spatial:]
        if len(output_size) != n:
            raise ValueError(
                f"ConvTranspose{n}D: for {input.ndim}D input, output_size must have {n} or "
                f"{non_spatial + n} elements (got {len(output_size)})"
            )
        min_sizes = [
            (input.shape[d + non_spatial] - 1) * self.stride[d]
            - 2 * self.padding[d]
            + self.dilation[d] * (self.kernel_size[d] - 1)
            + 1
            for d in range(n)
        ]
        max_sizes = [low + s - 1 for low, s in zip(min_sizes, self.stride)]
        for size, low, high in zip(output_size, min_sizes, max_sizes):
            if size < low or size > high:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from "
                    f"{min_sizes} to {max_sizes} (for an input of {input.shape[non_spatial:]})"
                )
        return tuple(size - low for size, low in zip(output_size, min_sizes))

    def forward(self, input, output_size=None):
        """conv_transpose(input, weight, bias) with the layer's settings."""
        conv = convolution.conv_transpose1d if self._dims == 1 else convolution.conv_transpose2d
        output_padding = self._output_padding(input, output_size)
        return conv(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            output_padding,
            self.groups,
            self.dilation,
        )


class ConvTranspose1d(_ConvTransposeNd):
    """out[n, o, i stride + k dilation - padding] += weight[c, o, k] * input[n, c, i], + bias[o]."""

    _dims = 1


class ConvTranspose2d(_ConvTransposeNd):
    """out[n, o, i sh + k dh - ph, j sw + l dw - pw] += weight[c, o, k, l] * input[n, c, i, j], + bias[o]."""

    _dims = 2


# --- pooling --------------------------------------------------------------------------------------
class _MaxPoolNd(Module):
    """Max pooling: the settings as given (stride defaults to kernel_size)."""

    def __init__(
        self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False
    ):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def extra_repr(self):
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )

    def forward(self, input):
        """max_pool1d or max_pool2d of input, with the layer's settings."""
        return self._pool(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )


class MaxPool1d(_MaxPoolNd):
    """out[n, c, i] = max over k of input[n, c, i stride + k dilation - padding]."""

    _pool = staticmethod(pooling.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """out[n, c, i, j] = max over k, l of input[n, c, i sh + k dh - ph, j sw + l dw - pw]."""

    _pool = staticmethod(pooling.max_pool2d)


class _AvgPoolNd(Module):
    """Average pooling."""

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """out[n, c, i] = mean over k of input[n, c, i stride + k - padding]."""

    def __init__(
        self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True
    ):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, 1)
        self.stride = _ntuple(stride if stride is not None else kernel_size, 1)
        self.padding = _ntuple(padding, 1)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        """avg_pool1d(input) with the layer's settings."""
        return pooling.avg_pool1d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
        )


class AvgPool2d(_AvgPoolNd):
    """out[n, c, i, j] = sum over k, l of input[n, c, i sh + k - ph, j sw + l - pw] / divisor."""

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode=False,
        count_include_pad=True,
        divisor_override=None,
    ):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        """avg_pool2d(input) with the layer's settings."""
        return pooling.avg_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )


class _AdaptiveAvgPoolNd(Module):
    """Adaptive average pooling to a fixed output size."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """out[n, c, i, j] = mean of input[n, c] over window (i, j) of an even split into output_size."""

    def forward(self, input):
        """adaptive_avg_pool2d(input, output_size)."""
        return pooling.adaptive_avg_pool2d(input, self.output_size)


# --- channel dropout ------------------------------------------------------------------------------
def dropout2d(input, p=0.5, training=True, inplace=False):
    """input * mask / (1 - p), one mask value per channel (shape (N, C, 1, 1)), 1 with
    probability 1 - p (in training; else input itself)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2,
        )
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    if p == 0 or not training or input.numel() == 0:
        return input
    dtype = input._data.dtype
    if p == 1:
        noise = Tensor._make(np.zeros((), dtype))
    else:  # as PyTorch's feature_dropout: a Bernoulli(1 - p) mask per channel, divided by 1 - p
        if input.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = (*input.shape[:2], *[1] * (input.ndim - 2))
        keep = default_generator.bernoulli(shape, 1 - p, dtype)
        noise = Tensor._make(keep / dtype.type(1 - p))
    return input.mul_(noise) if inplace else input * noise
