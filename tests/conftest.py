"""Helpers shared by the tests: the one line a check prints, and Python run at the root."""

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
