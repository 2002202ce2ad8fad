# %% [markdown]
# # Exercises 02 · Backward
#
# Your engine learns to run backward: undoing broadcasting, four backward formulas, the dependency count, the run
# loop that is the heart of every engine, and accumulation into `.grad`. Then a gradient
# checker in this notebook.
#
# | exercise | you write | where |
# |---|---|---|
# | 2.1 | undoing broadcasting in a gradient | `_sum_to` in your engine |
# | 2.2 | the backward formula of `*` | `MulBackward0.apply`, `Node.needs_input_grad` in your engine |
# | 2.3 | the backward formula of `@` | `MmBackward0.apply` in your engine |
# | 2.4 | the backward formulas of `sum` and `mean` | `SumBackward0`, `SumBackward1`, `MeanBackward1` in your engine |
# | 2.5 | a finite-difference gradient checker | this notebook |
# | 2.6 | dependency counting, without recursion | `compute_dependencies` in your engine |
# | 2.7 | the run loop: buffers, order, hooks | `_run_loop`, `register_hook`, `retain_grad` in your engine |
# | 2.8 | a leaf's accumulator, and accumulating into `.grad` | `AccumulateGrad` in your engine |
#
# About 2½ hours; the run loop takes the longest. A check prints one line: `correct ✓`,
# `not done yet`, or what differs. The chapter, `notebooks/02_backward.ipynb`, explains every
# idea used here; the answers are in `solutions/`.
# %%
# numpy is for your code in 2.5.
import numpy as np  # noqa: F401

import mini_autograd as ma  # noqa: F401
from course import track
from course.checks_02 import (
    check_gradcheck,
)

# %% [markdown]
# ## Your engine: `my_autograd.py`
#
# Open `exercises/my_autograd.py` in JupyterLab, search for "Exercise 2.1", write the piece,
# save, and run its check cell here. A check reloads your file, runs the same programs on your
# engine and on PyTorch, and compares them; pieces you have not written yet are taken from
# the course's answer while it runs. Chapter 01's exercise notebook explains the build track.

# %% [markdown]
# ## Exercise 2.1 (your engine): undoing broadcasting
#
# `x * w` with `x` of shape (2, 3) and `w` of shape (3,) uses each element of `w` twice, once
# per row: broadcasting copied `w` along a new leading dimension. In backward, the gradient that
# arrives has the output's shape, (2, 3); `w`'s gradient must have `w`'s shape, and each of its
# elements gets the sum of what its copies received. Write `_sum_to(grad, shape)`. Broadcasting
# adds dimensions **in front**, and stretches dimensions **of size 1**: which dimensions of
# `grad` must be summed, and how does the result get the input's shape back? Use tensor
# operations (`sum(dim, keepdim)`, `reshape`): chapter 05 differentiates these formulas again.
#
# <details><summary>A worked example</summary>
#
# An input of shape (2, 1, 4) broadcast against (2, 3, 4): the output, and `grad`, are (2, 3, 4).
# The input's dimension 1 had size 1 and was stretched to 3, so `grad` is summed over dimension 1,
# giving (2, 1, 4). An input of shape (4,) against the same output: dimensions 0 and 1 were
# added in front; summing them gives (4,).
# </details>

# %%
track.check("2.1")

# %% [markdown]
# ## Exercise 2.2 (your engine): the backward formula of `*`
#
# `out = self * other`, elementwise with broadcasting. Write `MulBackward0.apply(self, g)`: from
# `g`, the gradient of the loss with respect to `out`, return a tuple with a gradient for each
# input. A node reads what it saved with `self.saved("self")` and `self.saved("other")`; each
# was saved only when it is needed (chapter 03), so one may be `None`. Also write
# `Node.needs_input_grad(i)`: does input `i` want a gradient at all? (Look at the node's edges.)
# An input that wants none gets `None`. A gradient must have its input's shape: use your
# `_sum_to`. The check compares the gradients with PyTorch's, second derivatives included, and
# what a node's hook sees.

# %%
track.check("2.2")

# %% [markdown]
# ## Exercise 2.3 (your engine): the backward formula of `@`
#
# `out = self @ mat2` for two matrices, `self` of shape (n, k) and `mat2` of shape (k, m); `g`
# has the shape of `out`, (n, m). Write `MmBackward0.apply(self, g)`. Not sure which product to
# write? Each gradient has the shape of its input, and only one way of multiplying `g` with the
# other matrix (transposed or not) gives that shape. Check your answer on 1×1 matrices, where it
# must reduce to the derivative of a product of two numbers.

# %%
track.check("2.3")

