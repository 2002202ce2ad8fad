"""The build track's exercises as data: for each, the programs that check it and what to say.

Every program is `program(lib, see)` and runs unchanged on torch and on the learner's engine
(`course/track.py` runs and compares them). Its docstring's first line names it in messages.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Task:
    """One build-track exercise: where it lives, the programs that check it, and what to say."""

    id: str
    title: str
    where: str  # the function(s) the learner fills in
    programs: list[Callable]
    hint: str
    # extra words for a kind of difference ("value", "graph", "raised"...) or for one program,
    # by its function's name (which wins)
    advice: dict[str, str] = field(default_factory=dict)


X = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
W = [[0.2, -0.4], [0.7, 0.1], [-0.3, 0.5]]
ROW = [1.0, -2.0, 0.5]


def leaf(lib, values=X):
    """A float32 leaf that requires grad."""
    return lib.tensor(values, requires_grad=True)


# --- Chapter 01: recording --------------------------------------------------------------------


def constants_and_no_grad(lib, see):
    """constants, no_grad and detach"""
    x, c = leaf(lib), lib.tensor(X)
    for label, y in [("c * 2", c * 2), ("x.detach() + 1", x.detach() + 1), ("x * c", x * c)]:
        see(f"({label}).requires_grad", y.requires_grad)
        see(f"({label}).grad_fn is None", y.grad_fn is None)
    with lib.no_grad():
        y = x * 2
    see("x * 2 under no_grad: requires_grad", y.requires_grad)
    see("x * 2 under no_grad: grad_fn is None", y.grad_fn is None)


def zero_and_0d_inputs(lib, see):
    """x * 0 saves the number 0, and a 0-d tensor times itself"""
    x = leaf(lib, [1.0, 2.0])
    (x * 0).sum().backward()
    see("x.grad after (x * 0).sum().backward()", x.grad)
    s = lib.tensor(3.0, requires_grad=True)
    (s * s).backward()
    see("s.grad, s a 0-d tensor, after (s * s).backward()", s.grad)


def shared_leaf(lib, see):
    """a leaf used twice, a constant input, a non-leaf used twice"""
    x, c = leaf(lib), lib.tensor(X)
    h = x * c
    y = h * h + x
    see.graph("the graph of h * h + x", y)
    see("the input_nr of each edge of y", str([nr for _, nr in y.grad_fn.next_functions]))
    see("the input_nr of each edge of x * c", str([nr for _, nr in h.grad_fn.next_functions]))
    a, b = x * 2, x * 3
    see(
        "one AccumulateGrad per leaf",
        a.grad_fn.next_functions[0][0] is b.grad_fn.next_functions[0][0],
    )


def numbers_as_inputs(lib, see):
    """numbers on either side: x + 2, 2 * x, 1 - x, x / 4"""
    x = leaf(lib)
    y = ((x + 2) * (2 * x) + (1 - x) / 4).sum()
    see.graph("the graph of ((x + 2) * (2 * x) + (1 - x) / 4).sum()", y)
    y.backward()
    see("x.grad", x.grad)
    see("x.grad's dtype (a number must not change it)", str(x.grad.dtype).replace("torch.", ""))
    for label, y in [("x * 4", x * 4), ("x * 2.5", x * 2.5)]:
        see(f"({label}).grad_fn._saved_other, a wrapped number", y.grad_fn._saved_other)


def detach_shares_memory(lib, see):
    """detach shares memory and the version counter"""
    x = leaf(lib)
    y = x * 2
    d = y.detach()
    see("d.requires_grad", d.requires_grad)
    see("d.grad_fn is None", d.grad_fn is None)
    see("d.is_leaf", d.is_leaf)
    z = y * y
    d.zero_()
    see("y after d.zero_()", y)
    see("y._version after d.zero_()", y._version)
    see.error("backward after d.zero_()", lambda: z.sum().backward())


def recorded_graph(lib, see):
    """a small network: matrix product, tanh, mean"""
    x, w = leaf(lib), leaf(lib, W)
    y = (x @ w).tanh()
    loss = y.mean()
    see("loss", loss)
    see("y.requires_grad", y.requires_grad)
    see("y.is_leaf", y.is_leaf)
    see("x.is_leaf", x.is_leaf)
    see.graph("the graph of (x @ w).tanh().mean()", loss)


def grad_mode_nesting(lib, see):
    """no_grad nested, enable_grad inside it, and an error inside no_grad"""
    x = leaf(lib)
    with lib.no_grad():
        with lib.no_grad():
            pass
        see("inside no_grad after a nested one", lib.is_grad_enabled())
        with lib.enable_grad():
            see("(x * 2).requires_grad under enable_grad", (x * 2).requires_grad)
        see("(x * 2).requires_grad back in no_grad", (x * 2).requires_grad)
    see("grad mode after no_grad", lib.is_grad_enabled())
    got_out = False
    try:
        with lib.no_grad():
            raise KeyError("inside")
    except KeyError:
        got_out = True
    see("an error inside no_grad goes on up (no_grad does not swallow it)", got_out)
    see("grad mode after an error inside no_grad", lib.is_grad_enabled())

    @lib.no_grad()
    def double(t):
        return t * 2

    see("(x * 2).requires_grad in a function decorated with no_grad", double(x).requires_grad)

    @lib.no_grad()
    def countdown(n):
        return x * 2 if n == 0 else countdown(n - 1)

    see("a recursive function decorated with no_grad records nothing", countdown(3).requires_grad)
    see("grad mode after it returns", lib.is_grad_enabled())

    @lib.no_grad()
    def fails():
        raise KeyError("inside")

    try:
        fails()
    except KeyError:
        pass
    see("grad mode after an error in a function decorated with no_grad", lib.is_grad_enabled())


def enable_grad_as_a_decorator(lib, see):
    """a function decorated with enable_grad records, even when called inside no_grad"""
    x = leaf(lib)

    @lib.enable_grad()
    def double(t):
        """Twice t."""
        return t * 2

    see("the decorated function's name and docstring", f"{double.__name__}: {double.__doc__}")

    with lib.no_grad():
        see("(x * 2).requires_grad in a function decorated with enable_grad, called in no_grad",
            double(x).requires_grad)  # fmt: skip
        see("grad mode after it returns", lib.is_grad_enabled())


# --- Chapter 02: backward ---------------------------------------------------------------------


def mul_broadcast(lib, see):
    """x * w, w broadcast along the rows"""
    x, w = leaf(lib), leaf(lib, ROW)
    (x * w * x).sum().backward()
    see("x.grad", x.grad)
    see("w.grad", w.grad)


def mul_twice_differentiated(lib, see):
    """the second derivative of x * w * x, through MulBackward0's own formula"""
    x, w = leaf(lib), leaf(lib, ROW)
    (gx,) = lib.autograd.grad((x * w * x).sum(), x, create_graph=True)
    see("d(x * w * x)/dx", gx)
    see("d(sum of that)/dw", lib.autograd.grad(gx.sum(), w))
    v = leaf(lib, [ROW])  # (1, 3): broadcast along its dimension of size 1
    (gv,) = lib.autograd.grad((x * v * x).sum(), v, create_graph=True)
    see("d(x * v * x)/dv, v of shape (1, 3)", gv)
    see("d(sum of that)/dx", lib.autograd.grad(gv.sum(), x))


def gradients_under_detaching_hooks(lib, see):
    """under hooks that save detached tensors, each input still gets its gradient"""
    x, y = leaf(lib, [1.0, 2.0]), leaf(lib, [3.0, 4.0])
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
        z = (x * y).sum()
    z.backward()
    see("x.grad", x.grad)
    see("y.grad", y.grad)


def mul_with_constant(lib, see):
    """x * c with a constant c, and 3 * x"""
    x, c = leaf(lib), lib.tensor(W[0] + [1.0])
    ((x * c[:3]) * 3 * x).mean().backward()
    see("x.grad", x.grad)


def matrix_products(lib, see):
    """x @ w and a constant on either side"""
    x, w, c = leaf(lib), leaf(lib, W), lib.tensor(W)
    ((x @ w).tanh() @ lib.tensor([[1.0], [-2.0]])).sum().backward()
    see("x.grad", x.grad)
    see("w.grad", w.grad)
    x2 = leaf(lib)
    product = x2 @ c
    seen = []
    product.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(grad_inputs))
    product.sum().backward()
    see("x.grad with a constant on the right", x2.grad)
    see("the grad_inputs of x @ c", seen[0])
    w2 = leaf(lib, W)
    (lib.tensor(X) @ w2).sum().backward()
    see("w.grad with a constant on the left", w2.grad)


def _diamond(lib):
    x = leaf(lib)
    h = x.exp()
    return x, (h * 2 + h.tanh() * h).sum()


def _chain(lib):
    x = y = leaf(lib, [0.5])
    for _ in range(3000):
        y = y * 1.0001
    return x, y.sum()


def _see_counts(see, loss):
    """Show the dependency counts of the graph behind `loss`."""
    see.counts(
        "the dependency counts", see.engine.compute_dependencies([loss.grad_fn]), [loss.grad_fn]
    )


def diamond_counts(lib, see):
    """a diamond: one tensor feeds two branches that meet again"""
    _see_counts(see, _diamond(lib)[1])


def diamond_backward(lib, see):
    """backward through a diamond: one tensor feeds two branches that meet again"""
    x, loss = _diamond(lib)
    see.order("the backward order", loss)
    see("x.grad", x.grad)


def reached_again_before_it_ran(lib, see):
    """h + h.tanh(): exp's node waits on the stack while another path reaches it again"""
    x = leaf(lib, [0.5, 1.0])
    h = x.exp()
    loss = (h + h.tanh()).sum()
    _see_counts(see, loss)
    loss.backward()
    see("x.grad", x.grad)


def deep_counts(lib, see):
    """the counts of a chain of 3,000 operations (deeper than Python's recursion limit)"""
    _see_counts(see, _chain(lib)[1])


def deep_backward(lib, see):
    """backward through a chain of 3,000 operations (deeper than Python's recursion limit)"""
    x, loss = _chain(lib)
    loss.backward()
    see("x.grad", x.grad)


def counts_of_shared_leaf(lib, see):
    """(x * x + x).sum(): three edges into one AccumulateGrad"""
    x = leaf(lib)
    loss = (x * x + x).sum()
    roots = (node for node in [loss.grad_fn])  # a generator: it can be read only once
    see.counts("the dependency counts", see.engine.compute_dependencies(roots), [loss.grad_fn])
    twice = see.engine.compute_dependencies([loss.grad_fn, loss.grad_fn])
    see.counts("the counts when the same root is given twice", twice, [loss.grad_fn])


def branches_and_order(lib, see):
    """two losses from a shared trunk, backward from their sum"""
    x, w = leaf(lib), leaf(lib, W)
    h = (x @ w).sigmoid()
    loss = (h * h).sum() + (h.exp() - x.sum()).mean()
    see.order("the backward order", loss)
    see("x.grad", x.grad)
    see("w.grad", w.grad)


