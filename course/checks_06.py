"""Checks for the exercises of chapter 06, RNN hidden-state pitfalls.

Each check runs the learner's piece with mini_autograd (inside the library where it has a place
there: the clipping function replaces `ma.nn.utils.clip_grad_norm_` in a training loop; the LSTM
step is unrolled over a sequence), compares it with PyTorch run from the same weights, and
prints exactly one line: correct, "not done yet", or what is wrong in plain words.

    check_lstm_step(lstm_step)              # 6.1: the LSTM cell's forward
    check_regression_loop(train_regression) # 6.2: the seed's broken regression loop, fixed
    check_tbptt(train_tbptt)                # 6.3: truncated backpropagation through time
    check_clip_grad_norm(clip_grad_norm)    # 6.4: gradient clipping by the joint norm
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
from unittest import mock

import numpy as np
import torch

import mini_autograd as ma
import mini_autograd.nn.utils as ma_utils
from course.check import (
    Feedback,
    StepOrder,
    counting_data_reads,
    data_note,
    describe_error,
    first_line,
    losses_of,
    run_check,
    tensor_note,
    verdict,
    zero_grad_problem,
)

GATES = "ifgo"
ATOL, RTOL = 1e-5, 1e-4


def _call(fn, *args):
    """Call the learner's fn; turn an unexpected exception into Feedback (not done stays)."""
    try:
        return fn(*args)
    except NotImplementedError:
        raise
    except Feedback:
        raise
    except Exception as error:  # an ordinary mistake: report it in one line
        raise Feedback(f"your code raised {describe_error(error)}") from None


def _numpy(value):
    if value is None:
        return None
    if isinstance(value, (ma.Tensor, torch.Tensor)):
        return np.asarray(value.detach().numpy(), dtype=np.float64)
    return np.asarray(value, dtype=np.float64)


def _differs(got, expected):
    """None when the arrays agree, else 'largest difference d at index i (expected e, got g)'."""
    if got.shape != expected.shape:
        return f"shape {got.shape} instead of {expected.shape}"
    if np.allclose(got, expected, atol=ATOL, rtol=RTOL):
        return None
    error = np.nan_to_num(np.abs(got - expected), nan=np.inf)
    worst = np.unravel_index(np.argmax(error), error.shape)
    where = f" at index {tuple(int(i) for i in worst)}" if got.ndim else ""
    return (
        f"largest difference {error[worst]:.3g}{where} (expected {expected[worst]:.5g}, "
        f"got {got[worst]:.5g})"
    )


# --- 6.1: the LSTM cell's forward ---------------------------------------------------------------

LSTM_HINT = (
    "gates = x @ w_ih.t() + b_ih + h @ w_hh.t() + b_hh, split in 4 as i, f, g, o; "
    "c' = sigmoid(f) * c + sigmoid(i) * tanh(g); h' = sigmoid(o) * tanh(c')"
)


def _numpy_lstm(x, h, c, w_ih, w_hh, b_ih, b_hh, order=GATES):
    """Reference forward in numpy; `order` says which block of rows holds which gate."""
    gates = x @ w_ih.T + b_ih + h @ w_hh.T + b_hh
    n = h.shape[-1]
    block = {name: gates[:, k * n : (k + 1) * n] for k, name in enumerate(order)}
    sigmoid = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    c_next = sigmoid(block["f"]) * c + sigmoid(block["i"]) * np.tanh(block["g"])
    return sigmoid(block["o"]) * np.tanh(c_next), c_next


