"""Grade the learners' work: ``python -m course.grade SUBMISSIONS [--out DIR] [--timeout S]``.

SUBMISSIONS holds one folder per learner (``alice/``, ``bob/``...). Each holds her filled exercise
notebooks (``00_warmup.ipynb``..., any subset) and her engine, ``my_autograd.py``, directly or in
an ``exercises/`` subfolder. For each learner:

* each notebook runs top to bottom in a fresh kernel, inside a temporary copy of the course's
  layout that holds her files and no one else's: the checks load *her* ``my_autograd.py``, the
  chapters find ``data/``, and nothing is written to the repository. Only what the check cells
  print in this run counts, never the outputs stored in the file;
* her engine goes through the build track (``course.track``), piece by piece.

Every exercise gets a status: ``correct``, ``not done``, ``wrong`` (with the first line of what
differs), ``error`` (its check cell raised), ``not checked`` (its check cell is missing or never
ran) or ``not submitted``. A correct exercise earns the points in ``POINTS``. The table of every
learner and exercise is written to ``build/grading/grades.md`` and ``grades.csv``, and a summary
is printed. Cells that raise outside the checks, and notebooks that run out of time, are listed
as problems of the learner; they never stop the grading.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from course.execute import KERNEL_NAME

ROOT = Path(__file__).resolve().parent.parent
EXERCISES = ROOT / "exercises"
OUT = ROOT / "build" / "grading"
ENGINE = "my_autograd.py"
TIMEOUT_S = 300  # per notebook (its cells, the kernel's start not counted) and for the track

# The points scheme, in one place: what one correct exercise is worth, by where it is written.
# "notebook": an exercise of an exercise notebook whose check cell prints "correct ✓".
# "engine": a piece of the build track (my_autograd.py) that `course.track` reports "done ✓".
POINTS = {"notebook": 1, "engine": 1}

# What a grading copy of the course holds besides the learner's files.
COURSE_LAYOUT = ("course", "data", "solutions/my_autograd.py", "solutions/sources/my_autograd.py")
# Every status an exercise can get, best first.
STATUSES = ("correct", "wrong", "error", "not done", "not checked", "not submitted")
STUB = re.compile(r'NotImplementedError\("Exercise (\d+\.\d+): ([^"]*)"\)')
CHECK_LINE = re.compile(r"^Exercise (\d+\.\d+): (.*)$", re.MULTILINE)


class GradingError(Exception):
    """The submissions cannot be graded at all; the message says why, in one line."""


@dataclass(frozen=True)
class Exercise:
    """One exercise to grade: its id and title, the file it is written in, and its check cell."""

    id: str
    title: str
    file: str  # "00_warmup.ipynb", or ENGINE for a build-track piece
    kind: str  # a key of POINTS
    check_source: str = ""  # the source of its check cell in the course's notebook


@dataclass(frozen=True)
class Grade:
    """One learner's result on one exercise."""

    exercise: Exercise
    status: str
    detail: str = ""

    @property
    def points(self) -> int:
        """The points this result earns: the exercise's worth when correct, else 0."""
        return POINTS[self.exercise.kind] if self.status == "correct" else 0


@dataclass
class Report:
    """Everything graded for one learner: a grade per exercise, and the problems met."""

    learner: str
    grades: list[Grade] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def points(self) -> int:
        """The learner's total points."""
        return sum(grade.points for grade in self.grades)


# --- What there is to grade ----------------------------------------------------------------------


def notebook_exercises(path: Path) -> list[Exercise]:
    """The exercises of one course exercise notebook; the check cell of each follows its stub."""
    cells = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    found: dict[str, Exercise] = {}
    for index, cell in enumerate(cells):
        for exercise_id, title in STUB.findall(cell.source):
            check = cells[index + 1].source if index + 1 < len(cells) else ""
            found[exercise_id] = Exercise(exercise_id, title, path.name, "notebook", check)
    return list(found.values())


def engine_exercises() -> list[Exercise]:
    """The pieces of the build track, in the track's order."""
    from course.specs import TASKS

    return [Exercise(task.id, task.title, ENGINE, "engine") for task in TASKS]


def course_exercises() -> dict[str, list[Exercise]]:
    """{file a learner hands in: its exercises}: every exercise notebook, then the engine."""
    catalogue = {p.name: notebook_exercises(p) for p in sorted(EXERCISES.glob("*.ipynb"))}
    catalogue[ENGINE] = engine_exercises()
    return catalogue


