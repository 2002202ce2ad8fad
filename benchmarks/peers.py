"""The same maths in other engines: torch eager, mini_autograd, HIPS autograd, mygrad,
micrograd, jax (eager and jit) and bare numpy, on four workloads, as ratios to torch eager.

Every engine computes the same gradients from the same numbers (tests/test_benchmarks.py checks
them against torch); an engine that cannot run a workload, or is not installed, gets "–". The
peers are optional: `pip install -e ".[bench]"` installs them (jax where it installs).
"""

import importlib.util
import math
import statistics
import sys
import time

import numpy as np
import torch

import mini_autograd as ma

CHAIN_OPS = 1500  # alternating multiplications and tanh, as benchmarks.run's tiny-op chain
PEERS = ("autograd", "mygrad", "micrograd", "jax")  # the import names of the optional engines
COLUMNS = {  # column: the package it needs (None: always there)
    "torch eager": None,
    "mini_autograd": None,
    "HIPS autograd": "autograd",
    "mygrad": "mygrad",
    "micrograd": "micrograd",
    "jax eager": "jax",
    "jax jit": "jax",
    "bare numpy": None,
}


def missing_peers():
    """The optional engines that are not installed."""
    return [name for name in PEERS if importlib.util.find_spec(name) is None]


# --- the data of each workload ------------------------------------------------------------------


def chain_data(shape):
    """x and w of the tanh chain: y = tanh(y * w), CHAIN_OPS / 2 times, from y = x."""
    return np.full(shape, 0.5, np.float32), np.full(shape, 0.999, np.float32)


def mlp_data():
    """A batch of 256 inputs of 784 features, labels, and the weights of a 784-512-10 MLP."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 784), dtype=np.float32)
    labels = rng.integers(0, 10, 256)
    w1 = (rng.standard_normal((784, 512)) / 28).astype(np.float32)
    w2 = (rng.standard_normal((512, 10)) / 22.6).astype(np.float32)
    return x, labels, [w1, np.zeros(512, np.float32), w2, np.zeros(10, np.float32)]


def moons_data():
    """micrograd's demo: 100 points of two interleaved half-moons, labels ±1, a 2-16-16-1 MLP."""
    rng = np.random.default_rng(1)
    angles = np.linspace(0, np.pi, 50)
    upper = np.stack([np.cos(angles), np.sin(angles)], 1)
    lower = np.stack([1 - np.cos(angles), 0.5 - np.sin(angles)], 1)
    x = (np.concatenate([upper, lower]) + rng.normal(0, 0.1, (100, 2))).astype(np.float64)
    y = np.concatenate([np.ones(50), -np.ones(50)])
    sizes = [2, 16, 16, 1]
    weights = []
    for n_in, n_out in zip(sizes, sizes[1:]):
        weights += [rng.uniform(-1, 1, (n_in, n_out)), np.zeros(n_out)]
    return x, y, weights


LR = 0.01  # the SGD step of the MLP and of the demo
ALPHA = 1e-4  # the demo's L2 regularisation


# --- torch and mini_autograd: one program for both ---------------------------------------------


