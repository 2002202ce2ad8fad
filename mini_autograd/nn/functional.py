"""Functions that layers and losses are made of, as in torch.nn.functional.

linear, dropout, embedding, softmax, log_softmax, relu, leaky_relu, tanh, sigmoid, batch_norm and
layer_norm (defined in normalization.py); the losses mse_loss, l1_loss, nll_loss, cross_entropy,
binary_cross_entropy, binary_cross_entropy_with_logits. A loss that PyTorch computes in one
kernel is one recorded node here too (MseLossBackward0, NllLossBackward0,
BinaryCrossEntropyBackward0, BinaryCrossEntropyWithLogitsBackward0); l1_loss, cross_entropy and
dropout are made of other operations, as in PyTorch.
"""

import math
import warnings

import numpy as np

from ..core.errors import SCALAR_TYPE_NAMES
from ..core.node import Node
from ..core.tensor import Tensor
from ..ops import derivatives, elementwise, linalg
from ..ops import softmax as _softmax
from ..ops.activations import (  # noqa: F401 (F.gelu..., as in torch)
    elu,
    elu_,
    gelu,
    hardtanh,
    hardtanh_,
    logsigmoid,
    mish,
    relu6,
    selu,
    selu_,
    silu,
    softplus,
)
from ..ops.backward_functions import mse_loss_backward
from ..ops.broadcasting import broadcasting
from ..ops.convolution import (  # noqa: F401 (F.conv2d..., as in torch)
    constant_pad_nd,
    conv1d,
    conv2d,
    conv_transpose1d,
    conv_transpose2d,
)
from ..ops.derivatives import sigmoid, tanh  # noqa: F401 (F.tanh..., as in torch)
from ..ops.inplace_elementwise import (  # noqa: F401 (F.relu_..., as in torch)
    leaky_relu_,
    relu_,
    threshold_,
)
from ..ops.piecewise import clamp_min
from ..ops.piecewise import minimum as elementwise_min
from ..ops.pooling import (  # noqa: F401 (F.max_pool2d..., as in torch)
    adaptive_avg_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)
from ..ops.promotion import promote_types, result_type
from ..ops.recording import record
from ..random import default_generator
from .conv import dropout2d  # noqa: F401 (F.dropout2d, next to nn.Dropout2d)
from .distance import cosine_similarity, pairwise_distance  # noqa: F401 (as in torch)
from .normalization import (  # noqa: F401 (F.batch_norm..., as in torch)
    batch_norm,
    instance_norm,
    layer_norm,
)
from .upsampling import interpolate  # noqa: F401 (F.interpolate, next to nn.Upsample)

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def linear(input, weight, bias=None):
    """input @ weight.T + bias, recorded as PyTorch records it: one addmm (AddmmBackward0 over
    TBackward0) for a 2-D or contiguous input with a bias, flattened to 2-D and back; otherwise
    a matmul, then + bias."""
    if bias is not None and (input.ndim == 2 or (input.is_contiguous() and bias.ndim == 1)):
        if input.ndim == 2:
            return linalg.addmm(bias, input, weight.t())
        flat = input.reshape(math.prod(input.shape[:-1]), input.shape[-1])
        return linalg.addmm(bias, flat, weight.t()).view(*input.shape[:-1], weight.shape[0])
    out = linalg.matmul(input, weight.t())
    return out if bias is None else out + bias


def pad(input, pad, mode="constant", value=None):
    """input with pad[2i] values before and pad[2i + 1] after its i-th last dim (negative: cut
    off), filled with `value` (0 when None); mode 'constant' only."""
    if mode != "constant":
        raise NotImplementedError(
            f"mini_autograd's pad has mode='constant' only, not mode='{mode}'"
        )
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pad)} and input of dimension {input.ndim}"
        )
    return constant_pad_nd(input, tuple(pad), 0 if value is None else value)


def relu(input, inplace=False):
    """max(input, 0); in place (input.relu_()) with inplace=True."""
    return input.relu_() if inplace else derivatives.relu(input)


