"""Functions that layers and losses are made of: linear, mse_loss, cross_entropy, nll_loss."""

import numpy as np

from ..node import Node
from ..ops import linalg
from ..ops.recording import record, save, wants_grad
from ..ops.softmax import log_softmax, softmax  # noqa: F401 (F.softmax, as in torch)
from ..tensor import Tensor

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def linear(input, weight, bias=None):
    """input @ weight.T + bias, recorded as PyTorch records it (AddmmBackward0 over TBackward0)."""
    if input.ndim == 2:
        if bias is None:
            return linalg.mm(input, weight.t())
        return linalg.addmm(bias, input, weight.t())
    flat = input.reshape(-1, input.shape[-1])
    out = linear(flat, weight, bias)
    return out.view(*input.shape[:-1], weight.shape[0])


def _reduction(name):
    if name not in _REDUCTIONS:
        raise ValueError(f"{name} is not a valid value for reduction")
    return _REDUCTIONS[name]


class MseLossBackward0(Node):
    """out = mean((self - target)**2):  d self = g * 2 * (self - target) / N,  d target = -d self."""

    __slots__ = ()

    def apply(self, g):
        diff = self.saved("self") - self.saved("target")
        scale = 2.0 / diff._data.size if self._saved["reduction"] == 1 else 2.0
        grad = g * diff * scale
        return (
            grad if self.needs_input_grad(0) else None,
            -grad if self.needs_input_grad(1) else None,
        )


def mse_loss(input, target, reduction="mean"):
    """Mean (or sum, or none) of the squared differences."""
    if input.shape != target.shape:
        raise ValueError(
            f"mse_loss: input shape {tuple(input.shape)} and target shape {tuple(target.shape)} "
            "differ; mini_autograd does not broadcast losses (PyTorch warns and broadcasts)"
        )
    code = _reduction(reduction)
    squared = (input._data - target._data) ** 2
    data = squared if code == 0 else np.asarray(squared.mean() if code == 1 else squared.sum())
    if not wants_grad(input, target):
        return Tensor._make(data)
    saved = {"reduction": code, "self": save(input), "target": save(target)}
    return record(MseLossBackward0, data, (input, target), saved)


class NllLossBackward0(Node):
    """out = -mean(self[i, target[i]]):  d self = -g / total_weight at each (i, target[i]), 0 elsewhere."""

    __slots__ = ()

    def apply(self, g):
        log_probs, target = self.saved("self"), self.saved("target")._data
        picked = np.zeros(log_probs.shape, dtype=log_probs._data.dtype)
        rows = np.arange(target.shape[0])
        keep = target != self._saved["ignore_index"]
        picked[rows[keep], target[keep]] = -1.0
        if self._saved["reduction"] == 1:
            picked /= self.saved("total_weight")._data
        if self._saved["reduction"] == 0:
            g = g.unsqueeze(1)
        return (g * Tensor._make(picked),)


def nll_loss(input, target, reduction="mean", ignore_index=-100):
    """Negative log-likelihood of the target classes, given log-probabilities (N, C)."""
    code = _reduction(reduction)
    if input.ndim != 2 or target.ndim != 1 or target.shape[0] != input.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
            f"({target.shape[0] if target.ndim else 0}); input must be (N, C) and target (N,)"
        )
    labels = target._data
    if labels.dtype.kind not in "iu":
        raise RuntimeError(f"expected scalar type Long but found {target.dtype.name.capitalize()}")
    keep = labels != ignore_index
    if np.any((labels[keep] < 0) | (labels[keep] >= input.shape[1])):
        raise IndexError(f"Target {labels[keep].max()} is out of bounds.")
    picked = np.where(keep, -input._data[np.arange(labels.shape[0]), np.where(keep, labels, 0)], 0)
    total_weight = np.asarray(keep.sum(), dtype=input._data.dtype)
    if code == 0:
        data = picked.astype(input._data.dtype)
    elif code == 1:
        data = np.asarray(picked.sum() / total_weight, dtype=input._data.dtype)
    else:
        data = np.asarray(picked.sum(), dtype=input._data.dtype)
    if not wants_grad(input):
        return Tensor._make(data)
    saved = {
        "ignore_index": ignore_index,
        "reduction": code,
        "self": save(input),
        "target": save(target),
        "total_weight": save(Tensor._make(total_weight)),
        "weight": None,
    }
    return record(NllLossBackward0, data, (input,), saved)


def cross_entropy(input, target, reduction="mean", ignore_index=-100):
    """nll_loss(log_softmax(input, 1), target): the classification loss on raw scores (N, C)."""
    return nll_loss(log_softmax(input, 1), target, reduction, ignore_index)
