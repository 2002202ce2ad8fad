"""What stopped published programs nobody here chose (issue #27), checked against torch, then
three small programs in the style of well-known teaching code, run on both libraries.

Each check runs the same code on torch and on mini_autograd and compares what it gives:
values, dtypes, node names and saved attributes, versions, gradients, error and warning texts.
The programs compare what they print (as tests/programs/harness.py does) and the values they
record: losses within 1e-5 relative (float64, or float32 where the program is float32 as
published), counts exactly.
"""

import contextlib
import io
import math
import random
import subprocess
import sys
import warnings

import numpy as np
import pytest

from tests.parity_helpers import LIBS, describe_graph, error_of, outcome
from tests.programs.harness import compare_outputs

X = np.array([-2.0, -0.25, 0.25, 3.0])
G = np.array([1.0, 2.0, 3.0, 4.0])


def same(fn):
    """fn(lib) for both libraries; asserts both give the same results and returns torch's.
    mini_autograd's names count as torch's; floats agree to 1e-6 relative (float32 roundings,
    sums in another order)."""
    theirs, mine = (fn(lib) for lib in LIBS)
    assert_same(_named(mine), _named(theirs))
    return theirs


def assert_same(mine, theirs, where="result"):
    """Equal nested structures, floats within 1e-6 relative (or 1e-9 absolute)."""
    if isinstance(theirs, float) and isinstance(mine, float):
        both_nan = math.isnan(theirs) and math.isnan(mine)
        assert both_nan or math.isclose(mine, theirs, rel_tol=1e-6, abs_tol=1e-9), (
            f"{where}: {mine!r} vs {theirs!r}"
        )
    elif isinstance(theirs, (list, tuple)) and type(mine) is type(theirs):
        assert len(mine) == len(theirs), f"{where}: {mine!r} vs {theirs!r}"
        for i, (m, t) in enumerate(zip(mine, theirs)):
            assert_same(m, t, f"{where}[{i}]")
    else:
        assert mine == theirs, f"{where}: {mine!r} vs {theirs!r}"


def _named(value):
    """Reprs and type names with mini_autograd's prefix written as torch's."""
    if isinstance(value, (list, tuple)):
        return type(value)(_named(v) for v in value)
    if isinstance(value, dict):
        return {k: _named(v) for k, v in value.items()}
    if isinstance(value, str):
        return value.replace("mini_autograd.", "torch.")
    if value.__class__.__name__ == "dtype":
        return str(value).replace("mini_autograd.", "torch.")
    return value


def first_warnings(code):
    """The warnings `code` gives in a fresh process, for each library (torch gives some once per
    process): their texts, without the ' (Triggered internally at ...)' torch's C++ adds."""
    texts = []
    for name in ("torch", "mini_autograd"):
        script = (
            f"import warnings, {name} as torch\n"
            "warnings.simplefilter('always')\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            + "".join(f"    {line}\n" for line in code.splitlines())
            + "print(repr([str(w.message).split(' (Triggered internally')[0] for w in caught]))"
        )
        run = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
        )
        assert run.returncode == 0, run.stderr
        texts.append(run.stdout)
    return texts


# --- torch.meshgrid ----------------------------------------------------------------------------
@pytest.mark.parametrize("indexing", ["ij", "xy"])
@pytest.mark.parametrize("sizes", [(3, 2), (2, 3, 4), (3,), (0, 2)])
def test_meshgrid_gives_torchs_grids_graph_and_gradients(indexing, sizes):
    def program(lib):
        rng = np.random.default_rng(len(sizes))
        inputs = [
            lib.tensor(rng.standard_normal(n), dtype=lib.float64, requires_grad=True) for n in sizes
        ]
        grids = lib.meshgrid(*inputs, indexing=indexing)
        total = sum((g * lib.tensor(rng.standard_normal(g.shape))).sum() for g in grids)
        total.backward()
        return (
            [tuple(g.shape) for g in grids],
            [g.detach().numpy().tolist() for g in grids],
            [describe_graph(g) for g in grids],
            [t.grad.numpy().tolist() for t in inputs],
        )

    same(program)


