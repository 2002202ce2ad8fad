"""Diagnosis mode: explain "Trying to backward through the graph a second time" in plain words.

Off by default, and then it costs one flag test per node. When on, every node remembers where
it was created and every backward call where it was made, so the error can say which node
needed a freed tensor, which earlier call freed it, and which tensor made before that call
links the old graph to the new one (a hidden state, or a target computed outside the loop).

The explanation is shared with the doctor for torch programs (torch_doctor.py): both find the
linking tensors with `carried_groups`, and word the diagnosis with `head_lines` and
`linking_lines`, whose fixes come from FIXES, best first, by what was carried.
"""

import os
import sys
from dataclasses import dataclass

from .saved import FREED_MESSAGE


class State:
    enabled = False


current_call = None
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

# The fixes, best first, for each kind of link between the failing call's graph and the graph an
# earlier call already went back through. `{lib}` is the library the learner's code calls.
FIXES = {
    "one graph": (
        "add the losses and call backward once: `(loss1 + loss2).backward()`; or ask for all "
        "the gradients in one `{lib}.autograd.grad` call;",
        "only if you really need two backward calls: pass retain_graph=True to the FIRST one "
        "(the graph's saved tensors then stay in memory until the graph is dropped).",
    ),
    "data": (
        "build it without recording: create the input it is computed from with "
        "requires_grad=False, or compute it inside `with {lib}.no_grad():`, or `.detach()` it "
        "once, before the loop;",
        "or compute it inside the loop, so that every iteration records its own graph;",
        "not retain_graph=True: every step would go back through the graph that made it again, "
        "for a gradient that nothing uses.",
    ),
    "state": (
        "detach it where it is carried over: `h = h.detach()` (truncated backpropagation "
        "through time: the gradient stops at the start of the iteration);",
        "or re-initialise it in each iteration (e.g. the hidden state at the start of every "
        "sequence), when the iterations are independent;",
        "retain_graph=True only if you really need the old graph: every step then also "
        "back-propagates through all earlier steps, and memory and time per step keep growing.",
    ),
}
KIND_WORDS = {
    "data": "data or a target, not a state",
    "state": "a state carried from one iteration to the next",
}
LATER = " (its value from the previous iteration)"


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


def user_frames(skip=(_PACKAGE_DIR,)):
    """The stack frames outside the folders `skip`, innermost first (the learner's code)."""
    frame = sys._getframe(1)
    while frame is not None:
        if not frame.f_code.co_filename.startswith(skip):
            yield frame
        frame = frame.f_back


def describe(frame):
    """'file.py, line 12 (in train)', or 'a notebook cell, line 3'."""
    filename = frame.f_code.co_filename
    function = "" if frame.f_code.co_name == "<module>" else f" (in {frame.f_code.co_name})"
    if "ipykernel" in filename or filename.startswith("<ipython-input"):
        return f"a notebook cell, line {frame.f_lineno}{function}"
    return f"{os.path.basename(filename)}, line {frame.f_lineno}{function}"


def creation_site():
    """An Origin for the operation being recorded now (file and line, or notebook cell and line)."""
    frame = next(user_frames(), None)
    return Origin("<unknown>" if frame is None else describe(frame))


def call_site():
    """Where the current backward()/autograd.grad() call was made."""
    frame = next(user_frames(), None)
    return "<unknown>" if frame is None else describe(frame)


