# %% [markdown]
# # Exercises 07 · Capstone: train a character-level LSTM with your engine
#
# In the chapter you watched a small LSTM learn to write like the sonnets, on `mini_autograd`
# and on PyTorch. Now you build the pipeline yourself, one piece at a time:
#
# - **7.1** cut the text into input and target chunks for truncated BPTT;
# - **7.2** write the training step that carries the LSTM's state across chunks;
# - **7.3** write the sampler that generates text;
# - **7.4** measure the model's perplexity;
# - **7.5** give your engine the capstone's loss, cross-entropy, and train one chunk of the
#   capstone on it, next to mini_autograd and PyTorch.
#
# Each check runs your function on small models with `mini_autograd` **and** with PyTorch from
# the same weights, compares both with a reference, and says in words what differs. At the end
# one cell puts your pieces together and trains a model. The chapter ran the course's versions
# of 7.1 to 7.3 without printing them: what it showed is what each piece must do, not how.
# `solutions/07_capstone.ipynb` has the answers.

# %% [markdown]
# The set-up from the chapter: one CPU thread for each engine, the sonnets, the vocabulary,
# `one_hot`, and the model class written once for both libraries.

# %%
# ruff: noqa: E402 (numpy reads the thread settings when first imported, so they come first)
import os

for variable in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(variable, "1")

import sys

import numpy as np
import torch
from tqdm import tqdm

import mini_autograd as ma
from course import track
from course.checks_07 import check_chunks, check_perplexity, check_sample, check_train_chunk
from course.data import data_path

torch.set_num_threads(1)

header, text = data_path("sonnets.txt").read_text(encoding="utf-8").split("\n", 1)
text = text.lstrip("\n")
chars = sorted(set(text))
V = len(chars)
index_of = {c: i for i, c in enumerate(chars)}


def encode(s):
    """The ids of the characters of s, as an int64 array."""
    return np.array([index_of[c] for c in s], dtype=np.int64)


def decode(ids):
    """The string spelled by a sequence of ids."""
    return "".join(chars[int(i)] for i in ids)


def one_hot(lib, ids):
    """A float32 tensor of shape ids.shape + (V,) with a 1 at each id."""
    return lib.tensor(np.eye(V, dtype=np.float32)[ids])


