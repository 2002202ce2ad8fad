"""repr(tensor) in PyTorch's format: tensor([1.0000, 2.5000], grad_fn=<MulBackward0>)."""

import math

import numpy as np

from . import dtypes


class _PrintOptions:
    """torch's print options, changed with set_printoptions."""

    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


OPTIONS = _PrintOptions()
_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(
    precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None
):
    """How tensors print: digits after the point, when to summarise with ..., line width."""
    if profile is not None:
        for name, value in _PROFILES[profile].items():
            setattr(OPTIONS, name, value)
    given = {"precision": precision, "threshold": threshold, "edgeitems": edgeitems}
    given["linewidth"] = linewidth
    for name, value in given.items():
        if value is not None:
            setattr(OPTIONS, name, value)
    OPTIONS.sci_mode = sci_mode


def get_printoptions():
    """The current print options, as a dict."""
    names = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")
    return {name: getattr(OPTIONS, name) for name in names}


class _Formatter:
    """Chooses one format for all elements (integer-like, fixed or scientific), as PyTorch does:
    from the finite nonzero values only, so zeros, nan and inf do not widen the columns."""

    def __init__(self, values):
        self.floating = values.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.width = True, False, 1
        if not self.floating:
            self.width = max((len(str(v)) for v in values.tolist()), default=1)
            return
        shown = values[np.isfinite(values) & (values != 0)]
        if not shown.size:
            return
        magnitudes = np.abs(shown).astype(np.float64)
        high, low = magnitudes.max(), magnitudes.min()
        self.int_mode = bool(np.all(np.ceil(shown) == shown))
        self.sci_mode = OPTIONS.sci_mode
        if self.sci_mode is None:
            self.sci_mode = bool(high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4)
        self.width = max(len(self._plain(v)) for v in shown.tolist())

    def _plain(self, v):
        if not self.floating:
            return str(v)
        if math.isnan(v) or math.isinf(v):
            return f"{v:.0f}"  # nan, inf, -inf
        if self.sci_mode:
            return f"{v:.{OPTIONS.precision}e}"
        if self.int_mode:
            return f"{v:.0f}."
        return f"{v:.{OPTIONS.precision}f}"

    def format(self, v):
        """One element, right-aligned to the common width."""
        return self._plain(v).rjust(self.width)


def _summarized(values):
    return values.size > OPTIONS.threshold


def _edge_values(array, summarize):
    if not summarize or array.ndim == 0:
        return array.reshape(-1)
    if array.ndim == 1:
        if array.shape[0] > 2 * OPTIONS.edgeitems:
            return np.concatenate([array[: OPTIONS.edgeitems], array[-OPTIONS.edgeitems :]])
        return array
    parts = range(array.shape[0])
    if array.shape[0] > 2 * OPTIONS.edgeitems:
        parts = [
            *range(OPTIONS.edgeitems),
            *range(array.shape[0] - OPTIONS.edgeitems, array.shape[0]),
        ]
    return np.concatenate([_edge_values(array[i], summarize) for i in parts])


def _format_array(array, fmt, indent, summarize):
    if array.ndim == 0:
        return fmt.format(array.item())
    if array.ndim == 1:
        items = [fmt.format(v) for v in array.tolist()]
        if summarize and len(items) > 2 * OPTIONS.edgeitems:
            items = items[: OPTIONS.edgeitems] + [" ..."] + items[-OPTIONS.edgeitems :]
        per_line = max(1, (OPTIONS.linewidth - indent) // (fmt.width + 2))
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = range(array.shape[0])
    if summarize and array.shape[0] > 2 * OPTIONS.edgeitems:
        rows = [
            *range(OPTIONS.edgeitems),
            None,
            *range(array.shape[0] - OPTIONS.edgeitems, array.shape[0]),
        ]
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
    default_float = dtypes.get_default_dtype().name
    # the values show an integer or bool dtype, but an empty tensor has no values to show it
    implied = (default_float, "int64", "bool") if array.size else (default_float,)
    if array.dtype.name not in implied:
        suffixes.append(f"dtype={t.dtype!r}")
    try:
        node = t.grad_fn
    except RuntimeError:  # a no_grad view whose base changed in place: PyTorch prints this
        suffixes.append("grad_fn=<Invalid>")
    else:
        if node is not None:
            suffixes.append(f"grad_fn=<{type(node).__name__}>")  # PyTorch: the class name
        elif t.requires_grad:
            suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, len(prefix)) + ")"


def _add_suffixes(text, suffixes, indent):
    """text, then each suffix after ', ', or on a line of its own when it would not fit."""
    parts, last_line = [text], len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > OPTIONS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line += len(suffix) + 2
    return "".join(parts)
