"""The table of backward formulas (ops/derivatives.py) and its two backends (ops/formulas.py).

Without create_graph a table formula runs on numpy arrays: no Tensor is made and nothing is
recorded until a gradient reaches user code; with create_graph it runs on Tensors. Each UNARY
line is a whole operation: function, method, in-place form, torch name and node.
"""

from unittest import mock

import numpy as np
import pytest
import torch

import mini_autograd as ma
from mini_autograd.core.tensor import Tensor
from mini_autograd.ops import derivatives
from mini_autograd.ops.formulas import FormulaNode


def _chain(x):
    """Table operations only: mul, tanh, exp, sum (and the views of a transpose)."""
    return ((x * 3).tanh().t().exp() * x.t()).sum()


def test_backward_without_create_graph_makes_no_tensor():
    x = ma.tensor(np.arange(6.0).reshape(2, 3) / 10, requires_grad=True)
    loss, start = _chain(x), ma.tensor(1.0, dtype=ma.float64)  # (else backward makes it)
    made = mock.Mock(wraps=Tensor._make)
    with mock.patch.object(Tensor, "_make", staticmethod(made)):
        loss.backward(start)
    assert made.call_count == 0  # (.grad itself is made by AccumulateGrad, with _make_plain)
    assert type(x.grad) is Tensor and x.grad.grad_fn is None


def test_the_same_formulas_record_under_create_graph():
    values = np.arange(6.0).reshape(2, 3) / 10
    grads = []
    for lib in (ma, torch):
        x = lib.tensor(values, requires_grad=True)
        (g,) = lib.autograd.grad(_chain(x), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        grads.append((g.detach().numpy(), gg.numpy(), g.grad_fn.name()))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-12)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-12)
    assert grads[0][2] == grads[1][2]


def test_hooks_and_autograd_grad_are_given_tensors():
    x = ma.tensor([0.5, -1.0], requires_grad=True)
    y = x.tanh()
    seen = []
    y.register_hook(lambda g: seen.append(type(g)))
    y.grad_fn.register_prehook(lambda grads: seen.append(type(grads[0])))
    y.grad_fn.register_hook(lambda inputs, outputs: seen.append(type(inputs[0])))
    (g,) = ma.autograd.grad(y.sum(), x)
    assert seen == [Tensor, Tensor, Tensor] and type(g) is Tensor


def test_a_patched_apply_is_given_tensors():
    """A node's apply replaced by code written on Tensors (as chapter 05 does) still gets them."""
    x = ma.tensor([0.5, -1.0], requires_grad=True)
    with mock.patch.object(derivatives.TanhBackward0, "apply", lambda node, g: (g.neg(),)):
        x.tanh().sum().backward()
    assert x.grad.tolist() == [-1.0, -1.0]


def test_a_saved_integer_or_number_meets_the_gradient_in_its_dtype():
    """numpy would widen float32 * int64 (or * a float64 0-d array) to float64; torch does not."""
    for other in (ma.tensor([2, 3]), ma.tensor(2.5, dtype=ma.float64), 2.5):
        x = ma.tensor([1.0, 2.0], requires_grad=True)
        y = x * other
        y.retain_grad()
        (y * y).sum().backward()
        assert x.grad.dtype == y.grad.dtype == ma.float32


@pytest.mark.parametrize("name", derivatives.UNARY)
def test_a_unary_line_is_a_whole_operation(name):
    node = getattr(derivatives, derivatives.node_name(name))
    assert issubclass(node, FormulaNode) and node.__doc__.startswith(f"out = {name}(self)")
    x = ma.tensor([0.25, 0.5], requires_grad=True)
    for function in (getattr(ma, name), getattr(Tensor, name)):
        assert function(x).grad_fn.name() == node.__name__
    y = x.clone()
    getattr(y, f"{name}_")()
    assert y.grad_fn.name() == node.__name__
    assert name in ma.ops.__all__ and f"{name}_" in ma.ops.__all__ or name == "sign"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "op",
    [
        lambda x: x.relu(),
        lambda x: x.clamp(min=0.1),
        lambda x: x.clamp(max=0.1),
        lambda x: x.masked_fill(x > 0.5, 2.0),
    ],
)
def test_large_selections_by_a_bit_mask_match_torch_bit_for_bit(op, dtype):
    """where(cond, 0, grad) on a large array is computed with a bit mask (derivatives.where_arrays):
    the gradients, nan, inf and -0.0 included, are torch's to the bit."""
    rng = np.random.default_rng(0)
    values = rng.standard_normal((64, 128)).astype(dtype)
    grad = rng.standard_normal((64, 128)).astype(dtype)
    grad.flat[::7], grad.flat[::11], grad.flat[::13] = np.nan, -np.inf, -0.0
    values.flat[::17] = np.nan
    grads = []
    for lib in (ma, torch):
        x = lib.tensor(values, requires_grad=True)
        op(x).backward(lib.tensor(grad))
        grads.append(x.grad.numpy())
    assert grads[0].dtype == grads[1].dtype
    np.testing.assert_array_equal(grads[0].view(np.uint8), grads[1].view(np.uint8))
