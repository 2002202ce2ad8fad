# %% [markdown]
# # Exercises 06 · RNN hidden-state pitfalls
#
# Four pieces, in the order of the chapter: a GRU cell's forward pass, the seed's broken
# regression loop, truncated backpropagation through time, and gradient clipping. Then your
# engine gets a recurrent cell (6.5), and the seed's three pitfalls run on it. Each check runs
# your code with `mini_autograd` (inside the library where it belongs, where it can: your clipping
# function replaces the library's in a training loop) and compares it with PyTorch, from the same
# weights.
#
# Fill in each cell that says `raise NotImplementedError(...)`, then run the check below it. Until
# you do, the check prints a "not done yet" line, so the notebook always runs top to bottom.
# The answers are in `solutions/06_rnn_hidden_state.ipynb`.

# %%
import numpy as np
import torch

import mini_autograd as ma
from course import track
from course.checks_06 import (
    check_clip_grad_norm,
    check_gru_step,
    check_regression_loop,
    check_tbptt,
    make_regressor,
    make_series,
    regression_data,
)

torch.set_num_threads(1)

# %% [markdown]
# ## Exercise 6.1: a GRU cell's forward pass
#
# The chapter built an LSTM step. PyTorch's other gated cell, the GRU (`torch.nn.GRUCell`),
# carries one state, `h`, and has three gates, stacked in its weights in the order **r, z, n**
# (reset, update, new): `w_ih` is `(3H, input)`, `w_hh` is `(3H, H)`, the biases `(3H,)`.
# Writing $a_\ast$ for a block of $x\,W_{ih}^\top + b_{ih}$ and $b_\ast$ for the same block of
# $h\,W_{hh}^\top + b_{hh}$:
#
# $$
# \begin{aligned}
# r &= \sigma(a_r + b_r) \qquad z = \sigma(a_z + b_z)\\
# n &= \tanh\big(a_n + r \odot b_n\big)\\
# h' &= (1 - z) \odot n + z \odot h
# \end{aligned}
# $$
#
# Note where the reset gate goes: it multiplies the hidden state's whole projection, its bias
# included (the original paper applies it elsewhere; PyTorch follows this form). Write
# `gru_step(x, h, w_ih, w_hh, b_ih, b_hh)` with tensor operations, so that backward can go
# through it, and return `h'`. The check compares values and all six gradients with
# `torch.nn.GRUCell`, then runs your step over a 5-step sequence and compares it with
# `torch.nn.GRU`.


# %%
def gru_step(x, h, w_ih, w_hh, b_ih, b_hh):
    """One GRU step: the next hidden state from x and h."""
    ### BEGIN SOLUTION 6.1: a GRU cell's forward
    n = h.shape[-1]
    a, b = x @ w_ih.t() + b_ih, h @ w_hh.t() + b_hh
    reset = (a[:, :n] + b[:, :n]).sigmoid()
    update = (a[:, n : 2 * n] + b[:, n : 2 * n]).sigmoid()
    candidate = (a[:, 2 * n :] + reset * b[:, 2 * n :]).tanh()
    return (1 - update) * candidate + update * h
    ### END SOLUTION


# %%
check_gru_step(gru_step)

# %% [markdown]
# What a mistake looks like: here the reset gate multiplies the hidden state's projection before
# its bias is added, as in the original paper. The values are close, but not PyTorch's; the
# check recognises the slip and says so.


# %%
def gru_step_paper(x, h, w_ih, w_hh, b_ih, b_hh):
    n = h.shape[-1]
    a, b = x @ w_ih.t() + b_ih, h @ w_hh.t()
    r = (a[:, :n] + b[:, :n] + b_hh[:n]).sigmoid()
    z = (a[:, n : 2 * n] + b[:, n : 2 * n] + b_hh[n : 2 * n]).sigmoid()
    candidate = (a[:, 2 * n :] + r * b[:, 2 * n :] + b_hh[2 * n :]).tanh()
    return (1 - z) * candidate + z * h


check_gru_step(gru_step_paper)

# %% [markdown]
# ## Exercise 6.2: fix a broken training loop
#
# This is the seed's regression program (chapter section 3), written once for both libraries.
# It fails at the second epoch:

# %%
x_np, noise_np, start = regression_data()


def broken_train_regression(lib, x_np, noise_np, start, n_epochs=5):
    model = lib.nn.Linear(1, 1)
    model.load_state_dict(start)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1)

    x = lib.tensor(x_np, requires_grad=True)
    y = 1 + 2 * x + 0.3 * lib.tensor(noise_np)
    x_train, y_train = x[:70], y[:70]

    losses = []
    for _ in range(n_epochs):
        loss = lib.nn.functional.mse_loss(model(x_train), y_train)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


for lib in (ma, torch):
    try:
        broken_train_regression(lib, x_np, noise_np, start)
    except RuntimeError as error:
        print(f"{lib.__name__}: {str(error)[:70]}...")