def accumulation(lib, see):
    """two backward calls add into .grad, which stays the same tensor"""
    x = leaf(lib)
    loss = (x * x).sum()
    accumulator = loss.grad_fn.next_functions[0][0].next_functions[0][0]
    see("x's AccumulateGrad: its .variable is x", accumulator.variable is x)
    loss.backward(retain_graph=True)
    first, memory = x.grad, x.grad.detach()  # memory: a tensor sharing .grad's numbers
    see("x.grad after one backward", x.grad)
    loss.backward()
    see("x.grad after two", x.grad)
    see("a tensor that shares .grad's memory, after the second backward", memory)
    see("x.grad is still the same tensor", x.grad is first)
    see("x.grad.requires_grad", x.grad.requires_grad)


def accumulation_of_two_leaves(lib, see):
    """(a + b).sum() twice: both leaves get the same gradient tensor from AddBackward0"""
    a, b = leaf(lib), leaf(lib)
    loss = (a + b).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    see("a.grad after two backward calls", a.grad)
    see("b.grad after two backward calls", b.grad)


def second_derivative_after_two_backward_calls(lib, see):
    """two backward(create_graph=True) calls, then the derivative of the accumulated .grad"""
    x = leaf(lib)
    (x * x * x).sum().backward(create_graph=True)
    (x * x * x).sum().backward(create_graph=True)
    see("x.grad", x.grad)
    see("d(x.grad.sum())/dx", lib.autograd.grad(x.grad.sum(), x))


def tensor_hook(lib, see):
    """a hook on an intermediate tensor doubles its gradient"""
    x = leaf(lib)
    h = x.tanh()
    h.register_hook(lambda g: g * 2)
    (h * x).sum().backward()
    see("x.grad", x.grad)


def accumulation_under_create_graph(lib, see):
    """backward(create_graph=True) keeps the accumulated gradient in the graph"""
    x = leaf(lib)
    (x * x * x).sum().backward(create_graph=True)
    see("x.grad.requires_grad", x.grad.requires_grad)
    see("x.grad", x.grad)


def first_gradient_copied_under_create_graph(lib, see):
    """under create_graph too, each leaf's first .grad is a copy of its own, recorded"""
    a, b, w = leaf(lib), leaf(lib), leaf(lib)
    g = lib.autograd.grad((w * w).sum(), w, create_graph=True)[0]  # 2 * w, in the graph
    (a + b).backward(g, create_graph=True)  # AddBackward0 sends g itself to both leaves
    see("a.grad is b.grad", a.grad is b.grad)
    see("a.grad is g", a.grad is g)
    see.graph("the graph of a.grad", a.grad)


# --- Chapter 03: saved tensors ----------------------------------------------------------------


def what_mul_saves(lib, see):
    """x * w, x * c, c * x: conditional saving"""
    x, w, c = leaf(lib), leaf(lib, X), lib.tensor(X)
    see.graph("the graph of x * w", x * w)
    see.graph("the graph of x * c", x * c)
    see.graph("the graph of c * x", c * x)
    see.graph("the graph of x * 4", x * 4)
    see("(x * c).grad_fn._saved_other", (x * c).grad_fn._saved_other)
    see("(x * c).grad_fn._saved_self, not kept", (x * c).grad_fn._saved_self)
    see("(x * w).grad_fn._saved_self", (x * w).grad_fn._saved_self)
    a = x * 2
    product = a * w
    see("(a * w).grad_fn._saved_self is a itself", product.grad_fn._saved_self is a)
    see("(a * w).grad_fn._saved_other is w itself", product.grad_fn._saved_other is w)
    see("a, saved, keeps its grad_fn", product.grad_fn._saved_self.grad_fn is a.grad_fn)
    see.error("x * a tensor whose shape does not broadcast", lambda: x * lib.tensor([1.0, 2.0]))


def exp_from_result(lib, see):
    """exp saves its result and its backward uses it"""
    x = leaf(lib)
    y = (x * 0.5).exp()
    see.graph("the graph of (x * 0.5).exp()", y)
    see("y.grad_fn._saved_result", y.grad_fn._saved_result)
    (y * y).sum().backward()
    see("x.grad", x.grad)


def version_errors(lib, see):
    """changing a saved tensor in place after it was saved"""
    x = leaf(lib)
    y = x.exp()
    loss = y.sum()
    y.add_(1)
    see.error("y = x.exp(), then y.add_(1), then backward", lambda: loss.backward())
    a = x * 2
    b = a * a
    a.add_(1)
    see.error("backward after a.add_(1), a = x * 2 saved by a * a", lambda: b.sum().backward())
    x2, w = leaf(lib), leaf(lib, X)
    z = (x2 * w).sum()
    with lib.no_grad():
        w.mul_(2)
    see.error("backward after w.mul_(2) under no_grad", lambda: z.backward())
    x3 = leaf(lib)
    ok = (x3 * x3).sum()
    with lib.no_grad():
        x3.detach()  # no change: no error
    see.error("backward with nothing changed", lambda: ok.backward())


def second_derivative_through_detaching_hooks(lib, see):
    """a second derivative through hooks that keep detached copies"""
    x = leaf(lib, [1.0, 2.0])
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
        y = x.exp()
        total = (y + x * x + (x * 3).tanh()).sum()
    result = y.grad_fn._saved_result
    see("y.grad_fn._saved_result: requires_grad", result.requires_grad)
    see("y.grad_fn._saved_result: its grad_fn is y's node", result.grad_fn is y.grad_fn)
    (g,) = lib.autograd.grad(total, x, create_graph=True)
    see("the gradient, with its graph", g)
    g.sum().backward()
    see("x.grad: the second derivative", x.grad)


def pack_hooks(lib, see):
    """saved_tensors_hooks: every saved tensor goes through pack and unpack"""
    packed = []

    def pack(t):
        packed.append(tuple(t.shape))
        return ("packed", t * 1)  # a copy, made outside the graph, in a wrapper

    def unpack(wrapped):
        return wrapped[1]

    x, w = leaf(lib), leaf(lib, W)
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x @ w).tanh()
        loss = (y * x.sum()).sum()
    see("the shapes pack was called with", str(sorted(packed)))
    see("y.grad_fn._saved_result", y.grad_fn._saved_result)
    loss.backward()
    see("x.grad", x.grad)
    see("w.grad", w.grad)
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        twice = (x.exp() * 2).sum()
    twice.backward()
    see.error("a second backward through hooked saved tensors", lambda: twice.backward())
    x2 = leaf(lib)
    z = x2 * x2
    see("without hooks, _saved_self is the input itself", z.grad_fn._saved_self is x2)


def numbers_are_not_packed(lib, see):
    """saved_tensors_hooks: a number the program wrote (x * 2, x / 4) is saved but never packed"""
    packed = []
    x = leaf(lib)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: packed.append(tuple(t.shape)) or t,
                                                lambda t: t):  # fmt: skip
        doubled = x * 2
        loss = (doubled.exp() + x / 4).sum()
    see("the shapes pack was called with in (x * 2).exp() + x / 4", str(sorted(packed)))
    see("(x * 2).grad_fn._saved_other.item()", doubled.grad_fn._saved_other.item())
    loss.backward()
    see("x.grad", x.grad)


def nested_hooks(lib, see):
    """saved_tensors_hooks nested: the innermost pair packs, and the outer one again after it"""
    x2 = leaf(lib)
    calls = []
    outer = lib.autograd.graph.saved_tensors_hooks(
        lambda t: calls.append("outer") or t, lambda t: t
    )
    inner = lib.autograd.graph.saved_tensors_hooks(
        lambda t: calls.append("inner") or t, lambda t: t
    )
    with outer:
        with inner:
            x2.exp()
        x2.tanh()
    see("which pack hook saved, nested", " ".join(calls))


def hooks_as_a_block(lib, see):
    """saved_tensors_hooks: an error inside goes on up; a node keeps what pack made, not the tensor"""
    packed = []
    counting = lib.autograd.graph.saved_tensors_hooks(lambda t: packed.append(1) or t, lambda t: t)
    x = leaf(lib, [1.0, 2.0])
    with counting:
        inside = x * x
    after = x * x
    see("pack calls for x * x inside the block, then x * x after it", len(packed))
    del inside, after
    copies = lib.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t)
    came_through = False
    try:
        with copies:
            raise KeyError("inside")
    except KeyError:
        came_through = True
    see("an error inside saved_tensors_hooks goes on up", came_through)
    with copies:
        y = x * 2
        z = y * y  # saves two packed copies of y, not y
    alive = weakref.ref(y)
    del y
    see("y is freed once only its packed copies are kept", alive() is None)
    z.sum().backward()
    see("x.grad, through the packed copies", x.grad)


def saved_output_without_a_cycle(lib, see):
    """A node that saves its own output (exp's result) keeps no reference cycle with it"""
    x = leaf(lib)
    y = x.exp()
    result = y.grad_fn._saved_result
    see("y.grad_fn._saved_result, read back", result)
    see(
        "it requires grad, and its grad_fn is y's node",
        (result.requires_grad, result.grad_fn is y.grad_fn),
    )
    y.add_(1)
    see("after y.add_(1), its version", result._version)
    del result
    alive = weakref.ref(y)
    gc.disable()  # only reference counting frees now: a cycle would keep y
    try:
        del y
        see("y is freed as soon as its last name goes", alive() is None)
    finally:
        gc.enable()


def a_saved_tensor_keeps_no_node(lib, see):
    """what a node saves does not hold the node: the graph goes as soon as its last name goes"""
    h = leaf(lib) * 2
    loss = (h * h).sum()  # MulBackward0 saves h, twice
    alive = weakref.ref(h)
    gc.disable()  # only reference counting frees now: a cycle would keep the node, and h
    try:
        del h, loss
        see("h, saved by h * h, is freed as soon as the loss goes", alive() is None)
    finally:
        gc.enable()


def pack_runs_outside_the_graph(lib, see):
    """pack runs with grad mode off, and it is given every tensor saved, constants included"""
    modes, given = [], []

    def pack(t):
        modes.append(lib.is_grad_enabled())
        given.append(t.tolist())
        return t * 1  # a copy, made in pack

    x, c = leaf(lib, [1.0, 2.0]), lib.tensor([3.0, 4.0])
    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = c * x  # saves c, a constant: x's gradient needs it
        z = (x * x).sum()
    see("grad mode inside pack, at each call", str(modes))
    see("what pack was given", str(given))
    see(
        "(c * x).grad_fn._saved_self, pack's copy: requires_grad",
        y.grad_fn._saved_self.requires_grad,
    )
    z.backward()
    see("x.grad after backward through packed copies", x.grad)


def post_hook_sees_tuples(lib, see):
    """a node's post-hook is given its gradients as tuples, as every node returns them"""
    x, w = leaf(lib, ROW), leaf(lib, ROW)
    given = []
    y = x * w
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: given.append(grad_inputs))
    y.sum().backward()
    see("the grad_inputs of x * w, given to a post-hook, are a tuple", isinstance(given[0], tuple))


