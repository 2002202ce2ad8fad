"""Warnings and refusals that torch gives around create_graph and detach_, given the same way."""

import subprocess
import sys
import warnings

import pytest
import torch

import mini_autograd as ma
from mini_autograd.core import errors


def _warnings_of(lib, calls):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for call in calls:
            call(lib)
    return [str(w.message).split(" (Triggered internally")[0] for w in caught]


def test_backward_with_create_graph_warns_once_about_the_reference_cycle(monkeypatch):
    monkeypatch.setattr(errors, "_warned", set())  # as in a fresh process

    def backward_create_graph(lib):
        x = lib.ones(3, requires_grad=True)
        (x**3).sum().backward(create_graph=True)

    def grad_create_graph(lib):
        x = lib.ones(3, requires_grad=True)
        lib.autograd.grad((x**3).sum(), x, create_graph=True)

    got = _warnings_of(ma, [grad_create_graph, backward_create_graph, backward_create_graph])
    assert got == [errors.CREATE_GRAPH_WITH_BACKWARD]
    if torch_warned := _warnings_of(torch, [backward_create_graph]):  # torch warns once too
        assert torch_warned == got


@pytest.mark.parametrize(
    "make_view",
    [
        lambda lib: lib.ones(3)[:2],
        lambda lib: lib.ones(3, requires_grad=True).view(3),
        lambda lib: (lib.ones(3, requires_grad=True) * 2)[1:],
    ],
)
def test_detach_in_place_refuses_views(make_view):
    with pytest.raises(RuntimeError) as want:
        make_view(torch).detach_()
    with pytest.raises(RuntimeError) as got:
        make_view(ma).detach_()
    assert str(got.value) == str(want.value)


def test_detach_in_place_of_a_detached_tensor_works_and_shares_the_version():
    for lib in (torch, ma):
        x = lib.ones(3, requires_grad=True)
        y = x.detach()
        assert y.detach_() is y
        y.add_(1)
        assert x._version == y._version == 1


SCALAR_CONVERSIONS = [
    *("float(y)", "complex(y)", "'%.2f' % y", "int(y)", "y.item()", "f'{y[0]:.2f}'"),
    "lib.set_grad_enabled(False); float(y)",
]


@pytest.mark.parametrize("conversion", SCALAR_CONVERSIONS)
def test_float_of_a_tensor_that_requires_grad_warns_as_torch(conversion):
    """float() and complex() of a tensor that requires grad warn (once per process, as torch's
    TORCH_WARN_ONCE) while grad mode is on; int(), item() and formatting do not. Each library
    runs in a fresh process."""
    program = (
        "import warnings, {lib} as lib\n"
        "y = lib.ones(1, requires_grad=True) * 2\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    CONVERSION; CONVERSION\n"
        "print([str(w.message).split(' (Triggered internally')[0] for w in caught])\n"
    ).replace("CONVERSION", conversion)
    outputs = [run.stdout for run in _run_on_both(program)]
    assert outputs[1] == outputs[0]


def _run_on_both(program):
    """The finished runs of `program` in a fresh Python, {lib} as torch, then as mini_autograd."""
    return [
        subprocess.run(
            [sys.executable, "-c", program.replace("{lib}", lib)],
            capture_output=True,
            text=True,
            check=True,
        )
        for lib in ("torch", "mini_autograd")
    ]


OVERFLOWING = """
import {lib} as lib
x = lib.tensor([1e30, 0.0, -1.0], requires_grad=True)
y = (x * x).pow(2).exp() / x
z = (x.log() + y.sum() + (x.view(3, 1) @ x.view(1, 3)).sum()).sum()
z.backward()
print(lib.isfinite(x.grad).tolist(), lib.isfinite(z).item())
"""


def test_overflow_and_nan_give_no_warnings_as_in_torch():
    """inf and nan come without a word in torch; numpy's "overflow encountered in ..." warnings
    from mini_autograd's code are not shown (run with Python's default warning filters)."""
    runs = _run_on_both(OVERFLOWING)
    assert (runs[1].stdout, runs[1].stderr) == (runs[0].stdout, runs[0].stderr)
    assert runs[0].stderr == ""
