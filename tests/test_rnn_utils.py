"""torch.nn.utils.rnn against torch: packing and padding (values, reprs, the recorded graph,
gradients), PackedSequence through RNN, GRU and LSTM (values and gradients), and error texts."""

import numpy as np
import pytest
import torch

import mini_autograd as ma
from tests.parity_helpers import LIBS, assert_close, describe_graph, error_of


def _utils(lib):
    return lib.nn.utils.rnn


@pytest.mark.parametrize(
    "batch_first, lengths, enforce_sorted, total_length",
    [
        (False, [4, 3, 2], True, None),
        (False, [2, 4, 3], False, 6),
        (True, [3, 1, 3], False, None),
    ],
)
def test_pack_and_pad_match_torch(batch_first, lengths, enforce_sorted, total_length):
    """The packed data and batch sizes, the repr, both graphs (PackPaddedSequenceBackward0; the
    CopySlices of padding), the lengths and the gradient back to the padded input."""
    data = np.random.default_rng(0).standard_normal((3, 4, 2) if batch_first else (4, 3, 2))
    got = {}
    for lib in LIBS:
        x = lib.tensor(data, requires_grad=True)
        packed = _utils(lib).pack_padded_sequence(x, lengths, batch_first, enforce_sorted)
        padded, lens = _utils(lib).pad_packed_sequence(
            packed, batch_first, padding_value=-1.0, total_length=total_length
        )
        (padded * padded).sum().backward()
        got[lib] = (
            repr(packed).replace("mini_autograd", "torch"),
            describe_graph(packed.data),
            describe_graph(padded),
            [padded, lens, x.grad],
        )
    assert got[ma][:3] == got[torch][:3]
    for mine, theirs in zip(got[ma][3], got[torch][3], strict=True):
        assert_close(mine, theirs, "pad_packed_sequence")


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_and_pack_sequence_match_torch(batch_first, padding_side):
    got = {}
    for lib in LIBS:
        seqs = [lib.ones(3, 2, requires_grad=True), lib.ones(1, 2) * 2, lib.ones(2, 2) * 3]
        padded = _utils(lib).pad_sequence(seqs, batch_first, -1.0, padding_side)
        packed = _utils(lib).pack_sequence(seqs, enforce_sorted=False)
        unpacked = _utils(lib).unpack_sequence(packed)
        got[lib] = (describe_graph(padded), repr(packed), [padded, *unpacked])
    assert got[ma][0] == got[torch][0]
    assert got[ma][1].replace("mini_autograd", "torch") == got[torch][1]
    for mine, theirs in zip(got[ma][2], got[torch][2], strict=True):
        assert_close(mine, theirs, "pad_sequence")


def _packed_run(lib, kind, options, dtype, with_state):
    """A layer on a packed batch of three sequences of lengths 3, 5, 2 (unsorted): the padded
    output, the final states, and the gradients of a loss of both."""
    lib.manual_seed(0)
    float_type = getattr(lib, dtype)
    layer = getattr(lib.nn, kind)(3, 4, **options).to(float_type)
    x = lib.randn(5, 3, 3, dtype=float_type, requires_grad=True)
    packed = _utils(lib).pack_padded_sequence(x, [3, 5, 2], enforce_sorted=False)
    states = None
    if with_state:
        layers = options.get("num_layers", 1) * (2 if options.get("bidirectional") else 1)
        h0 = lib.randn(layers, 3, 4, dtype=float_type)
        states = (h0, h0 * 0.5) if kind == "LSTM" else h0
    out, final = layer(packed, states)
    padded, _ = _utils(lib).pad_packed_sequence(out)
    finals = final if isinstance(final, tuple) else (final,)
    loss = (padded * padded).sum() + sum((f * f * 2).sum() for f in finals)
    loss.backward()
    return [padded, *finals, x.grad, *(p.grad for p in layer.parameters())], type(out).__name__


@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize(
    "options",
    [{}, {"num_layers": 2}, {"bidirectional": True}, {"num_layers": 2, "bidirectional": True}],
    ids=["one", "two-layers", "bidirectional", "both"],
)
@pytest.mark.parametrize("with_state", [False, True], ids=["zeros", "given-state"])
def test_packed_sequence_through_recurrent_layers_matches_torch(kind, options, with_state):
    """Each sequence steps only over its own length: the outputs, each sequence's final state
    (taken at its end forwards, started at its end backwards) and every gradient."""
    for dtype, rtol in (("float64", 1e-10), ("float32", 1e-5)):
        mine, name = _packed_run(ma, kind, options, dtype, with_state)
        theirs, torch_name = _packed_run(torch, kind, options, dtype, with_state)
        assert name == torch_name == "PackedSequence"
        for k, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            assert_close(a, b, f"{kind} {dtype} output {k}", rtol=rtol, atol=rtol)


ERRORS = {
    "unsorted lengths": lambda lib: _utils(lib).pack_padded_sequence(lib.zeros(3, 2), [1, 3]),
    "zero length": lambda lib: _utils(lib).pack_padded_sequence(lib.zeros(3, 2), [3, 0]),
    "lengths and batch": lambda lib: _utils(lib).pack_padded_sequence(lib.zeros(3, 2), [3]),
    "total_length too small": lambda lib: _utils(lib).pad_packed_sequence(
        _utils(lib).pack_sequence([lib.zeros(3), lib.zeros(2)]), total_length=2
    ),
    "PackedSequence without data": lambda lib: _utils(lib).PackedSequence(),
    "pad_sequence of a number": lambda lib: _utils(lib).pad_sequence(3),
    "pad_sequence side": lambda lib: _utils(lib).pad_sequence([lib.zeros(2)], padding_side="up"),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors_match_torch(case):
    expected = error_of(ERRORS[case], torch)
    assert expected is not None, "torch accepts this: the case is wrong"
    assert error_of(ERRORS[case], ma) == expected
