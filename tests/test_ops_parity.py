"""Every op, run in torch and mini_autograd on the same float64 inputs, must agree to the letter.

The ops: the catalogue (op_catalogue.py), its in-place, setitem and view entries
(op_catalogue_views.py), and its convolutions, poolings and resamplings (op_catalogue_nn.py).
For each op and each requires_grad pattern of its inputs:
forward values; the recorded graph (node names, edges, `_saved_*` names and values, so conditional
saving is checked); first and second derivatives; which saved reads raise after a backward
without retain_graph, and whether a second backward raises.
"""

import numpy as np
import pytest
import torch
from op_catalogue import DTYPE_OPS, OPS, Op
from op_catalogue_nn import CONV_OPS, LOSS_OPS, POOL_OPS, RESAMPLE_OPS
from op_catalogue_views import VIEW_OPS
from parity_helpers import (
    FREED_MESSAGE,
    assert_close,
    compare_nested,
    derivatives,
    describe_graph,
    first_output,
    grad_masks,
    leaves,
    outcome,
    random_arrays,
    saved_reads,
    to_numpy,
    weights_like,
)

import mini_autograd as ma

pytestmark = [
    pytest.mark.filterwarnings("ignore:The use of `x.T` on tensors:UserWarning"),
    pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning"),
    pytest.mark.filterwarnings("ignore:Using a target size:UserWarning"),
]


@pytest.fixture(autouse=True)
def _atens_einsum_order(monkeypatch):
    """mini_autograd contracts three or more einsum operands left to right, as ATen does without
    opt_einsum; with that package installed (jax, for `make bench`, brings it) torch would pick
    another order, so another graph."""
    monkeypatch.setattr(torch.backends.opt_einsum, "enabled", False)


ALL_OPS = OPS + DTYPE_OPS + VIEW_OPS + CONV_OPS + POOL_OPS + RESAMPLE_OPS + LOSS_OPS
CASES = [
    pytest.param(op, mask, id=f"{op.id}-{''.join('g' if r else '_' for r in mask)}")
    for op in ALL_OPS
    for mask in op.masks or grad_masks(len(op.shapes))
]

# Where the output's version differs from torch's (values, graph and derivatives still match).
VERSION_DIFFERENCES = {
    "vec_mat": "torch computes vector @ matrix through an in-place squeeze_, bumping the version",
}


def arrays_of(op: Op):
    """The op's fixed input arrays, or random ones of its shapes and domain."""
    return list(op.arrays) or random_arrays(op.shapes, op.domain)


def run(lib, op: Op, mask):
    """Inputs, output and scalar loss (y * w).sum() of `op` on `lib`."""
    xs = leaves(lib, arrays_of(op), mask)
    y = first_output(op.fn(lib, *xs))
    loss = (y * lib.tensor(weights_like(y), dtype=lib.float64)).sum()
    return xs, y, loss


@pytest.mark.parametrize("op, mask", CASES)
def test_graph_matches_torch(op, mask):
    """Forward value, version, node names, edges and saved tensors (names and values) of the graph."""
    _, y_t, loss_t = run(torch, op, mask)
    _, y_m, loss_m = run(ma, op, mask)
    np.testing.assert_allclose(to_numpy(y_m), to_numpy(y_t), rtol=1e-12, atol=1e-12)
    assert y_m.shape == tuple(y_t.shape)
    assert (y_m.requires_grad, y_m.is_leaf) == (y_t.requires_grad, y_t.is_leaf)
    if op.id not in VERSION_DIFFERENCES:
        assert y_m._version == y_t._version
    assert describe_graph(y_m) == describe_graph(y_t)
    assert describe_graph(loss_m) == describe_graph(loss_t)


@pytest.mark.parametrize("op, mask", CASES)
def test_derivatives_match_torch(op, mask):
    """First derivatives, whether they have a graph, and Hessian-vector products (float64)."""
    arrays = arrays_of(op)
    expected = derivatives(torch, op.fn, arrays, mask)
    actual = derivatives(ma, op.fn, arrays, mask)
    compare_nested(actual, expected, op.id)