def explain_freed(node, saved):
    """The freed-tensor error text: PyTorch's message, plus the diagnosis when the mode is on."""
    if not State.enabled:
        return FREED_MESSAGE
    from .nn import Parameter
    from .tensor import Tensor

    freed_by, call = saved.freed_by, current_call
    attribute = next((name for name, s in node.saved_tensors_info() if s is saved), "?")
    created = f", created at {node._origin}" if node._origin is not None else ""
    lines = [
        FREED_MESSAGE,
        *head_lines(
            "mini_autograd diagnosis mode",
            node.name() + created,
            f"`{attribute}` ({saved.nbytes} bytes)",
            freed_by,
            call,
        ),
    ]
    if call is None:
        lines.append("- Now it was read again (a `_saved_*` attribute) after that backward call.")
        return "\n".join(lines)
    if freed_by.sequence_mark is None:
        lines.append(
            "- Diagnosis mode was off during that earlier call: turn it on before the loop"
        )
        lines.append(
            "  (`with mini_autograd.diagnosis_mode():`) to learn which tensor links the graphs."
        )
        return "\n".join(lines)
    roots = [n for n, _ in call.roots or () if n is not None]
    olds = carried_nodes(roots, lambda n: n._sequence_nr() < freed_by.sequence_mark, node)
    groups = carried_groups(olds, named_tensors(Tensor), _same_line, Parameter, _origin_of)
    lines += linking_lines(groups, freed_by, "mini_autograd")
    return "\n".join(lines)


def _origin_of(node):
    """(shape, ' at <site>') of the tensor `node` made, as far as diagnosis mode recorded it."""
    if node._origin is None:
        return None, ""
    shape = tuple(node._origin.shape) if node._origin.shape else None
    return shape, f" at {node._origin}"


def _same_line(later, old):
    """Whether node `later` was made by the same line as `old`, for the same output."""
    return (
        old._origin is not None
        and later._origin is not None
        and later._origin.site == old._origin.site
        and later._origin.shape == old._origin.shape
        and later.name() == old.name()
        and output_numbers(later) == output_numbers(old)
    )


def head_lines(title, node, saved, freed_by, call=None):
    """The start of a diagnosis: the node (and where it was made), what it saved, the two calls."""
    lines = [
        "",
        f"Diagnosis ({title}):",
        f"- The node that needs the freed tensor is {node}; it saved {saved} for its backward "
        "formula.",
        f"- That tensor was freed by {freed_by}, which already went back through this node.",
    ]
    if call is not None:
        lines.append(f"- The failing call is {call}.")
    return lines


def linking_lines(groups, freed_by, lib):
    """What links the failing graph to the one `freed_by` went through, and the fixes, best first.

    No groups: both calls go back through one graph. Otherwise one line per group of carried
    tensors, one saying what kind they are, and the fixes for that kind.
    """
    if not groups:
        return [
            "- The graph of this call is (part of) the graph the earlier call already went back "
            "through: two backward calls over one graph.",
            "- Fixes, best first:",
            *(f"  * {fix.format(lib=lib)}" for fix in FIXES["one graph"]),
        ]
    lines = []
    for group in groups:
        size = f"{group.shape} " if group.shape else ""
        if group.count == 1:
            what, links, verb = f"a {size}tensor", "it links", "It is"
        else:
            what, links, verb = f"{group.count} {size}tensors", "they link", "They are"
        named = f" {verb} `{'`, `'.join(group.names)}`." if group.names else ""
        lines.append(
            f"- The new graph reaches back into {what} made by {group.node}{group.where}, before "
            f"{freed_by!r}: {links} this iteration to the previous one.{named}"
        )
        lines.append(f"- {verb} {KIND_WORDS[group.kind]}: {group.reason}.")
    kinds = list(dict.fromkeys(group.kind for group in groups))
    for kind in kinds:
        names = [n for g in groups if g.kind == kind for n in g.names or [f"the {g.node} output"]]
        which = f" for `{'`, `'.join(names)}`" if len(kinds) > 1 else ""
        lines.append(f"- Fixes{which}, best first:")
        lines += [f"  * {fix.format(lib=lib)}" for fix in FIXES[kind]]
    return lines


@dataclass
class Carried:
    """Tensors made by one kind of node (on one line) that link this iteration to an earlier one."""

    node: str
    count: int
    shape: tuple | None
    where: str  # " at <site>", or "" where the engine does not record it
    names: list  # the learner's names for them
    kind: str  # a key of FIXES: "data" or "state"
    reason: str  # why they are that kind, in words


