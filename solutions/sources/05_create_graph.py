# %% [markdown]
# # Exercises 05 · `create_graph`: gradients of gradients
#
# Your engine gets second derivatives and `autograd.grad`; then three exercises use them.
#
# | exercise | you write | where |
# |---|---|---|
# | 5.1 | backward formulas that can be differentiated again | `SigmoidBackward0.apply`, `DivBackward0.apply` in your engine |
# | 5.2 | a Hessian–vector product with two `autograd.grad` calls | this notebook |
# | 5.3 | the one-sided gradient penalty, one function for both libraries | this notebook |
# | 5.4 | a full Hessian, built row by row | this notebook |
# | 5.5 | `autograd.grad` | `grad` in your engine |
# | 5.6 | capturing the gradients of the inputs | `_Capture`, `_nodes_leading_to` in your engine |
#
# About 90 minutes. Each check prints one line; until you fill a piece in, its check says
# "not done yet", so the notebook always runs from top to bottom.
# %%
import numpy as np
import torch

import mini_autograd as ma
from course import track
from course.checks_05 import (
    check_gradient_penalty,
    check_hessian,
    check_hvp,
)

ma.manual_seed(0)
torch.manual_seed(0)
np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## Your engine: `my_autograd.py`
#
# Open `exercises/my_autograd.py` in JupyterLab, search for "Exercise 5.1", write the piece,
# save, and run its check cell here. A check reloads your file, runs the same programs on your
# engine and on PyTorch, and compares them; pieces you have not written yet are taken from
# the course's answer while it runs. Chapter 01's exercise notebook explains the build track.

# %% [markdown]
# ## Exercise 5.1 (your engine): backward formulas that can be differentiated again
#
# With `create_graph=True` your `run_backward` runs the formulas with grad mode on, so the
# formulas themselves are recorded and can be differentiated again. That works only for a
# formula written with tensor operations: one computed on numpy arrays (`._data`) leaves the
# graph. Write `SigmoidBackward0.apply` (sigmoid's derivative, like tanh's, can be written from
# its output) and `DivBackward0.apply` (`out = self / other`, broadcast: the quotient rule, each
# gradient back to its input's shape, `None` where none is needed). The check takes second
# derivatives with an upstream gradient other than ones, so forgetting `g` shows.

# %%
track.check("5.1")

# %% [markdown]
# ## Exercise 5.2: a Hessian–vector product
#
# For a scalar function $f$ of a 1-D tensor $x$ and a vector $v$ of the same shape,
#
# $$Hv = \nabla_x\big(\nabla_x f(x)\cdot v\big).$$
#
# Write `hvp(f, x, v)` with `ma.autograd.grad` alone, without ever building $H$: read the
# formula from the inside out, and ask what the outer gradient needs from the inner one. Return
# a tensor shaped like `x`. (`autograd.grad` returns a tuple, one entry per input: unpack it
# with `(g,) = ...`.)


# %%
def hvp(f, x, v):
    """The Hessian of f at x times v, without building the Hessian."""
    ### BEGIN SOLUTION 5.2: Hessian-vector product
    (g,) = ma.autograd.grad(f(x), x, create_graph=True)
    (hv,) = ma.autograd.grad((g * v).sum(), x)
    return hv
    ### END SOLUTION


# %%
check_hvp(hvp)

# %% [markdown]
# ## Exercise 5.3: the one-sided gradient penalty
#
# A critic maps a batch of inputs `x_hat` of shape `(N, d)` to scores of shape `(N, 1)`;
# `x_hat` arrives requiring grad. The
# chapter's WGAN-GP penalty pulls every sample's input-gradient norm towards 1, from above and
# from below. Its one-sided variant (Petzka et al., 2018) asks only that the critic be
# 1-Lipschitz: a norm at or below 1 costs nothing, and the penalty is the mean over the samples
# of $\max(0,\ \lVert\nabla_{\hat x_i} D(\hat x_i)\rVert_2 - 1)^2$. It must be differentiable
# with respect to the critic's weights.
#
# Write it once, for either library: `lib` is `mini_autograd` or `torch`. The check calls it
# with both, on critics that share their weights (some samples' norms fall below 1, some above),
# and compares the penalty and its gradient for every weight. What to get right: the graph of
# the input gradient kept, so the penalty reaches the weights; one norm per sample; no cost
# below 1; and `lib.autograd.grad`, not `backward`, so that the critic's `.grad` stays
# untouched.


