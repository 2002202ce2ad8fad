"""Shared helpers for the PyTorch-parity tests: run the same code on `torch` and `mini_autograd`.

Every test function takes `lib` (the torch module or the mini_autograd module) so one program runs
on both libraries; these helpers build inputs, walk the recorded graphs and describe them as plain
Python values that can be compared with `==`.
"""

import numpy as np
import torch

import mini_autograd as ma
from mini_autograd.instruments import graph_walk
from mini_autograd.instruments.memory import as_numpy

LIBS = (torch, ma)
FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


def is_tensor(x):
    """True for a torch or a mini_autograd tensor."""
    return isinstance(x, (torch.Tensor, ma.Tensor))


def to_numpy(t):
    """A float64 numpy copy of a torch or mini_autograd tensor (None stays None)."""
    return None if t is None else np.array(as_numpy(t), dtype=np.float64)


def leaves(lib, arrays, requires_grad):
    """Float64 leaf tensors of `lib` made from `arrays`, requires_grad given per input."""
    return [
        lib.tensor(a.copy(), dtype=lib.float64, requires_grad=bool(r))
        for a, r in zip(arrays, requires_grad)
    ]


def random_arrays(shapes, domain="any", seed=0):
    """Float64 inputs for an op: normal, or positive ('pos') for log/sqrt/pow bases."""
    rng = np.random.default_rng(seed)
    arrays = []
    for shape in shapes:
        a = rng.standard_normal(shape)
        if domain == "pos":
            a = np.abs(a) + 0.5
        arrays.append(np.asarray(a))  # 0-d results are numpy scalars: make them arrays
    return arrays


def graph_nodes(root):
    """The nodes reachable from `root` (a node) in graph_walk's order, and {id(node): position}."""
    order = graph_walk.graph_nodes(root)
    return order, {id(node): k for k, node in enumerate(order)}


def saved_names(node):
    """The `_saved_*` attribute names of a node, as `dir()` lists them (PyTorch's binding)."""
    return sorted(d for d in dir(node) if d.startswith("_saved_"))


def describe_value(value):
    """A comparable description of a saved value: tensors by shape and values, sizes as tuples."""
    if is_tensor(value):
        return ("tensor", tuple(value.shape), np.round(to_numpy(value), 10).tolist())
    if isinstance(value, (tuple, list)):
        return tuple(describe_value(v) for v in value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def read_saved(node, name):
    """The saved value, or ('raises', type name, message) when reading it raises."""
    try:
        return describe_value(getattr(node, name))
    except Exception as error:  # noqa: BLE001 - the exception itself is what we compare
        return ("raises", type(error).__name__, str(error))


def describe_graph(tensor, values=True):
    """Every node reachable from `tensor.grad_fn`: name, edges, saved names (and values).

    Edges are given as (index of the next node in this description or None, output_nr), so two
    descriptions are equal exactly when the graphs have the same shape, names and saved tensors.
    """
    if tensor.grad_fn is None:
        return None
    nodes, index = graph_nodes(tensor.grad_fn)
    described = []
    for node in nodes:
        edges = tuple((None if n is None else index[id(n)], nr) for n, nr in node.next_functions)
        entry = {"name": node.name(), "edges": edges, "saved": saved_names(node)}
        if values:
            entry["values"] = {name: read_saved(node, name) for name in entry["saved"]}
        if hasattr(node, "variable"):
            entry["variable"] = tuple(node.variable.shape)
        described.append(entry)
    return described


def saved_reads(tensor):
    """For each node and saved name: 'raises: <message>' or 'ok' (to compare after backward)."""
    if tensor.grad_fn is None:
        return None
    nodes, _ = graph_nodes(tensor.grad_fn)
    reads = []
    for node in nodes:
        for name in saved_names(node):
            value = read_saved(node, name)
            is_error = isinstance(value, tuple) and value[:1] == ("raises",)
            reads.append(
                (node.name(), name, f"raises {value[1]}: {value[2]}" if is_error else "ok")
            )
    return reads


def outcome(fn, *args, **kwargs):
    """('ok', result) or ('raises', exception type name, message): errors become comparable."""
    try:
        return ("ok", fn(*args, **kwargs))
    except Exception as error:  # noqa: BLE001 - the exception itself is what we compare
        return ("raises", type(error).__name__, str(error))


def same_on_both(fn, own_names=False):
    """Run fn(lib) on torch and mini_autograd; assert equal plain-Python results (or errors) and
    return them. With `own_names`, mini_autograd's name in an error text reads as torch's (its
    Size and dtypes print so)."""
    expected, actual = outcome(fn, torch), outcome(fn, ma)
    if own_names and actual[0] == "raises":
        actual = (*actual[:2], actual[2].replace("mini_autograd.", "torch."))
    assert actual == expected
    return actual


def plain(x):
    """Tensors (and containers of them) as nested lists, rounded, for == comparisons."""
    if is_tensor(x):
        return np.round(to_numpy(x), 10).tolist()
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    return x


def error_of(fn, *args, **kwargs):
    """(exception type name, message) raised by fn, or None when it does not raise."""
    result = outcome(fn, *args, **kwargs)
    return None if result[0] == "ok" else result[1:]


def assert_close(actual, expected, what="", rtol=1e-7, atol=1e-9):
    """Compare two tensors / arrays / None (None must match None)."""
    if expected is None or actual is None:
        assert actual is None and expected is None, f"{what}: {actual!r} vs {expected!r}"
        return
    a = to_numpy(actual) if is_tensor(actual) else np.asarray(actual)
    e = to_numpy(expected) if is_tensor(expected) else np.asarray(expected)
    assert a.shape == e.shape, f"{what}: shape {a.shape} vs {e.shape}"
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, err_msg=what)


