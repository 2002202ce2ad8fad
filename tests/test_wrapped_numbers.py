"""Python numbers saved as PyTorch's wrapped numbers, and PyTorch's backward functions.

`x * 4` saves its 4 as a 0-d int64 tensor (8 bytes) that still counts as a number in type
promotion; tanh's backward is one operation, tanh_backward, whose own backward is recorded as
TanhBackwardBackward0. Each test runs the same program in torch and mini_autograd and compares
values, node names, `_saved_*` names with their dtypes, reprs and bytes, and the graphs of first
and second derivatives.
"""

import numpy as np
import pytest
import torch
from parity_helpers import grad_masks, graph_nodes, random_arrays

import mini_autograd as ma
from mini_autograd.core import node as ma_node
from mini_autograd.instruments.memory import saved_bytes, saved_tensors
from mini_autograd.ops import backward_functions as bf
from mini_autograd.ops import derivatives

LIBS = (torch, ma)
# numpy warns where torch computes inf and nan silently (0 ** -1, log(0), inf * 0)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def name_of(dtype):
    """'float64' for torch.float64 and mini_autograd.float64."""
    return str(dtype).split(".")[-1]


def shown(value):
    """How a saved value prints, with the library's name taken out."""
    return repr(value).replace("torch.", "").replace("mini_autograd.", "")


def describe_saved(value, arrays):
    """A saved value, strictly: a tensor by dtype, shape and repr (0-d; the values of others go to
    `arrays`), a number by its Python type and value."""
    if isinstance(value, (torch.Tensor, ma.Tensor)):
        if value.ndim:
            arrays.append(np.asarray(value.detach().numpy(), dtype=np.float64))
        text = shown(value.detach()) if value.ndim == 0 else "..."
        return ("tensor", name_of(value.dtype), tuple(value.shape), text)
    if isinstance(value, (tuple, list)):
        return tuple(describe_saved(v, arrays) for v in value)
    return (type(value).__name__, value)


# node.py shows these saved numbers unsigned when negative, as torch shows int64 dims (-2 as
# 18446744073709551614): they are compared signed here, and test_saved_negative_numbers_as_torch
# (a strict xfail) says when node.py shows them as torch does.
SIGNED_SCALARS = ("_saved_other", "_saved_min", "_saved_max")


def signed(name, value):
    """A saved number node.py shows unsigned, back as the signed number it is."""
    if name in SIGNED_SCALARS and type(value) is int and value >= 2**63:
        return value - 2**64
    return value


def describe(tensor, arrays):
    """Every node of tensor's graph: name, edges, saved values (strictly), then the saved bytes."""
    if tensor is None or tensor.grad_fn is None:
        return None
    nodes, index = graph_nodes(tensor.grad_fn)
    described = []
    for node in nodes:
        names = sorted(d for d in dir(node) if d.startswith("_saved_"))
        described.append(
            (
                node.name(),
                tuple((None if n is None else index[id(n)], nr) for n, nr in node.next_functions),
                {name: describe_saved(signed(name, getattr(node, name)), arrays) for name in names},
            )
        )
    rows = [(r.node, r.attribute, r.shape, r.nbytes, r.shared) for r in saved_tensors(tensor).rows]
    return described, rows, saved_bytes(tensor)


def assert_same_graph(actual, expected):
    """The graphs of two tensors: the same description, and saved values close (float32 or 64)."""
    arrays_actual, arrays_expected = [], []
    assert describe(actual, arrays_actual) == describe(expected, arrays_expected)
    rtol = 1e-6 if expected is not None and expected.dtype == torch.float32 else 1e-10
    for a, e in zip(arrays_actual, arrays_expected):
        np.testing.assert_allclose(a, e, rtol=rtol, atol=rtol)


def on_both(program, *arrays, dtype="float32", requires_grad=None):
    """program(lib, *leaves) in torch and in mini_autograd, on the same values."""
    results = []
    for lib in LIBS:
        mask = requires_grad or [True] * len(arrays)
        xs = [
            lib.tensor(a.copy(), dtype=getattr(lib, dtype), requires_grad=bool(r))
            for a, r in zip(arrays, mask)
        ]
        results.append((xs, program(lib, *xs)))
    return results


