"""The course's data files, found from the package, whatever the working directory.

    from course.data import data_path
    text = data_path("sonnets.txt").read_text(encoding="utf-8")

The files live in the repository's `data/` folder, next to the `course` package. A notebook
that reads `../data/sonnets.txt` works only when it runs from `notebooks/` or `exercises/`;
`data_path` works from anywhere (a grading copy, a test, a script at the root).
"""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"


def data_path(name: str) -> Path:
    """The absolute path of the course's data file `name`; FileNotFoundError when it is absent."""
    path = DATA / name
    if not path.is_file():
        present = ", ".join(sorted(p.name for p in DATA.glob("*"))) or "nothing"
        raise FileNotFoundError(
            f"the course has no data file {name!r} in {DATA} (it holds: {present})"
        )
    return path
