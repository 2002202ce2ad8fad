"""Build reveal.js slide decks from the chapters: ``python -m course.slides [--out DIR] [NB ...]``.

Each cell's ``slideshow`` metadata (JupyterLab: the property inspector, "Slide Type") places it:
``slide`` starts a new slide, ``subslide`` a slide below the current one, ``fragment`` appears
on the next key press, ``notes`` goes to the speaker view (key ``s``), ``skip`` is left out, and
``-`` (or nothing) continues the previous cell's slide. The decks load reveal.js and MathJax
from copies in the output folder (fetched once with npm), so they work offline.
"""

from __future__ import annotations

import argparse
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


@dataclass(frozen=True)
class SlideCount:
    """How many slides a deck has: across (``slides``) and in all, subslides included (``views``)."""

    slides: int
    views: int


def slide_type(cell: nbformat.NotebookNode) -> str:
    """The cell's slide type from its ``slideshow`` metadata (``-`` when it has none)."""
    return cell.metadata.get("slideshow", {}).get("slide_type", "-")


def count_slides(nb: nbformat.NotebookNode) -> SlideCount:
    """Count the slides of ``nb`` the way nbconvert cuts them: the first shown cell opens one."""
    shown = [slide_type(cell) for cell in nb.cells if slide_type(cell) not in HIDDEN]
    if not shown:
        return SlideCount(0, 0)
    slides = 1 + shown[1:].count("slide")
    return SlideCount(slides, slides + shown[1:].count("subslide"))


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
        body, _ = slides_exporter.from_notebook_node(nb, resources=resources)
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