def second_derivatives(lib, grads, inputs):
    """d sum(g * g) / d inputs for the gradients that have a graph (None when none has one)."""
    with_graph = [g for g in grads if g is not None and g.requires_grad]
    if not with_graph:
        return None
    total = sum((g * g).sum() for g in with_graph)
    return lib.autograd.grad(total, inputs, allow_unused=True)


def assert_same_derivatives(actual, expected):
    """Two lists of gradients (or None): the same Nones, the same values."""
    assert (actual is None) == (expected is None)
    for a, e in zip(actual or (), expected or ()):
        assert (a is None) == (e is None)
        if e is not None:
            np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-10, atol=1e-12)


def grads_with_graph(lib, y, xs):
    """d y / d xs under create_graph, for an incoming gradient v that itself requires grad."""
    v = lib.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)), dtype=y.dtype)
    v.requires_grad_()
    wrt = [x for x in xs if x.requires_grad]
    return v, wrt, lib.autograd.grad(y, wrt, v, create_graph=True, allow_unused=True)


X = np.array([[0.5, -1.5, 2.0, 0.125], [1.0, -0.25, 3.0, -2.0]])

# --- Task 1: numbers become wrapped numbers ----------------------------------------------------

NUMBER_PROGRAMS = {
    "x * 4": lambda lib, x: x * 4,
    "4 * x": lambda lib, x: 4 * x,
    "x * 0.5": lambda lib, x: x * 0.5,
    "0.5 * x": lambda lib, x: 0.5 * x,
    "x * True": lambda lib, x: x * True,
    "x * 2**40": lambda lib, x: x * 2**40,
    "x * inf": lambda lib, x: x * float("inf"),
    "x.mul(3)": lambda lib, x: x.mul(3),
    "lib.mul(x, 3)": lambda lib, x: lib.mul(x, 3),
    "x / 2.5": lambda lib, x: x / 2.5,
    "x / 2": lambda lib, x: x / 2,
    "lib.div(x, 4)": lambda lib, x: lib.div(x, 4),
    "2 / x": lambda lib, x: 2 / x,
    "x * np.float64(2)": lambda lib, x: x * np.float64(2.0),
    "x * np.float32(2)": lambda lib, x: x * np.float32(2.0),
    "x * np.int32(3)": lambda lib, x: x * np.int32(3),
    "x * np.bool_(True)": lambda lib, x: x * np.bool_(True),
    "x / np.int64(2)": lambda lib, x: x / np.int64(2),
    "x.sum() * 0.5": lambda lib, x: x.sum() * 0.5,
    "x.mean() / 2": lambda lib, x: x.mean() / 2,
    "x**2 * 4": lambda lib, x: x**2 * 4,
    "(x * 0.5).exp()": lambda lib, x: (x * 0.5).exp(),
    "x + 2": lambda lib, x: x + 2,
    "x - 2.5": lambda lib, x: x - 2.5,
    "2 - x": lambda lib, x: 2 - x,
    "lib.add(x, x, alpha=2)": lambda lib, x: lib.add(x, x, alpha=2),
    "lib.sub(x, 1, alpha=0.5)": lambda lib, x: lib.sub(x, 1, alpha=0.5),
    "x**2": lambda lib, x: x**2,
    "x**0.5": lambda lib, x: x.abs() ** 0.5,
    "x**-1": lambda lib, x: x**-1,
    "2**x": lambda lib, x: 2**x,
    "2.5**x": lambda lib, x: 2.5**x,
    "where(x > 0, x, 0.0)": lambda lib, x: lib.where(x > 0, x, 0.0),
    "where(x > 0, 1, x)": lambda lib, x: lib.where(x > 0, 1, x),
    "masked_fill(x > 0, 0.5)": lambda lib, x: x.masked_fill(x > 0, 0.5),
    "clamp(0, 1)": lambda lib, x: x.clamp(0, 1),
    "clamp_min(0.5)": lambda lib, x: x.clamp_min(0.5),
    "leaky_relu(x, 0.2)": lambda lib, x: lib.nn.functional.leaky_relu(x, 0.2),
}
NUMBER_CASES = [
    pytest.param(program, dtype, id=f"{name}-{dtype}")
    for name, program in NUMBER_PROGRAMS.items()
    for dtype in ("float32", "float64")
]


