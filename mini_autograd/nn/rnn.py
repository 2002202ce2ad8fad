"""Recurrent layers, as in torch.nn: RNN, LSTM and GRU over sequences, and their one-step cells,
with PyTorch's parameter names, initialisation, gate order, checks and graphs.

On the CPU, PyTorch runs nn.LSTM as one fused oneDNN kernel per layer and direction (one
MkldnnRnnLayerBackward0 node); so does mini_autograd (ops/rnn.py). RNN, GRU and the cells are
recorded from elementary operations in the order of PyTorch's C++ loop (aten/src/ATen/native/
RNN.cpp): the input part of every step's gates is one linear over the whole sequence, unbound
into steps; each step adds the hidden part; the gates are cut apart by one unsafe_chunk.
"""

import math
import warnings

import numpy as np

from .. import creation
from ..ops.derivatives import relu, sigmoid, tanh
from ..ops.recording import record
from ..ops.rnn import _unsafe_chunk, lstm_layer, lstm_step
from ..ops.shape import TransposeBackward0, cat, stack
from . import functional as F
from . import init
from .module import Module
from .utils.rnn import PackedSequence

_NONLINEARITIES = {"tanh": tanh, "relu": relu}
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}  # gate blocks stacked in weight_ih


# --- PyTorch's in-place transpose_, which Tensor does not offer (unsafe_chunk: ops/rnn.py) -
class TransposeBackward1(TransposeBackward0):
    """out = self.transpose_(0, 1), in place:  d self = g transposed back."""

    __slots__ = ()


def _transpose_(x):
    """x with dims 0 and 1 swapped, recorded as PyTorch's in-place transpose_ (how its RNN and
    GRU return a batch_first output)."""
    if not x.requires_grad:
        return x.transpose(0, 1)
    return record(TransposeBackward1, np.swapaxes(x._data, 0, 1), (x,), {"dim0": 0, "dim1": 1})


# --- one step (LSTM's, lstm_step, is in ops/rnn.py: the fused layer replays it) ------------
def rnn_step(x, h, w_ih, w_hh, b_ih, b_hh, nonlinearity="tanh", pre_computed=False):
    """h' = act(h @ W_hh.T + b_hh + x @ W_ih.T + b_ih), act = tanh or relu.

    pre_computed: x is already the input part x @ W_ih.T + b_ih (RNN computes it for the whole
    sequence at once).
    """
    hidden_part = F.linear(h, w_hh, b_hh)
    input_part = x if pre_computed else F.linear(x, w_ih, b_ih)
    return _NONLINEARITIES[nonlinearity](hidden_part + input_part)


def gru_step(x, h, w_ih, w_hh, b_ih, b_hh, pre_computed=False):
    """r = sigmoid(h_r + x_r);  z = sigmoid(h_z + x_z);  n = tanh(x_n + h_n * r);
    h' = (h - n) * z + n  (= (1 - z) * n + z * h),
    the blocks in PyTorch's order r, z, n of x @ W_ih.T + b_ih (x_*) and h @ W_hh.T + b_hh (h_*).
    """
    x_r, x_z, x_n = _unsafe_chunk(x if pre_computed else F.linear(x, w_ih, b_ih), 3)
    h_r, h_z, h_n = _unsafe_chunk(F.linear(h, w_hh, b_hh), 3)
    r = sigmoid(h_r + x_r)
    z = sigmoid(h_z + x_z)
    n = tanh(x_n + h_n * r)
    return (h - n) * z + n


