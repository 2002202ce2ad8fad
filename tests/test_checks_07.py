"""The chapter 07 checkers accept the solutions and explain plausible wrong answers in words."""

import functools
import math
from pathlib import Path

import numpy as np
import pytest

import mini_autograd as ma
from course import capstone, checks_07
from tests.exercise_answers import answer, not_done

TEXT = (Path(__file__).resolve().parent.parent / "data" / "sonnets.txt").read_text("utf-8")
CHARS = sorted(set(TEXT.split("\n", 1)[1]))
V = len(CHARS)
INDEX = {c: i for i, c in enumerate(CHARS)}
NOTEBOOK = {"V": V, "chars": CHARS, "index_of": INDEX}  # the notebook's globals the answers read
one_hot = answer("07_capstone", "one_hot", **NOTEBOOK)
encode = answer("07_capstone", "encode", **NOTEBOOK)
decode = answer("07_capstone", "decode", **NOTEBOOK)


# --- 7.1 ----------------------------------------------------------------------------------------


make_chunks = answer("07_capstone", "make_chunks")


def chunks_targets_equal_inputs(ids, batch_size, seq_len):
    return [(x, x.copy()) for x, _ in make_chunks(ids, batch_size, seq_len)]


def chunks_batch_first(ids, batch_size, seq_len):
    return [(x.T, y.T) for x, y in make_chunks(ids, batch_size, seq_len)]


def chunks_consecutive(ids, batch_size, seq_len):
    """Consecutive pieces of the text side by side: columns do not continue across chunks."""
    span = batch_size * seq_len
    out = []
    for start in range(0, len(ids) - span, span):
        x = ids[start : start + span].reshape(batch_size, seq_len).T
        y = ids[start + 1 : start + span + 1].reshape(batch_size, seq_len).T
        out.append((x, y))
    return out


def streams(ids, batch_size):
    """The text as batch_size streams side by side (inputs, targets): the solution's chunks of
    one row each, stacked."""
    rows = make_chunks(ids, batch_size, 1)
    return np.concatenate([x for x, _ in rows]), np.concatenate([y for _, y in rows])


def chunks_along_rows(ids, batch_size, seq_len):
    """The text laid out in rows of batch_size characters: each column reads every
    batch_size-th character instead of one stream."""
    n = (len(ids) - 1) // batch_size
    inputs = ids[: batch_size * n].reshape(-1, batch_size)
    targets = ids[1 : batch_size * n + 1].reshape(-1, batch_size)
    return [
        (inputs[k : k + seq_len], targets[k : k + seq_len])
        for k in range(0, n - seq_len + 1, seq_len)
    ]


def chunks_keep_last(ids, batch_size, seq_len):
    inputs, targets = streams(ids, batch_size)
    n = len(inputs)
    return [(inputs[k : k + seq_len], targets[k : k + seq_len]) for k in range(0, n, seq_len)]


def chunks_range_one_too_far(ids, batch_size, seq_len):
    """The range of chunk starts runs one further: a short last chunk when seq_len - 1 are left."""
    inputs, targets = streams(ids, batch_size)
    n = len(inputs)
    return [
        (inputs[k : k + seq_len], targets[k : k + seq_len])
        for k in range(0, n - seq_len + 2, seq_len)
    ]


def test_chunks_accepts_the_solution(one_line):
    assert checks_07.check_chunks(make_chunks)
    assert "Exercise 7.1: correct ✓" in one_line()


@pytest.mark.parametrize(
    "wrong, words",
    [
        (chunks_targets_equal_inputs, "targets of chunk 0 equal its inputs"),
        (chunks_batch_first, "time first, then batch"),
        (chunks_consecutive, "must continue, chunk after chunk"),
        (chunks_along_rows, "run the text along the rows"),
        (chunks_keep_last, "fewer than seq_len=5"),
        (chunks_range_one_too_far, "a last chunk that would be short is dropped"),
    ],
    ids=[
        "targets-not-shifted",
        "batch-first",
        "consecutive-pieces",
        "along-rows",
        "incomplete-chunk",
        "range-one-too-far",
    ],
)
def test_chunks_explains_mistakes(one_line, wrong, words):
    assert not checks_07.check_chunks(wrong)
    out = one_line("Exercise 7.1: ")
    assert words in out, out
    assert "Traceback" not in out


