"""The doctor: diagnosis mode's plain words for your own PyTorch programs.

    with ma.doctor():            # around a torch training loop, or a failing call
        train(model)
    ma.doctor.explain(loss)      # before loss.backward(): what its graph reaches

Inside the block, torch.autograd.backward (which Tensor.backward calls) and torch.autograd.grad
are wrapped; leaving the block puts torch's own back. Each call gets a number, and each node it
goes back through is stamped with it, in the node's own `metadata` dict, so the stamps live and
die with the graph. When torch raises "Trying to backward through the graph a second time", the
error keeps torch's text and gains the diagnosis of mini_autograd's diagnosis mode (diagnose.py
words both): the node that needs a freed tensor, the call that freed it, the tensor that links
this iteration to an earlier one, and the fixes, best first, for what that tensor is. It also
warns when a tensor keeps the losses of earlier iterations, graphs and all (`total_loss += loss`).
The doctor only reads graphs: the numbers and the gradients are torch's own, and whatever fails
inside the doctor, the program runs on as without it (torch's own error, no warning).
"""

import functools
import inspect
import itertools
import os
import warnings
import weakref
from collections import deque

from . import diagnose
from .graph_walk import graph_nodes

TITLE = "mini_autograd doctor"
FREED_START = "Trying to backward through the graph a second time"
# Keys of the stamps in a node's metadata: the backward calls that went through it, freed it,
# or started from it, and the name of a tensor warned about (its node's, when warned).
THROUGH, FREED, ROOT, WARNED = (
    f"mini_autograd.doctor: {what}" for what in ("through", "freed", "root", "warned")
)
GROWTH_SEARCH = 64  # nodes looked at per named tensor: a chain of summed losses shows in a few
_call_numbers = itertools.count(1)


class doctor:
    """Context manager: inside it, torch's freed-graph errors explain themselves in plain words."""

    _depth = 0  # nested blocks share the outermost one's wrappers
    _originals = None
    _warned = set()  # the names already warned about in this block
    _roots = weakref.WeakSet()  # the ROOT stamps of the calls whose starting node is alive

    def __init__(self):
        import torch  # only the doctor needs it: mini_autograd itself never imports torch

        self.torch = torch

    def __enter__(self):
        autograd = self.torch.autograd
        if doctor._depth == 0:
            doctor._originals = (autograd.backward, autograd.grad)
            doctor._warned, doctor._roots = set(), weakref.WeakSet()
            autograd.backward = _watched(autograd.backward, "backward", "tensors")
            autograd.grad = _watched(autograd.grad, "autograd.grad", "outputs")
        doctor._depth += 1
        return self

    def __exit__(self, exc_type, *exc):
        doctor._depth -= 1
        if doctor._depth == 0:
            self.torch.autograd.backward, self.torch.autograd.grad = doctor._originals
        if exc_type is None:
            _warn_about_growing_tensors(None)
        return False

    @staticmethod
    def explain(loss):
        """What backward from `loss` would meet, in plain words (printable; see `.will_fail`)."""
        import torch

        if not isinstance(loss, torch.Tensor):
            raise TypeError(
                "doctor.explain() takes the torch tensor you would call backward on, not "
                f"{type(loss).__name__} (for mini_autograd's own tensors, use ma.diagnosis_mode())"
            )
        return _safely(_explain, loss) or Explanation(
            [f"The doctor could not read the graph of this tensor ({TITLE})."], None
        )


class Explanation:
    """The doctor's report on one graph: its text, and whether backward from it would fail
    (None when the doctor could not tell)."""

    def __init__(self, lines, will_fail):
        self.text = "\n".join(lines)
        self.will_fail = will_fail

    def __repr__(self):
        return self.text


def _watched(original, api, roots_argument):
    """`original` (torch.autograd.backward or .grad), numbering and stamping every call.

    Whatever goes wrong inside the doctor, the call itself is torch's: its result, and its error
    with torch's text (the diagnosis is only added to it).
    """
    parameters = list(inspect.signature(original).parameters)

    @functools.wraps(original)
    def watched(*args, **kwargs):
        arguments = {**dict(zip(parameters, args)), **kwargs}
        if roots_argument not in arguments or len(args) > len(parameters):
            return original(*args, **kwargs)  # torch's own error for the wrong arguments
        roots = _safely(_root_nodes, arguments[roots_argument])
        call = roots is not None and _safely(_start, api)
        try:
            result = original(*args, **kwargs)
        except RuntimeError as error:
            if call and str(error).startswith(FREED_START) and len(error.args) == 1:
                diagnosis = _safely(_diagnosis, call, roots)
                if diagnosis:
                    error.args = ("\n".join([str(error), *diagnosis]),)
            raise
        if call:
            _safely(_stamp, call, roots, arguments)
            _warn_about_growing_tensors(arguments[roots_argument])
        return result

    return watched