def _lstm_arrays(seed=0, batch=3, inputs=2, hidden=4):
    rng = np.random.default_rng(seed)
    shapes = [
        (batch, inputs),
        (batch, hidden),
        (batch, hidden),
        (4 * hidden, inputs),
        (4 * hidden, hidden),
        (4 * hidden,),
        (4 * hidden,),
    ]
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def _pair(result):
    """The learner's (h_next, c_next) as mini_autograd tensors, or Feedback."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise Feedback(
            f"lstm_step must return a pair (h_next, c_next); it returned {type(result).__name__}"
        )
    for label, value in zip(("h_next", "c_next"), result):
        if not isinstance(value, ma.Tensor):
            raise Feedback(
                f"{label} is a {type(value).__name__}, not a mini_autograd tensor: build it from "
                "tensor operations so that backward can go through it"
            )
    return result


def _forward_problem(h_got, c_got, arrays):
    """Explain a wrong forward result: a gate order, a swapped activation, or the difference."""
    x, h, c, *weights = [a.astype(np.float64) for a in arrays]
    h_ref, c_ref = _numpy_lstm(x, h, c, *weights)
    if _differs(h_got, h_ref) is None and _differs(c_got, c_ref) is None:
        return None
    for order in ("".join(p) for p in itertools.permutations(GATES)):
        h_alt, c_alt = _numpy_lstm(x, h, c, *weights, order=order)
        if order != GATES and _differs(h_got, h_alt) is None and _differs(c_got, c_alt) is None:
            shown = ", ".join(order)
            return (
                f"your gates are taken in the order {shown}; PyTorch stacks the rows of w_ih and "
                "w_hh as i, f, g, o (input, forget, cell candidate, output)"
            )
    problem = _differs(c_got, c_ref)
    if problem:
        return f"c_next differs from torch.nn.LSTMCell: {problem}. c' = sigmoid(f) * c + sigmoid(i) * tanh(g)"
    return (
        f"c_next is right but h_next differs from torch.nn.LSTMCell: {_differs(h_got, h_ref)}. "
        "h' = sigmoid(o) * tanh(c') uses the NEW cell state"
    )


@verdict
def check_lstm_step(lstm_step):
    """6.1: lstm_step(x, (h, c), w_ih, w_hh, b_ih, b_hh) against torch.nn.LSTMCell and nn.LSTM."""

    def body():
        arrays = _lstm_arrays()
        names = ("x", "h", "c", "w_ih", "w_hh", "b_ih", "b_hh")
        ours = [ma.tensor(a, requires_grad=True) for a in arrays]
        x, h, c, *weights = ours
        h_next, c_next = _pair(_call(lstm_step, x, (h, c), *weights))
        problem = _forward_problem(_numpy(h_next), _numpy(c_next), arrays)
        if problem:
            raise Feedback(problem)

        # PyTorch's cell with the same weights; a loss that weighs every output differently.
        cell = torch.nn.LSTMCell(arrays[0].shape[1], arrays[1].shape[1])
        with torch.no_grad():
            for p, a in zip(
                (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh), arrays[3:]
            ):
                p.copy_(torch.from_numpy(a))
        tx, th, tc = (torch.tensor(a, requires_grad=True) for a in arrays[:3])
        t_h, t_c = cell(tx, (th, tc))
        rng = np.random.default_rng(1)
        r_h, r_c = (rng.standard_normal(t_h.shape).astype(np.float32) for _ in range(2))
        ((t_h * torch.from_numpy(r_h)).sum() + (t_c * torch.from_numpy(r_c)).sum()).backward()
        try:
            ((h_next * ma.tensor(r_h)).sum() + (c_next * ma.tensor(r_c)).sum()).backward()
        except RuntimeError as error:
            raise Feedback(f"backward through your step failed: {first_line(error)}") from None
        expected = [tx.grad, th.grad, tc.grad, cell.weight_ih.grad, cell.weight_hh.grad]
        expected += [cell.bias_ih.grad, cell.bias_hh.grad]
        for label, mine, theirs in zip(names, ours, expected):
            if mine.grad is None:
                raise Feedback(
                    f"the forward values are right, but no gradient reached `{label}`: part of "
                    "your step was computed outside the graph (numpy, .data or detach())"
                )
            problem = _differs(_numpy(mine.grad), _numpy(theirs))
            if problem:
                raise Feedback(
                    f"the forward values are right, but the gradient of `{label}` differs from "
                    f"PyTorch's: {problem}"
                )

        # Unrolled over a sequence, the step must give what a whole LSTM layer gives.
        torch.manual_seed(0)
        t_lstm = torch.nn.LSTM(2, 4)
        weights = [ma.tensor(p.detach().numpy(), requires_grad=True) for p in t_lstm.parameters()]
        seq = np.random.default_rng(2).standard_normal((5, 3, 2)).astype(np.float32)
        t_out, _ = t_lstm(torch.from_numpy(seq))
        state, outputs = (ma.zeros(3, 4), ma.zeros(3, 4)), []
        for x_t in ma.tensor(seq):
            state = _pair(_call(lstm_step, x_t, state, *weights))
            outputs.append(state[0])
        m_out = ma.stack(outputs)
        t_out.sum().backward()
        m_out.sum().backward()
        problem = _differs(_numpy(m_out), _numpy(t_out))
        problem = problem or _differs(_numpy(weights[1].grad), _numpy(t_lstm.weight_hh_l0.grad))
        if problem:
            raise Feedback(
                "one step is right, but your step unrolled over a 5-step sequence differs from "
                f"torch.nn.LSTM: {problem}"
            )
        return (
            "matches torch.nn.LSTMCell (values and all 7 gradients) and, unrolled over 5 steps, "
            "torch.nn.LSTM."
        )

    return run_check("6.1", LSTM_HINT, body)


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
    optimizer = lib.optim.SGD(model.parameters(), lr=lr)
    x = lib.tensor(x_np)
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


def _first_difference(got, expected, what):
    for k, (a, b) in enumerate(zip(got, expected)):
        if not np.isclose(a, b, atol=ATOL, rtol=RTOL):
            return f"the loss of {what} {k} is {a:.6g}, expected {b:.6g}"
    return None


def _freed_graph(error):
    return "backward through the graph a second time" in str(error)


def _in_place(error):
    return "modified by an inplace operation" in str(error)


class _RetainSpy:
    """Sees every backward pass that keeps its graph, whatever the entry point.

    mini_autograd: StepOrder watches engine.run_backward, which every entry point
    (Tensor.backward, autograd.backward, autograd.grad) goes through. torch: Tensor.backward
    calls torch.autograd.backward, so wrapping that and torch.autograd.grad sees them all.
    retain_graph defaults to create_graph, in both libraries.
    """

    def __init__(self):
        self._order = StepOrder()
        self._torch_retained = False

    @property
    def retained(self):
        """True once a backward pass of either library kept its graph."""
        return self._torch_retained or self._order.kept_graph

    def _torch(self, original):
        signature = inspect.signature(original)  # backward and grad place retain_graph apart

        def entry(*args, **kwargs):
            given = signature.bind_partial(*args, **kwargs).arguments
            retain, create = given.get("retain_graph"), given.get("create_graph", False)
            self._torch_retained = self._torch_retained or bool(
                create if retain is None else retain
            )
            return original(*args, **kwargs)

        return entry

    @contextlib.contextmanager
    def watching(self):
        with contextlib.ExitStack() as stack:
            stack.enter_context(self._order)
            for name in ("backward", "grad"):
                original = getattr(torch.autograd, name)
                stack.enter_context(mock.patch.object(torch.autograd, name, self._torch(original)))
            yield self


@verdict
def check_regression_loop(train_regression, n_epochs=5):
    """6.2: the fixed loop trains every epoch, on both engines, without retain_graph=True."""

    def body():
        x_np, noise_np, start = regression_data()
        expected = reference_regression(torch, x_np, noise_np, start, n_epochs)
        note = ""
        for lib in (ma, torch):
            spy = _RetainSpy()
            with spy.watching():
                try:
                    result = train_regression(lib, x_np.copy(), noise_np.copy(), start, n_epochs)
                except NotImplementedError:  # a RuntimeError too: let "not done yet" through
                    raise
                except RuntimeError as error:
                    if _freed_graph(error):
                        raise Feedback(
                            f"with {lib.__name__}, backward still goes through the freed graph: "
                            "the target y is computed from x, which requires grad, so y_train "
                            "links every epoch to the first one"
                        ) from None
                    raise Feedback(
                        f"with {lib.__name__} your code raised RuntimeError: {first_line(error)}"
                    ) from None
                except Feedback:
                    raise
                except Exception as error:
                    raise Feedback(
                        f"with {lib.__name__} your code raised {describe_error(error)}"
                    ) from None
            losses = losses_of(result, n_epochs, per="epoch", named=f"{'epoch'} ")
            note = note or tensor_note(result)
            if spy.retained:
                raise Feedback(
                    f"with {lib.__name__} it runs, but a backward pass keeps its graph "
                    "(retain_graph=True, in loss.backward(), autograd.backward() or "
                    "autograd.grad(), or create_graph=True): every epoch still back-propagates "
                    "into the graph of y, recorded once before the loop. Make the target a plain "
                    "tensor instead (the input needs no gradient)"
                )
            problem = _first_difference(losses, expected, "epoch")
            if problem:
                raise Feedback(
                    f"with {lib.__name__}, {problem}: keep the seed's data (y = 1 + 2 * x + "
                    "0.3 * noise from x_np and noise_np), model, lr and order of steps"
                )
        return f"trains all {n_epochs} epochs on both engines, with the reference losses.{note}"

    return run_check(
        "6.2",
        "copy the broken loop and change what makes y_train carry a graph from one epoch to the next",
        body,
    )


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
    reference = make_regressor_torch(hidden_size)
    model = Regressor()
    model.load_state_dict(reference.state_dict())
    return model


def make_regressor_torch(hidden_size):
    class Regressor(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(1, hidden_size)
            self.head = torch.nn.Linear(hidden_size, 1)

    return Regressor()


def make_series(length=41, seed=0):
    """A noisy sine wave, float32."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 4 * np.pi, length)
    return (np.sin(t) + 0.1 * rng.standard_normal(length)).astype(np.float32)


