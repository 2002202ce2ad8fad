"""The build track's equivalent mutants: changes to an answer that cannot change what it does.

`course/mutants.py` counts a surviving mutant as equivalent when its piece and its change (the
code it changes, as `ast.unparse` writes it, and the kind of change) are listed here, with the
reason no program can tell it from the answer.
"""

EQUIVALENT: list[tuple[str, str, str]] = [
    ("2.1", "`if not dims: return grad`: statement deleted",
     "summing over no dimension and reshaping to the same shape gives the same values"),
    ("2.1", "`return grad.sum(dim=tuple(dims), keepdim=True).reshape(shape` at `True`: boolean flipped",
     "the reshape to the input's shape that follows restores the dimensions keepdim would keep"),
    ("3.5", "`if self.version_counter[0] != self.version:` at `0`: constant - 1",
     "the version counter is a one-element list: [-1] is the same element as [0]"),
    ("3.5", "`raise modified_error(self.value, producer, self.version_coun` at `0`: constant - 1",
     "the version counter is a one-element list: [-1] is the same element as [0]"),
    ("3.5", "`self._version_counter[0] += 1` at `0`: constant - 1",
     "the version counter is a one-element list: [-1] is the same element as [0]"),
    *(
        ("5.6", change, "the walk may reach a node again: `leads` is a set, so the nodes found "
         "are the same; only the work grows (exponentially on a ladder of diamonds)")
        for change in [
            "`seen.add(root)`: statement deleted",
            "`seen.add(child[0])`: statement deleted",
            "`if child[0] is not None and child[0] not in seen:` at `0`: constant + 1",
            "`if child[0] is not None and child[0] not in seen:` at `0`: constant - 1",
            "`seen.add(child[0])` at `0`: constant + 1",
            "`seen.add(child[0])` at `0`: constant - 1",
        ]
    ),
    ("4.5", "`return None if capture is None else capture.grads` at `None`: None made 0",
     "only backward runs without a capture, and backward ignores what run_backward returns"),
]  # fmt: skip
