"""Normalisation layers, each one node as in PyTorch: BatchNorm1d/2d (NativeBatchNormBackward0:
batch statistics while training, running ones in eval), InstanceNorm1d/2d (a batch norm of each
sample's channels, between two views, as PyTorch computes it) and LayerNorm
(NativeLayerNormBackward0)."""

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
    """(x - mean) / sqrt(var + eps) * weight + bias, the statistics of each sample's channel over
    its spatial dims: batch_norm of the input viewed as (1, N * C, *spatial), the weight, bias and
    running statistics repeated N times; the running ones get the mean over the samples."""
    if use_input_stats and np.prod(input.shape[2:]) == 1:
        raise ValueError(
            f"Expected more than 1 spatial element when training, got input size {Size(input.shape)}"
        )
    n, c = input.shape[:2]
    running = [
        None if r is None else Tensor._make(np.tile(r._data, n))
        for r in (running_mean, running_var)
    ]
    weight, bias = (None if t is None else t.repeat(n) for t in (weight, bias))
    reshaped = input.contiguous().view(1, n * c, *input.shape[2:])
    out = batch_norm(reshaped, *running, weight, bias, use_input_stats, momentum, eps)
    for r, moved in zip((running_mean, running_var), running):
        if r is not None:
            r._data[...] = moved._data.reshape(n, c).mean(0)
    return out.view(input.shape)


class _NormBase(Module):
    """The parameters (weight = 1, bias = 0) and running statistics of a normalisation layer."""

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
        # as PyTorch: an absent parameter or buffer is registered as None (not in __dict__)
        self.register_parameter(
            "weight", Parameter(np.empty(num_features, np_dtype)) if affine else None
        )
        self.register_parameter(
            "bias", Parameter(np.empty(num_features, np_dtype)) if affine and bias else None
        )
        tracked = track_running_stats
        for name in ("running_mean", "running_var"):
            self.register_buffer(
                name, Tensor._make(np.empty(num_features, np_dtype)) if tracked else None
            )
        count = Tensor._make(np.array(0, np.int64)) if tracked else None
        self.register_buffer("num_batches_tracked", count)
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

    def extra_repr(self):
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
            f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}"
        )


class _BatchNorm(_NormBase):
    """Normalise each channel by the batch's statistics while training, running ones in eval."""

    dims = ()

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


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) inputs, per channel C."""

    dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) inputs, per channel C."""

    dims = (4,)


class _InstanceNorm(_NormBase):
    """Normalise each sample's channel by its own statistics (running ones in eval, if tracked)."""

    no_batch_dim = None  # the dims of an unbatched input

    def __init__(
        self,
        num_features,
        eps=1e-05,
        momentum=0.1,
        affine=False,
        track_running_stats=False,
        device=None,
        dtype=None,
        *,
        bias=True,
    ):
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )

    def forward(self, input):
        """instance_norm with this layer's parameters (an unbatched input gets a batch dim)."""
        n = self.no_batch_dim
        if input.dim() not in (n, n + 1):
            raise ValueError(f"expected {n}D or {n + 1}D input (got {input.dim()}D input)")
        feature_dim = input.dim() - n
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features"
                    f" ({self.num_features}), but got: {input.size(feature_dim)}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You can silence "
                "this warning by not passing in num_features, which is not used because "
                "affine=False",
                stacklevel=2,
            )
        batched = input.dim() == n + 1
        out = instance_norm(
            input if batched else input.unsqueeze(0),
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0,
            self.eps,
        )
        return out if batched else out.squeeze(0)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) or (C, L) inputs, per sample and channel."""

    no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) or (C, H, W) inputs, per sample and channel."""

    no_batch_dim = 3


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
