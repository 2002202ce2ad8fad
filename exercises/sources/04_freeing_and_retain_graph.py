# %% [markdown] slideshow={"slide_type": "slide"}
# # Exercises 04: freeing and `retain_graph`
#
# Four pieces, each run **inside** mini_autograd and checked against PyTorch:
#
# | exercise | you write |
# |---|---|
# | 4.1 the freeing step | `release_saved(node, backward_call)`, the function the engine calls after each node |
# | 4.2 backward twice? | `can_backward_twice(root)`, which reads a graph and predicts the second backward |
# | 4.3 one pass | the two-losses program of a shared trunk, rewritten without `retain_graph` |
# | 4.4 the leaking loop | a training loop that leaked through `retain_graph`, fixed |
#
# Fill in each cell that says `raise NotImplementedError(...)`, then run the check below it.
# Until you do, the check prints one "not done yet" line, so the notebook always runs top to
# bottom. The chapter, `notebooks/04_freeing_and_retain_graph.ipynb`, has everything you need.

# %% slideshow={"slide_type": "skip"}
import torch

import mini_autograd as ma
from course.checks_04 import (
    TWICE_PROGRAMS,
    check_can_backward_twice,
    check_fixed_loop,
    check_one_backward,
    check_release,
    heads_tensors,
    normaliser_data,
    twice_truth,
)
from mini_autograd.memory import Ledger, saved_bytes
from mini_autograd.saved import SavedTensor

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Exercise 4.1: the freeing step
#
# After each node's `apply` has run, and unless `retain_graph=True`, the engine calls
# `node.release_saved(backward_call)`. Your version replaces it for the check (the checker
# patches it into `mini_autograd.node.Node` while the engine runs).
#
# What you need to know:
#
# * `node._saved` is a dict (or `None`). Its values are a `SavedTensor`, a tuple of
#   `SavedTensor`s (e.g. `IndexBackward0`'s `indices`), or plain values such as an exponent or
#   sizes, which PyTorch keeps after backward. Free only the `SavedTensor`s.
# * A `SavedTensor` holds its value in `_value`. Freeing means setting it to `None`, so the
#   memory can go, and setting `freed_by` to the backward call, so that reading it later raises PyTorch's error
#   (and diagnosis mode can say which call freed it). Leave a slot that is already freed alone.
#
# Write it without calling `SavedTensor.release`: that is the function you are writing. First,
# a look at what one node keeps (`PowBackward0`, from `x**2`):

# %%
x = ma.tensor([1.0, 2.0], requires_grad=True)
pow_node = (x**2 * 4).grad_fn.next_functions[0][0]
for name, value in pow_node._saved.items():
    kind = "a SavedTensor" if type(value) is SavedTensor else "not a tensor: keep it"
    print(f"{pow_node.name()}._saved[{name!r}]: {type(value).__name__}, {kind}")


# %%
def release_saved(node, backward_call):
    """Free every tensor `node` saved for its backward; keep everything else."""
    ### BEGIN SOLUTION 4.1: the freeing step
    for value in (node._saved or {}).values():
        slots = value if type(value) is tuple else (value,)
        for slot in slots:
            if type(slot) is SavedTensor and slot.freed_by is None:
                slot._value = None
                slot.freed_by = backward_call
    ### END SOLUTION


# %%
check_release(release_saved)

# %% [markdown]
# The checker runs the seeds' program with your step: the saved tensors must be freed after
# `loss1.backward()` exactly where PyTorch frees them, `loss2.backward()` must raise PyTorch's
# exact message, and with `retain_graph=True` nothing may be freed. Here is what it says about a
# tempting shortcut, emptying the whole dict:

# %%
check_release(lambda node, call: node._saved.clear())

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
    """True when no node in root's graph saved a tensor, so a second backward cannot fail."""
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
    loss1 = ((h @ head1) ** 2).mean()
    loss2 = (h @ head2).sigmoid().sum()
    (loss1 + loss2).backward()
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
