"""The benchmark and profile scripts run and print what they should; nothing here is timed.

Each script runs in its own process: benchmarks.run sets the thread counts of numpy and torch
when it loads, which must not leak into the other tests.
"""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*args, timeout=300):
    """Run `python args...` at the repository's root; return its stdout (it must succeed)."""
    done = subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_bench_quick_writes_every_row(tmp_path):
    output = tmp_path / "latest.md"
    printed = _run("-m", "benchmarks.run", "--quick", "--repeats", "1", "--output", str(output))
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
    assert _run("-c", code).splitlines()[-2:] == [
        "1 True",
        "bad.ipynb: ZeroDivisionError: division by zero",
    ]
    assert good.read_bytes() == before


def test_profile_prints_both_orders():
    printed = _run("-m", "benchmarks.profile", "chain1", "--repeats", "1", "--top", "5")
    assert "top 5 by tottime" in printed
    assert "top 5 by cumulative" in printed
    assert "backward" in printed


def test_compare_runs_both_checkouts_and_tabulates_the_change():
    printed = _run("-m", "benchmarks.compare", str(ROOT), "chain1", "--rounds", "1", "--runs", "1")
    header, rule, row = printed.strip().splitlines()
    assert header.startswith("| workload |") and rule == "|---|---|---|---|"
    assert row.startswith("| tiny-op chain, 1,500 ops, 1 element |") and row.endswith("% |")
