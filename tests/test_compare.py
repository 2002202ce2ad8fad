"""compare(): one function run with mini_autograd and torch, and every kind of disagreement found."""

import numpy as np
import pytest
import torch

from mini_autograd.instruments.compare import compare
from mini_autograd.ops import derivatives

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3))
W = RNG.standard_normal((3, 4))
CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available here")


def two_losses(lib, x):
    """The welcome notebook's program, with one backward through both losses."""
    z = x**2 * 4
    return z.mean() + z.sum()


def two_losses_twice(lib, x):
    """The welcome notebook's puzzle: the second backward goes through freed buffers."""
    z = x**2 * 4
    loss1, loss2 = z.mean(), z.sum()
    loss1.backward()
    loss2.backward()
    return loss2


def tanh_layer(lib, x, w):
    return (x @ w).tanh().sum()


def separate_paths(lib, x, w):
    return x.tanh().sum() + (w * 2).sum()


def line_of(result, check):
    """The report line of one check."""
    return next(line for line in str(result).splitlines() if line.startswith(f"  {check} "))


def test_two_losses_agree():
    result = compare(two_losses, X, devices=("cpu",))
    assert result.ok
    assert str(result) == (
        "compare two_losses: mini_autograd vs torch\n"
        "cpu: agree\n"
        "  forward        max |diff| < 1e-05\n"
        "  grad x         max |diff| < 1e-05\n"
        "  node names     agree (6 nodes)\n"
        "  saved tensors  agree"
    )


def test_tanh_layer_agrees_and_text_is_stable():
    first = compare(tanh_layer, X, W, devices=("cpu",))
    assert first.ok
    assert repr(first) == repr(compare(tanh_layer, X, W, devices=("cpu",)))


def test_a_wrong_gradient_is_reported_with_the_input_it_reaches(monkeypatch):
    def broken(self, g):
        return (g * 0.5,)

    monkeypatch.setattr(derivatives.TanhBackward0, "apply", broken)
    result = compare(separate_paths, X, W, devices=("cpu",))
    assert not result.ok
    assert "cpu: MISMATCH in grad x\n" in str(result)
    assert line_of(result, "grad x").endswith("<- MISMATCH")
    assert line_of(result, "grad w") == "  grad w         max |diff| < 1e-05"


def test_inputs_that_do_not_require_grad_have_no_gradient_line():
    result = compare(tanh_layer, X, W, devices=("cpu",), requires_grad=(True, False))
    assert result.ok
    assert "grad x" in str(result) and "grad w" not in str(result)


def test_the_same_error_in_both_libraries_is_agreement():
    result = compare(two_losses_twice, X, devices=("cpu",))
    assert result.ok
    assert "  error          both raise RuntimeError: Trying to backward through" in str(result)


def test_an_error_in_one_library_only_is_a_mismatch():
    def only_in_torch(lib, x):
        if lib is torch:
            raise ValueError("torch says no")
        return x.sum()

    result = compare(only_in_torch, X, devices=("cpu",))
    assert not result.ok
    assert "only torch raises ValueError: torch says no" in str(result)


def test_a_different_node_name_is_found(monkeypatch):
    monkeypatch.setattr(derivatives.TanhBackward0, "name", lambda self: "TanhBackwardX")
    result = compare(tanh_layer, X, W, devices=("cpu",))
    assert not result.ok
    assert "node names     differ at node 1: TanhBackwardX vs TanhBackward0" in str(result)


def test_a_missing_saved_tensor_is_found(monkeypatch):
    monkeypatch.setattr(derivatives.TanhBackward0, "saved_tensors_info", lambda self: [])
    result = compare(tanh_layer, X, W, devices=("cpu",))
    assert not result.ok
    assert "saved tensors  differ at node 1 (TanhBackward0): {} vs {result}" in str(result)


def test_a_missing_device_is_one_stable_line(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    result = compare(tanh_layer, X, W)
    assert result.ok
    assert str(result).splitlines()[-1] == "cuda: not available on this machine"
    assert "not available on this machine" in result._repr_html_()


def test_html_marks_mismatches(monkeypatch):
    monkeypatch.setattr(derivatives.TanhBackward0, "apply", lambda self, g: (g * 0.5,))
    page = compare(tanh_layer, X, W, devices=("cpu",))._repr_html_()
    assert page.startswith("<p><b>compare tanh_layer</b>")
    assert "(mismatch)" in page


@pytest.mark.cuda
@CUDA
def test_cuda_agrees_and_reports_memory():
    result = compare(tanh_layer, X.astype(np.float32), W.astype(np.float32), devices=("cuda",))
    assert result.ok, str(result)
    assert "  cuda memory    " in str(result)
