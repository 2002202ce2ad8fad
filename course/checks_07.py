"""Checks for the exercises of chapter 07, the capstone: chunks, training step, sampling, perplexity.

Each ``check_*`` runs the learner's function on small models and data, compares it with a
reference written here and with the same function run on PyTorch from the same weights, and
prints exactly one line: success, "not done yet", or what differs in plain words. None of them
lets an ordinary mistake escape as a traceback.

    check_chunks(make_chunks)
    check_train_chunk(train_chunk, chars)      # chars: the notebook's vocabulary
    check_sample(sample, chars)
    check_perplexity(perplexity, chars)

The learner's functions take the library first, as in the notebook:
``train_chunk(lib, model, optimizer, x, y, state)``, ``sample(lib, model, prefix, length,
temperature, seed)``, ``perplexity(lib, model, chunks)``; they use the notebook's ``one_hot``,
``encode`` and ``decode``, so the models built here have ``len(chars)`` inputs and outputs.
"""

from __future__ import annotations

import math

import numpy as np

from course.check import (
    StepOrder,
    counting_data_reads,
    data_note,
    describe_error,
    tensor_note,
    verdict,
    zero_grad_problem,
)

HIDDEN = 8  # the small models the checks train and sample from


class _Verdict(Exception):
    """Raised inside a check to stop it with one line of feedback (plus the hint if asked)."""

    def __init__(self, text: str, hint: bool = False):
        super().__init__(text)
        self.hint = hint


def _print(exercise: str, text: str) -> None:
    print(f"Exercise {exercise}: {text}")


def _run(exercise: str, todo: str, hint: str, body) -> bool:
    """Run ``body()`` and print its one line; NotImplementedError means "not done yet" + ``todo``."""
    try:
        text = body()
    except NotImplementedError:
        _print(exercise, f"not done yet — {todo}")
        return False
    except _Verdict as verdict:
        _print(exercise, f"{verdict} Hint: {hint}" if verdict.hint else str(verdict))
        return False
    except Exception as error:  # a result of an unexpected kind: still one line, no traceback
        message = f"{type(error).__name__}: {_first_line(error)}"
        _print(exercise, f"your result could not be checked ({message}). Hint: {hint}")
        return False
    _print(exercise, text)
    return True


def _call(fn, *args):
    """Call the learner's fn; NotImplementedError passes through, other errors become a verdict."""
    try:
        return fn(*args)
    except NotImplementedError:
        raise
    except _Verdict:
        raise
    except Exception as error:  # an ordinary mistake: report it in words
        raise _Verdict(f"your code raised {describe_error(error)}.", hint=True) from None


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else "(no message)"


def _numpy(tensor) -> np.ndarray:
    return np.asarray(tensor.detach().cpu().numpy(), dtype=np.float64)


def _float(value) -> float:
    """A Python float from a number or a one-element tensor of either library."""
    if hasattr(value, "item"):
        value = value.item()
    return float(value)


# --- references ---------------------------------------------------------------------------------


def reference_chunks(ids, batch_size, seq_len):
    """(inputs, targets) pairs, each (seq_len, batch_size); column b reads stream b."""
    ids = np.asarray(ids)
    n = (len(ids) - 1) // batch_size
    inputs = ids[: n * batch_size].reshape(batch_size, n).T
    targets = ids[1 : n * batch_size + 1].reshape(batch_size, n).T
    return [
        (inputs[k : k + seq_len], targets[k : k + seq_len])
        for k in range(0, n - seq_len + 1, seq_len)
    ]


def _one_hot(lib, ids, vocab):
    return lib.tensor(np.eye(vocab, dtype=np.float32)[ids])


def _loss(lib, logits, y, vocab, reduction="mean"):
    target = lib.tensor(np.asarray(y).reshape(-1))
    return lib.nn.functional.cross_entropy(logits.reshape(-1, vocab), target, reduction=reduction)


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


def twin_models(vocab, seed=0, hidden=HIDDEN):
    """A mini_autograd model and a torch model with the same weights (torch's initialisation)."""
    import torch

    import mini_autograd as ma

    torch.manual_seed(seed)
    theirs = make_model(torch, vocab, hidden)
    ours = make_model(ma, vocab, hidden)
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs


