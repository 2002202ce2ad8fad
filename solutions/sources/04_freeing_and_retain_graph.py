# %% [markdown] slideshow={"slide_type": "slide"}
# # Exercises 04: freeing and `retain_graph`
#
# Your engine frees what backward no longer needs and raises PyTorch's error when a second
# backward needs it; then three exercises on programs that meet that error.
#
# | exercise | you write |
# |---|---|
# | 4.1 freeing, and reading a saved tensor back | `release_variables`, `SavedTensor.unpack`, `Node.saved` in your engine |
# | 4.2 backward twice? | `can_backward_twice(root)`, which reads a graph and predicts the second backward |
# | 4.3 one pass | the two-losses program of a shared trunk, rewritten without `retain_graph` |
# | 4.4 the leaking loop | a training loop that leaked through `retain_graph`, fixed |
# | 4.5 `backward` | `backward`, `run_backward` and the starting gradients in your engine |
#
# About 90 minutes. Until you write a piece, its check prints one "not done yet" line, so the
# notebook always runs top to bottom. The chapter, `notebooks/04_freeing_and_retain_graph.ipynb`,
# has everything you need.
# %% slideshow={"slide_type": "skip"}
import numpy as np
import torch

import mini_autograd as ma
from course import track
from course.checks_04 import (
    TWICE_PROGRAMS,
    check_can_backward_twice,
    check_fixed_loop,
    check_one_backward,
    heads_tensors,
    normaliser_data,
    twice_truth,
)
from mini_autograd.instruments.compare import compare
from mini_autograd.instruments.memory import Ledger, saved_bytes
from mini_autograd.instruments.viz import draw_graph, side_by_side

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Your engine: `my_autograd.py`
#
# Open `exercises/my_autograd.py` in JupyterLab, search for "Exercise 4.1", write the piece,
# save, and run its check cell here. A check reloads your file, runs the same programs on your
# engine and on PyTorch, and compares them; pieces you have not written yet are taken from
# the course's answer while it runs. Chapter 01's exercise notebook explains the build track.

# %% [markdown]
# ## Exercise 4.1 (your engine): freeing, and reading a saved tensor back
#
# After a node's backward has run, and unless `retain_graph=True`, your run loop calls
# `release_variables(node)`. Write it: every `SavedTensor` the node keeps gives up its value, so
# that nothing holds that memory any more, and remembers that it was freed. (Marking it freed
# without letting go of the value is the classic mistake: the error appears, the memory stays.)
# Then the reading side, `SavedTensor.unpack(node)`: a freed value raises PyTorch's error, to the
# letter (`FREED_MESSAGE` in your file); a value a pack hook made goes through its unpack hook,
# and what that gives back takes the saved tensor's place in the graph, as in PyTorch (with a
# hook that stores a detached copy, a second derivative must still reach the leaves); a plain
# tensor is checked with your `check_version` first. A node's own output was kept
# without the node (exercise 3.3): it comes back as a tensor of that memory whose `grad_fn` is
# the node, as PyTorch's `_saved_result` does. And `Node.saved(name)`, which a formula calls:
# the unpacked value, or `None` for a value the node did not keep. The check draws
# the saved tensors after backward, alive or freed, next to PyTorch's, and runs the seed's
# two-losses program.

# %%
track.check("4.1")

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Your graph, next to PyTorch's
#
# The same program on your engine and on PyTorch, drawn after `backward`: the saved tensors
# your `release_variables` freed are marked FREED, as PyTorch's are. (`track.engine()` loads your
# file, with the course's answer for any piece you have not written yet.) Then `compare` runs
# it on mini_autograd, your engine and PyTorch, and checks values, gradients, node names,
# saved tensors and the error of a second backward.

# %%
my = track.engine()


def after_backward(lib):
    x = lib.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
    w = lib.tensor([[0.2], [0.7], [-0.3]], requires_grad=True)
    loss = (x @ w).tanh().sum()
    loss.backward()
    return loss


side_by_side(draw_graph(after_backward(my)), draw_graph(after_backward(torch)))


# %%
def tanh_layer(lib, x, w):
    return (x @ w).tanh().sum()


x_np, w_np = np.array([[0.5, -1.0, 2.0]], np.float32), np.array([[0.2], [0.7], [-0.3]], np.float32)
compare(tanh_layer, x_np, w_np, devices=("cpu",), engines=(my,))


# %%
def backward_twice(lib, x, w):
    loss = (x @ w).tanh().sum()
    loss.backward()
    return loss  # compare runs a second backward of the returned loss


compare(backward_twice, x_np, w_np, devices=("cpu",), engines=(my,))

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Exercise 4.2: can this graph go backward twice?
#
# Predict first, on paper: for each program below (`x` is a 2×3 tensor that requires grad), can
# `root.backward()` be called a second time?

