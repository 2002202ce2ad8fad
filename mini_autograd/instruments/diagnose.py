"""Diagnosis mode: explain "Trying to backward through the graph a second time" in plain words.

Off by default, and then the core does not know it exists. When on, it observes the core's
events (events.py): it notes where each node was created and where each backward call was made,
in weak dictionaries, and when a freed tensor is read it adds to PyTorch's text which node
needed it, which earlier call freed it, and which tensor made before that call links the old
graph to the new one (a hidden state, or a target computed outside the loop). The doctor for
torch programs (torch_doctor.py) keeps the same CallRecord for each of torch's calls.

The explanation is shared with the doctor: both find the
linking tensors with `carried_groups`, and word the diagnosis with `head_lines` and
`linking_lines`, whose fixes come from FIXES, best first, by what was carried: a state the loop
gives a new value made from the old one, data or a target, a tensor computed once before the loop,
or a tensor that two backward calls of one iteration share. Which of the last two it is, and
whether "the previous iteration" is the right word, the lines of the two calls tell
(`pass_between`).
"""

import dis
import functools
import os
import re
import sys
import types
import weakref
from dataclasses import dataclass

from ..core import engine, events
from ..core.node import _sequence_numbers


class DiagnosisMode:
    """Whether diagnosis mode is on: its observers are attached to the core's events then."""

    enabled = False


# What diagnosis mode learns, kept no longer than the nodes and calls themselves
_origins = weakref.WeakKeyDictionary()  # node -> Origin
_records = weakref.WeakKeyDictionary()  # engine.BackwardCall -> CallRecord
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # mini_autograd/

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
    "computed once": (
        "compute it inside the loop, so that every iteration records its own graph from the "
        "parameters' current values;",
        "not `.detach()`: the parameters it is computed from would silently stop getting "
        "gradients through it (detach it only if they are not meant to train);",
        "not retain_graph=True: every step would go back through the graph made from the "
        "parameters' values before the loop (and once the optimizer changes them in place, "
        "backward stops with an in-place error).",
    ),
    "one iteration": (
        "if the first loss should not train what made it, detach it where it feeds the first "
        "loss: e.g. `D(fake.detach())` in a GAN's discriminator step;",
        "if the second call needs the graph through it, pass create_graph=True (e.g. a gradient "
        "penalty: the gradient keeps its graph) or retain_graph=True to the FIRST call;",
        "or add the losses and call backward once: `(loss1 + loss2).backward()`.",
    ),
}
KIND_WORDS = {
    "data": "data or a target, not a state",
    "state": "a state carried from one iteration to the next",
    "computed once": "computed once, before the loop",
    "one iteration": "shared by two backward calls of one iteration",
}
# How the carried tensors link the two calls' graphs (see `_when`): "{links}" is "it links" or
# "they link", "{feed}" "it feeds" or "they feed".
LINK_WORDS = {
    "previous": "{links} this iteration to the previous one",
    "same": "{feed} both that call's graph and this one's, in one iteration",
    None: "{links} this call's graph to the one that call went back through",
}
LATER = " (its value from the previous iteration)"
SEARCH_LENGTH = 16  # the longest list, tuple or dict searched for tensors by name


class diagnosis_mode:
    """Context manager: inside it, mini_autograd explains freed-graph errors in plain words."""

    def __enter__(self):
        self.previous = DiagnosisMode.enabled
        set_diagnosis_mode(True)
        return self

    def __exit__(self, *exc):
        set_diagnosis_mode(self.previous)
        return False


def set_diagnosis_mode(enabled):
    """Switch diagnosis mode on or off for everything that follows."""
    DiagnosisMode.enabled = bool(enabled)
    switch = events.attach if enabled else events.detach
    switch(events.node_created, _note_origin)
    switch(events.backward_started, _note_call)
    switch(events.freed_tensor_read, freed_diagnosis)


class Origin:
    """Where a node was created, and the shape of the tensor it made."""

    __slots__ = ("site", "shape")

    def __init__(self, site, shape=None):
        self.site = site
        self.shape = shape

    def __repr__(self):
        return self.site


class CallRecord:
    """A backward call as diagnosis sees it: its number, where it was made, and its sequence mark.

    The mark is the sequence number the next node would get when the call started: every node
    numbered below it is older than the call. `roots` are the call's root edges (mini_autograd).
    """

    __slots__ = ("number", "api", "site", "sequence_mark", "roots")

    def __init__(self, number, api, site=None, sequence_mark=None, roots=None):
        self.number, self.api, self.site = number, api, site
        self.sequence_mark, self.roots = sequence_mark, roots

    def __repr__(self):
        where = f" at {self.site}" if self.site else ""
        return f"{self.api} call #{self.number}{where}"


