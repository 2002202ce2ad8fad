"""Creation functions, dtypes, devices and random numbers against torch's: the same calls give the
same values, dtypes and errors, and the same seed gives the same random numbers."""

import numpy as np
import pytest
import torch

import mini_autograd as ma

RANDOM_CALLS = {
    "randn small": lambda lib: lib.randn(3),
    "randn twice (the spare normal)": lambda lib: (lib.randn(1), lib.randn(1), lib.randn(3)),
    "randn 2-d": lambda lib: lib.randn(4, 5),
    "randn ragged blocks": lambda lib: lib.randn(37),
    "randn size keyword": lambda lib: lib.randn(size=(2, 9), dtype=lib.float, device="cpu"),
    "randn float64": lambda lib: (lib.randn(5, dtype=lib.double), lib.randn(40, dtype=lib.float64)),
    "randn requires_grad": lambda lib: lib.randn((), requires_grad=True),
    "rand": lambda lib: (lib.rand(7), lib.rand(3, 2, dtype=lib.float64)),
    "randint low high": lambda lib: lib.randint(3, 10, (4, 5)),
    "randint high only": lambda lib: lib.randint(10, (6,)),
    "randint size keyword": lambda lib: lib.randint(low=0, high=5, size=(3,)),
    "randint wide range": lambda lib: lib.randint(-5, 2**40, (3,)),
    "randperm": lambda lib: lib.randperm(30),
    "normal numbers": lambda lib: lib.normal(2.0, 3.0, (4,)),
    "normal tensors": lambda lib: lib.normal(lib.zeros(20), lib.ones(20) * 2),
    "randn_like": lambda lib: lib.randn_like(lib.zeros(3, 6, dtype=lib.float64)),
    "rand_like": lambda lib: lib.rand_like(lib.zeros(5)),
    "bernoulli probabilities": lambda lib: lib.bernoulli(lib.full((12,), 0.3)),
    "mixed stream": lambda lib: (lib.rand(3), lib.randn(2), lib.randint(0, 4, (5,)), lib.randn(17)),
}


def _values(result):
    results = result if isinstance(result, tuple) else (result,)
    return [(np.asarray(r.detach().numpy()), str(r.dtype).split(".")[-1]) for r in results]


@pytest.mark.parametrize("seed", [0, 42, 2**40 + 3])
@pytest.mark.parametrize("name", list(RANDOM_CALLS))
def test_the_same_seed_gives_torchs_random_numbers(name, seed):
    torch.manual_seed(seed)
    expected = _values(RANDOM_CALLS[name](torch))
    ma.manual_seed(seed)
    got = _values(RANDOM_CALLS[name](ma))
    for (want, want_dtype), (have, have_dtype) in zip(expected, got, strict=True):
        assert have_dtype == want_dtype
        assert have.shape == want.shape
        # torch's vectorised log/cos may differ from numpy's in the last bit of a float32
        np.testing.assert_allclose(have, want, rtol=1e-6, atol=1e-6)


def test_a_learners_linear_layer_starts_from_torchs_weights():
    torch.manual_seed(1)
    expected = torch.nn.Linear(3, 2)
    ma.manual_seed(1)
    got = ma.nn.Linear(3, 2)
    np.testing.assert_allclose(got.weight.detach().numpy(), expected.weight.detach().numpy())
    np.testing.assert_allclose(got.bias.detach().numpy(), expected.bias.detach().numpy())


def test_rng_state_round_trip():
    ma.manual_seed(5)
    state = ma.get_rng_state()
    first = ma.randn(3).tolist()
    ma.set_rng_state(state)
    assert ma.randn(3).tolist() == first
    assert ma.initial_seed() == 5


