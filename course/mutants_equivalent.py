"""The equivalent mutants of the build track and of the notebook exercises (`--notebooks`):
changes to an answer that cannot change what it does.

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
    ("2.8", "`variable.grad._version_counter[0] += 1` at `0`: constant - 1",
     "the version counter is a one-element list: [-1] is the same element as [0]"),
    ("3.3", "`self.grad_fn = None if is_output else tensor.grad_fn` at `None`: None made 0",
     "for the node's own output, unpack uses the node it is given, never the stored grad_fn; any "
     "value that is not the node (which would make a cycle) serves"),
    ("2.8", "`variable.grad = _record(CopyBackwards, grad._data.copy(), [N` at `None`: None made 0",
     "like None, the number 0 is not a tensor: both get the edge (None, 0) and need no gradient"),
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
    # The notebook exercises.
    ("0.2", "`s = 1.0 / (1.0 + np.exp(-x))` at `-x`: minus sign dropped",
     "sigmoid(-x) is 1 - sigmoid(x), and s * (1 - s) is the same for s and 1 - s"),
    ("2.5", "`gaps.append(float(np.abs(tensor.grad.numpy() - numerical).ma` at "
     "`tensor.grad.numpy() - numerical`: operands swapped",
     "the absolute value of a - b is that of b - a"),
    ("4.4", "`loss = ((features - running_mean) @ w2 - lib.tensor(y_np)).p` at "
     "`(features - running_mean) @ w2 - lib.tensor(y_np)`: operands swapped",
     "the difference is squared: (y - p)**2 is (p - y)**2, and so are its gradients"),
    ("5.4", "`rows = [ma.autograd.grad(g[i], x, retain_graph=True)[0] for ` at `0`: constant - 1",
     "autograd.grad of one input returns a one-element tuple, [-1] is [0]; and x is 1-D, so "
     "x.shape[-1] is x.shape[0]"),
    ("6.1", "`n = h.shape[-1]` at `-1`: minus sign dropped",
     "the state h is (batch, hidden), as the slices a[:, ...] require: shape[1] is shape[-1]"),
    ("7.2", "`loss = lib.nn.functional.cross_entropy(logits.reshape(-1, V)` at `1`: constant + 1",
     "the targets y are a numpy array, and numpy's reshape reads any negative size as 'the rest' "
     "(the same change in the logits' reshape, a tensor's, is caught)"),
    ("7.3", "`scores = logits[-1, 0].numpy().astype(np.float64)` at `0`: constant - 1",
     "the batch holds one sequence: column -1 is column 0"),
    ("7.4", "`target = lib.tensor(y.reshape(-1))` at `1`: constant + 1",
     "y is a numpy array, and numpy's reshape reads any negative size as 'the rest'"),
    ("8.2", "`loss = loss + smooth * (prediction - previous).pow(2).mean()` at "
     "`prediction - previous`: operands swapped",
     "the difference is squared: (previous - prediction)**2 is (prediction - previous)**2"),
]  # fmt: skip
