# %% [markdown]
# # Exercises 02 · Backward
#
# Five pieces of the backward engine, each run **inside** `mini_autograd` and compared with
# PyTorch:
#
# | exercise | you write | it runs as |
# |---|---|---|
# | 2.1 | the backward formula of `*` | `MulBackward0.apply` |
# | 2.2 | the backward formula of `@` | `MmBackward0.apply` |
# | 2.3 | dependency counting, without recursion | the engine's `_count_dependencies` |
# | 2.4 | the order in which backward runs the nodes | the real nodes, driven in your order |
# | 2.5 | a finite-difference gradient checker | run against correct and planted-bug formulas |
#
# Replace each `raise NotImplementedError(...)` line with your code and run the check cell
# below it. A check prints one line: `correct ✓`, `not done yet`, or what differs and by how
# much. The chapter, `notebooks/02_backward.ipynb`, explains every idea used here; the answers
# are in `solutions/02_backward.ipynb`.

# %%
# Some of these imports are for your code: heapq and itertools (2.4), numpy (2.5), sum_to (2.1).
import heapq  # noqa: F401
import itertools  # noqa: F401

import numpy as np  # noqa: F401

import mini_autograd as ma  # noqa: F401
from course.checks_02 import (
    check_backward_order,
    check_count_dependencies,
    check_gradcheck,
    check_mm_backward,
    check_mul_backward,
)
from mini_autograd.ops.recording import sum_to  # noqa: F401

# %% [markdown]
# ## Exercise 2.1: the backward formula of `*`
#
# `out = self * other` (elementwise, with broadcasting). Write the body of
# `MulBackward0.apply(self, g)`: given `g`, the gradient of the loss with respect to `out`,
# return a tuple `(grad for self, grad for other)`. What the node gives you:
#
# - `self.saved("self")` and `self.saved("other")`: the two inputs. The node saves each one
#   **only if the other input needs a gradient**, so one of them may be `None`.
# - `self.needs_input_grad(i)`: whether input `i` wants a gradient. Return `None` for an
#   input that does not.
# - `self._info`: the two input shapes. If an input was broadcast (shape `(3,)` multiplied
#   with `(2, 3)`), its gradient must be summed back to its own shape:
#   `sum_to(grad, self._info[i])`.
#
# Compute with tensor operations on `g` (no numpy), as the engine's own formulas do. The check
# patches your function into `MulBackward0`, runs five programs through the engine, and
# compares every input's gradient with PyTorch's.


# %%
def mul_backward(self, g):
    """MulBackward0.apply: (d loss/d self, d loss/d other) from g = d loss/d out."""
    ### BEGIN SOLUTION 2.1: the backward formula of mul
    grad_self = grad_other = None
    if self.needs_input_grad(0):
        grad_self = sum_to(g * self.saved("other"), self._info[0])
    if self.needs_input_grad(1):
        grad_other = sum_to(g * self.saved("self"), self._info[1])
    return grad_self, grad_other
    ### END SOLUTION


# %%
check_mul_backward(mul_backward)

# %% [markdown]
# ## Exercise 2.2: the backward formula of `@`
#
# `out = self @ mat2` for two matrices, `self` of shape (n, k) and `mat2` of shape (k, m).
# Write `MmBackward0.apply(self, g)`, where `g` has the shape of `out`, (n, m). The inputs are
# `self.saved("self")` and `self.saved("mat2")` (again, each saved only when the *other* one
# needs a gradient). Transpose a tensor with `.t()` or `.T`.
#
# Not sure which product to write? Each gradient has the shape of its input; only one way
# of multiplying `g` with the other matrix gives that shape.


# %%
def mm_backward(self, g):
    """MmBackward0.apply: (d loss/d self, d loss/d mat2) from g = d loss/d out."""
    ### BEGIN SOLUTION 2.2: the backward formula of mm
    grad_self = grad_mat2 = None
    if self.needs_input_grad(0):
        grad_self = g @ self.saved("mat2").t()
    if self.needs_input_grad(1):
        grad_mat2 = self.saved("self").t() @ g
    return grad_self, grad_mat2
    ### END SOLUTION


# %%
check_mm_backward(mm_backward)

