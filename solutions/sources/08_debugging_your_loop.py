# %% [markdown]
# # Exercises 08 · Debugging your own training loop
#
# One broken PyTorch loop, of the kind you may meet in your own code. First find out, with the
# doctor, which tensor carries a graph from one iteration into the next (8.1); then write the loop
# fixed (8.2). Everything here is torch: the checks run your function with PyTorch and compare
# its losses with a reference run from the same weights and the same batches.
#
# Fill in each cell that says `raise NotImplementedError(...)`, then run the check below it. Until
# you do, the check prints a "not done yet" line, so the notebook always runs top to bottom.
# The answers are in `solutions/08_debugging_your_loop.ipynb`. About 30 minutes.

# %%
import torch

import mini_autograd as ma
from course.checks_08 import check_fixed_loop, check_linking_tensor, make_model, smoothing_data

torch.set_num_threads(1)

# %% [markdown]
# ## The broken loop
#
# A small network predicts `y` from `x`, batch after batch, along a series that changes slowly
# (`xs[k]` and `ys[k]` are the k-th stretch of it; `make_model()` always gives the same initial
# weights). To keep consecutive predictions close, the loss adds a smoothness term: `smooth`
# times the mean squared difference between this batch's prediction and the previous batch's.
# It stops at the second step:

# %%
xs, ys = smoothing_data()


def broken_train(xs, ys, model, lr=0.05, smooth=0.1):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    previous, losses = None, []
    for x, y in zip(xs, ys):
        prediction = model(x)
        loss = torch.nn.functional.mse_loss(prediction, y)
        if previous is not None:
            loss = loss + smooth * (prediction - previous).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        previous = prediction
        losses.append(loss.item())
    return losses


try:
    broken_train(xs, ys, make_model())
except RuntimeError as error:
    print(f"RuntimeError: {str(error)[:72]}...")

# %% [markdown]
# ## Exercise 8.1: ask the doctor
#
# Run the same loop under `ma.doctor()`. The error keeps PyTorch's text and gains a diagnosis:
# read it.

# %%
with ma.doctor():
    try:
        broken_train(xs, ys, make_model())
    except RuntimeError as error:
        print(error)

# %% [markdown]
# Which tensor links one iteration's graph to the previous one? Return its name, as the doctor
# writes it (a string).


# %%
def linking_tensor():
    """The name of the tensor that carries a graph from one iteration into the next."""
    ### BEGIN SOLUTION 8.1: the tensor that links the iterations
    return "previous"
    ### END SOLUTION


# %%
check_linking_tensor(linking_tensor)

# %% [markdown]
# ## Exercise 8.2: the loop, fixed
#
# Write `train_smooth`, with the arguments of `broken_train`: the same model, data, learning
# rate, smoothness term and order of the steps, but a loop that trains all 12 steps. Return the
# list of the losses (`loss.item()` per step). The doctor lists its fixes best first; decide which
# one keeps what this loop means. The check compares your losses with a reference run, and does
# not accept `retain_graph=True` (why not? chapter 08, sections 4 and 8).


# %%
def train_smooth(xs, ys, model, lr=0.05, smooth=0.1):
    """The smoothed loop, fixed; returns the loss of every step."""
    ### BEGIN SOLUTION 8.2: the loop, fixed
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    previous, losses = None, []
    for x, y in zip(xs, ys):
        prediction = model(x)
        loss = torch.nn.functional.mse_loss(prediction, y)
        if previous is not None:
            loss = loss + smooth * (prediction - previous).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        previous = prediction.detach()  # the values cross into the next step, the graph does not
        losses.append(loss.item())
    return losses
    ### END SOLUTION


# %%
check_fixed_loop(train_smooth)

# %% [markdown]
# The fix the error message suggests, `retain_graph=True`, and what the check says of it:


# %%
def train_smooth_retained(xs, ys, model, lr=0.05, smooth=0.1):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    previous, losses = None, []
    for x, y in zip(xs, ys):
        prediction = model(x)
        loss = torch.nn.functional.mse_loss(prediction, y)
        if previous is not None:
            loss = loss + smooth * (prediction - previous).pow(2).mean()
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()
        previous = prediction
        losses.append(loss.item())
    return losses


check_fixed_loop(train_smooth_retained)

# %% [markdown]
# **In your own loop.** Run it under `with ma.doctor():` once, and look at the tensor it names:
# data or a target is built without recording (`requires_grad=False`, `torch.no_grad()`); a state
# or a value carried to the next step is carried detached; a fresh state suits independent
# sequences only. `retain_graph=True` is for two backward calls through one graph, not for a graph
# that reaches into the last iteration.