def most_points(catalogue: dict[str, list[Exercise]]) -> int:
    """The points of a learner who gets every exercise right."""
    return sum(POINTS[e.kind] for exercises in catalogue.values() for e in exercises)


# --- The submissions -----------------------------------------------------------------------------


def learner_folders(submissions: Path) -> list[Path]:
    """The learners' folders in `submissions`, sorted; GradingError when there are none."""
    if not submissions.exists():
        raise GradingError(f"there is no folder {submissions}")
    if not submissions.is_dir():
        raise GradingError(f"{submissions} is a file; give the folder that holds the submissions")
    folders = sorted(p for p in submissions.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not folders:
        raise GradingError(
            f"{submissions} holds no learner folders: expected one subfolder per learner, "
            f"e.g. {submissions / 'alice'}/ with her exercise notebooks and {ENGINE}"
        )
    return folders


def handed_in(folder: Path) -> Path:
    """Where a learner's files are: her folder's `exercises/` subfolder if it has one."""
    inner = folder / "exercises"
    return inner if inner.is_dir() else folder


def stray_files(files: Path, catalogue: dict[str, list[Exercise]]) -> list[str]:
    """One problem line per notebook or .py file that is not named like a file of the course."""
    return [
        f"{path.name}: not a file of the course (expected names like 00_warmup.ipynb, {ENGINE}); "
        "not graded"
        for path in sorted(files.iterdir())
        if path.suffix in (".ipynb", ".py") and path.name not in catalogue
    ]


@contextmanager
def workspace(engine: Path | None) -> Iterator[Path]:
    """A temporary copy of the course's layout holding one learner's engine; yields its root.

    Its `course` package comes first on the kernels' path, so the checks' `exercises/` is the
    copy's, with her `my_autograd.py` (the unfilled one when she handed in none).
    """
    with tempfile.TemporaryDirectory(prefix="grading-") as temporary:
        root = Path(temporary)
        for part in COURSE_LAYOUT:
            source, target = ROOT / part, root / part
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copyfile(source, target)
        (root / "exercises").mkdir()
        shutil.copyfile(engine or EXERCISES / ENGINE, root / "exercises" / ENGINE)
        yield root


def environment(root: Path) -> dict[str, str]:
    """The environment of a kernel or track run in `root`: its `course` first, no .pyc files."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    return env


# --- Running a notebook --------------------------------------------------------------------------


def first_line(text: str) -> str:
    """The first non-empty line of `text`, stripped."""
    return next((line.strip() for line in str(text).splitlines() if line.strip()), "")


def error_of(cell) -> str | None:
    """'NameError: name 'x' is not defined' when the cell raised, else None."""
    for output in cell.get("outputs", []):
        if output.output_type == "error":
            message = first_line(output.evalue)
            return f"{output.ename}: {message}" if message else output.ename
    return None


def printed(cell) -> str:
    """What the cell printed to stdout."""
    return "".join(o.text for o in cell.get("outputs", []) if o.get("name") == "stdout")


def cells_that_raised(nb, name: str) -> list[str]:
    """One problem line per cell that raised without the `raises-exception` tag."""
    return [
        f"{name}: cell [{cell.execution_count}] raised {error_of(cell)}"
        for cell in nb.cells
        if cell.cell_type == "code"
        and error_of(cell)
        and "raises-exception" not in cell.metadata.get("tags", [])
    ]


def clear_outputs(nb) -> None:
    """Drop the outputs stored in the file, so that only this run's outputs are read."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None


def time_left(timeout_s: float):
    """A timeout function for nbclient: what is left of `timeout_s`, counted from the first cell."""
    deadline = None

    def remaining(_cell) -> float:
        nonlocal deadline
        if deadline is None:
            deadline = time.monotonic() + timeout_s
        return max(deadline - time.monotonic(), 0.1)  # 0 would mean "no timeout" to nbclient

    return remaining


def run_notebook(path: Path, root: Path, timeout_s: float) -> tuple[list | None, list[str]]:
    """Run the notebook at `path` in a fresh kernel in `root`/exercises: (its code cells, problems).

    Every cell runs even when one raises; a notebook that runs out of time or whose kernel dies
    keeps the outputs of the cells that ran. The cells are None when the file is no notebook.
    """
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as error:  # not JSON, not a notebook: report it, grade the rest
        return None, [f"{path.name}: cannot be read as a notebook ({first_line(error)})"]
    clear_outputs(nb)
    client = NotebookClient(
        nb,
        kernel_name=KERNEL_NAME,
        allow_errors=True,
        timeout_func=time_left(timeout_s),
        shutdown_kernel="immediate",
        record_timing=False,
        resources={"metadata": {"path": str(root / "exercises")}},
    )
    problems = []
    try:
        client.execute(env=environment(root), stderr=subprocess.DEVNULL)
    except CellTimeoutError:
        problems.append(f"{path.name}: ran past {timeout_s:g} s and was stopped")
    except DeadKernelError:
        problems.append(f"{path.name}: the kernel died (a crash, or out of memory)")
    except Exception as error:  # whatever else stops nbclient: report it, grade what ran
        problems.append(f"{path.name}: stopped by {type(error).__name__}: {first_line(error)}")
    cells = [cell for cell in nb.cells if cell.cell_type == "code"]
    return cells, cells_that_raised(nb, path.name) + problems


# --- Reading the checks --------------------------------------------------------------------------


def status_of(said: str) -> tuple[str, str]:
    """(status, detail) from what a check line says after 'Exercise N.M: '."""
    if said.startswith("correct ✓"):
        return "correct", ""
    if said.startswith("not done yet"):
        return "not done", ""
    return "wrong", said


def first_check_line(cells, exercise_id: str) -> str | None:
    """What the first line 'Exercise N.M: ...' that the cells printed says, or None."""
    for cell in cells:
        for printed_id, said in CHECK_LINE.findall(printed(cell)):
            if printed_id == exercise_id:
                return said
    return None


def grade_exercise(exercise: Exercise, cells: list | None) -> Grade:
    """The grade of one notebook exercise, from the run's check cell (found by its source)."""
    if cells is None:
        return Grade(exercise, "not checked", "the file cannot be read as a notebook")
    check = next((c for c in cells if c.source.strip() == exercise.check_source.strip()), None)
    if check is not None and error_of(check):
        return Grade(exercise, "error", f"its check cell raised {error_of(check)}")
    said = first_check_line([check] if check is not None else [], exercise.id)
    said = said if said is not None else first_check_line(cells, exercise.id)
    if said is not None:
        return Grade(exercise, *status_of(said))
    if check is None:
        return Grade(exercise, "not checked", "its check cell is not in the notebook")
    if check.execution_count is None:
        return Grade(exercise, "not checked", "the notebook stopped before its check cell")
    return Grade(exercise, "not checked", "its check cell printed nothing")


# --- The build track -----------------------------------------------------------------------------


def track_results(engine: str) -> dict[str, list[str]]:
    """{piece: [status, message]} of every build-track piece of the engine at path `engine`."""
    from course import track
    from course.specs import TASKS

    results: dict = {}  # track.run's cache, shared by the pieces of one engine
    return {task.id: list(track.run(task, Path(engine), results)) for task in TASKS}


TRACK_STATUS = {"done": "correct", "not done": "not done", "wrong": "wrong"}
TRACK_PROGRAM = (
    "import json, sys; from pathlib import Path; from course.grade import track_results; "
    "Path(sys.argv[2]).write_text(json.dumps(track_results(sys.argv[1])), encoding='utf-8')"
)


def run_track(root: Path, exercises: list[Exercise], timeout_s: float) -> list[Grade]:
    """Grade the engine in `root`/exercises piece by piece, in a process of its own."""
    engine, results = root / "exercises" / ENGINE, root / "track.json"
    command = [sys.executable, "-c", TRACK_PROGRAM, str(engine), str(results)]
    env = environment(root)
    try:
        run = subprocess.run(command, cwd=root, env=env, capture_output=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        why = f"the build track ran past {timeout_s:g} s"
        return [Grade(exercise, "not checked", why) for exercise in exercises]
    if run.returncode != 0:
        last = (run.stderr.decode(errors="replace").strip().splitlines() or ["no message"])[-1]
        return [
            Grade(exercise, "error", f"the build track stopped: {last}") for exercise in exercises
        ]
    found = json.loads(results.read_text("utf-8"))
    grades = []
    for exercise in exercises:
        status, message = found[exercise.id]
        grades.append(Grade(exercise, TRACK_STATUS[status], message if status == "wrong" else ""))
    return grades


# --- One learner ---------------------------------------------------------------------------------


def grade_learner(folder: Path, catalogue: dict[str, list[Exercise]], timeout_s: float) -> Report:
    """Grade every file one learner handed in; exercises of files she did not hand in get 0."""
    files, report = handed_in(folder), Report(folder.name)
    report.problems += stray_files(files, catalogue)
    engine = files / ENGINE if (files / ENGINE).is_file() else None
    with workspace(engine) as root:
        for name, exercises in catalogue.items():
            if not (files / name).is_file():
                report.grades += [Grade(e, "not submitted") for e in exercises]
                continue
            started = time.monotonic()
            if name == ENGINE:
                report.grades += run_track(root, exercises, timeout_s)
            else:
                cells, problems = run_notebook(files / name, root, timeout_s)
                report.problems += problems
                report.grades += [grade_exercise(exercise, cells) for exercise in exercises]
            print(f"  {folder.name}: {name} ({time.monotonic() - started:.0f} s)", flush=True)
    return report


# --- The tables ----------------------------------------------------------------------------------

COLUMNS = ("learner", "file", "exercise", "title", "status", "points", "detail")


def rows(reports: list[Report]) -> list[tuple]:
    """One row per learner and exercise, in COLUMNS' order."""
    return [
        (r.learner, g.exercise.file, g.exercise.id, g.exercise.title, g.status, g.points, g.detail)
        for r in reports
        for g in r.grades
    ]


def write_csv(reports: list[Report], path: Path) -> None:
    """Write every row to the CSV file `path`."""
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(COLUMNS)
        writer.writerows(rows(reports))


def cell_text(value) -> str:
    """A value as the text of one Markdown table cell."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(header: tuple, body: list[tuple]) -> list[str]:
    """The lines of a Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(cell_text(v) for v in row) + " |" for row in body]


def status_counts(report: Report) -> str:
    """'3 correct, 1 wrong, ...': how many exercises have each status, in STATUSES' order."""
    counts = Counter(grade.status for grade in report.grades)
    return ", ".join(f"{counts[status]} {status}" for status in STATUSES if counts[status])


def markdown(reports: list[Report], most: int) -> str:
    """The grading report: the totals, then each learner's table and problems."""
    totals = [(r.learner, r.points, most, status_counts(r)) for r in reports]
    lines = ["# Grades", "", *markdown_table(("learner", "points", "of", "exercises"), totals)]
    for report in reports:
        lines += ["", f"## {report.learner}: {report.points} of {most} points", ""]
        body = [row[1:] for row in rows([report])]
        lines += markdown_table(COLUMNS[1:], body)
        if report.problems:
            lines += ["", "Problems:", "", *(f"- {cell_text(p)}" for p in report.problems)]
    return "\n".join(lines) + "\n"


def summary(reports: list[Report], most: int) -> str:
    """The printed summary: each learner's points and status counts, then her problems."""
    width = max(len(r.learner) for r in reports)
    lines = []
    for report in reports:
        lines.append(
            f"{report.learner:<{width}}  {report.points:>3} of {most} points  ({status_counts(report)})"
        )
        lines += [f"{'':<{width}}  problem: {problem}" for problem in report.problems]
    return "\n".join(lines)


# --- The command ---------------------------------------------------------------------------------


def grade(submissions: Path, out: Path = OUT, timeout_s: float = TIMEOUT_S) -> list[Report]:
    """Grade every learner in `submissions`; write grades.md and grades.csv into `out`."""
    folders, catalogue = learner_folders(submissions), course_exercises()
    print(f"Grading {len(folders)} learner(s) in {submissions} ({timeout_s:g} s per notebook)")
    reports = [grade_learner(folder, catalogue, timeout_s) for folder in folders]
    out.mkdir(parents=True, exist_ok=True)
    (out / "grades.md").write_text(markdown(reports, most_points(catalogue)), encoding="utf-8")
    write_csv(reports, out / "grades.csv")
    return reports


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point: grade, print the summary and where the tables are."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("submissions", nargs="?", default="", help="one subfolder per learner")
    parser.add_argument("--out", type=Path, default=OUT, help=f"where the tables go ({OUT})")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds per notebook")
    args = parser.parse_args(argv)
    try:
        if not args.submissions:
            raise GradingError("give the folder of submissions: make grade SUBMISSIONS=folder")
        reports = grade(Path(args.submissions), args.out, args.timeout)
    except GradingError as error:
        print(f"grade: {error}", file=sys.stderr)
        return 2
    print(summary(reports, most_points(course_exercises())))
    print(f"Tables: {args.out / 'grades.md'} and {args.out / 'grades.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
