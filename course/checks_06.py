"""Checks for the exercises of chapter 06, RNN hidden-state pitfalls, against PyTorch run from
the same weights (the clipping function runs inside the library, as ma.nn.utils.clip_grad_norm_,
in a training loop; the GRU step is unrolled over a sequence).

    check_gru_step(gru_step)                # 6.1: a GRU cell's forward
    check_regression_loop(train_regression) # 6.2: the seed's broken regression loop, fixed
    check_tbptt(train_tbptt)                # 6.3: truncated backpropagation through time
    check_clip_grad_norm(clip_grad_norm)    # 6.4: gradient clipping by the joint norm
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import warnings
from unittest import mock

import numpy as np
import torch

import mini_autograd as ma
import mini_autograd.nn.utils as ma_utils
from course import seeds
from course.check import (
    Feedback,
    Spy,
    as_array,
    call,
    checker,
    compare,
    data_note,
    describe_error,
    difference,
    first_difference,
    freed_graph,
    in_place_error,
    kept_graphs,
    losses_of,
    named_mistake,
    no_weight_reached,
    number,
    retained_for_nothing,
    tensor_note,
    zero_grad_problem,
)
from mini_autograd.instruments.graph_walk import graph_nodes

GATES = "rzn"
ATOL, RTOL = 1e-5, 1e-4
_differs = functools.partial(difference, atol=ATOL, rtol=RTOL)


# --- 6.1: a GRU cell's forward -------------------------------------------------------------------

REGRESSION_TODO = (
    "copy the broken loop and change what makes y_train carry a graph from one epoch to the next"
)
TBPTT_TODO = (
    "loop over the chunks; detach the carried state, forward, loss, zero_grad, backward, step"
)
CLIP_TODO = "total = sqrt of the sum of every gradient's squared entries; if it exceeds max_norm, multiply every gradient in place by max_norm / (total + 1e-6); return total"
GRU_TODO = "one GRU step: the reset and update gates, the candidate n, and h' from n and h"
GRU_HINT = "three blocks of rows in each weight, r, z, n in that order; r and z are sigmoids of the two projections added; n is a tanh of the input's projection plus r times the hidden state's projection, its bias included; h' mixes n and h by z, with z weighing the old state"


def _numpy_gru(x, h, w_ih, w_hh, b_ih, b_hh, order=GATES, mistake=None):
    """Reference forward in numpy; `order` says which block of rows holds which gate, and
    `mistake` plants a known slip: the reset gate outside b_hn, or z and 1 - z swapped."""
    n = h.shape[-1]
    gi, gh = x @ w_ih.T + b_ih, h @ w_hh.T + b_hh
    block_i = {name: gi[:, k * n : (k + 1) * n] for k, name in enumerate(order)}
    block_h = {name: gh[:, k * n : (k + 1) * n] for k, name in enumerate(order)}
    sigmoid = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    r = sigmoid(block_i["r"] + block_h["r"])
    z = sigmoid(block_i["z"] + block_h["z"])
    if mistake == "reset outside the bias":
        b_hn = b_hh[order.index("n") * n : (order.index("n") + 1) * n]
        cand = np.tanh(block_i["n"] + r * (block_h["n"] - b_hn) + b_hn)
    else:
        cand = np.tanh(block_i["n"] + r * block_h["n"])
    if mistake == "z swapped":
        return z * cand + (1 - z) * h
    return (1 - z) * cand + z * h


GRU_MISTAKES = {  # a planted slip of _numpy_gru: what to say when the learner's step makes it
    "reset outside the bias": "your step multiplies the reset gate into the hidden state's projection but adds b_hn after it: PyTorch applies r to the whole projection, bias included (this is where its GRU differs from the original paper's)",
    "z swapped": "your step weighs n by z and the old state by 1 - z: in PyTorch, z is the share of the OLD state that is kept, h' = (1 - z) * n + z * h",
}


def _single(result):
    """The learner's h_next as a mini_autograd tensor, or Feedback."""
    if isinstance(result, (tuple, list)):
        raise Feedback(
            f"gru_step must return h_next alone (a GRU has no cell state); it returned a {type(result).__name__}"
        )
    if not isinstance(result, ma.Tensor):
        raise Feedback(
            f"h_next is a {type(result).__name__}, not a mini_autograd tensor: build it from tensor operations so that backward can go through it"
        )
    return result