def threshold(input, threshold, value, inplace=False):
    """value where input <= threshold, else input; in place (ThresholdBackward1) with
    inplace=True."""
    if inplace:
        return threshold_(input, threshold, value)
    return elementwise.threshold(input, threshold, value)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """input if input > 0 else negative_slope * input; in place (LeakyReluBackward1, which saves
    the result) with inplace=True."""
    if inplace:
        return leaky_relu_(input, negative_slope)
    return elementwise.leaky_relu(input, negative_slope)


def _softmax_dim(name, ndim):
    """The dim PyTorch picks when none is given (a deprecated legacy rule, with its warning)."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. "
        "Change the call to include dim=X as an argument.",
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(input) / sum(exp(input)) along dim."""
    d = _softmax_dim("softmax", input.ndim) if dim is None else dim
    return _softmax.softmax(input, d, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """input - log(sum(exp(input))) along dim."""
    d = _softmax_dim("log_softmax", input.ndim) if dim is None else dim
    return _softmax.log_softmax(input, d, dtype=dtype)


def dropout(input, p=0.5, training=True, inplace=False):
    """input * mask / (1 - p), mask[i] = 1 with probability 1 - p (in training; else input itself)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not training or input.numel() == 0:
        return input
    dtype = input._data.dtype
    if p == 1:
        noise = Tensor._make(np.zeros((), dtype))
    else:  # as PyTorch on the CPU: a Bernoulli(1 - p) mask divided by 1 - p, then one multiplication
        keep = default_generator.bernoulli(input.shape, 1 - p, dtype)
        noise = Tensor._make(keep / dtype.type(1 - p))
    return input.mul_(noise) if inplace else input * noise


# --- embedding --------------------------------------------------------------------------------
def torch_dropout(input, p, train):
    """torch.dropout(input, p, train): F.dropout's operation, under its top-level name."""
    return dropout(input, p, train)


def _padding_index(padding_idx, num_embeddings):
    """padding_idx as a row number (negative counts from the end), checked as PyTorch checks it."""
    if padding_idx is None:
        return None
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise AssertionError("Padding_idx must be within num_embeddings")
    return padding_idx % num_embeddings


class EmbeddingBackward0(Node):
    """out = weight[indices]:  d weight = zeros with each row of g added at its index."""

    __slots__ = ()

    def apply(self, g):
        n, padding = self._saved["weight_sym_argsize_0"], self._saved["padding_idx"]
        return (embedding_dense_backward(g, self.saved("indices"), n, padding),)


class EmbeddingDenseBackwardBackward0(Node):
    """out = zeros with g's rows added at indices:  d g = out_grad[indices] (0 at padding_idx)."""

    __slots__ = ()

    def apply(self, gg):
        indices, padding = self.saved("indices"), self._saved["padding_idx"]
        rows = embedding(indices, gg)
        if padding < 0:
            return (rows,)
        not_padding = (indices._data != padding)[..., None].astype(gg._data.dtype)
        return (rows * Tensor._make(not_padding),)


def embedding_dense_backward(g, indices, num_weights, padding_idx):
    """Embedding's backward: zeros(num_weights, dim), each row of g added at its index (not at padding_idx)."""
    index = indices._data.reshape(-1)
    rows = g._data.reshape(-1, g.shape[-1])
    keep = index != padding_idx
    data = np.zeros((num_weights, g.shape[-1]), g._data.dtype)
    np.add.at(data, index[keep], rows[keep])
    saved = {"indices": indices, "padding_idx": padding_idx}
    return record(EmbeddingDenseBackwardBackward0, data, (g,), saved)


def embedding(input, weight, padding_idx=None):
    """weight[input]: row input[i] of the table for every index (padding_idx's row gets no gradient)."""
    n = weight.shape[0]
    padding = _padding_index(padding_idx, n)
    index = input._data
    if index.dtype.kind not in "iu" or index.dtype.itemsize < 4 or index.dtype == np.uint32:
        kind = SCALAR_TYPE_NAMES.get(index.dtype.name, "")
        tensor_type = "Tensor" if index.dtype.kind == "b" else f"{kind}Tensor"
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
            f"Long, Int; but got torch.{tensor_type} instead (while checking arguments for embedding)"
        )
    if np.any((index < 0) | (index >= n)):
        raise IndexError("index out of range in self")
    data = weight._data[index]
    saved = {
        "indices": input,
        "padding_idx": -1 if padding is None else padding,
        "scale_grad_by_freq": False,
        "sparse": False,
        "weight_sym_argsize_0": n,
    }
    return record(EmbeddingBackward0, data, (weight,), saved)


