"""The pre-save hook `make lab` gives Jupyter's server: a saved notebook keeps the course's
``language_info``.

When JupyterLab connects a notebook to its kernel, it copies the kernel's ``language_info``
into the notebook, the Python version included, and marks the notebook changed; autosave then
writes it. The course stores every field but the version (``course.execute.NOTEBOOK_METADATA``),
so that a notebook one only opens and closes is saved byte for byte as it was, whatever the
Python. Everything else a learner changes (cells, outputs, another kernel) is saved as usual.
"""

import copy

from course.execute import NOTEBOOK_METADATA


def keep_language_info(model: dict, **_) -> None:
    """Give a Python notebook about to be saved the course's ``language_info`` (no version)."""
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    metadata = model["content"].setdefault("metadata", {})
    if metadata.get("language_info", {}).get("name") == "python":
        metadata["language_info"] = copy.deepcopy(NOTEBOOK_METADATA["language_info"])
