"""The site builds into a clean folder: what the previous build wrote goes, nothing else does.

No browser: a two-page course in a temporary folder, with a stand-in for MathJax.
"""

from pathlib import Path

import nbformat
import pytest

from course import site


def write_notebook(path: Path, title: str) -> None:
    """A small notebook: a heading and one code cell with its output."""
    cell = nbformat.v4.new_code_cell("print(1 + 1)")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="2\n")]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"# {title}"), cell])
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A course with one chapter and its solutions; MathJax replaced by a one-line file."""
    write_notebook(tmp_path / "course" / "notebooks" / "00_intro.ipynb", "Intro")
    write_notebook(tmp_path / "course" / "solutions" / "00_intro.ipynb", "Intro")

    def fake_mathjax(dest: Path) -> Path:
        dest.mkdir(parents=True, exist_ok=True)
        (dest / "tex-svg-full.js").write_text("// MathJax stand-in\n")
        return dest / "tex-svg-full.js"

    monkeypatch.setattr(site, "copy_mathjax", fake_mathjax)
    return tmp_path / "course"


def files_in(folder: Path) -> set[str]:
    """The files under `folder`, as paths relative to it."""
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


SITE = {"index.html", "00_intro.html", "_static/tex-svg-full.js", site.MANIFEST}


def test_a_build_without_solutions_removes_the_solutions_pages_of_the_last(course, tmp_path):
    out = tmp_path / "site"
    site.build(out, root=course)
    assert files_in(out) == SITE | {"solutions-00_intro.html"}
    site.build(out, root=course, solutions=False)
    assert files_in(out) == SITE


def test_files_the_site_did_not_write_are_kept(course, tmp_path):
    out = tmp_path / "site"
    site.build(out, root=course)
    (out / "notes.txt").write_text("mine")
    (out / "_static" / "custom.css").write_text("mine")
    site.build(out, root=course, solutions=False)
    assert files_in(out) == SITE | {"notes.txt", "_static/custom.css"}


def test_a_manifest_never_removes_files_outside_the_folder(course, tmp_path):
    out, outside = tmp_path / "site", tmp_path / "precious.html"
    outside.write_text("mine")
    site.build(out, root=course)
    with (out / site.MANIFEST).open("a") as manifest:
        manifest.write("../precious.html\n")
    site.build(out, root=course)
    assert outside.read_text() == "mine"


def test_a_folder_with_other_files_and_no_manifest_is_refused_untouched(course, tmp_path):
    out = tmp_path / "public_html"
    out.mkdir()
    (out / "index.html").write_text("my home page")
    with pytest.raises(site.SiteFolderError, match="holds files that no site build wrote"):
        site.build(out, root=course)
    assert files_in(out) == {"index.html"}


def test_the_default_folder_from_before_the_manifest_is_cleared(course, tmp_path, monkeypatch):
    """build/site as older builds left it (pages and _static/, no manifest) is the site's own."""
    out = tmp_path / "build" / "site"
    monkeypatch.setattr(site, "OUT", out)
    (out / "_static").mkdir(parents=True)
    (out / "_static" / "tex-svg-full.js").write_text("old")
    (out / "solutions-00_intro.html").write_text("old")
    site.build(out, root=course, solutions=False)
    assert files_in(out) == SITE


def test_the_command_says_why_it_refuses_in_one_line(course, tmp_path, capsys):
    out = tmp_path / "elsewhere"
    out.mkdir()
    (out / "thesis.pdf").write_text("mine")
    assert site.main(["--out", str(out)]) == 1
    error = capsys.readouterr().err
    assert error.startswith("site: ") and error.count("\n") == 1 and "thesis.pdf" in error


def test_the_reference_pages_of_docs_are_pages_with_their_links_rewritten(course, tmp_path):
    (course / "docs").mkdir()
    (course / "docs" / "library.md").write_text(
        "# The library\n\nSee [setup](setup.md#windows) and [chapter 00](../notebooks/00_intro.ipynb).\n"
    )
    (course / "docs" / "setup.md").write_text("# Setting up\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    out = tmp_path / "site"
    site.build(out, root=course, solutions=False)
    assert files_in(out) == SITE | {"docs-setup.html", "docs-library.html"}
    assert [page.href for page in site.course_pages(course, solutions=False)][1:] == [
        "docs-setup.html",
        "docs-library.html",
    ], "setup, then the library"
    library = (out / "docs-library.html").read_text()
    assert 'href="docs-setup.html#windows"' in library and 'href="00_intro.html"' in library
    assert "<table" in (out / "docs-setup.html").read_text(), "markdown tables become tables"
    index = (out / "index.html").read_text()
    assert index.index("Reference") < index.index('href="docs-setup.html"')
