"""Diagnosis mode: explain "Trying to backward through the graph a second time" in plain words.

Off by default, and then it costs one flag test per node. When on, every node remembers where
it was created and every backward call where it was made, so the error can say which node
needed a freed tensor, which earlier call freed it, and which tensor made before that call
links the old graph to the new one (a hidden state, or a target computed outside the loop).
"""

import os
import sys

from .saved import FREED_MESSAGE


class State:
    enabled = False


current_call = None
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class diagnosis_mode:
    """Context manager: inside it, mini_autograd explains freed-graph errors in plain words."""

    def __enter__(self):
        self.previous = State.enabled
        State.enabled = True
        return self

    def __exit__(self, *exc):
        State.enabled = self.previous
        return False


def set_diagnosis_mode(enabled):
    """Switch diagnosis mode on or off for everything that follows."""
    State.enabled = bool(enabled)


class Origin:
    """Where a node was created, and the shape of the tensor it made."""

    __slots__ = ("site", "shape")

    def __init__(self, site):
        self.site = site
        self.shape = None

    def __repr__(self):
        return self.site


def _user_frames():
    """The stack frames outside mini_autograd, innermost first (the learner's code)."""
    frame = sys._getframe(1)
    while frame is not None:
        if not frame.f_code.co_filename.startswith(_PACKAGE_DIR):
            yield frame
        frame = frame.f_back


def _describe(frame):
    filename = frame.f_code.co_filename
    function = "" if frame.f_code.co_name == "<module>" else f" (in {frame.f_code.co_name})"
    if "ipykernel" in filename or filename.startswith("<ipython-input"):
        return f"a notebook cell, line {frame.f_lineno}{function}"
    return f"{os.path.basename(filename)}, line {frame.f_lineno}{function}"


def creation_site():
    """An Origin for the operation being recorded now (file and line, or notebook cell and line)."""
    frame = next(_user_frames(), None)
    return Origin("<unknown>" if frame is None else _describe(frame))


def call_site():
    """Where the current backward()/autograd.grad() call was made."""
    frame = next(_user_frames(), None)
    return "<unknown>" if frame is None else _describe(frame)


def explain_freed(node, saved):
    """The freed-tensor error text: PyTorch's message, plus the diagnosis when the mode is on."""
    if not State.enabled:
        return FREED_MESSAGE
    freed_by = saved.freed_by
    lines = [FREED_MESSAGE, "", "Diagnosis (mini_autograd diagnosis mode):"]
    created = f", created at {node._origin}" if node._origin is not None else ""
    attribute = next((name for name, s in node.saved_tensors_info() if s is saved), "?")
    lines.append(
        f"- The node that needs the freed tensor is {node.name()}{created}; it saved "
        f"`{attribute}` ({saved.nbytes} bytes) for its backward formula."
    )
    lines.append(
        f"- That tensor was freed by {freed_by!r}, which already went back through this node."
    )
    call = current_call
    if call is None:
        lines.append("- Now it was read again (a `_saved_*` attribute) after that backward call.")
        return "\n".join(lines)
    lines.append(f"- The failing call is {call!r}.")
    if freed_by.sequence_mark is None:
        lines.append(
            "- Diagnosis mode was off during that earlier call: turn it on before the loop"
        )
        lines.append(
            "  (`with mini_autograd.diagnosis_mode():`) to learn which tensor links the graphs."
        )
        return "\n".join(lines)
    carried = _carried_nodes(call, freed_by, node)
    if not carried:
        lines += [
            "- The graph of this call is (part of) the graph the earlier call already went back",
            "  through: two backward calls over one graph. Fixes: add the losses and call",
            "  backward once, e.g. `(loss1 + loss2).backward()`; or ask for all gradients at once",
            "  with autograd.grad; or pass retain_graph=True to the FIRST call if you really need",
            "  two calls (the graph's saved tensors then stay in memory until it is dropped).",
        ]
        return "\n".join(lines)
    # Tensors made on the same line (an LSTM's h and c) are described together.
    groups = {}
    for old in carried:
        shape = tuple(old._origin.shape) if old._origin and old._origin.shape else None
        where = f" at {old._origin}" if old._origin else ""
        groups.setdefault((old.name(), shape, where), []).append(old)
    for (node_name, shape, where), olds in groups.items():
        size = f"{shape} " if shape else ""
        names = sorted({name for old in olds for name in _names_for(old)})
        if len(olds) == 1:
            what, links, verb = f"a {size}tensor", "it links", "It is"
        else:
            what, links, verb = f"{len(olds)} {size}tensors", "they link", "They are"
        named = f" {verb} `{'`, `'.join(names)}`." if names else ""
        lines.append(
            f"- The new graph reaches back into {what} made by {node_name}{where}, before "
            f"{freed_by!r}: {links} this iteration to the previous one.{named}"
        )
    lines += [
        "- Fixes, best first:",
        "  * detach it where it is carried over: `h = h.detach()` (truncated backpropagation through time);",
        "  * re-create it in each iteration (e.g. initialise the hidden state per sequence, or compute",
        "    the target inside the loop);",
        "  * if it is an input or a target, do not make it require grad (requires_grad=False);",
        "  * retain_graph=True only if you really need the old graph: every step then also",
        "    back-propagates through all earlier steps, and memory and time per step keep growing.",
    ]
    return "\n".join(lines)


