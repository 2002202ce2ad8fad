"""Build reveal.js slide decks from the chapters: ``python -m course.slides [--out DIR] [NB ...]``.

Each cell's ``slideshow`` metadata (JupyterLab: the property inspector, "Slide Type") places it:
``slide`` starts a new slide, ``subslide`` a slide below the current one, ``fragment`` appears
on the next key press, ``notes`` goes to the speaker view (key ``s``), ``skip`` is left out, and
``-`` (or nothing) continues the previous cell's slide. The decks load reveal.js and MathJax
from copies in the output folder (fetched once with npm), so they work offline.

A slide must fit its 1280x720 frame: arrow keys and a clicker cannot scroll. ``paginate`` cuts
a copy of each chapter (the stored notebooks keep their metadata) where the cells' estimated
height would pass the frame, and gives a code cell too tall for one slide its output on the
next (a long source or output goes on as many as it needs). The deck's template zooms out any
slide that still does not fit, as a last resort.
"""

from __future__ import annotations

import argparse
import base64
import copy
import math
import re
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbconvert import SlidesExporter

from course.site import title_of
from course.speaker_notes import for_speaker
from course.vendor import VendorError, copy_mathjax, copy_reveal

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = Path(__file__).resolve().parent / "templates"
OUT = ROOT / "build" / "slides"
HIDDEN = ("notes", "skip")

# Estimated heights in pixels of the 1280x720 frame, fitted to Chromium's on the decks. A slide
# is cut before the cell that would take it past BUDGET, a little under the frame.
BUDGET = 690
CODE_LINE, CODE_CHARS = 22.8, 104  # a line of code or printed text (19 px monospace)
INPUT_PAD, OUTPUT_PAD, CELL_PAD = 22, 15, 15  # around a code cell's input, each output, the cell
PICTURE_WIDTH, PICTURE_HEIGHT = 1262, 520  # the caps of SVG and PNG outputs (course_slides.css)
HTML_ROW, HTML_PARAGRAPH = 35, 46  # a table printed as HTML (compare's), and its title line
# Markdown, by block: (margin above, line height, characters per line, margin below); the
# margins of neighbours overlap. Lists, folded <details> and tables have no margins.
BLOCKS = {
    "h1": (30, 60, 55, 20),
    "h2": (20, 38.4, 76, 20),
    "h3": (20, 31.2, 94, 20),
    "p": (20, 26, 110, 20),
    "item": (0, 32, 105, 0),
    "details": (0, 32, 10**6, 0),
    "row": (0, 33, 10**6, 0),
    "math": (20, 34, 10**6, 20),
    "code": (20, CODE_LINE, CODE_CHARS, 20),
}
MARKDOWN_PAD = 10
MOST_LINES = int((BUDGET - CELL_PAD - INPUT_PAD) / CODE_LINE)  # lines of code one slide holds
DETAILS = re.compile(r"<details>\s*<summary>(.*?)</summary>.*?</details>", re.DOTALL)
ITEM = re.compile(r"^\s*(?:[*+-]|\d+\.) ", re.MULTILINE)
MARKUP = re.compile(r"\*\*|`|\$|\\[a-zA-Z]+|[{}]")  # not drawn as characters of their own
# nbconvert's reveal template adds, for ?print-pdf, a stylesheet link with no href (the sheet of
# reveal.js 3); reveal.js 4 and later print from reveal.css alone, so the script goes.
PRINT_PDF_SCRIPT = re.compile(
    r"<!-- If the query includes 'print-pdf'.*?-->\s*<script>\s*if\( window\.location\.search"
    r"\.match\( /print-pdf/gi \) \) \{.*?</script>\s*",
    re.DOTALL,
)


@dataclass(frozen=True)
class SlideCount:
    """How many slides a deck has: across (``slides``) and in all, subslides included (``views``)."""

    slides: int
    views: int


def slide_type(cell: nbformat.NotebookNode) -> str:
    """The cell's slide type from its ``slideshow`` metadata (``-`` when it has none)."""
    return cell.metadata.get("slideshow", {}).get("slide_type", "-")


def text_lines(text: str, width: int) -> int:
    """How many lines ``text`` fills when each of its lines wraps at ``width`` characters."""
    return sum(max(1, math.ceil(len(line) / width)) for line in text.splitlines())


