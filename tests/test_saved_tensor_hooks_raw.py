"""Hooks on one saved tensor (`grad_fn._raw_saved_self.register_hooks`), as in torch."""

import pytest
import torch

import mini_autograd as ma


@pytest.mark.parametrize("lib", [torch, ma], ids=["torch", "mini_autograd"])
def test_hooks_on_one_saved_tensor_pack_at_once_and_unpack_in_backward(lib):
    calls = []

    def pack(t):
        calls.append("pack")
        return t.detach() * 1

    def unpack(t):
        calls.append("unpack")
        return t

    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.pow(2)
    y.grad_fn._raw_saved_self.register_hooks(pack, unpack)
    assert calls == ["pack"]
    y.sum().backward()
    assert calls == ["pack", "unpack"]
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


def _error(lib, call):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    with pytest.raises(RuntimeError) as info:
        call(y)
    return str(info.value)


def test_registering_twice_or_after_freeing_fails_as_in_torch():
    def twice(y):
        y.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)
        y.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)

    def after_free(y):
        y.sum().backward()
        y.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)

    for call in (twice, after_free):
        assert _error(ma, call) == _error(torch, call)


def test_raw_saved_of_an_output_packs_the_output():
    packed = []
    x = ma.tensor([0.0, 1.0], requires_grad=True)
    y = x.exp()
    y.grad_fn._raw_saved_result.register_hooks(lambda t: packed.append(t) or t, lambda t: t)
    assert packed[0].tolist() == y.tolist()
    y.sum().backward()
    assert x.grad.tolist() == y.tolist()