def root_below_another_root(lib, see):
    """backward from two roots, one of them computed from the other"""
    x = leaf(lib, [1.0, 2.0])
    y = (x * x).sum()
    z = y * 3
    lib.autograd.backward([z, y])
    see("x.grad after backward([z, y]), z = y * 3", x.grad)
    y = (x * x).sum()
    see("grad([y, y * 3], x), one root below the other", lib.autograd.grad([y, y * 3], [x]))


def retained_grad_is_its_own(lib, see):
    """a retained gradient is the tensor's own: changing the gradient handed to backward later
    does not change it, under create_graph it is a recorded copy, and a second one makes a new
    tensor"""
    x = leaf(lib, [1.0, 2.0])
    z = x * 2
    z.retain_grad()
    start = lib.tensor([1.0, 1.0])
    z.backward(start)
    start.mul_(5)
    see("z.grad after the gradient given to backward was multiplied by 5", z.grad)
    y = x * 2
    y.retain_grad()
    (y * y).sum().backward(create_graph=True)
    see.graph("the graph of y.grad after backward(create_graph=True), y = x * 2", y.grad)
    w = x * 3
    w.retain_grad()
    loss = (w * w).sum()
    loss.backward(retain_graph=True)
    first = w.grad
    loss.backward()
    see("w.grad after two backward calls", w.grad)
    see("the first w.grad, after the second backward", first)
    see("w.grad is still the first tensor", w.grad is first)


def accumulation_is_in_place(lib, see):
    """adding into .grad changes it in place: its version goes up, as with any in-place change"""
    x, w = leaf(lib), leaf(lib)
    loss = (x * 3).sum()
    loss.backward(retain_graph=True)
    y = (w * x.grad).sum()  # saves x.grad, for w's gradient
    loss.backward(retain_graph=True)
    loss.backward()
    see("x.grad._version after the third backward", x.grad._version)
    see.error("y.backward(), y saved x.grad before two more backward calls", lambda: y.backward())


def saved_output_shares_memory(lib, see):
    """a node keeps its output's own memory: a change made through .data (unversioned) shows"""
    x = leaf(lib, [0.0, 1.0])
    y = x.exp()
    y.data.add_(1)  # .data shares the memory but not the version counter
    y.sum().backward()
    see("x.grad after y.data.add_(1), y = x.exp()", x.grad)


def in_place_under_no_grad(lib, see):
    """an in-place operation under no_grad records nothing, and the tensor keeps its history"""
    x = leaf(lib, [1.0, 2.0])
    y = x * 2
    with lib.no_grad():
        y.add_(1)
    see("y.requires_grad after y.add_(1) under no_grad", y.requires_grad)
    (y * y).sum().backward()
    see("x.grad", x.grad)


# --- Chapter 04: freeing ----------------------------------------------------------------------


def freed_after_backward(lib, see):
    """after backward the saved tensors are freed; with retain_graph they stay"""
    x, w = leaf(lib), leaf(lib, W)
    loss = (x @ w).tanh().sum()
    loss.backward()
    see.graph("the graph after backward", loss)
    x2, w2 = leaf(lib), leaf(lib, W)
    kept = (x2 @ w2).tanh().sum()
    kept.backward(retain_graph=True)
    see.graph("the graph after backward(retain_graph=True)", kept)


def backward_twice(lib, see):
    """the seed: two losses from one graph, backward twice"""
    x = leaf(lib, [[1.0, -2.0, 0.5, 3.0]])
    z = x**2 * 4
    loss1, loss2 = z.mean(), z.sum()
    loss1.backward()
    see.error("loss2.backward() after loss1.backward()", lambda: loss2.backward())
    y = x.exp()
    y.sum().backward()
    see.error("reading y.grad_fn._saved_result after backward", lambda: y.grad_fn._saved_result)
    q = x + 1
    q.sum().backward()
    see.error("a second backward through nodes that save nothing", lambda: q.sum().backward())
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
        hooked = (x * x).sum()
    hooked.backward()
    see.error("a second backward through tensors saved under hooks", lambda: hooked.backward())


def retain_default(lib, see):
    """backward(create_graph=True) keeps the graph; autograd.grad too"""
    x = leaf(lib)
    loss = (x.tanh() * x).sum()
    loss.backward(create_graph=True)
    see.error("a second backward after backward(create_graph=True)", lambda: loss.backward())
    see.graph("the graph after both", loss)
    x2 = leaf(lib)
    loss2 = (x2.exp() * x2).sum()
    loss2.backward(retain_graph=False, create_graph=True)
    see.graph("after backward(retain_graph=False, create_graph=True)", loss2)


# --- Chapter 05: create_graph -----------------------------------------------------------------


def sigmoid_twice(lib, see):
    """second derivative of sigmoid, with an upstream gradient other than ones"""
    x = leaf(lib, [-2.0, -0.5, 0.0, 1.0, 3.0])
    v = lib.tensor([1.0, -2.0, 0.5, 3.0, -1.0])
    y = x.sigmoid()
    (g,) = lib.autograd.grad(y, x, grad_outputs=v, create_graph=True)
    see("d(v · sigmoid(x))/dx", g)
    see("its requires_grad", g.requires_grad)
    (g2,) = lib.autograd.grad(g.sum(), x)
    see("the second derivative", g2)
    x2 = leaf(lib, [0.3, -1.2])
    (x2.sigmoid() * 3).sum().backward()
    see("x.grad of (3 * sigmoid(x)).sum()", x2.grad)


def grad_function(lib, see):
    """autograd.grad returns the gradients and leaves .grad alone"""
    x, w = leaf(lib), leaf(lib, W)
    loss = (x @ w).tanh().sum()
    grads = lib.autograd.grad(loss, [x, w])
    see("the type of what autograd.grad returns", type(grads).__name__)
    see("the gradients", grads)
    see("x.grad after autograd.grad", x.grad)
    (gx,) = lib.autograd.grad((x @ w).sum(), x)
    see("w.grad after autograd.grad(..., x)", w.grad)
    see.graph("the graph after autograd.grad", loss)
    unused = leaf(lib)
    other = (x * 2).sum()
    see.error("a tensor not in the graph", lambda: lib.autograd.grad(other, [x, unused]))
    see.error(
        "a tensor that does not require grad", lambda: lib.autograd.grad(other, lib.tensor(X))
    )
    (gx,) = lib.autograd.grad((x * x * x).sum(), x, create_graph=True)
    see("second derivative through grad(create_graph=True)", lib.autograd.grad(gx.sum(), x))


def grad_of_intermediate(lib, see):
    """autograd.grad of an intermediate tensor runs only the nodes above it; what it captures"""
    x, w = leaf(lib), leaf(lib, W)
    h = (x @ w).tanh()
    loss = (h * h).sum()
    (gh,) = lib.autograd.grad(loss, h)
    see("d loss / d h", gh)
    see.graph("the graph afterwards (nodes below h did not run)", loss)
    see("x.grad", x.grad)
    h = (x @ w).tanh()
    see("d loss / d h and d loss / d x together", lib.autograd.grad((h * h).sum(), [h, x]))
    k = x * 2
    k.register_hook(lambda g: g * 10)
    see("d loss / d k when a hook on k multiplies its gradient by 10",
        lib.autograd.grad((k * k).sum(), k))  # fmt: skip
    see("d loss / d k and d loss / d x, the same hook on k (k's node runs, for x)",
        lib.autograd.grad((k * 3).sum(), [k, x]))  # fmt: skip
    m = x * 2
    m.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] * 10,))
    see("d loss / d m when a pre-hook of m's node multiplies its gradient by 10",
        lib.autograd.grad((m * 3).sum(), m))  # fmt: skip


def hessian_vector_product(lib, see):
    """a Hessian-vector product: grad of (grad · v)"""
    x = leaf(lib, [0.5, -1.0, 2.0])
    v = lib.tensor([1.0, 0.5, -1.0])
    (g,) = lib.autograd.grad((x.tanh() * x * x).sum(), x, create_graph=True)
    (hv,) = lib.autograd.grad((g * v).sum(), x)
    see("H v", hv)


# --- Chapters 06 and 07: a recurrent cell, the capstone's loss ---------------------------------

_RNG = np.random.default_rng(6)
W_IH, W_HH = (_RNG.standard_normal(s).astype(np.float32) * 0.5 for s in [(4, 3), (4, 4)])
B_IH, B_HH = _RNG.standard_normal((2, 4)).astype(np.float32) * 0.5


def rnn_sequence(lib, see):
    """an Elman RNN over 5 steps, its hidden state carried from step to step"""
    w_ih, w_hh = lib.tensor(W_IH, requires_grad=True), lib.tensor(W_HH, requires_grad=True)
    b_ih, b_hh = lib.tensor(B_IH, requires_grad=True), lib.tensor(B_HH, requires_grad=True)
    xs = np.linspace(-1, 1, 45, dtype=np.float32).reshape(5, 3, 3)
    xs = lib.tensor(xs, requires_grad=True)  # as under a stacked RNN, or an embedding
    h = lib.zeros(3, 4)
    for t in range(5):
        h = lib.rnn_tanh_cell(xs[t], h, w_ih, w_hh, b_ih, b_hh)
    see("the last hidden state", h)
    (h * h).sum().backward()
    for name, p in [("w_ih", w_ih), ("w_hh", w_hh), ("b_ih", b_ih), ("b_hh", b_hh), ("xs", xs)]:
        see(f"{name}.grad", p.grad)


def rnn_biases_left_out(lib, see):
    """one step without biases, then with only one of the two"""
    x = lib.tensor(X)
    w_ih, w_hh = lib.tensor(W_IH, requires_grad=True), lib.tensor(W_HH, requires_grad=True)
    see("h without biases", lib.rnn_tanh_cell(x, lib.zeros(2, 4), w_ih, w_hh))
    hx = lib.tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4))
    see("h with b_hh only", lib.rnn_tanh_cell(x, hx, w_ih, w_hh, None, lib.tensor(B_HH)))
    see("h with b_ih only", lib.rnn_tanh_cell(x, hx, w_ih, w_hh, lib.tensor(B_IH)))


