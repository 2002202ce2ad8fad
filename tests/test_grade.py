"""`python -m course.grade` on sample submissions, graded for real (kernels and the track).

Two learners, built here from the course's own files:

* complete: the solutions of exercise notebooks 00 and 01, and the complete engine;
* partial: notebook 00 with 0.2 filled from the solutions, a wrong answer to 0.1 and 0.3 left
  undone; an engine with 1.3 filled from the solutions and a wrong 7.5, the rest stubs.

A third, synthetic learner covers what breaks: a cell that raises, a check cell that raises,
a notebook that runs out of time, a file that is no notebook. It runs no torch, so it is quick.
"""

import csv
import io
import shutil
from contextlib import redirect_stdout
from pathlib import Path

import nbformat
import pytest

from course import grade

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS, EXERCISES = ROOT / "solutions", ROOT / "exercises"
ENGINE_PIECES = [task.id for task in grade.engine_exercises()]
EVERY_FILE = grade.course_exercises()
MOST = grade.most_points(EVERY_FILE)


def stub(exercise_id: str, title: str) -> str:
    """The line that stands for an unfilled exercise."""
    return f'raise NotImplementedError("Exercise {exercise_id}: {title}")'


def partial_notebook() -> nbformat.NotebookNode:
    """Exercises 00: 0.1 answered wrong (tanh, not its derivative), 0.2 right, 0.3 not done."""
    nb = nbformat.read(EXERCISES / "00_warmup.ipynb", as_version=4)
    answers = nbformat.read(SOLUTIONS / "00_warmup.ipynb", as_version=4)
    for cell, answer in zip(nb.cells, answers.cells):
        if stub("0.2", "derivative of the sigmoid") in cell.source:
            cell.source = answer.source
        cell.source = cell.source.replace(stub("0.1", "derivative of tanh"), "return np.tanh(x)")
    return nb


def partial_engine() -> str:
    """The unfilled engine with 1.3 answered as the solutions do and 7.5 answered wrong."""
    source = (EXERCISES / "my_autograd.py").read_text("utf-8")
    answer = "detached = Tensor(self._data)\n    detached._version_counter = self._version_counter\n    return detached"
    assert answer in (SOLUTIONS / "my_autograd.py").read_text("utf-8")
    source = source.replace(stub("1.3", "detach"), answer)
    wrong = "return (input * 0).sum()"
    return source.replace(stub("7.5", "cross-entropy from elementary operations"), wrong)


@pytest.fixture(scope="module")
def submissions(tmp_path_factory) -> Path:
    """A folder of two submissions: complete/ (files at the top), partial/ (in exercises/)."""
    folder = tmp_path_factory.mktemp("submissions")
    complete, partial = folder / "complete", folder / "partial" / "exercises"
    complete.mkdir()
    partial.mkdir(parents=True)
    for name in ("00_warmup.ipynb", "01_the_graph.ipynb", "my_autograd.py"):
        shutil.copyfile(SOLUTIONS / name, complete / name)
    nbformat.write(partial_notebook(), partial / "00_warmup.ipynb")
    (partial / "my_autograd.py").write_text(partial_engine(), encoding="utf-8")
    return folder


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def graded(submissions, tmp_path_factory):
    """Run the command once: (what it printed, {(learner, file, exercise): CSV row}, out folder)."""
    out = tmp_path_factory.mktemp("grading")
    before = snapshot(submissions), snapshot(EXERCISES)
    with redirect_stdout(io.StringIO()) as printed:
        assert grade.main([str(submissions), "--out", str(out)]) == 0
    assert (snapshot(submissions), snapshot(EXERCISES)) == before, "grading wrote to the inputs"
    with (out / "grades.csv").open(encoding="utf-8") as file:
        table = {(r["learner"], r["file"], r["exercise"]): r for r in csv.DictReader(file)}
    return printed.getvalue(), table, out


def statuses(table: dict, learner: str) -> dict[tuple[str, str], str]:
    """{(file, exercise): status} of one learner, for the files she handed in."""
    return {
        (file, exercise): row["status"]
        for (who, file, exercise), row in table.items()
        if who == learner and row["status"] != "not submitted"
    }


def test_the_complete_submission_gets_every_point_of_what_it_hands_in(graded):
    _, table, _ = graded
    expected = {("00_warmup.ipynb", e): "correct" for e in ("0.1", "0.2", "0.3")}
    expected |= {("01_the_graph.ipynb", e): "correct" for e in ("1.4", "1.5")}
    expected |= {("my_autograd.py", e): "correct" for e in ENGINE_PIECES}
    assert statuses(table, "complete") == expected
    assert sum(int(r["points"]) for (who, *_), r in table.items() if who == "complete") == 27


