"""course.checks_06: each check accepts a right answer and explains plausible wrong ones."""

import numpy as np
import pytest
import torch

import mini_autograd as ma
from course import checks_06
from course.checks_06 import (
    check_clip_grad_norm,
    check_gru_step,
    check_regression_loop,
    check_tbptt,
)
from tests.exercise_answers import answer, not_done

# --- 6.1 ---------------------------------------------------------------------------------------

gru_step = answer("06_rnn_hidden_state", "gru_step")


def gru_variant(x, h, w_ih, w_hh, b_ih, b_hh, order="rzn", slip=None, outside=False, drop=""):
    """A GRU step with the gates read in `order`, and a learner's `slip` planted."""
    n = h.shape[-1]
    a = x @ w_ih.t() + (0 * b_ih if drop == "b_ih" else b_ih)
    b = h @ w_hh.t() + (0 * b_hh if drop == "b_hh" else b_hh)
    if outside:  # computed in numpy, outside the graph
        a = ma.tensor(a.detach().numpy())
    block_a = {name: a[:, k * n : (k + 1) * n] for k, name in enumerate(order)}
    block_b = {name: b[:, k * n : (k + 1) * n] for k, name in enumerate(order)}
    r = (block_a["r"] + block_b["r"]).sigmoid()
    z = (block_a["z"] + block_b["z"]).sigmoid()
    if slip == "reset outside the bias":
        b_n = b_hh[order.index("n") * n : (order.index("n") + 1) * n]
        candidate = (block_a["n"] + r * (block_b["n"] - b_n) + b_n).tanh()
    else:
        candidate = (block_a["n"] + r * block_b["n"]).tanh()
    if slip == "z swapped":
        return z * candidate + (1 - z) * h
    if slip == "old-style tuple":
        return candidate, h
    return (1 - z) * candidate + z * h


def test_gru_step_accepts_the_solution(one_line):
    assert check_gru_step(gru_step)
    assert one_line().startswith("Exercise 6.1: correct ✓")


def test_gru_step_accepts_the_library_step(one_line):
    from mini_autograd.nn.rnn import gru_step as library_step

    assert check_gru_step(library_step)
    assert "correct" in one_line()


def test_gru_step_stub_is_not_done_yet(one_line):
    assert not check_gru_step(not_done)
    assert one_line().startswith("Exercise 6.1: not done yet — ")


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"order": "zrn"}, "order z, r, n; PyTorch stacks"),
        ({"order": "rnz"}, "order r, n, z"),
        ({"slip": "reset outside the bias"}, "adds b_hn after it"),
        ({"slip": "z swapped"}, "z is the share of the OLD state that is kept"),
        ({"outside": True}, "no gradient reached `x`"),
        ({"drop": "b_hh"}, "without `b_hh`"),
        ({"drop": "b_ih"}, "without `b_ih`"),
        ({"slip": "old-style tuple"}, "must return h_next alone"),
    ],
    ids=[
        "z-r-swapped",
        "n-z-swapped",
        "paper-reset",
        "z-swapped",
        "outside-the-graph",
        "no-b_hh",
        "no-b_ih",
        "tuple",
    ],
)
def test_gru_step_explains_mistakes(one_line, kwargs, expected):
    assert not check_gru_step(lambda *args: gru_variant(*args, **kwargs))
    assert expected in one_line("Exercise 6.1: ")


def test_gru_step_wrong_type_and_exception(one_line):
    assert not check_gru_step(lambda *args: gru_variant(*args).detach().numpy())
    assert "not a mini_autograd tensor" in one_line()
    assert not check_gru_step(lambda x, h, *w: x @ w[1])
    assert "your code raised RuntimeError: mat1 and mat2 shapes" in one_line()


# --- 6.2 ---------------------------------------------------------------------------------------


RETAINING = ("retain", "autograd-backward-retain", "grad-retain")


