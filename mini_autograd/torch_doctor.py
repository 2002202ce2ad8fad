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
The doctor only reads graphs: the numbers and the gradients are torch's own.
"""

import functools
import inspect
import itertools
import os
import warnings
from collections import deque

from . import diagnose
from .engine import BackwardCall
from .memory import graph_nodes, node_saved

TITLE = "mini_autograd doctor"
FREED_START = "Trying to backward through the graph a second time"
# Keys of the stamps in a node's metadata: the backward calls that went through it, freed it,
# or started from it.
THROUGH, FREED, ROOT = (f"mini_autograd.doctor: {what}" for what in ("through", "freed", "root"))
GROWTH_SEARCH = 64  # nodes looked at per named tensor: a chain of summed losses shows in a few
_call_numbers = itertools.count(1)


class doctor:
    """Context manager: inside it, torch's freed-graph errors explain themselves in plain words."""

    _depth = 0  # nested blocks share the outermost one's wrappers
    _originals = None
    _warned = set()  # the names already warned about in this block

    def __init__(self):
        import torch  # only the doctor needs it: mini_autograd itself never imports torch

        self.torch = torch

    def __enter__(self):
        autograd = self.torch.autograd
        if doctor._depth == 0:
            doctor._originals = (autograd.backward, autograd.grad)
            doctor._warned = set()
            autograd.backward = _watched(autograd.backward, "backward", "tensors")
            autograd.grad = _watched(autograd.grad, "autograd.grad", "outputs")
        doctor._depth += 1
        return self

    def __exit__(self, exc_type, *exc):
        doctor._depth -= 1
        if doctor._depth == 0:
            self.torch.autograd.backward, self.torch.autograd.grad = doctor._originals
        if exc_type is None:
            _warn_about_growing_tensors()
        return False

    @staticmethod
    def explain(loss):
        """What backward from `loss` would meet, in plain words (printable; see `.will_fail`)."""
        return _explain(loss)


class Explanation:
    """The doctor's report on one graph: its text, and whether backward from it would fail."""

    def __init__(self, lines, will_fail):
        self.text = "\n".join(lines)
        self.will_fail = will_fail

    def __repr__(self):
        return self.text


def _watched(original, api, roots_argument):
    """`original` (torch.autograd.backward or .grad), numbering and stamping every call."""
    signature = inspect.signature(original)

    @functools.wraps(original)
    def watched(*args, **kwargs):
        try:
            arguments = signature.bind(*args, **kwargs).arguments
        except TypeError:
            return original(*args, **kwargs)  # torch's own error for the wrong arguments
        import torch

        roots = _root_nodes(arguments[roots_argument])
        frame = next(diagnose.user_frames(_skipped()), None)
        call = BackwardCall(next(_call_numbers), api, frame and diagnose.describe(frame))
        call.sequence_mark = _next_sequence_nr(torch)
        try:
            result = original(*args, **kwargs)
        except RuntimeError as error:
            if str(error).startswith(FREED_START) and len(error.args) == 1:
                error.args = ("\n".join([str(error), *_diagnosis(roots, call)]),)
            raise
        retain = arguments.get("retain_graph")
        _stamp(roots, call, freed=not (arguments.get("create_graph") if retain is None else retain))
        _warn_about_growing_tensors()
        return result

    return watched


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


def _next_sequence_nr(torch):
    """The sequence number the next node will get: every node recorded so far has a lower one."""
    with torch.inference_mode(False), torch.enable_grad():
        probe = torch.empty(0, device="cpu", requires_grad=True).view(0)
    return probe.grad_fn._sequence_nr()


def _stamp(roots, call, freed):
    """Mark the nodes `call` went back through (and freed), and the nodes it started from."""
    for node in roots:
        node.metadata[ROOT] = call
    key, stack = FREED if freed else THROUGH, list(roots)
    while stack:
        node = stack.pop()
        metadata = node.metadata
        if key in metadata or hasattr(node, "variable"):  # seen, or a leaf's AccumulateGrad
            continue
        metadata[key] = call
        metadata.setdefault(THROUGH, call)
        stack.extend(n for n, _ in node.next_functions if n is not None)


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
        freed = [attribute for attribute, _, _, storage in node_saved(node) if storage is None]
        if freed and (FREED in node.metadata or not stamped):
            found.append((node, freed[0]))
        else:
            stack.extend(n for n, _ in node.next_functions if n is not None)
    return found


