"""How far float32 training runs drift apart: mini_autograd against torch, and torch against
itself with one weight moved by one float32 step, after N steps at typical learning rates.

Usage: ``python -m benchmarks.drift`` writes ``benchmarks/results/drift.md``; the table in
docs/library.md ("Differences that stay") is that file's (tests/test_benchmarks.py compares).
Each figure is the relative difference of the loss at step N, |a - b| / |b|; the float64 row
runs the same programs in float64.
"""

import argparse
from pathlib import Path

import numpy as np
import torch

import mini_autograd as ma

RESULTS = Path(__file__).parent / "results" / "drift.md"
CHECKPOINTS = (1, 10, 100, 1000)


def regression_data(dtype):
    """A fixed batch of 2,048 inputs of 20 features, and a noisy target that two hidden layers can fit."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2048, 20))
    y = np.tanh(x @ rng.standard_normal((20, 1))) + 0.1 * rng.standard_normal((2048, 1))
    return x.astype(dtype), y.astype(dtype)


def initial_weights(dtype, nudge=False):
    """The weights of a 20-32-32-1 MLP; `nudge` moves the first weight by one step of `dtype`."""
    rng = np.random.default_rng(4)
    sizes = [20, 32, 32, 1]
    weights = []
    for n_in, n_out in zip(sizes, sizes[1:]):
        bound = 1 / np.sqrt(n_in)
        weights += [rng.uniform(-bound, bound, (n_out, n_in)), rng.uniform(-bound, bound, n_out)]
    weights = [w.astype(dtype) for w in weights]
    if nudge:
        weights[0][0, 0] = np.nextafter(weights[0][0, 0], dtype(np.inf))
    return weights


def train(lib, optimizer, lr, dtype, nudge=False):
    """{step: loss} of an MLP trained full-batch with `optimizer` ("SGD" or "Adam") at `lr`."""
    x_np, y_np = regression_data(dtype)
    layers = [lib.nn.Linear(20, 32), lib.nn.Tanh(), lib.nn.Linear(32, 32), lib.nn.Tanh()]
    model = lib.nn.Sequential(*layers, lib.nn.Linear(32, 1)).to(getattr(lib, np.dtype(dtype).name))
    with lib.no_grad():
        for p, w in zip(model.parameters(), initial_weights(dtype, nudge)):
            p.copy_(lib.tensor(w))
    opt = getattr(lib.optim, optimizer)(model.parameters(), lr=lr)
    x, y = lib.tensor(x_np), lib.tensor(y_np)
    losses = {}
    for step in range(1, max(CHECKPOINTS) + 1):
        loss = lib.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step in CHECKPOINTS:
            losses[step] = loss.item()
    return losses


SETTINGS = [("SGD", 0.1), ("SGD", 0.5), ("Adam", 1e-3), ("Adam", 1e-2)]


def relative(a, b):
    """|a - b| / |b| at each checkpoint."""
    return [abs(a[n] - b[n]) / abs(b[n]) for n in CHECKPOINTS]


def measure():
    """[(setting, comparison, [relative difference at each checkpoint])]."""
    rows = []
    for optimizer, lr in SETTINGS:
        setting = f"{optimizer}, lr={lr:g}"
        theirs = train(torch, optimizer, lr, np.float32)
        mine = train(ma, optimizer, lr, np.float32)
        nudged = train(torch, optimizer, lr, np.float32, nudge=True)
        rows.append((setting, "mini_autograd vs torch, float32", relative(mine, theirs)))
        rows.append(
            (setting, "torch vs torch with one weight one ulp off", relative(nudged, theirs))
        )
        mine64, theirs64 = (train(lib, optimizer, lr, np.float64) for lib in (ma, torch))
        rows.append((setting, "mini_autograd vs torch, float64", relative(mine64, theirs64)))
    return rows


def table(rows):
    """The rows as a markdown table."""
    header = " | ".join(f"step {n:,}" for n in CHECKPOINTS)
    lines = [f"| training | comparison | {header} |", "|---|---|" + "---|" * len(CHECKPOINTS)]
    for setting, comparison, values in rows:
        cells = " | ".join("0" if v == 0 else f"{v:.0e}" for v in values)
        lines.append(f"| {setting} | {comparison} | {cells} |")
    return "\n".join(lines)


def main(argv=None):
    """Measure, print the table and write it to benchmarks/results/drift.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"default {RESULTS}")
    args = parser.parse_args(argv)
    text = table(measure())
    print(text)
    intro = (
        "A 20-32-32-1 tanh MLP trained full-batch on a fixed regression batch of 2,048, from the "
        "same weights; each cell is the relative difference of the loss at that step."
    )
    args.output.write_text(f"# float32 drift\n\n{intro}\n\n{text}\n", encoding="utf-8")
    print(f"written to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
