"""repr(tensor) in PyTorch's format: tensor([1.0000, 2.5000], grad_fn=<MulBackward0>)."""

import math

import numpy as np

LINEWIDTH = 80
THRESHOLD = 1000
EDGEITEMS = 3
PRECISION = 4


class _Formatter:
    """Chooses one format for all elements (integer-like, fixed or scientific), as PyTorch does."""

    def __init__(self, values):
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        if not self.floating:
            self.width = max((len(str(v)) for v in values.tolist()), default=1)
            return
        finite = values[np.isfinite(values)]
        nonzero = np.abs(finite[finite != 0]).astype(np.float64)
        self.int_mode = bool(np.all(np.ceil(finite) == finite))
        if nonzero.size:
            high, low = nonzero.max(), nonzero.min()
            if self.int_mode:
                self.sci_mode = high / low > 1000.0 or high > 1.0e8
            else:
                self.sci_mode = high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4
        self.width = max((len(self._plain(v)) for v in values.tolist()), default=1)

    def _plain(self, v):
        if not self.floating:
            return str(v)
        if math.isnan(v) or math.isinf(v):
            return str(v).replace("inf", "inf")
        if self.sci_mode:
            return f"{v:.{PRECISION}e}"
        if self.int_mode:
            return f"{v:.0f}."
        return f"{v:.{PRECISION}f}"

    def format(self, v):
        """One element, right-aligned to the common width."""
        return self._plain(v).rjust(self.width)


def _summarized(values):
    return values.size > THRESHOLD


def _edge_values(array, summarize):
    if not summarize or array.ndim == 0:
        return array.reshape(-1)
    if array.ndim == 1:
        if array.shape[0] > 2 * EDGEITEMS:
            return np.concatenate([array[:EDGEITEMS], array[-EDGEITEMS:]])
        return array
    parts = range(array.shape[0])
    if array.shape[0] > 2 * EDGEITEMS:
        parts = [*range(EDGEITEMS), *range(array.shape[0] - EDGEITEMS, array.shape[0])]
    return np.concatenate([_edge_values(array[i], summarize) for i in parts])


def _format_array(array, fmt, indent, summarize):
    if array.ndim == 0:
        return fmt.format(array.item())
    if array.ndim == 1:
        items = [fmt.format(v) for v in array.tolist()]
        if summarize and len(items) > 2 * EDGEITEMS:
            items = items[:EDGEITEMS] + ["..."] + items[-EDGEITEMS:]
        per_line = max(1, (LINEWIDTH - indent) // (fmt.width + 2))
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = range(array.shape[0])
    if summarize and array.shape[0] > 2 * EDGEITEMS:
        rows = [*range(EDGEITEMS), None, *range(array.shape[0] - EDGEITEMS, array.shape[0])]
    parts = [
        "..." if i is None else _format_array(array[i], fmt, indent + 1, summarize) for i in rows
    ]
    separator = "," + "\n" * (array.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(parts) + "]"


def tensor_repr(t):
    """The string PyTorch prints for the same tensor (mini_autograd dtypes in place of torch's)."""
    array = t._data
    prefix = "tensor("
    suffixes = []
    if array.size == 0:
        body = "[]"
        if array.shape != (0,):
            suffixes.append(f"size={tuple(array.shape)}")
    else:
        summarize = _summarized(array)
        fmt = _Formatter(_edge_values(array, summarize))
        body = _format_array(array, fmt, len(prefix), summarize)
    if array.dtype.name not in ("float32", "int64", "bool"):
        suffixes.append(f"dtype={t.dtype!r}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return prefix + ", ".join([body, *suffixes]) + ")"
