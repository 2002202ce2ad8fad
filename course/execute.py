"""Execute notebooks in place and normalise them so that stored outputs are reproducible.

Usage: ``python -m course.execute [NOTEBOOK ...]`` (default: every ``notebooks/*.ipynb``);
``--normalise-only`` rewrites the stored notebooks normalised without executing them (a second,
for what a front end added: a Python version, cell metadata).

Normalising means: fixed notebook metadata (no kernel version), cell metadata reduced to
``tags`` and ``slideshow`` (the slide type, for the slide decks), consecutive printed outputs
merged, cell ids ``cell-00``, ``cell-01``, ... and execution counts 1, 2, 3, ... in
cell order, so that re-running an unchanged notebook leaves the file byte for byte equal
whenever its outputs are. A quotation of an output in markdown (see :mod:`course.quotations`)
follows its cell's new id; after executing, a quotation the outputs no longer hold is reported
and the command exits with status 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from course.quotations import rename_cells, stale_quotations

ROOT = Path(__file__).resolve().parent.parent
KERNEL_NAME = "python3"
NOTEBOOK_METADATA = {
    "kernelspec": {
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
        "name": KERNEL_NAME,
    },
    # What an IPython kernel reports, and JupyterLab writes into the file when it connects,
    # less the Python version, which depends on the machine (course/lab_settings/save_hook.py
    # keeps it out of the file when `make lab` saves).
    "language_info": {
        "codemirror_mode": {"name": "ipython", "version": 3},
        "file_extension": ".py",
        "mimetype": "text/x-python",
        "name": "python",
        "nbconvert_exporter": "python",
        "pygments_lexer": "ipython3",
    },
}
CELL_TIMEOUT_S = 600


def normalise(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Fix metadata, cell ids and execution counts of ``nb`` in place and return it."""
    nb.nbformat, nb.nbformat_minor = 4, 5
    nb.metadata = nbformat.from_dict(NOTEBOOK_METADATA)
    count = 0
    new_ids = {cell.get("id"): f"cell-{index:02d}" for index, cell in enumerate(nb.cells)}
    for index, cell in enumerate(nb.cells):
        cell.id = f"cell-{index:02d}"
        if cell.cell_type == "markdown":
            cell.source = rename_cells(cell.source, new_ids)
        kept = {key: cell.metadata[key] for key in ("slideshow", "tags") if cell.metadata.get(key)}
        cell.metadata = nbformat.from_dict(kept)
        if cell.cell_type != "code":
            continue
        executed = bool(cell.outputs) or cell.execution_count is not None
        count += 1
        cell.execution_count = count if executed else None
        cell.outputs = _merge_streams(cell.outputs)
        for output in cell.outputs:
            if output.output_type == "execute_result":
                output.execution_count = cell.execution_count
    return nb


def _merge_streams(outputs: list) -> list:
    """Join consecutive printed outputs of one stream (the kernel splits them at random)."""
    merged: list = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (
            previous is not None
            and output.output_type == previous.output_type == "stream"
            and output.name == previous.name
        ):
            previous.text += output.text
        else:
            merged.append(output)
    return merged


def execute(nb: nbformat.NotebookNode, cwd: Path) -> nbformat.NotebookNode:
    """Run every code cell of ``nb`` in a fresh kernel started in ``cwd``; return it normalised.

    A cell that raises stops the run with nbclient's ``CellExecutionError`` unless the cell
    carries the ``raises-exception`` tag.
    """
    client = NotebookClient(
        nb,
        kernel_name=KERNEL_NAME,
        timeout=CELL_TIMEOUT_S,
        record_timing=False,
        resources={"metadata": {"path": str(cwd)}},
    )
    client.execute()
    return normalise(nb)


def dumps(nb: nbformat.NotebookNode) -> str:
    """Serialise ``nb`` the way every notebook in this repository is stored."""
    return nbformat.writes(nb) + "\n"


def execute_file(path: Path) -> None:
    """Execute the notebook at ``path`` in its own folder and rewrite it normalised."""
    nb = nbformat.read(path, as_version=4)
    path.write_text(dumps(execute(nb, path.parent)), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point: execute the given notebooks (default ``notebooks/*.ipynb``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument(
        "--normalise-only", action="store_true", help="normalise the stored notebooks, run nothing"
    )
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    for path in paths:
        if args.normalise_only:
            nb = normalise(nbformat.read(path, as_version=4))
            path.write_text(dumps(nb), encoding="utf-8")
            continue
        print(f"executing {path}", flush=True)
        execute_file(path)
    stale = [
        f"{p}: {line}" for p in paths for line in stale_quotations(nbformat.read(p, as_version=4))
    ]
    for line in stale:
        print(line, file=sys.stderr)
    if stale:
        print(
            "quoted outputs changed: update each quotation, or let its cell print it",
            file=sys.stderr,
        )
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
