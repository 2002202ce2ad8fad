"""The exercise pipeline: generated notebooks are current, and exercises run unfilled."""

import re
from pathlib import Path

import nbformat
import pytest

from course.build_exercises import SourceError, stale_files, transform
from course.execute import execute

ROOT = Path(__file__).resolve().parent.parent
EXERCISES = sorted((ROOT / "exercises").glob("*.ipynb"))

CODE = """def f(x):
    ### BEGIN SOLUTION 1.2: double it
    y = 2 * x
    return y
    ### END SOLUTION"""


def test_transform_keeps_or_stubs_the_solution_region():
    assert transform(CODE, keep_solution=True) == "def f(x):\n    y = 2 * x\n    return y"
    stub = 'def f(x):\n    raise NotImplementedError("Exercise 1.2: double it")'
    assert transform(CODE, keep_solution=False) == stub


@pytest.mark.parametrize(
    "code",
    [
        "### BEGIN SOLUTION\nx = 1\n### END SOLUTION",
        "### BEGIN SOLUTION 1.1: a\n",
        "### END SOLUTION",
    ],
    ids=["no-id", "never-closed", "end-without-begin"],
)
def test_transform_rejects_malformed_markers(code):
    with pytest.raises(SourceError):
        transform(code, keep_solution=False)


def test_generated_notebooks_are_up_to_date():
    assert stale_files() == [], "run `make exercises` and commit the result"


@pytest.mark.parametrize("path", EXERCISES, ids=[p.name for p in EXERCISES])
def test_unfilled_exercise_notebook_runs_and_says_not_done_yet(path):
    nb = nbformat.read(path, as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    ids = re.findall(r'NotImplementedError\("Exercise (\d+\.\d+):', code)
    assert ids, f"{path.name} has no exercise stub"
    execute(nb, path.parent)  # raises CellExecutionError if any cell fails
    stdout = "".join(
        o.text
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.get("name") == "stdout"
    )
    for exercise_id in ids:
        lines = re.findall(rf"^Exercise {re.escape(exercise_id)}: not done yet — .+$", stdout, re.M)
        assert len(lines) == 1, (
            f"exercise {exercise_id}: expected one 'not done yet' line\n{stdout}"
        )


@pytest.mark.parametrize(
    "name, words",
    [
        ("06_rnn_hidden_state", "(train_tbptt raised ValueError: a planted bug"),
        ("07_capstone", "Training stopped: ValueError"),
    ],
)
def test_a_buggy_answer_gives_one_line_in_the_cells_after_the_checks(name, words):
    """The cells that use the learner's functions report a bug in one line, not a traceback."""
    path = ROOT / "exercises" / f"{name}.ipynb"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.source = re.sub(
                r'raise NotImplementedError\("Exercise [67]\.\d:[^"]*"\)',
                'raise ValueError("a planted bug")',
                cell.source,
            )
    execute(nb, path.parent)  # raises CellExecutionError if a cell shows a traceback
    stdout = "".join(
        o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs
    )
    assert words in stdout, stdout[-2000:]