@pytest.mark.parametrize("program, dtype", NUMBER_CASES)
def test_what_a_number_saves_matches_torch(program, dtype):
    """The node, what it saves (a wrapped number: its repr, dtype and 8 bytes) and the result's dtype."""
    (_, y_t), (_, y_m) = on_both(program, X, dtype=dtype)
    np.testing.assert_allclose(y_m.detach().numpy(), y_t.detach().numpy(), rtol=1e-6)
    assert name_of(y_m.dtype) == name_of(y_t.dtype)
    assert_same_graph(y_m, y_t)


@pytest.mark.parametrize("program, dtype", NUMBER_CASES)
def test_gradients_through_a_number_match_torch(program, dtype):
    """The gradient's dtype and, under create_graph, its graph (which saves the wrapped number)."""
    (xs_t, y_t), (xs_m, y_m) = on_both(program, X, dtype=dtype)
    v_t, _, (g_t,) = grads_with_graph(torch, y_t, xs_t)
    v_m, _, (g_m,) = grads_with_graph(ma, y_m, xs_m)
    np.testing.assert_allclose(g_m.detach().numpy(), g_t.detach().numpy(), rtol=1e-6)
    assert name_of(g_m.dtype) == name_of(g_t.dtype)
    assert_same_graph(g_m, g_t)
    (h_t,) = torch.autograd.grad(g_t.sum(), v_t, allow_unused=True)
    (h_m,) = ma.autograd.grad(g_m.sum(), v_m, allow_unused=True)
    assert (h_m is None) == (h_t is None)
    if h_t is not None:
        np.testing.assert_allclose(h_m.numpy(), h_t.numpy(), rtol=1e-6)
        assert name_of(h_m.dtype) == name_of(h_t.dtype)


def test_a_wrapped_number_is_8_bytes_where_torch_counts_8():
    """docs/library.md's example: x**2 * 4 keeps its 4 as tensor(4), an int64, not the tensor's float."""
    for lib in LIBS:
        x = lib.ones(1, 4, requires_grad=True)
        z = x**2 * 4
        assert shown(z.grad_fn._saved_other) == "tensor(4)"
        assert name_of(z.grad_fn._saved_other.dtype) == "int64"
        assert saved_bytes(z) == 8 + 4 * 4
        assert saved_bytes(x * 0.5) == saved_bytes(x / 2.5) == 8


def test_a_0d_gradient_keeps_its_dtype():
    """A float64 wrapped number does not make a float32 0-d gradient float64 (it counts as a number)."""
    dtypes = []
    for lib in LIBS:
        x = lib.ones(3, requires_grad=True)
        s = x.sum()
        (g,) = lib.autograd.grad(s * 0.5, s, lib.tensor(1.0, requires_grad=True), create_graph=True)
        dtypes.append((name_of(g.dtype), name_of(g.grad_fn._saved_other.dtype)))
    assert dtypes[0] == dtypes[1] == ("float32", "float64")


def _saved_numbers(lib):
    x = lib.ones(2, requires_grad=True)
    return {
        "0.5": (x * 0.5).grad_fn._saved_other,
        "4": (x * 4).grad_fn._saved_other,
        "True": (x * True).grad_fn._saved_other,
    }


