# %% [markdown]
# # Exercises 01 · The graph
#
# This chapter starts **your own engine**, `exercises/my_autograd.py`: the tensor, the rule
# for when an operation records a node, its edges, recording itself, `detach` and `no_grad`.
# Two more exercises use what the chapter taught on any engine's graph.
#
# | exercise | you write | where |
# |---|---|---|
# | 1.1 | when an operation records a node | `_wants_grad` in your engine |
# | 1.2 | the edge of one input in `next_functions` | `_edge` in your engine |
# | 1.3 | `detach`: a tensor cut out of the graph | `Tensor.detach` in your engine |
# | 1.6 | recording a node | `_record` in your engine |
# | 1.7 | `no_grad` | `_SetGradMode.__enter__`, `__exit__` in your engine |
# | 1.4 | `walk`: every node of a graph, breadth first | this notebook (runs inside `draw_graph`) |
# | 1.5 | predictions: which tensors require grad, which are leaves | this notebook |
#
# About 60 minutes. Until you write a piece, its check prints a "not done yet" line, so the
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
# ## Exercise 1.1 (your engine): when does an operation record a node?
#
# Every operation of your engine computes its numpy result first and then asks one question:
# *should I record a backward node for this?* Write `_wants_grad(*inputs)`: True exactly when
# grad mode is on (`_GradMode.enabled`, which `no_grad` turns off) **and** at least one input is
# a `Tensor` with `requires_grad=True`. Inputs may be Python numbers (`x * 2`): they never
# require grad. The check runs programs with constants, `detach`, mixed inputs and `no_grad`.

# %%
track.check("1.1")

# %% [markdown]
# ## Exercise 1.2 (your engine): the edge of one input
#
# When an operation records its node, it gives it one **edge** per input, the pair
# `(node, output_nr)` that says where the gradient for that input goes in backward; the node's
# `next_functions` is the tuple of these edges. Write `_edge(t)`:
#
# * a tensor made by an operation: `(t.grad_fn, 0)` (every operation here has one output);
# * a leaf that requires grad: its `AccumulateGrad` node and 0. Get it with
#   `t._grad_accumulator()`, which makes it the first time and then returns **the same node**,
#   so a leaf used twice has one AccumulateGrad, as in PyTorch;
# * anything else (a constant, a Python number): `(None, 0)`, no edge to follow.
#
# The check compares the graphs of a leaf used twice, a constant input and numbers on either
# side of an operator (`x + 2`, `1 - x`) with PyTorch's, node by node and edge by edge.

# %%
track.check("1.2")

# %% [markdown]
# ## Exercise 1.3 (your engine): `detach`
#
# `y.detach()` returns a tensor with the same values, cut out of the graph: no `grad_fn`,
# `requires_grad=False`. Two details make it PyTorch's `detach` and not a copy:
#
# * it **shares memory** with `y`: `Tensor(self._data)` wraps the same numpy array, no copy;
# * it **shares the version counter**: in-place changes made through the detached tensor
#   still count for `y` (chapter 03 shows why). The counter is the one-element list
#   `_version_box`: give the new tensor the same list.
#
# Write `Tensor.detach`. The check zeroes a detached tensor in place and compares `y`, its
# `_version`, and the error a later backward raises, with PyTorch.

# %%
track.check("1.3")

# %% [markdown]
# ## Exercise 1.6 (your engine): recording a node
#
# Now the step that builds the graph. Every operation ends with
# `_record(node_class, data, inputs, saved, saved_result, **attributes)`. Write it:
#
# 1. if `_wants_grad(*inputs)` is false, return a plain `Tensor(data)`;
# 2. otherwise make the node, `node_class([_edge(t) for t in inputs])`;
# 3. set each of `attributes` on it (`setattr(node, name, value)`: the operation's settings,
#    such as `_saved_dim` or `_shapes`);
# 4. for each `(name, value)` in `saved` whose value is not None, store
#    `node._saved[name] = SavedTensor(_as_tensor(value, data.dtype), node)` (a Python number is
#    saved as a tensor, as PyTorch does; chapter 03 is about these);
# 5. make the result, `Tensor(data, requires_grad=True, grad_fn=node)`, and when
#    `saved_result` is true also save it: `SavedTensor(result, node, is_output=True)` under
#    the name `"result"`.
#
# The check compares whole graphs with PyTorch's: node names, edges and saved tensors.

# %%
track.check("1.6")

# %% [markdown]
# ## Exercise 1.7 (your engine): `no_grad`
#
# `with no_grad():` turns recording off inside and back on after, even when the block raises, and
# blocks nest: a `no_grad` inside another must leave grad mode **off** when it ends, and
# `enable_grad` inside `no_grad` turns it on for its own block only. `no_grad` and
# `enable_grad` are subclasses of `_SetGradMode` that differ only in `mode`. Write its
# `__enter__` (remember the current `_GradMode.enabled` in `self.previous`, then set it to
# `self.mode`) and `__exit__` (put the remembered value back). The decorator form,
# `@no_grad()`, is given: it uses your two methods.

# %%
track.check("1.7")

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

# %% [markdown]
# ## Your engine so far
#
# Every build-track exercise of the course, checked against your file (the same table as
# `make progress` prints):

# %%
track.progress()
