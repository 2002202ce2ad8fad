"""The doctor on torch programs: the seeds' freed-graph errors explained, correct loops untouched.

The seed programs are the course's (course/seeds.py) and the ones
tests/test_seeds_three_engines.py runs, imported from there; the seed's LSTMpred model (its
`self.hidden` carried) is written out below.
"""

import inspect
import re
import warnings
import weakref

import numpy as np
import pytest
import test_seeds_three_engines as three
import torch

import mini_autograd as ma
from course import seeds
from mini_autograd.instruments import diagnose, torch_doctor
from tests.conftest import (
    assert_names_carried_lstm_state,
    assert_previous_is_a_carried_state,
    fixes,
    line_of,
)

SERIES = np.sin(np.linspace(0, 12 * np.pi, 301)).astype(np.float32)


def torch_text(program, *args):
    """The error text torch itself gives for `program`, without the doctor."""
    with pytest.raises(RuntimeError) as info:
        program(*args)
    return str(info.value)


def doctor_text(program, *args):
    """The error text of `program` under the doctor, checked to start with torch's own text."""
    plain = torch_text(program, *args)
    with ma.doctor(), pytest.raises(RuntimeError) as info:
        program(*args)
    text = str(info.value)
    assert text.startswith(plain + "\n\nDiagnosis (mini_autograd doctor):\n"), text
    return text


def call_lines(text, filename, function):
    """(call number, line) of the call that freed the tensor, and of the failing call."""
    pattern = rf"backward call #(\d+) at {filename}, line (\d+) \(in {function}\)"
    return [(int(number), int(line)) for number, line in re.findall(pattern, text)][:2]


class LSTMpred(torch.nn.Module):
    """The seed's model: it keeps its hidden state in self.hidden, from one call to the next."""

    def __init__(self, input_size, hidden_dim):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.lstm = torch.nn.LSTM(input_size, hidden_dim)
        self.hidden2out = torch.nn.Linear(hidden_dim, 1)
        self.hidden = self.init_hidden()

    def init_hidden(self):
        zeros = torch.zeros(1, 1, self.hidden_dim, requires_grad=True)
        return (zeros, torch.zeros(1, 1, self.hidden_dim, requires_grad=True))

    def forward(self, seq):
        lstm_out, self.hidden = self.lstm(seq.view(len(seq), 1, -1), self.hidden)
        return self.hidden2out(lstm_out.view(len(seq), -1))


def train_lstmpred(reinit, device="cpu", epochs=3):
    """The seed's loop (without `reinit`, model.hidden is carried); returns the losses."""
    torch.manual_seed(0)
    model = LSTMpred(1, 4).to(device)
    model.hidden = tuple(h.to(device) for h in model.hidden)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    seq = torch.tensor(SERIES[:10], device=device)
    target = torch.tensor(SERIES[1:11, None], device=device)
    losses = []
    for _ in range(epochs):
        if reinit:
            model.hidden = tuple(h.to(device) for h in model.init_hidden())
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(seq), target)
        loss.backward()  # backward
        optimizer.step()
        losses.append(loss.item())
    return losses


def test_two_losses_one_graph_sum_them_first():
    text = doctor_text(three.two_losses, torch, False)
    assert "The node that needs the freed tensor is MulBackward0; it saved `other`" in text
    (first, first_line), (failing, failing_line) = call_lines(
        text, "test_seeds_three_engines.py", "two_losses"
    )
    assert failing == first + 1
    assert first_line == line_of(three.two_losses, "loss1.backward(")
    assert failing_line == line_of(three.two_losses, "loss2.backward(")
    assert "two backward calls over one graph" in text
    best, second = fixes(text)
    assert best.startswith("add the losses and call backward once: `(loss1 + loss2).backward()`")
    assert "`torch.autograd.grad`" in best
    assert second.startswith("only if you really need two backward calls: pass retain_graph=True")
    assert "detach" not in text