def _newest(freed):
    """The (node, attribute) torch meets first: among ready nodes it runs the newest first."""
    return max(freed, key=lambda pair: pair[0]._sequence_nr())


def _diagnosis(roots, call):
    """The lines the freed-graph error of `call` gains."""
    freed = _freed_frontier(roots, stamped=True)
    if not freed:
        return [
            "",
            f"Diagnosis ({TITLE}):",
            f"- The failing call is {call}. The doctor saw no earlier call free a saved tensor of"
            " its graph: that call was made before the doctor was on (or a custom"
            " autograd.Function saved the tensor, which the doctor cannot see).",
            _START_EARLIER,
        ]
    node, attribute = _newest(freed)
    freed_by = node.metadata[FREED]
    lines = diagnose.head_lines(TITLE, node.name(), f"`{attribute}`", freed_by, call)
    return lines + _linking(roots, freed_by, node)


_START_EARLIER = (
    "- Start the doctor before the loop (`with mini_autograd.doctor():`) to learn which tensor"
    " links the graphs."
)


def _linking(roots, earlier, failing=None, only=lambda node: True):
    """What links the graph of `roots` to the one `earlier` went through, and the fixes."""
    import torch

    olds = diagnose.carried_nodes(
        roots, lambda n: n._sequence_nr() < earlier.sequence_mark, failing
    )
    olds = [node for node in olds if only(node)]
    named = diagnose.named_tensors(torch.Tensor, _skipped())
    groups = diagnose.carried_groups(
        olds, named, _computed_from, torch.nn.Parameter, lambda node: (None, "")
    )
    return diagnose.linking_lines(groups, earlier, "torch")


def _computed_from(later, old):
    """Whether node `later` plays the part of `old` one iteration on: same op, made from it."""
    return (
        later is not old
        and later.name() == old.name()
        and diagnose.output_numbers(later) == diagnose.output_numbers(old)
        and diagnose.reaches(later, old)
    )


def _explain(loss):
    import torch

    if not isinstance(loss, torch.Tensor):
        raise TypeError(
            "doctor.explain() takes the torch tensor you would call backward on, not "
            f"{type(loss).__name__} (for mini_autograd's own tensors, use ma.diagnosis_mode())"
        )
    named = diagnose.named_tensors(torch.Tensor, _skipped())
    name = next((f"`{n}`" for n, t in named if t is loss), "this tensor")
    if loss.grad_fn is None:
        return Explanation([f"{name} has no graph: it is a leaf, or does not require grad."], False)
    roots = [loss.grad_fn]
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
        return Explanation(lines + _linking(roots, earlier, node), True)
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
    return Explanation(
        lines + _linking(roots, earlier, only=lambda n: THROUGH in n.metadata), False
    )


def _warn_about_growing_tensors():
    """Warn once per name about a tensor that holds the losses of earlier backward calls."""
    import torch

    frame = next(diagnose.user_frames(_skipped()), None)
    if frame is None:
        return
    # The loop's own frame only: a search of every frame at every backward call costs too much.
    for name, tensor in diagnose.named_tensors(torch.Tensor, frames=[frame]):
        if name in doctor._warned or tensor.grad_fn is None:
            continue
        calls = _losses_held(tensor.grad_fn)
        sites = [call.site for call in calls]
        site = max(set(sites), key=sites.count, default=None)
        if sites.count(site) < 2:  # one iteration's losses (or none): nothing keeps growing
            continue
        doctor._warned.add(name)
        numbers = sorted(call.number for call in calls if call.site == site)
        text = (
            f"{TITLE}: `{name}` keeps growing across iterations: it holds the losses of backward "
            f"calls #{', #'.join(map(str, numbers))} at {site}, each with its graph, and one more "
            "with every iteration, so memory keeps growing. To add up losses to print, add "
            f"numbers: `{name} += loss.item()` (or `loss.detach()`)."
        )
        warnings.warn_explicit(
            text,
            UserWarning,
            frame.f_code.co_filename,
            frame.f_lineno,
            module=frame.f_globals.get("__name__"),
        )


def _losses_held(start):
    """The backward calls whose starting node the graph from `start` holds (a short search)."""
    calls, seen, queue = [], set(), deque([start])
    while queue and len(seen) < GROWTH_SEARCH:
        node = queue.popleft()
        if node in seen:
            continue
        seen.add(node)
        call = node.metadata.get(ROOT)
        if call is not None:
            calls.append(call)
        else:
            queue.extend(n for n, _ in node.next_functions if n is not None)
    return calls
