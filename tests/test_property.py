"""Property-based parity: random small programs over the op set, run in torch and mini_autograd.

hypothesis draws a program step by step: a few float64 leaves, then unary ops, binary ops with
broadcasting, reductions, reshapes/transposes/indexing, matmul, softmax, cat/stack, in-place ops.
The program is a list of (op, operand indices) that replays identically on both libraries; they
must agree on every value, the gradients (and whether they carry a graph), second-order
gradients (autograd.grad with create_graph=True) and on whether a second backward raises.
"""

import os

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from parity_helpers import LIBS, compare_nested, outcome, to_numpy

import mini_autograd as ma

UNARY = {
    "exp_tanh": lambda lib, a: lib.exp(lib.tanh(a)),
    "tanh": lambda lib, a: lib.tanh(a),
    "sigmoid": lambda lib, a: lib.sigmoid(a),
    "relu": lambda lib, a: lib.relu(a),
    "abs": lambda lib, a: lib.abs(a),
    "neg": lambda lib, a: -a,
    "log": lambda lib, a: lib.log(a * a + 0.5),
    "sqrt": lambda lib, a: lib.sqrt(a * a + 0.25),
    "square": lambda lib, a: a**2,
    "cube_half": lambda lib, a: a**3 * 0.5,
    "rsub": lambda lib, a: 2 - a,
    "rdiv": lambda lib, a: 1 / (a * a + 1),
    "rpow": lambda lib, a: 2 ** lib.tanh(a),
    "clone": lambda lib, a: a.clone(),
    "iadd_number": lambda lib, a: a.clone().add_(1.5),
    "imul_number": lambda lib, a: a.clone().mul_(-2.0),
    "sum": lambda lib, a: a.sum(),
    "mean": lambda lib, a: a.mean(),
    "max": lambda lib, a: a.max(),
    "flatten": lambda lib, a: a.flatten(),
    "reshape": lambda lib, a: a.reshape(-1, 1),
    "unsqueeze0": lambda lib, a: a.unsqueeze(0),
    "unsqueeze_last": lambda lib, a: a.unsqueeze(-1),
    "squeeze": lambda lib, a: a.squeeze(),
    "ellipsis": lambda lib, a: a[...],
    "none": lambda lib, a: a[None],
    "detach_mul": lambda lib, a: a * a.detach(),
}
# ops that need at least one dimension; the int is the dim they act on (drawn as +/-)
WITH_DIM = {
    "sum_dim": lambda lib, a, d: a.sum(d),
    "sum_keepdim": lambda lib, a, d: a.sum(d, keepdim=True),
    "mean_dim": lambda lib, a, d: a.mean(d),
    "max_dim": lambda lib, a, d: a.max(d).values,
    "max_keepdim": lambda lib, a, d: a.max(d, keepdim=True)[0],
    "softmax": lambda lib, a, d: a.softmax(d),
    "log_softmax": lambda lib, a, d: a.log_softmax(d),
    "transpose_last": lambda lib, a, d: a.transpose(d, -1),
    "select": lambda lib, a, d: _select(a, d),
    "slice": lambda lib, a, d: _slice(a, d),
    "cat_self": lambda lib, a, d: lib.cat([a, a * 2], d),
    "stack_self": lambda lib, a, d: lib.stack([a, a.tanh()], d),
    "index_list": lambda lib, a, d: a[[0, -1, 0]],
}
BINARY = {
    "add": lambda lib, a, b: a + b,
    "sub": lambda lib, a, b: a - b,
    "mul": lambda lib, a, b: a * b,
    "div": lambda lib, a, b: a / (b * b + 1),
    "pow": lambda lib, a, b: (a * a + 0.5) ** lib.tanh(b),
    "iadd": lambda lib, a, b: _iadd(a, b),
    "imul": lambda lib, a, b: _imul(a, b),
}


def _select(a, d):
    index = [slice(None)] * a.ndim
    index[d] = -1
    return a[tuple(index)]


def _slice(a, d):
    index = [slice(None)] * a.ndim
    index[d] = slice(0, 2)
    return a[tuple(index)]


def _iadd(a, b):
    y = a * 1.0
    y += b
    return y


def _imul(a, b):
    y = a.clone()
    y.mul_(b)
    return y


def run_program(lib, leaves, requires, steps):
    """Replay `steps` on `lib`; returns (leaf tensors, every produced tensor)."""
    xs = [
        lib.tensor(a.copy(), dtype=lib.float64, requires_grad=r) for a, r in zip(leaves, requires)
    ]
    pool = list(xs)
    for name, args in steps:
        if name in UNARY:
            out = UNARY[name](lib, pool[args[0]])
        elif name in WITH_DIM:
            out = WITH_DIM[name](lib, pool[args[0]], args[1])
        elif name == "matmul":
            out = pool[args[0]] @ pool[args[1]]
        elif name == "matmul_T":
            out = pool[args[0]] @ pool[args[0]].T
        else:
            out = BINARY[name](lib, pool[args[0]], pool[args[1]])
        pool.append(out)
    return xs, pool


