"""Utilities for training, as in torch.nn.utils."""

import numpy as np

from ..tensor import Tensor


def clip_grad_norm_(parameters, max_norm):
    """Scale all gradients in place so their joint 2-norm is at most max_norm; return the norm."""
    grads = [
        p.grad
        for p in ([parameters] if isinstance(parameters, Tensor) else parameters)
        if p.grad is not None
    ]
    total = float(np.sqrt(sum(float((g._data.astype(np.float64) ** 2).sum()) for g in grads)))
    scale = max_norm / (total + 1e-6)
    if scale < 1:
        for g in grads:
            g._data *= scale
            g._bump_version()
    return Tensor._make(np.asarray(total, dtype=np.float32))
