"""Helpers shared by the tests: the one line a check prints, Python run at the root, and the line
of a function that holds a marker."""

import inspect
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def one_line(capsys):
    """`one_line(start="")`: the single line printed since the last call; it must begin with
    `start`, and nothing else may have been printed."""

    def read(start=""):
        lines = capsys.readouterr().out.strip().splitlines()
        assert len(lines) == 1, lines
        assert lines[0].startswith(start), lines[0]
        return lines[0]

    return read


def run_python(*args, timeout=300) -> str:
    """The standard output of `python args...` run at the repository's root (it must succeed)."""
    done = subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def line_of(fn, marker):
    """The line number of the line of `fn` that contains `marker` (so tests survive edits)."""
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if marker in line)
