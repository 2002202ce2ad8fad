"""Checks for the exercises of chapter 07, the capstone, against the course's version
(course/capstone.py) and against the same function run on PyTorch from the same weights.

    check_chunks(make_chunks)
    check_train_chunk(train_chunk, chars)      # chars: the notebook's vocabulary
    check_sample(sample, chars)
    check_perplexity(perplexity, chars)

The learner's functions take the library first: ``train_chunk(lib, model, optimizer, x, y,
state)``, ``sample(lib, model, prefix, length, temperature, seed)``, ``perplexity(lib, model,
chunks)``; they use the notebook's ``one_hot``, so the models here have ``len(chars)`` inputs.
"""

from __future__ import annotations

import contextlib
import functools
import math

import numpy as np

import mini_autograd as ma
from course import capstone
from course.check import (
    Feedback,
    Spy,
    as_array,
    call,
    checker,
    data_note,
    first_line,
    freed_graph,
    in_place_error,
    load_torch,
    named_mistake,
    number,
    retained_for_nothing,
    tensor_note,
    zero_grad_problem,
)

HIDDEN = 8  # the small models the checks train and sample from


# --- the models the checks run ------------------------------------------------------------------


def make_model(lib, vocab, hidden=HIDDEN):
    """The notebook's CharLSTM: an LSTM over one-hot characters and a linear layer of scores."""

    class CharLSTM(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = lib.nn.LSTM(vocab, hidden)
            self.head = lib.nn.Linear(hidden, vocab)

        def forward(self, x, state=None):
            out, state = self.lstm(x, state)
            return self.head(out), state

    return CharLSTM()


def twin_models(vocab, seed=0, hidden=HIDDEN, scale=1.0):
    """A mini_autograd model and a torch model with the same weights (torch's initialisation,
    times `scale`)."""
    torch = load_torch()
    torch.manual_seed(seed)
    theirs = make_model(torch, vocab, hidden)
    with torch.no_grad():
        for weight in theirs.parameters():
            weight.mul_(scale)
    ours = make_model(ma, vocab, hidden)
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs


class _Recorder:
    """Wraps a model and counts its calls, those made while gradient recording was on, and
    those given a state that still had its graph; notes each call's (input length, whether a
    state was given)."""

    def __init__(self, model, lib):
        self.model, self.lib = model, lib
        self.calls = self.recording = self.linked = 0
        self.inputs: list[tuple[int, bool]] = []

    def __call__(self, x, state=None):
        self.calls += 1
        self.recording += bool(self.lib.is_grad_enabled())
        self.linked += any(getattr(s, "grad_fn", None) is not None for s in state or ())
        self.inputs.append((len(x), state is not None))
        return self.model(x, state)

    forward = __call__

    def __getattr__(self, name):
        return getattr(self.model, name)


# --- 7.1 chunks ---------------------------------------------------------------------------------

CHUNK_TODO = "replace the `raise NotImplementedError(...)` line: split the ids into batch_size streams side by side, then cut them into chunks of seq_len rows"
CHUNK_HINT = "lay the text out as batch_size streams side by side, one per column, each keeping one spare character for its last target; then cut the columns into consecutive blocks of seq_len rows; the targets are the same cut of the text, one character on"
CHUNK_CASES = [(58, 3, 5), (61, 2, 7), (40, 4, 3)]  # the first two leave a partial chunk


@checker("7.1", CHUNK_TODO, CHUNK_HINT)
def check_chunks(make_chunks):
    """Exercise 7.1: make_chunks(ids, batch_size, seq_len) against the reference."""
    for length, batch, seq in CHUNK_CASES:
        # ids = positions in the text, so every wrong value says where it came from
        _check_one_layout(make_chunks, np.arange(length, dtype=np.int64), batch, seq)
    return f"the same chunks as the reference on {len(CHUNK_CASES)} texts: time-major shape, one stream per column, targets shifted by one."


def _check_one_layout(make_chunks, ids, batch, seq):
    case = f"(a text of {len(ids)} characters, batch_size={batch}, seq_len={seq})"
    got = call(make_chunks, ids, batch, seq)
    expected = capstone.make_chunks(ids, batch, seq)
    try:
        got = [(np.asarray(x), np.asarray(y)) for x, y in got]
    except (TypeError, ValueError):
        raise Feedback(
            f"make_chunks should return a list of (inputs, targets) pairs {case}; got {type(got).__name__}."
        ) from None
    if len(got) > len(expected) and len(got[-1][0]) < seq:
        raise Feedback(
            f"your last chunk has {len(got[-1][0])} time steps, fewer than seq_len={seq} {case}: a last chunk that would be short is dropped, so that every chunk holds seq_len steps."
        )
    if len(got) != len(expected):
        n = (len(ids) - 1) // batch
        raise Feedback(
            f"{len(got)} chunks {case}; expected {len(expected)}: each stream holds {n} characters, which make {len(expected)} complete chunks of {seq}."
        )
    for k, ((x, y), (ex, ey)) in enumerate(zip(got, expected)):
        for name, g, e in (("inputs", x, ex), ("targets", y, ey)):
            if g.shape == e.shape[::-1] and g.shape != e.shape:
                raise Feedback(
                    f"the {name} of chunk {k} have shape {g.shape}; expected {e.shape}: time first, then batch (one column per stream), as nn.LSTM expects."
                )
            if g.shape != e.shape:
                raise Feedback(
                    f"the {name} of chunk {k} have shape {g.shape}; expected {e.shape}.", hint=True
                )
            if g.dtype.kind not in "iu":
                raise Feedback(
                    f"the {name} of chunk {k} hold {g.dtype} values; expected integer ids."
                )
        if np.array_equal(y, x) and not np.array_equal(ey, ex):
            raise Feedback(
                f"the targets of chunk {k} equal its inputs; the target of each character is the character after it (the inputs shifted by one)."
            )
        for name, g, e in (("inputs", x, ex), ("targets", y, ey)):
            if not np.array_equal(g, e) and np.all(np.diff(g, axis=1) == 1):
                raise Feedback(
                    f"the {name} of chunk {k} run the text along the rows {case}: time 0 holds positions {g[0].tolist()}, consecutive characters side by side, so the characters of a column are {batch} positions apart (the text laid out in rows of batch_size). Each column must be one stream, a stretch of n = {(len(ids) - 1) // batch} consecutive characters: cut the text into batch_size streams and set them side by side, one per column."
                )
            if not np.array_equal(g, e):
                t, b = (int(i) for i in np.argwhere(g != e)[0])
                raise Feedback(
                    f"chunk {k}, {name}, time {t}, stream {b}: expected the character at position {e[t, b]} of the text, got position {g[t, b]} {case}. Column b must continue, chunk after chunk, where it stopped."
                )


# --- 7.2 the training step ------------------------------------------------------------------------

TRAIN_TODO = "replace the `raise NotImplementedError(...)` line: run the model from `state`, compute the loss, take an optimizer step, and return the loss with a state the next chunk can start from"
TRAIN_HINT = "run the model from the state you are given and keep the final (h, c) it returns; the loss compares the scores at every position with that position's target; then the optimizer's three steps; hand back the loss as a number, and a state that holds the values of (h, c) without the graph that made them"
TRAIN_LR = 0.05  # large enough that a missing zero_grad or step shows at once


def _reference_run(lib, vocab, chunks, **variant):
    model = twin_models(vocab, seed=3)[lib is not ma]
    optimizer = lib.optim.Adam(model.parameters(), lr=TRAIN_LR)
    losses, state, states = [], None, []
    for x, y in chunks:
        loss, state = capstone.train_chunk(lib, model, optimizer, x, y, state, **variant)
        losses.append(loss)
        states.append(state)
    return losses, states, model


@checker("7.2", TRAIN_TODO, TRAIN_HINT)
def check_train_chunk(train_chunk, chars):
    """Exercise 7.2: train_chunk(lib, model, optimizer, x, y, state) -> (loss, detached state)."""
    torch = load_torch()
    vocab = len(chars)
    chunks = capstone.make_chunks(np.random.default_rng(11).integers(0, vocab, 46), 3, 5)[:3]
    expected, expected_states, _ = _reference_run(ma, vocab, chunks)
    _, notes, attached = _learner_run(ma, train_chunk, vocab, chunks, expected, expected_states)
    torch_losses = _learner_run(torch, train_chunk, vocab, chunks)[0]
    if not np.allclose(torch_losses, expected, atol=1e-4):
        raise Feedback(
            f"with lib=torch the losses are {np.round(torch_losses, 4).tolist()}, with mini_autograd {np.round(expected, 4).tolist()}: use `lib.` (not `ma.` or `torch.`) everywhere in the step."
        )
    return f"{len(chunks)} chunks in a row: the same losses and carried state as the reference with mini_autograd and with PyTorch, and {'the incoming state is detached before it is used' if attached else 'the state comes back detached'}.{notes}"


def _learner_run(lib, train_chunk, vocab, chunks, expected=None, expected_states=None):
    """Run the learner's step over `chunks`; with `expected`, explain the first difference.
    Returns the losses, the notes for the verdict, and whether a returned state kept its graph
    (accepted when the learner detaches the incoming state instead)."""
    spy, note, attached = Spy(), "", False
    model = twin_models(vocab, seed=3)[lib is not ma]
    optimizer = lib.optim.Adam(model.parameters(), lr=TRAIN_LR)
    losses, state = [], None
    watch = lib.__name__ == "mini_autograd"
    for k, (x, y) in enumerate(chunks):
        before = [as_array(p) for p in model.parameters()]
        start = len(spy.events)
        with spy if watch else contextlib.nullcontext():
            where = f" on chunk {k + 1} (lib={lib.__name__})."
            explain = functools.partial(_runtime_advice, k)
            result = call(
                train_chunk, lib, model, optimizer, x, y, state, where=where, explain=explain
            )
        note = note or tensor_note(result)
        loss, state = _unpack(result)
        losses.append(loss)
        if all(np.array_equal(b, as_array(p)) for b, p in zip(before, model.parameters())):
            misplaced = zero_grad_problem(spy.events[start:]) if watch else None
            raise Feedback(
                f"after chunk {k + 1} the parameters have not changed: "
                + (f"{misplaced}." if misplaced else "call optimizer.step() after loss.backward().")
            )
        if expected is None:
            continue
        if not np.isclose(loss, expected[k], atol=1e-5):
            zero_grad = zero_grad_problem(spy.events)
            if zero_grad:
                got = f"the loss of chunk {k + 1} is {loss:.5f}, expected {expected[k]:.5f}"
                raise Feedback(f"{got}: {zero_grad}.")
            raise Feedback(_loss_advice(k, losses, expected, vocab, chunks))
        attached = _state_advice(k, state, expected_states[k], spy.retained) or attached
    if expected is not None and spy.retained:
        raise Feedback(
            retained_for_nothing("each chunk starts from a detached state", "this chunk's")
        )
    return losses, note + data_note(spy.data_reads), attached


def _unpack(result):
    try:
        loss, (h, c) = result
    except (TypeError, ValueError):
        raise Feedback(
            f"train_chunk should return (loss as a number, (h, c)); got {type(result).__name__}.",
            hint=True,
        ) from None
    if hasattr(loss, "grad_fn") and loss.grad_fn is None:
        raise Feedback(
            "train_chunk returns the loss as a tensor without a graph (detached): it keeps no graph alive, but the exercise asks for a number: return it as a Python number (its item())."
        )
    if hasattr(loss, "grad_fn"):
        raise Feedback(
            "train_chunk returns the loss as a tensor: return it as a Python number (its item()). A loss tensor that the training loop keeps, in its list of losses, keeps the chunk's whole graph and its saved tensors alive"
        )
    return number(loss, "the loss"), (h, c)


def _runtime_advice(k, error):
    """Words for the errors of a state carried with its graph (None for an unexpected error)."""
    if freed_graph(error):
        return f"chunk {k + 1}'s backward reached into chunk {k}'s graph, which the previous backward had freed ('Trying to backward through the graph a second time'): return the state detached, its values without the graph that made them."
    if in_place_error(error):
        return f"chunk {k + 1}'s backward went back into chunk {k}'s graph, whose weights the optimizer has since changed in place (the in-place version error): do not keep the graph with retain_graph=True; return the state detached instead."
    if isinstance(error, RuntimeError):
        return f"your code raised RuntimeError on chunk {k + 1}: {first_line(error)}. Hint: {TRAIN_HINT}"
    return None


TRAIN_VARIANTS = {  # a flag of capstone.train_chunk turned off: what its losses mean
    "zero_grad": "call optimizer.zero_grad() before loss.backward(), or each step adds the gradients of all earlier chunks",
    "carry": "pass the state you were given to the model, so each chunk continues where the previous one stopped",
}


def _loss_advice(k, losses, expected, vocab, chunks):
    got = f"the loss of chunk {k + 1} is {losses[k]:.5f}, expected {expected[k]:.5f}"
    if k == 0:
        return f"{got}: compute the cross-entropy of the scores logits.reshape(-1, V) against the targets y.reshape(-1), before the optimizer step."
    variants = (
        (advice, _reference_run(ma, vocab, chunks, **{setting: False})[0])
        for setting, advice in TRAIN_VARIANTS.items()
    )
    advice = named_mistake(
        lambda other: np.allclose(losses, other[: len(losses)], atol=1e-5), variants
    )
    return f"{got}: {advice}." if advice else f"{got} (the first {k} matched). Hint: {TRAIN_HINT}"


def _state_advice(k, state, expected, kept_graph):
    """Explain a wrong returned state; True when it still has its graph (accepted if the next
    call detaches it: that call's backward then does not reach into this chunk's freed graph)."""
    h, c = state
    attached = False
    for name, got, want in (("h", h, expected[0]), ("c", c, expected[1])):
        if getattr(got, "grad_fn", None) is not None:
            if kept_graph:
                raise Feedback(
                    f"the {name} you return after chunk {k + 1} still has a grad_fn ({got.grad_fn.name()}), and your backward keeps the graph (retain_graph=True), so the next chunk's graph reaches into this one: do not retain the graph; return {name}.detach()."
                )
            attached = True
        got_array = as_array(got)
        if got_array.shape != tuple(want.shape):
            raise Feedback(
                f"the {name} you return has shape {got_array.shape}; expected {tuple(want.shape)}, the LSTM's final state (layers, batch, hidden)."
            )
        if not np.allclose(got_array, as_array(want), atol=1e-5):
            zero = not np.any(got_array)
            raise Feedback(
                f"the {name} you return after chunk {k + 1} "
                + ("is all zeros" if zero else "differs from the LSTM's final state")
                + ": return the state the LSTM hands back, (h, c), detached."
            )
    return attached


# --- 7.3 sampling -------------------------------------------------------------------------------

SAMPLE_TODO = "replace the `raise NotImplementedError(...)` line: feed the prefix, then one character at a time, carrying the state, under lib.no_grad()"
SAMPLE_HINT = "everything under lib.no_grad(), with one random generator made once from the seed; read the whole prefix in one call; then each new character comes from the scores at the last position read (the largest at temperature 0, else drawn from the softmax of scores / temperature, in float64) and is fed back with the carried state"
SAMPLE_CASES = [(0, 0, 12), (1.0, 0, 15), (0.7, 5, 15), (0.002, 1, 8)]  # temperature, seed, length


@checker("7.3", SAMPLE_TODO, SAMPLE_HINT)
def check_sample(sample, chars):
    """Exercise 7.3: sample(lib, model, prefix, length, temperature, seed) against the reference."""
    torch = load_torch()
    # Weights times 3: an untrained model's scores hardly depend on what it has read, and a
    # sample that reads the wrong position could still come out the same.
    ours, theirs = twin_models(len(chars), seed=5, scale=3.0)
    prefix = "".join(c for c in "the " if c in chars) or chars[0]
    recorder = _Recorder(ours, ma)
    reread = None  # the inputs of a case whose calls read more than the new character
    for temperature, seed, length in SAMPLE_CASES:
        start = len(recorder.inputs)
        got = call(sample, ma, recorder, prefix, length, temperature, seed, explain=_sample_error)
        want = capstone.sample(ma, ours, prefix, length, temperature, seed, chars=chars)
        _compare_text(got, want, prefix, length, temperature, seed, ours, chars)
        inputs = recorder.inputs[start:]
        if reread is None and any(n > 1 for n, _ in inputs[1:]):
            reread = inputs
    if reread:
        lengths = [n for n, _ in reread]
        zero = "" if any(given for _, given in reread[1:]) else ", each from a zero state"
        raise Feedback(
            f"the text is right, but your sample runs the model on the whole text so far for every new character (inputs of {lengths[0]}, {lengths[1]}, ... {lengths[-1]} characters{zero}): the work grows with the square of the text's length. The state already holds all it has read: carry the state each call returns into the next, and feed only the new character."
        )
    if recorder.recording:
        raise Feedback(f"the text is right, but {_recorded(recorder)}")
    for temperature, seed, length in SAMPLE_CASES:
        got = call(sample, torch, theirs, prefix, length, temperature, seed)
        want = capstone.sample(ma, ours, prefix, length, temperature, seed, chars=chars)
        if got != want:
            raise Feedback(
                f"with lib=torch (same weights) the sample is {got!r}, with mini_autograd {want!r}: use `lib.` everywhere, and .numpy() to read the scores."
            )
    return f"greedy and seeded samples equal the reference's, with mini_autograd and with PyTorch ({len(SAMPLE_CASES)} settings), and nothing was recorded."


def _recorded(recorder):
    """Words for a sample whose model calls recorded graphs, linked by the state or not."""
    calls = f"{recorder.recording} of the model's {recorder.calls} calls recorded a graph"
    if recorder.linked:
        return f"{calls}, and the state carried from call to call kept its graph, so every character's graph stays linked to the previous ones: generate inside `with lib.no_grad():`."
    return f"{calls}: detaching the state keeps the graphs apart, but each call still records one and saves its tensors for a backward that never comes. Sampling needs no gradients: generate inside `with lib.no_grad():`."


def _sample_error(error):
    """Words for reading the scores of a model that records, and for a softmax that overflowed:
    None for another error."""
    if "NaN" in str(error):
        return "at temperature 0.002 your probabilities hold NaN: exp of scores divided by 0.002 overflows to infinity, and powers of probabilities (p ** (1 / temperature)) underflow to zeros, so the normalising sum is inf or 0. Divide the scores by the temperature, subtract the largest, then exp: the softmax does not change, and the largest term is exactly 1"
    if "Can't call numpy() on Tensor that requires grad" in str(error):
        return "reading the scores as numbers failed because they are part of a graph: the model recorded every call. Sampling needs no gradient: generate inside `with lib.no_grad():`, so nothing is recorded and the scores can be read"
    return None


SAMPLE_VARIANTS = {  # a setting of capstone.sample: what its sample means ({} the case)
    (
        "carry",
        False,
    ): "every character starts from a zero state {}: pass the state from each call to the next.",
    (
        "first",
        0,
    ): "the first new character is drawn from the scores at the prefix's first position {}: draw it from the scores at the last position, where the model has read the whole prefix.",
}


def _compare_text(got, want, prefix, length, temperature, seed, model, chars):
    case = f"(prefix {prefix!r}, length={length}, temperature={temperature}, seed={seed})"
    if not isinstance(got, str):
        raise Feedback(f"sample should return a string; got {type(got).__name__} {case}.")
    if not got.startswith(prefix):
        raise Feedback(f"the sample {got!r} does not start with the prefix {case}.")
    if len(got) != len(prefix) + length:
        raise Feedback(
            f"the sample has {len(got) - len(prefix)} new characters; expected {length} {case}."
        )
    if got == want:
        return
    first = next(i for i, (a, b) in enumerate(zip(got, want)) if a != b)
    written = functools.partial(capstone.sample, ma, model, prefix, length, temperature, seed)
    variants = (
        (advice, written(chars=chars, **{name: value}))
        for (name, value), advice in SAMPLE_VARIANTS.items()
        if len(prefix) > 1 or name != "first"  # one character: its first position is its last
    )
    advice = named_mistake(got.__eq__, variants)
    if advice:
        raise Feedback(f"the sample {got!r} is what the model writes when {advice.format(case)}")
    if temperature == 0:
        advice = "at temperature 0 take the character with the largest score (np.argmax)"
    else:
        advice = "divide the scores by the temperature, softmax them in float64, and draw once per character with rng.choice(V, p=p) from np.random.default_rng(seed)"
    raise Feedback(
        f"the sample differs from the reference from character {first} on: {got!r} instead of {want!r} {case}; {advice}."
    )


# --- 7.4 perplexity -----------------------------------------------------------------------------

PERPLEXITY_TODO = "replace the `raise NotImplementedError(...)` line: the exponential of the mean cross-entropy per character, with the state carried from chunk to chunk"
PERPLEXITY_HINT = "under lib.no_grad(), run the chunks in order carrying the state; add up the cross-entropy of every character (reduction='sum'), divide by their number, and return the exponential of that mean as a float"


@checker("7.4", PERPLEXITY_TODO, PERPLEXITY_HINT)
def check_perplexity(perplexity, chars):
    """Exercise 7.4: perplexity(lib, model, chunks) = exp(mean cross-entropy), state carried."""
    torch = load_torch()
    vocab = len(chars)
    chunks = capstone.make_chunks(np.random.default_rng(4).integers(0, vocab, 121), 4, 6)
    ours, theirs = twin_models(vocab, seed=6)
    recorder = _Recorder(ours, ma)
    want = capstone.perplexity(ma, ours, chunks)
    returned = call(perplexity, ma, recorder, chunks)
    got = number(returned, "the perplexity")
    if not np.isclose(got, want, rtol=1e-4):
        _perplexity_advice(got, want, ours, chunks)
    if recorder.recording:
        raise Feedback(
            f"the value is right, but {recorder.recording} of the model's {recorder.calls} calls recorded a graph: evaluate inside `with lib.no_grad():`."
        )
    theirs_value = number(call(perplexity, torch, theirs, chunks), "the perplexity")
    if not np.isclose(theirs_value, want, rtol=1e-4):
        raise Feedback(
            f"with lib=torch (same weights) you get {theirs_value:.4f}, with mini_autograd {want:.4f}: use `lib.` everywhere."
        )
    return (
        "the same perplexity as the reference's with mini_autograd and with PyTorch, state carried across chunks, without recording a graph."
        + tensor_note(returned)
    )


def _perplexity_advice(got, want, model, chunks):
    text = f"you get {got:.4f}, expected {want:.4f}"
    mistakes = (
        (": that is the mean cross-entropy itself; perplexity is its exponential.", math.log(want)),
        (
            ", the value with the state reset at every chunk: carry the state from one chunk to the next, as in training.",
            capstone.perplexity(ma, model, chunks, carry=False),
        ),
    )
    mistake = named_mistake(functools.partial(np.isclose, got, rtol=1e-4), mistakes)
    raise Feedback(text + (mistake or "."), hint=not mistake)
