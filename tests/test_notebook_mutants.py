"""`python -m course.mutants --notebooks` on a few fast notebook exercises: every mutant of the
answer is caught by the exercise's own check cell, or listed as equivalent.

The harness forks the process it runs in; the runs here start a fresh interpreter for it, so
that nothing another test changed in this one (a patched node, a seed) reaches the notebooks.
"""

import json
import textwrap
from pathlib import Path

from course import mutants
from tests.conftest import run_python

ROOT = Path(__file__).resolve().parent.parent


def fresh(code):
    """What `code` prints as JSON on its last line, run in a new interpreter at the root."""
    printed = run_python("-W", "ignore::SyntaxWarning", "-c", textwrap.dedent(code), timeout=600)
    return json.loads(printed.strip().splitlines()[-1])


def test_every_notebook_exercise_with_a_check_is_found():
    skipped = {}
    found = {exercise.id for exercise in mutants.notebook_exercises(skipped=skipped)}
    assert {"0.1", "4.2", "5.2", "7.4", "8.2"} <= found
    assert not skipped


def test_mutants_of_three_notebook_exercises_are_all_caught():
    table = fresh(
        """
        import json
        from course import mutants
        table = mutants.run_notebooks(["0.2", "4.2", "5.2"], show=lambda line: None)
        print(json.dumps(table))
        """
    )
    assert set(table) == {"0.2", "4.2", "5.2"}
    assert not [row["error"] for row in table.values() if "error" in row]
    assert all(row["caught"] > 0 for row in table.values())
    assert not [row["survived"] for row in table.values() if row["survived"]]
    assert table["0.2"]["equivalent"]  # sigmoid(-x) gives the same s * (1 - s)


def test_the_answer_survives_and_a_wrong_one_is_caught():
    """The harness itself: the answer passes its check cell; a wrong power of tanh does not."""
    verdicts = fresh(
        """
        import json
        from course import mutants
        exercise = mutants.notebook_exercises(["0.1"])[0]
        cell = exercise.cells[exercise.region]
        print(json.dumps(mutants._verdicts(exercise, [cell, cell.replace("** 2", "** 3")])))
        """
    )
    assert verdicts == ["survived", "caught"]