PROMOTIONS = {
    "0.5 * 4": lambda lib, n: n["0.5"] * n["4"],
    "4 * 4": lambda lib, n: n["4"] * n["4"],
    "0.5 * 0.5": lambda lib, n: n["0.5"] * n["0.5"],
    "True * 0.5": lambda lib, n: n["True"] * n["0.5"],
    "0.5 + 1": lambda lib, n: n["0.5"] + 1,
    "4 + 1": lambda lib, n: n["4"] + 1,
    "4 > 1": lambda lib, n: n["4"] > 1,
    "0-d float32 * 0.5": lambda lib, n: lib.tensor(1.0) * n["0.5"],
    "0-d int64 * 0.5": lambda lib, n: lib.tensor(1) * n["0.5"],
    "0-d int32 * 4": lambda lib, n: lib.tensor(1, dtype=lib.int32) * n["4"],
    "int64 tensor * 0.5": lambda lib, n: lib.tensor([1, 2]) * n["0.5"],
    "float16 tensor * 0.5": lambda lib, n: lib.tensor([1.0], dtype=lib.float16) * n["0.5"],
    "where(c, float32, 0.5)": lambda lib, n: lib.where(lib.tensor([True]), lib.ones(1), n["0.5"]),
    "int32 * np.float32(2)": lambda lib, n: lib.tensor([1], dtype=lib.int32) * np.float32(2),
    "int64 * np.bool_(True)": lambda lib, n: lib.tensor([1, 2]) * np.bool_(True),
    "bool * np.bool_(True)": lambda lib, n: lib.tensor([True]) * np.bool_(True),
    "bool * True": lambda lib, n: lib.tensor([True]) * True,
}


@pytest.mark.parametrize("program", PROMOTIONS.values(), ids=PROMOTIONS.keys())
def test_a_saved_number_read_back_promotes_as_a_number(program):
    """What `_saved_other` gives back is still a wrapped number: it promotes as torch's does."""
    results = [program(lib, _saved_numbers(lib)) for lib in LIBS]
    assert name_of(results[1].dtype) == name_of(results[0].dtype)
    np.testing.assert_allclose(results[1].numpy(), results[0].numpy())


def test_a_wrapped_number_is_a_tensor_that_needs_no_grad():
    for lib in LIBS:
        number = (lib.ones(2, requires_grad=True) * 0.5).grad_fn._saved_other
        assert isinstance(number, lib.Tensor)
        assert (number.requires_grad, number.is_leaf, number.grad_fn, number.dim()) == (
            False,
            True,
            None,
            0,
        )


@pytest.mark.parametrize(
    "in_place",
    [
        lambda y: y.mul_(3.0),
        lambda y: y.mul_(2),
        lambda y: y.div_(2),
        lambda y: y.add_(1.5, alpha=2),
        lambda y: y.add_(True),
    ],
    ids=["mul_(3.0)", "mul_(2)", "div_(2)", "add_(1.5, alpha=2)", "add_(True)"],
)
def test_in_place_arithmetic_saves_a_wrapped_number(in_place):
    (_, y_t), (_, y_m) = on_both(lambda lib, x: in_place(x.clone()), X)
    assert_same_graph(y_m, y_t)


def test_saved_negative_numbers_as_torch():
    """clamp's bounds and mul.Scalar's factor (-2 in tanh's double backward) are signed numbers."""
    shown_values = []
    for lib in LIBS:
        x = lib.tensor(X, requires_grad=True)
        y = x.tanh()
        (g,) = lib.autograd.grad(y, x, lib.ones_like(y, requires_grad=True), create_graph=True)
        (gg,) = lib.autograd.grad(g, x, lib.ones_like(g, requires_grad=True), create_graph=True)
        factors = [n._saved_other for n in graph_nodes(gg.grad_fn)[0] if n.name() == "MulBackward1"]
        clamped = x.clamp(-1, 1).grad_fn
        shown_values.append((factors, clamped._saved_min, clamped._saved_max))
    assert shown_values[1] == shown_values[0] == ([-2], -1, 1)


# --- PyTorch's backward formulas, where they scale by a number or mask with where -----------