# --- cells ------------------------------------------------------------------------------------
class RNNCellBase(Module):
    """Shared frame of the cells: weight_ih (chunks * H, I), weight_hh (chunks * H, H), biases,
    all from U(-1/sqrt(H), 1/sqrt(H)); 1-D inputs are a batch of one; the subclass's _step."""

    state_names = ("hidden",)  # what PyTorch's errors call the states

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        bound = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0
        rows = num_chunks * hidden_size
        for name, shape in (
            ("weight_ih", (rows, input_size)),
            ("weight_hh", (rows, hidden_size)),
            ("bias_ih", (rows,) if bias else None),
            ("bias_hh", (rows,) if bias else None),
        ):
            param = None if shape is None else init._uniform_parameter(shape, bound, dtype, device)
            self.register_parameter(name, param)

    def reset_parameters(self):
        """Redraw every parameter from U(-1/sqrt(H), 1/sqrt(H)), in place."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def forward(self, input, hx=None):
        """The next state(s) from input (B, I) or (I,) and the state(s) (zeros if None)."""
        name = type(self).__name__
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        states = () if hx is None else (hx,) if len(self.state_names) == 1 else tuple(hx)
        for label, state in zip(self.state_names, states):
            if state.ndim not in (1, 2):
                raise ValueError(
                    f"{name}: Expected {label} to be 1D or 2D, got {state.ndim}D instead"
                )
        batched = input.ndim == 2
        if not batched:
            input = input.unsqueeze(0)
            states = tuple(state.unsqueeze(0) for state in states)
        if not states:
            zeros = creation.zeros(input.shape[0], self.hidden_size, dtype=input.dtype)
            states = (zeros,) * len(self.state_names)
        self._check_shapes(input, states)
        out = self._step(input, states)
        if batched:
            return out
        return out.squeeze(0) if len(self.state_names) == 1 else tuple(o.squeeze(0) for o in out)

    def _check_shapes(self, input, states):
        """PyTorch's checks of the sizes (in its C++ cell)."""
        if input.shape[1] != self.weight_ih.shape[1]:
            raise RuntimeError(
                f"input has inconsistent input_size: got {input.shape[1]} expected "
                f"{self.weight_ih.shape[1]}"
            )
        for label, state in enumerate(states):
            if input.shape[0] != state.shape[0]:
                raise RuntimeError(
                    f"Input batch size {input.shape[0]} doesn't match hidden{label} batch size "
                    f"{state.shape[0]}"
                )
            if state.shape[1] != self.weight_hh.shape[1]:
                raise RuntimeError(
                    f"hidden{label} has inconsistent hidden_size: got {state.shape[1]}, expected "
                    f"{self.weight_hh.shape[1]}"
                )

    def _weights(self):
        return self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh

    def extra_repr(self):
        text = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            text += f", nonlinearity={self.nonlinearity}"
        return text


class RNNCell(RNNCellBase):
    """h' = tanh(x @ W_ih.T + b_ih + h @ W_hh.T + b_hh) (or relu)."""

    def __init__(
        self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None
    ):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def _step(self, x, states):
        if self.nonlinearity not in _NONLINEARITIES:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return rnn_step(x, states[0], *self._weights(), nonlinearity=self.nonlinearity)


class LSTMCell(RNNCellBase):
    """One LSTM step: (h', c') from x and (h, c); gates stacked as input, forget, cell, output."""

    state_names = ("hx[0]", "hx[1]")

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def _step(self, x, states):
        return lstm_step(x, states, *self._weights())