def make_model(lib, hidden=128):
    """A character-level LSTM language model built from `lib` (mini_autograd or torch)."""

    class CharLSTM(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = lib.nn.LSTM(V, hidden)
            self.head = lib.nn.Linear(hidden, V)

        def forward(self, x, state=None):
            """x: (time, batch, V) one-hot; returns scores (time, batch, V) and the final (h, c)."""
            out, state = self.lstm(x, state)
            return self.head(out), state

    return CharLSTM()


ids = encode(text)
print(f"{len(text):,} characters, {V} distinct")

# %% [markdown]
# ## Exercise 7.1: input and target chunks
#
# Write `make_chunks(ids, batch_size, seq_len)`. It returns a list of `(inputs, targets)`
# pairs of integer arrays, each of shape `(seq_len, batch_size)` (time first, as `nn.LSTM`
# expects):
#
# - split the text into `batch_size` **streams** of `n` characters each, `n` being
#   `(len(ids) - 1) // batch_size`: stream `b` is `ids[b*n : (b+1)*n]`, and column `b` of every chunk reads
#   stream `b`;
# - chunk `k` holds positions `k*seq_len` to `(k+1)*seq_len - 1` of every stream, so each
#   column continues exactly where the previous chunk stopped;
# - the targets are the inputs shifted by one character: the target of `ids[i]` is `ids[i+1]`
#   (that is why each stream needs one spare character after it);
# - a last chunk shorter than `seq_len` is dropped.
#
# The check feeds your function texts whose ids are their own positions (`0, 1, 2, ...`), so
# when something is off it can tell you which position of the text you picked instead.


# %%
def make_chunks(ids, batch_size, seq_len):
    """(inputs, targets) pairs of int arrays, each (seq_len, batch_size): column b is stream b."""
    ### BEGIN SOLUTION 7.1: input and target chunks
    n = (len(ids) - 1) // batch_size
    inputs = ids[: n * batch_size].reshape(batch_size, n).T
    targets = ids[1 : n * batch_size + 1].reshape(batch_size, n).T
    return [
        (inputs[k : k + seq_len], targets[k : k + seq_len])
        for k in range(0, n - seq_len + 1, seq_len)
    ]
    ### END SOLUTION


# %%
check_chunks(make_chunks)

# %% [markdown]
# ## Exercise 7.2: the truncated-BPTT training step
#
# Write `train_chunk(lib, model, optimizer, x, y, state)`: one optimizer step on one chunk.
# `x` and `y` are one chunk's inputs and targets (integer arrays of shape `(seq_len, batch)`),
# `state` is the LSTM state `(h, c)` carried over from the previous chunk (`None` for the first
# chunk). Run the model on `one_hot(lib, x)` starting from `state`, compute the cross-entropy of
# the scores (reshaped to `(-1, V)`) against the targets (reshaped to `(-1,)`), then the usual
# three lines of an optimizer step. Return the loss as a Python number and the final state, so
# that the next call continues from it, without dragging this chunk's graph along.
#
# Write it with `lib.` only (`lib.tensor`, `lib.nn.functional.cross_entropy`): the check runs
# it with `lib = ma` and with `lib = torch`.


# %%
def train_chunk(lib, model, optimizer, x, y, state):
    """One optimizer step on one chunk; returns the loss and the final state, detached."""
    ### BEGIN SOLUTION 7.2: the truncated-BPTT training step
    logits, (h, c) = model(one_hot(lib, x), state)
    loss = lib.nn.functional.cross_entropy(logits.reshape(-1, V), lib.tensor(y.reshape(-1)))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item(), (h.detach(), c.detach())
    ### END SOLUTION


# %%
check_train_chunk(train_chunk, chars)

# %% [markdown]
# ## Exercise 7.3: generating text
#
# Write `sample(lib, model, prefix, length, temperature=1.0, seed=0)`, returning `prefix`
# followed by `length` generated characters. Make it exactly reproducible, so that the check
# can compare it with the reference character by character:
#
# - one random generator, numpy's `default_rng(seed)`, and one draw per new character,
#   `rng.choice(V, p=p)`, with `p = softmax(scores / temperature)` computed in numpy from the
#   scores as a float64 array (at `temperature == 0`, `np.argmax(scores)` and no draw);
# - the model reads text as `one_hot(lib, ids[:, None])` (a batch of one; `encode(prefix)` gives
#   the prefix's ids, `np.array([i])` one character's), and the scores for the next character
#   are those at the last position it read, `logits[-1, 0]`.
#
# Three things the check watches, which the steps above leave to you. Generating needs no
# gradient: what should the model not do meanwhile? At temperature 0.002, `np.exp` of the
# scaled scores overflows: what can you subtract first without changing the softmax? And the
# model should not read the whole text again for every new character: what does it return that
# holds what it has read so far?


# %%
def sample(lib, model, prefix, length, temperature=1.0, seed=0):
    """prefix followed by `length` characters drawn from the model (greedy at temperature 0)."""
    ### BEGIN SOLUTION 7.3: generating text
    rng = np.random.default_rng(seed)
    generated = []
    with lib.no_grad():
        logits, state = model(one_hot(lib, encode(prefix)[:, None]))
        for _ in range(length):
            scores = logits[-1, 0].numpy().astype(np.float64)
            if temperature == 0:
                next_id = int(np.argmax(scores))
            else:
                p = np.exp((scores - scores.max()) / temperature)
                next_id = int(rng.choice(V, p=p / p.sum()))
            generated.append(next_id)
            logits, state = model(one_hot(lib, np.array([[next_id]])), state)
    return prefix + decode(generated)
    ### END SOLUTION


# %%
check_sample(sample, chars)

# %% [markdown]
# ## Exercise 7.4: perplexity
#
# The perplexity of a language model on a text is $e^{\bar L}$, where $\bar L$ is the mean
# cross-entropy over every predicted character. A model that guesses uniformly among `V`
# characters has perplexity `V`; a perfect one, 1.
#
# Write `perplexity(lib, model, chunks)` for a list of chunks from `make_chunks`. Evaluate them
# in order, carrying the state from chunk to chunk as training does (start from `None`), and
# record no graph: this is evaluation, not training. Return a Python float.


# %%
def perplexity(lib, model, chunks):
    """exp(mean cross-entropy per character) of `model` over `chunks`, state carried."""
    ### BEGIN SOLUTION 7.4: perplexity
    total, count, state = 0.0, 0, None
    with lib.no_grad():
        for x, y in chunks:
            logits, state = model(one_hot(lib, x), state)
            target = lib.tensor(y.reshape(-1))
            loss = lib.nn.functional.cross_entropy(logits.reshape(-1, V), target, reduction="sum")
            total += loss.item()
            count += y.size
    return float(np.exp(total / count))
    ### END SOLUTION


# %%
check_perplexity(perplexity, chars)

# %% [markdown]
# ## Putting it together
#
# With all four pieces done, the next cell trains a model on the sonnets with `mini_autograd`
# for `EPOCHS` passes over the text and measures its perplexity before and after. One pass takes
# about 0.2 to 0.5 seconds on a laptop, so the 60 passes below take 10 to 30 seconds; as in the
# chapter, that is enough for the model to write fragments of real lines. On a slow machine,
# lower `EPOCHS`: 10 passes give a perplexity near 6 and mostly invented words. The numbers after
# training differ slightly from machine to machine (float32 rounding, chapter 07 § 6), so the
# notebook tests do not compare this cell's output.

# %% tags=["nbval-ignore-output"]
EPOCHS = 60

try:
    ma.manual_seed(0)
    model = make_model(ma)
    chunks = make_chunks(ids, 16, 32)
    optimizer = ma.optim.Adam(model.parameters(), lr=0.01)
    print(f"perplexity before training: {perplexity(ma, model, chunks):.0f}")
    with tqdm(total=EPOCHS * len(chunks), unit="chunk", file=sys.stderr, mininterval=2) as bar:
        for _ in range(EPOCHS):
            state = None
            for x, y in chunks:
                loss, state = train_chunk(ma, model, optimizer, x, y, state)
                bar.update()
    print(f"perplexity after {EPOCHS} epochs: {perplexity(ma, model, chunks):.1f}")
except NotImplementedError:
    model = None
    print("Fill in exercises 7.1 to 7.4 first; then this cell trains your model.")
except Exception as error:  # a bug in one of the pieces: one line, the checks above say more
    model = None
    message = (str(error).strip().splitlines() or [""])[0]
    print(f"Training stopped: {type(error).__name__}: {message[:100]} (see the checks above).")

# %% [markdown]
# And what your model writes. (The exact letters can change from machine to machine after
# training, so the notebook tests do not compare this output.)

# %% tags=["nbval-ignore-output"]
try:
    print(sample(ma, model, "Shall I ", 160, temperature=0.5, seed=1))
except NotImplementedError:
    print("Nothing to sample from yet: fill in exercise 7.3 and train the model above first.")
except Exception as error:  # no model yet, or a bug in sample: one line, not a traceback
    if model is None:
        print("Nothing to sample from yet: train the model in the cell above first.")
    else:
        message = (str(error).strip().splitlines() or [""])[0]
        print(f"sample raised {type(error).__name__}: {message[:100]} (see the check above).")

# %% [markdown]
# ## Exercise 7.5 (your engine): cross-entropy from elementary operations
#
# The capstone's loss, `nn.functional.cross_entropy(input, target)`: the mean over the rows of
# `-log softmax(input)[target]`. Write `cross_entropy` with your engine's operations:
# log-softmax is each logit minus the log of its row's sum of exponentials. Subtract each row's
# maximum first (a constant: it changes nothing in the result, and `exp` can no longer
# overflow), and pick each row's target with a one-hot matrix (a constant tensor, made with
# numpy). The check compares the loss and the logits' gradient with PyTorch's, for
# large logits too.

# %%
track.check("7.5")

# %% [markdown]
# ## One chunk of the capstone, on your engine
#
# Your engine has no LSTM layer, so here the capstone's model is a character-level Elman RNN
# (the cell of exercise 6.5, written out with `@` and `tanh` for mini_autograd, which has no
# `rnn_tanh_cell`) with the capstone's loss. From the same weights, it trains on the first
# chunks of the sonnets with truncated BPTT and plain SGD, on PyTorch, mini_autograd and your
# engine. The losses are the same on all three.

# %%
my = track.engine()


def rnn_chunks(lib, chunks=3, hidden=32, batch=4, seq_len=16, lr=0.5):
    """Train a character RNN on the first `chunks` chunks; the loss of each chunk."""
    rng = np.random.default_rng(0)
    shapes = [(hidden, V), (hidden, hidden), (hidden,), (V, hidden), (V,)]
    params = [lib.tensor((rng.standard_normal(s) * 0.1).astype(np.float32), requires_grad=True)
              for s in shapes]  # fmt: skip
    w_ih, w_hh, b, w_out, b_out = params
    stream = ids[: batch * (chunks * seq_len + 1)].reshape(batch, -1)
    eye = np.eye(V, dtype=np.float32)
    h, losses = lib.zeros(batch, hidden), []
    for k in range(chunks):
        loss = 0.0
        for t in range(k * seq_len, (k + 1) * seq_len):
            x, target = lib.tensor(eye[stream[:, t]]), lib.tensor(stream[:, t + 1])
            if lib is my:
                h = lib.rnn_tanh_cell(x, h, w_ih, w_hh, b)
            else:
                h = (x @ w_ih.t() + b + h @ w_hh.t()).tanh()
            logits = h @ w_out.t() + b_out
            loss = loss + lib.nn.functional.cross_entropy(logits, target) * (1 / seq_len)
        loss.backward()
        with lib.no_grad():
            for p in params:
                p -= lr * p.grad
                p.grad.zero_()
        h = h.detach()
        losses.append(loss.item())
    return losses


losses = {
    name: rnn_chunks(lib)
    for name, lib in [("torch", torch), ("mini_autograd", ma), ("my_autograd", my)]
}
for name, values in losses.items():
    print(f"{name:<14}", " ".join(f"{v:.4f}" for v in values))
gap = max(abs(a - b) for values in losses.values() for a, b in zip(values, losses["torch"]))
print(f"largest difference from PyTorch: below 1e-4: {gap < 1e-4}")

# %% [markdown]
# ## Your engine so far
#
# Every build-track exercise of the course, checked against your file (the same table as
# `make progress` prints):

# %%
track.progress()

# %% [markdown]
# Done? You have now written every piece of a training pipeline on an engine you built
# yourself, and checked each against PyTorch.