# %% [markdown]
# ## Exercise 2.4 (your engine): the backward formulas of `sum` and `mean`
#
# `out = self.sum()` is one number; every element of `self` added into it once. Write
# `SumBackward0.apply`: what does each element's gradient get? Then `SumBackward1.apply`, for
# `self.sum(dim, keepdim)`: the node knows `_saved_self_sym_sizes` (self's shape), `_saved_dim`
# (an int or a tuple, perhaps negative) and `_saved_keepdim`. Without `keepdim` the summed
# dimensions are gone from `g`: they must come back, with size 1, before `g` can be spread
# (`expand`) over self's shape. `_kept_shape(sizes, dims)` gives keepdim's shape. Last,
# `MeanBackward1.apply` for `self.mean(dim, keepdim)`: how many elements went into each mean?
# (`_saved_self_sym_numel` is the number of elements of self.)

# %%
track.check("2.4")

# %% [markdown]
# ## Exercise 2.5: a finite-difference gradient checker
#
# Write `gradcheck(fn, *arrays, eps=1e-6)`. `fn` takes `mini_autograd` tensors and returns a
# one-element tensor; `arrays` are numpy arrays. Return a list with one number per input: the
# largest absolute difference between
#
# - the gradient from `backward()` (make float64 tensors with `requires_grad=True`,
#   run `fn` on them, call `backward()` on the result, read `.grad`), and
# - the central finite difference, entry by entry:
#   $\frac{f(x + \varepsilon e_i) - f(x - \varepsilon e_i)}{2\varepsilon}$, where $f$ calls
#   `fn` on fresh tensors and `.item()` reads the number.
#
# The check feeds it correct functions (every number must be below $10^{-8}$: in float64,
# central differences agree with backward to about $10^{-10}$) and three functions whose
# backward formulas have planted bugs, patched into the engine: your checker must blame exactly
# the inputs whose gradients are wrong.


# %%
def gradcheck(fn, *arrays, eps=1e-6):
    """[largest |backward gradient - finite-difference gradient| for each input]."""
    ### BEGIN SOLUTION 2.5: a finite-difference gradient checker
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    tensors = [ma.tensor(a.copy(), requires_grad=True) for a in arrays]
    fn(*tensors).backward()
    gaps = []
    for i, tensor in enumerate(tensors):
        numerical = np.zeros_like(arrays[i])
        for index in np.ndindex(arrays[i].shape):
            plus = [a.copy() for a in arrays]
            minus = [a.copy() for a in arrays]
            plus[i][index] += eps
            minus[i][index] -= eps
            f_plus = fn(*[ma.tensor(a) for a in plus]).item()
            f_minus = fn(*[ma.tensor(a) for a in minus]).item()
            numerical[index] = (f_plus - f_minus) / (2 * eps)
        gaps.append(float(np.abs(tensor.grad.numpy() - numerical).max()))
    return gaps
    ### END SOLUTION


# %%
check_gradcheck(gradcheck)

# %% [markdown]
# Done? Your gradient checker is the same tool the course's own tests use: every backward
# formula in `mini_autograd/ops/` is checked against finite differences and against PyTorch.
# Next chapter: what those formulas keep in memory while they wait for backward.

# %% [markdown]
# ## Exercise 2.6 (your engine): counting dependencies without recursion
#
# Before it runs anything, the engine counts, for every node reachable from the start nodes, how
# many edges point into it: how many gradients that node will receive before it may run. Write
# `compute_dependencies(roots)`, returning `{node: count}`. Count **every** edge (in
# `(x * x).sum()` both edges of `MulBackward0` go to `x`'s AccumulateGrad, which counts 2), but
# visit **each node once**. `roots` may be a generator, and may name the same node twice. No
# recursion: the check runs a chain of 3,000 operations, deeper than Python lets a function call
# itself, so keep the nodes still to visit in a list.
#
# <details><summary>A worked example</summary>
#
# `loss = (x * x + x).sum()`: SumBackward0 → AddBackward0 → (MulBackward0, AccumulateGrad of x),
# and MulBackward0 → (AccumulateGrad, AccumulateGrad). The counts: AddBackward0 1, MulBackward0
# 1, AccumulateGrad 3 (one edge from AddBackward0, two from MulBackward0). SumBackward0, the
# root, has no edge into it: it is absent (or 0). Walk it by hand with a list and a set, and
# notice when the AccumulateGrad is reached a second and a third time.
# </details>

# %%
track.check("2.6")