# %% [markdown]
# Write `train_regression` with the same arguments: the same data, model, learning rate and
# order of steps, but a loop that trains all `n_epochs` epochs. Return the list of losses
# (`loss.item()` per epoch). The check runs it on both engines and compares the losses with the
# correct ones; `retain_graph=True` makes the error go away but is not accepted (why? see the
# chapter, section 6).


# %%
def train_regression(lib, x_np, noise_np, start, n_epochs=5):
    """The seed's regression loop, fixed; returns the loss of every epoch."""
    ### BEGIN SOLUTION 6.2: fix the regression loop
    model = lib.nn.Linear(1, 1)
    model.load_state_dict(start)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1)

    x = lib.tensor(x_np)  # the fix: the input needs no gradient, so y has no graph
    y = 1 + 2 * x + 0.3 * lib.tensor(noise_np)
    x_train, y_train = x[:70], y[:70]

    losses = []
    for _ in range(n_epochs):
        loss = lib.nn.functional.mse_loss(model(x_train), y_train)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
    ### END SOLUTION


# %%
check_regression_loop(train_regression)

# %% [markdown]
# ## Exercise 6.3: truncated backpropagation through time
#
# `model = make_regressor(lib)` is an LSTM that predicts the next value of a series:
# `model(seq, state)` takes a 1-D tensor of `T` values and a state (`None` for zeros) and
# returns a pair: `T` predictions of shape `(T, 1)`, and the final state `(h, c)`.
#
# Write `train_tbptt(lib, model, series, window, lr=0.1)`: read the numpy array `series` in
# consecutive chunks of `window` values, chunk `k` reading `series[k*window:(k+1)*window]` and
# predicting `series[k*window+1:(k+1)*window+1]` (there are `(len(series) - 1) // window` chunks;
# shape the targets as the predictions are, `(T, 1)`).
# Start from `state = None`; each chunk starts from the state where the previous chunk ended, with
# its **values** but without its graph. Per chunk: forward, `mse_loss`, `zero_grad`, `backward`,
# `step` (SGD with `lr`). Return the list of the chunks' losses. The check compares them with
# PyTorch's for windows 5 and 8.


