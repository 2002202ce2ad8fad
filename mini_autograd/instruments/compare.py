"""Side by side with PyTorch: run one function with mini_autograd and with torch, and compare.

    def model(lib, x, w):
        return (x @ w).tanh().sum()

    compare(model, x_array, w_array)           # cpu, and cuda where there is one
    compare(model, x_array, w_array).ok        # True when every device that ran agrees

`fn(lib, *tensors)` is written once against the API both libraries share. Per device the report
gives the forward difference, the difference of every input's gradient, whether the graphs have
the same node names and the same saved tensors, and whether both raise the same error.

The learner's own engine joins as a third library with `engines=`: each module given is run
like mini_autograd (numpy, no device) and compared with torch the same way, check by check,
and its lines are labelled with the module's name:

    import my_autograd
    compare(model, x_array, w_array, devices=("cpu",), engines=(my_autograd,))
    # compare model: mini_autograd, my_autograd vs torch
    # cpu, mini_autograd: agree
    #   forward        max |diff| < 1e-05
    #   ...
    # cpu, my_autograd: MISMATCH in grad w
    #   ...

Without `engines` the report is exactly what it always was (no library labels).

In stored notebooks (compared by nbval) use `compare(..., devices=("cpu",))`: its text is the
same on every machine. Show CUDA in a separate cell tagged `nbval-ignore-output`, since on a
machine without CUDA that cell prints the one line "cuda: not available on this machine".
"""

import html
import inspect
from dataclasses import dataclass

import numpy as np

from .graph_walk import graph_nodes
from .memory import as_numpy, node_saved


@dataclass
class Run:
    """What one library did with `fn`: outputs, input gradients, graph, error, CUDA memory."""

    outputs: list | None = None  # numpy arrays
    grads: list | None = None  # one numpy array (or None) per input that requires grad
    names: list | None = None  # node names along the graph, in graph_nodes order
    saved: list | None = None  # per node, the set of attributes that saved a tensor
    error: tuple | None = None  # (type name, message)
    memory: tuple | None = None  # torch.cuda.memory_allocated before and after backward
    library: str = "mini_autograd"  # the name the report gives this run


@dataclass
class Check:
    """One line of the report: what is checked, the result as stable text, and whether it agrees."""

    name: str
    text: str
    ok: bool = True


@dataclass
class DeviceReport:
    """The checks for one device (empty when the device is not available).

    `library` is the engine compared with torch there; None (unlabelled) means mini_autograd
    when it is the only one, or a device that is not available.
    """

    device: str
    available: bool
    checks: list
    library: str | None = None

    @property
    def ok(self):
        """True when every check agrees (a missing device has nothing to disagree about)."""
        return all(check.ok for check in self.checks)

    def lines(self):
        """The report for this device as text lines."""
        if not self.available:
            return [f"{self.device}: not available on this machine"]
        failed = [check.name for check in self.checks if not check.ok]
        verdict = f"MISMATCH in {', '.join(failed)}" if failed else "agree"
        where = self.device if self.library is None else f"{self.device}, {self.library}"
        lines = [f"{where}: {verdict}"]
        for check in self.checks:
            flag = "" if check.ok else "  <- MISMATCH"
            lines.append(f"  {check.name:<14} {check.text}{flag}")
        return lines


class Comparison:
    """The result of `compare`: one DeviceReport per device (and library); text, or HTML in Jupyter.

    `libraries` names the engines compared with torch, mini_autograd first.
    """

    def __init__(self, title, reports, libraries=("mini_autograd",)):
        self.title = title
        self.reports = reports
        self.libraries = tuple(libraries)

    @property
    def ok(self):
        """True when every device that ran agrees, for every library compared."""
        return all(report.ok for report in self.reports)

    def _labelled(self):
        return len(self.libraries) > 1

    def _versus(self):
        return f"{', '.join(self.libraries)} vs torch"

    def __repr__(self):
        lines = [f"compare {self.title}: {self._versus()}"]
        for report in self.reports:
            lines.extend(report.lines())
        return "\n".join(lines)

    def _repr_html_(self):
        labelled = self._labelled()
        rows = []
        for report in self.reports:
            library = [report.library or ""] if labelled else []
            if not report.available:
                cells = [report.device, *library, "", "not available on this machine"]
                rows.append(_html_row(cells, True))
            for check in report.checks:
                rows.append(_html_row([report.device, *library, check.name, check.text], check.ok))
        header = ["device", *(["library"] if labelled else []), "check", "result"]
        return (
            f"<p><b>compare {html.escape(self.title)}</b>: {html.escape(self._versus())}</p>"
            f"<table><tr>{''.join(f'<th>{h}</th>' for h in header)}</tr>"
            f"{''.join(rows)}</table>"
        )


