"""Prose follows the run: figures and phrases that markdown quotes from outputs are checked.

A markdown cell marks what it quotes from an output, e.g.
``<span class="from-run" data-cell="cell-48">0.367</span>``; the quotation renders as plain
text. It must appear, whole (not inside a longer number or word), in the printed text,
text/plain results or error of the code cell it names, and that cell's output must be one the
tests compare (no ``nbval-ignore-output`` or ``nbval-skip`` tag). ``python -m course.execute``
checks every quotation after executing and exits with status 1 on a stale one;
``normalise`` renames ``data-cell`` along with the cells it renumbers.
"""

from __future__ import annotations

import html
import re

import nbformat

QUOTATION = re.compile(r'<span class="from-run" data-cell="([^"]*)">(.*?)</span>', re.DOTALL)
NOT_COMPARED = ("nbval-ignore-output", "nbval-skip")


def quotation(cell_id: str, text: str) -> str:
    """The markdown that marks ``text`` as quoted from the outputs of cell ``cell_id``."""
    return f'<span class="from-run" data-cell="{cell_id}">{text}</span>'


def rename_cells(source: str, new_ids: dict) -> str:
    """``source`` with each quotation naming its cell by the id in ``new_ids`` (old id: new)."""
    return QUOTATION.sub(lambda m: quotation(new_ids.get(m[1], m[1]), m[2]), source)


def output_text(cell: nbformat.NotebookNode) -> str:
    """What a code cell's outputs show as text (printed, text/plain results, errors), on one line."""
    parts = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            parts.append(output.text)
        elif output.output_type == "error":
            parts.append(f"{output.ename}: {output.evalue}")
        else:
            parts.append(output.get("data", {}).get("text/plain", ""))
    return " ".join(" ".join(parts).split())


def problem(cell: nbformat.NotebookNode | None, name: str, quoted: str) -> str:
    """Why ``quoted`` cannot stand as a quotation of the cell ``name`` ("" when it can)."""
    if cell is None or cell.cell_type != "code":
        return f"names {name}, which is not a code cell of this notebook"
    ignored = sorted(set(cell.metadata.get("tags", [])) & set(NOT_COMPARED))
    if ignored:
        return f"quotes {name}, whose output is not compared ({ignored[0]}): say what to look for"
    before = r"(?<![\w.-])" if quoted[:1].isalnum() else ""  # not inside a longer number or word
    after = r"(?!\w|\.\d)" if quoted[-1:].isalnum() else ""
    text = output_text(cell)
    if not quoted or not re.search(before + re.escape(quoted) + after, text):
        return f"is not in the outputs of {name}, which show: {text[:300] or '(nothing)'!r}"
    return ""


def stale_quotations(nb: nbformat.NotebookNode, outputs_from=None) -> list[str]:
    """One line per quotation in ``nb``'s markdown that the outputs do not hold.

    The outputs are those of ``outputs_from`` (default ``nb``; an exercise notebook, which has
    none, is checked against its solutions). A quotation is read as it renders: entities as
    their characters, a line break as a space.
    """
    cells = {cell.get("id"): cell for cell in (outputs_from or nb).cells}
    problems = []
    for cell in (c for c in nb.cells if c.cell_type == "markdown"):
        found = QUOTATION.findall(cell.source)
        if len(re.findall(r"\bfrom-run\b", cell.source)) != len(found):
            problems.append(f"{cell.id}: write each quotation as {quotation('cell-NN', '...')}")
        for name, quoted in found:
            text = " ".join(html.unescape(quoted).split())
            if why := problem(cells.get(name), name, text):
                problems.append(f"{cell.id}: the quotation {text!r} {why}")
    return problems
