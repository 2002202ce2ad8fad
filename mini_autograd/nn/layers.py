"""Layers with PyTorch's parameter names, shapes, initialisation ranges and gate order."""

import math

import numpy as np

from .. import creation
from ..ops.elementwise import sigmoid, tanh
from ..ops.rnn import lstm_layer
from ..ops.shape import stack
from ..random import default_generator
from . import functional as F
from .module import Module
from .parameter import Parameter


def _uniform(shape, bound):
    """A parameter drawn uniformly from [-bound, bound] (PyTorch's default ranges)."""
    return Parameter(default_generator.uniform(shape, -bound, bound, np.float32))


class Linear(Module):
    """y = x @ weight.T + bias, weight of shape (out_features, in_features)."""

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features)
        self.weight = _uniform((out_features, in_features), bound)
        self.bias = _uniform((out_features,), bound) if bias else None

    def forward(self, x):
        """x @ weight.T + bias."""
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class RNNCell(Module):
    """h' = tanh(x @ W_ih.T + b_ih + h @ W_hh.T + b_hh)."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        bound = 1 / math.sqrt(hidden_size)
        self.weight_ih = _uniform((hidden_size, input_size), bound)
        self.weight_hh = _uniform((hidden_size, hidden_size), bound)
        self.bias_ih = _uniform((hidden_size,), bound)
        self.bias_hh = _uniform((hidden_size,), bound)

    def forward(self, x, h=None):
        """One step: the new hidden state."""
        if h is None:
            h = creation.zeros(x.shape[0], self.hidden_size, dtype=x.dtype)
        return rnn_step(x, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}"


def rnn_step(x, h, w_ih, w_hh, b_ih, b_hh):
    """h' = tanh(x @ W_ih.T + b_ih + h @ W_hh.T + b_hh)."""
    return tanh(F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh))


class LSTMCell(Module):
    """One LSTM step; the 4 gates are stacked in PyTorch's order: input, forget, cell, output."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        bound = 1 / math.sqrt(hidden_size)
        self.weight_ih = _uniform((4 * hidden_size, input_size), bound)
        self.weight_hh = _uniform((4 * hidden_size, hidden_size), bound)
        self.bias_ih = _uniform((4 * hidden_size,), bound)
        self.bias_hh = _uniform((4 * hidden_size,), bound)

    def forward(self, x, state=None):
        """(h', c') from x and (h, c)."""
        if state is None:
            zeros = creation.zeros(x.shape[0], self.hidden_size, dtype=x.dtype)
            state = (zeros, zeros)
        return lstm_step(x, state, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}"


def lstm_step(x, state, w_ih, w_hh, b_ih, b_hh):
    """i, f, g, o = gates;  c' = sigmoid(f) * c + sigmoid(i) * tanh(g);  h' = sigmoid(o) * tanh(c')."""
    h, c = state
    gates = F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh)
    n = h.shape[-1]
    i, f, g, o = gates[:, :n], gates[:, n : 2 * n], gates[:, 2 * n : 3 * n], gates[:, 3 * n :]
    c_next = sigmoid(f) * c + sigmoid(i) * tanh(g)
    h_next = sigmoid(o) * tanh(c_next)
    return h_next, c_next


