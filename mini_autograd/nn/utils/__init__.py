"""Utilities for training, as in torch.nn.utils: gradient clipping, the parameters as one
vector, and (in `rnn`) variable-length sequences."""

import types
import warnings

import numpy as np

from ...core import dtypes
from ...core.grad_mode import no_grad
from ...core.tensor import Tensor
from ...ops.shape import cat, stack
from . import rnn  # noqa: F401 (nn.utils.rnn, as in torch)


def _as_list(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """||(||t_1||, ..., ||t_n||)||: the p-norm of all the tensors, as if they were one vector."""
    tensors, norm_type = _as_list(tensors), float(norm_type)
    if not tensors:
        return Tensor._make(np.asarray(0.0, dtypes.default_float()))
    with no_grad():
        total = stack([t.norm(norm_type) for t in tensors]).norm(norm_type)
    if error_if_nonfinite and not np.isfinite(total._data):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
            "so it cannot be clipped. To disable this error and scale the gradients by the "
            "non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """grad *= min(max_norm / (total_norm + 1e-6), 1), in place, for every gradient."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    with no_grad():
        coefficient = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coefficient)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale all gradients in place so that their joint p-norm is at most max_norm (each is
    multiplied by min(max_norm / (total + 1e-6), 1)); returns the joint norm `total`."""
    if not isinstance(parameters, Tensor):
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn(
                "`parameters` is an empty generator, no gradient clipping will occur.",
                stacklevel=2,
            )
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient in place to [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    with no_grad():
        for g in [p.grad for p in _as_list(parameters) if p.grad is not None]:
            if foreach is False:  # one clamp_, as PyTorch's loop
                g.copy_(g.clamp(-clip_value, clip_value))
            else:  # PyTorch's default on the CPU: _foreach_clamp_min_, then _foreach_clamp_max_
                g.copy_(g.clamp_min(-clip_value))
                g.copy_(g.clamp_max(clip_value))


def parameters_to_vector(parameters):
    """All the parameters flattened and joined into one vector (recorded: cat of views)."""
    return cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Make each parameter's .data the next slice of vec (viewed with its shape)."""
    if not isinstance(vec, Tensor):
        kind = type(vec)
        name = (
            kind.__qualname__
            if kind.__module__ == "builtins"
            else f"{kind.__module__}.{kind.__qualname__}"
        )
        raise TypeError(f"expected torch.Tensor, but got: {name}")
    pointer = 0
    for param in parameters:
        count = param.numel()
        param.data = vec[pointer : pointer + count].view_as(param).data
        pointer += count
