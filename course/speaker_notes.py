"""Instructor notes in the chapters: shown to the speaker, folded away for everyone else.

A note is a markdown cell with slide type ``notes``. In JupyterLab it reads as a collapsed
``<details>`` block labelled "Instructor note", so a learner reading alone can pass it by;
the slide decks show its text, unfolded, in reveal.js's speaker view (key ``s``), and the web
site leaves it out.
"""

from __future__ import annotations

import copy
import re

import nbformat

SUMMARY = "<details><summary><b>Instructor note</b> (for the slides)</summary>"
FOLDED = re.compile(rf"\A{re.escape(SUMMARY)}\n\n(?P<text>.*\S)\n\n</details>\Z", re.DOTALL)


def is_note(cell: nbformat.NotebookNode) -> bool:
    """Whether ``cell`` is an instructor note (slide type ``notes``)."""
    return cell.metadata.get("slideshow", {}).get("slide_type") == "notes"


def fold(text: str) -> str:
    """The cell source that shows ``text`` as a collapsed, labelled instructor note."""
    return f"{SUMMARY}\n\n{text.strip()}\n\n</details>"


def note_text(source: str) -> str:
    """The text of a folded note (ValueError if ``source`` is not one)."""
    match = FOLDED.match(source)
    if match is None:
        raise ValueError(f"an instructor note must be written as fold(text): {source[:60]!r}")
    return match.group("text")


def for_speaker(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``nb`` whose notes are unfolded, for the speaker view of a deck."""
    nb = copy.deepcopy(nb)
    for cell in filter(is_note, nb.cells):
        cell.source = note_text(cell.source)
    return nb


def for_readers(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``nb`` without its instructor notes, for the web site."""
    nb = copy.deepcopy(nb)
    nb.cells = [cell for cell in nb.cells if not is_note(cell)]
    return nb