def first_output(y):
    """The tensor an op returns (max(dim) returns (values, indices): take values)."""
    return y[0] if isinstance(y, tuple) else y


def weights_like(y, seed=1):
    """A fixed random float64 array with y's shape, to make a scalar loss (y * w).sum()."""
    return np.random.default_rng(seed).standard_normal(tuple(y.shape))


def derivatives(lib, fn, arrays, requires_grad):
    """Value, first and second derivatives of `fn` on `lib`, as plain numpy / None.

    loss = (fn(*x) * w).sum();  g = d loss / d x (create_graph=True);
    h = d (sum_i g_i * v_i) / d x  -- a Hessian-vector product.  Also reports which first
    derivatives require grad, since that decides whether a second derivative exists at all.
    """
    xs = leaves(lib, arrays, requires_grad)
    y = first_output(fn(lib, *xs))
    w = lib.tensor(weights_like(y), dtype=lib.float64)
    loss = (y * w).sum()
    wrt = [x for x in xs if x.requires_grad]
    g = lib.autograd.grad(loss, wrt, create_graph=True, allow_unused=True)
    rng = np.random.default_rng(2)
    second = [
        (gi * lib.tensor(rng.standard_normal(tuple(gi.shape)), dtype=lib.float64)).sum()
        for gi in g
        if gi is not None and gi.requires_grad
    ]
    h = None
    if second:
        total = second[0]
        for s in second[1:]:
            total = total + s
        h = [to_numpy(t) for t in lib.autograd.grad(total, wrt, allow_unused=True)]
    return {
        "value": to_numpy(y),
        "grad": [to_numpy(t) for t in g],
        "grad_requires_grad": [None if t is None else t.requires_grad for t in g],
        "hvp": h,
    }


def compare_nested(actual, expected, what="", rtol=1e-7, atol=1e-9):
    """assert_close through dicts and lists of arrays/None; other values with ==."""
    if isinstance(expected, dict):
        assert actual.keys() == expected.keys(), what
        for key in expected:
            compare_nested(actual[key], expected[key], f"{what}.{key}", rtol, atol)
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{what}: {actual!r}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            compare_nested(a, e, f"{what}[{i}]", rtol, atol)
    elif isinstance(expected, np.ndarray) or isinstance(actual, np.ndarray):
        assert_close(actual, expected, what, rtol, atol)
    else:
        assert actual == expected, f"{what}: {actual!r} vs {expected!r}"


def grad_masks(n):
    """Every requires_grad pattern for n inputs with at least one True (conditional saving)."""
    masks = []
    for bits in range(1, 2**n):
        masks.append(tuple(bool(bits >> i & 1) for i in range(n)))
    return masks


def f64(lib, data, requires_grad=False):
    """A float64 leaf of `lib`."""
    return lib.tensor(data, dtype=lib.float64, requires_grad=requires_grad)


def square(lib):
    """x * x as a custom Function of `lib` that saves x for its backward."""

    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    return Square


def tree(x):
    """Tensors as float64 numpy arrays, tuples as lists, through nested containers."""
    if is_tensor(x):
        return to_numpy(x)
    if isinstance(x, (list, tuple)):
        return [tree(v) for v in x]
    if isinstance(x, dict):
        return {k: tree(v) for k, v in x.items()}
    return x


def same_results(fn):
    """Run fn(lib) on both libraries; results equal (arrays to 1e-7), or the same error."""
    expected, actual = outcome(fn, torch), outcome(fn, ma)
    if expected[0] == "raises" or actual[0] == "raises":
        assert actual == expected
    else:
        compare_nested(tree(actual[1]), tree(expected[1]))
    return actual


def describe(x):
    """Tensors as (dtype name, shape, values), recursively through tuples; other values as they are."""
    if isinstance(x, (torch.Tensor, ma.Tensor)):
        dtype = str(x.dtype).rpartition(".")[2]
        return ("tensor", dtype, tuple(x.shape), to_numpy(x) if x.numel() else None)
    if isinstance(x, (tuple, list)):
        return tuple(describe(v) for v in x)
    return x


def assert_same(actual, expected):
    """Equal descriptions; float values within 1e-6 (NaN equal to NaN)."""
    if isinstance(expected, np.ndarray):
        np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-7, equal_nan=True)
    elif isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected), (actual, expected)
        for a, e in zip(actual, expected):
            assert_same(a, e)
    else:
        assert actual == expected
