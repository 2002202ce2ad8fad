"""Benchmarks: mini_autograd against PyTorch on the CPU, interleaved in one process.

Usage: ``python -m benchmarks.run [--repeats N] [--quick] [--no-course]`` (or ``make bench``).
Each case runs A B A B ... so that machine noise hits both engines alike; the table shows
medians and the ratio mini_autograd / torch (below 1: mini_autograd is faster). Its last row is
the time to execute every notebook once (a few minutes); ``--quick`` (3 repeats) and
``--no-course`` leave it out. The table is also written to ``benchmarks/results/latest.md``
(or ``--output PATH``) with the machine and the versions.
"""

import os

THREADS = "1"  # the same thread count for numpy's BLAS and torch, set before they load
for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, THREADS)

import argparse  # noqa: E402
import contextlib  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

import mini_autograd as ma  # noqa: E402
from benchmarks import peers  # noqa: E402
from mini_autograd.instruments.memory import saved_bytes  # noqa: E402

torch.set_num_threads(int(THREADS))
RESULTS = Path(__file__).parent / "results" / "latest.md"
ENGINES = (ma, torch)


def tiny_chain(shape, ops=1500):
    """ops alternating multiplications and tanh on a tiny tensor, forward then backward."""
    x0, w0 = peers.chain_data(shape)

    def run(lib):
        x = lib.tensor(x0, requires_grad=True)
        peers.tanh_chain(x, lib.tensor(w0), ops).sum().backward()

    return run


def double_backward_chain(shape=(8, 8), ops=200):
    """The tanh chain, its gradient with create_graph=True, then backward through that gradient."""
    x0, w0 = peers.chain_data(shape)

    def run(lib):
        x = lib.tensor(x0, requires_grad=True)
        y = peers.tanh_chain(x, lib.tensor(w0), ops).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        g.sum().backward()

    return run


def mlp_step():
    """One training step of a 784-512-10 MLP on a batch of 256: forward, cross-entropy, backward, SGD."""
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((256, 784), dtype=np.float32)
    labels = rng.integers(0, 10, 256)
    reference = torch.nn.Sequential(
        torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)
    )
    models = {}
    for lib in ENGINES:
        first, second = lib.nn.Linear(784, 512), lib.nn.Linear(512, 10)
        first.load_state_dict(reference[0].state_dict())
        second.load_state_dict(reference[2].state_dict())
        params = [*first.parameters(), *second.parameters()]
        inputs, targets = lib.tensor(x0), lib.tensor(labels)
        models[lib] = (first, second, lib.optim.SGD(params, lr=0.01), inputs, targets)

    def run(lib, backward=True):
        first, second, optimizer, inputs, targets = models[lib]
        loss = lib.nn.functional.cross_entropy(second(first(inputs).relu()), targets)
        if backward:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return loss

    return run


def _twin_layers(name, features, hidden, steps, batch):
    """torch.nn.<name> and mini_autograd.nn.<name> with the same weights, and an input sequence."""
    reference = getattr(torch.nn, name)(features, hidden)
    mine = getattr(ma.nn, name)(features, hidden)
    mine.load_state_dict(reference.state_dict())
    x0 = np.random.default_rng(1).standard_normal((steps, batch, features), dtype=np.float32)
    return {ma: mine, torch: reference}, x0


def lstm_forward_backward(steps=50, batch=32, hidden=128, features=32):
    """An LSTM over T=50 steps (batch 32, hidden 128, input 32) with shared weights, forward + backward."""
    models, x0 = _twin_layers("LSTM", features, hidden, steps, batch)

    def run(lib):
        out, _ = models[lib](lib.tensor(x0))
        out.sum().backward()

    return run


def lstm_cell_unrolled(steps=50, batch=32, hidden=128, features=32):
    """The same LSTM unrolled as one LSTMCell call per step: about 20 recorded operations per step."""
    models, x0 = _twin_layers("LSTMCell", features, hidden, steps, batch)

    def run(lib):
        state, total = None, 0
        for x_t in lib.tensor(x0):
            state = models[lib](x_t, state)
            total = total + state[0].sum()
        total.backward()

    return run