def cross_entropy_values(lib, see):
    """cross-entropy of a batch of logits, large ones included"""
    for label, scale in [
        ("small logits", 1.0),
        ("large logits", 200.0),
        ("large negative logits", -500.0),
    ]:
        logits = lib.tensor(np.array(X, np.float32) * scale, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(logits, lib.tensor([2, 0]))
        see(f"the loss ({label})", loss)
        see(f"the loss's dtype ({label})", str(loss.dtype).replace("torch.", ""))
        loss.backward()
        see(f"logits.grad ({label})", logits.grad)
        see(f"logits.grad's dtype ({label})", str(logits.grad.dtype).replace("torch.", ""))


# --- Programs added so that plausible wrong answers fail the piece's own check ------------------


def freed_during_the_pass(lib, see):
    """each node's saved tensors are freed as soon as it has run, not at the end of backward"""
    x = leaf(lib, [1.0, 2.0])
    y = x.exp()
    t = y.tanh()
    above, read = t.grad_fn, []

    def read_above(grad_outputs):
        try:
            read.append("readable" if above._saved_result is not None else "None")
        except RuntimeError as error:
            read.append(str(error)[:50])

    y.grad_fn.register_prehook(read_above)
    t.sum().backward()
    see("tanh's saved result, read when the node below it starts", read[0])


class _Packed:
    """What a pack hook stores: a box around a copy, whose life the program can watch."""

    def __init__(self, tensor):
        self.tensor = tensor


def saved_values_read_and_released(lib, see):
    """packed values: not version-checked, released by backward; a plain one checked when kept"""
    x = leaf(lib, [1.0, 2.0])
    a = x * 1
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
        y = a * a  # saves packed copies of a
    a.add_(1)
    y.sum().backward()
    see("x.grad, a changed in place after a packed copy of it was saved", x.grad)
    boxes = []

    def pack(t):
        boxes.append(_Packed(t * 1))
        return boxes[-1]

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda box: box.tensor):
        z = (x.exp() * x).sum()
    alive = [weakref.ref(box) for box in boxes]
    boxes.clear()
    z.backward()
    see("the packed values are released by backward", all(r() is None for r in alive))
    e = x.exp()
    e.add_(1)
    see.error("backward(retain_graph=True) after e = x.exp() changed in place",
              lambda: e.sum().backward(retain_graph=True))  # fmt: skip


def one_element_outputs(lib, see):
    """one-element outputs of shape (1, 1) and (1,) start from ones of their own shape and dtype"""
    row, column, started = leaf(lib, [ROW]), leaf(lib, [[1.0], [2.0], [-1.0]]), []
    product = row @ column
    product.register_hook(lambda g: started.append(str(g.dtype).replace("torch.", "")))
    product.backward()
    see("column.grad after backward of a (1, 1) output", column.grad)
    see("the dtype of the starting gradient of a float32 output", started[0])
    x = leaf(lib, ROW)
    (x * x).sum(0, keepdim=True).backward()
    see("x.grad after backward of an output of shape (1,)", x.grad)
    loss, flags = (x * x).sum(), []
    loss.register_hook(lambda g: flags.append(g.requires_grad))
    loss.backward(create_graph=True)
    see("the starting gradient of backward(create_graph=True) requires grad", flags[0])


def refused_grad_keeps_the_graph(lib, see):
    """autograd.grad refused for an input that does not require grad leaves the graph unused"""
    x = leaf(lib)
    loss = (x * x).sum()
    see.error("grad of an input that does not require grad",
              lambda: lib.autograd.grad(loss, [x, lib.tensor(X)]))  # fmt: skip
    see.error("grad of an output and an input that both do not require grad",
              lambda: lib.autograd.grad(lib.tensor(X).sum(), lib.tensor(X)))  # fmt: skip
    see.error("grad of a non-scalar output, for an input that does not require grad",
              lambda: lib.autograd.grad(x * 2, lib.tensor(X)))  # fmt: skip
    see("the same graph, differentiated after that error", lib.autograd.grad(loss, x))


def same_input_twice(lib, see):
    """autograd.grad(loss, [x, x]): the same input asked for twice gets its gradient twice"""
    x = leaf(lib, [0.5, -1.0, 2.0])
    see("grad((x * x).sum(), [x, x])", lib.autograd.grad((x * x).sum(), [x, x]))
    h = x.tanh()
    see("grad((h * x).sum(), [h, x, h])", lib.autograd.grad((h * x).sum(), [h, x, h]))


def deep_grad(lib, see):
    """autograd.grad through a chain of 3,000 operations (deeper than Python's recursion limit)"""
    x, loss = _chain(lib)
    see("d loss / d x", lib.autograd.grad(loss, x))


def one_buffer_three_gradients(lib, see):
    """(u + v + u).sum(): u's node receives two gradients, v's one, all from the same tensor"""
    x = leaf(lib, [1.0, 2.0])
    u, v = x.exp(), x.tanh()
    (u + v + u).sum().backward()
    see("x.grad", x.grad)
    w = leaf(lib, [0.5, -1.0])
    a = w * 2
    ((a + a) * a).sum().backward()
    see("w.grad of ((a + a) * a).sum(), a = w * 2", w.grad)


def constant_first(lib, see):
    """a constant on the left: c * x, c + x, and an op whose only input needing grad is the last"""
    x, c = leaf(lib), lib.tensor(X)
    for label, y in [("c * x", c * x), ("c + x", c + x), ("2 - x", 2 - x)]:
        see(f"({label}).requires_grad", y.requires_grad)
        see.graph(f"the graph of {label}", y)


def broadcast_both_ways(lib, see):
    """broadcasting on either side: row * x, x * column, and a (1, 3) row against (2, 1)"""
    x, row, col = leaf(lib), leaf(lib, ROW), leaf(lib, [[2.0], [-1.0]])
    (row * x * col).sum().backward()
    see("x.grad", x.grad)
    see("row.grad (broadcast first operand)", row.grad)
    see("col.grad", col.grad)
    a, b = leaf(lib, [ROW]), leaf(lib, [[0.5], [2.0]])
    ((a * b) * (a + b) - b).sum().backward()
    see("a.grad, (1, 3) against (2, 1)", a.grad)
    see("b.grad, (2, 1) against (1, 3)", b.grad)
    s = leaf(lib, [[1.5]])
    (s * x).sum().backward()
    see("the gradient of a (1, 1) tensor times a (2, 3) one", s.grad)
    big = leaf(lib, np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4))
    middle = leaf(lib, np.linspace(0, 1, 8, dtype=np.float32).reshape(2, 1, 4))
    (big * middle * big).sum().backward()
    see("the gradient of a (2, 1, 4) tensor times a (2, 3, 4) one", middle.grad)
    four = leaf(lib, np.linspace(-1, 1, 48, dtype=np.float32).reshape(2, 2, 3, 4))
    column = leaf(lib, [[0.5], [-1.0], [2.0]])
    (four * column * four).sum().backward()
    see("the gradient of a (3, 1) tensor times a (2, 2, 3, 4) one", column.grad)


def mm_twice_differentiated(lib, see):
    """the second derivative through @, with the gradient of the first backward in the graph"""
    x, w = leaf(lib), leaf(lib, W)
    (gx,) = lib.autograd.grad(((x @ w) * (x @ w)).sum(), x, create_graph=True)
    see("d((x @ w)²)/dx", gx)
    see("d(sum of that)/dw", lib.autograd.grad((gx * gx).sum(), w))
    (gw,) = lib.autograd.grad(((x @ w).tanh()).sum(), w, create_graph=True)
    see("d(sum of d/dw)/dx", lib.autograd.grad(gw.sum(), x))


def sums_along_dimensions(lib, see):
    """sum() and sum(dim) with and without keepdim, a tuple of dims and a negative dim"""
    x = leaf(lib, np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 10)
    weights = lib.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4))
    for label, f in [
        ("sum()", lambda t: t.sum()),
        ("sum(1)", lambda t: t.sum(1)),
        ("sum(dim=0, keepdim=True)", lambda t: t.sum(dim=0, keepdim=True)),
        ("sum(dim=(0, 2))", lambda t: t.sum(dim=(0, 2))),
        ("sum(-1)", lambda t: t.sum(-1)),
        ("mean(1)", lambda t: t.mean(1)),
        ("mean(dim=(0, 2), keepdim=True)", lambda t: t.mean(dim=(0, 2), keepdim=True)),
    ]:
        x.grad = None
        y = f(x * weights)
        (y * y).sum().backward()
        see(f"x.grad through {label}", x.grad)
    x.grad = None
    x.sum().backward()
    see("x.grad of x.sum()", x.grad)
    x.grad = None
    x.mean(1).sum().backward()
    see("x.grad of x.mean(1).sum()", x.grad)
    empty = lib.zeros(0, 3, requires_grad=True)
    empty.mean(1).sum().backward()
    see("the gradient of an empty (0, 3) tensor through mean(1)", empty.grad)
    x.grad = None
    x.sum(dim=(0, 1)).sum().backward()
    see("x.grad of x.sum(dim=(0, 1)).sum()", x.grad)
    for label, f in [
        ("sum(1)", lambda t: (t.sum(1) ** 2).sum()),
        ("sum()", lambda t: (t * t).sum() ** 2),
        ("mean(1)", lambda t: (t.mean(1) ** 2).sum()),
    ]:
        (g,) = lib.autograd.grad(f(x), x, create_graph=True)
        see(f"the second derivative through {label}", lib.autograd.grad((g * weights).sum(), x))


def node_hooks(lib, see):
    """a node's pre-hook doubles the gradient; a post-hook sees grad_inputs, None included"""
    x = leaf(lib, ROW)
    y = x * 2
    y.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] * 2,))
    seen = []
    z = y * 3
    z.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(grad_inputs))
    z.sum().backward()
    see("x.grad with a doubling pre-hook on MulBackward0", x.grad)
    see("grad_inputs the post-hook of (y * 3) saw", seen[0] if seen else "no call")
    given = []
    q = x * 3
    q.grad_fn.register_hook(lambda grad_inputs, grad_outputs: given.append(grad_outputs))
    q.sum().backward()
    see("a post-hook's grad_outputs is a tuple", isinstance(given[0], tuple))
    see("the grad_outputs a post-hook saw", given[0])
    c = lib.tensor(ROW)
    w = leaf(lib, ROW)
    n = c * w
    n.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(grad_inputs))
    n.sum().backward()
    see("grad_inputs of c * w, c a constant", seen[-1])
    observed = []
    h = x.tanh()
    h.register_hook(lambda g: observed.append("h"))  # an observer: it returns None
    (h * h).sum().backward()
    see("x.grad after a hook that only observes", x.grad)
    l1, l2 = (x * 2).sum(), (x * 3).sum()
    l1.register_hook(lambda g: observed.append("l1"))
    l2.register_hook(lambda g: observed.append("l2"))
    lib.autograd.backward([l1, l2])
    see("the order two roots ran in", " ".join(observed))
    x2 = leaf(lib, ROW)
    m = x2.exp()
    m.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_inputs[0] * 0.5,))
    m.sum().backward()
    see("x.grad when a post-hook halves exp's gradient", x2.grad)


def exp_twice_differentiated(lib, see):
    """second derivatives through exp and tanh, which read their saved result"""
    x = leaf(lib, [0.5, -1.0, 2.0])
    (g,) = lib.autograd.grad(x.exp().sum(), x, create_graph=True)
    see("d exp(x)/dx", g)
    see("d²/dx² of exp", lib.autograd.grad(g.sum(), x))
    (g,) = lib.autograd.grad(x.tanh().sum(), x, create_graph=True)
    see("d²/dx² of tanh", lib.autograd.grad(g.sum(), x))


def tanh_from_result(lib, see):
    """tanh saves its result; its backward and a changed result"""
    x = leaf(lib)
    y = x.tanh()
    see.graph("the graph of x.tanh()", y)
    (y * x).sum().backward()
    see("x.grad", x.grad)


