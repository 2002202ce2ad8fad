"""Activation layers, as in torch.nn: each one applies its function from nn.functional."""

from . import functional as F
from .module import Module


class ReLU(Module):
    """max(x, 0) (written into x with inplace=True)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        """relu(input, inplace)."""
        return F.relu(input, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """x if x > 0 else negative_slope * x."""

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        """leaky_relu(input, negative_slope); in place on input with inplace=True."""
        out = F.leaky_relu(input, self.negative_slope)
        return input.copy_(out) if self.inplace else out

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class Tanh(Module):
    """tanh(x)."""

    def forward(self, input):
        """tanh(input)."""
        return F.tanh(input)


class Sigmoid(Module):
    """1 / (1 + exp(-x))."""

    def forward(self, input):
        """1 / (1 + exp(-input))."""
        return F.sigmoid(input)


class Softmax(Module):
    """exp(x) / sum(exp(x)) along dim."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        """softmax(input, dim)."""
        return F.softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """x - log(sum(exp(x))) along dim."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        """log_softmax(input, dim)."""
        return F.log_softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"
