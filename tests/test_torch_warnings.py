"""Warnings and refusals that torch gives around create_graph and detach_, given the same way."""

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
