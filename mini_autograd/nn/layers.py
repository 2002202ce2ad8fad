"""Layers with PyTorch's parameter names, shapes and initialisation: Linear, Identity, Flatten,
Dropout. The recurrent layers are in rnn.py."""

import math

from ..ops.rnn import lstm_step  # noqa: F401 (the course's checks import it from here)
from . import functional as F
from . import init
from .module import Module


def _linear_bounds(in_features):
    """PyTorch's ranges for Linear, computed as it computes them (so the draws are its own):
    kaiming_uniform_(a=sqrt(5)) for the weight, bound sqrt(3) * gain / sqrt(fan_in), which is
    1 / sqrt(fan_in); U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias."""
    if in_features <= 0:
        return 0, 0
    gain = init.calculate_gain("leaky_relu", math.sqrt(5))
    return math.sqrt(3.0) * (gain / math.sqrt(in_features)), 1 / math.sqrt(in_features)


class Linear(Module):
    """y = x @ weight.T + bias, weight of shape (out_features, in_features)."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        weight_bound, bias_bound = _linear_bounds(in_features)
        self.weight = init._uniform_parameter(
            (out_features, in_features), weight_bound, dtype, device
        )
        if bias:
            self.bias = init._uniform_parameter((out_features,), bias_bound, dtype, device)
        else:
            self.register_parameter("bias", None)

    def reset_parameters(self):
        """Redraw weight and bias in place, from PyTorch's ranges."""
        weight_bound, bias_bound = _linear_bounds(self.in_features)
        init.uniform_(self.weight, -weight_bound, weight_bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bias_bound, bias_bound)

    def forward(self, x):
        """x @ weight.T + bias."""
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Identity(Module):
    """y = x (a placeholder: it accepts and ignores any arguments)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        """input itself."""
        return input


class Flatten(Module):
    """Merge dims start_dim..end_dim into one: (N, C, H, W) -> (N, C*H*W) by default."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        """input.flatten(start_dim, end_dim)."""
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class _DropoutNd(Module):
    """Dropout's settings: the probability p of zeroing, and whether it works in place."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """In training: zero each element with probability p and scale the rest by 1 / (1 - p); in eval: y = x."""

    def forward(self, input):
        """dropout(input, p, training)."""
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """In training: zero each channel with probability p and scale the rest by 1 / (1 - p); in eval: y = x."""

    def forward(self, input):
        """dropout2d(input, p, training)."""
        return F.dropout2d(input, self.p, self.training, self.inplace)