class GRUCell(RNNCellBase):
    """One GRU step: h' = (1 - z) * n + z * h; gates stacked as reset, update, new."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def _step(self, x, states):
        return gru_step(x, states[0], *self._weights())


# --- sequences --------------------------------------------------------------------------------
class RNNBase(Module):
    """Shared frame of RNN, LSTM and GRU: layers (and directions) of cells unrolled over time,
    PyTorch's parameter names (weight_ih_l0, ..., bias_hh_l1_reverse), shapes and checks."""

    def __init__(
        self,
        mode,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        proj_size=0,
        device=None,
        dtype=None,
    ):
        super().__init__()
        _check_settings(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout)
        if proj_size:
            raise ValueError(
                "mini_autograd's LSTM has no projections (proj_size); leave proj_size=0"
            )
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, 0
        rows, directions = _GATES[mode] * hidden_size, 2 if bidirectional else 1
        bound = 1.0 / math.sqrt(hidden_size)
        self._flat_weights_names, self._all_weights = [], []
        for layer in range(num_layers):
            width = input_size if layer == 0 else hidden_size * directions
            for direction in range(directions):
                suffix = "_reverse" if direction else ""
                shapes = {"weight_ih": (rows, width), "weight_hh": (rows, hidden_size)}
                if bias:
                    shapes |= {"bias_ih": (rows,), "bias_hh": (rows,)}
                names = [f"{kind}_l{layer}{suffix}" for kind in shapes]
                for name, shape in zip(names, shapes.values()):
                    setattr(self, name, init._uniform_parameter(shape, bound, dtype, device))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters of each layer and direction: [[w_ih, w_hh, b_ih, b_hh], ...]."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """Nothing to do: PyTorch packs the weights for cuDNN here; mini_autograd has no GPU."""

    def reset_parameters(self):
        """Redraw every parameter from U(-1/sqrt(H), 1/sqrt(H)), in place."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _layer_weights(self, index):
        """(w_ih, w_hh, b_ih, b_hh) of layer-and-direction `index` (None biases when bias=False)."""
        weights = [getattr(self, name) for name in self._all_weights[index]]
        return (*weights, None, None) if not self.bias else tuple(weights)

    def _check_rank(self, input):
        if input.ndim not in (2, 3):
            got = f"{input.ndim}D tensor" if self.mode.startswith("RNN") else f"{input.ndim}D"
            raise ValueError(
                f"{self.mode.split('_')[0]}: Expected input to be 2D or 3D, got {got} instead"
            )

    def _state_shape(self, input):
        """(num_layers * directions, batch, hidden_size): the shape of the states for a 3-D input."""
        batch = input.shape[0] if self.batch_first else input.shape[1]
        return (self.num_layers * (2 if self.bidirectional else 1), batch, self.hidden_size)

    def _zeros(self, input):
        """The default initial state."""
        return creation.zeros(*self._state_shape(input), dtype=input.dtype)

    def _check_forward_args(self, input, states):
        """PyTorch's checks of a 3-D input and its initial states, with its messages."""
        weight = self.weight_ih_l0
        if input.dtype != weight.dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype!r}) does not match weight dtype "
                f"({weight.dtype!r}). Convert input: input.to({weight.dtype!r})"
            )
        if input.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                f"got {input.shape[-1]}"
            )
        expected = self._state_shape(input)
        for k, state in enumerate(states):
            if tuple(state.shape) != expected:
                which = "hidden" if len(states) == 1 else f"hidden[{k}]"
                raise RuntimeError(f"Expected {which} size {expected}, got {list(state.shape)}")

    def _stack_layers(self, x, run_layer):
        """Every layer over the sequence x (T, B, I): each direction's run_layer(x, index, reverse)
        -> (output (T, B, H), final states); the directions' outputs joined along the last dim,
        dropout between layers while training. Returns (output, the final states in order)."""
        if x.shape[0] == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        directions = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                out, final = run_layer(x, layer * directions + direction, direction == 1)
                outputs.append(out)
                finals.append(final)
            x = outputs[0] if directions == 1 else cat(outputs, x.ndim - 1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, finals

    def _packed_step(self, x, state, weights):
        """One time step of the subclass's cell on the rows x: the new state (a tuple)."""
        if self.mode == "LSTM":
            return lstm_step(x, state, *weights)
        if self.mode == "GRU":
            return (gru_step(x, state[0], *weights),)
        return (rnn_step(x, state[0], *weights, self.mode[4:].lower()),)

    def _forward_packed(self, packed, hx):
        """A PackedSequence through every layer, step by step: at step t the first batch_sizes[t]
        sequences (the longest) step on, the others keep their state (forwards: a finished
        sequence keeps its last one; backwards: a sequence starts from its initial state when
        it begins). Returns (a PackedSequence, the final states in the caller's order)."""
        data, batch_sizes, sorted_indices, unsorted_indices = packed
        sizes = [int(b) for b in batch_sizes._data]
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        directions = 2 if self.bidirectional else 1
        shape = (self.num_layers * directions, sizes[0], self.hidden_size)
        n_states = 2 if self.mode == "LSTM" else 1
        if hx is None:
            hx = (creation.zeros(*shape, dtype=data.dtype),) * n_states
        else:
            hx = hx if n_states == 2 else (hx,)
            if sorted_indices is not None:  # the states in the sequences' sorted order
                hx = tuple(h.index_select(1, sorted_indices) for h in hx)
        finals = []
        x = data
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                weights = self._layer_weights(index)
                state = tuple(h[index] for h in hx)
                steps = [None] * len(sizes)
                order = range(len(sizes) - 1, -1, -1) if direction else range(len(sizes))
                for t in order:
                    b = sizes[t]
                    new = self._packed_step(
                        x[offsets[t] : offsets[t + 1]], tuple(s[:b] for s in state), weights
                    )
                    steps[t] = new[0]
                    state = tuple(
                        cat([n, s[b:]], 0) if b < s.shape[0] else n for n, s in zip(new, state)
                    )
                outputs.append(cat(steps, 0))
                finals.append(state)
            x = outputs[0] if directions == 1 else cat(outputs, 1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        states = [stack([final[k] for final in finals], 0) for k in range(n_states)]
        if unsorted_indices is not None:
            states = [h.index_select(1, unsorted_indices) for h in states]
        output = PackedSequence(x, batch_sizes, sorted_indices, unsorted_indices)
        return output, (tuple(states) if n_states == 2 else states[0])

    def extra_repr(self):
        text = f"{self.input_size}, {self.hidden_size}"
        settings = (
            ("num_layers", self.num_layers, 1),
            ("bias", self.bias, True),
            ("batch_first", self.batch_first, False),
            ("dropout", self.dropout, 0),
            ("bidirectional", self.bidirectional, False),
        )
        return text + "".join(f", {name}={value}" for name, value, off in settings if value != off)


def _check_settings(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout):
    """PyTorch's checks of a recurrent layer's settings, in its order, with its messages."""
    if not isinstance(dropout, (int, float)) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
        raise ValueError(
            "dropout should be a number in range [0, 1] representing the probability of an "
            "element being zeroed"
        )
    if dropout > 0 and num_layers == 1:
        warnings.warn(
            "dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
            f"expects num_layers greater than 1, but got dropout={dropout} and "
            f"num_layers={num_layers}",
            stacklevel=4,
        )
    for name, value, kind in (
        ("bias", bias, bool),
        ("batch_first", batch_first, bool),
        ("input_size", input_size, int),
        ("hidden_size", hidden_size, int),
    ):
        if not isinstance(value, kind):
            raise TypeError(
                f"{name} should be of type {kind.__name__}, got: {type(value).__name__}"
            )
        if kind is int and value <= 0:
            raise ValueError(f"{name} must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if mode not in _GATES:
        raise ValueError("Unrecognized RNN mode: " + mode)


class _Elementary(RNNBase):
    """RNN and GRU: each layer recorded step by step from elementary operations (the subclass's
    _step)."""

    def forward(self, input, hx=None):
        """(output, h_n): the last layer's state at every step, and every layer's last state.

        input (T, B, I), (B, T, I) with batch_first, or (T, I), or a PackedSequence; hx (layers *
        directions, B, H).
        """
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        self._check_rank(input)
        batched, batch_dim = input.ndim == 3, 0 if self.batch_first else 1
        if not batched:
            input = input.unsqueeze(batch_dim)
            if hx is not None:
                if hx.ndim != 2:
                    raise RuntimeError(
                        f"For unbatched 2-D input, hx should also be 2-D but got {hx.ndim}-D tensor"
                    )
                hx = hx.unsqueeze(1)
        elif hx is not None and hx.ndim != 3:
            raise RuntimeError(
                f"For batched 3-D input, hx should also be 3-D but got {hx.ndim}-D tensor"
            )
        if hx is None:
            hx = self._zeros(input)
        self._check_forward_args(input, (hx,))
        hiddens = hx.unbind(0)

        def run_layer(x, index, reverse):
            w_ih, w_hh, b_ih, b_hh = self._layer_weights(index)
            steps = F.linear(x, w_ih, b_ih).unbind(0)  # the input part, for every step at once
            h, outputs = hiddens[index], []
            for step in reversed(steps) if reverse else steps:
                h = self._step(step, h, w_ih, w_hh, b_ih, b_hh)
                outputs.append(h)
            return stack(outputs[::-1] if reverse else outputs, 0), h

        x = input.transpose(0, 1) if self.batch_first else input
        output, finals = self._stack_layers(x, run_layer)
        output, h_n = _transpose_(output) if self.batch_first else output, stack(finals, 0)
        if not batched:
            return output.squeeze(batch_dim), h_n.squeeze(1)
        return output, h_n


class RNN(_Elementary):
    """An Elman RNN over a sequence: h_t = tanh(x_t @ W_ih.T + b_ih + h_{t-1} @ W_hh.T + b_hh)
    (or relu); returns (output, h_n)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:  # nonlinearity comes 4th, before RNNBase's bias
            self.nonlinearity, args = args[3], args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity not in _NONLINEARITIES:
            raise ValueError(
                f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(f"RNN_{self.nonlinearity.upper()}", *args, **kwargs)

    def _step(self, x, h, w_ih, w_hh, b_ih, b_hh):
        return rnn_step(x, h, w_ih, w_hh, b_ih, b_hh, self.nonlinearity, pre_computed=True)


class GRU(_Elementary):
    """A GRU over a sequence (gates r, z, n as in GRUCell); returns (output, h_n)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def _step(self, x, h, w_ih, w_hh, b_ih, b_hh):
        return gru_step(x, h, w_ih, w_hh, b_ih, b_hh, pre_computed=True)


class LSTM(RNNBase):
    """An LSTM over a sequence: returns (output, (h_n, c_n)) with PyTorch's shapes.

    Each layer and direction runs as one fused operation (ops/rnn.py), as PyTorch does on the
    CPU: the graph has one MkldnnRnnLayerBackward0 node per layer and direction. LSTMCell shows
    the same step built from elementary operations.
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        """input (T, B, I), (B, T, I) with batch_first, or (T, I), or a PackedSequence (run step
        by step); hx = (h_0, c_0), each (layers * directions, B, H)."""
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        self._check_rank(input)
        batched, batch_dim = input.ndim == 3, 0 if self.batch_first else 1
        if not batched:
            input = input.unsqueeze(batch_dim)
        if hx is None:
            zeros = self._zeros(input)
            hx = (zeros, zeros)
        else:
            rank = 3 if batched else 2
            if hx[0].ndim != rank or hx[1].ndim != rank:
                kind = "batched 3-D" if batched else "unbatched 2-D"
                raise RuntimeError(
                    f"For {kind} input, hx and cx should also be {rank}-D but got "
                    f"({hx[0].ndim}-D, {hx[1].ndim}-D) tensors"
                )
            if not batched:
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self._check_forward_args(input, hx)

        def run_layer(x, index, reverse):
            w_ih, w_hh, b_ih, b_hh = self._layer_weights(index)
            if b_ih is None:  # PyTorch's kernel takes no biases then; adding zeros is the same
                b_ih = b_hh = creation.zeros(w_ih.shape[0], dtype=w_ih.dtype)
            x = x.flip(0) if reverse else x  # PyTorch's kernel runs backwards in time instead
            out, h, c = lstm_layer(
                x,
                hx[0][index],
                hx[1][index],
                w_ih,
                w_hh,
                b_ih,
                b_hh,
                num_layers=self.num_layers,
                batch_first=self.batch_first,
                train=self.training,
            )
            return (out.flip(0) if reverse else out), (h, c)

        x = input.transpose(0, 1) if self.batch_first else input
        output, finals = self._stack_layers(x.contiguous(), run_layer)
        h_n, c_n = (stack([final[k] for final in finals], 0) for k in (0, 1))
        output = output.transpose(0, 1) if self.batch_first else output
        if not batched:
            return output.squeeze(batch_dim), (h_n.squeeze(1), c_n.squeeze(1))
        return output, (h_n, c_n)
