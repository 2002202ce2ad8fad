"""The capstone's pipeline, the course's version, written once for both libraries (`lib` is
mini_autograd or torch): the chunks of truncated BPTT, one training step, text generation and
perplexity.

Chapter 07 runs these functions without printing them: `exercises/07_capstone.ipynb` asks you to
write them (exercises 7.1 to 7.4), and its checks compare your functions with these. `model` is
the chapter's CharLSTM: an `nn.LSTM` called `lstm` over one-hot characters, then a linear `head`.
The keyword-only flags switch one part off: the checks use them to recognise a mistake by the
numbers it gives.
"""

from __future__ import annotations

import math

import numpy as np


def one_hot(lib, ids, vocab):
    """A float32 tensor of shape ids.shape + (vocab,) with a 1 at each id."""
    return lib.tensor(np.eye(vocab, dtype=np.float32)[ids])


def cross_entropy(lib, logits, y, reduction="mean"):
    """The cross-entropy of scores (..., vocab) against the integer targets `y` (...)."""
    target = lib.tensor(np.asarray(y).reshape(-1))
    return lib.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), target, reduction=reduction
    )


def make_chunks(ids, batch_size, seq_len):
    """(inputs, targets) pairs of int arrays, each (seq_len, batch_size): column b reads stream b,
    the targets are the inputs one character on, and a last incomplete chunk is dropped."""
    ids = np.asarray(ids)
    n = (len(ids) - 1) // batch_size  # one spare character after each stream, for its target
    streams = ids[: n * batch_size].reshape(batch_size, n).T
    following = ids[1 : n * batch_size + 1].reshape(batch_size, n).T
    starts = range(0, n - seq_len + 1, seq_len)
    return [(streams[k : k + seq_len], following[k : k + seq_len]) for k in starts]


def train_chunk(lib, model, optimizer, x, y, state, *, zero_grad=True, carry=True):
    """One optimizer step on one chunk, from the carried `state`; returns the loss as a number
    and the final state detached: its values go on to the next chunk, its graph does not."""
    logits, (h, c) = model(one_hot(lib, x, model.lstm.input_size), state if carry else None)
    loss = cross_entropy(lib, logits, y)
    if zero_grad:
        optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item(), (h.detach(), c.detach())


def sample(lib, model, prefix, length, temperature=1.0, seed=0, *, chars, carry=True, first=-1):
    """`prefix` and `length` characters drawn from the model, one at a time under no_grad, the
    state carried: from softmax(scores / temperature) in float64 with numpy's default_rng(seed),
    greedy at temperature 0. The first is drawn from the scores at position `first` of the
    prefix (the last: the model has read the whole prefix)."""
    index = {c: i for i, c in enumerate(chars)}
    vocab = len(chars)
    rng = np.random.default_rng(seed)
    drawn = []
    with lib.no_grad():
        logits, state = model(one_hot(lib, np.array([[index[c]] for c in prefix]), vocab))
        for _ in range(length):
            scores = logits[-1 if drawn else first, 0].numpy().astype(np.float64)
            if temperature == 0:
                choice = int(np.argmax(scores))
            else:
                weights = np.exp((scores - scores.max()) / temperature)
                choice = int(rng.choice(vocab, p=weights / weights.sum()))
            drawn.append(choice)
            step = one_hot(lib, np.array([[choice]]), vocab)
            logits, state = model(step, state if carry else None)
    return prefix + "".join(chars[i] for i in drawn)


def perplexity(lib, model, chunks, *, carry=True):
    """exp(the mean cross-entropy over every character of every chunk), the state carried from
    chunk to chunk, nothing recorded."""
    total, count, state = 0.0, 0, None
    with lib.no_grad():
        for x, y in chunks:
            logits, state = model(one_hot(lib, x, model.lstm.input_size), state if carry else None)
            total += cross_entropy(lib, logits, y, reduction="sum").item()
            count += np.asarray(y).size
    return math.exp(total / count)
