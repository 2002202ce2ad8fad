# %% [markdown]
# # Exercises 01 · The graph
#
# In the chapter you built the recording step of an engine in a few small cells. Here you write
# the same pieces **for mini_autograd itself**: each check puts your function into the engine in
# place of its own, runs real programs with it, and compares what gets recorded with PyTorch.
#
# | exercise | you write | what runs it |
# |---|---|---|
# | 1.1 | `wants_grad`: does an operation record a node? | every operation of mini_autograd |
# | 1.2 | `edge_of`: where an input's edge in `next_functions` points | every recorded node |
# | 1.3 | `detach`: a tensor cut out of the graph | `Tensor.detach` |
# | 1.4 | `walk`: every node of a graph, breadth first | `draw_graph` |
# | 1.5 | predictions: which tensors require grad, which are leaves | the seeds' data program |
#
# Replace each `raise NotImplementedError(...)` line with your code and run the check cell below
# it. Until then the check prints a "not done yet" line, so the notebook always runs from top to
# bottom. Answers: `solutions/01_the_graph.ipynb`.

# %%
import torch

import mini_autograd as ma
from course.checks_01 import (
    check_detach,
    check_edge_of,
    check_leaves,
    check_walk,
    check_wants_grad,
)

# %% [markdown]
# ## Exercise 1.1: does this operation record a node?
#
# Every operation of mini_autograd computes its numpy result first and then asks one question:
# *should I record a backward node for this?* The answer is yes exactly when grad mode is on
# (`ma.is_grad_enabled()`) **and** at least one input has `requires_grad=True`. Otherwise the
# result is a plain leaf that does not require grad.
#
# Write `wants_grad(*tensors)`. The check puts it inside every operation of the engine and runs
# nine small programs (with `no_grad`, `enable_grad`, `detach`, mixed inputs) next to PyTorch.


# %%
def wants_grad(*tensors):
    """True when grad mode is on and any of `tensors` requires grad."""
    ### BEGIN SOLUTION 1.1: when an operation records a node
    if not ma.is_grad_enabled():
        return False
    return any(t.requires_grad for t in tensors)
    ### END SOLUTION


# %%
check_wants_grad(wants_grad)

# %% [markdown]
# ## Exercise 1.2: the edges of a new node
#
# When an operation records its node, it gives it one **edge** per input, the pair
# `(node, output_nr)` that says where the gradient for that input goes in backward. The node's
# `next_functions` is the tuple of these edges. Write `edge_of(tensor)`, the edge for one input:
#
# * a tensor made by an operation: `(tensor.grad_fn, tensor._output_nr)`; `_output_nr` says which
#   output of its `grad_fn` the tensor is (0 for almost every operation, 1 for the second output
#   of a node with two outputs, ...);
# * a leaf that requires grad: its `AccumulateGrad` node and 0. Get it with
#   `tensor._grad_accumulator()`, which creates it the first time and then returns **the same
#   node**, so a leaf used twice has one AccumulateGrad, as in PyTorch;
# * a tensor that does not require grad: `(None, 0)`, no edge to follow.
#
# The check records five programs with your `edge_of` (a leaf used twice, a constant input, a
# non-leaf used twice, the second output of a custom Function), compares every edge with
# PyTorch's graph, then runs backward through the graph you built.


# %%
def edge_of(tensor):
    """The edge (node, output_nr) that a gradient for `tensor` flows into."""
    ### BEGIN SOLUTION 1.2: the edge of one input
    if tensor.grad_fn is not None:
        return (tensor.grad_fn, tensor._output_nr)
    if tensor.requires_grad:
        return (tensor._grad_accumulator(), 0)
    return (None, 0)
    ### END SOLUTION


# %%
check_edge_of(edge_of)

# %% [markdown]
# This is what the check says about a plausible mistake: making a fresh `AccumulateGrad` each
# time a leaf is used. Gradients would even come out right (both nodes add into the same
# `.grad`), but the graph is not PyTorch's.

# %%
check_edge_of(
    lambda t: (
        (t.grad_fn, t._output_nr)
        if t.grad_fn is not None
        else (ma.node.AccumulateGrad(t), 0)
        if t.requires_grad
        else (None, 0)
    )
)

