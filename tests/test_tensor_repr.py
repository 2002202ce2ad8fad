"""repr(tensor) against torch's: the same digits, widths, summaries, line breaks and suffixes,
under the default and changed print options."""

import numpy as np
import pytest
import torch

import mini_autograd as ma

ARRAYS = {
    "2-d": np.arange(15.0).reshape(3, 5) * 1.1,
    "short": np.array([1.5, 2.25]),
    "summarised": np.arange(2000.0),
    "summarised rows": np.arange(3000.0).reshape(100, 30),
    "scientific": np.array([1e-5, 1.0]),
    "wrapped rows": np.arange(40.0).reshape(5, 8) / 7,
    "empty": np.zeros((0, 3)),
    "empty integers": np.zeros(0, dtype=np.int64),
    "integers": np.arange(7),
    "a scalar": np.array(3.25),
    "nan and inf": np.array([np.nan, 1.0, -np.inf]),
    "nan with fractions": np.array([np.nan, 0.5, 12.25]),
    "zeros and large": np.array([0.0, 0.0, 123456.0]),
    "all zeros": np.zeros(3),
    "negative zero": np.array([-0.0, 2.0]),
    "booleans": np.array([True, False]),
}
OPTIONS = [
    {},
    {"precision": 2},
    {"sci_mode": False},
    {"threshold": 5, "edgeitems": 2},
    {"linewidth": 40},
]


def _reprs(array, dtype, requires_grad, options):
    out = []
    for lib in (torch, ma):
        lib.set_printoptions(**options)
        try:
            t = lib.tensor(array, dtype=getattr(lib, dtype) if array.dtype.kind == "f" else None)
            if requires_grad and array.dtype.kind == "f":
                t = t.requires_grad_() * 1
            out.append(repr(t).replace("mini_autograd.", "torch."))
        finally:
            lib.set_printoptions(profile="default", sci_mode=None)
    return out


@pytest.mark.parametrize("options", OPTIONS, ids=str)
@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("name", list(ARRAYS))
def test_float32_tensors_print_as_torchs(name, requires_grad, options):
    want, got = _reprs(ARRAYS[name], "float32", requires_grad, options)
    assert got == want


@pytest.mark.parametrize("name", list(ARRAYS))
def test_other_dtypes_print_the_same_words(name):
    # "dtype=mini_autograd.float64" is longer than torch's, so it may start a line of its own
    want, got = _reprs(ARRAYS[name], "float64", True, {})
    assert got.split() == want.split()


def test_the_default_dtype_is_the_one_not_printed():
    try:
        torch.set_default_dtype(torch.float64)
        ma.set_default_dtype(ma.float64)
        assert repr(ma.tensor([1.5])) == repr(torch.tensor([1.5])) == "tensor([1.5000])"
        assert repr(ma.tensor([1.5], dtype=ma.float32)).endswith("dtype=mini_autograd.float32)")
    finally:
        torch.set_default_dtype(torch.float32)
        ma.set_default_dtype(ma.float32)


def test_get_printoptions():
    ma.set_printoptions(precision=3)
    try:
        assert ma.get_printoptions()["precision"] == 3
    finally:
        ma.set_printoptions(profile="default")
    assert ma.get_printoptions()["precision"] == 4


def test_a_no_grad_view_whose_base_changed_prints_an_invalid_grad_fn():
    """PyTorch's repr prints grad_fn=<Invalid> where reading .grad_fn would raise."""

    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.no_grad():
            view = x[:1]
            view.mul_(2)
        return repr(view)

    assert program(ma) == program(torch) == "tensor([2.], grad_fn=<Invalid>)"


FORMATTED = {
    "0-d, a spec": lambda lib: f"{lib.tensor(1.23456):.3f}",
    "0-d, no spec": lambda lib: f"{lib.tensor(2.0)}",
    "0-d requiring grad": lambda lib: f"{lib.tensor(1.5, requires_grad=True) * 2:.2f}",
    "1-d, no spec": lambda lib: f"{lib.tensor([1.5, 2.0])}",
    "1-d, a spec": lambda lib: f"{lib.tensor([1.5]):.3f}",
    "0-d Parameter, no spec": lambda lib: f"{lib.nn.Parameter(lib.tensor(1.5))}",
    "0-d Parameter, a spec": lambda lib: f"{lib.nn.Parameter(lib.tensor(1.5)):.3f}",
}


@pytest.mark.parametrize("name", list(FORMATTED))
def test_format_specs_as_in_torch(name):
    def outcome(lib):
        try:
            return FORMATTED[name](lib)
        except TypeError as error:
            return f"TypeError: {error}"

    assert outcome(ma) == outcome(torch)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.tensor([[1.0, 5.0], [3.0, 2.0]]).max(dim=1),
        lambda lib: lib.tensor([[1.0, 5.0], [3.0, 2.0]], requires_grad=True).min(0),
        lambda lib: lib.tensor([1.0, 5.0, 3.0]).sort(descending=True),
        lambda lib: lib.tensor([1.0, 5.0, 3.0]).topk(2),
        lambda lib: lib.tensor([1.0, 5.0, 3.0]).median(0),
    ],
)
def test_named_results_print_as_torch_return_types(call):
    mine, theirs = call(ma), call(torch)
    assert repr(mine).replace("mini_autograd.", "torch.") == repr(theirs)
    assert type(mine).__name__ == type(theirs).__name__ and tuple(mine._fields) == (
        "values",
        "indices",
    )


STRIDED = {
    "contiguous": lambda lib: lib.arange(6.0).reshape(2, 3),
    "transposed": lambda lib: lib.arange(6.0).reshape(2, 3).t(),
    "sliced": lambda lib: lib.arange(6.0).reshape(2, 3)[:, ::2],
    "expanded": lambda lib: lib.arange(3.0).expand(2, 2, 3),
    "unsqueezed": lambda lib: lib.arange(6.0).reshape(2, 3).unsqueeze(1),
    "empty": lambda lib: lib.zeros(0, 3),
    "0-d": lambda lib: lib.tensor(2.0),
}


@pytest.mark.parametrize("dim", [None, 0, -1, 3])
@pytest.mark.parametrize("name", STRIDED)
def test_stride_as_torch(name, dim):
    """x.stride() and x.stride(dim): steps in elements, or torch's IndexError."""
    results = []
    for lib in (torch, ma):
        x = STRIDED[name](lib)
        try:
            results.append(x.stride() if dim is None else x.stride(dim))
        except IndexError as error:
            results.append(("IndexError", str(error)))
    assert results[1] == results[0]