class _Recurrent(Module):
    """Shared frame of RNN and LSTM: layers of cells unrolled over time, PyTorch's tensor layout."""

    gates = 1

    def __init__(self, input_size, hidden_size, num_layers=1, batch_first=False):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        self.num_layers, self.batch_first = num_layers, batch_first
        bound = 1 / math.sqrt(hidden_size)
        rows = self.gates * hidden_size
        for layer in range(num_layers):
            width = input_size if layer == 0 else hidden_size
            setattr(self, f"weight_ih_l{layer}", _uniform((rows, width), bound))
            setattr(self, f"weight_hh_l{layer}", _uniform((rows, hidden_size), bound))
            setattr(self, f"bias_ih_l{layer}", _uniform((rows,), bound))
            setattr(self, f"bias_hh_l{layer}", _uniform((rows,), bound))

    def _weights(self, layer):
        return tuple(
            getattr(self, f"{k}_l{layer}") for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
        )

    def _layout(self, x):
        """(T, B, I) view of the input, and whether it was unbatched (T, I); PyTorch's checks."""
        name = type(self).__name__
        if x.ndim not in (2, 3):
            got = f"{x.ndim}D tensor" if name == "RNN" else f"{x.ndim}D"  # PyTorch's two wordings
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {got} instead")
        weight = self.weight_ih_l0
        if x.dtype != weight.dtype:
            raise ValueError(
                f"RNN input dtype ({x.dtype!r}) does not match weight dtype ({weight.dtype!r}). "
                f"Convert input: input.to({weight.dtype!r})"
            )
        unbatched = x.ndim == 2
        if unbatched:
            x = x.unsqueeze(1)
        elif self.batch_first:
            x = x.transpose(0, 1)
        if x.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got {x.shape[-1]}"
            )
        return x, unbatched

    def _check_state(self, states, unbatched, batch):
        """PyTorch's errors for initial states of the wrong rank or size."""
        ranks = tuple(s.ndim for s in states)
        expected_rank = 2 if unbatched else 3
        if any(rank != expected_rank for rank in ranks):
            kind = "unbatched 2-D" if unbatched else "batched 3-D"
            names = " and ".join(("hx", "cx")[: len(states)])
            got = ", ".join(f"{rank}-D" for rank in ranks)
            if len(states) == 1:
                raise RuntimeError(
                    f"For {kind} input, hx should also be {expected_rank}-D but got {got} tensor"
                )
            raise RuntimeError(
                f"For {kind} input, {names} should also be {expected_rank}-D but got ({got}) tensors"
            )
        expected = (self.num_layers, batch, self.hidden_size)
        if unbatched:
            expected = (self.num_layers, self.hidden_size)
        for k, state in enumerate(states):
            if tuple(state.shape) != expected:
                which = f"hidden[{k}]" if len(states) > 1 else "hidden"
                raise RuntimeError(f"Expected {which} size {expected}, got {list(state.shape)}")

    def _output(self, out, unbatched):
        if unbatched:
            return out.squeeze(1)
        return out.transpose(0, 1) if self.batch_first else out

    def extra_repr(self):
        extra = f", num_layers={self.num_layers}" if self.num_layers != 1 else ""
        return f"{self.input_size}, {self.hidden_size}{extra}" + (
            ", batch_first=True" if self.batch_first else ""
        )


class RNN(_Recurrent):
    """A tanh RNN over a sequence: returns (output of the last layer at every step, h_n)."""

    def forward(self, x, h0=None):
        """x: (T, B, I) (or (B, T, I) with batch_first, or (T, I)); h0: (num_layers, B, H)."""
        x, unbatched = self._layout(x)
        batch = x.shape[1]
        if h0 is None:
            h0 = creation.zeros(self.num_layers, batch, self.hidden_size, dtype=x.dtype)
        else:
            self._check_state((h0,), unbatched, batch)
            if unbatched:
                h0 = h0.unsqueeze(1)
        inputs, finals = list(x), []
        for layer in range(self.num_layers):
            h = h0[layer]
            weights = self._weights(layer)
            outputs = []
            for step in inputs:
                h = rnn_step(step, h, *weights)
                outputs.append(h)
            inputs = outputs
            finals.append(h)
        h_n = stack(finals, 0)
        return self._output(stack(inputs, 0), unbatched), (h_n.squeeze(1) if unbatched else h_n)


class LSTM(_Recurrent):
    """An LSTM over a sequence: returns (output, (h_n, c_n)) with PyTorch's shapes.

    Each layer runs as one fused operation (ops/rnn.py), as PyTorch does on the CPU: the graph
    has one MkldnnRnnLayerBackward0 node per layer. LSTMCell shows the same step built from
    elementary operations.
    """

    gates = 4

    def forward(self, x, state=None):
        """x: (T, B, I) (or (B, T, I) with batch_first, or (T, I)); state: (h0, c0), each (L, B, H)."""
        x, unbatched = self._layout(x)
        x = x.contiguous()  # as PyTorch's fused kernel: a batch_first input is copied
        batch = x.shape[1]
        if state is None:
            zeros = creation.zeros(self.num_layers, batch, self.hidden_size, dtype=x.dtype)
            state = (zeros, zeros)
        else:
            self._check_state(state, unbatched, batch)
            if unbatched:
                state = (state[0].unsqueeze(1), state[1].unsqueeze(1))
        final_h, final_c = [], []
        for layer in range(self.num_layers):
            x, h, c = lstm_layer(
                x,
                state[0][layer],
                state[1][layer],
                *self._weights(layer),
                num_layers=self.num_layers,
                batch_first=self.batch_first,
                train=self.training,
            )
            final_h.append(h)
            final_c.append(c)
        h_n, c_n = stack(final_h, 0), stack(final_c, 0)
        if unbatched:
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return self._output(x, unbatched), (h_n, c_n)


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


class Dropout(Module):
    """In training: zero each element with probability p and scale the rest by 1 / (1 - p); in eval: y = x."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        """dropout(input, p, training)."""
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"