def hooked_formulas(lib, see):
    """exp and tanh under saved_tensors_hooks that store a wrapped, scaled copy"""
    x = leaf(lib, [0.5, -1.0, 2.0])
    with lib.autograd.graph.saved_tensors_hooks(lambda t: [t * 1], lambda box: box[0]):
        loss = (x.exp() + x.tanh()).sum()
    loss.backward()
    see("x.grad", x.grad)


def in_place_on_a_copy(lib, see):
    """y = x * 2; y.add_(1); then y * y: saved after the change, so backward works"""
    x = leaf(lib, ROW)
    y = x * 2
    shared = y.detach()
    y.add_(1)
    (y * y).sum().backward()
    see("x.grad", x.grad)
    see("y.detach(), taken before y.add_(1), afterwards", shared)


def in_place_on_a_leaf(lib, see):
    """x.add_(1) on a leaf that requires grad: refused, except under no_grad"""
    x = leaf(lib, ROW)
    see.error("x.add_(1) on a leaf that requires grad", lambda: x.add_(1))
    with lib.no_grad():
        x.add_(1)
    see("x after x.add_(1) under no_grad", x)


def version_errors_float64(lib, see):
    """the version error of a float64 vector and of a saved leaf"""
    x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
    y = x.exp()
    y.add_(1)
    see.error("a float64 result changed in place", lambda: y.sum().backward())
    c = lib.tensor([[1.0, 2.0]], dtype=lib.float64)
    z = (c * x[:2]).sum()
    with lib.no_grad():
        see("c.add_(1) returns c itself", c.add_(1) is c)
        c.add_(1)
    see("c.requires_grad after add_ under no_grad", c.requires_grad)
    see.error("a saved leaf changed twice", lambda: z.backward())


def grad_mode_in_backward(lib, see):
    """grad mode inside backward follows create_graph, and comes back after, even on an error"""
    x = leaf(lib, ROW)
    modes = []
    y = x * 3
    y.register_hook(lambda g: modes.append(lib.is_grad_enabled()))
    y.sum().backward()
    y2 = x * 3
    y2.register_hook(lambda g: modes.append(lib.is_grad_enabled()))
    y2.sum().backward(create_graph=True)
    see("grad mode inside backward, then inside backward(create_graph=True)", str(modes))
    with lib.no_grad():
        y3 = x * 1
    see("y3.requires_grad", y3.requires_grad)
    z = (x * x).sum()
    z.backward()
    see.error("a second backward", lambda: z.backward())
    see("grad mode after a failed backward", lib.is_grad_enabled())
    a = leaf(lib, ROW)
    (a * a).sum().backward(retain_graph=False, create_graph=False)
    see("grad mode after all that", lib.is_grad_enabled())
    loss, loss2 = (a * a).sum(), (a * a).sum()
    with lib.no_grad():
        loss.backward()
        see("grad mode after a backward called inside no_grad", lib.is_grad_enabled())
        loss2.backward(create_graph=True)
        see("grad mode after backward(create_graph=True) inside no_grad", lib.is_grad_enabled())


def roots_given_twice(lib, see):
    """backward([l, l]) and backward of two losses with explicit gradients"""
    a = leaf(lib, [1.0, 2.0])
    loss = (a * a).sum()
    lib.autograd.backward([loss, loss])
    see("a.grad after backward([loss, loss])", a.grad)
    b = leaf(lib, [1.0, 2.0])
    y = b * b
    lib.autograd.backward([y, y.sum()], [lib.tensor([1.0, -1.0]), None])
    see("b.grad after backward([y, y.sum()], [v, None])", b.grad)
    c, runs = leaf(lib, [1.0, 2.0]), []
    h = c * 2
    h.grad_fn.register_hook(lambda grad_inputs, grad_outputs: runs.append("ran"))
    lib.autograd.backward([(h * h).sum(), h], [None, lib.tensor([1.0, 1.0])])
    see("c.grad when one root, h, is also above the other", c.grad)
    see("how many times h's node ran", len(runs))


def div_twice(lib, see):
    """second derivatives of a / b in both inputs, with broadcasting"""
    a, b = leaf(lib), leaf(lib, [1.5, -2.0, 0.5])
    (ga, gb) = lib.autograd.grad((a / b).sum(), [a, b], create_graph=True)
    see("d(a / b)/da", ga)
    see("d(a / b)/db", gb)
    see("d(sum d/db)/da", lib.autograd.grad(gb.sum(), a, retain_graph=True))
    see("d(sum d/db)/db", lib.autograd.grad((gb * gb).sum(), b))
    c = leaf(lib, [1.5, -2.0, 0.5])
    (4 / c).sum().backward()
    see("c.grad of (4 / c).sum()", c.grad)
    row, x, k = leaf(lib, ROW), leaf(lib), lib.tensor(X)
    seen = []
    for label, y in [("row / x", row / x), ("x / k", x / k), ("k / x", k / x)]:
        y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(grad_inputs))
        (y * y).sum().backward()
        see(f"the grad_inputs of {label}", seen[-1])
    see("row.grad", row.grad)
    see("x.grad", x.grad)


def roots_below_roots(lib, see):
    """autograd.grad of two outputs, one computed from the other"""
    x = leaf(lib, [1.0, 2.0])
    y = x * 2
    z = y * 2
    see("grad([y.sum(), z.sum()], x)", lib.autograd.grad([y.sum(), z.sum()], [x]))
    h = x.tanh()
    see("grad([(h * h).sum(), h.sum()], x)", lib.autograd.grad([(h * h).sum(), h.sum()], [x]))


def grad_with_grad_outputs(lib, see):
    """autograd.grad of a non-scalar output with grad_outputs, and of two outputs"""
    x = leaf(lib, [0.5, -1.0, 2.0])
    y = x * x
    (g,) = lib.autograd.grad(y, x, grad_outputs=lib.tensor([1.0, 2.0, -1.0]))
    see("d(v · x²)/dx", g)
    y1, y2 = x.exp(), x.tanh()
    see("grad of two outputs", lib.autograd.grad([y1.sum(), y2.sum()], x))
    unused = leaf(lib, [1.0])
    see("allow_unused", lib.autograd.grad((x * 2).sum(), [unused, x], allow_unused=True))
    see.error("an unused input at index 1", lambda: lib.autograd.grad((x * 2).sum(), [x, unused]))
    see.error("an unused input at index 0", lambda: lib.autograd.grad((x * 2).sum(), [unused, x]))
    other = leaf(lib, [2.0])
    see.error("unused inputs at index 0 and 2",
              lambda: lib.autograd.grad((x * 2).sum(), [unused, x, other]))  # fmt: skip
    z = (x * x).sum()
    lib.autograd.grad(z, x)
    see.error("grad twice without retain_graph", lambda: lib.autograd.grad(z, x))
    z2 = (x * x).sum()
    lib.autograd.grad(z2, x, retain_graph=True)
    see("grad again with retain_graph=True", lib.autograd.grad(z2, x))


def hooks_and_retain_grad(lib, see):
    """retain_grad on a non-leaf (twice, and over two backward calls), on a leaf; register_hook"""
    x = leaf(lib, [1.0, 2.0])
    h = x * 2
    h.retain_grad()
    h.retain_grad()
    loss = (h * h).sum()
    loss.backward(retain_graph=True)
    see("h.grad after one backward", h.grad)
    loss.backward()
    see("h.grad after two", h.grad)
    x.retain_grad()
    see("x.grad, a leaf that called retain_grad", x.grad)
    see("register_hook returns a handle", x.register_hook(lambda g: None) is not None)
    v = leaf(lib, [1.0, 2.0])
    v.register_hook(lambda g: g * 3)
    (v * v).sum().backward()
    see("v.grad when a hook on the leaf v triples its gradient", v.grad)
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g * 10)  # registered later, but it runs before retain_grad's
    (y * y).sum().backward()
    see("y.grad when a hook multiplies y's gradient by 10", y.grad)
    see.error("a hook on a tensor that does not require grad",
              lambda: lib.tensor([1.0]).register_hook(lambda g: g))  # fmt: skip


def retain_grad_rules(lib, see):
    """retain_grad refuses a tensor that does not require grad; under create_graph it keeps a
    gradient that is part of the graph"""
    see.error("retain_grad on a tensor that does not require grad",
              lambda: lib.tensor([1.0, 2.0]).retain_grad())  # fmt: skip
    x = leaf(lib, [1.0, 2.0])
    y = x * 2
    y.retain_grad()
    (y * y).sum().backward(create_graph=True)
    see("y.grad after backward(create_graph=True)", y.grad)
    see("y.grad.requires_grad after backward(create_graph=True)", y.grad.requires_grad)


def gradients_that_are_none(lib, see):
    """a post-hook replaces one gradient by None: nothing flows along that edge, yet the nodes
    below still run once the rest of their gradients have come, and their hooks see None"""
    x = leaf(lib, [1.0, 1.0])
    s = (x * 2 + x * 3).sum()
    add = s.grad_fn.next_functions[0][0]
    add.register_hook(lambda grad_inputs, grad_outputs: (None, grad_inputs[1]))
    s.backward()
    see("x.grad when the hook drops the gradient of x * 2", x.grad)
    y, calls = x * 2, []
    y.retain_grad()
    y.register_hook(lambda g: calls.append(f"tensor hook: {'None' if g is None else 'a tensor'}"))
    y.grad_fn.register_prehook(lambda grad_outputs: calls.append(f"pre-hook: {grad_outputs}"))
    y.grad_fn.register_hook(
        lambda grad_inputs, grad_outputs: calls.append(f"post-hook: {grad_inputs}")
    )
    s = (y + x * 3).sum()
    s.grad_fn.next_functions[0][0].register_hook(lambda grad_inputs, _: (None, grad_inputs[1]))
    s.backward()
    see("the hooks of y = x * 2, whose gradient was dropped, in order", "; ".join(calls))
    see("y.grad, retained but dropped", y.grad)
    y = x * 2
    y.retain_grad()
    s = (y + x * 3).sum()
    s.backward(retain_graph=True)
    s.grad_fn.next_functions[0][0].register_hook(lambda grad_inputs, _: (None, grad_inputs[1]))
    s.backward()
    see("y.grad kept from a first backward, when the second drops it", y.grad)
    w = leaf(lib, [0.5, -1.0])
    t = (w * 2).sum() + (w * w).sum()
    t.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (None, None))
    t.backward()
    see("w.grad when every gradient from the root is dropped", w.grad)


def accumulator_runs_first(lib, see):
    """an AccumulateGrad made early is ready together with a newer node: it still runs first"""
    w = leaf(lib, ROW)
    w * 1  # w's AccumulateGrad is made now, before the nodes below
    x = leaf(lib, ROW)
    see.order("the backward order", (x.exp() * w).sum())