def _fresh(lib, vocab, seed):
    ours, theirs = twin_models(vocab, seed)
    return ours if lib.__name__ == "mini_autograd" else theirs


def reference_train_chunk(lib, model, optimizer, x, y, state, vocab, zero_grad=True, carry=True):
    """One truncated-BPTT step: loss, backward, step; returns (loss, detached final state)."""
    logits, (h, c) = model(_one_hot(lib, x, vocab), state if carry else None)
    loss = _loss(lib, logits, y, vocab)
    if zero_grad:
        optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item(), (h.detach(), c.detach())


def reference_sample(lib, model, prefix, length, temperature, seed, chars, carry=True):
    """prefix + `length` characters: softmax(scores / temperature) in float64, rng.choice."""
    index = {c: i for i, c in enumerate(chars)}
    vocab = len(chars)
    rng = np.random.default_rng(seed)
    generated = []
    with lib.no_grad():
        logits, state = model(_one_hot(lib, np.array([[index[c]] for c in prefix]), vocab))
        for _ in range(length):
            scores = _numpy(logits[-1, 0])
            if temperature == 0:
                next_id = int(np.argmax(scores))
            else:
                p = np.exp((scores - scores.max()) / temperature)
                next_id = int(rng.choice(vocab, p=p / p.sum()))
            generated.append(next_id)
            logits, state = model(
                _one_hot(lib, np.array([[next_id]]), vocab), state if carry else None
            )
    return prefix + "".join(chars[i] for i in generated)


def reference_perplexity(lib, model, chunks, vocab, carry=True):
    """exp(mean cross-entropy) over every character of every chunk, state carried, no graph."""
    total, count, state = 0.0, 0, None
    with lib.no_grad():
        for x, y in chunks:
            logits, state = model(_one_hot(lib, x, vocab), state if carry else None)
            total += _loss(lib, logits, y, vocab, reduction="sum").item()
            count += np.asarray(y).size
    return math.exp(total / count)


class _Recorder:
    """Wraps a model and counts the calls made while gradient recording was on."""

    def __init__(self, model, lib):
        self.model, self.lib = model, lib
        self.calls = self.recording = 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        self.recording += bool(self.lib.is_grad_enabled())
        return self.model(*args, **kwargs)

    forward = __call__

    def __getattr__(self, name):
        return getattr(self.model, name)


# --- 7.1 chunks ---------------------------------------------------------------------------------

CHUNK_TODO = (
    "replace the `raise NotImplementedError(...)` line: split the ids into batch_size streams "
    "side by side, then cut them into chunks of seq_len rows"
)
CHUNK_HINT = (
    "n = (len(ids) - 1) // batch_size characters per stream; inputs = ids[:n*batch_size] "
    "reshaped to (batch_size, n) and transposed, targets the same from ids[1:]; chunk k is "
    "rows k*seq_len to (k+1)*seq_len; drop a last chunk that is not complete"
)
CHUNK_CASES = [(50, 3, 5), (61, 2, 7), (40, 4, 3)]  # the first two leave a partial chunk


@verdict
def check_chunks(make_chunks) -> bool:
    """Exercise 7.1: make_chunks(ids, batch_size, seq_len) against the reference."""

    def body():
        for length, batch, seq in CHUNK_CASES:
            # ids = positions in the text, so every wrong value says where it came from
            _check_one_layout(make_chunks, np.arange(length, dtype=np.int64), batch, seq)
        return (
            f"correct ✓ — the same chunks as the reference on {len(CHUNK_CASES)} texts: "
            "time-major shape, one stream per column, targets shifted by one."
        )

    return _run("7.1", CHUNK_TODO, CHUNK_HINT, body)


