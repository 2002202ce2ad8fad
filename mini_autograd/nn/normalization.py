"""Normalisation layers, each one node as in PyTorch: BatchNorm1d/2d (NativeBatchNormBackward0:
batch statistics while training, running ones in eval) and LayerNorm (NativeLayerNormBackward0)."""

import math
import warnings

import numpy as np

from ..core import dtypes
from ..core.grad_mode import is_grad_enabled, no_grad
from ..core.node import Node
from ..core.tensor import Tensor
from ..core.tensor_data import Size
from ..ops.recording import record
from . import init
from .module import Module
from .parameter import Parameter


def _statistics(x, dims, eps):
    """mean and 1 / sqrt(var + eps) of x over dims, recorded: under create_graph the second
    derivatives must see that both depend on x (the saved values are constants)."""
    mean = x.mean(dims, keepdim=True)
    return mean, (((x - mean) ** 2).mean(dims, keepdim=True) + eps) ** -0.5


def _normalize(g, xhat, invstd, weight, dims, count):
    """d input of y = xhat * weight + bias, xhat = (x - mean) * invstd with mean and invstd
    computed from x over dims: invstd * (gw - mean(gw) - xhat * mean(gw * xhat)), gw = g * weight."""
    gw = g if weight is None else g * weight
    mean_gw = gw.sum(dims, keepdim=True) / count
    mean_gw_xhat = (gw * xhat).sum(dims, keepdim=True) / count
    return invstd * (gw - mean_gw - xhat * mean_gw_xhat)


class NativeBatchNormBackward0(Node):
    """y = (x - mean) * invstd * weight + bias, per channel (dim 1). Training: the batch's mean
    and invstd (saved as result1, result2), so d x has the terms _normalize gives; eval: the
    running statistics, constants, so d x = g * weight * invstd."""

    __slots__ = ()

    def apply(self, g):
        x, weight = self.saved("input"), self.saved("weight")
        dims, shape = self.args
        if self._saved["training"] and is_grad_enabled():
            mean, invstd = _statistics(x, dims, self._saved["eps"])
        elif self._saved["training"]:
            mean, invstd = self.saved("result1"), self.saved("result2")
        else:
            running_var = self.saved("running_var")
            mean = self.saved("running_mean")
            invstd = (running_var + self._saved["eps"]) ** -0.5
        mean, invstd = mean.reshape(shape), invstd.reshape(shape)
        xhat = (x - mean) * invstd
        grad_input = None
        if self.needs_input_grad(0):
            if self._saved["training"]:
                count = x._data.size // x._data.shape[1]
                grad_input = _normalize(g, xhat, invstd, _channel(weight, shape), dims, count)
            else:
                grad_input = g * invstd if weight is None else g * _channel(weight, shape) * invstd
        grad_weight = (g * xhat).sum(dims) if self.needs_input_grad(1) else None
        grad_bias = g.sum(dims) if self.needs_input_grad(2) else None
        return grad_input, grad_weight, grad_bias


def _channel(weight, shape):
    return None if weight is None else weight.reshape(shape)


def batch_norm(
    input,
    running_mean,
    running_var,
    weight=None,
    bias=None,
    training=False,
    momentum=0.1,
    eps=1e-05,
):
    """(x - mean) / sqrt(var + eps) * weight + bias per channel; training uses the batch's mean
    and biased var and moves the running ones: running = (1 - momentum) * running + momentum * batch
    (with the unbiased var)."""
    x = input._data
    dims = (0, *range(2, x.ndim))
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    if training:
        count = x.size // x.shape[1]
        if count == 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size {Size(x.shape)}"
            )
        mean = x.mean(axis=dims)
        var = x.var(axis=dims)
        invstd = 1 / np.sqrt(var + eps)
        if running_mean is not None:
            _move(running_mean, mean, momentum)
            _move(running_var, var * count / (count - 1), momentum)
    else:
        mean, invstd = running_mean._data, 1 / np.sqrt(running_var._data + eps)
    out = (x - mean.reshape(shape)) * invstd.reshape(shape)
    if weight is not None:
        out = out * weight._data.reshape(shape)
    if bias is not None:
        out = out + bias._data.reshape(shape)
    out = out.astype(x.dtype, copy=False)
    empty = np.zeros(0, x.dtype)
    saved = {
        "input": input,
        "weight": weight,
        "running_mean": running_mean,
        "running_var": running_var,
        "result1": Tensor._make(mean.astype(x.dtype) if training else empty),
        "result2": Tensor._make(invstd.astype(x.dtype) if training else empty),
        "eps": eps,
        "training": training,
    }
    return record(NativeBatchNormBackward0, out, (input, weight, bias), saved, args=(dims, shape))