def _old(node, call):
    return node._sequence < call.sequence_mark


def _carried_nodes(call, freed_by, failing):
    """Old-graph nodes that new nodes of `call` point to, and that lead to the failing node."""
    if call.roots is None:
        return []
    boundary, seen, stack = [], set(), [n for n, _ in call.roots if n is not None]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        for child, _ in node.next_functions:
            if child is None:
                continue
            if _old(child, freed_by) and not _old(node, freed_by) and child not in boundary:
                boundary.append(child)
            elif not _old(child, freed_by):
                stack.append(child)
    return [n for n in boundary if _reaches(n, failing)]


def _reaches(start, target):
    seen, stack = set(), [start]
    while stack:
        node = stack.pop()
        if node is target:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(n for n, _ in node.next_functions if n is not None)
    return False


def _names_for(old):
    """Names in the learner's code for the carried tensor: exact, or its later value (same line)."""
    exact, later = [], []
    for name, value in _named_tensors():
        fn = value.grad_fn
        if fn is old:
            exact.append(name)
        elif (
            fn is not None
            and old._origin is not None
            and fn._origin is not None
            and fn._origin.site == old._origin.site
            and fn._origin.shape == old._origin.shape
            and fn.name() == old.name()
            and _output_numbers(fn) == _output_numbers(old)
        ):
            later.append(f"{name} (its value from the previous iteration)")
    return exact or later


def _output_numbers(node):
    # Tells apart tensors made on one line from different outputs of one node (an LSTM's h and c).
    return [nr for _, nr in node.next_functions]


def _named_tensors():
    """(name, tensor) for tensors reachable by name from the learner's frames (one level deep)."""
    from .tensor import Tensor

    found, seen_frames = [], set()
    for frame in _user_frames():
        scopes = [frame.f_locals] + (
            [frame.f_globals] if id(frame.f_globals) not in seen_frames else []
        )
        seen_frames.add(id(frame.f_globals))
        for scope in scopes:
            for name, value in list(scope.items()):
                if name.startswith("_"):
                    continue
                found.extend(_tensors_in(name, value, Tensor, depth=1))
    unique, seen = [], set()
    for name, t in found:
        if name not in seen:
            seen.add(name)
            unique.append((name, t))
    return unique


def _tensors_in(name, value, tensor_type, depth):
    if isinstance(value, tensor_type):
        return [(name, value)]
    if isinstance(value, (tuple, list)) and len(value) <= 8:
        return [(f"{name}[{i}]", v) for i, v in enumerate(value) if isinstance(v, tensor_type)]
    if (
        depth > 0
        and hasattr(value, "__dict__")
        and not isinstance(value, type)
        and hasattr(value, "_parameters")
    ):
        found = []
        for attr, v in vars(value).items():
            if not attr.startswith("_"):
                found.extend(_tensors_in(f"{name}.{attr}", v, tensor_type, depth - 1))
        return found
    return []