CREATION_CALLS = {
    "zeros": lambda lib: lib.zeros(2, 3),
    "zeros tuple": lambda lib: lib.zeros((2, 3), dtype=lib.float64),
    "zeros size keyword": lambda lib: lib.zeros(size=(4,)),
    "ones list": lambda lib: lib.ones([3]),
    "empty": lambda lib: lib.empty(2, 2).shape,
    "full int": lambda lib: lib.full((2,), 3),
    "full float": lambda lib: lib.full((2, 2), 1.5),
    "full bool": lambda lib: lib.full((2,), True),
    "eye": lambda lib: (lib.eye(3), lib.eye(2, 4)),
    "arange int": lambda lib: lib.arange(5),
    "arange start end": lambda lib: lib.arange(2, 9, 3),
    "arange float": lambda lib: lib.arange(0, 1, 0.1),
    "arange negative step": lambda lib: lib.arange(5.0, -2.5, -0.75),
    "linspace": lambda lib: lib.linspace(-3.14159, 3.14159, 2000),
    "linspace small": lambda lib: (
        lib.linspace(0, 1, 5),
        lib.linspace(1, 2, 1),
        lib.linspace(0, 1, 0),
    ),
    "linspace float64": lambda lib: lib.linspace(-1, 1, 7, dtype=lib.float64),
    "logspace": lambda lib: lib.logspace(0, 2, 3),
    "zeros_like": lambda lib: lib.zeros_like(lib.ones(2, dtype=lib.int64)),
    "ones_like dtype": lambda lib: lib.ones_like(lib.ones(2), dtype=lib.float64),
    "full_like": lambda lib: lib.full_like(lib.zeros(3), 7),
    "empty_like": lambda lib: lib.empty_like(lib.zeros(2, 5)).shape,
    "tensor python floats": lambda lib: lib.tensor([1.0, 2.0]),
    "tensor python ints": lambda lib: lib.tensor([[1, 2], [3, 4]]),
    "tensor bools": lambda lib: lib.tensor([True, False]),
    "tensor dtype keyword": lambda lib: lib.tensor([1, 2], dtype=lib.float32, device="cpu"),
    "tensor Python type as dtype": lambda lib: lib.tensor([1, 2], dtype=float),
    "as_tensor": lambda lib: lib.as_tensor([1.5, 2.5]),
    "as_tensor numpy float64": lambda lib: lib.as_tensor(np.arange(3.0)),
    "from_numpy": lambda lib: lib.from_numpy(np.arange(4, dtype=np.int32)),
}


def _describe(result):
    results = result if type(result) is tuple else (result,)
    out = []
    for r in results:
        if isinstance(r, tuple):  # a Size
            out.append(("size", tuple(r)))
        else:
            out.append((r.detach().numpy().tolist(), str(r.dtype).split(".")[-1], r.requires_grad))
    return out


@pytest.mark.parametrize("name", list(CREATION_CALLS))
def test_creation_matches_torch(name):
    want = _describe(CREATION_CALLS[name](torch))
    got = _describe(CREATION_CALLS[name](ma))
    assert got == want


@pytest.mark.parametrize(
    "alias, dtype",
    [
        ("float", "float32"),
        ("double", "float64"),
        ("half", "float16"),
        ("long", "int64"),
        ("int", "int32"),
        ("short", "int16"),
        ("bool", "bool"),
        ("uint8", "uint8"),
        ("int8", "int8"),
    ],
)
def test_dtype_aliases_are_torchs(alias, dtype):
    assert getattr(torch, alias) == getattr(torch, dtype)
    assert getattr(ma, alias) is getattr(ma, dtype)
    assert str(getattr(ma, alias)) == f"mini_autograd.{dtype}"


CONVERSIONS = ["float", "double", "long", "int", "half", "bool"]


@pytest.mark.parametrize("method", CONVERSIONS)
def test_conversion_methods(method):
    values = [[0.0, 1.5], [-2.0, 3.0]]
    want = getattr(torch.tensor(values), method)()
    got = getattr(ma.tensor(values), method)()
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert got.tolist() == want.tolist()


def test_to_takes_dtypes_devices_and_tensors():
    for lib in (torch, ma):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        assert x.to("cpu") is x
        assert x.to(lib.float32) is x
        assert x.to("cpu", lib.float64).dtype == lib.float64
        assert x.to(device="cpu", dtype=lib.float64).dtype == lib.float64
        assert x.to(lib.zeros(1, dtype=lib.float64)).dtype == lib.float64
        assert x.to(lib.float64).grad_fn.name() == "ToCopyBackward0"
        assert x.type() == f"{lib.__name__}.FloatTensor"
        assert x.type(lib.float64).dtype == lib.float64


def test_the_device_is_the_cpu():
    x = ma.zeros(2)
    assert x.device == ma.device("cpu") == "cpu"
    assert repr(x.device) == repr(torch.zeros(2).device) == "device(type='cpu')"
    assert str(ma.device("cuda:1")) == str(torch.device("cuda:1"))
    assert not x.is_cuda and not ma.cuda.is_available() and ma.cuda.device_count() == 0
    assert not ma.backends.mps.is_available()
    ma.backends.cudnn.deterministic = True  # scripts set it; nothing happens


@pytest.mark.parametrize(
    "call",
    [
        lambda: ma.zeros(3, device="cuda"),
        lambda: ma.tensor([1.0], device=ma.device("cuda", 0)),
        lambda: ma.randn(2, device="mps"),
        lambda: ma.ones(2).to("cuda"),
        lambda: ma.ones(2).cuda(),
    ],
)
def test_another_device_is_refused_in_one_line(call):
    with pytest.raises(RuntimeError, match="mini_autograd runs on the CPU only") as info:
        call()
    assert "\n" not in str(info.value) and "device='cpu'" in str(info.value)


def test_size_prints_and_behaves_like_torchs():
    want, got = torch.zeros(2, 3).shape, ma.zeros(2, 3).shape
    assert repr(got) == repr(want).replace("torch.", "mini_autograd.")
    assert got == want == (2, 3) and got.numel() == want.numel() == 6
    assert repr(got[1:]) == "mini_autograd.Size([3])"
    assert ma.zeros(2, 3).size(-1) == torch.zeros(2, 3).size(-1) == 3