# The timed cases: a short key (for benchmarks.profile), the table's row name, the factory that
# builds the inputs and returns run(lib).
WORKLOADS = {
    "chain1": ("tiny-op chain, 1,500 ops, 1 element", partial(tiny_chain, (1,))),
    "chain8": ("tiny-op chain, 1,500 ops, 8×8", partial(tiny_chain, (8, 8))),
    "double": ("double-backward chain, 200 ops, 8×8", double_backward_chain),
    "mlp": ("MLP step 784-512-10, batch 256", mlp_step),
    "lstm": ("LSTM fwd+bwd, T=50 B=32 H=128 I=32", lstm_forward_backward),
    "lstmcell": ("LSTMCell unrolled, same sizes", lstm_cell_unrolled),
}


def carried_state_loop(iterations=100, size=32, repeats=5):
    """Per-step time (median over `repeats` runs, engines alternating) and saved bytes when a
    hidden state is carried with retain_graph=True."""
    rng = np.random.default_rng(2)
    w0 = rng.standard_normal((size, size), dtype=np.float32) * 0.1
    xs = rng.standard_normal((iterations, 1, size), dtype=np.float32)

    def run(lib):
        w = lib.tensor(w0, requires_grad=True)
        h = lib.zeros(1, size)
        times, held = [], []
        for step in range(iterations):
            start = time.perf_counter()
            h = (h @ w + lib.tensor(xs[step])).tanh()
            h.sum().backward(retain_graph=True)
            times.append(time.perf_counter() - start)
            held.append(saved_bytes(h))
        return times, held

    runs = {lib: [] for lib in ENGINES}
    for _ in range(repeats):
        for lib in ENGINES:
            runs[lib].append(run(lib))
    return {
        lib: (
            [statistics.median(step) for step in zip(*(times for times, _ in results))],
            results[0][1],
        )
        for lib, results in runs.items()
    }


def peak_memory_mlp_step():
    """Peak bytes Python allocates during one MLP step (tracemalloc), and the saved-tensor bytes."""
    run = mlp_step()
    figures = {}
    for lib in ENGINES:
        run(lib)  # warm up: optimizer state, caches
        tracemalloc.start()
        run(lib)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        figures[lib] = (peak, saved_bytes(run(lib, backward=False)))
    return figures


class NotebookFailed(Exception):
    """A notebook of the course raised while course_seconds executed it."""


def course_seconds(notebooks=None):
    """(seconds, count): the time to execute the notebooks (default: all of notebooks/) one
    after the other, each in a fresh kernel, as course.execute does. The kernels run in a
    temporary folder and import this repository's packages; the executed copies are dropped,
    so nothing is written into notebooks/. A failing cell raises NotebookFailed."""
    import nbformat
    from nbclient.exceptions import CellExecutionError

    from course.execute import ROOT, execute

    paths = sorted((ROOT / "notebooks").glob("*.ipynb")) if notebooks is None else notebooks
    kernel_path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory() as folder, _environment(PYTHONPATH=kernel_path):
        start = time.perf_counter()
        for path in paths:
            try:
                execute(nbformat.read(path, as_version=4), Path(folder))
            except CellExecutionError as error:
                first_line = str(error.evalue).splitlines()[0] if error.evalue else ""
                raise NotebookFailed(f"{path.name}: {error.ename}: {first_line}") from error
        return time.perf_counter() - start, len(paths)


@contextlib.contextmanager
def _environment(**variables):
    """Set environment variables (which the kernels inherit) for the duration of a with block."""
    before = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name)
            else:
                os.environ[name] = value


def course_row():
    """The table row of the course's full execution time, or of the notebook that failed."""
    try:
        seconds, count = course_seconds()
    except NotebookFailed as error:
        reason = str(error).replace("|", "/")
        return f"| full course execution | failed in {reason} | — | |"
    return f"| full course execution, {count} notebooks | {seconds:.1f} s | — | |"


def interleaved(cases, repeats):
    """{case: {engine: median seconds}}, running the engines alternately."""
    medians = {}
    for name, run in cases.items():
        run(ma), run(torch)  # warm up
        samples = {ma: [], torch: []}
        for _ in range(repeats):
            for lib in ENGINES:
                start = time.perf_counter()
                run(lib)
                samples[lib].append(time.perf_counter() - start)
        medians[name] = {lib: statistics.median(s) for lib, s in samples.items()}
        print(f"  measured {name}", flush=True)
    return medians