def test_meshgrid_takes_a_list_and_0d_tensors():
    def program(lib):
        a, b = lib.tensor(2.0), lib.tensor([1.0, 2.0, 3.0])
        grids = lib.meshgrid([a, b], indexing="ij") + lib.meshgrid((b, a), indexing="xy")
        return [(tuple(g.shape), g.numpy().tolist()) for g in grids]

    same(program)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.meshgrid(indexing="ij"),
        lambda lib: lib.meshgrid(lib.ones(2), lib.ones(2), indexing="ji"),
        lambda lib: lib.meshgrid(lib.ones(2), lib.ones(2, dtype=lib.int64), indexing="ij"),
        lambda lib: lib.meshgrid(lib.ones(2), [1, 2], indexing="ij"),
    ],
    ids=["empty", "indexing", "dtypes", "not a tensor"],
)
def test_meshgrid_refuses_what_torch_refuses(call):
    same(lambda lib: error_of(call, lib))


def test_meshgrid_refuses_a_2d_tensor_with_torchs_first_words():
    errors = [error_of(lib.meshgrid, lib.ones(3, 1), indexing="ij") for lib in LIBS]
    start = "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got:"
    assert all(e[0] == "RuntimeError" and e[1].startswith(start) for e in errors)


def test_meshgrid_without_indexing_warns_once_as_torch():
    texts = first_warnings("torch.meshgrid(torch.ones(2), torch.ones(3))\n" * 2)
    assert texts[0] == texts[1]
    assert "it will be required to pass the indexing argument" in texts[0]


# --- Tensor.type -------------------------------------------------------------------------------
TYPE_ARGUMENTS = {
    "FloatTensor": lambda lib: lib.FloatTensor,
    "DoubleTensor": lambda lib: lib.DoubleTensor,
    "LongTensor": lambda lib: lib.LongTensor,
    "'torch.DoubleTensor'": lambda lib: "torch.DoubleTensor",
    "'torch.IntTensor'": lambda lib: "torch.IntTensor",
    "float64": lambda lib: lib.float64,
    "Tensor": lambda lib: lib.Tensor,
    "'DoubleTensor'": lambda lib: "DoubleTensor",
    "'torch.float64'": lambda lib: "torch.float64",
    "int": lambda lib: int,
    "3": lambda lib: 3,
}


@pytest.mark.parametrize("argument", TYPE_ARGUMENTS)
def test_type_casts_to_a_legacy_type_or_its_name(argument):
    def program(lib):
        x = lib.tensor([1.5, -2.0], requires_grad=True)
        result = outcome(x.type, TYPE_ARGUMENTS[argument](lib))
        if result[0] != "ok":
            return result
        y = result[1]
        described = (y.dtype, y is x, y.requires_grad, y.grad_fn and y.grad_fn.name(), y.type())
        if y.requires_grad and y is not x:
            y.sum().backward()
            described += (x.grad.dtype, x.grad.tolist())
        return described

    same(program)


def test_type_without_argument_names_the_legacy_type():
    dtypes = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]
    same(lambda lib: [lib.zeros(1, dtype=getattr(lib, d)).type() for d in dtypes])


def test_a_cast_to_an_integer_type_does_not_require_grad():
    def program(lib):
        x = lib.tensor([1.5, -2.0], requires_grad=True)
        return [(y.requires_grad, y.grad_fn) for y in (x.long(), x.to(lib.int32), x.bool())]

    same(program)


