"""The benchmark and profile scripts run and print what they should; nothing here is timed.

Each script runs in its own process: benchmarks.run sets the thread counts of numpy and torch
when it loads, which must not leak into the other tests.
"""

import json
import textwrap
from pathlib import Path

from tests.conftest import run_python

ROOT = Path(__file__).resolve().parent.parent


def test_bench_quick_writes_every_row(tmp_path):
    output = tmp_path / "latest.md"
    printed = run_python(
        "-m", "benchmarks.run", "--quick", "--repeats", "1", "--output", str(output)
    )
    written = output.read_text(encoding="utf-8")
    for row in ("tiny-op chain", "double-backward chain", "MLP step", "LSTM fwd+bwd"):
        assert f"| {row}" in written
        assert f"| {row}" in printed
    assert "retain_graph loop, torch" in written
    assert "full course execution" not in written  # --quick leaves the course out


def _notebook(path, source):
    """Write a notebook of one code cell at path."""
    cell = {"cell_type": "code", "execution_count": None, "id": "cell-00", "metadata": {}}
    notebook = {"cells": [{**cell, "outputs": [], "source": source}], "metadata": {}}
    path.write_text(json.dumps({**notebook, "nbformat": 4, "nbformat_minor": 5}), "utf-8")
    return path


def test_course_seconds_runs_notebooks_without_writing_them(tmp_path):
    good = _notebook(tmp_path / "good.ipynb", "import mini_autograd; print(1 + 1)")
    bad = _notebook(tmp_path / "bad.ipynb", "1 / 0")
    before = good.read_bytes()
    code = textwrap.dedent(
        f"""
        from pathlib import Path
        from benchmarks.run import NotebookFailed, course_seconds
        seconds, count = course_seconds([Path({str(good)!r})])
        print(count, seconds > 0)
        try:
            course_seconds([Path({str(bad)!r})])
        except NotebookFailed as error:
            print(error)
        """
    )
    assert run_python("-c", code).splitlines()[-2:] == [
        "1 True",
        "bad.ipynb: ZeroDivisionError: division by zero",
    ]
    assert good.read_bytes() == before


def test_profile_prints_both_orders():
    printed = run_python("-m", "benchmarks.profile", "chain1", "--repeats", "1", "--top", "5")
    assert "top 5 by tottime" in printed
    assert "top 5 by cumulative" in printed
    assert "backward" in printed


def test_compare_runs_both_checkouts_and_tabulates_the_change():
    printed = run_python(
        "-m", "benchmarks.compare", str(ROOT), "chain1", "--rounds", "1", "--runs", "1"
    )
    header, rule, row = printed.strip().splitlines()
    assert header.startswith("| workload |") and rule == "|---|---|---|---|"
    assert row.startswith("| tiny-op chain, 1,500 ops, 1 element |") and row.endswith("% |")


def test_every_engine_here_computes_torch_s_gradients():
    """Each engine installed here (the peers only with `.[bench]`; bare numpy always) gives, on
    each workload it runs, what torch gives: the benchmark times the same maths everywhere."""
    import numpy as np

    from benchmarks import peers

    engines = peers.engines()
    expected = {workload: engines["torch eager"][workload]() for workload in peers.WORKLOADS}
    assert {"mini_autograd", "bare numpy"} <= set(engines)
    for column, runs in engines.items():
        for workload, run in runs.items():
            got, wanted = run(), expected[workload]
            pairs = zip(got, wanted) if isinstance(wanted, list) else [(got, wanted)]
            for mine, theirs in pairs:
                np.testing.assert_allclose(
                    np.asarray(mine), theirs, rtol=1e-3, atol=1e-7, err_msg=f"{column}, {workload}"
                )


def test_the_peer_table_gives_ratios_to_torch_and_names_missing_peers(monkeypatch):
    from benchmarks import peers

    monkeypatch.setattr(peers, "missing_peers", lambda: ["jax"])
    medians = {
        "chain1": {"torch eager": 0.02, "mini_autograd": 0.04, "micrograd": 0.001},
        "moons": {"torch eager": 0.01, "mini_autograd": 0.012, "micrograd": 13.0},
    }
    lines = peers.table(medians).splitlines()
    assert lines[0] == "| workload | torch eager | mini_autograd | micrograd |"
    assert lines[2] == "| tanh chain, 1,500 ops, 1 element | 1.00 | 2.00 | 0.050 |"
    assert lines[3] == "| micrograd's demo step, 2-16-16-1 on 100 points | 1.00 | 1.20 | 1,300 |"
    assert lines[-1].startswith("Not installed, so not measured: jax")


def test_the_readme_shows_the_last_run_s_peer_table():
    """The README's table is the one `make bench` last wrote (rerun it, then paste the table)."""
    results = (ROOT / "benchmarks" / "results" / "latest.md").read_text("utf-8")
    table = results.split("## Beside other engines", 1)[1]
    rows = [line for line in table.splitlines() if line.startswith("|")]
    readme = (ROOT / "README.md").read_text("utf-8")
    assert rows and "\n".join(rows) in readme


def test_the_drift_table_in_the_docs_is_the_last_measured_one():
    """docs/library.md shows the table `python -m benchmarks.drift` last wrote."""
    results = (ROOT / "benchmarks" / "results" / "drift.md").read_text("utf-8")
    rows = [line for line in results.splitlines() if line.startswith("|")]
    docs = (ROOT / "docs" / "library.md").read_text("utf-8")
    assert len(rows) > 2 and "\n".join(rows) in docs


def test_drift_compares_losses_step_by_step():
    from benchmarks import drift

    assert drift.relative(
        {n: 2.0 for n in drift.CHECKPOINTS}, {n: 4.0 for n in drift.CHECKPOINTS}
    ) == [0.5] * len(drift.CHECKPOINTS)
    lines = drift.table([("SGD, lr=0.1", "a vs b", [0, 1e-7, 2.4e-3, 0.5])]).splitlines()
    assert lines[2] == "| SGD, lr=0.1 | a vs b | 0 | 1e-07 | 2e-03 | 5e-01 |"