def test_default_dtype_can_be_float64():
    try:
        torch.set_default_dtype(torch.float64)
        ma.set_default_dtype(ma.float64)
        for lib in (torch, ma):
            assert lib.tensor([1.5]).dtype == lib.float64
            assert (
                lib.randn(2).dtype == lib.zeros(1).dtype == lib.get_default_dtype() == lib.float64
            )
    finally:
        torch.set_default_dtype(torch.float32)
        ma.set_default_dtype(ma.float32)
    assert ma.tensor([1.5]).dtype == ma.float32


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.zeros(-1),
        lambda lib: lib.ones(2, -1),
        lambda lib: lib.randn(2, -3),
        lambda lib: lib.from_numpy(np.array(["a"])),
        lambda lib: lib.randint(5, 2, (3,)),
        lambda lib: lib.zeros(2, layout="something"),
    ],
)
def test_bad_creation_calls_fail_as_in_torch(call):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(ma)
    first_line = str(want.value).splitlines()[0]
    if isinstance(want.value, RuntimeError):
        assert str(got.value) == first_line


@pytest.mark.parametrize(
    "data",
    [
        [[1.0, 2.0], [3.0]],
        [[1, 2], [3, 4, 5], [6]],
        ([1.0], [2.0, 3.0]),
        [[1.0], 2.0],
        [[[1.0]], [2.0]],
        [[1.0, 2.0], [[3.0], [4.0]]],
    ],
)
def test_ragged_lists_fail_with_torchs_text(data):
    with pytest.raises(Exception) as want:
        torch.tensor(data)
    with pytest.raises(type(want.value)) as got:
        ma.tensor(data)
    assert str(got.value) == str(want.value)


def test_mm_names_the_operand_that_is_not_a_matrix():
    for a, b in [((3,), (3, 2)), ((2, 3), (3,)), ((2, 3, 1), (1, 2))]:
        with pytest.raises(RuntimeError) as want:
            torch.ones(*a).mm(torch.ones(*b))
        with pytest.raises(RuntimeError, match=f"^{want.value}$"):
            ma.ones(*a).mm(ma.ones(*b))


NEW_CALLS = {
    "new data": lambda x, lib: x.new([1, 2]),
    "new numpy data": lambda x, lib: x.new(np.arange(3.0)),
    "new size": lambda x, lib: x.new(2, 3).shape,
    "new nothing": lambda x, lib: x.new(),
    "new_tensor": lambda x, lib: x.new_tensor([[1, 2]]),
    "new_tensor dtype": lambda x, lib: x.new_tensor([1], dtype=lib.int64),
    "new_zeros": lambda x, lib: x.new_zeros(2, 3),
    "new_zeros tuple": lambda x, lib: x.new_zeros((2,), requires_grad=True),
    "new_ones": lambda x, lib: x.new_ones((2,)),
    "new_full": lambda x, lib: x.new_full((2,), 3),
    "new_empty": lambda x, lib: x.new_empty(4).shape,
}


@pytest.mark.parametrize("name", list(NEW_CALLS))
def test_new_tensors_take_the_dtype_of_self(name):
    def run(lib):
        return _describe(NEW_CALLS[name](lib.ones(2, dtype=lib.float64, requires_grad=True), lib))

    assert run(ma) == run(torch)


def test_the_default_device_is_the_cpu():
    ma.set_default_device("cpu")
    assert ma.get_default_device() == torch.get_default_device() == ma.device("cpu")
    with pytest.raises(RuntimeError, match="CPU only"):
        ma.set_default_device("cuda")


LEGACY_CALLS = {
    "data": lambda lib: lib.Tensor([1, 2]),
    "nested data": lambda lib: lib.Tensor([[1.5], [2.5]]),
    "numpy ints": lambda lib: lib.Tensor(np.arange(3)),
    "sizes": lambda lib: lib.Tensor(2, 3).shape,
    "a Size": lambda lib: lib.Tensor(lib.zeros(4, 1).shape).shape,
    "nothing": lambda lib: lib.Tensor(),
    "then requires_grad_": lambda lib: lib.Tensor(3).zero_().requires_grad_(),
}


@pytest.mark.parametrize("name", list(LEGACY_CALLS))
def test_the_legacy_constructor_makes_float_tensors(name):
    assert _describe(LEGACY_CALLS[name](ma)) == _describe(LEGACY_CALLS[name](torch))


@pytest.mark.parametrize(
    "name", ["FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "BoolTensor"]
)
def test_legacy_typed_constructors(name):
    def run(lib):
        made = getattr(lib, name)([1, 0, 2])
        return _describe(made), isinstance(made, getattr(lib, name)), getattr(lib, name)(2).shape

    assert run(ma) == run(torch)