# --- in-place activations ----------------------------------------------------------------------
ACTIVATIONS = {
    "F.leaky_relu(inplace=True)": lambda lib, h: lib.nn.functional.leaky_relu(h, 0.2, True),
    "F.leaky_relu_": lambda lib, h: lib.nn.functional.leaky_relu_(h, 0.3),
    "nn.LeakyReLU(0.2, inplace=True)": lambda lib, h: lib.nn.LeakyReLU(0.2, inplace=True)(h),
    "F.elu(inplace=True)": lambda lib, h: lib.nn.functional.elu(h, 1.5, inplace=True),
    "F.elu_": lambda lib, h: lib.nn.functional.elu_(h, 0.3),
    "nn.ELU(inplace=True)": lambda lib, h: lib.nn.ELU(inplace=True)(h),
    "nn.ELU()": lambda lib, h: lib.nn.ELU(0.5)(h),
    "F.selu(inplace=True)": lambda lib, h: lib.nn.functional.selu(h, inplace=True),
    "nn.SELU()": lambda lib, h: lib.nn.SELU()(h),
    "F.hardtanh(inplace=True)": lambda lib, h: lib.nn.functional.hardtanh(h, -0.5, 0.5, True),
    "F.hardtanh_": lambda lib, h: lib.nn.functional.hardtanh_(h, -0.3, 0.3),
    "nn.Hardtanh(inplace=True)": lambda lib, h: lib.nn.Hardtanh(-0.5, 0.5, inplace=True)(h),
    "nn.Hardtanh()": lambda lib, h: lib.nn.Hardtanh()(h),
    "F.relu6(inplace=True)": lambda lib, h: lib.nn.functional.relu6(h * 4, inplace=True),
    "nn.ReLU6(inplace=True)": lambda lib, h: lib.nn.ReLU6(inplace=True)(h * 4),
    "nn.GELU('tanh')": lambda lib, h: lib.nn.GELU("tanh")(h),
    "nn.SiLU()": lambda lib, h: lib.nn.SiLU()(h),
    "nn.Softplus(2, 1)": lambda lib, h: lib.nn.Softplus(2, 1)(h),
}


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_records_torchs_node_and_gradient(name):
    def program(lib):
        x = lib.tensor(X, requires_grad=True)
        h = x * 1
        out = ACTIVATIONS[name](lib, h)
        described = (out is h, h._version, out.detach().numpy().tolist(), describe_graph(out))
        first, *_ = lib.autograd.grad((out * out).sum(), x, create_graph=True)
        second, *_ = lib.autograd.grad((first * lib.tensor(G)).sum(), x)
        return described + (first.detach().numpy().tolist(), second.numpy().tolist())

    same(program)


@pytest.mark.parametrize(
    "name", ["F.leaky_relu(inplace=True)", "F.elu(inplace=True)", "F.hardtanh(inplace=True)"]
)
def test_in_place_activation_on_a_view_rebases_its_base(name):
    def program(lib):
        x = lib.tensor(np.stack([X, G]), requires_grad=True)
        h = x * 1
        ACTIVATIONS[name](lib, h[0])
        (h * h).sum().backward()
        return describe_graph(h), x.grad.numpy().tolist()

    same(program)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, h: lib.nn.functional.leaky_relu(h, -0.2, inplace=True),
        lambda lib, h: lib.nn.functional.elu(h, -0.5, inplace=True),
    ],
    ids=["leaky_relu", "elu"],
)
def test_in_place_activation_with_a_negative_slope_fails_in_backward_as_torch(call):
    def program(lib):
        h = lib.tensor(X, requires_grad=True) * 1
        return error_of(call(lib, h).sum().backward)

    same(program)


def test_in_place_activation_of_a_leaf_and_of_integers_fail_as_torch():
    def program(lib):
        leaf = lib.tensor(X, requires_grad=True)
        F = lib.nn.functional
        return [
            error_of(F.leaky_relu, leaf, 0.2, True),
            error_of(F.leaky_relu, lib.tensor([-1, 1]), 0.2, True),
            error_of(F.elu, lib.tensor([-1, 1]), inplace=True),
            F.hardtanh(lib.tensor([-3, 1]), inplace=True).tolist(),
        ]

    same(program)


def test_in_place_activation_outside_grad_mode_just_writes():
    def program(lib):
        with lib.no_grad():
            h = lib.tensor(X)
            out = lib.nn.functional.leaky_relu(h, 0.2, inplace=True)
        return out is h, h._version, h.grad_fn, h.tolist()

    same(program)


@pytest.mark.parametrize(
    "name", ["F.leaky_relu(inplace=True)", "F.elu(inplace=True)", "F.hardtanh(inplace=True)"]
)
def test_changing_the_result_of_an_in_place_activation_fails_backward(name):
    """The versions are torch's; the producer in the text ("output 0 of LeakyRelu1") is checked
    by the next test."""

    def program(lib):
        h = lib.tensor(X, requires_grad=True) * 1
        out = ACTIVATIONS[name](lib, h)
        h.add_(1)
        error = error_of((out * out).sum().backward)
        return error and (error[0], error[1].split(", which is output")[0], "version 2" in error[1])

    same(program)


def test_the_version_error_names_leaky_relu_1_as_torch():
    def program(lib):
        h = lib.tensor(X, requires_grad=True) * 1
        out = lib.nn.functional.leaky_relu(h, 0.2, inplace=True)
        h.add_(1)
        return error_of(out.sum().backward)

    same(program)


