# %% [markdown]
# # Warm-up: local derivatives and a gradient check
#
# Every operation in an autograd engine knows one small thing: its **local derivative**,
# how its output moves when its input moves a little. The engine chains these together.
# Here you write three of those small pieces in plain numpy, and the checker compares
# your code with PyTorch's autograd.
#
# How it works: fill in each cell that says `raise NotImplementedError(...)`, then run the
# cell below it. Until you do, the check prints a "not done yet" line, so this notebook
# always runs from top to bottom. Stuck? `solutions/00_warmup.ipynb` has the answers.

# %%
import numpy as np
import torch

from course.check import check, numeric_derivative
from course.checks_00 import check_finite_difference

rng = np.random.default_rng(0)
points = [np.linspace(-3.0, 3.0, 7), rng.normal(size=(2, 3))]

# %% [markdown]
# ## Exercise 0.1: the derivative of tanh
#
# Write `tanh_grad(x)`, returning $\frac{d}{dx}\tanh(x)$ for every entry of the array `x`.
# It is checked against a numerical estimate and against `torch.autograd.grad`.


# %%
def tanh_grad(x):
    """Return the elementwise derivative of tanh at x."""
    ### BEGIN SOLUTION 0.1: derivative of tanh
    return 1.0 - np.tanh(x) ** 2
    ### END SOLUTION


# %%
check(
    "0.1",
    tanh_grad,
    numeric_derivative(np.tanh),
    points,
    torch_fn=lambda x: torch.autograd.grad(torch.tanh(x).sum(), x)[0],
    hint="the derivative of tanh can be written with tanh(x) itself",
)

# %% [markdown]
# This is what the checker says when an answer is wrong (here: tanh itself, not its
# derivative). It names the input, the worst entry and both values, instead of a traceback.

# %%
check("0.1", np.tanh, numeric_derivative(np.tanh), points)

# %% [markdown]
# ## Exercise 0.2: the derivative of the sigmoid
#
# $\sigma(x) = 1 / (1 + e^{-x})$. Write `sigmoid_grad(x)`, its elementwise derivative.


# %%
def sigmoid_grad(x):
    """Return the elementwise derivative of the logistic sigmoid at x."""
    ### BEGIN SOLUTION 0.2: derivative of the sigmoid
    s = 1.0 / (1.0 + np.exp(-x))
    return s * (1.0 - s)
    ### END SOLUTION


# %%
check(
    "0.2",
    sigmoid_grad,
    numeric_derivative(lambda x: 1.0 / (1.0 + np.exp(-x))),
    points,
    torch_fn=lambda x: torch.autograd.grad(torch.sigmoid(x).sum(), x)[0],
    hint="compute s = sigmoid(x) first; the derivative is a short expression in s",
)

# %% [markdown]
# ## Exercise 0.3: a finite-difference gradient
#
# Hand-written backward functions are easy to get subtly wrong, so we test them against
# the slow, obviously-correct method: nudge one input entry by $\pm\varepsilon$ and watch
# the output, $\frac{f(x + \varepsilon e_i) - f(x - \varepsilon e_i)}{2\varepsilon}$.
# Write `finite_difference_grad(f, x, eps)` for a function `f` that maps an array to a number;
# return an array shaped like `x`, and leave `x` itself as it was (the caller still needs it).
# The check tries several functions and shapes with `eps=1e-3`, a step large enough that the
# central difference's error (about $\varepsilon^2$) and a one-sided one's (about
# $\varepsilon$) are told apart.


# %%
def finite_difference_grad(f, x, eps=1e-6):
    """Return the central-difference estimate of the gradient of the scalar f at x."""
    ### BEGIN SOLUTION 0.3: finite-difference gradient
    grad = np.zeros(x.shape)
    for index in np.ndindex(x.shape):
        step = np.zeros(x.shape)
        step[index] = eps
        grad[index] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad
    ### END SOLUTION


# %%
check_finite_difference(finite_difference_grad)

# %% [markdown]
# Done? The chapters build a whole engine out of local derivatives like these, and check
# every one of them with PyTorch the same way.
