"""Build the executed course as a static web site: ``python -m course.site [--out DIR]``.

One HTML page per chapter and per solutions notebook, made from the outputs stored in the
notebooks (graph pictures as inline SVG), an ``index.html`` that lists them, and previous /
contents / next links on every page. Instructor notes are left out: they belong to the decks.
MathJax is copied into the folder (fetched once with npm) and nothing is loaded from
elsewhere, so the pages read offline, straight from the disk.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter

from course.speaker_notes import for_readers
from course.vendor import VendorError, copy_mathjax

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = Path(__file__).resolve().parent / "templates"
OUT = ROOT / "build" / "site"
COURSE_TITLE = "How autograd really works"
NOTEBOOK_LINK = re.compile(r'href="([^"#:]+\.ipynb)(#[^"]*)?"')


@dataclass(frozen=True)
class Page:
    """One page of the site: the notebook it shows, its file name in the site, and its title."""

    source: Path
    href: str
    title: str


def title_of(path: Path) -> str:
    """The first ``# `` heading of the notebook as plain text (its file name when it has none)."""
    for cell in nbformat.read(path, as_version=4).cells:
        heading = re.search(r"^# (.+)$", cell.source, re.MULTILINE)
        if cell.cell_type == "markdown" and heading:
            return heading.group(1).replace("`", "").replace("**", "").strip()
    return path.stem


def course_pages(root: Path = ROOT, solutions: bool = True) -> list[Page]:
    """The pages in reading order: every chapter, then (optionally) every solutions notebook."""
    chapters = [
        Page(p, f"{p.stem}.html", title_of(p)) for p in sorted(root.glob("notebooks/*.ipynb"))
    ]
    answers = [
        Page(p, f"solutions-{p.stem}.html", f"{title_of(p)} (solutions)")
        for p in sorted(root.glob("solutions/*.ipynb"))
    ]
    return chapters + (answers if solutions else [])


def exporter() -> HTMLExporter:
    """nbconvert's HTML exporter with the course's page template and the local MathJax."""
    return HTMLExporter(
        template_name="course_site",
        extra_template_basedirs=[str(TEMPLATES)],
        extra_template_paths=[str(TEMPLATES)],  # for course_common/macros.j2
        mathjax_url="_static/tex-svg-full.js",
    )


def link_pages(html: str, page: Page, pages: list[Page]) -> str:
    """Point links to the site's notebooks (``01_graph.ipynb#...``) at their pages instead."""
    hrefs = {p.source.resolve(): p.href for p in pages}

    def replace(match: re.Match) -> str:
        target = hrefs.get((page.source.parent / match.group(1)).resolve())
        return f'href="{target}{match.group(2) or ""}"' if target else match.group(0)

    return NOTEBOOK_LINK.sub(replace, html)


def index_notebook(pages: list[Page]) -> nbformat.NotebookNode:
    """A one-cell notebook that lists the pages: the site's contents page."""
    lines = [f"# {COURSE_TITLE}", "", "## Chapters", "", "<ul>"]
    for page in pages:
        if page.href.startswith("solutions-") and "## Solutions" not in lines:
            lines += ["</ul>", "", "## Solutions", "", "<ul>"]
        lines.append(f'<li><a href="{page.href}">{html.escape(page.title)}</a></li>')
    lines.append("</ul>")
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("\n".join(lines))])


def render(html_exporter: HTMLExporter, nb: nbformat.NotebookNode, title: str, site: dict) -> str:
    """One page of HTML for ``nb``, with ``site`` (previous, next) for its navigation bars."""
    resources = {"metadata": {"name": title}, "site": site}
    return html_exporter.from_notebook_node(nb, resources=resources)[0]


def build(out: Path = OUT, root: Path = ROOT, solutions: bool = True) -> list[Path]:
    """Write the site into ``out``: the index first, then one page per notebook; return them."""
    pages, html_exporter = course_pages(root, solutions), exporter()
    copy_mathjax(out / "_static")
    index = out / "index.html"
    first = {"previous": None, "next": pages[0] if pages else None}
    index.write_text(render(html_exporter, index_notebook(pages), COURSE_TITLE, first), "utf-8")
    written = [index]
    for i, page in enumerate(pages):
        site = {"previous": pages[i - 1] if i else None, "next": (pages[i + 1 :] or [None])[0]}
        nb = for_readers(nbformat.read(page.source, as_version=4))
        written.append(out / page.href)
        text = link_pages(render(html_exporter, nb, page.title, site), page, pages)
        written[-1].write_text(text, encoding="utf-8")
    return written


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point: build the site and print where its index is."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"output folder (default {OUT})")
    parser.add_argument("--no-solutions", action="store_true", help="leave out solutions/")
    args = parser.parse_args(argv)
    try:
        written = build(args.out, solutions=not args.no_solutions)
    except VendorError as error:
        print(f"site: {error}", file=sys.stderr)
        return 1
    print(f"{len(written) - 1} pages and an index: open {written[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
