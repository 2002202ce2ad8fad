"""Variable-length sequences, as in torch.nn.utils.rnn: PackedSequence, pack_padded_sequence,
pad_packed_sequence, pad_sequence, pack_sequence, unpack_sequence, unpad_sequence.

Packing is one recorded node, PackPaddedSequenceBackward0, as in PyTorch; padding (of a packed
sequence, or of a list of tensors) copies pieces into a tensor of the padding value in place,
as ATen does, so the graph is its chain of CopySlices.
"""

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from ... import creation
from ...core import dtypes
from ...core.node import Node
from ...core.tensor import Tensor
from ...ops.convolution import constant_pad_nd
from ...ops.recording import record
from ...ops.shape import stack


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def invert_permutation(permutation):
    """The permutation that undoes `permutation` (None stays None)."""
    if permutation is None:
        return None
    output = permutation.new_zeros(permutation.shape)
    return output.scatter_(0, permutation, creation.arange(0, permutation.numel()))


class PackedSequence(PackedSequence_):
    """The data of a batch of sequences, time step after time step (`batch_sizes[t]` rows at step
    t, the longest sequences first), and the order the sequences were sorted in."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """The data converted by Tensor.to (the batch sizes stay as they are)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    @property
    def is_cuda(self):
        """False: mini_autograd computes on the CPU."""
        return False

    def is_pinned(self):
        """False: mini_autograd's memory is never pinned."""
        return False


class PackPaddedSequenceBackward0(Node):
    """data = the rows input[t, :batch_sizes[t]] one after the other:  d input = g's rows put back,
    zeros in the padding."""

    __slots__ = ()

    def apply(self, g):
        sizes, batch_first = self._saved["input_sym_sizes"], self._saved["batch_first"]
        batch_sizes = self.saved("result1")._data
        batch = sizes[0] if batch_first else sizes[1]
        steps, offset = [], 0
        for size in batch_sizes:
            rows = g[offset : offset + size]
            steps.append(constant_pad_nd(rows, (0, 0) * (g.ndim - 1) + (0, batch - size)))
            offset += size
        grad = stack(steps)
        if len(batch_sizes) < (sizes[1] if batch_first else sizes[0]):  # padding after the longest
            missing = (sizes[1] if batch_first else sizes[0]) - len(batch_sizes)
            grad = constant_pad_nd(grad, (0, 0) * (grad.ndim - 1) + (0, missing))
        return (grad.transpose(0, 1) if batch_first else grad,)


def _pack_padded_sequence(input, lengths, batch_first):
    """(data, batch_sizes): the rows of each time step that belong to a sequence, steps in order."""
    x = input._data.swapaxes(0, 1) if batch_first else input._data
    lengths = lengths._data
    if x.shape[1] != len(lengths):
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
            f"(batch_size={x.shape[1]})"
        )
    if len(lengths) and lengths[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' "
            "that is <= 0"
        )
    if np.any(lengths[1:] > lengths[:-1]):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
            "sidestep this requirement if you do not need ONNX exportability."
        )
    batch_sizes = np.array([(lengths > t).sum() for t in range(lengths[0])], np.int64)
    data = np.concatenate([x[t, :size] for t, size in enumerate(batch_sizes)])
    sizes = Tensor._make(batch_sizes)
    saved = {"batch_first": batch_first, "input_sym_sizes": input._data.shape, "result1": sizes}
    return record(PackPaddedSequenceBackward0, data, (input,), saved), sizes


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """The padded batch input (T, B, *) (or (B, T, *)) packed: the rows of each time step that
    belong to a sequence, lengths sorted longest first (or sorted here, enforce_sorted=False)."""
    if not isinstance(lengths, Tensor):
        lengths = creation.as_tensor(lengths, dtype=dtypes.int64)
    else:
        lengths = lengths.to(dtype=dtypes.int64)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = lengths.sort(descending=True)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack_padded_sequence(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def _pad_packed_sequence(data, batch_sizes, batch_first, padding_value, total_length):
    """(padded, lengths): each run of time steps with the same batch size copied into place."""
    sizes = [int(b) for b in batch_sizes._data]
    output = creation.full(
        (total_length, sizes[0], *data.shape[1:]), padding_value, dtype=data.dtype
    )
    lengths = np.zeros(sizes[0], np.int64)
    start = offset = 0
    for t in range(1, len(sizes) + 1):
        size = sizes[t] if t < len(sizes) else 0
        if size != sizes[start]:
            rows = (t - start) * sizes[start]
            piece = data[offset : offset + rows].view(t - start, sizes[start], *data.shape[1:])
            output.narrow(0, start, t - start).narrow(1, 0, sizes[start]).copy_(piece)
            lengths[size : sizes[start]] = t
            start, offset = t, offset + rows
    output = output.transpose(0, 1) if batch_first else output
    return output, Tensor._make(lengths)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """(padded, lengths): a packed sequence as a padded batch (T, B, *) (or (B, T, *)) in the
    order it was given to pack_padded_sequence, and each sequence's length."""
    max_seq_length = sequence.batch_sizes.size(0)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{max_seq_length}"
            )
        max_seq_length = total_length
    padded, lengths = _pad_packed_sequence(
        sequence.data, sequence.batch_sizes, batch_first, padding_value, max_seq_length
    )
    unsorted = sequence.unsorted_indices
    if unsorted is not None:
        return padded.index_select(0 if batch_first else 1, unsorted), lengths[unsorted]
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """The tensors (L_i, *) as one (max L, B, *) (or (B, max L, *)), each copied into a tensor of
    padding_value, at the start of its column (padding_side='right') or at its end."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(
            "pad_sequence: Expected iterable for input sequences, but got arg of type: "
            f"{type(sequences)}"
        )
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    longest = max(s.shape[0] for s in sequences)
    trailing = sequences[0].shape[1:]
    shape = (len(sequences), longest) if batch_first else (longest, len(sequences))
    out = creation.full((*shape, *trailing), padding_value, dtype=sequences[0].dtype)
    for i, s in enumerate(sequences):
        start = 0 if padding_side == "right" else longest - s.shape[0]
        out.select(0 if batch_first else 1, i).narrow(0, start, s.shape[0]).copy_(s)
    return out


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The padded batch cut back into its sequences, each of its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[: int(n)] for seq, n in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """pack_padded_sequence of pad_sequence(sequences), with their lengths."""
    lengths = creation.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The sequences a packed sequence holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
]