POSITIVE = np.array([[0.5, 1.5, 2.0, 0.75], [1.0, 0.25, 3.0, 2.0]])
FORMULAS = {
    "pow_tensor": (lambda lib, a, b: a**b, (POSITIVE, X)),
    "pow_tensor_zeros": (
        lambda lib, a, b: a**b,
        (np.array([0.0, 0.0, 2.0, 0.5]), np.array([0.0, 2.0, 0.0, -1.0])),
    ),
    "pow_tensor_broadcast": (lambda lib, a, b: a**b, (POSITIVE, X[0])),
    "0 ** x": (lambda lib, a: 0**a, (X,)),
    "1 ** x": (lambda lib, a: 1.0**a, (X,)),
    "x ** 0": (lambda lib, a: a**0, (X,)),
    "x ** 1": (lambda lib, a: a**1, (X,)),
    "div": (lambda lib, a, b: a / b, (X, POSITIVE)),
    "div_broadcast": (lambda lib, a, b: a / b, (X, POSITIVE[:, :1])),
    "add_alpha": (lambda lib, a, b: lib.add(a, b, alpha=2), (X, X[0])),
    "sub_alpha": (lambda lib, a, b: lib.sub(a, b, alpha=-0.5), (X, X)),
    "mul_then_tanh": (lambda lib, a, b: (a * b).tanh(), (X, POSITIVE)),
}
FORMULA_CASES = [
    pytest.param(program, arrays, mask, id=f"{name}-{''.join('g' if r else '_' for r in mask)}")
    for name, (program, arrays) in FORMULAS.items()
    for mask in grad_masks(len(arrays))
]


@pytest.mark.parametrize("program, arrays, mask", FORMULA_CASES)
def test_backward_formulas_record_torchs_graph(program, arrays, mask):
    """First derivatives under create_graph (with an incoming gradient that requires grad): the
    same values and graphs; then their own derivatives, the same values."""
    (xs_t, y_t), (xs_m, y_m) = on_both(program, *arrays, dtype="float64", requires_grad=mask)
    v_t, wrt_t, g_t = grads_with_graph(torch, y_t, xs_t)
    v_m, wrt_m, g_m = grads_with_graph(ma, y_m, xs_m)
    for a, b in zip(g_m, g_t):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)
        assert_same_graph(a, b)
    assert_same_derivatives(
        second_derivatives(ma, g_m, [*wrt_m, v_m]), second_derivatives(torch, g_t, [*wrt_t, v_t])
    )


# --- Task 2: PyTorch's backward functions as operations ----------------------------------------