def regression_with_nn_linear():
    """The seeds' regression program (course/seeds.py: nn.Linear, mse_loss, SGD): its error
    text, under the doctor."""
    with pytest.raises(RuntimeError) as plain:
        seeds.target_from_input(torch)
    with pytest.raises(RuntimeError) as doctored, ma.doctor():
        seeds.target_from_input(torch)
    text = str(doctored.value)
    assert text.startswith(str(plain.value) + "\n\nDiagnosis (mini_autograd doctor):\n"), text
    return text


@pytest.mark.parametrize("seed, name", [("three engines", "y"), ("nn.Linear", "y_train")])
def test_target_from_an_input_that_requires_grad_is_data(seed, name):
    if seed == "nn.Linear":
        text = regression_with_nn_linear()
    else:
        text = doctor_text(three.regression, torch, "none")
    assert "The node that needs the freed tensor is MulBackward0" in text
    assert f"it links this iteration to the previous one. It is `{name}`." in text
    assert "x_train" not in text  # its graph holds nothing freed: not the culprit
    assert "- It is data or a target, not a state: its graph reaches no parameter, only `x`" in text
    best, inside_the_loop, not_retain = fixes(text)
    assert best.startswith("build it without recording: create the input it is computed from")
    assert "requires_grad=False" in best and "`with torch.no_grad():`" in best
    assert inside_the_loop.startswith("or compute it inside the loop")
    assert not_retain.startswith("not retain_graph=True")
    assert "h.detach()" not in text


def test_lstmpred_carried_hidden_state_is_a_state():
    text = doctor_text(train_lstmpred, False)
    (first, line), (failing, failing_line) = call_lines(text, "test_doctor.py", "train_lstmpred")
    assert failing == first + 1 and line == failing_line == line_of(train_lstmpred, "# backward")
    assert_names_carried_lstm_state(text)
    assert "truncated backpropagation through time" in fixes(text)[0]
    assert "requires_grad=False" not in text


def test_recurrent_state_carried_by_a_plain_loop():
    text = doctor_text(three.rnn_loop, torch, "none")
    assert "It is `h (its value from the previous iteration)`." in text
    assert fixes(text)[0].startswith("detach it where it is carried over")


def running_baseline(steps=3):
    """A baseline kept as a running mean of the losses, graphs and all (a REINFORCE habit)."""
    torch.manual_seed(6)
    w = torch.randn(4, 1, requires_grad=True)
    baseline = torch.tensor(0.0)
    for _ in range(steps):
        loss = (torch.randn(8, 4) @ w).tanh().pow(2).mean()
        (loss - baseline).backward()
        with torch.no_grad():
            w -= 0.05 * w.grad
        baseline = 0.9 * baseline + 0.1 * loss


def test_a_variable_is_named_only_when_its_new_value_is_made_from_the_old():
    text = doctor_text(running_baseline)
    assert "reaches back into a tensor made by MeanBackward0, before backward call #" in text
    assert "previous iteration" not in text  # `loss` is a MeanBackward0 too, but a new one
    assert "- It is a state carried from one iteration to the next: its graph goes through" in text
    assert fixes(text)[0].startswith("detach it where it is carried over")


def test_both_modes_word_the_kind_and_the_fixes_alike():
    with ma.diagnosis_mode(), pytest.raises(RuntimeError) as info:
        three.regression(ma, "none")
    ours = str(info.value)
    theirs = doctor_text(three.regression, torch, "none")
    kind = "- It is data or a target, not a state: its graph reaches no parameter, only `x`"
    assert kind in ours and kind in theirs
    assert [fix.replace("mini_autograd.", "torch.") for fix in fixes(ours)] == fixes(theirs)


def test_the_doctor_puts_torchs_functions_back_even_after_an_error():
    originals = torch.autograd.backward, torch.autograd.grad
    with pytest.raises(RuntimeError), ma.doctor():
        three.two_losses(torch, False)
    assert (torch.autograd.backward, torch.autograd.grad) == originals
    assert torch_text(three.two_losses, torch, False) == three.FREED