# --- losses -----------------------------------------------------------------------------------
def _reduction(name):
    if name not in _REDUCTIONS:
        raise ValueError(f"{name} is not a valid value for reduction")
    return _REDUCTIONS[name]


def _reduce(losses, code):
    """The elementwise losses as they are (none), their mean, or their sum."""
    if code == 0:
        return losses
    return np.asarray(losses.mean() if code == 1 else losses.sum(), dtype=losses.dtype)


def _broadcast(input, target):
    """PyTorch's warning for a target of another shape, then both expanded to a common shape."""
    if input.shape == target.shape:
        return input, target
    warnings.warn(
        f"Using a target size (torch.Size({list(target.shape)})) that is different to the input "
        f"size (torch.Size({list(input.shape)})). This will likely lead to incorrect results due "
        "to broadcasting. Please ensure they have the same size.",
        stacklevel=3,
    )
    shape = broadcasting(np.broadcast_shapes, input.shape, target.shape, input, target)
    return tuple(t if t.shape == shape else t.expand(*shape) for t in (input, target))


class MseLossBackward0(Node):
    """out = mean((self - target)**2):  d self = g * 2 * (self - target) / N,  d target = -d self."""

    __slots__ = ()

    def apply(self, g):
        input, target, reduction = (
            self.saved("self"),
            self.saved("target"),
            self._saved["reduction"],
        )
        return (
            mse_loss_backward(g, input, target, reduction) if self.needs_input_grad(0) else None,
            mse_loss_backward(g, target, input, reduction) if self.needs_input_grad(1) else None,
        )


def _common_values(input, target):
    """input's and target's values in the dtype of their result, by PyTorch's promotion rules
    (float32 with an int64 target stays float32)."""
    dtype = result_type(input, target)
    return input._data.astype(dtype, copy=False), target._data.astype(dtype, copy=False)


def mse_loss(input, target, *, reduction="mean"):
    """mean((input - target)**2) (or the sum, or none: each squared difference)."""
    input, target = _broadcast(input, target)
    code = _reduction(reduction)
    x, t = _common_values(input, target)
    data = _reduce((x - t) ** 2, code)
    saved = {"reduction": code, "self": input, "target": target}
    return record(MseLossBackward0, data, (input, target), saved)


def l1_loss(input, target, *, reduction="mean"):
    """mean(|input - target|) (or the sum, or none), recorded as PyTorch does: sub, abs, mean."""
    input, target = _broadcast(input, target)
    code = _reduction(reduction)
    losses = (input - target).abs()
    return losses if code == 0 else losses.mean() if code == 1 else losses.sum()


class SmoothL1LossBackward0(Node):
    """out = mean(0.5 d**2 / beta if |d| < beta else |d| - 0.5 beta), d = self - target:
    d self = g * (d / beta if |d| < beta else sign(d)) (/ N for the mean),  d target = -d self."""

    __slots__ = ()
    limit = "beta"

    def apply(self, g):
        x, target = self.saved("self"), self.saved("target")
        if target._data.dtype == np.bool_:  # (a bool target counts as 0 and 1)
            target = Tensor._make(target._data.astype(x._data.dtype))
        diff = x - target
        limit = self._saved[self.limit]
        inside = Tensor._make((np.abs(diff._data) < limit).astype(diff._data.dtype))
        slope = diff * inside / self.scale(limit) + diff.sign() * (1 - inside) * self.outer(limit)
        grad = g * slope / (diff._data.size if self._saved["reduction"] == 1 else 1)
        return (
            grad if self.needs_input_grad(0) else None,
            -grad if self.needs_input_grad(1) else None,
        )

    @staticmethod
    def scale(beta):
        return beta

    @staticmethod
    def outer(beta):
        return 1.0