def what_mm_saves(lib, see):
    """x @ w, x @ c, c @ w: what matrix multiplication saves, and its result"""
    x, w, c, d = leaf(lib), leaf(lib, W), lib.tensor(W), lib.tensor(X)
    for label, y in [("x @ w", x @ w), ("x @ c", x @ c), ("d @ w", d @ w)]:
        see(label, y)
        see.graph(f"the graph of {label}", y)
    see("(x @ c).grad_fn._saved_self", (x @ c).grad_fn._saved_self)
    see("(d @ w).grad_fn._saved_mat2", (d @ w).grad_fn._saved_mat2)


def hooks_run_in_registration_order(lib, see):
    """two hooks of each kind on one node: they run in the order they were registered"""
    x = leaf(lib, ROW)
    y = x * 2
    y.register_hook(lambda g: g * 2)
    y.register_hook(lambda g: g + 1)
    y.sum().backward()
    see("x.grad when y's tensor hooks are g * 2, then g + 1", x.grad)
    x = leaf(lib, ROW)
    y = x * 2
    y.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] * 2,))
    y.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] + 1,))
    y.sum().backward()
    see("x.grad when y's node has the pre-hooks g * 2, then g + 1", x.grad)
    x = leaf(lib, ROW)
    y = x * 2
    y.grad_fn.register_hook(lambda grad_inputs, _: (grad_inputs[0] * 2, *grad_inputs[1:]))
    y.grad_fn.register_hook(lambda grad_inputs, _: (grad_inputs[0] + 1, *grad_inputs[1:]))
    y.sum().backward()
    see("x.grad when y's node has the post-hooks g * 2, then g + 1", x.grad)


def retain_grad_before_node_pre_hooks(lib, see):
    """retain_grad keeps the tensor's gradient before the pre-hooks of the node that made it"""
    x = leaf(lib, [1.0, 2.0])
    y = x * 2
    y.retain_grad()
    y.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] * 10,))
    (y * y).sum().backward()
    see("y.grad when a pre-hook of y's node multiplies the gradient by 10", y.grad)
    see("x.grad", x.grad)


def saved_inputs_are_the_inputs(lib, see):
    """@ saves its inputs themselves: reading one back gives that very tensor"""
    x, w = leaf(lib), leaf(lib, W)
    a = x * 2
    product = a @ w
    see("(a @ w).grad_fn._saved_self is a itself", product.grad_fn._saved_self is a)
    see("(a @ w).grad_fn._saved_mat2 is w itself", product.grad_fn._saved_mat2 is w)


def pack_sees_the_output_itself(lib, see):
    """pack is given a node's own output itself, the tensor whose grad_fn is that node"""
    x, given = leaf(lib, [1.0, 2.0]), []
    with lib.autograd.graph.saved_tensors_hooks(lambda t: given.append(t) or t, lambda t: t):
        y = x.exp()
    see("what pack was given for exp's result is y itself", given[0] is y)
    see("what pack was given for exp's result requires grad", given[0].requires_grad)


def in_place_on_a_constant(lib, see):
    """c.add_(x): a constant changed in place by a tensor that requires grad joins the graph"""
    x, c = leaf(lib, ROW), lib.tensor(ROW)
    c.add_(x)
    see("c.requires_grad after c.add_(x)", c.requires_grad)
    see.graph("the graph of c after c.add_(x)", c)
    (c * c).sum().backward()
    see("x.grad of (c * c).sum()", x.grad)


def saved_result_read_back_shares_memory(lib, see):
    """a node's own output, read back, is that output's memory: a change through .data shows"""
    x = leaf(lib, [0.0, 1.0])
    y = x.exp()
    result = y.grad_fn._saved_result
    y.data.add_(1)  # .data shares the memory but not the version counter
    see("y.grad_fn._saved_result, read before y.data.add_(1), afterwards", result)


def starting_gradient_in_the_graph(lib, see):
    """under create_graph the gradient given to backward stays in the graph of what it made"""
    x, v = leaf(lib, ROW), leaf(lib, [1.0, -1.0, 2.0])
    (x * x).backward(v, create_graph=True)
    see("d(x.grad · x)/dv after (x * x).backward(v, create_graph=True)",
        lib.autograd.grad((x.grad * x).sum(), v))  # fmt: skip


def starting_gradients(lib, see):
    """backward from a given gradient, from several outputs, and PyTorch's errors for the start"""
    x = leaf(lib, ROW)
    y = x * x
    y.backward(lib.tensor([1.0, -1.0, 2.0]))
    see("x.grad after y.backward(v)", x.grad)
    lib.autograd.backward([x * 2, (x * 3).sum()], [lib.tensor([1.0, 1.0, -1.0]), None])
    see("x.grad after backward of two outputs", x.grad)
    see.error("backward of a non-scalar without a gradient", lambda: (x * 2).backward())
    see.error("backward of a tensor that does not require grad",
              lambda: lib.tensor(ROW).sum().backward())  # fmt: skip
    see.error("the second output does not require grad",
              lambda: lib.autograd.backward([x.sum(), lib.tensor(1.0)]))  # fmt: skip
    see.error("a starting gradient of the wrong shape",
              lambda: (x * 2).backward(lib.tensor([1.0, 2.0])))  # fmt: skip
    two = [x.sum(), (x * 2).sum()]
    see.error("two outputs, one gradient", lambda: lib.autograd.backward(two, [lib.tensor(1.0)]))
    see.error("two outputs, one tensor as their gradient",
              lambda: lib.autograd.backward(two, lib.tensor(1.0)))  # fmt: skip
    lib.autograd.backward([x.sum()], [lib.tensor(2.0), lib.tensor(5.0)])
    see("x.grad after one output was given two gradients (the extra one is ignored)", x.grad)
    c = lib.tensor(ROW)  # for a tensor outside the graph, PyTorch checks the gradient first
    see.error("a constant's backward(), not a scalar either", lambda: c.backward())
    see.error("a constant's backward(v), v of the wrong shape",
              lambda: c.backward(lib.tensor([1.0, 2.0])))  # fmt: skip


# --- Programs for wrong answers a learner-tester found passing every check (issue h83) ---------


def a_used_leaf_is_freed(lib, see):
    """a leaf used in a graph is freed once the program drops it"""
    x = leaf(lib)
    (x * 2).sum().backward()
    alive = weakref.ref(x)
    del x
    gc.collect()
    see("a leaf, used in a backward and then deleted, is freed", alive() is None)


def input_nr_after_in_place(lib, see):
    """y = x * 2; y.add_(1); y * 3: the edge of a tensor changed in place"""
    y = leaf(lib) * 2
    y.add_(1)
    z = y * 3
    see("the input_nr of each edge of y * 3", str([nr for _, nr in z.grad_fn.next_functions]))


def detach_is_a_new_leaf(lib, see):
    """x.detach() after a backward: a new leaf, with no .grad and an accumulator of its own"""
    x = leaf(lib, [1.0, 2.0])
    (x * 2).sum().backward()
    d = x.detach()
    see("x.detach().grad is None, x.grad being set", d.grad is None)
    d.requires_grad = True
    (d * 5).sum().backward()
    see("d.grad after (d * 5).sum().backward(), d = x.detach() made to require grad", d.grad)
    see("x.grad after that", x.grad)


def decorated_function_with_keywords(lib, see):
    """a function decorated with no_grad, called with a keyword argument"""
    x = leaf(lib)

    @lib.no_grad()
    def scaled(t, scale=1.0):
        return t * scale

    see("scaled(x, scale=2.0), decorated with no_grad", scaled(x, scale=2.0))


def needs_input_grad_reads_no_saved_tensor(lib, see):
    """under saved_tensors_hooks, backward of x * w unpacks each saved tensor once"""
    x, w, unpacked = leaf(lib, ROW), leaf(lib, ROW), []
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: unpacked.append(1) or t):
        y = (x * w).sum()
    y.backward()
    see("how many times unpack ran during backward of (x * w).sum()", len(unpacked))


def post_hook_sees_the_hooked_gradient(lib, see):
    """a node's post-hook is given the gradient its tensor's hook and its pre-hook made"""
    x, seen = leaf(lib, [1.0, 2.0]), []
    y = x * 2
    y.register_hook(lambda g: g * 10)
    y.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] * 3,))
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(grad_outputs))
    y.sum().backward()
    see("the grad_outputs the post-hook of y = x * 2 saw", seen[0])


def post_hook_reads_saved_tensors(lib, see):
    """a node's post-hook runs before the node's saved tensors are freed"""
    x, w, read = leaf(lib, [1.0, 2.0]), leaf(lib, [3.0, 4.0]), []
    y = x * w
    y.grad_fn.register_hook(lambda grad_inputs, _: read.append(y.grad_fn._saved_self))
    y.sum().backward()
    see("y.grad_fn._saved_self, read by its post-hook during backward", read[0])


def a_node_given_none_is_freed(lib, see):
    """a node that received only None is still freed by backward"""
    x = leaf(lib, [1.0, 2.0])
    y = x.exp()
    z = y * 2
    z.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (None, None))
    z.sum().backward()
    see.error("reading y.grad_fn._saved_result, y's node given only None",
              lambda: y.grad_fn._saved_result)  # fmt: skip


def create_graph_accumulates_into_a_new_tensor(lib, see):
    """two backward(create_graph=True) calls whose gradients need no grad: .grad is a new tensor"""
    x = leaf(lib, [1.0, 2.0])
    (x * 2).sum().backward(create_graph=True)
    first = x.grad
    (x * 3).sum().backward(create_graph=True)
    see("x.grad is still the first .grad", x.grad is first)
    see("the first .grad after the second backward", first)
    see("x.grad", x.grad)


def numbers_keep_the_dtype(lib, see):
    """x * 2.5 and 3 * x, x float32: a Python number does not change the dtype"""
    x = leaf(lib)
    see("x * 2.5", x * 2.5)
    see("3 * x", 3 * x)
    (x * 2.5).sum().backward()
    see("x.grad of (x * 2.5).sum()", x.grad)


def freed_before_modified(lib, see):
    """a saved tensor freed by backward, then changed in place, then read"""
    x = leaf(lib)
    a = x * 2
    b = a * a
    b.sum().backward()
    a.add_(1)
    see.error("reading b.grad_fn._saved_self, freed, then a.add_(1)", lambda: b.grad_fn._saved_self)


def unused_input_found_after_the_run(lib, see):
    """autograd.grad with an unused input raises after running: the graph is freed"""
    x, z = leaf(lib), leaf(lib)
    y = x.exp().sum()
    see.error("grad(y, [x, z]), z unused", lambda: lib.autograd.grad(y, [x, z]))
    see.error("y.backward() after that", lambda: y.backward())


def grad_outputs_of_a_one_element_output(lib, see):
    """autograd.grad of a one-element output with grad_outputs given"""
    x = leaf(lib, [1.0, 2.0])
    (g,) = lib.autograd.grad((x * x).sum(), x, grad_outputs=lib.tensor(3.0))
    see("grad((x * x).sum(), x, grad_outputs=tensor(3.))", g)


def inputs_as_a_generator(lib, see):
    """autograd.grad with its inputs given as a generator, as model.parameters() is"""
    x, w = leaf(lib), leaf(lib)
    see("grad((x * w).sum(), (t for t in [x, w]))",
        lib.autograd.grad((x * w).sum(), (t for t in [x, w])))  # fmt: skip