G = np.array([[0.3, -1.2, 0.8, 2.0], [-0.5, 1.1, -0.7, 0.4]])
Y = np.array([[0.2, -0.6, 0.9, 0.0], [0.5, -0.1, 0.35, -0.8]])
BACKWARD_FUNCTIONS = {
    "tanh_backward": (
        lambda g, y: torch.ops.aten.tanh_backward(g, y),
        derivatives.tanh_backward,
        (G, Y),
    ),
    "sigmoid_backward": (
        lambda g, y: torch.ops.aten.sigmoid_backward(g, y),
        derivatives.sigmoid_backward,
        (G, Y),
    ),
    "threshold_backward": (
        lambda g, y: torch.ops.aten.threshold_backward(g, y, 0),
        lambda g, y: derivatives.threshold_backward(g, y, 0),
        (G, Y),
    ),
    "threshold_backward_0.25": (
        lambda g, y: torch.ops.aten.threshold_backward(g, y, 0.25),
        lambda g, y: derivatives.threshold_backward(g, y, 0.25),
        (G, Y),
    ),
    "leaky_relu_backward": (
        lambda g, y: torch.ops.aten.leaky_relu_backward(g, y, 0.2, False),
        lambda g, y: derivatives.leaky_relu_backward(g, y, 0.2),
        (G, Y),
    ),
    "softplus_backward": (
        lambda g, y: torch.ops.aten.softplus_backward(g, y, 2.0, 0.5),
        lambda g, y: derivatives.softplus_backward(g, y, 2.0, 0.5),
        (G, Y),
    ),
    "hardtanh_backward": (
        lambda g, y: torch.ops.aten.hardtanh_backward(g, y, -0.5, 0.5),
        lambda g, y: derivatives.hardtanh_backward(g, y, -0.5, 0.5),
        (G, Y),
    ),
    "log_sigmoid_backward": (  # the buffer, exp(-|self|), outside the graph as logsigmoid keeps it
        lambda g, y: torch.ops.aten.log_sigmoid_backward(g, y, (-y.detach().abs()).exp()),
        lambda g, y: derivatives.log_sigmoid_backward(g, y, (-y.detach().abs()).exp()),
        (G, Y),
    ),
    "softmax_backward_data": (
        lambda g, y: torch.ops.aten._softmax_backward_data(g, y, -1, y.dtype),
        lambda g, y: derivatives.softmax_backward_data(g, y, -1),
        (G, Y),
    ),
    "softmax_backward_data_dim0": (
        lambda g, y: torch.ops.aten._softmax_backward_data(g, y, 0, y.dtype),
        lambda g, y: derivatives.softmax_backward_data(g, y, 0),
        (G, Y),
    ),
    "log_softmax_backward_data": (
        lambda g, y: torch.ops.aten._log_softmax_backward_data(g, y, 1, y.dtype),
        lambda g, y: derivatives.log_softmax_backward_data(g, y, 1),
        (G, Y),
    ),
    "log_softmax_backward_data_neg": (
        lambda g, y: torch.ops.aten._log_softmax_backward_data(g, y, -2, y.dtype),
        lambda g, y: derivatives.log_softmax_backward_data(g, y, -2),
        (G, Y),
    ),
    **{
        f"mse_loss_backward_{name}": (
            lambda g, s, t, r=code: torch.ops.aten.mse_loss_backward(g, s, t, r),
            lambda g, s, t, r=code: bf.mse_loss_backward(g, s, t, r),
            (np.array(0.7) if code else G, Y, X),
        )
        for name, code in (("none", 0), ("mean", 1), ("sum", 2))
    },
}
BACKWARD_CASES = [
    pytest.param(name, mask, id=f"{name}-{''.join('g' if r else '_' for r in mask)}")
    for name, (_, _, arrays) in BACKWARD_FUNCTIONS.items()
    for mask in grad_masks(len(arrays))
]


def run_backward_function(name, lib, mask):
    """The inputs and the output of backward function `name` in `lib`."""
    torch_fn, mini_fn, arrays = BACKWARD_FUNCTIONS[name]
    xs = [
        lib.tensor(a.copy(), dtype=lib.float64, requires_grad=bool(r)) for a, r in zip(arrays, mask)
    ]
    return xs, (torch_fn if lib is torch else mini_fn)(*xs)


@pytest.mark.parametrize("name, mask", BACKWARD_CASES)
def test_backward_function_matches_torch(name, mask):
    """Value, node (TanhBackwardBackward0...), edges and what it saves; then its derivatives under
    create_graph (values and graphs), and their derivatives (values)."""
    (xs_t, out_t), (xs_m, out_m) = (run_backward_function(name, lib, mask) for lib in LIBS)
    np.testing.assert_allclose(out_m.detach().numpy(), out_t.detach().numpy(), rtol=1e-12)
    assert_same_graph(out_m, out_t)
    v_t, wrt_t, g_t = grads_with_graph(torch, out_t, xs_t)
    v_m, wrt_m, g_m = grads_with_graph(ma, out_m, xs_m)
    for a, b in zip(g_m, g_t):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)
        assert a.requires_grad == b.requires_grad
        assert_same_graph(a, b)
    assert_same_derivatives(
        second_derivatives(ma, g_m, [*wrt_m, v_m]), second_derivatives(torch, g_t, [*wrt_t, v_t])
    )


def test_backward_functions_have_no_graph_outside_grad_mode():
    """Under no_grad (as inside a backward without create_graph) nothing is recorded."""
    g = ma.tensor(G, requires_grad=True)
    y = ma.tensor(Y, requires_grad=True)
    with ma.no_grad():
        for _, mini_fn, arrays in BACKWARD_FUNCTIONS.values():
            inputs = (g, y, ma.tensor(X, requires_grad=True))[: len(arrays)]
            out = mini_fn(*inputs)
            assert out.grad_fn is None and not out.requires_grad