def reference_tbptt(lib, model, series, window, lr=0.1, carry="detach", step=True):
    """Truncated BPTT done right (carry='detach'), or two wrong variants for diagnosis."""
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
        if step:
            optimizer.step()
        losses.append(loss.item())
    return losses


@verdict
def check_tbptt(train_tbptt, windows=(5, 8)):
    """6.3: losses per chunk as PyTorch computes them, for each window."""

    def body():
        series = make_series()
        notes = ""
        for window in windows:
            n = (len(series) - 1) // window
            expected = reference_tbptt(torch, make_regressor(torch), series, window)
            model = make_regressor(ma)
            try:
                with StepOrder() as order, counting_data_reads() as data:
                    result = train_tbptt(ma, model, series.copy(), window)
            except NotImplementedError:  # a RuntimeError too: let "not done yet" through
                raise
            except RuntimeError as error:
                if _freed_graph(error):
                    raise Feedback(
                        f"window {window}: the second chunk's backward reaches into the first "
                        "chunk's freed graph: carry the state over detached, and assign it "
                        "(state = tuple(s.detach() for s in state))"
                    ) from None
                if _in_place(error):
                    raise Feedback(
                        f"window {window}: the in-place error of retain_graph=True plus "
                        "optimizer.step(): do not retain the old graph, detach the state instead"
                    ) from None
                raise Feedback(
                    f"window {window}: your code raised RuntimeError: {first_line(error)}"
                ) from None
            except Feedback:
                raise
            except Exception as error:
                raise Feedback(
                    f"window {window}: your code raised {describe_error(error)}"
                ) from None
            losses = losses_of(result, n, per="chunk", named=f"{'chunk'} ")
            problem = _first_difference(losses, expected, "chunk")
            if problem is None:
                notes = notes or tensor_note(result) + data_note(data.reads)
                continue
            zero_grad = zero_grad_problem(order.events)
            if zero_grad:
                raise Feedback(f"window {window}: {problem}: {zero_grad}")
            for carry, step, advice in (
                (
                    "reinit",
                    True,
                    "you start every chunk from zeros; TBPTT carries the state's "
                    "values over (detached) from one chunk to the next",
                ),
                (
                    "detach",
                    False,
                    "the losses are those of a model that never learns: call "
                    "optimizer.step() after each backward",
                ),
            ):
                other = reference_tbptt(
                    torch, make_regressor(torch), series, window, carry=carry, step=step
                )
                if _first_difference(losses, other, "chunk") is None:
                    raise Feedback(f"window {window}: {advice}")
            raise Feedback(
                f"window {window}: {problem}. Chunk k reads series[k*window:(k+1)*window] and "
                "predicts series[k*window+1:(k+1)*window+1]"
            )
        return (
            f"the losses of every chunk match PyTorch's for windows {', '.join(map(str, windows))}."
            + notes
        )

    return run_check(
        "6.3",
        "loop over the chunks; detach the carried state, forward, loss, zero_grad, backward, step",
        body,
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


def _clip_call(clip_grad_norm, parameters, max_norm):
    """The learner's clip on `parameters`; a stumble on a None gradient is explained."""
    try:
        return _call(clip_grad_norm, parameters, max_norm)
    except Feedback as feedback:
        if "NoneType" in str(feedback):
            raise Feedback(
                f"{feedback}: a parameter whose .grad is None (it took no part in the loss) "
                "must be skipped, as clip_grad_norm_ does (if p.grad is not None)"
            ) from None
        raise


def _clips_a_list(clip_grad_norm, scale, max_norm):
    """Whether the learner's clip gives torch's gradients when handed a list, not a generator."""
    ours, theirs = _twin_grads(0, scale)
    try:
        clip_grad_norm(list(ours), max_norm)
    except Exception:  # noqa: BLE001 (only a diagnosis: any failure means "no")
        return False
    torch.nn.utils.clip_grad_norm_(theirs, max_norm)
    return all(
        (p.grad is None) == (q.grad is None)
        and (p.grad is None or _differs(_numpy(p.grad), _numpy(q.grad)) is None)
        for p, q in zip(ours, theirs)
    )


GENERATOR_ADVICE = (
    "given a generator (model.parameters() is one), your function changes nothing, though it "
    "works on a list: it goes through `parameters` twice, and a generator is empty the second "
    "time. Turn it into a list first: parameters = list(parameters)"
)


def _clip_case(clip_grad_norm, scale, max_norm):
    ours, theirs = _twin_grads(0, scale)
    grad_objects = [p.grad for p in ours]
    norm_before = np.sqrt(sum((_numpy(g) ** 2).sum() for g in grad_objects if g is not None))
    returned = _clip_call(clip_grad_norm, (p for p in ours), max_norm)  # a generator, as in use
    expected = float(torch.nn.utils.clip_grad_norm_(theirs, max_norm))
    if returned is None:
        raise Feedback("return the total norm of the gradients (before clipping)")
    try:
        returned = float(returned.item() if hasattr(returned, "item") else returned)
    except (TypeError, ValueError):
        raise Feedback(
            f"return the total norm as a number, not {type(returned).__name__}"
        ) from None
    for p, q in zip(ours, theirs):
        if p.grad is None and q.grad is None:
            continue
        if q.grad is None:
            raise Feedback(
                "a parameter whose .grad was None now has a gradient: skip the parameters "
                "without one (if p.grad is not None) and leave them as they are"
            )
        if p.grad is not None and _differs(_numpy(p.grad), _numpy(q.grad)) is None:
            continue
        if _clips_a_list(clip_grad_norm, scale, max_norm):
            raise Feedback(GENERATOR_ADVICE)
        got = [float(np.linalg.norm(_numpy(p.grad))) for p in ours if p.grad is not None]
        if max_norm >= expected:
            raise Feedback(
                f"the gradients' joint norm {expected:.4g} is already below max_norm={max_norm}, "
                "so they must stay unchanged; yours were changed"
            )
        if all(np.isclose(g, max_norm, rtol=1e-3) for g in got):
            raise Feedback(
                "each gradient was clipped on its own; clip_grad_norm_ computes ONE norm over all "
                "gradients together and scales them all by the same factor"
            )
        problem = _differs(_numpy(p.grad), _numpy(q.grad))
        raise Feedback(
            f"the clipped gradients differ from torch.nn.utils.clip_grad_norm_'s: {problem}. "
            "Scale every gradient by max_norm / (total_norm + 1e-6) when that is below 1"
        )
    if not np.isclose(returned, expected, rtol=1e-5):
        after = np.sqrt(sum((_numpy(p.grad) ** 2).sum() for p in ours if p.grad is not None))
        if np.isclose(returned, after, rtol=1e-5) and not np.isclose(after, norm_before):
            raise Feedback("you returned the norm after clipping; return the norm before it")
        raise Feedback(f"the returned norm is {returned:.6g}, expected {expected:.6g}")
    if any(p.grad is not g for p, g in zip(ours, grad_objects)):
        raise Feedback(
            "the values are right, but you replaced .grad with new tensors: clip_grad_norm_ "
            "scales the existing gradients in place (p.grad.mul_(factor))"
        )


def _clipped_training(lib, clip, max_norm=0.5, n_chunks=4, window=5):
    """A few chunks of TBPTT with clipping between backward and step; returns the losses."""
    model = make_regressor(lib)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.5)
    series, state, losses = make_series(), None, []
    for k in range(n_chunks):
        seq = lib.tensor(series[k * window : (k + 1) * window])
        target = lib.tensor(series[k * window + 1 : (k + 1) * window + 1]).view(window, 1)
        if state is not None:
            state = tuple(s.detach() for s in state)
        prediction, state = model(seq, state)
        loss = lib.nn.functional.mse_loss(prediction, target)
        optimizer.zero_grad()
        loss.backward()
        clip(model.parameters(), max_norm)
        optimizer.step()
        losses.append(loss.item())
    return losses


@verdict
def check_clip_grad_norm(clip_grad_norm):
    """6.4: clip_grad_norm(parameters, max_norm) against torch.nn.utils.clip_grad_norm_."""

    def body():
        _clip_case(clip_grad_norm, scale=3.0, max_norm=1.0)  # clipped
        _clip_case(clip_grad_norm, scale=0.01, max_norm=1.0)  # left alone
        expected = _clipped_training(torch, torch.nn.utils.clip_grad_norm_)
        with mock.patch.object(ma_utils, "clip_grad_norm_", clip_grad_norm):
            got = _call(_clipped_training, ma, lambda ps, m: ma_utils.clip_grad_norm_(ps, m))
        problem = _first_difference(got, expected, "chunk")
        if problem:
            raise Feedback(f"in a training loop with clipping, {problem}")
        return (
            "matches torch.nn.utils.clip_grad_norm_ (clipped and unclipped cases, in place) "
            "and trains an LSTM with the same losses."
        )

    return run_check(
        "6.4",
        "total = sqrt of the sum of every gradient's squared entries; if it exceeds max_norm, "
        "multiply every gradient in place by max_norm / (total + 1e-6); return total",
        body,
    )