def _check_one_layout(make_chunks, ids, batch, seq):
    case = f"(a text of {len(ids)} characters, batch_size={batch}, seq_len={seq})"
    got = _call(make_chunks, ids, batch, seq)
    expected = reference_chunks(ids, batch, seq)
    try:
        got = [(np.asarray(x), np.asarray(y)) for x, y in got]
    except (TypeError, ValueError):
        raise _Verdict(
            f"make_chunks should return a list of (inputs, targets) pairs {case}; "
            f"got {type(got).__name__}."
        ) from None
    if len(got) != len(expected):
        n = (len(ids) - 1) // batch
        raise _Verdict(
            f"{len(got)} chunks {case}; expected {len(expected)}: each stream holds "
            f"{n} characters, which make {len(expected)} complete chunks of {seq}."
        )
    for k, ((x, y), (ex, ey)) in enumerate(zip(got, expected)):
        for name, g, e in (("inputs", x, ex), ("targets", y, ey)):
            if g.shape == e.shape[::-1] and g.shape != e.shape:
                raise _Verdict(
                    f"the {name} of chunk {k} have shape {g.shape}; expected {e.shape}: time "
                    "first, then batch (one column per stream), as nn.LSTM expects."
                )
            if g.shape != e.shape:
                raise _Verdict(
                    f"the {name} of chunk {k} have shape {g.shape}; expected {e.shape}.", hint=True
                )
            if g.dtype.kind not in "iu":
                raise _Verdict(
                    f"the {name} of chunk {k} hold {g.dtype} values; expected integer ids."
                )
        if np.array_equal(y, x) and not np.array_equal(ey, ex):
            raise _Verdict(
                f"the targets of chunk {k} equal its inputs; the target of each character is "
                "the character after it (the inputs shifted by one)."
            )
        for name, g, e in (("inputs", x, ex), ("targets", y, ey)):
            if not np.array_equal(g, e):
                t, b = (int(i) for i in np.argwhere(g != e)[0])
                raise _Verdict(
                    f"chunk {k}, {name}, time {t}, stream {b}: expected the character at "
                    f"position {e[t, b]} of the text, got position {g[t, b]} {case}. Column b "
                    "must continue, chunk after chunk, where it stopped."
                )


# --- 7.2 the training step ------------------------------------------------------------------------

TRAIN_TODO = (
    "replace the `raise NotImplementedError(...)` line: run the model from `state`, compute the "
    "loss, take an optimizer step, and return the loss with a state the next chunk can start from"
)
TRAIN_HINT = (
    "logits, (h, c) = model(one_hot(lib, x), state); loss = cross_entropy of "
    "logits.reshape(-1, V) against y.reshape(-1); zero_grad, backward, step; "
    "return loss.item(), (h.detach(), c.detach())"
)
TRAIN_LR = 0.05  # large enough that a missing zero_grad or step shows at once


def _train_data(vocab):
    ids = np.random.default_rng(11).integers(0, vocab, 3 * 5 * 3 + 1)
    return reference_chunks(ids, 3, 5)[:3]


def _reference_run(lib, vocab, chunks, **variant):
    model = _fresh(lib, vocab, seed=3)
    optimizer = lib.optim.Adam(model.parameters(), lr=TRAIN_LR)
    losses, state, states = [], None, []
    for x, y in chunks:
        loss, state = reference_train_chunk(lib, model, optimizer, x, y, state, vocab, **variant)
        losses.append(loss)
        states.append(state)
    return losses, states, model


@verdict
def check_train_chunk(train_chunk, chars) -> bool:
    """Exercise 7.2: train_chunk(lib, model, optimizer, x, y, state) -> (loss, detached state)."""

    def body():
        import torch

        import mini_autograd as ma

        vocab = len(chars)
        chunks = _train_data(vocab)
        expected, expected_states, _ = _reference_run(ma, vocab, chunks)
        run = _LearnerRun()
        _learner_run(ma, train_chunk, vocab, chunks, expected, expected_states, run)
        torch_losses = _learner_run(torch, train_chunk, vocab, chunks, None, None)
        if not np.allclose(torch_losses, expected, atol=1e-4):
            raise _Verdict(
                f"with lib=torch the losses are {_fmt(torch_losses)}, with mini_autograd "
                f"{_fmt(expected)}: use `lib.` (not `ma.` or `torch.`) everywhere in the step."
            )
        detached = (
            "the incoming state is detached before it is used"
            if run.attached
            else "the state comes back detached"
        )
        return (
            f"correct ✓ — {len(chunks)} chunks in a row: the same losses and carried state as the "
            f"reference with mini_autograd and with PyTorch, and {detached}." + run.notes
        )

    return _run("7.2", TRAIN_TODO, TRAIN_HINT, body)


def _fmt(values):
    return "[" + ", ".join(f"{v:.4f}" for v in values) + "]"


