"""Grad-mode forms, dtype facts, torch.testing.assert_close and torch's global switches, against
torch."""

import pytest
import torch

import mini_autograd as ma


def _grad_modes(lib):
    @lib.no_grad
    def bare(x):
        return x * 2

    @lib.no_grad()
    def called(x):
        return x * 2

    @lib.inference_mode()
    def inference(x):
        return x * 2

    x = lib.ones(1, requires_grad=True)
    with lib.inference_mode():
        inside = lib.is_inference_mode_enabled(), lib.is_grad_enabled()
        with lib.inference_mode(False):
            nested = lib.is_inference_mode_enabled(), lib.is_grad_enabled()
    after = lib.is_inference_mode_enabled(), lib.is_grad_enabled()
    return (
        bare(x).requires_grad,
        called(x).requires_grad,
        inference(x).requires_grad,
        inside,
        nested,
        after,
    )


def test_no_grad_and_inference_mode_forms_match_torch():
    assert _grad_modes(ma) == _grad_modes(torch)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_finfo_matches_torch(dtype):
    want, got = torch.finfo(getattr(torch, dtype)), ma.finfo(getattr(ma, dtype))
    for field in ("bits", "eps", "max", "min", "tiny", "resolution"):
        assert getattr(got, field) == getattr(want, field)
    assert repr(got) == repr(want)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
def test_iinfo_matches_torch(dtype):
    want, got = torch.iinfo(getattr(torch, dtype)), ma.iinfo(getattr(ma, dtype))
    assert (got.bits, got.max, got.min) == (want.bits, want.max, want.min)
    assert repr(got) == repr(want)


CLOSE_CASES = [
    ([1.0, 2.0, 3.0], [1.0, 2.5, 3.0]),
    ([[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 5.0]]),
    ([1.0, 2.0], [1.0, 2.0 + 1e-7]),
]


@pytest.mark.parametrize("actual, expected", CLOSE_CASES)
def test_assert_close_says_what_torch_says(actual, expected):
    def outcome(lib):
        try:
            lib.testing.assert_close(lib.tensor(actual), lib.tensor(expected))
        except AssertionError as error:
            return str(error)
        return "close"

    assert outcome(ma) == outcome(torch)


def test_assert_close_on_scalars_shapes_and_dtypes():
    for call in (
        lambda lib: lib.testing.assert_close(1.0, 2.0),
        lambda lib: lib.testing.assert_close(lib.zeros(2), lib.zeros(3)),
        lambda lib: lib.testing.assert_close(lib.zeros(2), lib.zeros(2, dtype=lib.int64)),
    ):
        with pytest.raises(AssertionError) as want:
            call(torch)
        with pytest.raises(AssertionError) as got:
            call(ma)
        assert str(got.value).replace("mini_autograd.", "torch.") == str(want.value)


def test_global_switches_are_accepted():
    ma.use_deterministic_algorithms(True)
    assert ma.are_deterministic_algorithms_enabled()
    ma.set_num_threads(1)
    assert ma.get_num_threads() >= 1
    ma.set_float32_matmul_precision("high")
    model = ma.nn.Linear(2, 1)
    assert ma.compile(model) is model