TASKS = [
    Task("1.1", "the edge of one input", "gradient_edge", [shared_leaf, numbers_as_inputs, constant_first, a_used_leaf_is_freed, input_nr_after_in_place],
         hint="a gradient flows to the node that made the tensor, or to a leaf's one accumulator (made on first use and reused); a constant or a number has nowhere to send it",
         advice={"a_used_leaf_is_freed": "A leaf's accumulator belongs to the leaf, kept on the tensor itself: a table of accumulators outside the tensors (keyed by id, say) keeps every leaf ever used alive, and a new tensor that reuses a freed one's id would find its accumulator.",
                 "input_nr_after_in_place": "input_nr says which output of the node the tensor is; every node here has one output, so it is always 0, whatever the tensor's version."}),
    Task("1.2", "recording an operation", "_record", [recorded_graph, shared_leaf, numbers_as_inputs, constants_and_no_grad, constant_first, mul_broadcast, version_errors, zero_and_0d_inputs],
         hint="record only when grad mode is on and at least one input (any of them, not only the first) requires grad; the node gets one edge per input, its settings, its saved values (skip the None ones), and the result points back at it; a saved result is the node's own output (is_output), so that its version error names this node",
         advice={name: "Record exactly when grad mode is on and some input, in any position, requires grad." for name in ("constants_and_no_grad", "numbers_as_inputs", "constant_first")}),
    Task("1.3", "detach", "detach", [detach_shares_memory, detach_is_a_new_leaf],
         hint="the detached tensor wraps the same numpy array (no copy) and shares the version counter object itself, so that in-place changes through either are seen by both",
         advice={"detach_is_a_new_leaf": "A detached tensor is a new tensor that shares only the memory and the version counter: it starts with no .grad, no grad_fn and no accumulator of its own. A copy of the whole object would share .grad and the leaf's accumulator, so that a gradient meant for one lands in the other."}),
    Task("1.6", "no_grad", "_SetGradMode", [grad_mode_nesting, constants_and_no_grad, enable_grad_as_a_decorator, decorated_function_with_keywords],
         hint="on entry remember the mode that was in force and set this block's mode; on exit restore what you remembered (not a fixed value: blocks nest)",
         advice={"decorated_function_with_keywords": "The decorator's function must take and pass on whatever the decorated one takes, keyword arguments as well as positional ones.",
                 "enable_grad_as_a_decorator": "Used as a decorator, each of no_grad and enable_grad runs the function inside a fresh block of its own mode: enable_grad turns recording on, even inside no_grad. The function it returns keeps the decorated one's name and docstring, as functools.wraps makes it.",
                 "value": "Leaving a block restores the mode that was in force before it, whatever that was, and lets an exception raised inside go on up.",
                 "raised": "Your engine raised where PyTorch did not. If something was None where a tensor was expected, a function decorated with no_grad or enable_grad lost its result: the decorator's function must return what the decorated one returns."}),
    Task("2.1", "undoing broadcasting", "_sum_to", [broadcast_both_ways, mul_broadcast, mul_twice_differentiated],
         hint="broadcasting copied the input along the leading dimensions it lacked and along its dimensions of size 1; the gradient adds those copies up again, then takes the input's own shape",
         advice={"value": "Sum over the dimensions broadcasting added in front, and over those where the input had size 1."}),
    Task("2.2", "the backward formula of *", "needs_input_grad and MulBackward0.apply", [mul_broadcast, broadcast_both_ways, mul_twice_differentiated, mul_with_constant, node_hooks, post_hook_sees_tuples, gradients_under_detaching_hooks, needs_input_grad_reads_no_saved_tensor],
         hint="each input's gradient is g times the other input, summed back to the input's own shape; an input that needs no gradient gets None (its partner was not even saved)",
         advice={"needs_input_grad_reads_no_saved_tensor": "needs_input_grad tells from the node's edges whether an input wants a gradient, without reading a saved tensor: each read runs the unpack hook (and the version check), and PyTorch's formula reads each saved tensor once.",
                 "post_hook_sees_tuples": "A node's apply returns its gradients as a tuple, one per input, even when a list would do: the engine hands that very object to the node's post-hooks, and PyTorch's hooks get tuples.",
                 "raised": "A saved input is None when the other input needs no gradient: compute a gradient only for the inputs that need one, as needs_input_grad(i) tells, which is True only when input i's edge leads to a node (an edge is (None, 0) when it leads nowhere)."}),
    Task("2.3", "the backward formula of @", "MmBackward0.apply", [matrix_products, mm_twice_differentiated],
         hint="each gradient has its input's shape; only one product of g with the other (transposed) matrix gives that shape; use tensor operations so create_graph can differentiate it",
         advice={"raised": "An error in the formula: a saved matrix is None when the other input needs no gradient (compute a gradient only where needs_input_grad(i) is True), and shapes that cannot be multiplied mean the wrong matrix, or the wrong one transposed, on one side."}),
    Task("2.4", "the backward of sum and mean", "SumBackward0, SumBackward1 and MeanBackward1", [sums_along_dimensions],
         hint="every element of the input contributed once to the sum, so each gets g; with dim, the summed dimensions must come back (as size 1) before g is spread over them; a mean divides g by how many elements each output averaged: the product of the sizes of the reduced dimensions"),
    Task("2.6", "counting dependencies", "compute_dependencies", [diamond_counts, counts_of_shared_leaf, deep_counts, root_below_another_root, reached_again_before_it_ran],
         hint="visit every reachable node once, without recursion (keep a list of nodes still to visit), and count every edge into a node, even several from the same node; roots may be a generator",
         advice={"root_below_another_root": "A root can also be reached from another root (z = y * 3, both given): it is still one node, whose edges are counted once, so a root counts as visited from the start; walked twice, the nodes below it wait for gradients that never come."}),
    Task("2.7", "the run loop", "_run_loop, register_hook and retain_grad", [diamond_backward, one_buffer_three_gradients, branches_and_order, deep_backward, hooks_and_retain_grad, retain_grad_rules, retained_grad_is_its_own, freed_after_backward, tensor_hook, node_hooks, post_hook_sees_tuples, gradients_that_are_none, roots_given_twice, grad_of_intermediate, freed_during_the_pass, hooks_run_in_registration_order, retain_grad_before_node_pre_hooks, post_hook_sees_the_hooked_gradient, post_hook_reads_saved_tensors, a_node_given_none_is_freed],
         hint="gradients arriving at a node are added up in its buffer; a node runs once its count of pending gradients reaches zero; among ready nodes the newest runs first; the output's hooks and the node's pre-hooks change the gradients before apply, its post-hooks after",
         advice={"post_hook_sees_the_hooked_gradient": "A post-hook's grad_outputs are the gradients the node was run on: what its tensor's hooks and its pre-hooks made of the gradient that arrived, not that gradient as it arrived.",
                 "post_hook_reads_saved_tensors": "A node's saved tensors are freed after its post-hooks have run, not before: a post-hook may still read them.",
                 "a_node_given_none_is_freed": "A node whose gradients were all None does not run its formula, but backward went through it all the same: without retain_graph its saved tensors are freed like every other node's.",
                 "grad_of_intermediate": "With a capture (autograd.grad), PyTorch keeps a gradient meant for an input at the moment it arrives, before any hook, when the node runs; a node that does not run has its tensor's hooks (and retain_grad) run first, and is then skipped. A node's pre-hooks never change what is kept.",
                 "order": "Among ready nodes the one created last (largest _sequence_nr) runs first, and a node runs only when all its gradients have arrived.",
                 "diamond_backward": "Gradients that reach a node along several edges are added up in its buffer, and the node runs once, on their sum.",
                 "one_buffer_three_gradients": "Gradients that reach a node along several edges are added up in its buffer, and the node runs once, on their sum.",
                 "retained_grad_is_its_own": "A retained gradient must be the tensor's own: the gradient that arrives may be shared (here it is the very tensor given to backward), so PyTorch keeps a clone of the first one, recorded as CloneBackward0: inside the graph under create_graph, outside it otherwise. A later gradient is added into a new tensor: unlike a leaf's .grad, a retained one is not changed in place.",
                 "hooks_run_in_registration_order": "Hooks of one kind run in the order they were registered, each given what the one before it returned: a tensor's hooks, a node's pre-hooks and its post-hooks alike.",
                 "retain_grad_before_node_pre_hooks": "retain_grad keeps the gradient of the tensor: after the tensor's own hooks, before the pre-hooks of its node, which change what the node is given, not the tensor's gradient.",
                 "heap": "heapq compares whole tuples: when two ready nodes have the same _sequence_nr it compares the next item, so put something comparable before the node."}),
    Task("2.8", "accumulating into .grad", "AccumulateGrad", [accumulator_runs_first, accumulation, accumulation_of_two_leaves, accumulation_under_create_graph, first_gradient_copied_under_create_graph, second_derivative_after_two_backward_calls, accumulation_is_in_place, create_graph_accumulates_into_a_new_tensor],
         hint="the first gradient becomes .grad as a copy of its own, recorded as PyTorch records it (outside the graph unless create_graph is on, which is when grad mode is on during backward); later ones are added into that memory, so that .grad stays the same tensor and whatever shares it sees the sum, or, under create_graph, become a new tensor in the graph",
         advice={"create_graph_accumulates_into_a_new_tensor": "Whether the sum is new or added in place depends on grad mode during backward (on exactly under create_graph), not on whether the arriving gradient requires grad: under create_graph .grad becomes a new tensor even when the gradients themselves are outside the graph.",
                 "accumulation_is_in_place": "Adding into .grad's memory is an in-place change like any other: it bumps .grad's version, so that a graph that saved the old .grad refuses to use the new values.",
                 "first_gradient_copied_under_create_graph": "Under create_graph too, a leaf's first .grad is a copy of its own: AddBackward0 hands the very same tensor to both leaves. PyTorch records the copy as a CopyBackwards node, so the copy stays in the graph and can be differentiated; that node has two inputs, the new memory (which wants no gradient) and the gradient copied.",
                 "accumulation_of_two_leaves": "Both leaves received the same gradient tensor from AddBackward0: a first .grad that is that tensor's memory, not a copy, is changed by the other leaf's additions too. PyTorch copies a first gradient that something else holds."}),
    Task("3.1", "what * saves", "mul and mm", [what_mul_saves, what_mm_saves, constant_first, mul_broadcast, saved_inputs_are_the_inputs, numbers_keep_the_dtype],
         hint="the gradient of one input needs the other input, so an input is saved only when its partner requires grad",
         advice={"numbers_keep_the_dtype": "A Python number takes the tensor's dtype, as in PyTorch: made into a tensor of its own (numpy makes 2.5 a float64), it turns a float32 product, and the gradients, into float64. Leave a number as it is: the operation knows what to do with it.",
                 "graph": "Save an input only if the other input requires grad: that is the only formula that reads it.",
                 "saved_inputs_are_the_inputs": "Save the input tensor itself, not a copy or a detached view: reading it back gives that very tensor, with its grad_fn, as in PyTorch."}),
    Task("3.2", "backward from the saved result", "ExpBackward0.apply and TanhBackward0.apply", [exp_from_result, tanh_from_result, exp_twice_differentiated, hooked_formulas, version_errors],
         hint="the derivative of exp is exp itself, and tanh's is 1 minus its square: both come from the saved output, read through the node's saved() (which unpacks and checks it), with tensor operations",
         advice={"exp_twice_differentiated": "A formula must stay a tensor operation on g and the saved result: computed on arrays it leaves the graph, and create_graph cannot differentiate it.",
                 "hooked_formulas": "Read the saved result through the node's saved(): it unpacks what a pack hook stored."}),
    Task("3.3", "saving a tensor", "SavedTensor.__init__ and saved_tensors_hooks", [version_errors, numbers_are_not_packed, hooks_as_a_block, pack_hooks, in_place_on_a_copy, nested_hooks, saved_output_without_a_cycle, saved_output_shares_memory, pack_sees_the_output_itself, pack_runs_outside_the_graph, a_saved_tensor_keeps_no_node, second_derivative_through_detaching_hooks],
         hint="remember the tensor's version at the moment it is saved and keep its counter to compare later; when saved_tensors_hooks are active, the innermost pair's pack decides what is stored (outside the graph) and its unpack is remembered; a node's own output is kept as its memory alone, in a tensor without the node, since the output points at the node",
         advice={"second_derivative_through_detaching_hooks": "A pack hook may keep a detached copy, so what it keeps says nothing about the graph: remember, when saving, whether the tensor requires grad, its grad_fn and a leaf's accumulator, for the value read back through the unpack hook.",
                 "saved_output_without_a_cycle": "A node that kept its own output would hold a tensor whose grad_fn is that very node: a reference cycle, which only Python's garbage collector breaks, later. Keep the output's memory in a tensor of its own, without the node; reading it back gives the node again.",
                 "saved_output_shares_memory": "A node's own output is kept as that output's memory, not a copy of it: a change through .data (which no version counter sees) shows in the gradient, as in PyTorch, and a copy would double the memory the graph holds.",
                 "hooks_as_a_block": "Leaving the block takes its pair of hooks off again: only what is saved inside the block is packed, and an error raised inside goes on up.",
                 "in_place_on_a_copy": "Stamp the version the tensor has now, when it is saved: a change made before saving is not an error.",
                 "pack_runs_outside_the_graph": "pack runs with grad mode off, so that what it computes records nothing; and it is given every tensor the node saves, a constant that requires no grad included.",
                 "a_saved_tensor_keeps_no_node": "A SavedTensor that kept the node it belongs to would make a cycle (node, its saved tensors, the node again) that only Python's garbage collector breaks, later: the node is given for the moment of saving only.",
                 "numbers_are_not_packed": "A Python number in an operation (the 2 of x * 2) is saved as a tensor the operation made (its _is_wrapped_number is True), not one of the program's: PyTorch never hands it to pack, so a hook sees only the program's own tensors.",
                 "pack_sees_the_output_itself": "pack is given the tensor being saved, the node's own output included: the output itself, with its grad_fn, not the node-less copy of its memory that is kept without hooks.",
                 "pack_hooks": "What a node keeps is what pack returned, and reading it back gives what the unpack of the same pair makes of that, never the packed value itself. pack runs outside the graph: the operations inside it must not record (and save) anything of their own."}),
    Task("3.5", "in-place operations and the version check", "_in_place and SavedTensor.check_version", [version_errors, version_errors_float64, in_place_on_a_copy, in_place_on_a_leaf, in_place_under_no_grad, in_place_on_a_constant],
         hint="compare the version the counter shows now with the one stamped at saving; the error names the node that made the tensor: the saving node for its own result, the input's grad_fn otherwise",
         advice={"raised": "Your engine raised where PyTorch did not. If it is the leaf error: a leaf that requires grad may not be changed in place while grad mode is on, but under no_grad nothing is recorded and the change is allowed (that is how an optimizer updates its weights).",
                 "error": "modified_error builds PyTorch's text from the tensor, the node that made it, and the two versions. After an in-place operation the node that made the tensor is that operation's own node, which must become the tensor's grad_fn; the check names it for an input, and the saving node for the node's own output.",
                 "in_place_on_a_constant": "A recorded in-place operation makes the tensor what its result would be: its grad_fn is the operation's node and it requires grad, even when it did not before.",
                 "in_place_under_no_grad": "Under no_grad an in-place operation records nothing, and the tensor keeps the history it had: only a recorded operation gives it a new grad_fn."}),
    Task("4.1", "freeing, and reading back", "release_variables, unpack and saved", [what_mul_saves, freed_after_backward, backward_twice, pack_hooks, hooked_formulas, version_errors, saved_values_read_and_released, saved_output_without_a_cycle, saved_result_read_back_shares_memory, freed_before_modified, second_derivative_through_detaching_hooks],
         hint="freeing drops the reference to every value the node saved (so the memory can go) and marks it freed; reading back refuses a freed value with PyTorch's error, passes a packed value through its unpack hook, and checks the version of a plain one; a node's own output comes back as a tensor whose grad_fn is that node, since the node kept only its memory",
         advice={"second_derivative_through_detaching_hooks": "What the unpack hook gives back takes the saved tensor's place in the graph, as in PyTorch: a tensor of its data with the saved tensor's grad_fn (the node itself for its own output) or, for a leaf, its accumulator. Returned as it is, a detached copy cuts the second derivative off from the leaves.",
                 "freed_before_modified": "A freed saved tensor is refused as freed first, whatever happened to the tensor since: once freed, there is no value left whose version could be checked.",
                 "pack_hooks": "Reading a saved tensor back gives what its unpack hook makes of what pack stored, never the stored value itself.",
                 "saved_result_read_back_shares_memory": "A node's own output, read back, wraps the memory the node kept, not a copy of it: it is the output's memory, as in PyTorch.",
                 "saved_output_without_a_cycle": "A node's own output was kept without the node (it would be a cycle): reading it back makes a tensor of that memory whose grad_fn is the node unpack is given, requiring grad and sharing the saved version counter.",
                 "freed_after_backward": "Freeing does two things, and reading back relies on both: the value is dropped (the memory is what retain_graph is about), and the saved tensor is marked freed, so that reading it raises PyTorch's error instead of failing on a value that is gone."}),
    Task("4.5", "backward and retain_graph's default", "backward, _initial_grads and run_backward", [starting_gradients, retain_default, grad_mode_in_backward, roots_given_twice, accumulation_under_create_graph, grad_function, grad_with_grad_outputs, one_element_outputs, starting_gradient_in_the_graph],
         hint="retain_graph left unset follows create_graph; during the run grad mode is create_graph's value (so the formulas record only then), and it comes back afterwards even when the run fails",
         advice={"grad_mode_in_backward": "After the run, grad mode is what it was before backward was called, whatever create_graph said: create_graph sets it for the run only.",
                 "starting_gradients": "PyTorch checks in this order: first the starting gradients, output by output (a given one must have the output's shape; only an output that requires grad needs to be a scalar when none is given), then that there is one for each output (extra ones are ignored), and only then, in its engine, that every output requires grad.",
                 "one_element_outputs": "The gradient a one-element output starts from is a plain tensor of ones, of the output's own shape and dtype, outside the graph (it requires no grad).",
                 "starting_gradient_in_the_graph": "A gradient given to backward is where the run starts, as it is (not a detached copy): under create_graph what is computed from it stays in the graph, and can be differentiated with respect to it."}),
    Task("5.1", "formulas that can be differentiated", "SigmoidBackward0.apply and DivBackward0.apply", [sigmoid_twice, div_twice],
         hint="write each formula with tensor operations on g and the saved tensors, never on their arrays, and never leave g out",
         advice={"raised": "A formula raised an error, or autograd.grad found that a gradient no longer depends on an input: compute a gradient only for an input that needs one (needs_input_grad), and write every factor as a tensor operation on g and the saved tensors, never on their arrays, so that it can be differentiated again.",
                 "value": "A value differs: compare each formula with the derivative, its sign and each factor, g included (the gradient that arrives), and keep it an expression of g and the saved tensors as tensors, so that it can be differentiated again."}),
    Task("5.5", "autograd.grad", "grad", [grad_function, grad_with_grad_outputs, hessian_vector_product, refused_grad_keeps_the_graph, same_input_twice, unused_input_found_after_the_run, grad_outputs_of_a_one_element_output, inputs_as_a_generator],
         hint="like backward, but the engine captures the inputs' gradients instead of accumulating them: the same defaults, the starting gradients from grad_outputs, and PyTorch's errors for an input that does not require grad or was not used (naming its index)",
         advice={"unused_input_found_after_the_run": "PyTorch finds an unused input after the run, from the gradients it captured (None for that input): the run has gone through the graph, and freed it without retain_graph, before the error is raised.",
                 "grad_outputs_of_a_one_element_output": "A gradient given in grad_outputs is where the run starts, for a one-element output too: ones are only the default when none is given.",
                 "inputs_as_a_generator": "`inputs` may be any iterable of tensors, a generator such as model.parameters() included: make it a tuple once, before anything goes through it.",
                 "raised": "Your engine raised where PyTorch computes a result. If it says that an output does not require grad, the gradients of a first autograd.grad(..., create_graph=True) were computed outside the graph: create_graph must reach the run, where it turns grad mode on so that the formulas record. If it says that an input was not used: under allow_unused=True PyTorch returns None for such an input instead of raising; otherwise, a single tensor given as `inputs` (or `outputs`) must count as one, not be iterated over row by row.",
                 "refused_grad_keeps_the_graph": "PyTorch checks the outputs before the inputs: first their starting gradients, then that they require grad, and only then that every input requires grad; nothing runs before all of that has passed."}),
    Task("5.6", "capturing the gradients of the inputs", "_Capture and _nodes_leading_to", [roots_below_roots, grad_of_intermediate, grad_function, grad_with_grad_outputs, deep_grad, same_input_twice],
         hint="remember which edge belongs to which input; when a node's gradients arrive, keep those meant for an input; a node runs only if it leads to an input, and no accumulator runs at all",
         advice={"grad_of_intermediate": "PyTorch keeps a gradient meant for an input at the moment it arrives, before any hook, when the node runs; a node that does not run has its tensor's hooks run first. A node's pre-hooks never change what is kept."}),
    Task("6.5", "a recurrent cell", "rnn_tanh_cell", [rnn_sequence, rnn_biases_left_out],
         hint="the new state is tanh of the input's projection plus the previous state's projection, each weight matrix applied transposed, each bias added only when given"),
    Task("7.5", "cross-entropy from elementary operations", "cross_entropy", [cross_entropy_values],
         hint="log-softmax is each logit minus the log of the row's sum of exponentials; subtract the row maximum first (a constant) so exp cannot overflow; pick each row's target, average over rows, negate"),
]  # fmt: skip