class _LearnerRun:
    """What the mini_autograd run saw: the order of zero_grad/backward/step, `.data` reads,
    whether a returned state still had its graph (the learner detaches the incoming state
    instead), and the notes for the one-line verdict."""

    def __init__(self):
        self.order = StepOrder()
        self.data = counting_data_reads()
        self.attached = False
        self.tensor_loss = ""

    @property
    def notes(self):
        return self.tensor_loss + data_note(self.data.reads)


def _learner_run(lib, train_chunk, vocab, chunks, expected, expected_states, run=None):
    """Run the learner's step over `chunks`; with `expected`, explain the first difference."""
    run = run or _LearnerRun()
    model = _fresh(lib, vocab, seed=3)
    optimizer = lib.optim.Adam(model.parameters(), lr=TRAIN_LR)
    losses, state = [], None
    watch = lib.__name__ == "mini_autograd"
    for k, (x, y) in enumerate(chunks):
        before = [_numpy(p) for p in model.parameters()]
        start = len(run.order.events)
        try:
            if watch:
                with run.order, run.data:
                    result = train_chunk(lib, model, optimizer, x, y, state)
            else:
                result = train_chunk(lib, model, optimizer, x, y, state)
        except (NotImplementedError, _Verdict):  # NotImplementedError is a RuntimeError
            raise
        except RuntimeError as error:
            raise _Verdict(_runtime_advice(k, error)) from None
        except Exception as error:
            raise _Verdict(
                f"your code raised {describe_error(error)} on chunk {k + 1} (lib={lib.__name__}).",
                hint=True,
            ) from None
        run.tensor_loss = run.tensor_loss or tensor_note(_first_of(result))
        loss, state = _unpack(result)
        losses.append(loss)
        if all(np.array_equal(b, _numpy(p)) for b, p in zip(before, model.parameters())):
            misplaced = zero_grad_problem(run.order.events[start:]) if watch else None
            raise _Verdict(
                f"after chunk {k + 1} the parameters have not changed: "
                + (f"{misplaced}." if misplaced else "call optimizer.step() after loss.backward().")
            )
        if expected is None:
            continue
        if not np.isclose(loss, expected[k], atol=1e-5):
            zero_grad = zero_grad_problem(run.order.events)
            if zero_grad:
                got = f"the loss of chunk {k + 1} is {loss:.5f}, expected {expected[k]:.5f}"
                raise _Verdict(f"{got}: {zero_grad}.")
            raise _Verdict(_loss_advice(k, losses, expected, vocab, chunks))
        attached = _state_advice(k, state, expected_states[k], run.order.kept_graph)
        run.attached = run.attached or attached
    return losses


def _first_of(result):
    try:
        return result[0]
    except (TypeError, IndexError, KeyError):
        return None


def _unpack(result):
    try:
        loss, state = result
        h, c = state
        return _float(loss), (h, c)
    except (TypeError, ValueError):
        raise _Verdict(
            f"train_chunk should return (loss as a number, (h, c)); got {type(result).__name__}.",
            hint=True,
        ) from None


def _runtime_advice(k, error):
    text = str(error)
    if "second time" in text:
        return (
            f"chunk {k + 1}'s backward reached into chunk {k}'s graph, which the previous "
            "backward had freed ('Trying to backward through the graph a second time'): return "
            "the state detached, (h.detach(), c.detach())."
        )
    if "inplace operation" in text:
        return (
            f"chunk {k + 1}'s backward went back into chunk {k}'s graph, whose weights the "
            "optimizer has since changed in place (the in-place version error): do not keep the "
            "graph with retain_graph=True; return the state detached instead."
        )
    return (
        f"your code raised RuntimeError on chunk {k + 1}: {_first_line(error)}. Hint: {TRAIN_HINT}"
    )


