"""The build track's exercises as data: for each, the programs that check it and what to say.

Every program is `program(lib, see)` and runs unchanged on torch and on the learner's engine
(`course/track.py` runs and compares them). Its docstring's first line names it in messages.
"""

from __future__ import annotations

import numpy as np

from course.track import Task

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


def shared_leaf(lib, see):
    """a leaf used twice, a constant input, a non-leaf used twice"""
    x, c = leaf(lib), lib.tensor(X)
    h = x * c
    y = h * h + x
    see.graph("the graph of h * h + x", y)
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
    (x2 @ c).sum().backward()
    see("x.grad with a constant on the right", x2.grad)


def _diamond(lib):
    x = leaf(lib)
    h = x.exp()
    return x, (h * 2 + h.tanh() * h).sum()


def _chain(lib):
    x = y = leaf(lib, [0.5])
    for _ in range(3000):
        y = y * 1.0001
    return x, y.sum()


def diamond_counts(lib, see):
    """a diamond: one tensor feeds two branches that meet again"""
    _, loss = _diamond(lib)
    see.counts(
        "the dependency counts", see.engine.count_dependencies([loss.grad_fn]), [loss.grad_fn]
    )


def diamond_backward(lib, see):
    """backward through a diamond: one tensor feeds two branches that meet again"""
    x, loss = _diamond(lib)
    see.order("the backward order", loss)
    see("x.grad", x.grad)


def deep_counts(lib, see):
    """the counts of a chain of 3,000 operations (deeper than Python's recursion limit)"""
    _, loss = _chain(lib)
    see.counts(
        "the dependency counts", see.engine.count_dependencies([loss.grad_fn]), [loss.grad_fn]
    )


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
    see.counts("the dependency counts", see.engine.count_dependencies(roots), [loss.grad_fn])


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
    loss.backward(retain_graph=True)
    first = x.grad
    see("x.grad after one backward", x.grad)
    loss.backward()
    see("x.grad after two", x.grad)
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


# --- Chapter 03: saved tensors ----------------------------------------------------------------


def what_mul_saves(lib, see):
    """x * w, x * c, c * x: conditional saving"""
    x, w, c = leaf(lib), leaf(lib, X), lib.tensor(X)
    see.graph("the graph of x * w", x * w)
    see.graph("the graph of x * c", x * c)
    see.graph("the graph of c * x", c * x)
    see.graph("the graph of x * 4", x * 4)
    see("(x * c).grad_fn._saved_other", (x * c).grad_fn._saved_other)
    see("(x * w).grad_fn._saved_self", (x * w).grad_fn._saved_self)


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
    see.error("backward after y.add_(1), y = x.exp()", lambda: loss.backward())
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
    x2 = leaf(lib)
    z = x2 * x2
    see("without hooks, _saved_self is the input itself", z.grad_fn._saved_self is x2)
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
    """autograd.grad of an intermediate tensor runs only the nodes above it"""
    x, w = leaf(lib), leaf(lib, W)
    h = (x @ w).tanh()
    loss = (h * h).sum()
    (gh,) = lib.autograd.grad(loss, h)
    see("d loss / d h", gh)
    see.graph("the graph afterwards (nodes below h did not run)", loss)
    see("x.grad", x.grad)
    h = (x @ w).tanh()
    see("d loss / d h and d loss / d x together", lib.autograd.grad((h * h).sum(), [h, x]))


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
    xs = lib.tensor(np.linspace(-1, 1, 45, dtype=np.float32).reshape(5, 3, 3))
    h = lib.zeros(3, 4)
    for t in range(5):
        h = lib.rnn_tanh_cell(xs[t], h, w_ih, w_hh, b_ih, b_hh)
    see("the last hidden state", h)
    (h * h).sum().backward()
    for name, p in [("w_ih", w_ih), ("w_hh", w_hh), ("b_ih", b_ih), ("b_hh", b_hh)]:
        see(f"{name}.grad", p.grad)


def rnn_without_biases(lib, see):
    """one step without biases"""
    w_ih, w_hh = lib.tensor(W_IH, requires_grad=True), lib.tensor(W_HH, requires_grad=True)
    h = lib.rnn_tanh_cell(lib.tensor(X), lib.zeros(2, 4), w_ih, w_hh)
    see("h", h)