def _note_origin(node, output):
    """Observer of node creation: where the learner's code made `node`, and its output's shape."""
    _origins[node] = Origin(creation_site(), output._data.shape)


def _note_call(call, root_edges):
    """Observer of backward calls: where the call was made, its graph, and its sequence mark."""
    _records[call] = CallRecord(
        call.number, call.api, call_site(), next(_sequence_numbers), root_edges
    )


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
    """Where the operation being recorded now was written (file and line, or cell and line)."""
    frame = next(user_frames(), None)
    return "<unknown>" if frame is None else describe(frame)


class Site(str):
    """Where a call was made, in words ('file.py, line 12 (in train)'), knowing its frames' lines.

    `lines` holds (code, line) for each frame the call ran in, outermost first: two calls' lines
    tell whether they ran in one pass of their loop or in two (`pass_between`).
    """

    lines = ()


def site_of(frame):
    """The Site of a call made in `frame`."""
    site, lines = Site(describe(frame)), []
    while frame is not None:
        lines.append((frame.f_code, frame.f_lineno))
        frame = frame.f_back
    site.lines = tuple(reversed(lines))
    return site


def call_site():
    """Where the current backward()/autograd.grad() call was made (a Site)."""
    frame = next(user_frames(), None)
    return "<unknown>" if frame is None else site_of(frame)


def pass_between(earlier, later):
    """How the call made at Site `earlier` stands to the one at `later`, in the code they share.

    In the innermost frame they share: the same line again, or a line further down, is an
    earlier pass of the loop ("previous"); a line further up ran in the same pass ("same");
    None when their code does not tell (two notebook cells, or no lines known).
    """
    earlier_lines, later_lines = getattr(earlier, "lines", ()), getattr(later, "lines", ())
    for (code, line), (later_code, later_line) in zip(earlier_lines, later_lines):
        if code is not later_code:
            return None
        if line != later_line:
            return "same" if line < later_line else "previous"
    return "previous" if earlier_lines and later_lines else None


def freed_diagnosis(node, saved):
    """Observer of freed tensors being read: the diagnosis that follows PyTorch's text."""
    from ..core.tensor import Tensor

    call = engine.current_call()
    freed_by = _records.get(saved.freed_by, saved.freed_by)
    attribute = next((name for name, s in node.saved_tensors_info() if s is saved), "?")
    origin = _origins.get(node)
    created = f", created at {origin}" if origin is not None else ""
    head = [node.name() + created, f"`{attribute}` ({saved.nbytes} bytes)", freed_by]
    lines = ["", *head_lines("mini_autograd diagnosis mode", *head, call and _records.get(call))]
    if call is None:
        lines.append("- Now it was read again (a `_saved_*` attribute) after that backward call.")
        return "\n".join(lines)
    if type(freed_by) is not CallRecord:
        lines.append(
            "- Diagnosis mode was off during that earlier call: turn it on before the loop"
        )
        lines.append(
            "  (`with mini_autograd.diagnosis_mode():`) to learn which tensor links the graphs."
        )
        return "\n".join(lines)
    record = _records[call]
    roots = [n for n, _ in record.roots or () if n is not None]
    olds = carried_nodes(roots, lambda n: n._sequence_nr() < freed_by.sequence_mark, node)
    named = named_tensors(Tensor)
    groups = carried_groups(olds, named, _same_line, _origin_of, freed_by, record.site, roots)
    lines += linking_lines(groups, freed_by, "mini_autograd")
    return "\n".join(lines)


def _origin_of(node):
    """(shape, ' at <site>') of the tensor `node` made, as far as diagnosis mode recorded it."""
    origin = _origins.get(node)
    if origin is None:
        return None, ""
    return (tuple(origin.shape) if origin.shape else None), f" at {origin}"