def _forward_problem(h_got, arrays):
    """Explain a wrong forward result: a gate order, a known slip, a missing bias, or the
    difference."""
    x, h, *weights = [a.astype(np.float64) for a in arrays]
    h_ref = _numpy_gru(x, h, *weights)
    if _differs(h_got, h_ref) is None:
        return None
    w_ih, w_hh, b_ih, b_hh = weights
    orders = ["".join(p) for p in itertools.permutations(GATES)][1:]  # all but r, z, n
    mistakes = [  # (words, (weights, settings) of _numpy_gru that make the mistake)
        (
            f"your gates are taken in the order {', '.join(order)}; PyTorch stacks the rows of w_ih and w_hh as r, z, n (reset, update, new)",
            (weights, {"order": order}),
        )
        for order in orders
    ]
    mistakes += [(words, (weights, {"mistake": m})) for m, words in GRU_MISTAKES.items()]
    without = "your step gives what torch.nn.GRUCell gives without `{}`: both projections carry their own bias, b_ih and b_hh"
    mistakes += [
        (without.format("b_hh"), ((w_ih, w_hh, b_ih, 0 * b_hh), {})),
        (without.format("b_ih"), ((w_ih, w_hh, 0 * b_ih, b_hh), {})),
    ]
    same = lambda case: _differs(h_got, _numpy_gru(x, h, *case[0], **case[1])) is None  # noqa: E731
    mistake = named_mistake(same, mistakes)
    return mistake or f"h_next differs from torch.nn.GRUCell: {_differs(h_got, h_ref)}"


@checker("6.1", GRU_TODO, GRU_HINT)
def check_gru_step(gru_step):
    """6.1: gru_step(x, h, w_ih, w_hh, b_ih, b_hh) against torch.nn.GRUCell and nn.GRU."""
    rng, shapes = np.random.default_rng(0), [(3, 2), (3, 4), (12, 2), (12, 4), (12,), (12,)]
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]  # x, h, weights
    names = ("x", "h", "w_ih", "w_hh", "b_ih", "b_hh")
    ours = [ma.tensor(a, requires_grad=True) for a in arrays]
    h_next = _single(call(gru_step, *ours))
    problem = _forward_problem(as_array(h_next), arrays)
    if problem:
        raise Feedback(problem)

    # PyTorch's cell with the same weights; a loss that weighs every output differently.
    cell = torch.nn.GRUCell(arrays[0].shape[1], arrays[1].shape[1])
    with torch.no_grad():
        for p, a in zip((cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh), arrays[2:]):
            p.copy_(torch.from_numpy(a))
    tx, th = (torch.tensor(a, requires_grad=True) for a in arrays[:2])
    weigh = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    (cell(tx, th) * torch.from_numpy(weigh)).sum().backward()
    mine = (h_next * ma.tensor(weigh)).sum()
    call(mine.backward, explain=lambda e: f"backward through your step failed: {describe_error(e)}")
    expected = [tx.grad, th.grad, cell.weight_ih.grad, cell.weight_hh.grad]
    expected += [cell.bias_ih.grad, cell.bias_hh.grad]
    for label, mine, theirs in zip(names, ours, expected):
        if mine.grad is None:
            raise Feedback(
                f"the forward values are right, but no gradient reached `{label}`: part of your step was computed outside the graph (numpy, .data or detach())"
            )
        what = f"the forward values are right, but the gradient of `{label}` differs from PyTorch's"
        compare(mine.grad, theirs, what, ATOL, RTOL, hint=False)

    # Unrolled over a sequence, the step must give what a whole GRU layer gives.
    torch.manual_seed(0)
    t_gru = torch.nn.GRU(2, 4)
    weights = [ma.tensor(p.detach().numpy(), requires_grad=True) for p in t_gru.parameters()]
    seq = np.random.default_rng(2).standard_normal((5, 3, 2)).astype(np.float32)
    t_out, _ = t_gru(torch.from_numpy(seq))
    h, outputs = ma.zeros(3, 4), []
    for x_t in ma.tensor(seq):
        h = _single(call(gru_step, x_t, h, *weights))
        outputs.append(h)
    m_out = ma.stack(outputs)
    t_out.sum().backward()
    m_out.sum().backward()
    problem = _differs(m_out, t_out) or _differs(weights[1].grad, t_gru.weight_hh_l0.grad)
    if problem:
        raise Feedback(
            f"one step is right, but your step unrolled over a 5-step sequence differs from torch.nn.GRU: {problem}"
        )
    return "matches torch.nn.GRUCell (values and all 6 gradients) and, unrolled over 5 steps, torch.nn.GRU."