@st.composite
def programs(draw):
    """Leaves (shapes, values, requires_grad) and a list of valid steps over them."""
    n_leaves = draw(st.integers(1, 3))
    shapes = [
        tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=3))) for _ in range(n_leaves)
    ]
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    leaves = [np.asarray(rng.uniform(-1.5, 1.5, s)) for s in shapes]
    requires = draw(st.lists(st.booleans(), min_size=n_leaves, max_size=n_leaves))
    if not any(requires):
        requires[0] = True
    pool_shapes = list(shapes)
    steps = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["unary", "unary", "dim", "binary", "binary", "matmul"]))
        i = draw(st.integers(0, len(pool_shapes) - 1))
        shape = pool_shapes[i]
        if kind == "binary":
            j = draw(st.integers(0, len(pool_shapes) - 1))
            try:
                np.broadcast_shapes(shape, pool_shapes[j])
            except ValueError:
                continue
            name = draw(st.sampled_from(sorted(BINARY)))
            if name in ("iadd", "imul") and np.broadcast_shapes(shape, pool_shapes[j]) != shape:
                continue
            steps.append((name, (i, j)))
        elif kind == "matmul" and len(shape) == 2:
            js = [j for j, s in enumerate(pool_shapes) if len(s) in (1, 2) and s[0] == shape[1]]
            if js and draw(st.booleans()):
                steps.append(("matmul", (i, draw(st.sampled_from(js)))))
            else:
                steps.append(("matmul_T", (i,)))
        elif kind == "dim" and shape:
            name = draw(st.sampled_from(sorted(WITH_DIM)))
            d = draw(st.integers(-len(shape), len(shape) - 1))
            steps.append((name, (i, d)))
        else:
            steps.append((draw(st.sampled_from(sorted(UNARY))), (i,)))
        # the new shape, from running the step (cheap: tiny arrays, no grad)
        with ma.no_grad():
            _, pool = run_program(ma, leaves, [False] * n_leaves, steps)
        pool_shapes = [tuple(t.shape) for t in pool]
    return leaves, requires, steps


def plain(t):
    return None if t is None else np.round(to_numpy(t), 8)


def evaluate(lib, leaves, requires, steps, seed):
    """Values, gradients, graph flags and second-order gradients of the program on `lib`."""
    xs, pool = run_program(lib, leaves, requires, steps)
    rng = np.random.default_rng(seed)
    outs = [t for t in pool[len(xs) :] if t.requires_grad] or [x for x in xs if x.requires_grad]
    loss = sum(((t * lib.tensor(rng.standard_normal(tuple(t.shape)))).sum() for t in outs), 0.0)
    wrt = [x for x in xs if x.requires_grad]
    grads = lib.autograd.grad(loss, wrt, create_graph=True, allow_unused=True)
    terms = [
        (g * lib.tensor(rng.standard_normal(tuple(g.shape)))).sum()
        for g in grads
        if g is not None and g.requires_grad
    ]
    second = None
    if terms:
        second = [
            plain(h) for h in lib.autograd.grad(sum(terms[1:], terms[0]), wrt, allow_unused=True)
        ]
    # a fresh run: backward, then a second backward, which raises exactly when a node saved tensors
    xs2, pool2 = run_program(lib, leaves, requires, steps)
    start = next(x for x in xs2 if x.requires_grad).sum() * 0
    loss2 = sum((t.sum() for t in pool2[len(xs2) :] if t.requires_grad), start)
    loss2.backward()
    again = outcome(loss2.backward)
    return {
        "values": [plain(t) for t in pool],
        "requires_grad": [t.requires_grad for t in pool],
        "names": [None if t.grad_fn is None else t.grad_fn.name() for t in pool],
        "grads": [plain(g) for g in grads],
        "grads_have_graph": [g is not None and g.requires_grad for g in grads],
        "second": second,
        "second_backward": again[:1] + again[2:] if again[0] == "raises" else ("ok",),
        "leaf_grads": [plain(x.grad) for x in xs2],
    }


# PROPERTY_EXAMPLES=5000 for a longer hunt; the default keeps the test at a few seconds.
@settings(
    max_examples=int(os.environ.get("PROPERTY_EXAMPLES", 150)),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(programs(), st.integers(0, 1000))
def test_random_programs_match_torch(program, seed):
    leaves, requires, steps = program
    torch_lib, ma_lib = LIBS
    expected = evaluate(torch_lib, leaves, requires, steps, seed)
    actual = evaluate(ma_lib, leaves, requires, steps, seed)
    compare_nested(actual, expected, "result", rtol=1e-6, atol=1e-7)