def _ms(seconds):
    """Milliseconds, with three decimals below 10 ms."""
    return f"{seconds * 1e3:.3f} ms" if seconds < 0.01 else f"{seconds * 1e3:.1f} ms"


def _retain_graph_rows(growth):
    """One row per engine: the step time and saved bytes of the carried-state loop, step 1 → 100."""
    rows = []
    for lib in ENGINES:
        times, held = growth[lib]
        label = "mini_autograd" if lib is ma else "torch"
        rows.append(
            f"| retain_graph loop, {label}: step 1 → 100 | {_ms(times[0])} → {_ms(times[-1])} | "
            f"saved {held[0]:,} B → {held[-1]:,} B | ×{times[-1] / times[0]:.0f} time |"
        )
    return rows


def table(medians, growth, loop_repeats, memory, repeats, course=None, peer_medians=None):
    """The results as a markdown table plus notes; course: the row of course_row(), or None;
    peer_medians: those of peers.measure, or None."""
    lines = [
        f"Median of {repeats} interleaved runs, one process, {THREADS} thread(s) for numpy and torch.",
        "",
        "| benchmark | mini_autograd | torch | ratio |",
        "|---|---|---|---|",
    ]
    for name, m in medians.items():
        lines.append(f"| {name} | {_ms(m[ma])} | {_ms(m[torch])} | {m[ma] / m[torch]:.2f} |")
    lines += _retain_graph_rows(growth)
    if course is not None:
        lines.append(course)
    (ma_peak, ma_saved), (torch_peak, torch_saved) = memory[ma], memory[torch]
    lines += [
        "",
        f"The retain_graph rows give the time of step 1 and step 100, each a median of "
        f"{loop_repeats} runs of the 100-step loop, and the saved bytes the graph holds then.",
        "",
        f"Peak memory of one MLP step (tracemalloc): mini_autograd {ma_peak / 1e6:.1f} MB, torch "
        f"{torch_peak / 1e6:.2f} MB. tracemalloc sees only memory allocated through Python's "
        "allocator: numpy's arrays, but not PyTorch's C++ tensors, so torch's figure is only its "
        f"Python objects. Saved tensors held by the graph before backward: mini_autograd {ma_saved / 1e6:.2f} MB, torch "
        f"{torch_saved / 1e6:.2f} MB (memory.saved_bytes, the same count for both).",
    ]
    if peer_medians is not None:
        lines += [
            "",
            "## Beside other engines",
            "",
            "The same maths in each engine, as a ratio to torch eager's median (below 1: faster "
            f"than torch; median of {repeats} runs, the engines in turn, one thread). "
            "benchmarks/peers.py holds each engine's version of the workloads.",
            "",
            peers.table(peer_medians),
        ]
    if course is not None:
        lines += [
            "",
            "The course row is one run of every notebook, each in a fresh kernel (its start "
            "included) as `python -m course.execute` runs them, with the same thread settings; "
            "the executed notebooks are not written anywhere.",
        ]
    return "\n".join(lines)


def machine():
    """A line naming the machine and the versions."""
    return (
        f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.python_implementation()} "
        f"{platform.python_version()}, numpy {np.__version__}, torch {torch.__version__}, "
        f"mini_autograd {ma.__version__}"
    )


def main(argv=None):
    """Run every benchmark, print the table and write it to benchmarks/results/latest.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, help="interleaved runs per case (default 15)")
    parser.add_argument(
        "--quick", action="store_true", help="a smoke test: 3 repeats, no course row"
    )
    parser.add_argument("--no-course", action="store_true", help="skip the course row")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"default {RESULTS}")
    args = parser.parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 15)
    print(machine())
    cases = {name: factory() for name, factory in WORKLOADS.values()}
    medians = interleaved(cases, repeats)
    loop_repeats = max(repeats // 3, 1)
    growth = carried_state_loop(repeats=loop_repeats)
    memory = peak_memory_mlp_step()
    peer_medians = peers.measure(repeats)
    course = None
    if not (args.quick or args.no_course):
        print("  executing the notebooks (a few minutes)", flush=True)
        course = course_row()
    text = table(medians, growth, loop_repeats, memory, repeats, course, peer_medians)
    print(text)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(f"# Benchmark results\n\n{machine()}\n\n{text}\n", encoding="utf-8")
    print(f"written to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