# %% [markdown]
# ## Exercise 2.3: counting dependencies without recursion
#
# Before it runs anything, the engine counts, for every node reachable from the start nodes,
# how many edges point into it: how many gradients that node will receive. Write
# `count_dependencies(start_nodes)`, returning a dict `{node: count}`.
#
# - `start_nodes` is an iterable of nodes (the `grad_fn` of each output). The engine passes a
#   generator, which can be read only once.
# - `node.next_functions` is a tuple of edges `(next_node, input_nr)`; `next_node` may be
#   `None` (an input that needs no gradient): skip those.
# - Count **every** edge, but walk **each node once**: in `(x * x).sum()`, both edges of
#   `MulBackward0` go to `x`'s `AccumulateGrad`, which counts 2.
# - No recursion: the check also runs a chain of 3,000 operations, three times deeper than
#   Python lets a function call itself. Keep the nodes still to visit in a list.
#
# The check compares your counts with the right ones on seven graphs, then patches your
# function into the engine (`ma.engine._count_dependencies`) and compares the gradients that
# backward produces with PyTorch's.


# %%
def count_dependencies(start_nodes):
    """{node: number of edges pointing into it}, for every node reachable from start_nodes."""
    ### BEGIN SOLUTION 2.3: dependency counting
    counts = {}
    stack = [node for node in start_nodes if node is not None]
    seen = set(stack)
    while stack:
        node = stack.pop()
        for next_node, _ in node.next_functions:
            if next_node is None:
                continue
            counts[next_node] = counts.get(next_node, 0) + 1
            if next_node not in seen:
                seen.add(next_node)
                stack.append(next_node)
    return counts
    ### END SOLUTION


# %%
check_count_dependencies(count_dependencies)

# %% [markdown]
# For comparison, this is what the check says about micrograd's recursive way of walking the
# graph (it counts correctly, but only on shallow graphs):


# %%
def recursive_count_dependencies(start_nodes):
    counts, seen = {}, set()

    def visit(node):
        for next_node, _ in node.next_functions:
            if next_node is not None:
                counts[next_node] = counts.get(next_node, 0) + 1
                if next_node not in seen:
                    seen.add(next_node)
                    visit(next_node)

    for node in start_nodes:
        seen.add(node)
        visit(node)
    return counts


check_count_dependencies(recursive_count_dependencies)

# %% [markdown]
# ## Exercise 2.4: the order of the backward pass
#
# Write `backward_order(loss)`: the list of nodes (`AccumulateGrad` nodes included) in the
# order the engine runs them when you call `loss.backward()`. The rules, from the chapter:
#
# 1. A node may run only when every node with an edge into it has run (its dependency count
#    has dropped to zero). `loss.grad_fn` starts alone in the ready queue.
# 2. Among the ready nodes, the one **created last** runs first: the largest
#    `node._sequence_nr`. `heapq` pops the smallest item, so push
#    `(-node._sequence_nr, next(counter), node)` with `counter = itertools.count()`: every
#    `AccumulateGrad` has the same (largest) number, and among equals the counter makes the
#    one pushed first run first (and keeps `heapq` from comparing two nodes).
# 3. When a node runs, each `next_node` in its `next_functions` (skip `None`) loses one from
#    its count; at zero it becomes ready.
#
# Only work out the order: do not call `backward()` or any node's `apply`. For the counts,
# use your `count_dependencies` or the engine's `ma.engine._count_dependencies`.
#
# The check runs the real nodes in your order, as the engine would, and says which node was
# visited too early if one was; then it compares the gradients, and the order itself with the
# order PyTorch runs the same program in (recorded with node pre-hooks).


# %%
def backward_order(loss):
    """The nodes of loss's graph, in the order backward runs them."""
    ### BEGIN SOLUTION 2.4: the backward order
    counts = ma.engine._count_dependencies([loss.grad_fn])
    counter = itertools.count()
    ready = [(-loss.grad_fn._sequence_nr, next(counter), loss.grad_fn)]
    order = []
    while ready:
        node = heapq.heappop(ready)[2]
        order.append(node)
        for next_node, _ in node.next_functions:
            if next_node is None:
                continue
            counts[next_node] -= 1
            if counts[next_node] == 0:
                heapq.heappush(ready, (-next_node._sequence_nr, next(counter), next_node))
    return order
    ### END SOLUTION


# %%
check_backward_order(backward_order)

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