# --- 7.2 ----------------------------------------------------------------------------------------


train_chunk = answer("07_capstone", "train_chunk", one_hot=one_hot, **NOTEBOOK)


def train_variant(
    lib,
    model,
    optimizer,
    x,
    y,
    state,
    *,
    steps="zbs",
    retain=False,
    carried="detach",
    detach_incoming=False,
    loss_item=True,
    target_lib=None,
):
    """train_chunk with a slip: `steps` runs zero_grad (z), backward (b) and step (s) in its
    order, leaving out those it lacks; the state goes on "detach"ed, as "data" or with its
    "graph"; the target is made with `target_lib` (ma where the code should say lib)."""
    if detach_incoming and state is not None:
        state = tuple(s.detach() for s in state)
    logits, (h, c) = model(one_hot(lib, x), state)
    target = (target_lib or lib).tensor(y.reshape(-1))
    loss = lib.nn.functional.cross_entropy(logits.reshape(-1, V), target)
    for step in steps:
        if step == "z":
            optimizer.zero_grad()
        elif step == "b":
            loss.backward(retain_graph=retain)
        else:
            optimizer.step()
    if carried == "detach":
        h, c = h.detach(), c.detach()
    elif carried == "data":
        h, c = h.data, c.data
    return (loss.item() if loss_item else loss), (h, c)


def train_zero_state(lib, model, optimizer, x, y, state):
    loss, (h, c) = train_chunk(lib, model, optimizer, x, y, state)
    return loss, (lib.zeros(*h.shape), lib.zeros(*c.shape))


def train_ignores_state(lib, model, optimizer, x, y, state):
    return train_chunk(lib, model, optimizer, x, y, None)


train_no_detach = functools.partial(train_variant, carried="graph")
train_retain_graph = functools.partial(train_variant, carried="graph", retain=True)
train_no_zero_grad = functools.partial(train_variant, steps="bs")
train_no_step = functools.partial(train_variant, steps="zb")
train_late_zero_grad = functools.partial(train_variant, steps="bzs")
train_zero_grad_after_step = functools.partial(train_variant, steps="bsz")
train_detach_incoming = functools.partial(train_variant, carried="graph", detach_incoming=True)
train_tensor_loss = functools.partial(train_variant, loss_item=False)


def train_detached_loss(lib, model, optimizer, x, y, state):
    loss, state = train_variant(lib, model, optimizer, x, y, state, loss_item=False)
    return loss.detach(), state


train_detached_but_retained = functools.partial(train_variant, retain=True)
train_data_state = functools.partial(train_variant, carried="data")
train_ma_not_lib = functools.partial(train_variant, target_lib=ma)


@pytest.mark.parametrize(
    "right, note",
    [
        (train_zero_grad_after_step, ""),
        (train_detach_incoming, ""),
        (train_data_state, "reads `.data`"),
    ],
    ids=["zero-grad-after-step", "detach-incoming", "data-state"],
)
def test_train_chunk_accepts_other_right_answers(one_line, right, note):
    assert checks_07.check_train_chunk(right, CHARS)
    out = one_line()
    assert "Exercise 7.2: correct ✓" in out and note in out, out
    assert note or "note" not in out, out


def test_train_chunk_accepts_the_solution(one_line):
    assert checks_07.check_train_chunk(train_chunk, CHARS)
    assert "Exercise 7.2: correct ✓" in one_line()


@pytest.mark.parametrize(
    "wrong, words",
    [
        (train_no_detach, "return the state detached"),
        (train_retain_graph, "retain_graph=True"),
        (train_no_zero_grad, "optimizer.zero_grad() is never called"),
        (train_late_zero_grad, "zero_grad() runs between loss.backward() and optimizer.step()"),
        (train_ma_not_lib, "write `lib.` everywhere"),
        (train_no_step, "call optimizer.step()"),
        (train_zero_state, "is all zeros"),
        (train_ignores_state, "pass the state you were given"),
        (train_tensor_loss, "return it as a Python number"),
        (train_detached_loss, "it keeps no graph alive, but the exercise asks for a number"),
        (train_detached_but_retained, "the losses are right, but a backward keeps its graph"),
    ],
    ids=[
        "no-detach",
        "retain-graph",
        "no-zero-grad",
        "late-zero-grad",
        "ma-not-lib",
        "no-step",
        "zero-state",
        "ignores-state",
        "tensor-loss",
        "detached-loss",
        "detached-but-retained",
    ],
)
def test_train_chunk_explains_mistakes(one_line, wrong, words):
    assert not checks_07.check_train_chunk(wrong, CHARS)
    assert words in one_line("Exercise 7.2: ")