class HuberLossBackward0(SmoothL1LossBackward0):
    """out = mean(0.5 d**2 if |d| < delta else delta (|d| - 0.5 delta)) = delta * smooth_l1(beta=delta):
    d self = g * (d if |d| < delta else delta * sign(d)) (/ N for the mean),  d target = -d self."""

    __slots__ = ()
    limit = "delta"

    def apply(self, g):
        x, target = self.saved("self"), self.saved("target")
        if target._data.dtype != x._data.dtype:  # PyTorch's kernel wants one dtype
            raise RuntimeError(
                f"Found dtype {SCALAR_TYPE_NAMES[target._data.dtype.name]} but expected "
                f"{SCALAR_TYPE_NAMES[x._data.dtype.name]}"
            )
        return super().apply(g)

    @staticmethod
    def scale(delta):
        return 1.0

    @staticmethod
    def outer(delta):
        return delta


def _smooth_losses(input, target, reduction, limit, node_type, huber):
    input, target = _broadcast(input, target)
    code = _reduction(reduction)
    x, t = _common_values(input, target)
    diff = np.abs(x - t)
    if huber:
        losses = np.where(diff < limit, 0.5 * diff**2, limit * (diff - 0.5 * limit))
    else:
        losses = (
            np.where(diff < limit, 0.5 * diff**2 / limit, diff - 0.5 * limit) if limit else diff
        )
    # smooth_l1_loss gives the common dtype; huber_loss the input's (its backward wants both)
    data = _reduce(losses.astype(input._data.dtype if huber else x.dtype), code)
    saved = {node_type.limit: limit, "reduction": code, "self": input, "target": target}
    return record(node_type, data, (input, target), saved)


def smooth_l1_loss(input, target, *, reduction="mean", beta=1.0):
    """mean of 0.5 d**2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target)."""
    return _smooth_losses(input, target, reduction, beta, SmoothL1LossBackward0, huber=False)


def huber_loss(input, target, *, reduction="mean", delta=1.0):
    """mean of 0.5 d**2 where |d| < delta, else delta (|d| - 0.5 delta) (d = input - target)."""
    return _smooth_losses(input, target, reduction, delta, HuberLossBackward0, huber=True)


class XlogyBackward0(Node):
    """out = self * log(other), 0 where self is 0:  d self = grad * log(other) (0 where self is
    0),  d other = grad * self / other."""

    __slots__ = ()

    def apply(self, g):
        x, y = self.saved("self"), self.saved("other")
        with np.errstate(divide="ignore", invalid="ignore"):
            log_y = np.where(x._data != 0, np.log(y._data), 0).astype(y._data.dtype)
        grad_x = g * Tensor._make(log_y) if self.needs_input_grad(0) else None
        return grad_x, (g * x / y if self.needs_input_grad(1) else None)