def carried_nodes(roots, is_old, failing=None):
    """Old nodes that new nodes of the graph of `roots` point to (and that lead to `failing`)."""
    boundary, seen, stack = [], set(), list(roots)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        for child, _ in node.next_functions:
            if child is None:
                continue
            if is_old(child) and not is_old(node) and child not in boundary:
                boundary.append(child)
            elif not is_old(child):
                stack.append(child)
    return [n for n in boundary if failing is None or reaches(n, failing)]


def reaches(start, target):
    """Whether the graph from node `start` contains node `target`."""
    seen, stack = set(), [start]
    while stack:
        node = stack.pop()
        if node is target:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(n for n, _ in node.next_functions if n is not None)
    return False


def leaves_of(start):
    """The leaf tensors (that require grad) the graph from node `start` reaches."""
    leaves, seen, stack = {}, set(), [start]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if hasattr(node, "variable"):  # AccumulateGrad: the node of a leaf
            leaves[id(node.variable)] = node.variable
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return list(leaves.values())


def output_numbers(node):
    """The output numbers a node's edges point to (tells an LSTM's h from its c, made together)."""
    return [nr for _, nr in node.next_functions]


def carried_groups(olds, named, same_role, parameter_type, origin):
    """The carried nodes `olds` as `Carried` groups: named, and said to be data or a state.

    `named` is [(name, tensor)] from the learner's code; `same_role(later, old)` says whether a
    node made after `old` plays its part (the same variable, one iteration later); `origin(node)`
    is (shape, where) as far as the engine knows. A carried tensor is a state if the loop gives
    its variable a new value made from it, or if its graph goes through a parameter (an instance
    of `parameter_type`, or a leaf updated in place: its version counter moved); else it is data.
    """
    groups = {}
    for old in olds:
        groups.setdefault((old.name(), *origin(old)), []).append(old)
    found = []
    for (node_name, shape, where), members in groups.items():
        exact, later = set(), set()
        for old in members:
            names = [name for name, t in named if t.grad_fn is old]
            exact.update(names)
            if not names:
                later.update(n for n, t in named if t.grad_fn and same_role(t.grad_fn, old))
        leaves = {id(leaf): leaf for old in members for leaf in leaves_of(old)}.values()
        trained = [p for p in leaves if isinstance(p, parameter_type) or p._version > 0]
        its = "its" if len(members) == 1 else "their"
        if later or trained:
            kind, reasons = "state", []
            if later:
                reasons.append(
                    f"the loop gives `{'`, `'.join(sorted(later))}` a new value in every iteration"
                )
            if trained:
                reasons.append(f"{its} graph goes through parameters (tensors the loop trains)")
            reason = "; ".join(reasons)
        else:
            kind = "data"
            sources = [
                next((f"`{n}`" for n, t in named if t is leaf), f"a {tuple(leaf.shape)} tensor")
                for leaf in leaves
            ]
            reason = f"{its} graph reaches no parameter"
            if sources:
                verb = "requires" if len(sources) == 1 else "require"
                reason += f", only {', '.join(sources)}, which {verb} grad"
        names = sorted(exact) + [name + LATER for name in sorted(later)]
        found.append(Carried(node_name, len(members), shape, where, names, kind, reason))
    return found


def named_tensors(tensor_type, skip=(_PACKAGE_DIR,), frames=None):
    """(name, tensor) for tensors reachable by name from the learner's frames (one level deep)."""
    found, seen_frames = [], set()
    for frame in user_frames(skip) if frames is None else frames:
        scopes = [frame.f_locals] + (
            [frame.f_globals] if id(frame.f_globals) not in seen_frames else []
        )
        seen_frames.add(id(frame.f_globals))
        for scope in scopes:
            for name, value in list(scope.items()):
                if name.startswith("_"):
                    continue
                found.extend(_tensors_in(name, value, tensor_type, depth=1))
    # One name per tensor, the innermost frame's: a loop's `model`, not the script's `m` too.
    unique, names, tensors = [], set(), set()
    for name, t in found:
        if name not in names and id(t) not in tensors:
            names.add(name)
            tensors.add(id(t))
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