def test_train_chunk_explains_the_freed_graph_error():
    """The error itself, when it happens before the state is inspected, gets the same advice."""
    error = RuntimeError("Trying to backward through the graph a second time (or ...")
    assert "return the state detached" in checks_07._runtime_advice(1, error)
    inplace = RuntimeError(
        "one of the variables needed for gradient computation has been "
        "modified by an inplace operation"
    )
    assert "retain_graph=True" in checks_07._runtime_advice(1, inplace)


# --- 7.3 ----------------------------------------------------------------------------------------


def sample(
    lib,
    model,
    prefix,
    length,
    temperature=1.0,
    seed=0,
    carry=True,
    grad=False,
    first=-1,
    detach=True,
    shift=True,
    detach_state=False,
):
    rng = np.random.default_rng(seed)
    generated = []
    with lib.set_grad_enabled(grad):
        logits, state = model(one_hot(lib, encode(prefix)[:, None]))
        for _ in range(length):
            scores = logits[-1 if generated else first, 0]
            scores = (scores.detach() if detach else scores).numpy().astype(np.float64)
            if temperature == 0:
                next_id = int(np.argmax(scores))
            else:
                p = np.exp((scores - (scores.max() if shift else 0)) / temperature)
                next_id = int(rng.choice(V, p=p / p.sum()))
            generated.append(next_id)
            if detach_state:
                state = tuple(s.detach() for s in state)
            logits, state = model(one_hot(lib, np.array([[next_id]])), state if carry else None)
    return prefix + decode(generated)


def sample_with_graph(lib, model, prefix, length, temperature=1.0, seed=0):
    return sample(lib, model, prefix, length, temperature, seed, grad=True)


def sample_with_detached_graphs(lib, model, prefix, length, temperature=1.0, seed=0):
    return sample(lib, model, prefix, length, temperature, seed, grad=True, detach_state=True)


def sample_rereading_the_text(lib, model, prefix, length, temperature=1.0, seed=0):
    """The model run again on the whole text so far, from a zero state, for each character."""
    rng = np.random.default_rng(seed)
    text = prefix
    with lib.no_grad():
        for _ in range(length):
            logits, _ = model(one_hot(lib, encode(text)[:, None]))
            scores = logits[-1, 0].numpy().astype(np.float64)
            if temperature == 0:
                next_id = int(np.argmax(scores))
            else:
                p = np.exp((scores - scores.max()) / temperature)
                next_id = int(rng.choice(V, p=p / p.sum()))
            text += decode([next_id])
    return text


def sample_reading_a_graph(lib, model, prefix, length, temperature=1.0, seed=0):
    return sample(lib, model, prefix, length, temperature, seed, grad=True, detach=False)


def sample_no_carry(lib, model, prefix, length, temperature=1.0, seed=0):
    return sample(lib, model, prefix, length, temperature, seed, carry=False)


def sample_ignores_temperature(lib, model, prefix, length, temperature=1.0, seed=0):
    return sample(lib, model, prefix, length, 1.0 if temperature else 0, seed)


def sample_without_prefix(lib, model, prefix, length, temperature=1.0, seed=0):
    return sample(lib, model, prefix, length, temperature, seed)[len(prefix) :]


def sample_one_short(lib, model, prefix, length, temperature=1.0, seed=0):
    return sample(lib, model, prefix, length - 1, temperature, seed)


def sample_from_the_first_position(lib, model, prefix, length, temperature=1.0, seed=0):
    return sample(lib, model, prefix, length, temperature, seed, first=0)


def sample_without_the_shift(lib, model, prefix, length, temperature=1.0, seed=0):
    with np.errstate(all="ignore"):
        return sample(lib, model, prefix, length, temperature, seed, shift=False)


def test_sample_accepts_the_solution(one_line):
    solution = answer("07_capstone", "sample", one_hot=one_hot, encode=encode, decode=decode, V=V)
    assert checks_07.check_sample(solution, CHARS)
    assert "Exercise 7.3: correct ✓" in one_line()
    assert checks_07.check_sample(sample, CHARS)
    assert "Exercise 7.3: correct ✓" in one_line()