def _html_row(cells, ok):
    """One table row; the last cell is the result, marked when it disagrees."""
    style = "" if ok else ' style="color:#b00020;font-weight:bold"'
    *labels, text = cells
    text = html.escape(text) + ("" if ok else " (mismatch)")
    return f"<tr{style}>{''.join(f'<td>{html.escape(c)}</td>' for c in labels)}<td>{text}</td></tr>"


def compare(
    fn, *inputs, devices=("cpu", "cuda"), requires_grad=None, atol=1e-5, rtol=1e-4, engines=()
):
    """Run `fn(lib, *tensors)` with mini_autograd and with torch on each device, and compare.

    `engines` are more libraries run like mini_autograd (the learner's `my_autograd` module) and
    each compared with torch on every device; the report then labels every block with the name
    of the library it compares (the module's `__name__`).
    """
    import torch

    import mini_autograd

    arrays = [np.asarray(a) for a in inputs]
    if requires_grad is None:
        requires_grad = [a.dtype.kind == "f" for a in arrays]
    if len(requires_grad) != len(arrays):
        raise ValueError(f"requires_grad has {len(requires_grad)} entries for {len(arrays)} inputs")
    names = _input_names(fn, len(arrays))
    grad_names = [name for name, r in zip(names, requires_grad) if r]
    libraries = _labels([mini_autograd, *engines])
    runs = [
        _run(lib, fn, arrays, requires_grad, "cpu", label)
        for lib, label in zip([mini_autograd, *engines], libraries)
    ]
    labelled = len(runs) > 1
    reports = []
    for device in devices:
        if not _available(torch, device):
            reports.append(DeviceReport(device, False, []))
            continue
        theirs = _run(torch, fn, arrays, requires_grad, device, "torch")
        for mine in runs:
            checks = _checks(mine, theirs, grad_names, atol, rtol)
            reports.append(DeviceReport(device, True, checks, mine.library if labelled else None))
    return Comparison(getattr(fn, "__name__", "fn"), reports, libraries)


def _labels(libraries):
    """Each library's module name; a name met before gets " (2)", " (3)"... so blocks differ."""
    labels = []
    for lib in libraries:
        name = getattr(lib, "__name__", type(lib).__name__)
        label, k = name, 1
        while label in labels:
            k += 1
            label = f"{name} ({k})"
        labels.append(label)
    return labels


def _input_names(fn, count):
    """The names of fn's tensor parameters (after `lib`), or input0, input1... when unknown."""
    try:
        params = list(inspect.signature(fn).parameters.values())[1:]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return [names[i] if i < len(names) else f"input{i}" for i in range(count)]


def _available(torch, device):
    """True when torch can place a tensor on `device`."""
    if device.startswith("cuda"):
        index = torch.device(device).index or 0
        return torch.cuda.is_available() and index < torch.cuda.device_count()
    try:
        torch.empty(0, device=device)
    except (RuntimeError, AssertionError):
        return False
    return True


def _run(lib, fn, arrays, requires_grad, device, label="mini_autograd"):
    """Run fn with `lib`, then backward of its outputs; record everything `_checks` compares.

    Only torch is given a device: mini_autograd and the learner's engine take no `device=`.
    """
    kwargs = {"device": device} if lib.__name__ == "torch" else {}
    run = Run(library=label)
    try:
        tensors = [
            lib.tensor(a.copy(), requires_grad=bool(r), **kwargs)
            for a, r in zip(arrays, requires_grad)
        ]
    except Exception as error:
        if lib.__name__ in ("torch", "mini_autograd"):
            raise  # bad inputs (requires_grad on integers): the caller's mistake
        run.error = (type(error).__name__, str(error))  # an unfinished engine's tensor(): reported
        return run
    try:
        outputs = _flatten(fn(lib, *tensors))
        run.outputs = [_to_numpy(t) for t in outputs]
        nodes = graph_nodes([t for t in outputs if t.grad_fn is not None])
        run.names = [node.name() for node in nodes]
        run.saved = [{_base_name(entry[0]) for entry in node_saved(node)} for node in nodes]
        before = _cuda_memory(lib, device)
        _backward(lib, [t for t in outputs if t.requires_grad])
        if before is not None:
            run.memory = (before, _cuda_memory(lib, device))
    except Exception as error:  # any error is a result to compare
        run.error = (type(error).__name__, str(error))
        return run
    run.grads = [_to_numpy(t.grad) for t, r in zip(tensors, requires_grad) if r]
    return run


def _flatten(result):
    """The tensors in fn's result (a tensor, or nested tuples and lists of them)."""
    if isinstance(result, (tuple, list)):
        return [t for item in result for t in _flatten(item)]
    return [result] if hasattr(result, "grad_fn") else []


def _to_numpy(tensor):
    return None if tensor is None else np.asarray(as_numpy(tensor), dtype=np.float64)


def _base_name(attribute):
    """'tensors[1]' -> 'tensors': the saved-set check compares attributes, not tuple items."""
    return attribute.split("[")[0]