def cross_entropy_values(lib, see):
    """cross-entropy of a batch of logits, large ones included"""
    for label, scale in [("small logits", 1.0), ("large logits", 200.0)]:
        logits = lib.tensor(np.array(X, np.float32) * scale, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(logits, lib.tensor([2, 0]))
        see(f"the loss ({label})", loss)
        loss.backward()
        see(f"logits.grad ({label})", logits.grad)


TASKS = [
    Task("1.1", "when an operation records a node", "_wants_grad", [constants_and_no_grad, recorded_graph],
         hint="record exactly when grad mode is on (_GradMode.enabled) and any input is a Tensor with requires_grad",
         advice={"value": "A constant (requires_grad=False) or a tensor made under no_grad records nothing."}),
    Task("1.2", "the edge of one input", "_edge", [shared_leaf, numbers_as_inputs],
         hint="(t.grad_fn, 0) for a tensor made by an operation, (t._grad_accumulator(), 0) for a leaf that requires grad, (None, 0) otherwise (numbers included)",
         advice={"value": "Make a leaf's AccumulateGrad once, with t._grad_accumulator(), and reuse it.",
                 "graph": "A leaf used twice has one AccumulateGrad node: get it with t._grad_accumulator()."}),
    Task("1.3", "detach", "Tensor.detach", [detach_shares_memory],
         hint="Tensor(self._data) shares the memory; also share the version counter: detached._version_box = self._version_box"),
    Task("1.6", "recording a node", "_record", [recorded_graph, shared_leaf, numbers_as_inputs, constants_and_no_grad, mul_broadcast, version_errors],
         hint="if not _wants_grad(*inputs): a plain Tensor; else node_class([_edge(t) for t in inputs]), the attributes set on it, SavedTensor(...) for each saved pair that is not None, and Tensor(data, requires_grad=True, grad_fn=node)"),
    Task("1.7", "no_grad", "_SetGradMode.__enter__ and __exit__", [grad_mode_nesting, constants_and_no_grad],
         hint="__enter__ remembers _GradMode.enabled in self.previous and sets it to self.mode; __exit__ puts the remembered value back (not True: no_grad can be nested)"),
    Task("2.1", "the backward formula of *", "MulBackward0.apply", [mul_broadcast, mul_with_constant, mul_twice_differentiated],
         hint="grad_self = _sum_to(g * self.saved('other'), self._shapes[0]) when input 0 needs a gradient, and likewise for input 1 with self.saved('self')",
         advice={"value": "Each input's gradient is g times the other input, summed back to the input's own shape.",
                 "raised": "A formula computed in numpy leaves the graph: use tensor operations on g, so that create_graph can differentiate it again."}),
    Task("2.2", "the backward formula of @", "MmBackward0.apply", [matrix_products],
         hint="grad_self = g @ mat2.t(), grad_mat2 = self.t() @ g: each gradient has its input's shape"),
    Task("2.3", "counting dependencies", "count_dependencies", [diamond_counts, counts_of_shared_leaf, deep_counts],
         hint="keep a stack of nodes to visit and a set of nodes seen; count every edge (skip None), but push each node once; read `roots` only once (it may be a generator)"),
    Task("2.4", "the run loop", "_run_loop", [diamond_backward, branches_and_order, deep_backward, freed_after_backward, tensor_hook, grad_of_intermediate],
         hint="a heap of (-node._sequence_nr, next(tie), node); pop, apply to the node's buffer, add each result into the next node's buffer, and push a node once its count reaches 0",
         advice={"order": "Among ready nodes the one created last (largest _sequence_nr) runs first; a node runs only when its count reaches 0."}),
    Task("2.6", "accumulating into .grad", "AccumulateGrad.apply", [accumulation, accumulation_of_two_leaves, accumulation_under_create_graph, second_derivative_after_two_backward_calls],
         hint="the first gradient becomes .grad (detached unless grad mode is on, which means create_graph); later ones are added into the same tensor's data, or out of place under create_graph"),
    Task("3.1", "what * saves", "mul", [what_mul_saves, mul_broadcast],
         hint="save self only if other requires grad, and other only if self requires grad: each input's gradient needs the other input"),
    Task("3.2", "exp's backward from its result", "ExpBackward0.apply", [exp_from_result],
         hint="d exp(x)/dx = exp(x), which is the saved result: (g * self.saved('result'),)"),
    Task("3.3", "the version check", "SavedTensor.check_version", [version_errors],
         hint="compare self.version_box[0] with self.version; name the node that made the tensor (the saving node for an output) without 'Backward0'",
         advice={"error": "PyTorch's text must match to the letter, hint sentence included."}),
    Task("3.5", "saving, through the pack hooks", "SavedTensor.__init__", [pack_hooks, version_errors],
         hint="stamp self.version = tensor._version and keep tensor._version_box; if _hook_stack is not empty, store pack(tensor) (under no_grad) and remember its unpack"),
    Task("4.1", "the freeing step", "release_saved", [freed_after_backward, backward_twice],
         hint="for every SavedTensor in node._saved: drop its value (value = None) and mark it freed"),
    Task("4.5", "the error after freeing", "SavedTensor.check_not_freed", [backward_twice],
         hint="raise RuntimeError(FREED_MESSAGE) when self.freed"),
    Task("4.6", "retain_graph's default", "backward", [retain_default],
         hint="retain_graph=None means retain_graph = create_graph"),
    Task("5.1", "a backward formula that can be differentiated", "SigmoidBackward0.apply", [sigmoid_twice],
         hint="g * result * (1 - result), with tensor operations on the saved result (no numpy), and never forget g",
         advice={"value": "Differentiate through the formula: it must use g and the saved result as tensors.",
                 "raised": "A formula computed in numpy leaves the graph, so its result cannot be differentiated again."}),
    Task("5.5", "autograd.grad", "grad", [grad_function, hessian_vector_product],
         hint="retain_graph defaults to create_graph; run_backward(outputs, grads, retain_graph, create_graph, inputs) returns the captured gradients; raise PyTorch's error for a None unless allow_unused"),
    Task("5.6", "capturing the gradients of the inputs", "_Capture.takes", [grad_of_intermediate, grad_function],
         hint="store each gradient whose (node, nr) is in self.slots; return True for an AccumulateGrad and for nodes not in self.wanted, so they do not run"),
    Task("6.5", "a recurrent cell", "rnn_tanh_cell", [rnn_sequence, rnn_without_biases],
         hint="tanh(input @ w_ih.t() + b_ih + hx @ w_hh.t() + b_hh), leaving out a bias that is None"),
    Task("7.5", "cross-entropy from elementary operations", "cross_entropy", [cross_entropy_values],
         hint="log_probs = shifted - shifted.exp().sum(dim=1, keepdim=True).log() with shifted = input minus its row maximum (a constant); the loss is -(log_probs * one_hot).sum() / rows"),
]  # fmt: skip
