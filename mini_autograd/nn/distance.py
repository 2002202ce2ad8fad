"""Distances between batches of vectors, as in torch.nn.functional and torch.nn.modules.distance:
pairwise_distance, cosine_similarity, and their layers PairwiseDistance and CosineSimilarity.
Each is made of the operations ATen's own C++ version calls, so the graph is PyTorch's."""

from ..core.grad_mode import no_grad
from ..ops.broadcasting import broadcast_shape
from ..ops.derivatives import add_scalar
from ..ops.reductions import norm_p
from ..ops.shape import expand
from .module import Module


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim (of the larger of the two)."""
    innermost_dim = max(x1.ndim, x2.ndim) - 1
    return norm_p(add_scalar(x1 - x2, eps), p, innermost_dim, keepdim)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum over dim of (x1 / max(||x1||, eps)) * (x2 / max(||x2||, eps)), the norms over dim."""
    if not (x1.dtype.is_floating_point or x2.dtype.is_floating_point):
        raise RuntimeError(
            "expected common dtype to be floating point, yet common dtype is "
            f"{x1.dtype if x1.dtype == x2.dtype else x1.dtype}"
        )
    if x1.shape != x2.shape:  # expand_outplace: both expanded, when the shapes differ
        shape = broadcast_shape(x1, x2)
        x1, x2 = expand(x1, *shape), expand(x2, *shape)
    # each divided by its norm first (more stable); the norms cloned, then clamped in place
    x1_norm = x1.norm(2, dim=dim, keepdim=True).clone()
    x2_norm = x2.norm(2, dim=dim, keepdim=True).clone()
    with no_grad():
        x1_norm.clamp_min_(eps)
        x2_norm.clamp_min_(eps)
    return ((x1 / x1_norm) * (x2 / x2_norm)).sum(dim)


class PairwiseDistance(Module):
    """pairwise_distance(x1, x2) with the layer's norm, eps and keepdim."""

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        """pairwise_distance(x1, x2, p, eps, keepdim)."""
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """cosine_similarity(x1, x2) over the layer's dim."""

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        """cosine_similarity(x1, x2, dim, eps)."""
        return cosine_similarity(x1, x2, self.dim, self.eps)