def test_activation_layers_print_as_torch():
    def program(lib):
        nn = lib.nn
        layers = [nn.ELU(), nn.ELU(alpha=0.5, inplace=True), nn.ELU(2), nn.Hardtanh()]
        layers += [nn.Hardtanh(-2.0, 2.0, True), nn.Hardtanh(0, 1), nn.ReLU6(), nn.ReLU6(True)]
        layers += [nn.SELU(), nn.SELU(True), nn.GELU(), nn.GELU("tanh"), nn.SiLU()]
        layers += [nn.Softplus(), nn.Softplus(2, 10), nn.LeakyReLU(0.2, True)]
        relu6 = nn.ReLU6()
        return [repr(m) for m in layers] + [
            (relu6.min_val, relu6.max_val, isinstance(relu6, nn.Hardtanh)),
            error_of(nn.Hardtanh, 2, -2),
            nn.modules.activation.ELU is nn.ELU,
        ]

    same(program)


# --- parameters' versions after initialisation -------------------------------------------------
LAYERS = {
    "Linear": lambda nn: nn.Linear(3, 2),
    "Linear(bias=False)": lambda nn: nn.Linear(3, 2, bias=False),
    "Conv1d": lambda nn: nn.Conv1d(2, 3, 3),
    "Conv2d": lambda nn: nn.Conv2d(2, 3, 3),
    "Embedding": lambda nn: nn.Embedding(5, 3),
    "Embedding(padding_idx)": lambda nn: nn.Embedding(5, 3, padding_idx=0),
    "Embedding.from_pretrained": lambda nn: nn.Embedding.from_pretrained(nn.Linear(2, 3).weight),
    "LSTM": lambda nn: nn.LSTM(3, 4, num_layers=2, bidirectional=True),
    "GRU": lambda nn: nn.GRU(3, 4),
    "RNN": lambda nn: nn.RNN(3, 4),
    "LSTMCell": lambda nn: nn.LSTMCell(3, 4),
    "GRUCell": lambda nn: nn.GRUCell(3, 4),
    "RNNCell": lambda nn: nn.RNNCell(3, 4),
    "BatchNorm1d": lambda nn: nn.BatchNorm1d(3),
    "BatchNorm2d": lambda nn: nn.BatchNorm2d(3),
    "BatchNorm1d(affine=False)": lambda nn: nn.BatchNorm1d(3, affine=False),
    "LayerNorm": lambda nn: nn.LayerNorm(3),
    "LayerNorm(bias=False)": lambda nn: nn.LayerNorm(3, bias=False),
}


def _versions(module):
    return [(n, t._version) for n, t in [*module.named_parameters(), *module.named_buffers()]]


@pytest.mark.parametrize("name", LAYERS)
def test_parameters_have_torchs_versions_after_init_and_reset(name):
    def program(lib):
        lib.manual_seed(0)
        layer = LAYERS[name](lib.nn)
        versions = [_versions(layer)]
        if hasattr(layer, "reset_parameters"):
            layer.reset_parameters()
            versions.append(_versions(layer))
        return versions + [[(n, p.detach().numpy().tolist()) for n, p in layer.named_parameters()]]

    same(program)


def test_batch_norm_moves_its_statistics_without_new_versions():
    def program(lib):
        lib.manual_seed(0)
        layers = [lib.nn.BatchNorm1d(3), lib.nn.BatchNorm1d(3, momentum=None)]
        x = lib.randn(4, 3)
        for layer in layers:
            layer(x).sum().backward()
            layer(x)
        layers[0].eval()
        layers[0](x)
        layers[1].reset_running_stats()
        return [_versions(layer) for layer in layers]

    same(program)


def test_a_weight_changed_after_forward_gives_the_versions_torch_prints():
    """The in-place error a tutorial shows: `version 2; expected version 1` on both."""

    def program(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
        loss = (model(lib.randn(5, 3)) ** 2).sum()
        with lib.no_grad():
            model[2].weight.mul_(0.5)
        return error_of(loss.backward)

    error = same(program)
    assert "is at version 2; expected version 1" in error[1]


def test_optimizer_steps_count_versions_as_torch():
    def program(lib):
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 2)
        optimizer = lib.optim.SGD(model.parameters(), 0.1, momentum=0.9)
        for _ in range(2):
            optimizer.zero_grad()
            model(lib.ones(4, 3)).sum().backward()
            optimizer.step()
        return _versions(model)

    same(program)


