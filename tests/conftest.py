"""Helpers shared by the tests: the one line a check prints, Python run at the root, the line of
a function that holds a marker, and what a diagnosis of a freed graph says."""

import inspect
import re
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


def fixes(text):
    """The fixes a diagnosis lists, best first."""
    return re.findall(r"^  \* (.*)$", text.split("- Fixes, best first:\n")[1], re.MULTILINE)


def assert_names_carried_lstm_state(text):
    """The diagnosis names the seed LSTM's `model.hidden` as a carried state, to detach first."""
    assert (
        "They are `model.hidden[0] (its value from the previous iteration)`, "
        "`model.hidden[1] (its value from the previous iteration)`." in text
    )
    assert (
        "- They are a state carried from one iteration to the next: the loop gives "
        "`model.hidden[0]`, `model.hidden[1]` a new value in every iteration; their graph goes "
        "through parameters" in text
    )
    detach, reinit, retain = fixes(text)  # ordered for a state: cut it where it is carried
    assert detach.startswith("detach it where it is carried over: `h = h.detach()`")
    assert reinit.startswith("or re-initialise it in each iteration")
    assert retain.startswith("retain_graph=True only if you really need the old graph")


def assert_previous_is_a_carried_state(text):
    """The diagnosis names `previous` as a state carried into the next iteration, to detach."""
    assert "It is `previous`." in text
    assert (
        "- It is a state carried from one iteration to the next: the loop gives `previous` a new "
        "value in every iteration; its graph goes through parameters" in text
    )
    assert fixes(text)[0].startswith("detach it where it is carried over")