def _xlogy(x, y):
    """x * log(y), 0 where x is 0 (torch.xlogy, as kl_div uses it)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        data = np.where(x._data == 0, 0, x._data * np.log(y._data)).astype(x._data.dtype)
    return record(XlogyBackward0, data, (x, y), {"other": y, "self": x})


def kl_div(input, target, *, reduction="mean", log_target=False):
    """target * (log(target) - input) (input: log-probabilities; with log_target, target too:
    exp(target) * (target - input)), reduced; batchmean: the sum over the batch size."""
    if reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next major "
            "release.",
            stacklevel=2,
        )
    code = _reduction("sum" if reduction == "batchmean" else reduction)
    if log_target:
        output = target.exp() * (target - input)
    else:
        output = _xlogy(target, target) - target * input
    reduced = output if code == 0 else output.mean() if code == 1 else output.sum()
    if reduction == "batchmean" and input.ndim != 0:
        reduced = reduced / input.shape[0]
    return reduced


def triplet_margin_loss(
    anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False, *, reduction="mean"
):
    """max(d(anchor, positive) - d(anchor, negative) + margin, 0), d the pairwise p-distance (with
    swap, the negative's distance is the smaller of d(a, n) and d(p, n)), reduced."""
    code = _reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = (anchor.ndim, positive.ndim, negative.ndim)
    if len(set(dims)) != 1:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative "
            f"{dims[2]}D inputs"
        )
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = elementwise_min(dist_neg, pairwise_distance(positive, negative, p, eps))
    output = clamp_min(derivatives.add_scalar(dist_pos, margin) - dist_neg, 0)
    return output if code == 0 else output.mean() if code == 1 else output.sum()


def one_hot(tensor, num_classes=-1):
    """out[..., c] = 1 where tensor == c: int64, one more dimension of num_classes."""
    if tensor._data.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        num_classes = int(tensor._data.max()) + 1 if tensor._data.size else 0
    if tensor._data.size and (tensor._data.min() < 0):
        raise RuntimeError("Class values must be non-negative.")
    if tensor._data.size and tensor._data.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return Tensor._make((tensor._data[..., None] == np.arange(num_classes)).astype(np.int64))


class NllLossBackward0(Node):
    """out = -sum_i w[t_i] * self[i, t_i] / total_weight:  d self[i, t_i] = -g * w[t_i] / total_weight."""

    __slots__ = ()

    def apply(self, g):
        log_probs, code = self.saved("self"), self._saved["reduction"]
        rows, labels, w = _nll_rows(
            self.saved("target"),
            self.saved("weight"),
            self._saved["ignore_index"],
            log_probs._data.dtype,
        )
        if code == 1:
            with np.errstate(divide="ignore", invalid="ignore"):
                w = np.where(w != 0, w / self.saved("total_weight")._data, 0).astype(w.dtype)
        picked = np.zeros((rows.size, log_probs.shape[-1]), w.dtype)
        picked[rows, labels] = -w
        if code == 0 and g.ndim == 1:
            g = g.unsqueeze(1)
        return (g * Tensor._make(picked.reshape(log_probs.shape)),)


def _nll_rows(target, weight, ignore_index, dtype):
    """(rows, labels, w): each row's target class and its weight w[t_i] (0 where it is ignored)."""
    labels = target._data.reshape(-1)
    keep = labels != ignore_index
    safe = np.where(keep, labels, 0)
    w = np.where(keep, 1 if weight is None else weight._data[safe], 0).astype(dtype)
    return np.arange(labels.size), safe, w


def _check_nll(input, target, weight, ignore_index):
    """PyTorch's checks of nll_loss's arguments, in its order, with its messages."""
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim != 1 and target.ndim != 0 and input.shape[0] != target.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
            f"({target.shape[0]})."
        )
    if input.ndim > 2:
        raise ValueError(
            f"mini_autograd's nll_loss takes input (N, C) or (C,), got {input.ndim} dimensions; "
            "reshape it to (N, C) (and the target to (N,)) first"
        )
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input.ndim != target.ndim + 1:
        raise RuntimeError(
            f"size mismatch (got input: {list(input.shape)}, target: {list(target.shape)})"
        )
    classes = input.shape[-1]
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != classes):
        raise RuntimeError(
            f"weight tensor should be defined either for all {classes} classes or no classes "
            f"but got weight tensor of shape: {list(weight.shape)}"
        )
    labels = target._data
    if labels.dtype not in (np.int64, np.uint8):
        kind = SCALAR_TYPE_NAMES.get(labels.dtype.name, labels.dtype.name)
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {kind}")
    bad = labels[(labels != ignore_index) & ((labels < 0) | (labels >= classes))]
    if bad.size:
        raise IndexError(f"Target {bad.flat[0]} is out of bounds.")