def _move(running, batch_value, momentum):
    """running = (1 - momentum) * running + momentum * batch_value, in place; inside the kernel,
    as PyTorch's, so its version does not change."""
    running._data[...] = (1 - momentum) * running._data + momentum * batch_value


class _BatchNorm(Module):
    """Normalise each channel by the batch's statistics while training, running ones in eval."""

    dims = ()

    def __init__(
        self,
        num_features,
        eps=1e-05,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        device=None,
        dtype=None,
        *,
        bias=True,
    ):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        np_dtype = dtypes.default_float() if dtype is None else dtypes.to_numpy(dtype)
        self.weight = Parameter(np.empty(num_features, np_dtype)) if affine else None
        self.bias = Parameter(np.empty(num_features, np_dtype)) if affine and bias else None
        if track_running_stats:
            self.register_buffer("running_mean", Tensor._make(np.empty(num_features, np_dtype)))
            self.register_buffer("running_var", Tensor._make(np.empty(num_features, np_dtype)))
            self.register_buffer("num_batches_tracked", Tensor._make(np.array(0, np.int64)))
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None
        self.reset_parameters()

    def reset_running_stats(self):
        """running_mean = 0, running_var = 1, num_batches_tracked = 0, in place."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        """The running statistics reset, weight = 1 and bias = 0, all in place (as PyTorch fills
        them, so each has version 1 after __init__)."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        """batch_norm with this layer's parameters and running statistics."""
        if input.dim() not in self.dims:
            expected = " or ".join(f"{d}D" for d in self.dims)
            raise ValueError(f"expected {expected} input (got {input.dim()}D input)")
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a cumulative average
                momentum = 1.0 / float(self.num_batches_tracked.item())
        use_batch = self.training or self.running_mean is None
        tracked = not self.training or self.track_running_stats
        return batch_norm(
            input,
            self.running_mean if tracked else None,
            self.running_var if tracked else None,
            self.weight,
            self.bias,
            use_batch,
            momentum,
            self.eps,
        )

    def extra_repr(self):
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
            f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) inputs, per channel C."""

    dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) inputs, per channel C."""

    dims = (4,)


def instance_norm(
    input,
    running_mean=None,
    running_var=None,
    weight=None,
    bias=None,
    use_input_stats=True,
    momentum=0.1,
    eps=1e-05,
):
    """(x - mean) / sqrt(var + eps) * weight + bias, the statistics of each channel of each
    sample: as PyTorch computes it, batch_norm of input viewed as one sample of N * C channels,
    viewed back; running statistics (one per channel) move by their mean over the samples."""
    shape = input.shape
    if use_input_stats and math.prod(shape[2:]) == 1:
        raise ValueError(
            "Expected more than 1 spatial element when training, got input size "
            f"torch.Size({list(shape)})"
        )
    b, c = shape[0], shape[1]
    weight_, bias_, mean_, var_ = (
        None if t is None else t.repeat(b) for t in (weight, bias, running_mean, running_var)
    )
    reshaped = input.contiguous().view(1, b * c, *shape[2:])
    out = batch_norm(reshaped, mean_, var_, weight_, bias_, use_input_stats, momentum, eps)
    with no_grad():
        for running, moved in ((running_mean, mean_), (running_var, var_)):
            if running is not None:
                running.copy_(moved.view(b, c).mean(0))
    return out.view(shape)