def _same_line(later, old):
    """Whether node `later` was made by the same line as `old`, for the same output."""
    old_origin, later_origin = _origins.get(old), _origins.get(later)
    return (
        old_origin is not None
        and later_origin is not None
        and later_origin.site == old_origin.site
        and later_origin.shape == old_origin.shape
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
            what, verb = f"a {size}tensor", "It is"
            link = LINK_WORDS[group.when].format(links="it links", feed="it feeds")
        else:
            what, verb = f"{group.count} {size}tensors", "They are"
            link = LINK_WORDS[group.when].format(links="they link", feed="they feed")
        named = f" {verb} `{'`, `'.join(group.names)}`." if group.names else ""
        lines.append(
            f"- The new graph reaches back into {what} made by {group.node}{group.where}, before "
            f"{freed_by!r}: {link}.{named}"
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
    kind: str  # a key of FIXES: "state", "data", "computed once" or "one iteration"
    reason: str  # why they are that kind, in words
    when: str | None  # a key of LINK_WORDS: how they link the two calls


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


def carried_groups(olds, named, same_role, origin, freed_by, site, roots):
    """The carried nodes `olds` as `Carried` groups: named, and said what kind they are.

    `named` is [(name, tensor)] from the learner's code; `same_role(later, old)` says whether a
    node made after `old` plays its part (the same variable, one iteration later); `origin(node)`
    is (shape, where) as far as the engine knows. `freed_by` is the call that freed the graph,
    `site` where the failing call is made, `roots` its nodes (its losses: never a variable's new
    value). Parameters are a module's `Parameter`s (torch's or mini_autograd's), or leaves updated
    in place (their version counter moved).
    """
    groups = {}
    for old in olds:
        groups.setdefault((old.name(), *origin(old)), []).append(old)
    remade = [
        (name, t.grad_fn)
        for name, t in named
        if t.grad_fn is not None
        and t.grad_fn._sequence_nr() >= freed_by.sequence_mark
        and t.grad_fn not in roots
    ]
    iteration = pass_between(freed_by.site, site)
    found = []
    for (node_name, shape, where), members in groups.items():
        held = sorted({name for name, t in named if any(t.grad_fn is old for old in members)})
        later = sorted({name for name, node in remade for old in members if same_role(node, old)})
        renewed = [name for name in held if assigned_in_loop(name, site)] or later
        leaves = {id(leaf): leaf for old in members for leaf in leaves_of(old)}.values()
        trained = [p for p in leaves if _is_parameter(p) or p._version > 0]
        kind = _kind(later, held, renewed, trained, iteration)
        its = "its" if len(members) == 1 else "their"
        reason = _reason(kind, its, renewed, held, trained, leaves, named)
        names = held or [name + LATER for name in later]
        when = _when(kind, later, iteration)
        found.append(Carried(node_name, len(members), shape, where, names, kind, reason, when))
    return found


def _is_parameter(tensor):
    """A module's weight: a `Parameter` of torch or mini_autograd, known by its class name so that
    neither library's nn is imported here."""
    return any(cls.__name__ == "Parameter" for cls in type(tensor).__mro__)


def _kind(later, held, renewed, trained, iteration):
    """The key of FIXES for carried tensors (see `carried_groups` and `_reason`).

    A state if the loop makes a variable's new value from it (`later`). Else, with no parameter
    in its graph, data; with one: shared by two calls of one pass through the code; still held
    by a variable that no loop around the call assigns (`renewed` is empty), computed once;
    held by one the loop assigns, or by none at all now, a state.
    """
    if later:
        return "state"
    if not trained:
        return "data"
    if iteration == "same":
        return "one iteration"
    return "computed once" if held and not renewed else "state"


def _when(kind, later, iteration):
    """How carried tensors link the two calls (a key of LINK_WORDS): "previous" where a loop
    made a variable's new value from them, or where the calls' lines tell an earlier pass."""
    if later:
        return "previous"
    if kind == "one iteration":
        return "same"
    return "previous" if iteration == "previous" else None


def _reason(kind, its, renewed, held, trained, leaves, named):
    """Why the carried tensors are of `kind`, in words."""
    parameters = f"{its} graph goes through parameters (tensors the loop trains)"
    if kind == "state":
        if not renewed:
            return parameters
        new_value = f"the loop gives `{'`, `'.join(renewed)}` a new value in every iteration"
        return f"{new_value}; {parameters}" if trained else new_value
    if kind == "computed once":
        return f"the loop never gives `{'`, `'.join(held)}` a new value, and {parameters}"
    if kind == "one iteration":
        return f"both calls go back through it, and {parameters}"
    sources = [
        next((f"`{n}`" for n, t in named if t is leaf), f"a {tuple(leaf.shape)} tensor")
        for leaf in leaves
    ]
    reason = f"{its} graph reaches no parameter"
    if sources:
        verb = "requires" if len(sources) == 1 else "require"
        reason += f", only {', '.join(sources)}, which {verb} grad"
    return reason


def assigned_in_loop(name, site):
    """Whether a loop around the call made at Site `site` assigns the variable of `name`.

    `hidden[0]` is an item of the variable `hidden`; an attribute or a dict item is no variable
    (False). The code tells, in the innermost frame of the call whose code uses the variable: a
    loop is the code from a jump back to where it lands.
    """
    variable = re.fullmatch(r"(\w+)(\[\d+\])?", name)
    if variable is None:
        return False
    variable = variable[1]
    for code, line in reversed(getattr(site, "lines", ())):
        if variable in code.co_varnames + code.co_cellvars + code.co_freevars + code.co_names:
            return variable in _stored_in_loops(code, line)
    return False


@functools.lru_cache(maxsize=64)
def _stored_in_loops(code, line):
    """The variables that the loops of `code` around `line` assign to."""
    starts, current, instructions = dict(dis.findlinestarts(code)), None, []
    for instruction in dis.get_instructions(code):
        current = starts.get(instruction.offset, current)
        instructions.append((instruction, current))
    stored = set()
    for jump, _ in instructions:
        start = jump.argval
        if jump.opcode not in _JUMPS or not isinstance(start, int) or start > jump.offset:
            continue  # not a jump back to the start of a loop
        body = [(i, at) for i, at in instructions if start <= i.offset <= jump.offset]
        if any(at == line for _, at in body):
            stored.update(i.argval for i, _ in body if i.opname in _STORES)
    return stored


_JUMPS = set(dis.hasjrel + dis.hasjabs)
_STORES = ("STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF")


def named_tensors(tensor_type, skip=(_PACKAGE_DIR,), frames=None, used_only=False):
    """(name, tensor) for tensors reachable by name from the learner's frames (one level deep).

    One level deep: in a list, tuple or dict, or an attribute of an object (`model.hidden`,
    `state["h"][0]`). With `used_only`, only the names each frame's code uses: the quick search.
    """
    found, searched = [], set()
    for frame in user_frames(skip) if frames is None else frames:
        code = frame.f_code
        used = code.co_varnames + code.co_cellvars + code.co_freevars + code.co_names
        scopes = [frame.f_locals]
        if frame.f_globals is not frame.f_locals:
            scopes.append(frame.f_globals)
        for scope in scopes:
            if id(scope) in searched and not used_only:
                continue
            searched.add(id(scope))
            wanted = [n for n in used if n in scope] if used_only else list(scope)
            for name in wanted:
                if not name.startswith("_"):
                    found.extend(_search_safely(_tensors_in, name, scope[name], tensor_type, 1))
    # One name per tensor, the innermost frame's: a loop's `model`, not the script's `m` too.
    unique, names, tensors = [], set(), set()
    for name, t in found:
        if name not in names and id(t) not in tensors:
            names.add(name)
            tensors.add(id(t))
            unique.append((name, t))
    return unique


def _search_safely(search, *args):
    """search(*args), or nothing if the learner's object fails to be read (a dead weakref.proxy)."""
    try:
        return search(*args)
    except Exception:
        return []


# The types whose attributes are no learner's variables: modules, classes, functions, methods.
_NOT_OBJECTS = (
    types.ModuleType,
    type,
    types.FunctionType,
    types.MethodType,
    types.BuiltinMethodType,
)


def _tensors_in(name, value, tensor_type, depth):
    """(name, tensor) for `value` and, `depth` levels down, the tensors it holds.

    It looks at type(value) only, never isinstance() or hasattr(), which can run the learner's
    code: a config's __getattr__, or a dead weakref.proxy that raises.
    """
    kind = type(value)
    if issubclass(kind, tensor_type):
        return [(name, value)]
    if issubclass(kind, (tuple, list)) and len(value) <= SEARCH_LENGTH:
        items = [(f"{name}[{i}]", v) for i, v in enumerate(value)]
        return [(n, v) for n, v in items if issubclass(type(v), tensor_type)]
    if depth == 0 or issubclass(kind, _NOT_OBJECTS):
        return []
    if issubclass(kind, dict):
        items = dict.items(value) if len(value) <= SEARCH_LENGTH else ()
        items = [(f"{name}[{key!r}]", v) for key, v in items if type(key) in (str, int)]
    else:
        attributes = _attributes(value)
        items = [(f"{name}.{a}", v) for a, v in attributes.items() if not a.startswith("_")]
    found = []
    for item_name, item in items:
        found.extend(_search_safely(_tensors_in, item_name, item, tensor_type, depth - 1))
    return found


def _attributes(value):
    """An object's own attributes (its instance __dict__), read without running its code."""
    try:
        attributes = object.__getattribute__(value, "__dict__")
    except Exception:  # no __dict__ (a number, a string, a slotted object)
        return {}
    return dict(attributes) if type(attributes) is dict else {}
