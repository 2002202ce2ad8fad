"""A learner re-runs cells: every chapter and solution notebook runs twice in one kernel.

The second pass re-executes every code cell after the first, in the same kernel, as "Run All"
pressed twice would; it must raise nothing (cells tagged raises-exception excepted).
"""

import copy
from pathlib import Path

import nbformat
import pytest

from course.execute import execute

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted(
    (ROOT / "solutions").glob("*.ipynb")
)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[f"{p.parent.name}/{p.name}" for p in NOTEBOOKS])
def test_notebook_survives_a_second_run_in_the_same_kernel(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    nb.cells = copy.deepcopy(code) + copy.deepcopy(code)
    execute(nb, path.parent)  # raises CellExecutionError if a cell fails on either pass