class _InstanceNorm(_BatchNorm):
    """Normalise each channel of each sample by its own statistics (no affine, no running
    statistics by default)."""

    def __init__(
        self,
        num_features,
        eps=1e-05,
        momentum=0.1,
        affine=False,
        track_running_stats=False,
        device=None,
        dtype=None,
    ):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def forward(self, input):
        """instance_norm with this layer's parameters (and running statistics, if tracked)."""
        if input.dim() not in self.dims:
            expected = " or ".join(f"{d}D" for d in self.dims)
            raise ValueError(f"expected {expected} input (got {input.dim()}D input)")
        feature_dim = input.dim() - (self.dims[0])
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features "
                    f"({self.num_features}), but got: {input.size(feature_dim)}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You can silence "
                "this warning by not passing in num_features, which is not used because "
                "affine=False",
                stacklevel=3,
            )
        if input.dim() == self.dims[0]:  # one sample, without its batch dim
            return self._instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._instance_norm(input)

    def _instance_norm(self, input):
        momentum = self.momentum if self.momentum is not None else 0.0
        use_input_stats = self.training or not self.track_running_stats
        running = (self.running_mean, self.running_var)
        return instance_norm(
            input, *running, self.weight, self.bias, use_input_stats, momentum, self.eps
        )


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) inputs, or one (C, L) sample."""

    dims = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) inputs, or one (C, H, W) sample."""

    dims = (3, 4)


class NativeLayerNormBackward0(Node):
    """y = (x - mean) * rstd * weight + bias over the last dims; the batch statistics are saved
    as result1 (mean) and result2 (rstd)."""

    __slots__ = ()

    def apply(self, g):
        x, weight = self.saved("input"), self.saved("weight")
        normalized = len(self._saved["normalized_shape"])
        dims = tuple(range(x.ndim - normalized, x.ndim))
        if is_grad_enabled():
            mean, rstd = _statistics(x, dims, self.args)
        else:
            mean, rstd = self.saved("result1"), self.saved("result2")
        xhat = (x - mean) * rstd
        grad_input = None
        if self.needs_input_grad(0):
            count = int(np.prod(self._saved["normalized_shape"]))
            grad_input = _normalize(g, xhat, rstd, weight, dims, count)
        batch = tuple(range(x.ndim - normalized))
        grad_weight = (g * xhat).sum(batch) if self.needs_input_grad(1) else None
        grad_bias = g.sum(batch) if self.needs_input_grad(2) else None
        return grad_input, grad_weight, grad_bias


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """(x - mean) / sqrt(var + eps) * weight + bias, the statistics over the last dims."""
    normalized_shape = tuple(normalized_shape)
    x = input._data
    if x.shape[x.ndim - len(normalized_shape) :] != normalized_shape:
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(map(str, normalized_shape))}], but got input of size{list(x.shape)}"
        )
    dims = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    mean = x.mean(axis=dims, keepdims=True)
    rstd = 1 / np.sqrt(x.var(axis=dims, keepdims=True) + eps)
    out = (x - mean) * rstd
    if weight is not None:
        out = out * weight._data
    if bias is not None:
        out = out + bias._data
    out = out.astype(x.dtype, copy=False)
    saved = {
        "input": input,
        "normalized_shape": normalized_shape,
        "weight": weight,
        "bias": bias,
        "result1": Tensor._make(mean.astype(x.dtype)),
        "result2": Tensor._make(rstd.astype(x.dtype)),
    }
    return record(NativeLayerNormBackward0, out, (input, weight, bias), saved, args=eps)


class LayerNorm(Module):
    """Normalise over the last dims (normalized_shape), with an elementwise weight and bias."""

    def __init__(
        self,
        normalized_shape,
        eps=1e-05,
        elementwise_affine=True,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape, self.eps = tuple(normalized_shape), eps
        self.elementwise_affine = elementwise_affine
        self.weight = self.bias = None
        if elementwise_affine:
            self.weight = init._empty_parameter(self.normalized_shape, dtype, device)
            if bias:
                self.bias = init._empty_parameter(self.normalized_shape, dtype, device)
        self.reset_parameters()

    def reset_parameters(self):
        """weight = 1 and bias = 0, in place (version 1 after __init__, as in PyTorch)."""
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        """layer_norm with this layer's weight and bias."""
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
            f"bias={self.bias is not None}"
        )
