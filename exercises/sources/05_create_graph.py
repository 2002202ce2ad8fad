# %% [markdown]
# # Exercises 05 · `create_graph`: gradients of gradients
#
# Four pieces of the chapter, now written by you:
#
# * **5.1** a backward formula that supports second derivatives, run inside the engine;
# * **5.2** a Hessian–vector product with two `autograd.grad` calls;
# * **5.3** the WGAN-GP gradient penalty, one function for both libraries;
# * **5.4** a full Hessian, built row by row.
#
# Fill in each cell that says `raise NotImplementedError(...)`, then run the check below it.
# Each check runs your code with mini_autograd, compares it with PyTorch (and with the
# formulas or finite differences), and prints one line. Until you fill a cell its check says
# "not done yet", so the notebook always runs from top to bottom.

# %%
import inspect

import numpy as np
import torch

import mini_autograd as ma
from course.checks_05 import (
    check_gradient_penalty,
    check_hessian,
    check_hvp,
    check_sigmoid_backward,
)

ma.manual_seed(0)
torch.manual_seed(0)
np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## Exercise 5.1: a backward formula that can be differentiated again
#
# Every backward node has an `apply(self, g)` method: it receives the gradient `g` of the
# node's output and returns a tuple with one gradient per input. Here is `tanh`'s, from the
# chapter, as a model:

# %%
print(inspect.getsource(ma.ops.elementwise.TanhBackward0.apply))

# %% [markdown]
# Write the same method for the sigmoid, $\sigma(x) = 1/(1 + e^{-x})$, whose derivative is
# $\sigma'(x) = \sigma(x)\,(1 - \sigma(x))$. `SigmoidBackward0` saved its output under the name
# `"result"`, so `self.saved("result")` gives you $\sigma(x)$.
#
# The catch: write it with `Tensor` operations only (`*`, `-`, numbers), never numpy,
# `.detach()`, `.item()` or `ma.tensor(...)`. Then, when the engine runs it with
# `create_graph=True`, the formula records a graph and second derivatives work. The check
# patches your function into `SigmoidBackward0.apply` and asks the engine for the first,
# second and third derivatives of `sigmoid(x)` and the second derivative of `x * sigmoid(x)`.


# %%
def sigmoid_backward(self, g):
    """SigmoidBackward0.apply: the gradient for sigmoid's input, from the output's gradient g."""
    ### BEGIN SOLUTION 5.1: a differentiable sigmoid backward
    result = self.saved("result")
    return (g * (result * (1 - result)),)
    ### END SOLUTION


# %%
check_sigmoid_backward(sigmoid_backward)

# %% [markdown]
# What the check says about a formula that is right but computed in numpy: the first
# derivative passes, and the check tells you why the second does not.


# %%
def sigmoid_backward_in_numpy(self, g):
    s = self.saved("result").detach().numpy()
    return (g * ma.tensor(s * (1 - s)),)


check_sigmoid_backward(sigmoid_backward_in_numpy)

# %% [markdown]
# ## Exercise 5.2: a Hessian–vector product
#
# For a scalar function $f$ of a 1-D tensor $x$ and a vector $v$ of the same shape,
#
# $$Hv = \nabla_x\big(\nabla_x f(x)\cdot v\big).$$
#
# Write `hvp(f, x, v)` with two calls of `ma.autograd.grad`: the gradient of `f(x)` with its
# graph kept, then the gradient of the scalar `(g * v).sum()`. Return a tensor shaped like `x`.
# (`autograd.grad` returns a tuple, one entry per input: unpack it with `(g,) = ...`.)


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
# ## Exercise 5.3: the WGAN-GP gradient penalty
#
# A critic maps a batch of inputs `x_hat` of shape `(N, d)` to scores of shape `(N, 1)`. The
# penalty is the mean over the samples of $(\lVert\nabla_{\hat x_i} D(\hat x_i)\rVert_2 - 1)^2$,
# and it must be differentiable with respect to the critic's weights.
#
# Write it once, for either library: `lib` is `mini_autograd` or `torch`. The check calls it
# with both, on critics that share their weights, and compares the penalty and its gradient
# for every weight. Three things to get right: `create_graph=True`; one norm per sample (sum
# the squares over dimension 1); and `lib.autograd.grad`, not `backward`, so that the
# critic's `.grad` stays untouched.


# %%
def gradient_penalty(lib, critic, x_hat):
    """mean over samples of (||d critic(x_hat)_i / d x_hat_i|| - 1) ** 2, as a tensor."""
    ### BEGIN SOLUTION 5.3: WGAN-GP gradient penalty
    score = critic(x_hat)
    (g,) = lib.autograd.grad(score.sum(), x_hat, create_graph=True)
    norm = (g * g).sum(1).sqrt()
    return ((norm - 1) ** 2).mean()
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
