"""One set of chapter times: each chapter's first cell states its reading and exercise times
(00 in its learning-path table), and the README's table, 00's table and INSTRUCTORS.md's totals
agree with them."""

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "notebooks").glob("0*.ipynb"))
STATED = re.compile(r"(\d+) minutes[^\d]*?(\d+) for the exercise")
PATH_ROW = re.compile(r"^\| (0\d) [^|]*\|[^|]*\| (\d+) min \| (\d+) min \|$", re.M)


def learning_path() -> dict[str, tuple[int, int]]:
    """00's table: {chapter: (reading, exercises)}."""
    table = nbformat.read(CHAPTERS[0], as_version=4).cells[2].source
    return {number: (int(r), int(e)) for number, r, e in PATH_ROW.findall(table)}


def stated_times() -> dict[str, tuple[int, int]]:
    """What each chapter's first cell says (00: its row of the learning path)."""
    times = {"00": learning_path()["00"]}
    for path in CHAPTERS[1:]:
        found = STATED.search(nbformat.read(path, as_version=4).cells[0].source)
        assert found, f"{path.name}'s first cell states no 'N minutes ... M for the exercises'"
        times[path.name[:2]] = (int(found[1]), int(found[2]))
    return times


@pytest.mark.parametrize("source", ["the learning path of 00", "the README"])
def test_tables_give_each_chapter_the_time_its_first_cell_states(source):
    if source == "the README":
        readme = (ROOT / "README.md").read_text("utf-8")
        rows = re.findall(r"^\| \[(0\d) [^|]*\| (\d+) \+ (\d+) min \|$", readme, re.M)
        table = {number: (int(r), int(e)) for number, r, e in rows}
    else:
        table = learning_path()
    assert table == stated_times(), f"{source} disagrees with the chapters' first cells"


def test_instructors_totals_are_the_sums_of_the_chapter_times():
    times = stated_times().values()
    reading, exercises = sum(r for r, _ in times), sum(e for _, e in times)
    guide = " ".join((ROOT / "INSTRUCTORS.md").read_text("utf-8").split())
    assert f"{reading} minutes in all" in guide
    assert f"The exercises take {exercises} minutes in all" in guide
    assert f"Reading and exercises together: {reading + exercises:,} minutes" in guide