def test_the_partial_submission_gets_exact_statuses_and_points(graded):
    _, table, _ = graded
    expected = {
        ("00_warmup.ipynb", "0.1"): "wrong",
        ("00_warmup.ipynb", "0.2"): "correct",
        ("00_warmup.ipynb", "0.3"): "not done",
    }
    expected |= {("my_autograd.py", e): "not done" for e in ENGINE_PIECES}
    expected |= {("my_autograd.py", "1.3"): "correct", ("my_autograd.py", "7.5"): "wrong"}
    assert statuses(table, "partial") == expected
    points = {key[1:]: int(row["points"]) for key, row in table.items() if key[0] == "partial"}
    assert {key: p for key, p in points.items() if p} == {
        ("00_warmup.ipynb", "0.2"): 1,
        ("my_autograd.py", "1.3"): 1,
    }
    assert table["partial", "01_the_graph.ipynb", "1.4"]["status"] == "not submitted"


def test_a_wrong_answer_says_what_differs_in_its_check_s_own_words(graded):
    _, table, _ = graded
    tanh = table["partial", "00_warmup.ipynb", "0.1"]["detail"]
    assert tanh.startswith("does not match the reference on input 1 (array of shape (7,))")
    assert "\n" not in tanh
    assert table["partial", "my_autograd.py", "7.5"]["detail"]  # the track's first difference
    assert table["partial", "00_warmup.ipynb", "0.2"]["detail"] == ""


def test_the_summary_and_the_markdown_tables(graded):
    printed, _, out = graded
    assert f"complete   27 of {MOST} points  (27 correct, 18 not submitted)" in printed
    assert (
        f"partial     2 of {MOST} points  (2 correct, 2 wrong, 21 not done, 20 not submitted)"
        in printed
    )
    report = (out / "grades.md").read_text("utf-8")
    assert f"## partial: 2 of {MOST} points" in report
    assert "| 00_warmup.ipynb | 0.2 | derivative of the sigmoid | correct | 1 |  |" in report


def broken_notebook(*sources: str) -> nbformat.NotebookNode:
    """A notebook of the given code cells."""
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])


def test_what_breaks_is_reported_and_graded_never_raised(tmp_path, capsys):
    learner = tmp_path / "submissions" / "broken"
    learner.mkdir(parents=True)
    check_of = {e.id: e.check_source for e in EVERY_FILE["00_warmup.ipynb"]}
    walk_check = {e.id: e.check_source for e in EVERY_FILE["01_the_graph.ipynb"]}["1.4"]
    warmup = broken_notebook('raise ValueError("a planted bug")', check_of["0.1"])
    nbformat.write(warmup, learner / "00_warmup.ipynb")
    nbformat.write(
        broken_notebook("import time\ntime.sleep(60)", walk_check), learner / "01_the_graph.ipynb"
    )
    (learner / "02_backward.ipynb").write_text("not a notebook")
    (learner / "notes.py").write_text("")
    [report] = grade.grade(tmp_path / "submissions", tmp_path / "out", timeout_s=3)
    graded = {g.exercise.id: (g.status, g.detail) for g in report.grades}
    assert graded["0.1"] == (
        "error",
        "its check cell raised NameError: name 'check' is not defined",
    )
    assert graded["0.2"] == ("not checked", "its check cell is not in the notebook")
    assert graded["1.4"] == ("not checked", "the notebook stopped before its check cell")
    assert graded["2.5"] == ("not checked", "the file cannot be read as a notebook")
    assert {graded[piece][0] for piece in ENGINE_PIECES} == {"not submitted"}
    assert report.points == 0
    assert report.problems[0].startswith("notes.py: not a file of the course")
    assert report.problems[1:4] == [
        "00_warmup.ipynb: cell [1] raised ValueError: a planted bug",
        "00_warmup.ipynb: cell [2] raised NameError: name 'check' is not defined",
        "01_the_graph.ipynb: ran past 3 s and was stopped",
    ]
    assert report.problems[4].startswith("02_backward.ipynb: cannot be read as a notebook")


def test_a_notebook_runs_with_the_learner_s_own_engine_and_the_course_s_data(tmp_path):
    engine = tmp_path / "my_autograd.py"
    engine.write_text(partial_engine(), encoding="utf-8")
    probe = tmp_path / "probe.ipynb"
    code = (
        "from pathlib import Path\nfrom course import track\n"
        "print(Path('../data/sonnets.txt').is_file())\ntrack.check('1.3')"
    )
    nbformat.write(broken_notebook(code), probe)
    with grade.workspace(engine) as root:
        cells, problems = grade.run_notebook(probe, root, timeout_s=120)
    assert problems == []
    said = grade.printed(cells[0]).splitlines()
    assert said[0] == "True"
    assert said[1].startswith("Exercise 1.3: correct ✓")  # the course's exercises/ has a stub


@pytest.mark.parametrize(
    "argument, words",
    [
        ("", "give the folder of submissions"),
        ("missing", "there is no folder"),
        ("a-file", "is a file"),
        ("empty", "holds no learner folders"),
    ],
)
def test_bad_input_gets_one_line(tmp_path, capsys, argument, words):
    (tmp_path / "a-file").write_text("")
    (tmp_path / "empty").mkdir()
    assert grade.main([str(tmp_path / argument) if argument else ""]) == 2
    error = capsys.readouterr().err
    assert error.startswith("grade: ") and words in error and error.count("\n") == 1