@pytest.mark.parametrize("op, mask", CASES)
def test_freeing_matches_torch(op, mask):
    """After backward without retain_graph: the same saved reads raise, and a second backward."""
    xs_t, _, loss_t = run(torch, op, mask)
    xs_m, _, loss_m = run(ma, op, mask)
    loss_t.backward()
    loss_m.backward()
    rtol = 1e-7 if op in DTYPE_OPS else 1e-10  # those ops take float32 steps
    for x_t, x_m in zip(xs_t, xs_m):
        assert_close(x_m.grad, x_t.grad, "grad", rtol=rtol, atol=1e-12)
    assert saved_reads(loss_m) == saved_reads(loss_t)
    second_t, second_m = outcome(loss_t.backward), outcome(loss_m.backward)
    assert second_m[0] == second_t[0]
    if second_t[0] == "raises":
        assert second_m == second_t
        assert second_m[2] == FREED_MESSAGE
    else:  # graphs without saved tensors accumulate a second time
        for x_t, x_m in zip(xs_t, xs_m):
            assert_close(x_m.grad, x_t.grad, "grad after a second backward", rtol=rtol)


@pytest.mark.parametrize("op, mask", CASES)
def test_retain_graph_keeps_saved_tensors(op, mask):
    """With retain_graph=True nothing is freed: the reads work and backward runs twice."""
    _, _, loss_t = run(torch, op, mask)
    xs_m, _, loss_m = run(ma, op, mask)
    loss_t.backward(retain_graph=True)
    loss_m.backward(retain_graph=True)
    assert saved_reads(loss_m) == saved_reads(loss_t)
    assert all(read == "ok" for _, _, read in saved_reads(loss_m))
    first = [None if x.grad is None else x.grad.numpy().copy() for x in xs_m]
    loss_m.backward()
    for x, g in zip(xs_m, first):
        if g is not None:
            np.testing.assert_allclose(x.grad.numpy(), 2 * g, rtol=1e-12)


# Where torch builds the backward pass out of other nodes than mini_autograd (values, first and
# second derivatives still match; only the graph of the gradient itself is shaped differently).
SCALAR_MUL = "torch multiplies by a Python number inside backward as MulBackward1 (mul.Scalar)"
CUMPROD_ZEROS = "torch's cumprod backward takes another formula through zeros (with cumsums)"
DOUBLE_BACKWARD_DIFFERENCES = {
    "sqrt": SCALAR_MUL,
    "sqrt_": SCALAR_MUL,
    "mul_": "torch saves self.clone() for mul_, so the saved self has a CloneBackward0",
    "cumprod_with_zeros": CUMPROD_ZEROS,
    "cumprod_with_a_zero": CUMPROD_ZEROS,
}
NORM_BACKWARD = (
    "torch's norm backward is built of other nodes (SgnBackward0...) than mini_autograd's"
)
DOUBLE_BACKWARD_DIFFERENCES.update({op.id: NORM_BACKWARD for op in OPS if op.id.startswith("norm")})


@pytest.mark.parametrize(
    "op",
    [
        pytest.param(
            op, marks=pytest.mark.xfail(strict=True, reason=DOUBLE_BACKWARD_DIFFERENCES[op.id])
        )
        if op.id in DOUBLE_BACKWARD_DIFFERENCES
        else op
        for op in OPS
    ],
    ids=[op.id for op in OPS],
)
def test_first_derivative_graph_matches_torch(op):
    """With create_graph=True the gradients carry a graph: the same nodes, edges and saved names."""
    arrays = random_arrays(op.shapes, op.domain)
    graphs = {}
    for lib in (torch, ma):
        xs = leaves(lib, arrays, [True] * len(arrays))
        y = first_output(op.fn(lib, *xs))
        grads = lib.autograd.grad(y.sum(), xs, create_graph=True)
        graphs[lib] = [describe_graph(g, values=False) for g in grads]
    assert graphs[ma] == graphs[torch]


def test_table_has_every_catalogue_op():
    """The catalogue of issue 3 is covered (a guard against entries silently disappearing)."""
    ids = {op.id for op in OPS}
    for required in (
        "add",
        "sub",
        "mul",
        "div",
        "pow_2",
        "pow_tensor",
        "rpow_number",
        "neg",
        "dot",
        "mv",
        "mm",
        "vec_mat",
        "3d_2d",
        "3d_3d",
        "exp",
        "log",
        "tanh",
        "sigmoid",
        "relu",
        "sqrt",
        "abs",
        "sum",
        "mean",
        "max",
        "max_dim",
        "reshape",
        "view",
        "reshape_noncontiguous",
        "transpose",
        "T",
        "t",
        "permute",
        "unsqueeze",
        "squeeze",
        "flatten",
        "expand",
        "index_int",
        "index_list",
        "index_bool_mask",
        "cat",
        "stack",
        "softmax",
        "log_softmax",
        "clone",
        "add_",
        "sub_",
        "mul_",
        "zero_",
        "fill_",
        "iadd",
        "isub",
        "rsub_number",
        "rdiv_number",
    ):
        assert required in ids
