# %% [markdown]
# # Exercises 02 · Backward
#
# Your engine learns to run backward: two backward formulas, the dependency count, the run
# loop that is the heart of every engine, and accumulation into `.grad`. Then a gradient
# checker in this notebook.
#
# | exercise | you write | where |
# |---|---|---|
# | 2.1 | the backward formula of `*` | `MulBackward0.apply` in your engine |
# | 2.2 | the backward formula of `@` | `MmBackward0.apply` in your engine |
# | 2.3 | dependency counting, without recursion | `count_dependencies` in your engine |
# | 2.4 | the run loop: buffers, the ready heap, the order | `_run_loop` in your engine |
# | 2.6 | accumulating into `.grad` | `AccumulateGrad.apply` in your engine |
# | 2.5 | a finite-difference gradient checker | this notebook |
#
# About 90 minutes; the run loop takes the longest. A check prints one line: `correct ✓`,
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
# ## Exercise 2.1 (your engine): the backward formula of `*`
#
# `out = self * other`, elementwise with broadcasting. Write `MulBackward0.apply(self, g)`: given
# `g`, the gradient of the loss with respect to `out`, return `(grad for self, grad for other)`.
#
# * `self.saved("self")` and `self.saved("other")` are the two inputs. Each is saved **only if
#   the other input needs a gradient** (chapter 03), so one of them may be `None`.
# * `self.needs_input_grad(i)`: whether input `i` wants a gradient; return `None` for one that
#   does not.
# * `self._shapes` holds the two input shapes. A broadcast input's gradient must be summed back
#   to its own shape: `_sum_to(grad, self._shapes[i])`.
#
# Compute with tensor operations on `g` (no numpy): chapter 05 differentiates these formulas
# again. The check compares every input's gradient with PyTorch's.

# %%
track.check("2.1")

# %% [markdown]
# ## Exercise 2.2 (your engine): the backward formula of `@`
#
# `out = self @ mat2` for two matrices, `self` of shape (n, k) and `mat2` of shape (k, m). Write
# `MmBackward0.apply(self, g)`, where `g` has the shape of `out`, (n, m). The inputs are
# `self.saved("self")` and `self.saved("mat2")` (each saved only when the *other* one needs a
# gradient); transpose with `.t()`. Not sure which product to write? Each gradient has the
# shape of its input; only one way of multiplying `g` with the other matrix gives that shape.

# %%
track.check("2.2")

# %% [markdown]
# ## Exercise 2.3 (your engine): counting dependencies without recursion
#
# Before it runs anything, the engine counts, for every node reachable from the start nodes, how
# many edges point into it: how many gradients that node will receive. Write
# `count_dependencies(roots)`, returning a dict `{node: count}`.
#
# * `roots` is an iterable of nodes; the engine passes a generator, which can be read once.
# * `node.next_functions` is a tuple of edges `(next_node, output_nr)`; skip `None` nodes.
# * Count **every** edge, but walk **each node once**: in `(x * x).sum()` both edges of
#   `MulBackward0` go to `x`'s AccumulateGrad, which counts 2.
# * No recursion: the check also runs a chain of 3,000 operations, deeper than Python lets a
#   function call itself. Keep the nodes still to visit in a list.

# %%
track.check("2.3")

# %% [markdown]
# ## Exercise 2.4 (your engine): the run loop
#
# The heart of the engine: `_run_loop(root_edges, grads, retain_graph, capture)`. The rules:
#
# 1. Count the dependencies (`count_dependencies(node for node, _ in root_edges)`), and put each
#    root's gradient into its node's **buffer**: `_add_to_buffer(buffers, node, nr, grad)` adds
#    gradients that arrive at the same input.
# 2. Ready nodes wait in a heap. Among them the one **created last** runs first: push
#    `(-node._sequence_nr, next(tie), node)` with `tie = itertools.count()` (every
#    AccumulateGrad has the largest number; among equals the one pushed first runs first).
# 3. Pop a node, take its buffer and run the hooks: `grads_in = _run_pre_hooks(node,
#    buffers.pop(node))`. Then the line for chapter 05, as it is:
#    `if capture is not None and capture.takes(node, grads_in): continue`.
# 4. `grads_out = node.apply(*grads_in)`; run `node._hooks` (each `hook(grads_out, grads_in)`
#    may return replacements); if not `retain_graph`, `release_saved(node)` (chapter 04).
# 5. For each edge `(next_node, nr)` with its gradient: skip `None` nodes, add the gradient to
#    the next node's buffer, lower its count by one, and push it when the count reaches 0.
#
# The check compares the order the nodes run in with the order PyTorch runs them in, and the
# gradients, on a diamond, a two-branch program and the 3,000-step chain.

# %%
track.check("2.4")

# %% [markdown]
# ## Exercise 2.6 (your engine): accumulating into `.grad`
#
# The last node on every path is a leaf's `AccumulateGrad`. Write its `apply(grad)`:
#
# * the first gradient becomes `variable.grad`: detached (`grad.detach()`) unless grad mode is
#   on, which during backward means `create_graph=True`;
# * a later one is **added into the same tensor** (`variable.grad._data = ... + grad._data`),
#   so code holding `x.grad` sees the sum, as in PyTorch; under `create_graph` it is added
#   out of place instead (`variable.grad + grad`), so that the sum is part of the graph;
# * return `()`: the node has no inputs of its own.

# %%
track.check("2.6")

# %% [markdown]
# ## Exercise 2.5: a finite-difference gradient checker
#
# Write `gradcheck(fn, *arrays, eps=1e-6)`. `fn` takes `mini_autograd` tensors and returns a
# one-element tensor; `arrays` are numpy arrays. Return a list with one number per input: the
# largest absolute difference between
#
# - the gradient from `backward()` (make float64 tensors with `requires_grad=True`, call
#   `fn(*tensors).backward()`, read `.grad`), and
# - the central finite difference, entry by entry:
#   $\frac{f(x + \varepsilon e_i) - f(x - \varepsilon e_i)}{2\varepsilon}$, where $f$ calls
#   `fn` on fresh tensors and `.item()` reads the number.
#
# The check feeds it two correct functions (every number must be below $10^{-6}$) and two
# functions whose backward formulas have planted bugs, patched into the engine: your checker
# must blame exactly the inputs whose gradients are wrong.


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
# ## Your engine so far
#
# Every build-track exercise of the course, checked against your file (the same table as
# `make progress` prints):

# %%
track.progress()