# %% [markdown]
# ## Exercise 2.7 (your engine): the run loop
#
# The heart of the engine: `_run_loop`, given the roots' edges, their gradients, `retain_graph`
# and `capture`. It must
#
# * give each root its starting gradient, and add up gradients that arrive at the same node (a
#   **buffer** per node); a root may be missing from the counts (no edge points into it);
# * run a node only when all the gradients it will receive have arrived (your counts), and among
#   the nodes ready to run, run the one **created last** first: `node._sequence_nr` numbers them in
#   creation order, and every AccumulateGrad has the largest number (`heapq` keeps a priority
#   queue of tuples; it compares them item by item);
# * before `apply`, pass the gradient through the output tensor's hooks (`node._tensor_pre_hooks`,
#   each `hook(grad)`) and the node's pre-hooks (`node._pre_hooks`, each `hook(grad_outputs)`,
#   a tuple); after it, through the node's post-hooks (`node._hooks`, each
#   `hook(grad_inputs, grad_outputs)`: PyTorch calls `grad_outputs` the gradients a node receives
#   and `grad_inputs` those `apply` returns, one per input). A hook that returns `None` changes
#   nothing;
# * for `autograd.grad` (chapter 05), when there is a capture, ask it whether the node runs
#   (`capture.runs(node)`) and have it keep what arrived (`capture.keep(node, grads)`), where
#   PyTorch does: for a node that runs, before any hook; for one that does not, after the
#   output tensor's hooks, and then skip it;
# * after `apply`, free the node's saved tensors unless `retain_graph` (`release_variables`,
#   chapter 04), and send each gradient along its edge;
# * a gradient may be `None` (a hook can drop one): nothing is sent along that edge, but the
#   node at its end still counts it as arrived, and a node that receives nothing but `None`
#   does not run `apply`: `None` is what flows on from it. Its hooks still run, and see `None`.
#
# Also write two small pieces:
#
# * `register_hook(self, hook)`: a tensor's hook goes to the node that receives its gradient
#   (which one is that, for a leaf?). PyTorch refuses a tensor that does not require grad
#   ("cannot register a hook on a tensor that doesn't require gradient") and returns a handle;
#   returning the hook itself will do here.
# * `retain_grad(self)`: a hook that keeps the gradient in `.grad`. The first gradient it keeps
#   must be memory of `.grad`'s own, since the one that arrives may be shared (the very tensor
#   given to `backward`, say): PyTorch keeps a clone, recorded like any operation (the given
#   node `CloneBackward0`), so that under `create_graph` it is part of the graph. A later one is
#   added into a new tensor: unlike a leaf's accumulation in 2.8, PyTorch does not add into the
#   old `.grad`. On a leaf it does nothing; on a tensor that does not require grad PyTorch
#   refuses, with `RETAIN_GRAD_MESSAGE`. This hook runs after the tensor's other hooks, whatever
#   the order they were registered in: the node keeps it apart, in `_retain_grad_hook`, and
#   your loop calls it last.
#
# The check compares the order the nodes run in, and the gradients, with PyTorch's.
#
# <details><summary>Pseudo-code</summary>
#
# ```text
# counts <- compute_dependencies(the root nodes)
# buffers <- the roots' gradients, added per node
# ready <- the roots no edge points into, by -sequence number
# while something is ready:
#     take the newest ready node and its buffer
#     capture (a node that runs)?; hooks before; capture and skip (one that does not)?
#     apply; hooks after; free unless retain_graph
#     for each edge with a node: add into its buffer, count down, ready at zero
# ```
# </details>

# %%
track.check("2.7")

# %% [markdown]
# ## Exercise 2.8 (your engine): accumulating into `.grad`
#
# The last node on every path is a leaf's `AccumulateGrad`. Write its `__init__` (it has no
# inputs; it remembers its leaf as `variable`, PyTorch's name, and among ready nodes it must run
# first) and its `apply(grad)`:
#
# * the first gradient becomes `variable.grad` as a copy of its own, recorded like any operation
#   (the given node `CopyBackwards`, PyTorch's): outside the graph unless grad mode is on, which
#   during backward means `create_graph=True`;
# * a later one is added **into `.grad`'s own memory**, so that `x.grad` stays the same tensor
#   and whatever shares its memory (`g = x.grad`, `x.grad.detach()`, `x.grad.numpy()`) sees the
#   sum, as in PyTorch; except under `create_graph`, where the sum is a new tensor in the graph;
# * adding into `.grad` is an in-place change like `add_`: it counts in `.grad`'s version (the
#   counter of chapter 03), so that a graph that saved the old `.grad` refuses the new values;
# * careful: `(a + b).sum()` sends the **same** gradient tensor to both leaves, and a caller may
#   still hold the gradient it handed to `backward`: only memory that is `.grad`'s own may change;
# * it returns an empty tuple: the node has no inputs of its own.
#
# <details><summary>Which of these does PyTorch do?</summary>
#
# Run in a cell: `x = torch.ones(2, requires_grad=True); (x * 2).sum().backward(); g = x.grad;
# m = x.grad.detach(); (x * 3).sum().backward()`, then compare `g is x.grad`, `g` and `m`. Then
# the same with `create_graph=True` on the second call, and `x.grad.requires_grad`.
# </details>

# %%
track.check("2.8")

# %% [markdown]
# ## Your engine so far
#
# Every build-track exercise of the course, checked against your file (the same table as
# `make progress` prints):

# %%
track.progress()