def _loss_advice(k, losses, expected, vocab, chunks):
    import mini_autograd as ma

    got = f"the loss of chunk {k + 1} is {losses[k]:.5f}, expected {expected[k]:.5f}"
    if k == 0:
        return (
            f"{got}: compute the cross-entropy of the scores logits.reshape(-1, V) against the "
            "targets y.reshape(-1), before the optimizer step."
        )
    for variant, advice in (
        (
            dict(zero_grad=False),
            "call optimizer.zero_grad() before loss.backward(), or each "
            "step adds the gradients of all earlier chunks",
        ),
        (
            dict(carry=False),
            "pass the state you were given to the model, so each chunk "
            "continues where the previous one stopped",
        ),
    ):
        other, _, _ = _reference_run(ma, vocab, chunks, **variant)
        if np.allclose(losses, other[: len(losses)], atol=1e-5):
            return f"{got}: {advice}."
    return f"{got} (the first {k} matched). Hint: {TRAIN_HINT}"


def _state_advice(k, state, expected, kept_graph):
    """Explain a wrong returned state; True when it still has its graph (accepted if the next
    call detaches it: that call's backward then does not reach into this chunk's freed graph)."""
    h, c = state
    attached = False
    for name, got, want in (("h", h, expected[0]), ("c", c, expected[1])):
        if getattr(got, "grad_fn", None) is not None:
            if kept_graph:
                raise _Verdict(
                    f"the {name} you return after chunk {k + 1} still has a grad_fn "
                    f"({got.grad_fn.name()}), and your backward keeps the graph "
                    "(retain_graph=True), so the next chunk's graph reaches into this one: "
                    f"do not retain the graph; return {name}.detach()."
                )
            attached = True
        got_array = _numpy(got)
        if got_array.shape != tuple(want.shape):
            raise _Verdict(
                f"the {name} you return has shape {got_array.shape}; expected "
                f"{tuple(want.shape)}, the LSTM's final state (layers, batch, hidden)."
            )
        if not np.allclose(got_array, _numpy(want), atol=1e-5):
            zero = not np.any(got_array)
            raise _Verdict(
                f"the {name} you return after chunk {k + 1} "
                + ("is all zeros" if zero else "differs from the LSTM's final state")
                + ": return the state the LSTM hands back, (h, c), detached."
            )
    return attached


# --- 7.3 sampling -------------------------------------------------------------------------------

SAMPLE_TODO = (
    "replace the `raise NotImplementedError(...)` line: feed the prefix, then one character at a "
    "time, carrying the state, under lib.no_grad()"
)
SAMPLE_HINT = (
    "under lib.no_grad(): feed the prefix, then repeat: scores = the last position's logits as "
    "float64 numpy; at temperature 0 take np.argmax, else p = softmax(scores / temperature) and "
    "rng.choice(V, p=p) with rng = np.random.default_rng(seed); feed the new character with "
    "the carried state; return prefix + the new characters"
)
SAMPLE_CASES = [(0, 0, 12), (1.0, 0, 15), (0.7, 5, 15)]  # temperature, seed, length


def _prefix(chars):
    wanted = "".join(c for c in "the " if c in chars)
    return wanted or chars[0]


@verdict
def check_sample(sample, chars) -> bool:
    """Exercise 7.3: sample(lib, model, prefix, length, temperature, seed) against the reference."""

    def body():
        import torch

        import mini_autograd as ma

        ours, theirs = twin_models(len(chars), seed=5)
        prefix = _prefix(chars)
        recorder = _Recorder(ours, ma)
        for temperature, seed, length in SAMPLE_CASES:
            got = _call(sample, ma, recorder, prefix, length, temperature, seed)
            want = reference_sample(ma, ours, prefix, length, temperature, seed, chars)
            _compare_text(got, want, prefix, length, temperature, seed, ours, chars)
        if recorder.recording:
            raise _Verdict(
                f"the text is right, but {recorder.recording} of the model's "
                f"{recorder.calls} calls recorded a graph: generate inside `with lib.no_grad():`, "
                "or every character's graph stays linked to the previous ones through the state."
            )
        for temperature, seed, length in SAMPLE_CASES:
            got = _call(sample, torch, theirs, prefix, length, temperature, seed)
            want = reference_sample(ma, ours, prefix, length, temperature, seed, chars)
            if got != want:
                raise _Verdict(
                    f"with lib=torch (same weights) the sample is {got!r}, with mini_autograd "
                    f"{want!r}: use `lib.` everywhere, and .numpy() to read the scores."
                )
        return (
            f"correct ✓ — greedy and seeded samples equal the reference's, with mini_autograd and "
            f"with PyTorch ({len(SAMPLE_CASES)} settings), and nothing was recorded."
        )

    return _run("7.3", SAMPLE_TODO, SAMPLE_HINT, body)