# %%
def train_tbptt(lib, model, series, window, lr=0.1):
    """Truncated BPTT over `series` in chunks of `window` steps; returns the loss of every chunk."""
    ### BEGIN SOLUTION 6.3: truncated BPTT
    optimizer = lib.optim.SGD(model.parameters(), lr=lr)
    state, losses = None, []
    for k in range((len(series) - 1) // window):
        seq = lib.tensor(series[k * window : (k + 1) * window])
        target = lib.tensor(series[k * window + 1 : (k + 1) * window + 1]).view(window, 1)
        if state is not None:
            state = tuple(s.detach() for s in state)  # keep the values, cut the graph
        prediction, state = model(seq, state)
        loss = lib.nn.functional.mse_loss(prediction, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
    ### END SOLUTION


# %%
check_tbptt(train_tbptt)

# %% [markdown]
# Once it passes, look at what it trains: the loss of the last chunks for a few windows.

# %%
series = make_series()
for window in (2, 5, 10):
    try:
        losses = train_tbptt(ma, make_regressor(ma), series, window)
        print(f"window {window:>2}: {len(losses)} chunks, last loss {losses[-1]:.4f}")
    except NotImplementedError:
        print("(train_tbptt is not written yet)")
        break
    except Exception as error:  # a bug in train_tbptt: one line, the check above says more
        message = (str(error).strip().splitlines() or [""])[0]
        print(f"(train_tbptt raised {type(error).__name__}: {message[:100]}; see the check above)")
        break

# %% [markdown]
# ## Exercise 6.4: gradient clipping
#
# Write `clip_grad_norm(parameters, max_norm)`, mini_autograd's version of
# `torch.nn.utils.clip_grad_norm_`: compute the **joint** norm of all gradients,
# $\text{total} = \sqrt{\sum_p \sum_j (\nabla p)_j^2}$ (skip parameters whose `.grad` is None);
# when `max_norm / (total + 1e-6)` is below 1, multiply every gradient **in place** by it
# (`p.grad.mul_(factor)`); return `total`, the norm before clipping. `parameters` may be a
# generator, such as `model.parameters()`, which can be read only once. The check compares with
# PyTorch and then trains a small LSTM with your function in place of `ma.nn.utils.clip_grad_norm_`.


# %%
def clip_grad_norm(parameters, max_norm):
    """Scale the gradients of `parameters` in place so their joint norm is at most max_norm."""
    ### BEGIN SOLUTION 6.4: gradient clipping
    grads = [p.grad for p in parameters if p.grad is not None]
    total = sum((g * g).sum().item() for g in grads) ** 0.5
    factor = max_norm / (total + 1e-6)
    if factor < 1:
        for g in grads:
            g.mul_(factor)
    return total
    ### END SOLUTION


# %%
check_clip_grad_norm(clip_grad_norm)

# %% [markdown]
# ## Exercise 6.5 (your engine): a recurrent cell of your own
#
# `rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None)` is one step of an Elman RNN,
# with PyTorch's signature (`torch.rnn_tanh_cell`): the next hidden state is the tanh of two
# affine maps added together, the input's through `w_ih` and `b_ih` and the previous state's
# through `w_hh` and `b_hh`. PyTorch stores each weight as (out_features, in_features): which
# side of `@` does it go on, and in which orientation? A bias may be `None`. Write it with your
# engine's operations. The check runs five steps with the hidden state carried from step to
# step and compares the state and every weight's gradient with PyTorch's own cell.

# %%
track.check("6.5")

# %% [markdown]
# ## The seed's three pitfalls, on your engine
#
# The three programs of the seed posts, written once with `lib.`, on PyTorch, on mini_autograd
# and on your engine: two losses on one graph; a target computed, outside the training loop,
# from an input that requires grad; a hidden state carried from one iteration to the next.
# `track.engine()` loads your file (with the course's answer for any piece you have not written
# yet). When a backward fails, `track.freed_in_graph(loss)` reads the failing graph, on any of
# the three engines, and says which of its nodes an earlier backward already freed: the link
# to an earlier iteration that the fix has to cut.

# %%
my = track.engine()
LIBS = {"torch": torch, "mini_autograd": ma, "my_autograd": my}
rng = np.random.default_rng(7)
X0 = rng.standard_normal((1, 4)).astype(np.float32)
DATA = rng.standard_normal((100, 1)).astype(np.float32)
NOISE = rng.standard_normal((100, 1)).astype(np.float32)
W_IH, W_HH = (rng.standard_normal(s).astype(np.float32) * 0.5 for s in [(6, 1), (6, 6)])
SEQ = rng.standard_normal((10, 1, 1)).astype(np.float32)


failing = {}


def backward(loss):
    """loss.backward(), remembering the loss so that a failure can be explained."""
    failing["loss"] = loss
    loss.backward()


def sgd_step(lib, params, lr=0.1):
    with lib.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad.zero_()


def two_losses(lib, fix=None):
    """Seed 1: two losses from one graph; the fix is one backward of their sum."""
    x = lib.tensor(X0, requires_grad=True)
    z = x**2 * 4
    loss1, loss2 = z.mean(), z.sum()
    if fix:
        (loss1 + loss2).backward()
        return [round(v, 4) for v in x.grad.tolist()[0]]
    backward(loss1)
    backward(loss2)


def regression(lib, fix=None, epochs=3):
    """Seed 2: the target is computed from an input that requires grad; the fix: no_grad."""
    x = lib.tensor(DATA, requires_grad=True)
    if fix:
        with lib.no_grad():
            y = 1 + 2 * x + 0.3 * lib.tensor(NOISE)
    else:
        y = 1 + 2 * x + 0.3 * lib.tensor(NOISE)
    w, b = lib.zeros(1, 1, requires_grad=True), lib.zeros(1, requires_grad=True)
    losses = []
    for _ in range(epochs):
        loss = ((x[:70] @ w + b - y[:70]) ** 2).mean()
        backward(loss)
        sgd_step(lib, [w, b])
        losses.append(round(loss.item(), 4))
    return losses


def rnn_loop(lib, fix=None, steps=3):
    """Seed 3: the hidden state carries the graph across iterations; the fix: detach it."""
    w_ih, w_hh = lib.tensor(W_IH, requires_grad=True), lib.tensor(W_HH, requires_grad=True)
    h = lib.zeros(1, 6)
    losses = []
    for _ in range(steps):
        if fix:
            h = h.detach()
        for t in range(len(SEQ)):
            h = (
                lib.rnn_tanh_cell(lib.tensor(SEQ[t]), h, w_ih, w_hh)
                if lib is my
                else (lib.tensor(SEQ[t]) @ w_ih.t() + h @ w_hh.t()).tanh()
            )
        loss = (h * h).mean()
        backward(loss)
        sgd_step(lib, [w_ih, w_hh])
        losses.append(round(loss.item(), 4))
    return losses


def freed_when_it_fails(program, lib):
    """Run the program; when a backward fails, what the failing graph reaches into."""
    try:
        program(lib)
    except RuntimeError as error:
        return f"{str(error)[:51]}…; {track.freed_in_graph(failing['loss'])}"
    return "no error"


for program in (two_losses, regression, rnn_loop):
    print(program.__doc__)
    for name, lib in LIBS.items():
        print(f"  {name:<14} {freed_when_it_fails(program, lib)}")
        print(f"  {'':<14} with the fix: {program(lib, fix=True)}")

# %% [markdown]
# ## Your engine so far
#
# Every build-track exercise of the course, checked against your file (the same table as
# `make progress` prints):

# %%
track.progress()

# %% [markdown]
# Done? Clipping keeps the size of a step in check; it does not shorten the graph. The
# capstone (chapter 07) puts the pieces together: PyTorch's fused LSTM layer (`nn.LSTM`) trained
# on text with truncated BPTT, the state detached between chunks, on both engines. It trains
# without clipping: its optimizer, Adam, divides each step by a running size of the gradients,
# so one large gradient does not become one large step.
