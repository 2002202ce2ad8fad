"""INSTRUCTORS.md cites real places: every § “heading” it names is a heading of the notebook.

A citation is a section heading in curly quotes after §, as it stands in the notebook's
markdown. It belongs to the notebook named last before it on the same line
(`notebooks/NN_topic.ipynb`); one with no notebook on its line must be a heading of some chapter.
"""

import re
from pathlib import Path

import nbformat

from course.slides import section_slides

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "INSTRUCTORS.md"
TOKEN = re.compile(r"`((?:notebooks|exercises|solutions)/\d\d_\w+\.ipynb)`|§ “([^”]+)”")
SLIDE = re.compile(r"`(notebooks/\d\d_\w+\.ipynb)`|§ “([^”]+)” \(slide (\d+)\)")


def headings(path: Path) -> set[str]:
    """The text of every markdown heading in the notebook at ``path``."""
    cells = nbformat.read(path, as_version=4).cells
    text = "\n".join(cell.source for cell in cells if cell.cell_type == "markdown")
    return set(re.findall(r"^#{1,6} (.+?)\s*$", text, re.MULTILINE))


def citations(text: str) -> list[tuple[str | None, str]]:
    """(notebook or None, heading) for each § “heading” in ``text``."""
    found = []
    for line in text.splitlines():
        notebook = None
        for path, heading in TOKEN.findall(line):
            notebook = path or notebook
            if heading:
                found.append((notebook, heading))
    return found


def test_every_cited_notebook_exists():
    named = {path for path, _ in TOKEN.findall(GUIDE.read_text("utf-8")) if path}
    assert named, "the guide cites no notebook"
    assert sorted(p for p in named if not (ROOT / p).exists()) == []


def test_every_cited_section_is_a_heading_there():
    chapters = set().union(*(headings(p) for p in (ROOT / "notebooks").glob("*.ipynb")))
    missing = [
        f"{notebook or 'any chapter'} § “{heading}”"
        for notebook, heading in citations(GUIDE.read_text("utf-8"))
        if heading not in (headings(ROOT / notebook) if notebook else chapters)
    ]
    assert missing == [], "rename these in INSTRUCTORS.md"


def test_citations_are_parsed_per_line():
    line = "`notebooks/01_a.ipynb` § “1. One” and § “2. Two”\n§ “Recap”"
    assert citations(line) == [
        ("notebooks/01_a.ipynb", "1. One"),
        ("notebooks/01_a.ipynb", "2. Two"),
        (None, "Recap"),
    ]


def test_every_cited_slide_number_is_where_the_section_starts_in_the_deck():
    cited, notebook = [], None
    for line in GUIDE.read_text("utf-8").splitlines():
        notebook = None
        for path, heading, number in SLIDE.findall(line):
            notebook = path or notebook
            if heading:
                cited.append((notebook, heading, int(number)))
    assert len(cited) > 10, "the lecture plan links its rows to slides"
    wrong = [
        f"{notebook} § “{heading}”: slide {number}, the deck has it on slide {found}"
        for notebook, heading, number in cited
        if (found := section_slides(nbformat.read(ROOT / notebook, as_version=4)).get(heading))
        != number
    ]
    assert wrong == [], "update the (slide N) in INSTRUCTORS.md"