def _compare_text(got, want, prefix, length, temperature, seed, model, chars):
    import mini_autograd as ma

    case = f"(prefix {prefix!r}, length={length}, temperature={temperature}, seed={seed})"
    if not isinstance(got, str):
        raise _Verdict(f"sample should return a string; got {type(got).__name__} {case}.")
    if not got.startswith(prefix):
        raise _Verdict(f"the sample {got!r} does not start with the prefix {case}.")
    if len(got) != len(prefix) + length:
        raise _Verdict(
            f"the sample has {len(got) - len(prefix)} new characters; expected {length} {case}."
        )
    if got == want:
        return
    first = next(i for i, (a, b) in enumerate(zip(got, want)) if a != b)
    no_carry = reference_sample(ma, model, prefix, length, temperature, seed, chars, carry=False)
    if got == no_carry:
        raise _Verdict(
            f"the sample {got!r} is what the model writes when every character starts from a "
            f"zero state {case}: pass the state from each call to the next."
        )
    if temperature == 0:
        advice = "at temperature 0 take the character with the largest score (np.argmax)"
    else:
        advice = (
            "divide the scores by the temperature, softmax them in float64, and draw once per "
            "character with rng.choice(V, p=p) from np.random.default_rng(seed)"
        )
    raise _Verdict(
        f"the sample differs from the reference from character {first} on: {got!r} instead of "
        f"{want!r} {case}; {advice}."
    )


# --- 7.4 perplexity -----------------------------------------------------------------------------

PERPLEXITY_TODO = (
    "replace the `raise NotImplementedError(...)` line: the exponential of the mean "
    "cross-entropy per character, with the state carried from chunk to chunk"
)
PERPLEXITY_HINT = (
    "under lib.no_grad(), run the chunks in order carrying the state; add up the "
    "cross-entropy of every character (reduction='sum'), divide by their number, "
    "and return the exponential of that mean as a float"
)


@verdict
def check_perplexity(perplexity, chars) -> bool:
    """Exercise 7.4: perplexity(lib, model, chunks) = exp(mean cross-entropy), state carried."""

    def body():
        import torch

        import mini_autograd as ma

        vocab = len(chars)
        ids = np.random.default_rng(4).integers(0, vocab, 4 * 6 * 5 + 1)
        chunks = reference_chunks(ids, 4, 6)
        ours, theirs = twin_models(vocab, seed=6)
        recorder = _Recorder(ours, ma)
        want = reference_perplexity(ma, ours, chunks, vocab)
        returned = _call(perplexity, ma, recorder, chunks)
        got = _float(returned)
        if not np.isclose(got, want, rtol=1e-4):
            raise _Verdict(*_perplexity_advice(got, want, ours, chunks, vocab))
        if recorder.recording:
            raise _Verdict(
                f"the value is right, but {recorder.recording} of the model's {recorder.calls} "
                "calls recorded a graph: evaluate inside `with lib.no_grad():`."
            )
        theirs_value = _float(_call(perplexity, torch, theirs, chunks))
        if not np.isclose(theirs_value, want, rtol=1e-4):
            raise _Verdict(
                f"with lib=torch (same weights) you get {theirs_value:.4f}, with mini_autograd "
                f"{want:.4f}: use `lib.` everywhere."
            )
        return (
            "correct ✓ — the same perplexity as the reference's with mini_autograd and with "
            "PyTorch, state carried across chunks, without recording a graph."
            + tensor_note(returned)
        )

    return _run("7.4", PERPLEXITY_TODO, PERPLEXITY_HINT, body)


def _perplexity_advice(got, want, model, chunks, vocab):
    import mini_autograd as ma

    text = f"you get {got:.4f}, expected {want:.4f}"
    if np.isclose(got, math.log(want), rtol=1e-4):
        return (
            f"{text}: that is the mean cross-entropy itself; perplexity is its exponential.",
            False,
        )
    if np.isclose(got, reference_perplexity(ma, model, chunks, vocab, carry=False), rtol=1e-4):
        return (
            f"{text}, the value with the state reset at every chunk: carry the state from one "
            "chunk to the next, as in training.",
            False,
        )
    return f"{text}.", True