# %% [markdown]
# ## Exercise 1.3: `detach`
#
# `y.detach()` returns a tensor with the same values that is cut out of the graph: no
# `grad_fn`, `requires_grad=False`. Two details make it PyTorch's `detach` and not a copy:
#
# * it **shares memory** with `y`: no data is copied, and an in-place change to one shows in the
#   other. `ma.Tensor._make(array)` wraps a numpy array in a new leaf tensor without copying
#   (`ma.tensor(...)` would copy);
# * it **shares the version counter**: in-place changes made through the detached tensor still
#   count for `y` (chapter 03 shows why autograd needs that). A tensor's counter belongs to the
#   tensor named by its `_version_owner`, or to itself when that is `None`; set the new tensor's
#   `_version_owner` to the tensor that owns `self`'s counter.
#
# Write `detach(self)`; the check installs it as `Tensor.detach` and compares with PyTorch.


# %%
def detach(self):
    """The same data as `self`, out of the graph, sharing memory and the version counter."""
    ### BEGIN SOLUTION 1.3: detach
    out = ma.Tensor._make(self._data)
    out._version_owner = self if self._version_owner is None else self._version_owner
    return out
    ### END SOLUTION


# %%
check_detach(detach)

# %% [markdown]
# ## Exercise 1.4: walking the graph
#
# Tools that draw or inspect a graph (and, in chapter 02, backward itself) need every node
# reachable from the output, each **once**, even when two paths lead to it. Write
# `walk(start_nodes)`: from a list of nodes (some may be `None`: a leaf's `grad_fn`), return the
# list of all reachable nodes, breadth first: the start nodes, then the nodes one edge away, then
# two edges away..., children in `next_functions` order, skipping `None` edges, each node once.
#
# It only uses `.next_functions`, so it works on PyTorch's graphs too: the check runs it on both
# libraries, then uses it inside `draw_graph` (in place of the walk `draw_graph` does itself).


# %%
def walk(start_nodes):
    """Every node reachable from `start_nodes`, breadth first, each once."""
    ### BEGIN SOLUTION 1.4: breadth-first walk
    from collections import deque

    order = []
    for node in start_nodes:
        if node is not None and node not in order:
            order.append(node)
    seen = set(order)
    queue = deque(order)
    while queue:
        for child, _ in queue.popleft().next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                order.append(child)
                queue.append(child)
    return order
    ### END SOLUTION


# %%
check_walk(walk)

# %% [markdown]
# To see your walk at work: the names of the nodes of the chapter's graph, in both libraries.

# %%
for lib in (ma, torch):
    x = lib.tensor([[0.5, -1.0, 1.5, 2.0]], requires_grad=True)
    loss = (x**2 * 4).mean()
    try:
        print(f"{lib.__name__:<14}", [node.name() for node in walk([loss.grad_fn])])
    except NotImplementedError:
        print(f"{lib.__name__:<14} (write walk first)")

# %% [markdown]
# ## Exercise 1.5: which tensors are leaves?
#
# The first program of the seed posts prepares data for a tiny regression like this (the same
# code runs with `lib = torch` and `lib = ma`):
#
# ```python
# lib.manual_seed(0)
# x = lib.randn(100, 1, requires_grad=True)
# noise = 0.3 * lib.randn(100, 1)
# y = 1 + 2 * x + noise
# x_train, y_train = x[:70], y[:70]
# w = lib.zeros(1, requires_grad=True)
# prediction = x_train * w
# loss = ((prediction - y_train) ** 2).mean()
# y_fixed = y.detach()
# with lib.no_grad():
#     x_val = x[70:] * 1
# ```
#
# For each of the ten tensors, predict `requires_grad` and `is_leaf` **without running it**, and
# return them as `{name: (requires_grad, is_leaf)}`. The check runs the program in PyTorch and
# in mini_autograd and explains each wrong prediction. (Chapter 06 shows what goes wrong in
# training when targets like `y_train` require grad.)


# %%
def my_predictions():
    """{name: (requires_grad, is_leaf)} for the ten tensors of the program above."""
    ### BEGIN SOLUTION 1.5: requires_grad and is_leaf
    return {
        "x": (True, True),
        "noise": (False, True),
        "y": (True, False),
        "x_train": (True, False),
        "y_train": (True, False),
        "w": (True, True),
        "prediction": (True, False),
        "loss": (True, False),
        "y_fixed": (False, True),
        "x_val": (False, True),
    }
    ### END SOLUTION


# %%
check_leaves(my_predictions)

# %% [markdown]
# Done? Chapter 02 walks this graph backwards: each node turns the gradient of its output into
# gradients for its inputs and sends them along exactly the edges you built here.