def _safely(step, *args):
    """step(*args), or None if the doctor fails: it must never break the learner's program."""
    try:
        return step(*args)
    except Exception:
        return None


def _start(api):
    """The CallRecord of a call made now, numbered, with its site and its sequence mark.

    The mark is the number the next node will get: every node made so far is older. The call
    keeps no node: the stamps in the nodes' metadata hold it, so it must not hold them.
    """
    import torch

    frame = next(diagnose.user_frames(_skipped()), None)
    site = frame and diagnose.site_of(frame)
    return diagnose.CallRecord(next(_call_numbers), api, site, torch.autograd._get_sequence_nr())


@functools.cache
def _skipped():
    """The folders whose frames are not the learner's: mini_autograd's and torch's."""
    import torch

    return (diagnose._PACKAGE_DIR, os.path.dirname(os.path.abspath(torch.__file__)))


def _root_nodes(tensors):
    """The nodes a backward call starts from (tensors or GradientEdges, one or a sequence)."""
    if isinstance(tensors, (list, tuple)) and not hasattr(tensors, "node"):
        return [node for t in tensors for node in _root_nodes(t)]
    node = getattr(tensors, "node", None) or getattr(tensors, "grad_fn", None)
    return [] if node is None else [node]


def _input_nodes(inputs):
    """The nodes of a call's `inputs`: a leaf's AccumulateGrad, a tensor's grad_fn, an edge's node.

    None or () for backward() without inputs: an empty set.
    """
    import torch

    if inputs is None:
        return set()
    if isinstance(inputs, (list, tuple)) and not hasattr(inputs, "node"):
        return {node for i in inputs for node in _input_nodes(i)}
    if isinstance(inputs, torch.Tensor):
        inputs = torch.autograd.graph.get_gradient_edge(inputs)
    return {inputs.node}


def _stamp(call, roots, arguments):
    """Mark the nodes `call` ran (FREED if it freed their saved tensors), and its starting nodes.

    A call with `inputs` (autograd.grad, or backward(inputs=...)) runs only the nodes on a path
    to them: the others keep their saved tensors.
    """
    retain = arguments.get("retain_graph")
    freed = not (arguments.get("create_graph") if retain is None else retain)
    key = FREED if freed else THROUGH
    for node in roots:
        node.metadata[ROOT] = root = _Root(call)
        doctor._roots.add(root)
    targets = _input_nodes(arguments.get("inputs"))
    if not targets:
        _stamp_down(roots, key, call)
        return
    for node in _on_paths(roots, targets, call.api == "backward"):
        node.metadata.setdefault(key, call)
        node.metadata.setdefault(THROUGH, call)


class _Root:
    """The stamp in a call's starting node: it lives as long as the node, which a loss keeps."""

    __slots__ = ("call", "__weakref__")

    def __init__(self, call):
        self.call = call


def _stamp_down(roots, key, call):
    """Stamp `key` (and THROUGH) on the nodes from `roots` down to those stamped before."""
    stack = list(roots)
    while stack:
        node = stack.pop()
        metadata = node.metadata
        if key in metadata or hasattr(node, "variable"):  # seen, or a leaf's AccumulateGrad
            continue
        metadata[key] = call
        metadata.setdefault(THROUGH, call)
        stack.extend(n for n, _ in node.next_functions if n is not None)


def _on_paths(roots, targets, targets_run):
    """The nodes from `roots` with a path down to one of `targets`: those a call with inputs runs.

    backward(inputs=...) runs the targets' own nodes too (`targets_run`); autograd.grad only
    catches the gradients that arrive at them.
    """
    below, stack = {}, [(node, False) for node in roots]  # below[node]: a target is below it
    while stack:
        node, children_done = stack.pop()
        children = [n for n, _ in node.next_functions if n is not None]
        if children_done:
            below[node] = any(n in targets or below[n] for n in children)
        elif node not in below:
            below[node] = False  # for now: its children come first
            stack.append((node, True))
            stack.extend((n, False) for n in children if n not in below)
    return [
        node
        for node, leads in below.items()
        if (leads or targets_run and node in targets) and not hasattr(node, "variable")
    ]