def regression(lib, x_np, noise_np, start, n_epochs=5, variant="fixed"):
    model = lib.nn.Linear(1, 1)
    model.load_state_dict(start)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
    wants_grad = ("broken", "detach-target", "target-every-epoch", *RETAINING)
    x = lib.tensor(x_np, requires_grad=variant in wants_grad)
    y = 1 + 2 * x + 0.3 * lib.tensor(noise_np)
    x_train, y_train = x[:70], y[:70]
    if variant == "detach-target":
        y_train = y_train.detach()
    losses, total, log = [], 0, []
    for epoch in range(n_epochs):
        target = y_train
        if variant == "new-noise":
            target = (1 + 2 * x + 0.3 * lib.randn(100, 1))[:70]
        if variant == "target-every-epoch":  # no error, but the target has a graph again
            target = (1 + 2 * x + 0.3 * lib.tensor(noise_np))[:70]
        functional = ma.nn.functional if variant == "ma-not-lib" else lib.nn.functional
        loss = functional.mse_loss(model(x_train), target)
        optimizer.zero_grad()
        if variant == "step-first":  # the update before the gradients it needs
            optimizer.step()
        if variant == "autograd-backward-retain":
            lib.autograd.backward(loss, retain_graph=True)
        elif variant == "grad-retain":
            params = list(model.parameters())
            for p, g in zip(params, lib.autograd.grad(loss, params, retain_graph=True)):
                p.grad = g
        else:
            loss.backward(retain_graph=variant == "retain")
        if variant == "late-zero-grad":
            optimizer.zero_grad()
        if variant != "step-first":
            optimizer.step()
        losses.append(loss.detach() if variant == "tensor-losses" else loss.item())
        if variant == "tensor-total":
            total = total + loss  # a running total as a tensor: it holds every epoch's graph
        if variant == "logged-pairs":
            log.append((epoch, loss))  # each pair holds its epoch's graph
    return None if variant == "no-return" else losses


def test_regression_accepts_the_solution(one_line):
    assert check_regression_loop(answer("06_rnn_hidden_state", "train_regression"))
    assert one_line().startswith("Exercise 6.2: correct ✓")


@pytest.mark.parametrize("variant", ["fixed", "detach-target"])
def test_regression_accepts_right_fixes(one_line, variant):
    fn = lambda *args: regression(*args, variant=variant)  # noqa: E731
    assert check_regression_loop(fn)
    assert one_line().startswith("Exercise 6.2: correct ✓")


@pytest.mark.parametrize(
    ("variant", "expected"),
    [
        ("broken", "backward still goes through the freed graph"),
        ("retain", "retain_graph=True"),
        ("autograd-backward-retain", "retain_graph=True"),
        ("grad-retain", "retain_graph=True"),
        ("new-noise", "the loss of epoch 0 is"),
        ("no-return", "returned None"),
        ("ma-not-lib", "write `lib.` everywhere"),
        ("tensor-total", "`total` holds the graph of every earlier step"),
        ("logged-pairs", "`log` holds the graph of every earlier step"),
        ("target-every-epoch", "the target still carries a graph"),
        ("late-zero-grad", "zero_grad() runs between loss.backward() and optimizer.step()"),
        ("step-first", "optimizer.step() runs before loss.backward()"),
    ],
)
def test_regression_explains_mistakes(one_line, variant, expected):
    fn = lambda *args: regression(*args, variant=variant)  # noqa: E731
    assert not check_regression_loop(fn)
    assert expected in one_line("Exercise 6.2: ")


def test_regression_notes_tensor_losses(one_line):
    fn = lambda *args: regression(*args, variant="tensor-losses")  # noqa: E731
    assert check_regression_loop(fn)
    assert "note: you returned a tensor" in one_line("Exercise 6.2: correct ✓")


def test_regression_stub_is_not_done_yet(one_line):
    assert not check_regression_loop(not_done)
    assert one_line().startswith("Exercise 6.2: not done yet — ")


# --- 6.3 ---------------------------------------------------------------------------------------


DETACHING = (
    "right",
    "flat-target",
    "kept-states",
    "detached-prediction",
    "backward-twice",
    "by-hand-no-reset",
    "off-by-one",
    "no-step",
    "no-zero-grad",
    "late-zero-grad",
    "tensor-losses",
    "tensor-total",
    "detach-retain",
    "one-too-many",
)


