# %% [markdown]
# # Exercises 01 · The graph
#
# This chapter starts **your own engine**, `exercises/my_autograd.py`: the tensor, the rule
# for when an operation records a node, its edges, recording itself, `detach` and `no_grad`.
# Two more exercises use what the chapter taught on any engine's graph.
#
# | exercise | you write | where |
# |---|---|---|
# | 1.1 | the edge of one input in `next_functions` | `gradient_edge` in your engine |
# | 1.2 | recording an operation: the decision, the node, its edges | `_record` in your engine |
# | 1.3 | `detach`: a tensor cut out of the graph | `detach` in your engine |
# | 1.4 | `walk`: every node of a graph, breadth first | this notebook (runs inside `draw_graph`) |
# | 1.5 | predictions: which tensors require grad, which are leaves | this notebook |
# | 1.6 | `no_grad`, as a block and as a decorator | `_SetGradMode` in your engine |
#
# About 80 minutes. Until you write a piece, its check prints a "not done yet" line, so the
# notebook always runs from top to bottom. Answers: `solutions/01_the_graph.ipynb` and
# `solutions/my_autograd.py`.
# %%
import torch

import mini_autograd as ma
from course import track
from course.checks_01 import (
    check_leaves,
    check_walk,
)

# %% [markdown]
# ## Your engine: `my_autograd.py`
#
# The exercises marked **your engine** are written in one file, `exercises/my_autograd.py`,
# that grows chapter by chapter into an autograd engine of your own: numpy only, with PyTorch's
# names, so the same program runs with `lib = torch`, `lib = mini_autograd` or
# `lib = my_autograd`. Open it in JupyterLab (file browser: `exercises/my_autograd.py`), search
# for "Exercise 1.1", replace the `raise NotImplementedError(...)` line with your code, save
# the file, and run the check cell here. Each check reloads the file, runs a few programs on your
# engine and on PyTorch, and compares values, gradients, node names, `next_functions`, saved
# tensors, errors and the backward order. It prints one line: `correct ✓`, `not done yet`, or
# what differs. Pieces you have not written yet are taken from the course's answer while a
# check runs, so you can do the exercises in any order; the complete engine is
# `solutions/my_autograd.py`.

# %% [markdown]
# ## Exercise 1.1 (your engine): the edge of one input
#
# When an operation records its node, it gives it one **edge** per input: the pair
# `(node, input_nr)` saying where the gradient for that input goes in backward. The node's
# `next_functions` is the tuple of these edges. Write `gradient_edge(t)`.
#
# Think about the three kinds of input an operation can get: a tensor that an operation made, a
# leaf that requires grad, and anything else (a constant, a Python number such as the 2 in
# `x * 2`). A leaf's gradient goes to an `AccumulateGrad` node, and every operation that uses the
# leaf must find the **same** one (your engine keeps it for the leaf's whole life, a cycle of
# leaf and node that Python's garbage collector frees; PyTorch keeps it only while some graph
# holds it, through a weak reference): where will you keep it, and when do you make it? Every
# operation here has one output, so the second element is always 0.
#
# <details><summary>Stuck? A smaller example</summary>
#
# In PyTorch, `a, b = x * 2, x * 3` gives `a.grad_fn.next_functions[0][0] is
# b.grad_fn.next_functions[0][0]`: both edges lead to the same node. `(c * x).grad_fn.next_functions`
# for a constant `c` starts with `(None, 0)`. Try both in a cell, then write the three cases.
# </details>

# %%
track.check("1.1")

# %% [markdown]
# ## Exercise 1.2 (your engine): recording an operation
#
# Every operation of your engine computes its numpy result and then calls
# `_record(node_class, data, inputs, saved, saved_result, **attributes)`, which you write. It
# answers the question of this chapter, *should a node be recorded?*, and if so builds it:
#
# * the decision: when does an operation record a node? (Think of `no_grad`, of constants, and of
#   an input that requires grad in **second** position, as in `c * x`.)
# * the node: one edge per input, the operation's settings set on it as attributes
#   (`_shapes`, `_saved_dim`, ...), and what it keeps for backward: `saved` pairs a name with a
#   value, or with `None` when it need not be kept. Keep a value as a `SavedTensor` (chapter 03)
#   in `node._saved`. A Python number is kept as a tensor of its own (`_as_tensor`), as PyTorch
#   keeps a "wrapped number": an int becomes int64, a float float64 (look at `_saved_other` of
#   `x * 4` in PyTorch), and in arithmetic it acts as the Python number it was, so it never turns
#   a float32 gradient into float64.
# * the result: a tensor that points back at its node. When `saved_result` is true the node also
#   keeps its own output, under the name `"result"`, marked as an output (`is_output=True`).
#
# The check compares whole graphs with PyTorch's: node names, edges and saved tensors.
#
# <details><summary>Pseudo-code</summary>
#
# ```text
# if nothing needs a gradient here:   return a tensor with no history
# node  <- a node of this class, its edges from the inputs
# copy the settings onto the node; keep each value that is not None
# out   <- a tensor that requires grad and was made by node
# if the node keeps its result:   keep out too
# return out
# ```
# </details>

# %%
track.check("1.2")

# %% [markdown]
# ## Exercise 1.3 (your engine): `detach`
#
# `y.detach()` returns a tensor with the same values, cut out of the graph: no `grad_fn`,
# `requires_grad=False`. Two details make it PyTorch's `detach` and not a copy: it **shares
# memory** with `y`, and it **shares the version counter** (`_version_counter`), so an in-place
# change through either one counts for both (chapter 03 shows why that matters). Write `detach`.
# The check zeroes a detached tensor in place and compares `y`, its `_version` and the error a
# later backward raises with PyTorch's.

# %%
track.check("1.3")

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
# ## Exercise 1.6 (your engine): `no_grad`
#
# `with no_grad():` turns recording off inside the block and restores it after, even when the
# block raises; blocks nest, and `enable_grad` inside `no_grad` turns recording on for its own
# block only. `no_grad` and `enable_grad` are subclasses of `_SetGradMode` that differ only in
# `mode`. Write its `__enter__`, `__exit__` and `__call__` (the decorator form, `@no_grad()`,
# which runs the decorated function inside a fresh block, and returns a function that still
# answers to the decorated one's name and docstring, as any well-behaved decorator does). What
# should `__exit__` restore after `with no_grad(): with no_grad(): ...`? And what does returning
# a true value from `__exit__` do to an exception?

# %%
track.check("1.6")

# %% [markdown]
# Done? Chapter 02 walks this graph backwards: each node turns the gradient of its output into
# gradients for its inputs and sends them along exactly the edges you built here.

# %% [markdown]
# ## Your engine so far
#
# Every build-track exercise of the course, checked against your file (the same table as
# `make progress` prints):

# %%
track.progress()