def _freed_frontier(roots, stamped):
    """(node, attribute) for the first nodes on the way down whose saved tensors are freed.

    With `stamped`, only those an earlier call freed under the doctor: a failing call has freed
    the nodes it ran before it met the one that raised.
    """
    found, seen, stack = [], set(), list(roots)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        freed = _freed_saved(node)
        if freed and (FREED in node.metadata or not stamped):
            found.append((node, freed[0]))
        else:
            stack.extend(n for n, _ in node.next_functions if n is not None)
    return found


def _freed_saved(node):
    """The names of the saved tensors of `node` that are freed, sorted.

    Read without unpacking a live saved tensor that has an unpack hook (saved_tensors_hooks):
    unpacking runs the hook, the learner's code, which may only expect to run once, in backward.
    A custom autograd.Function's node keeps its tensors in `saved_tensors`.
    """
    freed = []
    for attribute in dir(node):
        if attribute == "_raw_saved_tensors":  # a custom Function's: reading it unpacks nothing
            name = "saved_tensors"
        elif attribute.startswith("_saved_"):
            name = attribute[len("_saved_") :]
            if _has_unpack_hook(getattr(node, "_raw" + attribute, None)):
                continue  # so not freed: a freed saved tensor forgets its hooks
        else:
            continue
        try:
            getattr(node, attribute)
        except RuntimeError:  # torch raises on reading a freed saved tensor
            freed.append(name)
    return sorted(freed)


def _has_unpack_hook(raw):
    """Whether a node's `_raw_saved_*` (a SavedTensor, or a list of them) has an unpack hook."""
    raws = raw if type(raw) in (list, tuple) else [raw]
    return any(getattr(r, "unpack_hook", None) is not None for r in raws)


def _newest(freed):
    """The (node, attribute) torch meets first: among ready nodes it runs the newest first."""
    return max(freed, key=lambda pair: pair[0]._sequence_nr())


def _diagnosis(call, roots):
    """The lines the freed-graph error of `call` (from the nodes `roots`) gains."""
    freed = _freed_frontier(roots, stamped=True)
    if not freed:
        return [
            "",
            f"Diagnosis ({TITLE}):",
            f"- The failing call is {call}. The doctor saw no earlier call free a saved tensor of"
            " its graph: that call was made before the doctor was on, or through a name imported"
            " before it (`from torch.autograd import grad`), which the doctor cannot see.",
            _START_EARLIER,
        ]
    node, attribute = _newest(freed)
    freed_by = node.metadata[FREED]
    lines = diagnose.head_lines(TITLE, node.name(), f"`{attribute}`", freed_by, call)
    return lines + _linking(roots, freed_by, call.site, node)


_START_EARLIER = (
    "- Start the doctor before the loop (`with mini_autograd.doctor():`) to learn which tensor"
    " links the graphs."
)


def _linking(roots, earlier, site, failing=None):
    """What links the graph of `roots` to the one `earlier` went through, and the fixes.

    `site` is where the call from `roots` is (or would be) made; with `failing`, only the
    tensors whose graph leads to that node, else those whose graph leads to one `earlier` ran.
    """
    import torch

    olds = diagnose.carried_nodes(
        roots, lambda n: n._sequence_nr() < earlier.sequence_mark, failing
    )
    if failing is None:
        olds = [node for node in olds if _reaches_stamped(node)]
    named = diagnose.named_tensors(torch.Tensor, _skipped())
    groups = diagnose.carried_groups(
        olds,
        named,
        _computed_from,
        lambda node: (None, ""),
        earlier,
        site,
        roots,
    )
    return diagnose.linking_lines(groups, earlier, "torch")


def _reaches_stamped(start):
    """Whether the graph from node `start` reaches a node a backward call went through."""
    seen, stack = set(), [start]
    while stack:
        node = stack.pop()
        if THROUGH in node.metadata:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(n for n, _ in node.next_functions if n is not None)
    return False


def _computed_from(later, old):
    """Whether node `later` plays the part of `old` one iteration on: same op, made from it."""
    return (
        later.name() == old.name()
        and diagnose.output_numbers(later) == diagnose.output_numbers(old)
        and diagnose.reaches(later, old)
    )