def nll_loss(input, target, weight=None, *, ignore_index=-100, reduction="mean"):
    """-mean_i w[t_i] * input[i, t_i] (weighted by w[t_i]), given log-probabilities (N, C) or (C,)."""
    code = _reduction(reduction)
    _check_nll(input, target, weight, ignore_index)
    dtype = input._data.dtype
    rows, labels, w = _nll_rows(target, weight, ignore_index, dtype)
    picked = input._data.reshape(-1, input.shape[-1])[rows, labels]
    losses = np.where(w != 0, -w * picked, 0).astype(dtype)
    total_weight = np.asarray(0 if code == 0 else w.sum(), dtype)
    if code == 0:
        data = losses.reshape(target.shape)
    elif code == 1:
        with np.errstate(divide="ignore", invalid="ignore"):
            data = np.asarray(losses.sum() / total_weight, dtype)
    else:
        data = np.asarray(losses.sum(), dtype)
    saved = {
        "ignore_index": ignore_index,
        "reduction": code,
        "self": input,
        "target": target,
        "total_weight": Tensor._make(total_weight),
        "weight": weight,
    }
    return record(NllLossBackward0, data, (input,), saved)


def cross_entropy(
    input, target, weight=None, *, ignore_index=-100, reduction="mean", label_smoothing=0.0
):
    """nll_loss(log_softmax(input, class dim), target): the classification loss on raw scores.
    With label_smoothing e: (1 - e) * that + e / C * (the mean over the classes of -log_softmax,
    weighted), as if the target were 1 - e on its class and e / C on each."""
    class_dim = 0 if input.ndim == 1 else 1
    log_probs = _softmax.log_softmax(input, class_dim)
    loss = nll_loss(log_probs, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0.0:
        return loss
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}")
    n_classes = log_probs.shape[class_dim]
    if weight is None:
        smooth = -log_probs.sum(class_dim)
    else:
        shape = [1] * log_probs.ndim
        shape[class_dim] = n_classes
        smooth = -(log_probs * weight.view(shape)).sum(class_dim)
    ignored = target == ignore_index
    smooth.masked_fill_(ignored, 0.0)
    code = _reduction(reduction)
    if code == 1 and weight is None:
        smooth = smooth.sum() / (~ignored).sum()
    elif code == 1:
        smooth = smooth.sum() / weight.gather(0, target.masked_select(~ignored).flatten()).sum()
    elif code == 2:
        smooth = smooth.sum()
    scaled = derivatives.mul_scalar(smooth, label_smoothing / n_classes)
    return derivatives.mul_scalar(loss, 1 - label_smoothing) + scaled


def _per_element(grad, g, node):
    """grad (of one loss element) times g, weighted by the saved weight and divided by N for a mean."""
    weight = node.saved("weight")
    if weight is not None:
        grad = grad * weight
    if node._saved["reduction"] == 1:
        grad = grad / grad.numel()
    return g * grad


_EPSILON = 1e-12  # PyTorch's floor for self * (1 - self) in the gradient


class BinaryCrossEntropyBackward0(Node):
    """out = -w * (t log(self) + (1 - t) log(1 - self)):  d self = g w (self - t) / max(self (1 - self), 1e-12),
    d t = g w (log(1 - self) - log(self))."""

    __slots__ = ()

    def apply(self, g):
        x, t = self.saved("self"), self.saved("target")
        grad_x = grad_t = None
        if self.needs_input_grad(0):
            at_least_eps = ((1 - x) * x - _EPSILON).relu() + _EPSILON  # max(self (1 - self), eps)
            grad_x = _per_element((x - t) / at_least_eps, g, self)
        if self.needs_input_grad(1):
            grad_t = _per_element((1 - x).log() - x.log(), g, self)
        return grad_x, grad_t