# --- 6.2: the regression loop -------------------------------------------------------------------


def regression_data(seed=0):
    """(x_np, noise_np, start): the seed's 100 points and a Linear(1, 1)'s initial state_dict."""
    rng = np.random.default_rng(seed)
    x_np = rng.standard_normal((100, 1)).astype(np.float32)
    noise_np = rng.standard_normal((100, 1)).astype(np.float32)
    torch.manual_seed(seed)
    start = {k: v.clone() for k, v in torch.nn.Linear(1, 1).state_dict().items()}
    return x_np, noise_np, start


def reference_regression(lib, x_np, noise_np, start, n_epochs=5, lr=0.1):
    """The seed's loop done right: the input does not require grad. Returns the losses."""
    model = lib.nn.Linear(1, 1)
    model.load_state_dict(start)
    x = lib.tensor(x_np)
    y = 1 + 2 * x + 0.3 * lib.tensor(noise_np)
    return seeds.fit_line(lib, model, x[:70], y[:70], n_epochs, lr)


def _regression_error(name, error):
    if freed_graph(error):
        return f"with {name}, backward still goes through the freed graph: the target y is computed from x, which requires grad, so y_train links every epoch to the first one"
    return f"with {name} your code raised {describe_error(error)}"


@contextlib.contextmanager
def _warnings_seen():
    """The warnings raised inside the block, every one of them (a list)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


def _target_shape_mistake(caught) -> str | None:
    """Words for a loss whose target is shaped unlike the predictions (both libraries warn)."""
    for warning in caught:
        text = str(warning.message)
        if text.startswith("Using a target size"):
            return f"the loss warned '{text.split('. This')[0]}': mse_loss broadcasts a target shaped unlike the predictions, so it compares every prediction with every target. Give the target the predictions' shape (a column of n rows, (n, 1))"
    return None


def _target_in_graph(roots, found):
    """Note in `found` a mean squared error whose target is part of the graph (it requires grad)."""
    for node in graph_nodes(list(roots)):
        if node.name() == "MseLossBackward0" and node.next_functions[1][0] is not None:
            found.append(node)


@checker("6.2", REGRESSION_TODO)
def check_regression_loop(train_regression, n_epochs=5):
    """6.2: the fixed loop trains every epoch, on both engines, without retain_graph=True."""
    x_np, noise_np, start = regression_data()
    expected = reference_regression(torch, x_np, noise_np, start, n_epochs)
    note = ""
    for lib in (ma, torch):
        name, targets_in_graph = lib.__name__, []
        on_backward = functools.partial(_target_in_graph, found=targets_in_graph)
        with Spy(on_backward, watch_graphs=True) as spy, _warnings_seen() as caught:
            args = (lib, x_np.copy(), noise_np.copy(), start, n_epochs)
            result = call(
                train_regression, *args, explain=functools.partial(_regression_error, name)
            )
        losses = losses_of(result, n_epochs, per="epoch")
        note = note or tensor_note(result)
        if spy.retained:
            raise Feedback(
                f"with {name} it runs, but a backward pass keeps its graph (retain_graph=True, in loss.backward(), autograd.backward() or autograd.grad(), or create_graph=True), which a loop of independent epochs never needs: remove it. If the target is still computed from an x that requires grad, every epoch back-propagates into the graph of y, recorded once before the loop: make the target a plain tensor (the input needs no gradient)"
            )
        problem = first_difference(losses, expected, "epoch", ATOL, RTOL)
        mistake = problem and (_target_shape_mistake(caught) or zero_grad_problem(spy.events))
        if mistake:
            raise Feedback(f"with {name}, {problem}: {mistake}")
        if problem:
            raise Feedback(
                f"with {name}, {problem}: keep the seed's data (y = 1 + 2 * x + 0.3 * noise from x_np and noise_np), model, lr and order of steps"
            )
        kept = kept_graphs(spy.graph_sizes)
        if kept:
            raise Feedback(f"with {name} it trains, but {kept}")
        if targets_in_graph:
            raise Feedback(
                f"with {name} it trains, but the target still carries a graph: it is computed from x, which requires grad, so every loss's graph reaches into it (rebuilding it each epoch, or leaving it out with inputs= or autograd.grad, only hides the error). The target needs no gradient: build it from tensors that do not require grad (or under lib.no_grad())"
            )
    return f"trains all {n_epochs} epochs on both engines, with the reference losses.{note}"


# --- 6.3: truncated backpropagation through time -----------------------------------------------


def make_regressor(lib, hidden_size=4, seed=0):
    """An LSTM that predicts the next value of a series, with weights made by torch's seed.

    model(seq, state) -> (predictions of shape (T, 1), (h, c)); seq is 1-D of length T; state
    None means zeros. The same seed gives the same weights for both libraries.
    """

    class Regressor(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = lib.nn.LSTM(1, hidden_size)
            self.head = lib.nn.Linear(hidden_size, 1)

        def forward(self, seq, state=None):
            out, state = self.lstm(seq.view(len(seq), 1, 1), state)
            return self.head(out.view(len(seq), -1)), state

    torch.manual_seed(seed)
    model = Regressor()
    if lib is not torch:
        model.load_state_dict(make_regressor(torch, hidden_size, seed).state_dict())
    return model


def make_series(length=41, seed=0):
    """A noisy sine wave, float32."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 4 * np.pi, length)
    return (np.sin(t) + 0.1 * rng.standard_normal(length)).astype(np.float32)


