"""Build the executed course as a static web site: ``python -m course.site [--out DIR]``.

One HTML page per chapter and per solutions notebook, made from the outputs stored in the
notebooks (graph pictures as inline SVG), one per reference page in ``docs/`` (markdown), an
``index.html`` that lists them, and previous / contents / next links on every page. Instructor notes are left out: they belong to the decks.
MathJax is copied into the folder (fetched once with npm) and nothing is loaded from
elsewhere, so the pages read offline, straight from the disk.

Each build starts clean: it first removes what the previous build wrote (the files listed in
the folder's ``.course-site`` manifest), so a build ``--no-solutions`` after a full one leaves
no solutions page behind. Files the site did not write are never removed; a folder that holds
such files and no manifest is refused.
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
NOTEBOOK_LINK = re.compile(r'href="([^"#:]+\.(?:ipynb|md))(#[^"]*)?"')
DOCS_ORDER = ("setup", "library", "course")  # docs/*.md in this order, any others after them
MANIFEST = ".course-site"  # in the output folder: the files the last build wrote, one per line


class SiteFolderError(RuntimeError):
    """The output folder holds files that no site build wrote, so it is not cleared."""


@dataclass(frozen=True)
class Page:
    """One page of the site: the notebook it shows, its file name in the site, and its title."""

    source: Path
    href: str
    title: str


def read_page(path: Path) -> nbformat.NotebookNode:
    """The notebook at ``path``, or a markdown file as a notebook of one markdown cell."""
    if path.suffix == ".md":
        text = path.read_text("utf-8")
        return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(text)])
    return nbformat.read(path, as_version=4)


def title_of(path: Path) -> str:
    """The first ``# `` heading of the page as plain text (its file name when it has none)."""
    for cell in read_page(path).cells:
        heading = re.search(r"^# (.+)$", cell.source, re.MULTILINE)
        if cell.cell_type == "markdown" and heading:
            return heading.group(1).replace("`", "").replace("**", "").strip()
    return path.stem


def course_pages(root: Path = ROOT, solutions: bool = True) -> list[Page]:
    """The pages in reading order: every chapter, then (optionally) every solutions notebook,
    then the reference pages of ``docs/``."""
    chapters = [
        Page(p, f"{p.stem}.html", title_of(p)) for p in sorted(root.glob("notebooks/*.ipynb"))
    ]
    answers = [
        Page(p, f"solutions-{p.stem}.html", f"{title_of(p)} (solutions)")
        for p in sorted(root.glob("solutions/*.ipynb"))
    ]
    rank = {name: i for i, name in enumerate(DOCS_ORDER)}
    docs = sorted(root.glob("docs/*.md"), key=lambda p: (rank.get(p.stem, len(rank)), p.stem))
    reference = [Page(p, f"docs-{p.stem}.html", title_of(p)) for p in docs]
    return chapters + (answers if solutions else []) + reference


def exporter() -> HTMLExporter:
    """nbconvert's HTML exporter with the course's page template and the local MathJax."""
    return HTMLExporter(
        template_name="course_site",
        extra_template_basedirs=[str(TEMPLATES)],
        extra_template_paths=[str(TEMPLATES)],  # for course_common/macros.j2
        mathjax_url="_static/tex-svg-full.js",
    )


def link_pages(html: str, page: Page, pages: list[Page]) -> str:
    """Point links to the site's notebooks and reference pages (``01_graph.ipynb#...``,
    ``library.md``) at their pages instead."""
    hrefs = {p.source.resolve(): p.href for p in pages}

    def replace(match: re.Match) -> str:
        target = hrefs.get((page.source.parent / match.group(1)).resolve())
        return f'href="{target}{match.group(2) or ""}"' if target else match.group(0)

    return NOTEBOOK_LINK.sub(replace, html)


def index_notebook(pages: list[Page]) -> nbformat.NotebookNode:
    """A one-cell notebook that lists the pages: the site's contents page."""
    lines = [f"# {COURSE_TITLE}", "", "## Chapters", "", "<ul>"]
    for page in pages:
        for prefix, heading in (("solutions-", "## Solutions"), ("docs-", "## Reference")):
            if page.href.startswith(prefix) and heading not in lines:
                lines += ["</ul>", "", heading, "", "<ul>"]
        lines.append(f'<li><a href="{page.href}">{html.escape(page.title)}</a></li>')
    lines.append("</ul>")
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("\n".join(lines))])