@pytest.mark.parametrize("op", ["tanh", "sigmoid", "relu"])
def test_backward_without_create_graph_records_no_node(op):
    """The fast path: a backward pass through a chain of tanh (sigmoid, relu) makes no node."""
    x = ma.tensor(G, requires_grad=True)
    y = x
    for _ in range(5):
        y = getattr(y * 0.9, op)()
    loss = y.sum()
    before = next(ma_node._sequence_numbers)
    loss.backward()
    assert next(ma_node._sequence_numbers) == before + 1
    x_t = torch.tensor(G, requires_grad=True)
    y_t = x_t
    for _ in range(5):
        y_t = getattr(y_t * 0.9, op)()
    y_t.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x_t.grad.numpy(), rtol=1e-6)


GRADIENT_PROGRAMS = {
    "tanh": lambda lib, x: x.tanh(),
    "sigmoid": lambda lib, x: x.sigmoid(),
    "relu": lambda lib, x: x.relu(),
    "softmax": lambda lib, x: x.softmax(-1),
    "log_softmax": lambda lib, x: x.log_softmax(0),
    "mse_loss": lambda lib, x: lib.nn.functional.mse_loss(x, lib.tensor(X, dtype=lib.float64)),
    "mse_loss_sum": lambda lib, x: lib.nn.functional.mse_loss(x, x.flip(0), reduction="sum"),
}


@pytest.mark.parametrize("program", GRADIENT_PROGRAMS.values(), ids=GRADIENT_PROGRAMS.keys())
def test_gradient_of_the_gradient_matches_torch(program):
    """Two levels down: the gradient of tanh's gradient, itself under create_graph, the same graph."""
    graphs = []
    for lib in LIBS:
        x = lib.tensor(G, dtype=lib.float64, requires_grad=True)
        y = program(lib, x)
        v = lib.tensor(np.full(tuple(y.shape), 0.5) if y.ndim == 0 else Y, dtype=lib.float64)
        v.requires_grad_()
        (g,) = lib.autograd.grad(y, x, v, create_graph=True)
        u = lib.tensor(X, dtype=lib.float64)
        gg = lib.autograd.grad(g, (x, v), u, create_graph=True)
        graphs.append(gg)
    for actual, expected in zip(graphs[1], graphs[0]):
        assert_same_graph(actual, expected)


def test_relu_passes_the_gradient_of_nan_as_torch():
    """threshold_backward masks where self <= 0: a NaN is not, so its gradient passes."""
    grads = []
    for lib in LIBS:
        x = lib.tensor([float("nan"), -1.0, 2.0], requires_grad=True)
        x.relu().sum().backward()
        grads.append(x.grad.numpy().tolist())
    assert grads[1] == grads[0] == [1.0, 0.0, 1.0]


def test_every_backward_function_is_compared():
    """A guard: each backward function (the module's, and the table's) has an entry (named after
    it) above."""
    public = [
        name
        for name, value in vars(bf).items()
        if callable(value)
        and getattr(value, "__module__", None) == bf.__name__
        and not isinstance(value, type)
        and not name.startswith("_")
    ] + [s.partition("(")[0] for s in derivatives.FUNCTIONS if "_backward" in s]
    assert len(public) == 10
    for name in public:
        assert any(key.startswith(name) for key in BACKWARD_FUNCTIONS), name


@pytest.mark.parametrize("seed", range(3))
def test_random_backward_function_values(seed):
    """Random shapes and values: the same numbers as torch's kernels (float32)."""
    rng_arrays = random_arrays([(4, 5), (4, 5), (4, 5)], seed=seed)
    for torch_fn, mini_fn, arrays in BACKWARD_FUNCTIONS.values():
        inputs = rng_arrays[: len(arrays)]
        if np.ndim(arrays[0]) == 0:
            inputs = [np.asarray(0.3), *inputs[1:]]
        t = torch_fn(*(torch.tensor(a, dtype=torch.float32) for a in inputs))
        m = mini_fn(*(ma.tensor(a, dtype=ma.float32) for a in inputs))
        assert name_of(m.dtype) == name_of(t.dtype)
        np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-6, atol=1e-7)