# %%
for number, (text, _) in enumerate(TWICE_PROGRAMS, start=1):
    print(f"{number}. root = {text}")

# %% [markdown]
# Now write `can_backward_twice(root)` for mini_autograd graphs. It must answer from the graph
# alone, **before** any backward: walk every node reachable from `root.grad_fn` through
# `next_functions` (a stack and a `seen` set, as in chapter 02), and look at what each node
# saved. `node.saved_tensors_info()` lists `(name, SavedTensor)` for the tensors a node saved,
# and nothing for numbers and sizes. `AccumulateGrad` nodes save nothing.


# %%
def can_backward_twice(root):
    """True when root.backward() could be called a second time, read from the graph alone."""
    ### BEGIN SOLUTION 4.2: backward twice?
    stack, seen = [root.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if node.saved_tensors_info():
            return False
        stack.extend(next_node for next_node, _ in node.next_functions)
    return True
    ### END SOLUTION


# %%
check_can_backward_twice(can_backward_twice)

# %% [markdown]
# How did your paper predictions do? PyTorch's answers, for comparison (look once your check
# passes):

# %%
for number, (text, program) in enumerate(TWICE_PROGRAMS, start=1):
    verdict = "can" if twice_truth(torch, program) else "cannot"
    print(f"{number}. {text:<30} {verdict} go backward twice")

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Exercise 4.3: one pass instead of two
#
# A trunk `h = tanh(x @ w)` shared by two heads, each with its loss. This version needs
# `retain_graph=True`, because both backward calls go through the trunk:
#
# ```python
# def two_backwards(lib, x, w, head1, head2):
#     h = (x @ w).tanh()
#     loss1 = ((h @ head1) ** 2).mean()
#     loss2 = (h @ head2).sigmoid().sum()
#     loss1.backward(retain_graph=True)
#     loss2.backward()
# ```
#
# Write `one_backward` with the same arguments: it must leave **the same gradients** in
# `w.grad`, `head1.grad` and `head2.grad`, with **one** backward pass and no `retain_graph`. Use
# only `lib`, so that it runs with both libraries. The checker counts the passes the engine runs.


# %%
def one_backward(lib, x, w, head1, head2):
    """The gradients of loss1 + loss2 in w, head1 and head2, from a single backward pass."""
    ### BEGIN SOLUTION 4.3: one pass
    h = (x @ w).tanh()
    total = ((h @ head1) ** 2).mean() + (h @ head2).sigmoid().sum()
    total.backward()
    ### END SOLUTION


# %%
check_one_backward(one_backward)

# %% [markdown]
# What the two-pass version costs: between its two calls, everything the trunk and the first
# head saved stays in memory, waiting for the second pass. Your version reads each of those
# tensors once and frees it straight away.

# %%
x, w, head1, head2 = heads_tensors(ma)
h = (x @ w).tanh()
loss1, loss2 = ((h @ head1) ** 2).mean(), (h @ head2).sigmoid().sum()
print("before any backward:  ", saved_bytes([loss1, loss2]), "bytes held")
loss1.backward(retain_graph=True)
print("between the two calls:", saved_bytes([loss1, loss2]), "bytes held")
loss2.backward()
print("after the second call:", saved_bytes([loss1, loss2]), "bytes held")

# %% [markdown]
# Why is anything left after the second call? A backward frees only the nodes it runs
# through, and `loss2.backward()` runs through the trunk and the second head only. The first
# head's tensors (`PowBackward0`'s `self`, and its `MmBackward0`'s `self` and `mat2`) stay
# until `loss1` is dropped, and they are of no use meanwhile: the trunk's `TanhBackward0` has
# lost its `result`, so another `loss1.backward()` raises (the two heads of chapter 04,
# section 5, show it).


# %% [markdown] slideshow={"slide_type": "slide"}
# ## Exercise 4.4: the loop that leaks
#
# A small network normalises its hidden features with a **running mean** of the features seen
# so far (what a batch-norm layer keeps in its running statistics). Its author met
# *"Trying to backward through the graph a second time"* at step 2, added `retain_graph=True`,
# and the loop ran. Read it, and look at the ledger:

# %%
DATA = normaliser_data()  # 20 batches of 32 inputs with 8 features; initial w1 (8x16), w2 (16x1)


def leaky_train(lib, data, ledger):
    w1 = lib.tensor(data.w1.copy(), requires_grad=True)
    w2 = lib.tensor(data.w2.copy(), requires_grad=True)
    running_mean = lib.zeros(data.w1.shape[1], dtype=lib.float64)
    for x_np, y_np in zip(data.xs, data.ys):
        with ledger.step():
            features = (lib.tensor(x_np) @ w1).tanh()
            loss = ((features - running_mean) @ w2 - lib.tensor(y_np)).pow(2).mean()
            ledger.record(loss)  # saved bytes held by this step's graph, before backward
            w1.grad = w2.grad = None
            loss.backward(retain_graph=True)
            running_mean = 0.9 * running_mean + 0.1 * features.mean(0)
            with lib.no_grad():  # plain SGD, as optimizer.step() does it
                w1 -= data.lr * w1.grad
                w2 -= data.lr * w2.grad
    return w1, w2


leaky = Ledger("leaky")
leaky_train(ma, DATA, leaky)
print("\n".join(leaky.table().splitlines()[:2] + leaky.table().splitlines()[2::4]))

# %% [markdown]
# The bytes grow by the same amount at every step: each step's graph stays reachable from the
# next one. Write `train`, the fixed loop: same model, same update, same running mean, **no**
# `retain_graph`, and saved bytes that stay flat. The running mean must act as a constant for
# the step that uses it (as a batch-norm layer's running statistics do). Return `(w1, w2)`.
# The checker runs it with both libraries and compares the final weights with PyTorch's.


# %%
def train(lib, data, ledger):
    """The running-mean loop without the leak; returns the final (w1, w2)."""
    ### BEGIN SOLUTION 4.4: fix the leaking loop
    w1 = lib.tensor(data.w1.copy(), requires_grad=True)
    w2 = lib.tensor(data.w2.copy(), requires_grad=True)
    running_mean = lib.zeros(data.w1.shape[1], dtype=lib.float64)
    for x_np, y_np in zip(data.xs, data.ys):
        with ledger.step():
            features = (lib.tensor(x_np) @ w1).tanh()
            loss = ((features - running_mean) @ w2 - lib.tensor(y_np)).pow(2).mean()
            ledger.record(loss)
            w1.grad = w2.grad = None
            loss.backward()
            with lib.no_grad():  # statistics, not part of the model: nothing to record
                running_mean = 0.9 * running_mean + 0.1 * features.mean(0)
                w1 -= data.lr * w1.grad
                w2 -= data.lr * w2.grad
    return w1, w2
    ### END SOLUTION


# %%
check_fixed_loop(train)

# %% [markdown]
# Side by side, the two ledgers (saved bytes per step are exact; your times will differ):

# %%
fixed = Ledger("fixed")
try:
    train(ma, DATA, fixed)
    print("step  leaky  fixed")
    for a, b in list(zip(leaky.rows, fixed.rows))[::4]:
        print(f"{a.number:>4}  {a.saved_bytes:>5}  {b.saved_bytes:>5}")
except NotImplementedError:
    print("(run this again once train is written)")

# %% [markdown]
# Done? Chapter 06 meets the same leak in its most common form, the hidden state of a recurrent
# network carried from one batch to the next.

# %% [markdown]
# ## Exercise 4.5 (your engine): `backward`
#
# Write `backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False)`, the
# function behind `loss.backward()` (`tensors` is one tensor or a sequence of them, as in
# `torch.autograd.backward`), with the two it needs:
#
# * `_initial_grads(outputs, grad_outputs)`: the gradient each output starts from.
#   `grad_outputs` is what the user passed, to `backward` or to `autograd.grad`: `None`, one
#   tensor, or one per output (each a tensor or `None`). A one-element output may start from
#   ones; any other needs a gradient given, of its own shape; an output that does not require
#   grad cannot start at all; fewer gradients than outputs is refused too (more are
#   ignored). PyTorch's four errors stand, to the letter, at the top of your file
#   (`NO_GRAD_FN_MESSAGE`, `SCALAR_ONLY_MESSAGE`, `SHAPE_MESSAGE`, `COUNT_MESSAGE`). When several apply,
#   which one does PyTorch raise? Try `torch.ones(3).backward()` and
#   `torch.ones(3).backward(torch.ones(2))`: it looks at the gradients first, output by output,
#   and only afterwards, in its engine, at whether the outputs require grad.
# * `backward` itself: `retain_graph=None` is not `False`. What should it be, so that a graph
#   built for second derivatives survives its first backward?
# * `run_backward(roots, grads, retain_graph, create_graph, inputs=None)`: the roots' edges, a
#   `_Capture` when `inputs` are given (chapter 05), and your run loop, run with grad mode set to
#   `create_graph` (that is what makes the formulas record themselves) and restored afterwards,
#   **even if the run raises**. It returns the captured gradients, which the capture keeps in
#   its list `grads` (chapter 05), or None when there is no capture.

# %%
track.check("4.5")

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Your engine so far
#
# Every build-track exercise of the course, checked against your file (the same table as
# `make progress` prints):

# %%
track.progress()
