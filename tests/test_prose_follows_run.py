"""Prose follows the run: every figure or phrase a markdown cell quotes from an output (marked
``<span class="from-run" data-cell="...">``) is in the stored outputs of the cell it names, a
stale quotation is caught with a message that says where, and ``make notebooks`` fails on one."""

import re
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from course import execute, site, slides
from course.quotations import QUOTATION, output_text, quotation, stale_quotations

ROOT = Path(__file__).resolve().parent.parent
STORED = sorted(
    p for folder in ("notebooks", "exercises", "solutions") for p in (ROOT / folder).glob("*.ipynb")
)
CAPSTONE = ROOT / "notebooks" / "07_capstone.ipynb"


def outputs_of(path: Path) -> nbformat.NotebookNode:
    """The notebook whose outputs ``path``'s prose quotes: its solutions, for an exercise."""
    source = ROOT / "solutions" / path.name if path.parent.name == "exercises" else path
    return nbformat.read(source, as_version=4)


@pytest.mark.parametrize("path", STORED, ids=[str(p.relative_to(ROOT)) for p in STORED])
def test_every_stored_quotation_is_in_the_outputs_it_names(path):
    problems = stale_quotations(nbformat.read(path, as_version=4), outputs_of(path))
    assert not problems, f"{path.relative_to(ROOT)}:\n" + "\n".join(problems)


def printed(text: str, tags=()) -> nbformat.NotebookNode:
    cell = new_code_cell("...", metadata={"tags": list(tags)} if tags else {})
    cell.outputs = [new_output("stream", name="stdout", text=text)]
    return cell


def notebook(prose: str, *code: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A normalised notebook: the code cells (cell-00, ...), then one markdown cell of prose."""
    return execute.normalise(new_notebook(cells=[*code, new_markdown_cell(prose)]))


def test_a_quotation_that_the_output_holds_passes():
    table = printed("epoch 60:  0.367  0.320\nthe engines agree: True\n")
    wrapped = quotation("cell-00", "the engines\nagree: True")  # a line break in the prose
    prose = f"In epoch 60 the loss is {quotation('cell-00', '0.367')}, and {wrapped}."
    assert stale_quotations(notebook(prose, table)) == []


def test_a_changed_output_is_caught_naming_the_cell_the_quotation_and_where_it_looked():
    prose = f"The loss is {quotation('cell-00', '0.367')}."
    assert stale_quotations(notebook(prose, printed("loss 0.294\n"))) == [
        "cell-01: the quotation '0.367' is not in the outputs of cell-00, which show: 'loss 0.294'"
    ]


@pytest.mark.parametrize(
    "output, quoted",
    [("0.3671", "0.367"), ("10.367", "0.367"), ("-0.367", "0.367"), ("epoch 210", "epoch 21")],
)
def test_a_quotation_is_not_found_inside_a_longer_number(output, quoted):
    problems = stale_quotations(notebook(quotation("cell-00", quoted), printed(output)))
    assert len(problems) == 1 and "is not in the outputs of cell-00" in problems[0]


def test_an_error_message_can_be_quoted():
    cell = new_code_cell("...", metadata={"tags": ["raises-exception"]})
    cell.outputs = [new_output("error", ename="RuntimeError", evalue="Can't call numpy()")]
    prose = quotation("cell-00", "RuntimeError: Can&#x27;t call numpy()")
    assert stale_quotations(notebook(prose, cell)) == []


@pytest.mark.parametrize("tag", ["nbval-ignore-output", "nbval-skip"])
def test_an_output_the_tests_do_not_compare_cannot_be_quoted(tag):
    problems = stale_quotations(notebook(quotation("cell-00", "3.2x"), printed("3.2x", [tag])))
    assert problems == [
        f"cell-01: the quotation '3.2x' quotes cell-00, whose output is not compared ({tag}): "
        "say what to look for"
    ]


def test_a_quotation_of_a_missing_cell_or_written_another_way_is_caught():
    prose = f'{quotation("cell-07", "1")} and <span data-cell="cell-00" class="from-run">1</span>'
    assert stale_quotations(notebook(prose, printed("1"))) == [
        f"cell-01: write each quotation as {quotation('cell-NN', '...')}",
        "cell-01: the quotation '1' names cell-07, which is not a code cell of this notebook",
    ]


def test_renumbering_the_cells_renames_the_cell_a_quotation_names():
    nb = notebook(f"It prints {quotation('cell-00', '42')}.", printed("42"))
    nb.cells.insert(0, new_code_cell("x = 1"))  # a new cell, with a random id, before the others
    execute.normalise(nb)
    assert nb.cells[2].source == f"It prints {quotation('cell-01', '42')}."
    assert stale_quotations(nb) == []


def first_quotation(nb: nbformat.NotebookNode) -> tuple[nbformat.NotebookNode, re.Match]:
    """The first markdown cell of ``nb`` that quotes an output, and its first quotation."""
    for cell in nb.cells:
        if cell.cell_type == "markdown" and (match := QUOTATION.search(cell.source)):
            return cell, match
    raise AssertionError("the notebook quotes no output")


def test_a_changed_output_in_the_stored_capstone_is_caught():
    nb = nbformat.read(CAPSTONE, as_version=4)
    prose, match = first_quotation(nb)
    quoted = next(c for c in nb.cells if c.id == match[1])
    for output in quoted.outputs:  # a re-run that prints another figure
        if "text" in output:
            output.text = output.text.replace(match[2], "<another figure>")
        elif "text/plain" in output.get("data", {}):
            output.data["text/plain"] = output.data["text/plain"].replace(match[2], "<another>")
    problems = stale_quotations(nb)  # one line per quotation of that cell
    assert problems and all(
        f"is not in the outputs of {match[1]}, which show:" in p for p in problems
    )
    assert problems[0].startswith(f"{prose.id}: the quotation {match[2]!r} is not in")


def test_a_changed_quotation_in_the_stored_capstone_is_caught():
    nb = nbformat.read(CAPSTONE, as_version=4)
    prose, match = first_quotation(nb)
    prose.source = prose.source.replace(match[0], quotation(match[1], "123456789"), 1)
    shown = output_text(next(c for c in nb.cells if c.id == match[1]))[:300]
    assert stale_quotations(nb) == [
        f"{prose.id}: the quotation '123456789' is not in the outputs of {match[1]}, "
        f"which show: {shown!r}"
    ]


def test_executing_a_notebook_whose_prose_no_longer_follows_fails_and_says_where(tmp_path, capsys):
    path = tmp_path / "stale.ipynb"
    prose = f"It prints {quotation('cell-00', '41')} and {quotation('cell-00', 'done')}."
    path.write_text(execute.dumps(notebook(prose, new_code_cell("print(6 * 7, 'done')"))))
    assert execute.main([str(path)]) == 1
    assert (
        f"{path}: cell-01: the quotation '41' is not in the outputs of cell-00, which show: '42 done'"
        in capsys.readouterr().err
    )
    assert (
        output_text(nbformat.read(path, as_version=4).cells[0]) == "42 done"
    )  # written all the same


@pytest.mark.parametrize("make_exporter", [site.exporter, slides.exporter])
def test_a_quotation_renders_as_its_text_on_the_site_and_in_the_slides(make_exporter):
    nb = notebook(
        f"The loss is {quotation('cell-00', '0.367')} in the *last* epoch.", printed("0.367")
    )
    page, _ = make_exporter().from_notebook_node(nb, resources={"metadata": {"name": "t"}})
    text = re.sub(r"<[^>]+>", "", page)
    assert "The loss is 0.367 in the last epoch." in text