@pytest.mark.parametrize(
    "wrong, words",
    [
        (sample_with_graph, "every character's graph stays linked to the previous ones"),
        (sample_with_detached_graphs, "detaching the state keeps the graphs apart, but each call"),
        (sample_rereading_the_text, "the whole text so far for every new character"),
        (sample_reading_a_graph, "they are part of a graph"),
        (sample_no_carry, "pass the state from each call to the next"),
        (sample_ignores_temperature, "divide the scores by the temperature"),
        (sample_without_prefix, "does not start with the prefix"),
        (sample_one_short, "expected 12"),
        (sample_from_the_first_position, "the scores at the prefix's first position"),
        (sample_without_the_shift, "subtract the largest, then exp"),
    ],
    ids=[
        "records-graph",
        "records-detached-graphs",
        "rereads-the-text",
        "reads-a-graph",
        "no-carry",
        "no-temperature",
        "no-prefix",
        "too-short",
        "first-position",
        "overflow",
    ],
)
def test_sample_explains_mistakes(one_line, wrong, words):
    assert not checks_07.check_sample(wrong, CHARS)
    assert words in one_line("Exercise 7.3: ")


# --- 7.4 ----------------------------------------------------------------------------------------


def perplexity(lib, model, chunks, carry=True, grad=False, exponent=True):
    total, count, state = 0.0, 0, None
    with lib.set_grad_enabled(grad):
        for x, y in chunks:
            logits, state = model(one_hot(lib, x), state if carry else None)
            target = lib.tensor(y.reshape(-1))
            loss = lib.nn.functional.cross_entropy(logits.reshape(-1, V), target, reduction="sum")
            total += loss.item()
            count += y.size
    return math.exp(total / count) if exponent else total / count


def test_perplexity_accepts_the_solution(one_line):
    solution = answer("07_capstone", "perplexity", one_hot=one_hot, V=V)
    assert checks_07.check_perplexity(solution, CHARS)
    assert "Exercise 7.4: correct ✓" in one_line()
    assert checks_07.check_perplexity(perplexity, CHARS)
    assert "Exercise 7.4: correct ✓" in one_line()


def test_perplexity_notes_a_tensor(one_line):
    def as_tensor(lib, model, chunks):
        return lib.tensor(perplexity(lib, model, chunks))

    assert checks_07.check_perplexity(as_tensor, CHARS)
    out = one_line()
    assert "Exercise 7.4: correct ✓" in out and "note: you returned a tensor" in out, out


@pytest.mark.parametrize(
    "wrong, words",
    [
        (lambda lib, m, c: perplexity(lib, m, c, exponent=False), "its exponential"),
        (lambda lib, m, c: perplexity(lib, m, c, carry=False), "carry the state"),
        (lambda lib, m, c: perplexity(lib, m, c, grad=True), "with lib.no_grad()"),
        (lambda lib, m, c: 1 / 0, "ZeroDivisionError"),
        (lambda lib, m, c: "about 60", "return the perplexity as a number, not str"),
    ],
    ids=["mean-loss", "state-reset", "records-graph", "raises", "not-a-number"],
)
def test_perplexity_explains_mistakes(one_line, wrong, words):
    assert not checks_07.check_perplexity(wrong, CHARS)
    assert words in one_line("Exercise 7.4: ")


@pytest.mark.parametrize(
    "check, args, exercise",
    [
        (checks_07.check_chunks, (), "7.1"),
        (checks_07.check_train_chunk, (CHARS,), "7.2"),
        (checks_07.check_sample, (CHARS,), "7.3"),
        (checks_07.check_perplexity, (CHARS,), "7.4"),
    ],
)
def test_not_done(one_line, check, args, exercise):
    assert not check(not_done, *args)
    assert one_line().startswith(f"Exercise {exercise}: not done yet — ")


# --- the references agree with PyTorch ----------------------------------------------------------


def test_reference_sample_is_the_same_on_both_engines():
    ours, theirs = checks_07.twin_models(V, seed=1)
    import torch

    a = capstone.sample(ma, ours, "the ", 30, 0.8, 2, chars=CHARS)
    b = capstone.sample(torch, theirs, "the ", 30, 0.8, 2, chars=CHARS)
    assert a == b