# --- losses: the result's dtype ----------------------------------------------------------------
LOSS_FUNCTIONS = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"]
LOSS_FUNCTIONS += ["binary_cross_entropy_with_logits"]
TARGET_DTYPES = ["int64", "int32", "bool", "float64", "float32"]


@pytest.mark.parametrize("reduction", ["mean", "none"])
@pytest.mark.parametrize("target_dtype", TARGET_DTYPES)
@pytest.mark.parametrize("name", LOSS_FUNCTIONS)
def test_loss_of_a_float32_input_has_torchs_dtype_and_backward(name, target_dtype, reduction):
    """float32 with an int64 target stays float32, and backward works (the gradient is
    float32); a target of a dtype the loss refuses gives torch's error (huber_loss's backward
    refuses any other dtype than the input's)."""

    def program(lib):
        x = lib.tensor([0.5, 1.5, -2.0], requires_grad=True)
        t = lib.tensor([1, 0, 1], dtype=getattr(lib, target_dtype))
        result = outcome(getattr(lib.nn.functional, name), x, t, reduction=reduction)
        if result[0] != "ok":
            return result
        out = result[1]
        described = (out.dtype, out.grad_fn.name(), out.detach().double().numpy().tolist())
        failed = error_of(out.sum().backward)
        if failed or target_dtype == "float64":  # (its gradient's dtype: the next test)
            return described + (failed,)
        return described + (x.grad.dtype, x.grad.double().numpy().tolist())

    same(program)


def test_the_gradient_of_a_float32_input_is_float32_with_a_float64_target():
    def program(lib):
        x = lib.tensor([0.5, 1.5], requires_grad=True)
        lib.nn.functional.l1_loss(x, lib.tensor([1.0, 2.0], dtype=lib.float64)).backward()
        return x.grad.dtype

    same(program)


def test_mse_loss_of_an_integer_input_is_the_default_float():
    same(lambda lib: lib.nn.functional.mse_loss(lib.tensor([1, 2]), lib.tensor([0.5, 1.0])).dtype)


# --- torch.histogram ---------------------------------------------------------------------------
VALUES = [1.0, 2.0, 1.0, 2.5, 4.0, -1.0, 0.25, 3.75]
HISTOGRAMS = {
    "bins=4": lambda lib, x: lib.histogram(x, bins=4),
    "default bins": lambda lib, x: lib.histogram(x),
    "range": lambda lib, x: lib.histogram(x, bins=3, range=(0.0, 3.0)),
    "edges": lambda lib, x: lib.histogram(x, bins=lib.tensor([0.0, 1.0, 2.0, 5.0])),
    "weight": lambda lib, x: lib.histogram(x, 3, weight=lib.arange(8.0)),
    "density": lambda lib, x: lib.histogram(x, bins=3, density=True),
    "edges, density": lambda lib, x: lib.histogram(x, lib.tensor([-1.0, 1.0, 4.0]), density=True),
    "method": lambda lib, x: x.histogram(5),
    "float64": lambda lib, x: lib.histogram(x.double(), bins=7),
    "2-D input": lambda lib, x: lib.histogram(x.reshape(2, 4), bins=2),
    "one value": lambda lib, x: lib.histogram(lib.tensor([5.0, 5.0]), bins=2),
    "empty": lambda lib, x: lib.histogram(lib.tensor([]), bins=2),
    "NaN outside": lambda lib, x: lib.histogram(lib.tensor([1.0, math.nan]), 2, range=(0, 2)),
    "edges not increasing": lambda lib, x: lib.histogram(x, bins=lib.tensor([2.0, 1.0])),
}