def _explain(loss):
    """The Explanation of what backward from the torch tensor `loss` would meet."""
    import torch

    named = diagnose.named_tensors(torch.Tensor, _skipped())
    name = next((f"`{n}`" for n, t in named if t is loss), "this tensor")
    if loss.grad_fn is None:
        return Explanation([f"{name} has no graph: it is a leaf, or does not require grad."], False)
    roots = [loss.grad_fn]
    frame = next(diagnose.user_frames(_skipped()), None)
    site = frame and diagnose.site_of(frame)
    lines = [f"What backward from {name} would meet ({TITLE}):"]
    freed = _freed_frontier(roots, stamped=False)
    if freed:
        node, attribute = _newest(freed)
        earlier = node.metadata.get(FREED)
        lines.append(
            f"- It would fail: {node.name()} needs its saved `{attribute}`, already freed by "
            f"{earlier or 'a backward call made before the doctor was on'}."
        )
        if earlier is None:
            return Explanation([*lines, _START_EARLIER], True)
        return Explanation(lines + _linking(roots, earlier, site, node), True)
    stamps = (node.metadata.get(THROUGH) for node in graph_nodes(roots))
    earlier = max(filter(None, stamps), key=lambda call: call.number, default=None)
    if earlier is None:
        lines.append(
            "- Nothing from an earlier backward call: it goes back through this iteration's"
            " graph only, and no saved tensor in it is freed."
        )
        return Explanation(lines, False)
    lines.append(
        f"- It goes back into the graph that {earlier} went through, which kept it"
        " (retain_graph=True): backward will run, and go through that graph again. That is what"
        " retain_graph is for with two backward calls over one graph; across iterations it"
        " makes every step back-propagate through all the earlier ones."
    )
    return Explanation(lines + _linking(roots, earlier, site), False)


def _warn_about_growing_tensors(tensors):
    """Warn once per name about a tensor that holds the losses of earlier backward calls.

    The quick test first: while no two earlier calls' starting nodes are alive, nothing holds
    their losses, and no name is searched. `tensors` are those the call started from.
    """
    if len(doctor._roots) < 3:  # this call's loss, and at most one earlier one still alive
        return
    _warn(_safely(_growing_tensors, tensors) or [])


def _growing_tensors(tensors):
    """(frame, warning) for the tensors of the loop's frame that hold earlier calls' losses.

    Only the names the loop's own code uses are searched: a search of every frame, or every
    variable, at every backward call costs too much.
    """
    import torch

    frame = next(diagnose.user_frames(_skipped()), None)
    if frame is None:
        return []
    named = diagnose.named_tensors(torch.Tensor, frames=[frame], used_only=True)
    loss = next((n for n, t in named if t is tensors), "loss")
    texts = []
    for name, tensor in named:
        if tensor.grad_fn is None:
            continue
        if name in doctor._warned:  # mark its new value too: `total / len(data)` holds it
            tensor.grad_fn.metadata[WARNED] = name
            continue
        calls = _losses_held(tensor.grad_fn)
        if calls is None:  # it holds a tensor already warned about: `total / len(data)`
            continue
        sites = [call.site for call in calls]
        site = max(set(sites), key=sites.count, default=None)
        if sites.count(site) < 2:  # one iteration's losses (or none): nothing keeps growing
            continue
        doctor._warned.add(name)
        tensor.grad_fn.metadata[WARNED] = name
        numbers = sorted(call.number for call in calls if call.site == site)
        texts.append((frame, _growing_text(name, numbers, site, loss)))
    return texts


def _growing_text(name, numbers, site, loss):
    """The warning for `name`, which holds the losses of backward calls `numbers` made at `site`."""
    return (
        f"{TITLE}: `{name}` holds the losses of backward calls #{', #'.join(map(str, numbers))} "
        f"at {site}, each with its graph, and one more with every loss added to it, until it is "
        "given a new value: memory grows with each. To add up losses to print, add numbers: "
        f"`{name} += {loss}.item()` (or `{loss}.detach()`)."
    )


def _warn(texts):
    """Give the warnings `texts` ((frame, text) pairs), each pointing at its loop's line."""
    for frame, text in texts:
        warnings.warn_explicit(
            text,
            UserWarning,
            frame.f_code.co_filename,
            frame.f_lineno,
            module=frame.f_globals.get("__name__"),
        )


def _losses_held(start):
    """The backward calls whose starting node the graph from `start` holds (a short search);
    None if it holds a tensor the doctor already warned about."""
    calls, seen, queue = [], set(), deque([start])
    while queue and len(seen) < GROWTH_SEARCH:
        node = queue.popleft()
        if node in seen:
            continue
        seen.add(node)
        if WARNED in node.metadata:
            return None
        root = node.metadata.get(ROOT)
        if root is not None:
            calls.append(root.call)
        else:
            queue.extend(n for n, _ in node.next_functions if n is not None)
    return calls