# %%
def gradient_penalty(lib, critic, x_hat):
    """mean over samples of max(0, ||d critic(x_hat)_i / d x_hat_i|| - 1) ** 2, as a tensor."""
    ### BEGIN SOLUTION 5.3: the one-sided gradient penalty
    (g,) = lib.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    excess = (g * g).sum(1).sqrt() - 1
    return (excess.clamp(min=0) ** 2).mean()
    ### END SOLUTION


# %%
check_gradient_penalty(gradient_penalty)

# %% [markdown]
# ## Exercise 5.4: the full Hessian, row by row
#
# Row $i$ of the Hessian is the gradient of $\partial f/\partial x_i$: take the gradient `g`
# of `f(x)` with its graph, then for each `i` differentiate the one-element tensor `g[i]` with
# respect to `x`. Stack the rows into an `(n, n)` tensor with `ma.stack(rows)`.
#
# Mind chapter 04: each row's `autograd.grad` walks the graph of `g` again. What must the row
# calls be told so that the second row still finds that graph?


# %%
def hessian(f, x):
    """The (n, n) Hessian of the scalar f at the 1-D tensor x."""
    ### BEGIN SOLUTION 5.4: the full Hessian, row by row
    (g,) = ma.autograd.grad(f(x), x, create_graph=True)
    rows = [ma.autograd.grad(g[i], x, retain_graph=True)[0] for i in range(x.shape[0])]
    return ma.stack(rows)
    ### END SOLUTION


# %%
check_hessian(hessian)

# %% [markdown]
# Done? You have written the two ideas this chapter rests on: backward formulas made of
# differentiable operations, and `autograd.grad(..., create_graph=True)` to differentiate a
# gradient again. Compare your answers with `solutions/05_create_graph.ipynb`.

# %% [markdown]
# ## Exercise 5.5 (your engine): `autograd.grad`
#
# `grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
# allow_unused=False)` returns the gradients of `outputs` with respect to `inputs` (each one
# tensor or a sequence of them), as a tuple,
# and touches no `.grad`. It is `backward` with a capture: the same defaults, the same starting
# gradients (from `grad_outputs`), one call to `run_backward` with the inputs, and PyTorch's
# errors: for an input that does not require grad (`NOT_REQUIRING_MESSAGE`, checked after
# everything about the outputs), and for an input the graph never reached (`UNUSED_MESSAGE`,
# with its index) unless `allow_unused`.

# %%
track.check("5.5")

# %% [markdown]
# ## Exercise 5.6 (your engine): capturing the gradients of the inputs
#
# For `autograd.grad` your run loop asks `capture.runs(node)` of each node, and calls
# `capture.keep(node, grads)` with the gradients that reached it. Write `_Capture`: its
# `__init__` remembers which edge belongs to which input, prepares one empty slot per input in
# a list `grads` (what `run_backward` returns), and finds the nodes worth running with
# `_nodes_leading_to(root_edges, targets)`, which you also write: the nodes from which some
# path leads to a target's node. (A depth-first walk decides a node once all its children are
# decided; no recursion.) `runs` is False for an AccumulateGrad (no `.grad` is touched) and
# for a node that leads to no input (nothing below the inputs runs, so its saved tensors are
# not freed). `keep` puts each gradient meant for an input in that input's slot.
#
# <details><summary>Pseudo-code for `_nodes_leading_to`</summary>
#
# ```text
# for each root, one at a time, to the end before the next:
#   push (root, its children) on a stack, unless seen
#   while the stack is not empty:
#       look at the top node's next child
#       no child left: pop the node; it leads to a target if one of its children
#                      is a target's node or leads to one
#       an unseen child: mark it seen and push it with its own children
# ```
# </details>

# %%
track.check("5.6")

# %% [markdown]
# ## Your engine so far
#
# Every build-track exercise of the course, checked against your file (the same table as
# `make progress` prints):

# %%
track.progress()