@pytest.mark.parametrize("case", HISTOGRAMS)
def test_histogram_counts_as_torch(case):
    def program(lib):
        hist, bin_edges = HISTOGRAMS[case](lib, lib.tensor(VALUES))
        return [(t.dtype, t.shape, t.numpy().tolist()) for t in (hist, bin_edges)]

    same(program)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.histogram(lib.tensor([1, 2, 3]), bins=2),
        lambda lib: lib.histogram(lib.ones(3), bins=0),
        lambda lib: lib.histogram(lib.ones(3), bins=2, range=(3.0, 1.0)),
        lambda lib: lib.histogram(lib.ones(3), bins=2, range=(0.0, math.inf)),
        lambda lib: lib.histogram(lib.tensor([1.0, math.nan]), bins=2),
        lambda lib: lib.histogram(lib.ones(3), bins=lib.ones(3, dtype=lib.float64)),
        lambda lib: lib.histogram(lib.ones(3), bins=lib.ones(1, 3)),
        lambda lib: lib.histogram(lib.ones(3), bins=2, weight=lib.ones(2)),
        lambda lib: lib.histogram(lib.ones(3), bins=2, weight=lib.ones(3, dtype=lib.float64)),
    ],
    ids=["long", "bins=0", "min > max", "inf", "NaN", "edges dtype", "edges 2-D", "weight shape"]
    + ["weight dtype"],
)
def test_histogram_refuses_what_torch_refuses(call):
    same(lambda lib: error_of(call, lib))


def test_histogram_of_a_tensor_that_requires_grad_has_no_derivative():
    def program(lib):
        x = lib.tensor(VALUES, requires_grad=True)
        hist, bin_edges = lib.histogram(x, bins=2)
        described = [(t.requires_grad, t.grad_fn.name()) for t in (hist, bin_edges)]
        with lib.no_grad():
            described.append(lib.histogram(x, bins=2).hist.requires_grad)
        return described + [error_of(t.sum().backward) for t in (hist, bin_edges)]

    same(program)