def tbptt(lib, model, series, window, lr=0.1, variant="right"):
    optimizer = lib.optim.SGD(model.parameters(), lr=lr)
    state, losses, total, kept = None, [], 0, []
    ends = len(series) if variant == "one-too-many" else len(series) - 1
    for k in range(ends // window):
        shift = 1 if variant == "off-by-one" else 0
        seq = lib.tensor(series[k * window + shift : (k + 1) * window + shift])
        target = lib.tensor(series[k * window + 1 : (k + 1) * window + 1])
        target = target if variant == "flat-target" else target.view(window, 1)
        if state is not None:
            if variant in DETACHING:
                state = tuple(s.detach() for s in state)
            elif variant == "data":
                state = tuple(s.data for s in state)
            elif variant == "h-only":
                state = (state[0].detach(), state[1])
            elif variant == "unassigned":
                for s in state:
                    s.detach()
            elif variant == "reinit":
                state = None
        prediction, state = model(seq, state)
        if variant == "kept-states":
            kept.append(state)  # each (h, c) pair holds its chunk's graph
        if variant == "detached-prediction":
            prediction = prediction.detach().requires_grad_()
        loss = lib.nn.functional.mse_loss(prediction, target)
        if variant not in ("no-zero-grad", "late-zero-grad", "by-hand-no-reset"):
            optimizer.zero_grad()
        loss.backward(retain_graph=variant in ("retain", "detach-retain", "backward-twice"))
        if variant == "backward-twice":
            loss.backward()
        if variant == "late-zero-grad":
            optimizer.zero_grad()
        if variant == "by-hand-no-reset":
            with lib.no_grad():
                for p in model.parameters():
                    p -= lr * p.grad
        elif variant != "no-step":
            optimizer.step()
        losses.append(loss if variant == "tensor-losses" else loss.item())
        if variant == "tensor-total":
            total = total + loss  # a running total as a tensor: it holds every chunk's graph
    return losses


def test_tbptt_accepts_the_solution(one_line):
    assert check_tbptt(answer("06_rnn_hidden_state", "train_tbptt"))
    assert one_line().startswith("Exercise 6.3: correct ✓")


@pytest.mark.parametrize(
    ("variant", "expected"),
    [
        ("carried", "reaches into the first chunk's freed graph"),
        ("unassigned", "assign the detached tensors back"),
        ("h-only", "every tensor of it (an LSTM's state is two, h and c)"),
        ("retain", "retain_graph=True plus optimizer.step()"),
        ("reinit", "you start every chunk from zeros"),
        ("no-step", "call optimizer.step()"),
        ("off-by-one", "Chunk k reads series[k*window:(k+1)*window]"),
        ("no-zero-grad", "optimizer.zero_grad()"),
        ("late-zero-grad", "zero_grad() runs between loss.backward() and optimizer.step()"),
        ("detach-retain", "the losses are right, but a backward keeps its graph"),
        ("tensor-total", "`total` holds the graph of every earlier step"),
        ("tensor-losses", "`losses` holds the graph of every earlier step"),
        ("kept-states", "`kept` holds the graph of every earlier step"),
        ("flat-target", "mse_loss broadcasts a target shaped unlike the predictions"),
        ("detached-prediction", "no backward reaches the model's parameters"),
        ("backward-twice", "loss.backward() runs twice before one optimizer.step()"),
        ("by-hand-no-reset", "nothing resets .grad between chunks"),
    ],
)
def test_tbptt_explains_mistakes(one_line, variant, expected):
    fn = lambda *args: tbptt(*args, variant=variant)  # noqa: E731
    assert not check_tbptt(fn)
    assert expected in one_line("Exercise 6.3: window 5: ")


@pytest.mark.parametrize(
    ("variant", "note"),
    [("data", "reads `.data`")],
)
def test_tbptt_notes_silent_slips(one_line, variant, note):
    fn = lambda *args: tbptt(*args, variant=variant)  # noqa: E731
    assert check_tbptt(fn)
    assert note in one_line("Exercise 6.3: correct ✓")


def test_tbptt_stub_is_not_done_yet(one_line):
    assert not check_tbptt(not_done)
    assert one_line().startswith("Exercise 6.3: not done yet — ")


def test_tbptt_on_a_series_the_window_divides():
    """With 40 values and window 8, (40 - 1) // 8 = 4 chunks fit: a fifth has no target for its
    last value, in PyTorch as in mini_autograd."""
    series = checks_06.make_series(40)
    assert len(checks_06.reference_tbptt(torch, checks_06.make_regressor(torch), series, 8)) == 4
    with pytest.raises(RuntimeError):
        torch.tensor(series[33:41]).view(8, 1)


def test_tbptt_names_one_chunk_too_many(one_line):
    assert not check_tbptt(lambda *args: tbptt(*args, variant="one-too-many"))
    line = one_line()
    assert line.startswith("Exercise 6.3: window 8 on a series of 40 values: "), line
    assert "trained the 4 chunks the series holds, then started another" in line, line
    assert "needs one value after its inputs" in line, line


# --- 6.4 ---------------------------------------------------------------------------------------


def clip(parameters, max_norm, variant="right"):
    grads = [p.grad for p in parameters if p.grad is not None]
    norms = [float(np.sqrt((g.numpy().astype(np.float64) ** 2).sum())) for g in grads]
    total = float(np.sqrt(sum(n**2 for n in norms)))
    factor = max_norm / (total + 1e-6)
    if variant == "each":
        for g, n in zip(grads, norms):
            if n > max_norm:
                g.mul_(max_norm / (n + 1e-6))
        return total
    if factor < 1 or variant == "always" or (variant == "below-two" and factor < 2):
        if variant == "replace":
            for p in parameters:
                if p.grad is not None:
                    p.grad = p.grad * factor
        elif variant == "copies":
            for g in grads:
                g.clone().mul_(factor)  # a copy is scaled, .grad is not
        else:
            for g in grads:
                g.mul_(factor)
    if variant == "after":
        return min(total, max_norm)
    return total


def test_clip_accepts_the_solution_and_the_library(one_line):
    assert check_clip_grad_norm(answer("06_rnn_hidden_state", "clip_grad_norm"))
    assert one_line().startswith("Exercise 6.4: correct ✓")
    assert check_clip_grad_norm(clip)
    assert one_line().startswith("Exercise 6.4: correct ✓")
    assert check_clip_grad_norm(ma.nn.utils.clip_grad_norm_)
    assert "correct" in one_line()


@pytest.mark.parametrize(
    ("variant", "expected"),
    [
        ("each", "each gradient was clipped on its own"),
        ("always", "must stay unchanged"),
        ("below-two", "scaled by 1.38: clipping only ever shrinks gradients"),
        ("after", "norm after clipping"),
        ("replace", "in place"),
        ("copies", "the gradients are unchanged: your scaling never reached p.grad"),
    ],
)
def test_clip_explains_mistakes(one_line, variant, expected):
    fn = lambda ps, m: clip(list(ps), m, variant=variant)  # noqa: E731
    assert not check_clip_grad_norm(fn)
    assert expected in one_line("Exercise 6.4: ")


def test_torch_leaves_gradients_just_below_max_norm_alone():
    """The case behind "below-two": a joint norm of 0.73 with max_norm=1, where the factor
    max_norm / (total + 1e-6) is 1.38; torch leaves the gradients as they are."""
    _, theirs = checks_06._twin_grads(0, 0.15)
    before = [q.grad.clone() for q in theirs if q.grad is not None]
    total = float(torch.nn.utils.clip_grad_norm_(theirs, 1.0))
    assert 0.5 < total < 1.0
    assert all(torch.equal(a, q.grad) for a, q in zip(before, theirs))


def clip_iterating_twice(parameters, max_norm):
    """Right on a list; on a generator the second loop finds nothing left to scale."""
    grads = [p.grad.numpy().astype(np.float64) for p in parameters if p.grad is not None]
    total = float(np.sqrt(sum((g**2).sum() for g in grads)))
    factor = max_norm / (total + 1e-6)
    if factor < 1:
        for p in parameters:
            if p.grad is not None:
                p.grad.mul_(factor)
    return total


def clip_without_skipping_none(parameters, max_norm):
    parameters = list(parameters)
    total = float(np.sqrt(sum((p.grad.numpy().astype(np.float64) ** 2).sum() for p in parameters)))
    factor = max_norm / (total + 1e-6)
    if factor < 1:
        for p in parameters:
            p.grad.mul_(factor)
    return total


@pytest.mark.parametrize(
    ("fn", "expected"),
    [
        (clip_iterating_twice, "generator"),
        (clip_without_skipping_none, "whose .grad is None"),
    ],
    ids=["twice", "none-grad"],
)
def test_clip_explains_iteration_mistakes(one_line, fn, expected):
    assert not check_clip_grad_norm(fn)
    assert expected in one_line("Exercise 6.4: ")


def test_clip_stub_is_not_done_yet(one_line):
    assert not check_clip_grad_norm(not_done)
    assert one_line().startswith("Exercise 6.4: not done yet — ")


def test_the_retain_spy_reads_torch_autograd_grad_arguments_by_name():
    """grad's third positional argument is grad_outputs, not retain_graph (backward's is)."""
    import torch

    from course.check import Spy

    x = torch.ones(2, requires_grad=True)
    with Spy() as spy:
        torch.autograd.grad((x * x).sum(), x, torch.tensor(1.0))
    assert not spy.retained
    with Spy() as spy:
        torch.autograd.grad((x * x).sum(), x, None, True)
    assert spy.retained