def tanh_chain(x, w, ops=CHAIN_OPS):
    """ops alternating multiplications by w and tanh, starting from x (a torch-like tensor)."""
    y = x
    for _ in range(ops // 2):
        y = (y * w).tanh()
    return y


def lib_chain(lib, shape):
    """d(sum of the chain)/dx with a torch-like library."""
    x0, w0 = chain_data(shape)

    def run():
        x = lib.tensor(x0, requires_grad=True)
        tanh_chain(x, lib.tensor(w0)).sum().backward()
        return x.grad.numpy()

    return run


def lib_mlp(lib):
    """One SGD step of the MLP with a torch-like library: the weights after it."""
    x0, labels, weights = mlp_data()
    x, targets = lib.tensor(x0), lib.tensor(labels)

    def run():
        w1, b1, w2, b2 = params = [lib.tensor(w, requires_grad=True) for w in weights]
        logits = (x @ w1 + b1).relu() @ w2 + b2
        lib.nn.functional.cross_entropy(logits, targets).backward()
        with lib.no_grad():
            for p in params:
                p -= LR * p.grad
        return [p.detach().numpy() for p in params]

    return run


def lib_moons(lib):
    """One step of micrograd's demo (max-margin loss and L2) with a torch-like library."""
    x0, y0, weights = moons_data()
    x, y = lib.tensor(x0), lib.tensor(y0)

    def run():
        params = [lib.tensor(w, requires_grad=True) for w in weights]
        h = x
        for i in range(0, len(params), 2):
            h = h @ params[i] + params[i + 1]
            h = h.relu() if i < len(params) - 2 else h
        margin = (1 - y * h.reshape(-1)).relu().mean()
        loss = margin + ALPHA * sum((p * p).sum() for p in params)
        loss.backward()
        return [p.grad.numpy() for p in params]

    return run


# --- HIPS autograd, jax: a loss function and its grad -------------------------------------------


def functional_chain(np_module, shape):
    """The chain as a function of x, written with numpy's API (autograd.numpy, jax.numpy)."""
    _, w = chain_data(shape)

    def loss(x):
        y = x
        for _ in range(CHAIN_OPS // 2):
            y = np_module.tanh(y * w)
        return np_module.sum(y)

    return loss


def functional_mlp(np_module, log_softmax):
    """The MLP's cross-entropy as a function of the weights list."""
    x, labels, _ = mlp_data()

    def loss(params):
        w1, b1, w2, b2 = params
        logits = np_module.dot(np_module.maximum(np_module.dot(x, w1) + b1, 0), w2) + b2
        return -np_module.mean(log_softmax(logits)[np.arange(len(labels)), labels])

    return loss


def hips_workloads():
    """{workload: run} for HIPS autograd."""
    import autograd
    import autograd.numpy as anp

    def log_softmax(z):
        z = z - anp.max(z, axis=1, keepdims=True)
        return z - anp.log(anp.sum(anp.exp(z), axis=1, keepdims=True))

    mlp_grad = autograd.grad(functional_mlp(anp, log_softmax))
    weights = mlp_data()[2]
    runs = {}
    for name, shape in (("chain1", (1,)), ("chain8", (8, 8))):
        g, x = autograd.grad(functional_chain(anp, shape)), chain_data(shape)[0]
        runs[name] = lambda g=g, x=x: g(x)
    runs["mlp"] = lambda: [w - LR * g for w, g in zip(weights, mlp_grad(weights))]
    return runs


def jax_workloads(jit):
    """{workload: run} for jax, eager or compiled with jit (compiled before timing)."""
    import jax
    import jax.numpy as jnp

    wrap = jax.jit if jit else (lambda f: f)
    runs = {}
    for name, shape in (("chain1", (1,)), ("chain8", (8, 8))):
        g = wrap(jax.grad(functional_chain(jnp, shape)))
        x = jnp.asarray(chain_data(shape)[0])
        runs[name] = lambda g=g, x=x: np.asarray(g(x).block_until_ready())
    mlp_grad = wrap(jax.grad(functional_mlp(jnp, jax.nn.log_softmax)))
    weights = [jnp.asarray(w) for w in mlp_data()[2]]

    def mlp():
        grads = mlp_grad(weights)
        return [np.asarray((w - LR * g).block_until_ready()) for w, g in zip(weights, grads)]

    runs["mlp"] = mlp
    return runs


# --- mygrad and micrograd -----------------------------------------------------------------------


def mygrad_workloads():
    """{workload: run} for mygrad."""
    import mygrad as mg
    from mygrad.nnet.activations import relu
    from mygrad.nnet.losses import softmax_crossentropy

    def chain(shape):
        x0, w = chain_data(shape)

        def run():
            x = mg.tensor(x0)
            y = x
            for _ in range(CHAIN_OPS // 2):
                y = mg.tanh(y * w)
            y.sum().backward()
            return x.grad

        return run

    x, labels, weights = mlp_data()

    def mlp():
        w1, b1, w2, b2 = params = [mg.tensor(w) for w in weights]
        logits = mg.matmul(relu(mg.matmul(x, w1) + b1), w2) + b2
        softmax_crossentropy(logits, labels).backward()
        return [p.data - LR * p.grad for p in params]

    return {"chain1": chain((1,)), "chain8": chain((8, 8)), "mlp": mlp}


def micrograd_workloads():
    """{workload: run} for micrograd, which works on Python floats: the 1-element chain and its
    own demo."""
    from micrograd.engine import Value

    def tanh(v):
        """tanh as the lecture's micrograd has it (the package's Value has relu only)."""
        out = Value(math.tanh(v.data), (v,), "tanh")

        def _backward():
            v.grad += (1 - out.data**2) * out.grad

        out._backward = _backward
        return out

    def chain1():
        x0, w0 = chain_data((1,))
        x, w = Value(float(x0[0])), float(w0[0])
        y = x
        for _ in range(CHAIN_OPS // 2):
            y = tanh(y * w)
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 4 * CHAIN_OPS))  # its topological sort recurses
        try:
            y.backward()
        finally:
            sys.setrecursionlimit(limit)
        return np.array([x.grad], np.float32)

    x0, y0, weights = moons_data()

    def moons():
        params = [[[Value(float(v)) for v in row] for row in np.atleast_2d(w)] for w in weights]
        scores = []
        for point in x0:
            h = [Value(float(v)) for v in point]
            for i in range(0, len(params), 2):
                w, (b,) = params[i], params[i + 1]
                h = [sum((h[k] * w[k][j] for k in range(len(h))), b[j]) for j in range(len(w[0]))]
                h = [v.relu() for v in h] if i < len(params) - 2 else h
            scores.append(h[0])
        margins = [(1 - float(label) * s).relu() for label, s in zip(y0, scores)]
        every = [v for p in params for row in p for v in row]
        loss = sum(margins) * (1.0 / len(margins)) + ALPHA * sum(v * v for v in every)
        loss.backward()
        return [np.array([[v.grad for v in row] for row in p]).reshape(w.shape)
                for p, w in zip(params, weights)]  # fmt: skip

    return {"chain1": chain1, "moons": moons}


# --- bare numpy: the forward and the backward written by hand -----------------------------------


def numpy_workloads():
    """{workload: run} with the gradients derived by hand: the floor any numpy engine stands on."""

    def chain(shape):
        x, w = chain_data(shape)

        def run():
            outputs, y = [], x
            for _ in range(CHAIN_OPS // 2):
                y = np.tanh(y * w)
                outputs.append(y)
            grad = np.ones_like(x)
            for y in reversed(outputs):
                grad = grad * (1 - y * y) * w
            return grad

        return run

    x, labels, weights = mlp_data()

    def mlp():
        w1, b1, w2, b2 = weights
        hidden = np.maximum(x @ w1 + b1, 0)
        logits = hidden @ w2 + b2
        probs = np.exp(logits - logits.max(1, keepdims=True))
        probs /= probs.sum(1, keepdims=True)
        probs[np.arange(len(labels)), labels] -= 1
        d_logits = probs / len(labels)
        d_hidden = (d_logits @ w2.T) * (hidden > 0)
        grads = [x.T @ d_hidden, d_hidden.sum(0), hidden.T @ d_logits, d_logits.sum(0)]
        return [w - LR * g for w, g in zip(weights, grads)]

    return {"chain1": chain((1,)), "chain8": chain((8, 8)), "mlp": mlp}


WORKLOADS = {  # key: the table's row name
    "chain1": "tanh chain, 1,500 ops, 1 element",
    "chain8": "tanh chain, 1,500 ops, 8×8",
    "mlp": "MLP step 784-512-10, batch 256",
    "moons": "micrograd's demo step, 2-16-16-1 on 100 points",
}


def engines():
    """{column: {workload: run}} for every engine installed here."""
    found = {}
    for lib, column in ((torch, "torch eager"), (ma, "mini_autograd")):
        found[column] = {
            "chain1": lib_chain(lib, (1,)),
            "chain8": lib_chain(lib, (8, 8)),
            "mlp": lib_mlp(lib),
            "moons": lib_moons(lib),
        }
    makers = {
        "HIPS autograd": hips_workloads,
        "mygrad": mygrad_workloads,
        "micrograd": micrograd_workloads,
        "jax eager": lambda: jax_workloads(jit=False),
        "jax jit": lambda: jax_workloads(jit=True),
    }
    for column, make in makers.items():
        if importlib.util.find_spec(COLUMNS[column]) is not None:
            found[column] = make()
    found["bare numpy"] = numpy_workloads()
    return found


def measure(repeats, runs_by_engine=None, show=print):
    """{workload: {column: median seconds}}, the engines of a workload run in turn each repeat."""
    runs_by_engine = runs_by_engine or engines()
    medians = {}
    for workload in WORKLOADS:
        runs = {c: r[workload] for c, r in runs_by_engine.items() if workload in r}
        for run in runs.values():
            run()  # warm up (jit compiles here)
        samples = {column: [] for column in runs}
        for _ in range(repeats):
            for column, run in runs.items():
                start = time.perf_counter()
                run()
                samples[column].append(time.perf_counter() - start)
        medians[workload] = {c: statistics.median(s) for c, s in samples.items()}
        show(f"  measured {workload} on {len(runs)} engines")
    return medians


def table(medians):
    """The markdown table of ratios to torch eager, and the line naming missing peers."""
    columns = [c for c in COLUMNS if any(c in m for m in medians.values())]
    lines = [
        "| workload | " + " | ".join(columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for workload, m in medians.items():
        cells = [_ratio(m[c] / m["torch eager"]) if c in m else "–" for c in columns]
        lines.append(f"| {WORKLOADS[workload]} | " + " | ".join(cells) + " |")
    missing = missing_peers()
    if missing:
        lines += [
            "",
            f"Not installed, so not measured: {', '.join(missing)} (`pip install -e '.[bench]'`).",
        ]
    return "\n".join(lines)


def _ratio(value):
    """A ratio with two decimals, or three significant figures where that says more."""
    if value < 0.1:
        return f"{value:.3f}"
    return f"{value:.2f}" if value < 10 else f"{value:,.1f}" if value < 100 else f"{value:,.0f}"