# --- Tensor.unsqueeze_ -------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unsqueeze_in_place_records_torchs_node(dim):
    def program(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        h = a * 2
        result = h.unsqueeze_(dim)
        described = (result is h, tuple(h.shape), h._version, describe_graph(h))
        (h * lib.tensor([[3.0, 4.0]]).reshape(h.shape)).sum().backward()
        return described + (a.grad.tolist(),)

    same(program)


def test_unsqueeze_in_place_of_a_view_changes_the_view_only():
    def program(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        h = a * 2
        v = h[:]
        v.unsqueeze_(1)
        described = (tuple(v.shape), tuple(h.shape), h.grad_fn.name(), describe_graph(v))
        (v * v).sum().backward()
        return described + (a.grad.tolist(),)

    same(program)


def test_unsqueeze_in_place_errors_and_plain_tensors_as_torch():
    def program(lib):
        x = lib.tensor([1.0, 2.0])
        x.unsqueeze_(-1)
        y = lib.tensor([[1.0, 2.0]])
        y[0].unsqueeze_(0)
        leaf = lib.tensor([1.0], requires_grad=True)
        return [
            (tuple(x.shape), x._version, x.grad_fn, tuple(y.shape), y._version),
            error_of(leaf.unsqueeze_, 0),
            error_of(leaf[:].unsqueeze_, 0),
            error_of(lib.tensor([1.0]).unsqueeze_, 3),
        ]

    same(program)


# --- the deprecated add_(Number, Tensor) -------------------------------------------------------
@pytest.mark.parametrize("name", ["add_", "sub_", "add", "sub"])
def test_alpha_first_overload_computes_as_torch(name):
    def program(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = lib.tensor([1.0, 2.0], requires_grad=True)
            other = lib.tensor([1.0, 3.0], requires_grad=True)
            h = a * 1
            out = getattr(h, name)(3, other)
            (out * lib.tensor([1.0, 2.0])).sum().backward()
            return out.tolist(), out.grad_fn.name(), a.grad.tolist(), other.grad.tolist()

    same(program)


@pytest.mark.parametrize("name", ["add_", "sub_", "add", "sub"])
def test_alpha_first_overload_warns_once_as_torch(name):
    code = f"x, y = torch.ones(2), torch.ones(2)\nx.{name}(2, y)\nx.{name}(2, y)\nx.add_(2, y)"
    texts = first_warnings(code)
    assert texts[0] == texts[1]
    assert f"This overload of {name} is deprecated" in texts[0]


# --- three programs in the style of published teaching code ------------------------------------
def d2l_bindings(torch):
    """The names a popular textbook's helper module binds from torch when it is imported: a
    missing one (meshgrid) stopped every program that imports it."""
    return {
        "ones": torch.ones,
        "zeros": torch.zeros,
        "tensor": torch.tensor,
        "arange": torch.arange,
        "meshgrid": torch.meshgrid,
        "sin": torch.sin,
        "sinh": torch.sinh,
        "cos": torch.cos,
        "cosh": torch.cosh,
        "tanh": torch.tanh,
        "linspace": torch.linspace,
        "exp": torch.exp,
        "log": torch.log,
        "normal": torch.normal,
        "rand": torch.rand,
        "randn": torch.randn,
        "matmul": torch.matmul,
        "int32": torch.int32,
        "float32": torch.float32,
        "concat": torch.cat,
        "stack": torch.stack,
        "abs": torch.abs,
        "eye": torch.eye,
        "sigmoid": torch.sigmoid,
        "batch_matmul": torch.bmm,
        "astype": lambda x, *args, **kwargs: x.type(*args, **kwargs),
    }


def linear_regression_from_scratch(torch, record):
    """A textbook's linear regression from scratch: synthetic data, a shuffled minibatch
    iterator, linreg, squared_loss and sgd written by hand (float64 here)."""
    d2l = d2l_bindings(torch)
    random.seed(0)
    torch.manual_seed(0)

    def synthetic_data(w, b, num_examples):
        X = torch.normal(0, 1, (num_examples, len(w)))
        y = d2l["matmul"](X, w) + b
        y += torch.normal(0, 0.01, y.shape)
        return X, y.reshape((-1, 1))

    true_w = d2l["tensor"]([2, -3.4])
    true_b = 4.2
    features, labels = synthetic_data(true_w, true_b, 1000)
    print("features:", features[0], "\nlabel:", labels[0])

    def data_iter(batch_size, features, labels):
        num_examples = len(features)
        indices = list(range(num_examples))
        random.shuffle(indices)
        for i in range(0, num_examples, batch_size):
            batch_indices = torch.tensor(indices[i : min(i + batch_size, num_examples)])
            yield features[batch_indices], labels[batch_indices]

    w = torch.normal(0, 0.01, size=(2, 1), requires_grad=True)
    b = torch.zeros(1, requires_grad=True)

    def linreg(X, w, b):
        return torch.matmul(X, w) + b

    def squared_loss(y_hat, y):
        return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2

    def sgd(params, lr, batch_size):
        with torch.no_grad():
            for param in params:
                param -= lr * param.grad / batch_size
                param.grad.zero_()

    lr, num_epochs, batch_size = 0.03, 3, 10
    for epoch in range(num_epochs):
        for X, y in data_iter(batch_size, features, labels):
            loss = squared_loss(linreg(X, w, b), y)
            loss.sum().backward()
            sgd([w, b], lr, batch_size)
        with torch.no_grad():
            train_l = squared_loss(linreg(features, w, b), labels)
            print(f"epoch {epoch + 1}, loss {float(train_l.mean()):f}")
            record.append(float(train_l.mean()))
    print(f"error in estimating w: {true_w - w.reshape(true_w.shape)}")
    print(f"error in estimating b: {true_b - b}")
    record.extend(w.detach().reshape(-1).tolist() + b.detach().tolist())


def dcgan_style_loop(torch, record):
    """A GAN tutorial's training loop (fully connected here): LeakyReLU(0.2, inplace=True) in
    the discriminator, a custom weights_init, BCELoss, two Adam optimizers, fake.detach()."""
    nn, optim = torch.nn, torch.optim
    torch.manual_seed(999)
    nz, ngf, ndf, nc, batch_size = 4, 16, 16, 6, 8

    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(
                nn.Linear(nz, ngf, bias=False),
                nn.BatchNorm1d(ngf),
                nn.ReLU(True),
                nn.Linear(ngf, nc, bias=False),
                nn.Tanh(),
            )

        def forward(self, input):
            return self.main(input)

    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(
                nn.Linear(nc, ndf, bias=False),
                nn.LeakyReLU(0.2, inplace=True),
                nn.Linear(ndf, ndf, bias=False),
                nn.BatchNorm1d(ndf),
                nn.LeakyReLU(0.2, inplace=True),
                nn.Linear(ndf, 1, bias=False),
                nn.Sigmoid(),
            )

        def forward(self, input):
            return self.main(input)

    def weights_init(m):
        classname = m.__class__.__name__
        if classname.find("Linear") != -1:
            nn.init.normal_(m.weight.data, 0.0, 0.02)
        elif classname.find("BatchNorm") != -1:
            nn.init.normal_(m.weight.data, 1.0, 0.02)
            nn.init.constant_(m.bias.data, 0)

    STATUS = "[%d/%d][%d/%d]\tLoss_D: %.4f\tLoss_G: %.4f\tD(x): %.4f\tD(G(z)): %.4f / %.4f"
    netG, netD = Generator(), Discriminator()
    netG.apply(weights_init)
    netD.apply(weights_init)
    print(netD)
    criterion = nn.BCELoss()
    real_label, fake_label = 1.0, 0.0
    optimizerD = optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))
    data = torch.rand(64, nc) * 2 - 1
    iters = 0
    for epoch in range(2):
        for i in range(0, len(data), batch_size):
            netD.zero_grad()
            real_cpu = data[i : i + batch_size]
            b_size = real_cpu.size(0)
            label = torch.full((b_size,), real_label)
            output = netD(real_cpu).view(-1)
            errD_real = criterion(output, label)
            errD_real.backward()
            D_x = output.mean().item()
            noise = torch.randn(b_size, nz)
            fake = netG(noise)
            label.fill_(fake_label)
            output = netD(fake.detach()).view(-1)
            errD_fake = criterion(output, label)
            errD_fake.backward()
            D_G_z1 = output.mean().item()
            errD = errD_real + errD_fake
            optimizerD.step()
            netG.zero_grad()
            label.fill_(real_label)
            output = netD(fake).view(-1)
            errG = criterion(output, label)
            errG.backward()
            D_G_z2 = output.mean().item()
            optimizerG.step()
            if i % 32 == 0:
                status = (epoch, 2, i, len(data), errD.item(), errG.item(), D_x, D_G_z1, D_G_z2)
                print(STATUS % status)  # noqa: UP031 (as published)
            record.extend([errD.item(), errG.item(), D_x, D_G_z1, D_G_z2])
            iters += 1
    record.append(iters)


def tutorial_training_loop(torch, record):
    """A beginners' tutorial loop: numpy data made tensors with .type(torch.FloatTensor) and
    .type(torch.LongTensor), a small classifier, CrossEntropyLoss, SGD, accuracy from
    torch.max(out.data, 1) (float32, as published)."""
    nn = torch.nn
    rng = np.random.RandomState(0)
    features = rng.randn(120, 4)
    classes = (features[:, 0] + 0.5 * features[:, 1] > 0).astype(np.int64)
    X_train = torch.from_numpy(features).type(torch.FloatTensor)
    y_train = torch.from_numpy(classes).type("torch.LongTensor")
    print(X_train.type(), y_train.type(), X_train.type(torch.FloatTensor) is X_train)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(40):
        optimizer.zero_grad()
        out = model(X_train)
        loss = criterion(out, y_train)
        loss.backward()
        optimizer.step()
        _, predicted = torch.max(out.data, 1)
        correct = (predicted == y_train).sum().item()
        if epoch % 10 == 0:
            print(f"Epoch {epoch}, loss {loss.item():.4f}, accuracy {correct / len(y_train)}")
        record.extend([loss.item(), correct])


PROGRAMS = {
    "linear regression from scratch": (linear_regression_from_scratch, "float64"),
    "DCGAN-style loop": (dcgan_style_loop, "float64"),
    "tutorial loop with .type(FloatTensor)": (tutorial_training_loop, "float32"),
}


def _run(program, lib, dtype):
    """(printed text, recorded values) of program on lib, with lib's default dtype set."""
    record, printed = [], io.StringIO()
    lib.set_default_dtype(getattr(lib, dtype))
    try:
        with contextlib.redirect_stdout(printed):
            program(lib, record)
    finally:
        lib.set_default_dtype(lib.float32)
    return printed.getvalue(), record


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_prints_and_records_what_torch_does(name):
    program, dtype = PROGRAMS[name]
    (theirs, their_record), (mine, my_record) = (_run(program, lib, dtype) for lib in LIBS)
    same_output, difference = compare_outputs(theirs, mine)
    assert same_output, difference
    assert len(my_record) == len(their_record)
    for i, (m, t) in enumerate(zip(my_record, their_record)):
        if isinstance(t, int):
            assert m == t, f"value {i}: {m} vs {t}"
        else:
            assert math.isclose(m, t, rel_tol=1e-5, abs_tol=1e-12), f"value {i}: {m} vs {t}"