def binary_cross_entropy(input, target, weight=None, *, reduction="mean"):
    """mean(-w * (target * log(input) + (1 - target) * log(1 - input))), each log at least -100."""
    code = _reduction(reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size (torch.Size({list(target.shape)})) that is different to the input "
            f"size (torch.Size({list(input.shape)})) is deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        weight = weight.expand(*input.shape)
    x, t = input._data, target._data
    if t.dtype != x.dtype:
        raise RuntimeError(
            f"Found dtype {SCALAR_TYPE_NAMES[t.dtype.name]} but expected {SCALAR_TYPE_NAMES[x.dtype.name]}"
        )
    if not np.all((x >= 0) & (x <= 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    with np.errstate(divide="ignore"):
        losses = (t - 1) * np.maximum(np.log1p(-x), -100) - t * np.maximum(np.log(x), -100)
    if weight is not None:
        losses = losses * weight._data
    data = _reduce(losses, code)
    saved = {"reduction": code, "self": input, "target": target, "weight": weight}
    return record(BinaryCrossEntropyBackward0, data, (input, target), saved)


def _log_sigmoid(x):
    """log(sigmoid(x)) = -(max(-x, 0) + log(1 + exp(-|x|))), in Tensor operations that never overflow."""
    return -((-x).relu() + ((-x.abs()).exp() + 1).log())


def _check_logits_target(input_dtype, target_dtype):
    """PyTorch's errors for a target that is not floating point: its loss is written into
    (1 - target), which cannot hold it."""
    if target_dtype.kind == "b":
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
            "`logical_xor()` operator instead."
        )
    if target_dtype.kind != "f":
        result = promote_types(input_dtype, target_dtype)
        raise RuntimeError(
            f"result type {SCALAR_TYPE_NAMES[result.name]} can't be cast to the desired output type "
            f"{SCALAR_TYPE_NAMES[target_dtype.name]}"
        )


class BinaryCrossEntropyWithLogitsBackward0(Node):
    """out = w * ((1 - t) self - (1 + (pw - 1) t) log(sigmoid(self))):
    d self = g w ((pw t + 1 - t) sigmoid(self) - pw t),  d t = g w (-self - (pw - 1) log(sigmoid(self)))."""

    __slots__ = ()

    def apply(self, g):
        x, t, pos_weight = self.saved("self"), self.saved("target"), self.saved("pos_weight")
        grad_x = grad_t = None
        if self.needs_input_grad(0):
            if pos_weight is None:
                grad_x = x.sigmoid() - t
            else:
                weighted = pos_weight * t
                grad_x = (weighted + 1 - t) * x.sigmoid() - weighted
            grad_x = _per_element(grad_x, g, self)
        if self.needs_input_grad(1):
            grad_t = -x if pos_weight is None else -x - (pos_weight - 1) * _log_sigmoid(x)
            grad_t = _per_element(grad_t, g, self)
        return grad_x, grad_t


def binary_cross_entropy_with_logits(
    input, target, weight=None, *, reduction="mean", pos_weight=None
):
    """binary_cross_entropy(sigmoid(input), target) in one stable step; pos_weight weighs the positives."""
    code = _reduction(reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Target size (torch.Size({list(target.shape)})) must be the same as input size "
            f"(torch.Size({list(input.shape)}))"
        )
    x, t = input._data, target._data
    _check_logits_target(x.dtype, t.dtype)
    log_sigmoid = np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))
    if pos_weight is not None:
        log_sigmoid = log_sigmoid * ((pos_weight._data - 1) * t + 1)
    losses = (1 - t) * x - log_sigmoid
    if weight is not None:
        losses = losses * weight._data
    # PyTorch computes the loss into (1 - target), in place: it has the target's dtype
    data = _reduce(losses.astype(t.dtype, copy=False), code)
    saved = {
        "pos_weight": pos_weight,
        "reduction": code,
        "self": input,
        "target": target,
        "weight": weight,
    }
    return record(BinaryCrossEntropyWithLogitsBackward0, data, (input, target), saved)
