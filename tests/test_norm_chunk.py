"""Tensor.norm and Tensor.chunk beyond their gradients: node names, chunk shapes and views, the
gradient of a zero norm, and errors, compared with torch. Their values, graphs, derivatives and
freeing are the op catalogue's entries (norm_*, chunk_*), checked by test_ops_parity.py.
"""

import numpy as np
import pytest
import torch
from parity_helpers import assert_close, outcome

import mini_autograd as ma


def test_node_names_are_torchs():
    x = ma.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    assert x.norm(2, dim=1).grad_fn.name() == "LinalgVectorNormBackward0"
    pieces = x.chunk(4, 1)
    assert [p.grad_fn.name() for p in pieces] == ["SplitBackward0"] * 4
    assert len({id(p.grad_fn) for p in pieces}) == 1
    assert [p._output_nr for p in pieces] == [0, 1, 2, 3]


def test_chunk_shapes_and_views_match_torch():
    for size, chunks in [(8, 4), (5, 4), (7, 3), (3, 5), (1, 2)]:
        ours = ma.arange(size).chunk(chunks)
        theirs = torch.arange(size).chunk(chunks)
        assert [tuple(p.shape) for p in ours] == [tuple(p.shape) for p in theirs]
    x = ma.zeros(2, 4)
    x.chunk(2, 1)[1].add_(1.0)  # a view: writes go to x (no grad here)
    assert_close(x.numpy(), np.array([[0, 0, 1, 1], [0, 0, 1, 1]]))


def test_norm_of_zeros_has_a_zero_gradient_as_in_torch():
    for lib in (ma, torch):
        x = lib.zeros(3, dtype=lib.float64, requires_grad=True)
        x.norm().backward()
        assert_close(x.grad.numpy(), np.zeros(3))


def test_errors_match_torch():
    for call in (
        lambda lib: lib.ones(3).chunk(0),
        lambda lib: lib.arange(3).norm(),
        lambda lib: lib.ones(3, 2).chunk(2, 3),
    ):
        assert outcome(call, ma) == outcome(call, torch)


def test_a_torch_tensor_in_a_mini_autograd_op_says_to_write_lib():
    t = torch.ones(3)
    for call in (lambda: ma.ones(3) * t, lambda: ma.cat([t]), lambda: ma.ones(3) + t):
        with pytest.raises(
            TypeError, match=r"got a torch\.Tensor.*write `lib\.` instead of `ma\.`"
        ):
            call()
