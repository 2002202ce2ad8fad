"""`python -m course.mutants --notebooks` on a few fast notebook exercises: every mutant of the
answer is caught by the exercise's own check cell, or listed as equivalent."""

from course import mutants


def test_every_notebook_exercise_with_a_check_is_found():
    skipped = {}
    found = {exercise.id for exercise in mutants.notebook_exercises(skipped=skipped)}
    assert {"0.1", "4.2", "5.2", "7.4", "8.2"} <= found
    assert not skipped


def test_mutants_of_three_notebook_exercises_are_all_caught():
    table = mutants.run_notebooks(["0.2", "4.2", "5.2"], show=lambda line: None)
    assert set(table) == {"0.2", "4.2", "5.2"}
    assert not [row["error"] for row in table.values() if "error" in row]
    assert all(row["caught"] > 0 for row in table.values())
    assert not [row["survived"] for row in table.values() if row["survived"]]
    assert table["0.2"]["equivalent"]  # sigmoid(-x) gives the same s * (1 - s)


def test_the_answer_survives_and_a_wrong_one_is_caught():
    """The harness itself: the answer passes its check cell; a wrong power of tanh does not."""
    exercise = mutants.notebook_exercises(["0.1"])[0]
    cell = exercise.cells[exercise.region]
    assert mutants._verdicts(exercise, [cell, cell.replace("** 2", "** 3")]) == [
        "survived",
        "caught",
    ]