def test_a_freeing_call_made_before_the_doctor_is_said_so():
    x = torch.randn(1, 4, requires_grad=True)
    z = x**2 * 4
    loss1, loss2 = z.mean(), z.sum()
    loss1.backward()
    with ma.doctor(), pytest.raises(RuntimeError) as info:
        loss2.backward()
    assert "that call was made before the doctor was on" in str(info.value)
    assert "Start the doctor before the loop (`with mini_autograd.doctor():`)" in str(info.value)


def quietly(program, *args):
    """program(*args) under the doctor, checked to print nothing and to warn nothing."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ma.doctor():
            result = program(*args)
    assert [str(w.message) for w in caught] == []
    return result


CORRECT_LOOPS = {
    "two losses, retain_graph on the first": (three.two_losses, torch, True),
    "two losses summed": (three.two_losses_summed, torch),
    "input without grad": (three.regression, torch, "input without grad"),
    "target under no_grad": (three.regression, torch, "target under no_grad"),
    "target detached": (three.regression, torch, "detach the target"),
    "hidden state detached": (three.rnn_loop, torch, "detach"),
    "hidden state re-initialised": (three.rnn_loop, torch, "re-initialise"),
    "LSTMpred re-initialised": (train_lstmpred, True),
}


@pytest.mark.parametrize("loop", CORRECT_LOOPS)
def test_correct_loops_run_silently_with_the_same_numbers(loop, capsys):
    program, *args = CORRECT_LOOPS[loop]
    plain = program(*args)
    doctored = quietly(program, *args)
    np.testing.assert_array_equal(np.asarray(doctored), np.asarray(plain))
    assert capsys.readouterr().out == ""


def gan_loop(steps=4):
    """A GAN's loop: two models, two losses, two optimizers, the fake detached for D's step."""
    torch.manual_seed(3)
    gen, disc = (
        torch.nn.Linear(2, 3),
        torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Sigmoid()),
    )
    opt_g, opt_d = (
        torch.optim.SGD(gen.parameters(), lr=0.1),
        torch.optim.SGD(disc.parameters(), lr=0.1),
    )
    bce, real = torch.nn.functional.binary_cross_entropy, torch.randn(8, 3)
    history = []
    for _ in range(steps):
        fake = gen(torch.randn(8, 2))
        d_loss = bce(disc(real), torch.ones(8, 1)) + bce(disc(fake.detach()), torch.zeros(8, 1))
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        g_loss = bce(disc(fake), torch.ones(8, 1))
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
        history += [d_loss.item(), g_loss.item()]
    return history + [p.grad.sum().item() for p in gen.parameters()]


def shared_trunk_two_heads(steps=3):
    """Two losses on one shared trunk, each with its own backward: retain_graph on the first."""
    torch.manual_seed(4)
    trunk, head_a, head_b = (torch.nn.Linear(3, 3) for _ in range(3))
    x, running = torch.randn(5, 3), 0.0
    for _ in range(steps):
        features = trunk(x).tanh()
        loss_a, loss_b = head_a(features).pow(2).mean(), head_b(features).abs().mean()
        loss_a.backward(retain_graph=True)
        loss_b.backward()
        running += loss_a.item() + loss_b.item()
    return [running] + [p.grad.sum().item() for p in trunk.parameters()]


@pytest.mark.parametrize("program", [gan_loop, shared_trunk_two_heads])
def test_no_false_alarm_on_loops_that_reuse_graphs_on_purpose(program):
    assert quietly(program) == program()


def summed_losses(keep_graphs, epochs=4):
    """The regression seed's loop, adding up its losses (with their graphs, or as numbers)."""
    torch.manual_seed(5)
    model = torch.nn.Linear(1, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.tensor(three.DATA), torch.tensor(three.DATA) * 2 + 1
    total_loss = 0
    for _ in range(epochs):
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()  # backward
        optimizer.step()
        total_loss += loss if keep_graphs else loss.item()
    return total_loss.item() if keep_graphs else total_loss


def test_a_loss_total_that_keeps_its_graphs_is_warned_about():
    with pytest.warns(UserWarning) as caught, ma.doctor():
        total = summed_losses(keep_graphs=True)
    texts = [str(w.message) for w in caught]
    assert len(texts) == 1, texts
    numbers = re.findall(r"#(\d+)", texts[0])
    assert len(numbers) >= 2
    assert texts[0] == (
        "mini_autograd doctor: `total_loss` holds the losses of backward calls "
        f"#{', #'.join(numbers)} at test_doctor.py, line {line_of(summed_losses, '# backward')} "
        "(in summed_losses), each with its graph, and one more with every loss added to it, until "
        "it is given a new value: memory grows with each. To add up losses to print, add numbers: "
        "`total_loss += loss.item()` (or `loss.detach()`)."
    )
    assert caught[0].filename == __file__
    assert total == summed_losses(keep_graphs=True)  # the same sum as without the doctor
    assert quietly(summed_losses, False) == summed_losses(keep_graphs=False)


def test_explain_before_a_backward_that_would_fail():
    with ma.doctor():
        x = torch.randn(100, 1, requires_grad=True)
        y_train = 1 + 2 * x
        w = torch.zeros(1, requires_grad=True)
        ((x * w - y_train) ** 2).mean().backward()
        loss = ((x * w - y_train) ** 2).mean()
        report = ma.doctor.explain(loss)
    assert report.will_fail
    text = repr(report)
    assert text.startswith("What backward from `loss` would meet (mini_autograd doctor):\n")
    assert re.search(r"- It would fail: MulBackward0 needs its saved `\w+`, already freed by", text)
    # No loop, no variable renewed: nothing says it is an iteration.
    assert (
        "it links this call's graph to the one that call went back through. It is `y_train`."
        in text
    )
    assert fixes(text)[0].startswith("build it without recording")


def test_explain_a_state_carried_between_two_epochs_written_out():
    with ma.doctor():
        torch.manual_seed(0)
        model, wave = LSTMpred(1, 4), torch.tensor(SERIES)
        torch.nn.functional.mse_loss(model(wave[:10]), wave[1:11, None]).backward()  # epoch 0
        loss = torch.nn.functional.mse_loss(model(wave[:10]), wave[1:11, None])  # epoch 1
        text = repr(ma.doctor.explain(loss))
    assert (
        "they link this iteration to the previous one. They are `model.hidden[0] (its value from "
        "the previous iteration)`" in text
    )


def test_explain_a_fresh_graph_and_a_retained_carried_state():
    with ma.doctor():
        w = torch.randn(3, requires_grad=True)
        h = torch.zeros(3)
        reports = []
        for _ in range(2):
            h = (h * w).tanh()
            loss = h.sum()
            reports.append(ma.doctor.explain(loss))
            loss.backward(retain_graph=True)
    fresh, retained = (repr(report) for report in reports)
    assert not any(report.will_fail for report in reports)
    assert "- Nothing from an earlier backward call" in fresh
    assert "which kept it (retain_graph=True): backward will run" in retained
    assert "It is `h (its value from the previous iteration)`." in retained
    assert fixes(retained)[0].startswith("detach it where it is carried over")


def test_explain_rejects_what_is_not_a_torch_tensor():
    with pytest.raises(TypeError, match="takes the torch tensor you would call backward on, not"):
        ma.doctor.explain(ma.ones(2, requires_grad=True).sum())
    leaf = torch.ones(2)
    assert (
        repr(ma.doctor.explain(leaf))
        == "`leaf` has no graph: it is a leaf, or does not require grad."
    )


# --- The doctor never breaks a program ------------------------------------------------------------


class AttrConfig(dict):
    """A hand-rolled config: its keys as attributes, and KeyError for any other name."""

    def __getattr__(self, key):
        return self[key]


class DotDict(dict):
    """The dict with attribute access that forums copy: None for any missing name."""

    __getattr__ = dict.get


class Gone:
    """An object that a weakref.proxy outlives."""


def dead_proxy():
    """A weakref.proxy whose object is gone: reading anything from it raises ReferenceError."""
    gone = Gone()
    proxy = weakref.proxy(gone)
    del gone
    return proxy


HOSTILE = {"config raising KeyError": AttrConfig, "dict.get config": DotDict, "dead proxy": None}


def hostile(kind):
    """A value of the kind that broke the doctor when it was in a loop's scope."""
    return dead_proxy() if HOSTILE[kind] is None else HOSTILE[kind](lr=0.1)


def summed_beside(config, steps=3):
    """`total += loss` (graphs and all), with `config` in the loop's scope."""
    w = torch.ones(2, requires_grad=True)
    total = 0
    for _ in range(steps):
        loss = (w * 2).sum()
        loss.backward()
        total += loss
    return total.item()


def carried_state(steps=3):
    """A recurrent state carried from one iteration to the next, never detached."""
    torch.manual_seed(50)
    cell, h = torch.nn.RNNCell(3, 3), torch.zeros(1, 3)
    for _ in range(steps):
        h = cell(torch.randn(1, 3), h)
        h.sum().backward()


def carried_state_beside(config):
    """carried_state(), called from a frame that holds `config` (the error's names are searched)."""
    return carried_state()


@pytest.mark.parametrize("kind", HOSTILE)
def test_hostile_values_in_scope_break_neither_the_warning_nor_the_diagnosis(kind):
    config = hostile(kind)
    with pytest.warns(UserWarning, match="`total` holds the losses"), ma.doctor():
        doctored = summed_beside(config)
    assert doctored == summed_beside(config)
    text = doctor_text(carried_state_beside, config)
    assert "It is `h (its value from the previous iteration)`." in text
    with ma.doctor():
        w = torch.ones(2, requires_grad=True)
        assert not ma.doctor.explain((w * 2).sum()).will_fail


def boom(*args, **kwargs):
    """A part of the doctor that fails."""
    raise KeyError("the doctor's own bug")


def test_when_the_doctor_fails_torchs_error_and_the_program_are_unchanged(monkeypatch):
    monkeypatch.setattr(diagnose, "carried_groups", boom)
    plain = torch_text(carried_state)
    with ma.doctor(), pytest.raises(RuntimeError) as info:
        carried_state()
    assert str(info.value) == plain
    monkeypatch.setattr(diagnose, "named_tensors", boom)
    assert quietly(summed_beside, None) == summed_beside(None)
    monkeypatch.setattr(torch_doctor, "_freed_frontier", boom)
    with ma.doctor():
        report = ma.doctor.explain((torch.ones(2, requires_grad=True) * 2).sum())
    assert report.will_fail is None and "could not read the graph" in repr(report)


def one_shot_hooks(counts):
    """saved_tensors_hooks whose unpack may run once only (they offload to a store, then drop)."""
    store = {}

    def pack(tensor):
        store[len(store)] = tensor
        return len(store) - 1

    def unpack(key):
        counts["unpack"] += 1
        return store.pop(key)

    return torch.autograd.graph.saved_tensors_hooks(pack, unpack)


def test_the_doctor_never_runs_the_unpack_hooks_of_saved_tensors():
    w, counts = torch.ones(3, requires_grad=True), {"unpack": 0}
    with one_shot_hooks(counts):
        loss = (w.exp() * w).sum()
    with ma.doctor():
        assert not ma.doctor.explain(loss).will_fail
        assert counts["unpack"] == 0
        loss.backward()  # a KeyError if explain() had unpacked a saved tensor
    torch.testing.assert_close(w.grad, 2 * torch.ones(3).exp())

    def two_losses_under_hooks(counts):
        x = torch.ones(3, requires_grad=True)
        with one_shot_hooks(counts):
            z = x.exp() * x
            loss1, loss2 = z.sum(), z.tanh().sum()
        loss1.backward()
        loss2.backward()

    plain, doctored = {"unpack": 0}, {"unpack": 0}
    torch_text(two_losses_under_hooks, plain)
    with ma.doctor(), pytest.raises(RuntimeError, match="Diagnosis"):
        two_losses_under_hooks(doctored)
    assert doctored == plain  # the diagnosis unpacked nothing


# --- What the linking tensor is -------------------------------------------------------------------


def weight_norm_outside_the_loop(steps=2):
    """A normalised weight computed once, before the loop, from the parameter V."""
    torch.manual_seed(19)
    V = torch.randn(3, 4, requires_grad=True)
    optimizer = torch.optim.SGD([V], lr=0.1)
    W = V / V.norm(dim=1, keepdim=True)
    for _ in range(steps):
        loss = (torch.randn(5, 4) @ W.t()).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def prototypes_outside_the_loop(steps=2):
    """Class prototypes encoded once, before the loop, by the encoder the loop trains."""
    torch.manual_seed(38)
    encoder = torch.nn.Linear(4, 3)
    optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
    W = encoder(torch.randn(2, 4))
    for _ in range(steps):
        queries = encoder(torch.randn(5, 4))  # the same layer: made like `W`, but not from it
        loss = (queries @ W.t()).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


@pytest.mark.parametrize("program", [weight_norm_outside_the_loop, prototypes_outside_the_loop])
def test_a_tensor_computed_once_from_parameters_is_computed_inside_the_loop_not_detached(program):
    text = doctor_text(program)
    assert "it links this iteration to the previous one. It is `W`." in text
    assert (
        "- It is computed once, before the loop: the loop never gives `W` a new value, and its "
        "graph goes through parameters" in text
    )
    inside, not_detach, not_retain = fixes(text)
    assert inside.startswith("compute it inside the loop")
    assert not_detach.startswith("not `.detach()`: the parameters it is computed from would")
    assert not_retain.startswith("not retain_graph=True")


def gan_without_detach(steps=2):
    """A GAN's discriminator step on `fake` without .detach(), then the generator's step."""
    torch.manual_seed(9)
    gen, disc = torch.nn.Linear(2, 3), torch.nn.Linear(3, 1)
    for _ in range(steps):
        fake = gen(torch.randn(4, 2))
        d_loss = disc(torch.randn(4, 3)).mean() - disc(fake).mean()
        d_loss.backward()
        g_loss = disc(fake).mean()
        g_loss.backward()


def penalty_without_create_graph():
    """A gradient penalty whose autograd.grad call forgot create_graph=True."""
    torch.manual_seed(47)
    critic = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    real = torch.randn(4, 2, requires_grad=True)
    out = critic(real)
    (grad,) = torch.autograd.grad(out.sum(), real)
    loss = -out.mean() + (grad.norm(dim=1) - 1).pow(2).mean()
    loss.backward()


@pytest.mark.parametrize(
    "program, name", [(gan_without_detach, "fake"), (penalty_without_create_graph, "out")]
)
def test_a_tensor_two_calls_of_one_iteration_share_gets_their_fixes(program, name):
    text = doctor_text(program)
    assert f"in one iteration. It is `{name}`." in text
    assert "- It is shared by two backward calls of one iteration: both calls go back" in text
    assert "previous" not in text
    detach, retain_graph, add = fixes(text)
    assert detach.startswith("if the first loss should not train what made it, detach it where")
    assert "`D(fake.detach())`" in detach
    assert (
        "create_graph=True" in retain_graph
        and "retain_graph=True to the FIRST call" in retain_graph
    )
    assert add.startswith("or add the losses and call backward once")


def smoothness_penalty(steps=2):
    """A penalty on the change of prediction, the last one kept with its graph (chapter 08)."""
    torch.manual_seed(8)
    model, previous = torch.nn.Linear(3, 1), None
    for _ in range(steps):
        prediction = model(torch.randn(4, 3))
        loss = prediction.pow(2).mean()
        if previous is not None:
            loss = loss + (prediction - previous).pow(2).mean()
        loss.backward()
        previous = prediction


def test_a_variable_given_each_iterations_new_value_is_a_state():
    text = doctor_text(smoothness_penalty)
    assert "previous one. It is `previous`." in text
    assert_previous_is_a_carried_state(text)


class Scale(torch.autograd.Function):
    """x * 2, saving x with ctx.save_for_backward as custom Functions do."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2 + 0 * x


def state_through_a_custom_function(steps=3):
    """A state carried through a custom autograd.Function, never detached."""
    w, h = torch.ones(3, requires_grad=True), torch.zeros(3)
    for _ in range(steps):
        h = Scale.apply(h + w)
        h.sum().backward()


def test_a_custom_functions_saved_tensors_are_seen():
    text = doctor_text(state_through_a_custom_function)
    assert "The node that needs the freed tensor is ScaleBackward; it saved `saved_tensors`" in text
    assert "It is `h (its value from the previous iteration)`." in text


# --- Which call freed it --------------------------------------------------------------------------


@pytest.mark.parametrize("first", ["autograd.grad", "backward(inputs=...)"])
def test_a_call_with_inputs_frees_only_the_nodes_on_its_way_to_them(first):
    V = torch.randn(3, requires_grad=True)
    with ma.doctor(), pytest.raises(RuntimeError) as info:
        W = V / V.norm()  # a branch that leads to V only
        x = torch.randn(3, requires_grad=True)
        if first == "autograd.grad":
            torch.autograd.grad((x * W).sum(), x)  # runs the branch to x, not W's
        else:
            (x * W).sum().backward(inputs=[x])
        (x * W).sum().backward()  # frees W's saved tensors
        (x * W).sum().backward()
    text = str(info.value)
    (freed_by, freed), (failing_api, failing) = re.findall(r"(\S+) call #(\d+) at", text)[:2]
    assert freed_by == failing_api == "backward" and int(freed) == int(failing) - 1, text


# --- explain() --------------------------------------------------------------------------------------


def test_explain_a_retained_lstm_state_names_the_state():
    torch.manual_seed(37)
    rnn, fc = torch.nn.LSTM(2, 3), torch.nn.Linear(3, 1)
    state = (torch.zeros(1, 1, 3), torch.zeros(1, 1, 3))
    with ma.doctor():
        for _ in range(3):
            out, state = rnn(torch.randn(2, 1, 2), state)
            loss = fc(out).pow(2).mean()
            report = ma.doctor.explain(loss)
            loss.backward(retain_graph=True)
    text = repr(report)
    assert "- The graph of this call is (part of) the graph" not in text
    assert (
        "They are `state[0] (its value from the previous iteration)`, "
        "`state[1] (its value from the previous iteration)`." in text
    )
    assert fixes(text)[0].startswith("detach it where it is carried over")


# --- Names ----------------------------------------------------------------------------------------


def baseline_from_a_critic(steps=3):
    """A running baseline made from the critic's values, never detached (a REINFORCE habit)."""
    torch.manual_seed(11)
    critic, baseline = torch.nn.Linear(3, 1), 0.0
    for _ in range(steps):
        values = critic(torch.randn(4, 3)).squeeze(-1)
        baseline = 0.9 * baseline + 0.1 * values.mean()
        loss = (values - baseline).pow(2).mean() + values.mean()
        loss.backward()


def test_the_failing_calls_own_loss_is_never_named_as_the_state():
    text = doctor_text(baseline_from_a_critic)
    assert "It is `baseline (its value from the previous iteration)`." in text


class Keeper:
    """A plain object, no nn.Module, that keeps a recurrent state between its calls."""

    def __init__(self):
        self.cell, self.hidden = torch.nn.RNNCell(3, 3), torch.zeros(1, 3)

    def step(self, x):
        self.hidden = self.cell(x, self.hidden)
        self.hidden.sum().backward()


def state_kept_in(place, steps=3):
    """A recurrent state, never detached, kept in a plain object or in a dict of lists."""
    torch.manual_seed(41)
    keeper, cell, state = Keeper(), torch.nn.RNNCell(3, 3), {"h": [torch.zeros(1, 3)]}
    for _ in range(steps):
        if place == "a plain object":
            keeper.step(torch.randn(1, 3))
        else:
            state["h"] = [cell(torch.randn(1, 3), state["h"][0])]
            state["h"][0].sum().backward()


@pytest.mark.parametrize(
    "place, name", [("a plain object", "self.hidden"), ("a dict", "state['h'][0]")]
)
def test_a_state_kept_in_an_object_or_a_dict_is_named(place, name):
    text = doctor_text(state_kept_in, place)
    assert f"It is `{name} (its value from the previous iteration)`." in text


# --- Cost -----------------------------------------------------------------------------------------

UNUSED = torch.ones(1)  # a global tensor that no code below uses


def test_correct_loops_search_no_names_and_the_search_reads_only_the_names_used(monkeypatch):
    searches = []
    monkeypatch.setattr(diagnose, "named_tensors", lambda *a, **k: searches.append(a) or [])
    quietly(*CORRECT_LOOPS["LSTMpred re-initialised"])
    assert searches == []  # no two earlier losses alive: no tensor can hold them
    monkeypatch.undo()
    used = torch.zeros(1)
    found = diagnose.named_tensors(torch.Tensor, frames=[inspect.currentframe()], used_only=True)
    assert [name for name, t in found if t is used] == ["used"]
    assert "UNUSED" not in [name for name, _ in found]


# --- The warning about totals -------------------------------------------------------------------


def microbatch_total(steps=2, micro=3):
    """A per-step total of micro-batch losses, each with its own backward, reset every step."""
    torch.manual_seed(42)
    model, log = torch.nn.Linear(2, 1), []
    for _ in range(steps):
        step_loss = 0
        for _ in range(micro):
            l = model(torch.randn(4, 2)).pow(2).mean() / micro  # noqa: E741 (the trial's name)
            l.backward()
            step_loss += l
        log.append(step_loss.item())
    return log


def averaged_total(epochs=3, batches=3):
    """An epoch's total of losses with their graphs, and its average, kept for printing."""
    torch.manual_seed(2)
    w = torch.ones(2, requires_grad=True)
    for _ in range(epochs):
        total_loss = 0
        for _ in range(batches):
            loss = (w * torch.randn(2)).sum()
            loss.backward()
            total_loss += loss
        average = total_loss / batches
    return average.item()


@pytest.mark.parametrize(
    "program, name, loss",
    [(microbatch_total, "step_loss", "l"), (averaged_total, "total_loss", "loss")],
)
def test_a_total_is_warned_about_once_in_its_loops_own_words(program, name, loss):
    with pytest.warns(UserWarning) as caught, ma.doctor():
        program()
    texts = [str(w.message) for w in caught]
    assert len(texts) == 1, texts  # not `average` too: it holds what `total_loss` holds
    assert texts[0].startswith(f"mini_autograd doctor: `{name}` holds the losses of backward calls")
    assert f"`{name} += {loss}.item()` (or `{loss}.detach()`)" in texts[0]
    assert "keeps growing" not in texts[0]


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_lstmpred_on_cuda():
    text = doctor_text(train_lstmpred, False, "cuda")
    assert "`model.hidden[0] (its value from the previous iteration)`" in text
    assert fixes(text)[0].startswith("detach it where it is carried over")
    assert quietly(train_lstmpred, True, "cuda") == train_lstmpred(True, "cuda")
