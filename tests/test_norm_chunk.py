"""Tensor.norm and Tensor.chunk, run in torch and mini_autograd on the same float64 inputs.

Values, the recorded graph (node names, edges, `_saved_*` names and values), first and second
derivatives, and the freed-graph behaviour must agree, as in test_ops_parity.py.
"""

import numpy as np
import pytest
import torch
from parity_helpers import (
    assert_close,
    compare_nested,
    derivatives,
    describe_graph,
    first_output,
    leaves,
    outcome,
    random_arrays,
    weights_like,
)

import mini_autograd as ma


def _pieces(combine, *args, **kwargs):
    return lambda lib, x: combine(x.chunk(*args, **kwargs))


PROGRAMS = [
    ("norm", lambda lib, x: x.norm(), (3, 4)),
    ("norm_2_dim1", lambda lib, x: x.norm(2, dim=1), (3, 4)),
    ("norm_p2_keepdim", lambda lib, x: x.norm(p=2, dim=0, keepdim=True), (3, 4)),
    ("norm_1", lambda lib, x: x.norm(1, dim=1), (3, 4)),
    ("norm_3_dims", lambda lib, x: x.norm(3, dim=(0, 2)), (2, 3, 4)),
    ("norm_float_p", lambda lib, x: x.norm(1.5), (3, 4)),
    ("norm_inf", lambda lib, x: x.norm(float("inf"), dim=1), (3, 4)),
    ("chunk_4_1", _pieces(lambda c: c[0] * c[3] + c[1].tanh(), 4, 1), (3, 8)),
    ("chunk_uneven", _pieces(lambda c: c[0].sum() + (c[2] * 2).sum(), 3, 0), (5, 2)),
    ("chunk_dim_kw", _pieces(lambda c: c[1].exp(), 2, dim=-1), (3, 4)),
    ("chunk_one", _pieces(lambda c: c[0] * 3, 1), (3, 4)),
    ("chunk_all_used", _pieces(lambda c: c[0] - c[1], 2), (4, 3)),
]
IDS = [p[0] for p in PROGRAMS]


@pytest.mark.parametrize(("name", "fn", "shape"), PROGRAMS, ids=IDS)
def test_values_graph_and_derivatives_match_torch(name, fn, shape):
    arrays = random_arrays([shape])
    ours = derivatives(ma, fn, arrays, [True])
    theirs = derivatives(torch, fn, arrays, [True])
    compare_nested(ours, theirs, name)
    xs_ours, xs_theirs = leaves(ma, arrays, [True]), leaves(torch, arrays, [True])
    y_ours, y_theirs = fn(ma, *xs_ours), fn(torch, *xs_theirs)
    assert describe_graph(first_output(y_ours)) == describe_graph(first_output(y_theirs))


@pytest.mark.parametrize(("name", "fn", "shape"), PROGRAMS, ids=IDS)
def test_a_second_backward_behaves_as_in_torch(name, fn, shape):
    arrays = random_arrays([shape])
    results = []
    for lib in (ma, torch):
        (x,) = leaves(lib, arrays, [True])
        y = first_output(fn(lib, x))
        loss = (y * lib.tensor(weights_like(y), dtype=lib.float64)).sum()
        loss.backward()
        results.append(outcome(loss.backward))
    assert results[0] == results[1]


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