def markdown_blocks(source: str) -> list[tuple[str, list[str]]]:
    """The blocks of a markdown cell, each as its kind (a key of BLOCKS) and its lines of text."""
    blocks = []
    for block in re.split(r"\n\s*\n", DETAILS.sub("<details>", source).strip()):
        if heading := re.match(r"(#{1,3})#* ", block):
            blocks.append((f"h{len(heading[1])}", [block[heading.end() :]]))
        elif block.startswith("<details>"):
            blocks.append(("details", [""]))
        elif block.startswith("|"):
            blocks.append(("row", block.splitlines()[2:] + [""]))  # the separator is not drawn
        elif block.startswith("$$"):
            blocks.append(("math", block.split("\\\\")))
        elif block.startswith("```"):
            blocks.append(("code", block.splitlines()[1:-1]))
        elif ITEM.match(block):
            blocks.append(("item", [" ".join(i.split()) for i in ITEM.split(block)[1:]]))
        else:
            blocks.append(("p", [" ".join(block.split())]))
    return blocks


def markdown_height(source: str) -> float:
    """The estimated height of a markdown cell (a folded <details> shows only its summary)."""
    height, below = MARKDOWN_PAD, 0
    for kind, lines in markdown_blocks(source):
        top, line, chars, bottom = BLOCKS[kind]
        shown = (len(MARKUP.sub("", text)) for text in lines)
        height += max(below, top) + line * sum(max(1, math.ceil(n / chars)) for n in shown)
        below = bottom
    return height + min(below, MARKDOWN_PAD)


def picture_size(data: dict) -> tuple[float, float] | None:
    """The width and height in pixels of an SVG or PNG output, as stored (None if neither)."""
    if "image/svg+xml" in data:
        svg = data["image/svg+xml"]
        size = [
            re.search(rf'<svg[^>]*?\s{key}="([\d.]+)(pt)?"', svg) for key in ("width", "height")
        ]
        if all(size):
            return tuple(float(m[1]) * (4 / 3 if m[2] else 1) for m in size)
    if "image/png" in data:
        return struct.unpack(">II", base64.b64decode(data["image/png"][:44])[16:24])
    return None


def output_height(output: nbformat.NotebookNode) -> float:
    """The estimated height of one output: a picture shrunk to its caps, a table, or text."""
    data = output.get("data", {})
    if size := picture_size(data):
        width, height = size
        return height * min(1, PICTURE_WIDTH / width, PICTURE_HEIGHT / height) + OUTPUT_PAD
    if "text/html" in data:
        return HTML_ROW * data["text/html"].count("<tr") + HTML_PARAGRAPH + OUTPUT_PAD
    text = output.get("text") or data.get("text/plain") or "\n".join(output.get("traceback", []))
    return OUTPUT_PAD + CODE_LINE * text_lines(text, CODE_CHARS)


def cell_height(cell: nbformat.NotebookNode) -> float:
    """The estimated height of a cell on a slide: its markdown, or its source and outputs."""
    if cell.cell_type != "code":
        return markdown_height(cell.source)
    shown = not cell.metadata.get("transient", {}).get("remove_source")
    source = INPUT_PAD + CODE_LINE * text_lines(cell.source, CODE_CHARS) if shown else 0
    return CELL_PAD + source + sum(map(output_height, cell.get("outputs", [])))


def source_parts(source: str) -> list[str]:
    """``source`` cut into parts of about equal length that fit a slide, preferably at a blank
    line before a top-level statement."""
    lines, parts = source.splitlines(), []
    while len(lines) > MOST_LINES:
        target = len(lines) / math.ceil(len(lines) / MOST_LINES)
        cuts = range(1, MOST_LINES + 1)
        tops = [i for i in cuts if not lines[i - 1].strip() and lines[i][:1] not in " \t"]
        cut = min(tops or cuts, key=lambda i: abs(i - target))
        parts.append("\n".join(lines[:cut]).rstrip())
        lines = lines[cut:]
    return [*parts, "\n".join(lines)]