def render(html_exporter: HTMLExporter, nb: nbformat.NotebookNode, title: str, site: dict) -> str:
    """One page of HTML for ``nb``, with ``site`` (previous, next) for its navigation bars."""
    resources = {"metadata": {"name": title}, "site": site}
    return html_exporter.from_notebook_node(nb, resources=resources)[0]


def is_site_file(path: Path) -> bool:
    """True for what a build writes at the top of its folder: an HTML page or ``_static/``."""
    return (path.is_file() and path.suffix == ".html") or (path.is_dir() and path.name == "_static")


def listed_in_manifest(out: Path) -> list[Path]:
    """The manifest of ``out`` and the files it lists (only those inside ``out``)."""
    manifest = out / MANIFEST
    lines = manifest.read_text("utf-8").splitlines()
    names = [line for line in lines if line and not line.startswith("#")]
    inside = [out / name for name in names if (out / name).resolve().is_relative_to(out.resolve())]
    return [manifest, *inside]


def previous_build(out: Path) -> list[Path]:
    """The files the previous build wrote into ``out``, read from its manifest.

    Without a manifest, the folder must be empty, or be the default folder holding only pages
    and ``_static/`` (a build from before there was a manifest); anything else is refused.
    """
    if (out / MANIFEST).is_file():
        return listed_in_manifest(out)
    entries = sorted(out.iterdir()) if out.is_dir() else []
    if not entries:
        return []
    if out.resolve() == OUT.resolve() and all(map(is_site_file, entries)):
        return [p for entry in entries for p in ([entry] if entry.is_file() else entry.rglob("*"))]
    shown = ", ".join(p.name for p in entries[:3]) + (", ..." if len(entries) > 3 else "")
    raise SiteFolderError(
        f"{out} holds files that no site build wrote ({shown}): "
        "build into a new or empty folder (--out), or empty this one yourself"
    )


def clear_previous_build(out: Path) -> None:
    """Remove the files the previous build wrote into ``out``, then the folders they emptied."""
    files = [p for p in previous_build(out) if p.is_file() or p.is_symlink()]
    for path in files:
        path.unlink()
    folders = {folder for path in files for folder in path.parents if out in folder.parents}
    for folder in sorted(folders, key=lambda f: len(f.parts), reverse=True):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


def write_manifest(out: Path, written: list[Path]) -> None:
    """List the files a build wrote in ``out``/.course-site, for the next build to remove."""
    names = sorted(p.relative_to(out).as_posix() for p in written)
    header = "# written by python -m course.site: the files of this build, removed by the next\n"
    (out / MANIFEST).write_text(header + "\n".join(names) + "\n", encoding="utf-8")


def build(out: Path = OUT, root: Path = ROOT, solutions: bool = True) -> list[Path]:
    """Write the site into ``out`` (cleared first): the index, then a page per notebook; return them."""
    clear_previous_build(out)
    pages, html_exporter = course_pages(root, solutions), exporter()
    mathjax = copy_mathjax(out / "_static")
    index = out / "index.html"
    first = {"previous": None, "next": pages[0] if pages else None}
    index.write_text(render(html_exporter, index_notebook(pages), COURSE_TITLE, first), "utf-8")
    written = [index]
    for i, page in enumerate(pages):
        site = {"previous": pages[i - 1] if i else None, "next": (pages[i + 1 :] or [None])[0]}
        nb = for_readers(read_page(page.source))
        written.append(out / page.href)
        text = link_pages(render(html_exporter, nb, page.title, site), page, pages)
        written[-1].write_text(text, encoding="utf-8")
    write_manifest(out, [*written, mathjax])
    return written


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point: build the site and print where its index is."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"output folder (default {OUT})")
    parser.add_argument("--no-solutions", action="store_true", help="leave out solutions/")
    args = parser.parse_args(argv)
    try:
        written = build(args.out, solutions=not args.no_solutions)
    except (VendorError, SiteFolderError) as error:
        print(f"site: {error}", file=sys.stderr)
        return 1
    print(f"{len(written) - 1} pages and an index: open {written[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