def _cuda_memory(lib, device):
    if lib.__name__ != "torch" or not device.startswith("cuda"):
        return None
    return lib.cuda.memory_allocated(device)


def _backward(lib, outputs):
    """Backward of every output (of its sum when it is not a scalar): gradients land in .grad."""
    if outputs:
        lib.autograd.backward([t if t.dim() == 0 else t.sum() for t in outputs])


def _checks(mine, theirs, grad_names, atol, rtol):
    """The report lines for one device, comparing one engine's run (`mine`) with the torch run."""
    if mine.error or theirs.error:
        return [_error_check(mine.error, theirs.error, mine.library)]
    checks = [Check("forward", *_diff_text(mine.outputs, theirs.outputs, atol, rtol))]
    for name, a, b in zip(grad_names, mine.grads, theirs.grads):
        checks.append(_grad_check(name, a, b, atol, rtol, mine.library))
    checks.append(_names_check(mine.names, theirs.names))
    checks.append(_saved_check(mine, theirs))
    if theirs.memory is not None:
        before, after = theirs.memory
        checks.append(
            Check("cuda memory", f"{before} bytes allocated before backward, {after} after")
        )
    return checks


def _grad_check(name, mine, theirs, atol, rtol, library="mini_autograd"):
    if mine is None or theirs is None:
        if mine is None and theirs is None:
            return Check(f"grad {name}", "None in both")
        owner = library if mine is None else "torch"
        return Check(f"grad {name}", f"None in {owner} only", False)
    return Check(f"grad {name}", *_diff_text([mine], [theirs], atol, rtol))


def _diff_text(mine, theirs, atol, rtol):
    """(text, ok) for lists of arrays: the max abs difference, bucketed so noise does not show."""
    if len(mine) != len(theirs):
        return f"{len(mine)} outputs vs {len(theirs)}", False
    worst, ok = 0.0, True
    for a, b in zip(mine, theirs):
        if a.shape != b.shape:
            return f"shapes differ: {a.shape} vs {b.shape}", False
        ok = ok and np.allclose(a, b, atol=atol, rtol=rtol, equal_nan=True)
        diff = np.where(np.isnan(a) & np.isnan(b), 0.0, np.abs(a - b))
        worst = max(worst, float(np.nan_to_num(diff, nan=np.inf).max(initial=0.0)))
    # Below atol the printed text is fixed, so machine noise never changes a stored notebook.
    shown = f"< {atol:.0e}" if worst < atol else f"{worst:.0e}"
    return f"max |diff| {shown}", bool(ok)


def _names_check(mine, theirs):
    for i, (a, b) in enumerate(zip(mine, theirs)):
        if a != b:
            return Check("node names", f"differ at node {i}: {a} vs {b}", False)
    if len(mine) != len(theirs):
        i = min(len(mine), len(theirs))
        a, b = (names[i] if i < len(names) else "(end)" for names in (mine, theirs))
        return Check("node names", f"differ at node {i}: {a} vs {b}", False)
    return Check("node names", f"agree ({len(mine)} nodes)")


def _saved_check(mine, theirs):
    for i, (name, a, b) in enumerate(zip(mine.names, mine.saved, theirs.saved)):
        if a != b:
            text = f"differ at node {i} ({name}): {_set_text(a)} vs {_set_text(b)}"
            return Check("saved tensors", text, False)
    return Check("saved tensors", "agree")


def _set_text(names):
    return "{" + ", ".join(sorted(names)) + "}"


def _error_check(mine, theirs, library="mini_autograd"):
    """Both raising the same error type with the same first paragraph counts as agreement."""
    if mine is None or theirs is None:
        owner, (kind, message) = ("torch", theirs) if mine is None else (library, mine)
        return Check("error", f"only {owner} raises {kind}: {_clip(message)}", False)
    # Diagnosis mode appends its explanation after a blank line; PyTorch's text comes first.
    (kind_a, message_a), (kind_b, message_b) = mine, theirs
    message_a, message_b = message_a.split("\n\n")[0], message_b.split("\n\n")[0]
    if kind_a != kind_b:
        return Check("error", f"types differ: {kind_a} vs {kind_b}", False)
    if message_a != message_b:
        i = next(
            (i for i, (a, b) in enumerate(zip(message_a, message_b)) if a != b),
            min(len(message_a), len(message_b)),
        )
        text = f"both raise {kind_a}; messages differ at character {i}: "
        text += f"{message_a[i : i + 30]!r} vs {message_b[i : i + 30]!r}"
        return Check("error", text, False)
    return Check("error", f"both raise {kind_a}: {_clip(message_a)}")


def _clip(message, width=60):
    first_line = message.splitlines()[0] if message else ""
    return first_line if len(first_line) <= width else first_line[: width - 3] + "..."