def output_parts(output: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """``output``, or, for printed text longer than a slide, copies with a slide's worth each."""
    if output.output_type != "stream" or output_height(output) <= BUDGET:
        return [output]
    parts = [""]
    for line in output.text.splitlines(keepends=True):
        if parts[-1] and text_lines(parts[-1] + line, CODE_CHARS) > MOST_LINES:
            parts.append("")
        parts[-1] += line
    return [nbformat.from_dict({**output, "text": text}) for text in parts]


def whole_blocks(source: str) -> list[str]:
    """``source`` cut at blank lines, never inside a <details>, a fenced code block or display
    math."""
    blocks = []
    for block in re.split(r"\n\s*\n", source.strip()):
        text = blocks[-1] if blocks else ""
        if (
            text.count("<details") > text.count("</details>")
            or text.count("```") % 2
            or text.count("$$") % 2
        ):
            blocks[-1] += "\n\n" + block
        else:
            blocks.append(block)
    return blocks


def markdown_parts(source: str) -> list[str]:
    """``source`` cut at blank lines into parts that fit a slide (see ``whole_blocks``)."""
    blocks = whole_blocks(source)
    parts = blocks[:1]
    for block in blocks[1:]:
        if markdown_height(f"{parts[-1]}\n\n{block}") > BUDGET:
            parts.append(block)
        else:
            parts[-1] += "\n\n" + block
    return parts


def set_type(cell: nbformat.NotebookNode, kind: str) -> None:
    """Give ``cell`` the slide type ``kind``."""
    cell.metadata.setdefault("slideshow", {})["slide_type"] = kind


def with_source(cell: nbformat.NotebookNode, source: str) -> nbformat.NotebookNode:
    """A copy of ``cell`` with ``source`` and, for a code cell, no outputs."""
    piece = copy.deepcopy(cell)
    piece.source = source
    if cell.cell_type == "code":
        piece.outputs = []
    return piece


def outputs_only(cell: nbformat.NotebookNode, outputs: list, name: str) -> nbformat.NotebookNode:
    """A copy of code cell ``cell`` that shows ``outputs`` without its source, named ``name``."""
    piece = with_source(cell, cell.source)
    piece.id, piece.outputs = name, outputs
    piece.metadata["transient"] = {"remove_source": True}
    set_type(piece, "-")
    return piece


def source_shown(cell: nbformat.NotebookNode) -> bool:
    """Whether ``cell`` shows its source (not an ``outputs_only`` piece)."""
    return not cell.metadata.get("transient", {}).get("remove_source")


def pieces(cell: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """``cell`` whole if it fits a slide; else its source in parts, the last with as many outputs
    as fit, then the other outputs without the source, grouped as they fit."""
    if cell_height(cell) <= BUDGET:
        return [cell]
    if cell.cell_type != "code":
        result = [with_source(cell, part) for part in markdown_parts(cell.source)]
    else:
        result = [with_source(cell, part) for part in source_parts(cell.source)]
        for part in [part for output in cell.outputs for part in output_parts(output)]:
            if cell_height(result[-1]) + output_height(part) > BUDGET:
                result.append(outputs_only(cell, [], ""))
            result[-1].outputs.append(part)
    for number, piece in enumerate(result[1:], start=1):
        piece.id = f"{cell.id}-{number}"
        set_type(piece, "-")
    return result


def lead_in(cell: nbformat.NotebookNode) -> str | None:
    """The last paragraph of a markdown cell when it introduces what follows (ends with ":")."""
    if cell.cell_type != "markdown":
        return None
    blocks = whole_blocks(cell.source)
    last = blocks[-1] if blocks else ""
    kind = markdown_blocks(last)[0][0] if last else None
    return last if kind == "p" and last.rstrip().endswith(":") else None


def holds_more_than(slide: list, lead: str) -> bool:
    """Whether the cells of ``slide`` show something besides headings and the paragraph ``lead``."""
    for cell, _ in slide:
        if cell.cell_type != "markdown":
            return True
        blocks = [block for block in whole_blocks(cell.source) if block != lead]
        if any(not re.match(r"#{1,6} ", block) for block in blocks):
            return True
    return False


def paginate(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``nb`` whose every slide fits the frame: each cell in ``pieces``, and a new
    subslide before a piece that would pass BUDGET. When that piece is code, the markdown just
    before it goes along, or, if that markdown opens the slide, the code's outputs go alone.
    A paragraph that introduces the code (it ends with ":") never ends a slide without it: it
    goes to the code's subslide, cut from its cell if need be, or, where it is all its slide
    shows besides headings, the code's source stays with it (zoomed as a last resort)."""
    nb, cells, slide = copy.deepcopy(nb), [], []  # slide: (cell, height) of the current slide
    for cell in nb.cells:
        if slide_type(cell) in HIDDEN:
            cells.append(cell)
            continue
        work = pieces(cell)
        while work:
            piece = work.pop(0)
            height, room = cell_height(piece), BUDGET - sum(h for _, h in slide)
            code = piece.cell_type == "code"
            lead = slide[-1] if len(slide) > 1 and slide[-1][0].cell_type == "markdown" else None
            source = with_source(piece, piece.source) if code and source_shown(piece) else None
            intro = lead_in(slide[-1][0]) if code and slide else None
            if slide_type(piece) in ("slide", "subslide"):
                slide = []
            elif height <= room:
                pass
            elif code and lead and lead[1] + height <= BUDGET:  # the text before the code moves
                set_type(lead[0], "subslide")
                slide = [lead]
            elif source and piece.outputs and cell_height(source) <= room:  # outputs move alone
                work.insert(0, outputs_only(piece, piece.outputs, f"{piece.id}-output"))
                piece, height = source, cell_height(source)
            elif intro and holds_more_than(slide, intro):  # the introduction moves, then the code
                last = slide.pop()[0]
                if last.source.strip() != intro:
                    rest = last.source.strip()[: -len(intro)].rstrip()
                    slide.append((last, markdown_height(rest)))
                    last.source = rest
                    last = with_source(last, intro)
                    last.id = f"{last.id}-intro"
                    cells.append(last)
                set_type(last, "subslide")
                slide = [(last, markdown_height(intro))]
                work.insert(0, piece)
                continue
            elif intro and source and piece.outputs:  # the source stays with its introduction
                work.insert(0, outputs_only(piece, piece.outputs, f"{piece.id}-output"))
                piece, height = source, cell_height(source)
            elif not intro:
                set_type(piece, "subslide")
                slide = []
            slide.append((piece, height))
            cells.append(piece)
    nb.cells = cells
    return nb


def count_slides(nb: nbformat.NotebookNode) -> SlideCount:
    """Count the slides of ``nb``'s deck (``paginate`` cuts it, the first shown cell opens one)."""
    shown = [slide_type(cell) for cell in paginate(nb).cells if slide_type(cell) not in HIDDEN]
    if not shown:
        return SlideCount(0, 0)
    slides = 1 + shown[1:].count("slide")
    return SlideCount(slides, slides + shown[1:].count("subslide"))


def section_slides(nb: nbformat.NotebookNode) -> dict[str, int]:
    """The slide (counted across, from 1) on which each heading of ``nb`` stands in its deck.

    ``paginate`` adds only slides below, so a section keeps its number across; the deck's
    address ``NN_topic.slides.html#/N-1`` opens slide N.
    """
    found, across = {}, 0
    for cell in (c for c in nb.cells if slide_type(c) not in HIDDEN):
        across += 1 if across == 0 or slide_type(cell) == "slide" else 0
        if cell.cell_type == "markdown":
            for heading in re.findall(r"^#{1,6} (.+?)\s*$", cell.source, re.MULTILINE):
                found.setdefault(heading, across)
    return found


def exporter() -> SlidesExporter:
    """nbconvert's slides exporter with the course template and the local reveal.js and MathJax."""
    return SlidesExporter(
        template_name="course_slides",
        extra_template_basedirs=[str(TEMPLATES)],
        extra_template_paths=[str(TEMPLATES)],  # for course_common/macros.j2
        reveal_url_prefix="reveal.js",
        reveal_theme="white",  # its font ships with reveal.js; "simple" loads Google fonts
        reveal_width="1280",
        reveal_height="720",
        mathjax_url="mathjax/tex-svg-full.js",
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )


def build(out: Path = OUT, notebooks: list[Path] | None = None) -> dict[Path, SlideCount]:
    """Write one deck per notebook (default: every chapter) into ``out``; return their counts."""
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb")) if notebooks is None else notebooks
    copy_reveal(out / "reveal.js")
    copy_mathjax(out / "mathjax")
    slides_exporter, counts = exporter(), {}
    for path in notebooks:
        nb = for_speaker(nbformat.read(path, as_version=4))
        resources = {"metadata": {"name": title_of(path)}}
        body, _ = slides_exporter.from_notebook_node(paginate(nb), resources=resources)
        body = PRINT_PDF_SCRIPT.sub("", body, count=1)
        deck = out / f"{path.stem}.slides.html"
        deck.write_text(body, encoding="utf-8")
        counts[deck] = count_slides(nb)
    return counts


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point: build the decks and print the slide count of each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/*.ipynb")
    parser.add_argument("--out", type=Path, default=OUT, help=f"output folder (default {OUT})")
    args = parser.parse_args(argv)
    try:
        counts = build(args.out, args.notebooks or None)
    except VendorError as error:
        print(f"slides: {error}", file=sys.stderr)
        return 1
    for deck, count in counts.items():
        print(f"{deck.name}: {count.slides} slides, {count.views} with subslides")
    print(f"{len(counts)} decks in {args.out}; open one in a browser (s: speaker notes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