def reference_tbptt(lib, model, series, window, lr=0.1, carry="detach", step=True, clip=None):
    """Truncated BPTT done right (carry='detach'), or two wrong variants for diagnosis; `clip`
    (of the parameters) runs between backward and step."""
    optimizer = lib.optim.SGD(model.parameters(), lr=lr)
    state, losses = None, []
    for k in range((len(series) - 1) // window):
        start = k * window
        seq = lib.tensor(series[start : start + window])
        target = lib.tensor(series[start + 1 : start + window + 1]).view(window, 1)
        if carry == "detach" and state is not None:
            state = tuple(s.detach() for s in state)
        elif carry == "reinit":
            state = None
        prediction, state = model(seq, state)
        loss = lib.nn.functional.mse_loss(prediction, target)
        optimizer.zero_grad()
        loss.backward()
        if clip:
            clip(model.parameters())
        if step:
            optimizer.step()
        losses.append(loss.item())
    return losses


def _tbptt_error(where, error):
    if freed_graph(error):
        return f"{where}: the second chunk's backward reaches into the first chunk's freed graph: carry the state over detached, every tensor of it (an LSTM's state is two, h and c), and assign the detached tensors back to the name the next chunk reads: detach() returns a new tensor and leaves the old one, graph and all, as it was"
    if in_place_error(error):
        return f"{where}: the in-place error of retain_graph=True plus optimizer.step(): do not retain the old graph, detach the state instead"
    return f"{where}: your code raised {describe_error(error)}"


TBPTT_VARIANTS = {  # (carry, step) of reference_tbptt: what its losses mean
    (
        "reinit",
        True,
    ): "you start every chunk from zeros; TBPTT carries the state's values over (detached) from one chunk to the next",
    (
        "detach",
        False,
    ): "the losses are those of a model that never learns: call optimizer.step() after each backward",
}


STALE_GRADIENTS = "every backward after the first adds into .grad, which still holds the gradients of the chunks before: nothing resets .grad between chunks (optimizer.zero_grad() before backward, or p.grad = None in a hand-written update)"


def _tbptt_case(train_tbptt, series, window, where):
    """Feedback unless the learner's losses on `series` in chunks of `window` are PyTorch's;
    else the notes on the result."""
    expected = reference_tbptt(torch, make_regressor(torch), series, window)
    chunks = (len(series) - 1) // window

    def explain(error):
        if order.events.count("backward") == chunks:  # all the chunks trained, then one more
            return f"{where}: your loop trained the {chunks} chunks the series holds, then started another and raised {type(error).__name__}: each chunk's targets are its inputs shifted by one, so the last chunk needs one value after its inputs; with {len(series)} values there are (len(series) - 1) // window = {chunks} chunks."
        return _tbptt_error(where, error)

    model, stale = make_regressor(ma), []  # stale: at each backward, gradients still in .grad

    def before_backward(roots):
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        stale.append(any(np.any(as_array(g)) for g in grads))

    with Spy(before_backward, watch_graphs=True) as order, _warnings_seen() as caught:
        result = call(train_tbptt, ma, model, series.copy(), window, explain=explain)
    losses = losses_of(result, chunks, per="chunk")
    problem = first_difference(losses, expected, "chunk", ATOL, RTOL)
    if problem is None and order.retained:
        raise Feedback(
            f"{where}: "
            + retained_for_nothing("each chunk starts from a detached state", "this chunk's")
        )
    kept = kept_graphs(order.graph_sizes)
    if problem is None and kept:
        raise Feedback(f"{where}: it trains, but {kept}")
    if problem is None:
        return tensor_note(result) + data_note(order.data_reads)
    mistake = (
        _target_shape_mistake(caught)
        or zero_grad_problem(order.events)
        or no_weight_reached(order)
        or (any(stale) and STALE_GRADIENTS)
    )
    if mistake:
        raise Feedback(f"{where}: {problem}: {mistake}")
    variants = (
        (advice, reference_tbptt(torch, make_regressor(torch), series, window, 0.1, carry, step))
        for (carry, step), advice in TBPTT_VARIANTS.items()
    )
    same = lambda other: first_difference(losses, other, "chunk", ATOL, RTOL) is None  # noqa: E731
    advice = named_mistake(same, variants) or (
        f"{problem}. Chunk k reads series[k*window:(k+1)*window] and predicts series[k*window+1:(k+1)*window+1]"
    )
    raise Feedback(f"{where}: {advice}")


@checker("6.3", TBPTT_TODO)
def check_tbptt(train_tbptt, windows=(5, 8)):
    """6.3: losses per chunk as PyTorch computes them, for each window; then on a series whose
    length the window divides, where one chunk fewer than length // window fits."""
    series, notes = make_series(), ""
    for window in windows:
        note = _tbptt_case(train_tbptt, series, window, f"window {window}")
        notes = notes or note
    _tbptt_case(train_tbptt, make_series(40), 8, "window 8 on a series of 40 values")
    return (
        f"the losses of every chunk match PyTorch's for windows {', '.join(map(str, windows))}."
        + notes
    )


# --- 6.4: gradient clipping ---------------------------------------------------------------------


def _twin_grads(seed, scale):
    """Four parameters per library, ma and torch, with the same gradients (scaled); the last one
    has no gradient (.grad is None), like a parameter that took no part in the loss."""
    rng = np.random.default_rng(seed)
    shapes = [(4, 3), (4,), (2, 4)]
    values = [rng.standard_normal(s).astype(np.float32) for s in shapes + [(3,)]]
    grads = [scale * rng.standard_normal(s).astype(np.float32) for s in shapes]
    ours = [ma.tensor(v, requires_grad=True) for v in values]
    theirs = [torch.tensor(v, requires_grad=True) for v in values]
    for p, q, g in zip(ours, theirs, grads):
        p.grad = ma.tensor(g.copy())
        q.grad = torch.tensor(g.copy())
    return ours, theirs


def _explain_clip(error):
    """The learner's error in words; a stumble on a None gradient is explained."""
    words = f"your code raised {describe_error(error)}"
    if "NoneType" not in words:
        return words
    return f"{words}: a parameter whose .grad is None (it took no part in the loss) must be skipped, as clip_grad_norm_ does (if p.grad is not None)"


def _clips_a_list(clip_grad_norm, scale, max_norm):
    """Whether the learner's clip gives torch's gradients when handed a list, not a generator."""
    ours, theirs = _twin_grads(0, scale)
    try:
        clip_grad_norm(list(ours), max_norm)
    except Exception:  # noqa: BLE001 (only a diagnosis: any failure means "no")
        return False
    torch.nn.utils.clip_grad_norm_(theirs, max_norm)
    return all(_differs(p.grad, q.grad) is None for p, q in zip(ours, theirs))


def _clip_case(clip_grad_norm, scale, max_norm):
    ours, theirs = _twin_grads(0, scale)
    grad_objects = [p.grad for p in ours]
    before = [None if g is None else as_array(g).copy() for g in grad_objects]
    norm_before = np.sqrt(sum((g**2).sum() for g in before if g is not None))
    generator = (p for p in ours)  # as in use
    returned = call(clip_grad_norm, generator, max_norm, explain=_explain_clip)
    expected = float(torch.nn.utils.clip_grad_norm_(theirs, max_norm))
    if returned is None:
        raise Feedback("return the total norm of the gradients (before clipping)")
    returned = number(returned, "the total norm")
    for p, q in zip(ours, theirs):
        if _differs(p.grad, q.grad) is None:
            continue
        if q.grad is None:
            raise Feedback(
                "a parameter whose .grad was None now has a gradient: skip the parameters without one (if p.grad is not None) and leave them as they are"
            )
        if _clips_a_list(clip_grad_norm, scale, max_norm):
            raise Feedback(
                "given a generator (model.parameters() is one), your function changes nothing, though it works on a list: it goes through `parameters` twice, and a generator is empty the second time. Make it a list before the first pass"
            )
        got = [float(np.linalg.norm(as_array(p.grad))) for p in ours if p.grad is not None]
        if max_norm >= expected:
            scaled = float(np.sqrt(sum(g**2 for g in got))) / expected
            grown = f" (scaled by {scaled:.3g}: clipping only ever shrinks gradients, so a factor of 1 or more is never applied)"
            raise Feedback(
                f"the gradients' joint norm {expected:.4g} is already below max_norm={max_norm}, so they must stay unchanged; yours were changed"
                + (grown if scaled > 1 + 1e-3 else "")
            )
        if all(
            (b is None) == (p.grad is None) and (b is None or np.array_equal(b, as_array(p.grad)))
            for b, p in zip(before, ours)
        ):
            raise Feedback(
                "the gradients are unchanged: your scaling never reached p.grad. Multiply each gradient itself in place (scaling a copy, such as p.grad.clone(), or the weights leaves .grad as it was)"
            )
        if all(np.isclose(g, max_norm, rtol=1e-3) for g in got):
            raise Feedback(
                "each gradient was clipped on its own; clip_grad_norm_ computes ONE norm over all gradients together and scales them all by the same factor"
            )
        problem = _differs(p.grad, q.grad)
        raise Feedback(
            f"the clipped gradients differ from torch.nn.utils.clip_grad_norm_'s: {problem}. Scale every gradient by max_norm / (total_norm + 1e-6) when that is below 1"
        )
    if not np.isclose(returned, expected, rtol=1e-5):
        after = np.sqrt(sum((as_array(p.grad) ** 2).sum() for p in ours if p.grad is not None))
        if np.isclose(returned, after, rtol=1e-5) and not np.isclose(after, norm_before):
            raise Feedback("you returned the norm after clipping; return the norm before it")
        raise Feedback(f"the returned norm is {returned:.6g}, expected {expected:.6g}")
    if any(p.grad is not g for p, g in zip(ours, grad_objects)):
        raise Feedback(
            "the values are right, but you replaced .grad with new tensors: clip_grad_norm_ scales the existing gradients in place (p.grad.mul_(factor))"
        )


@checker("6.4", CLIP_TODO)
def check_clip_grad_norm(clip_grad_norm):
    """6.4: clip_grad_norm(parameters, max_norm) against torch.nn.utils.clip_grad_norm_."""
    _clip_case(clip_grad_norm, scale=3.0, max_norm=1.0)  # clipped
    _clip_case(clip_grad_norm, scale=0.01, max_norm=1.0)  # left alone
    _clip_case(clip_grad_norm, scale=0.15, max_norm=1.0)  # left alone, the norm just below
    # A few chunks of TBPTT with clipping, inside the library: clip_grad_norm_ is the learner's.
    series, clip = make_series()[:21], lambda ps: ma_utils.clip_grad_norm_(ps, 0.5)  # 4 chunks
    clip_torch = lambda ps: torch.nn.utils.clip_grad_norm_(ps, 0.5)  # noqa: E731
    expected = reference_tbptt(torch, make_regressor(torch), series, 5, 0.5, clip=clip_torch)
    with mock.patch.object(ma_utils, "clip_grad_norm_", clip_grad_norm):
        args = (ma, make_regressor(ma), series, 5, 0.5, "detach", True, clip)
        got = call(reference_tbptt, *args, explain=_explain_clip)
    problem = first_difference(got, expected, "chunk", ATOL, RTOL)
    if problem:
        raise Feedback(f"in a training loop with clipping, {problem}")
    return "matches torch.nn.utils.clip_grad_norm_ (clipped and unclipped cases, in place) and trains an LSTM with the same losses."
