"""The doctor on torch programs: the seeds' freed-graph errors explained, correct loops untouched.

The seed programs are the ones tests/test_seeds.py and tests/test_seeds_three_engines.py run,
imported from there; the seed's LSTMpred model (its `self.hidden` carried) is written out below.
"""

import inspect
import re
import warnings

import numpy as np
import pytest
import test_seeds as seeds
import test_seeds_three_engines as three
import torch

import mini_autograd as ma

SERIES = np.sin(np.linspace(0, 12 * np.pi, 301)).astype(np.float32)


def line_of(fn, marker):
    """The line number of the line of `fn` that contains `marker`."""
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if marker in line)


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


def fixes(text):
    """The fixes a diagnosis lists, best first."""
    return re.findall(r"^  \* (.*)$", text.split("- Fixes, best first:\n")[1], re.MULTILINE)


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
    """test_seeds.py's regression seed (nn.Linear, mse_loss, SGD): its error text, under the doctor."""
    weights = torch.nn.Linear(1, 1).state_dict()
    plain = seeds.regression_loop(torch, three.DATA, three.NOISE, weights, True)[1]
    with ma.doctor():
        text = seeds.regression_loop(torch, three.DATA, three.NOISE, weights, True)[1]
    assert text.startswith(plain + "\n\nDiagnosis (mini_autograd doctor):\n"), text
    return text


@pytest.mark.parametrize("seed, name", [("three engines", "y"), ("nn.Linear", "y_train")])
def test_target_from_an_input_that_requires_grad_is_data(seed, name):
    if seed == "nn.Linear":
        text = regression_with_nn_linear()  # the loop returns the error text rather than raising
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
    assert (
        "They are `model.hidden[0] (its value from the previous iteration)`, "
        "`model.hidden[1] (its value from the previous iteration)`." in text
    )
    assert (
        "- They are a state carried from one iteration to the next: the loop gives "
        "`model.hidden[0]`, `model.hidden[1]` a new value in every iteration; their graph goes "
        "through parameters" in text
    )
    detach, reinit, retain = fixes(text)
    assert detach.startswith("detach it where it is carried over: `h = h.detach()`")
    assert "truncated backpropagation through time" in detach
    assert reinit.startswith("or re-initialise it in each iteration")
    assert retain.startswith("retain_graph=True only if you really need the old graph")
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
        "mini_autograd doctor: `total_loss` keeps growing across iterations: it holds the losses "
        f"of backward calls #{', #'.join(numbers)} at test_doctor.py, line "
        f"{line_of(summed_losses, '# backward')} (in summed_losses), each with its graph, and one "
        "more with every iteration, so memory keeps growing. To add up losses to print, add "
        "numbers: `total_loss += loss.item()` (or `loss.detach()`)."
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
    assert "It is `y_train`." in text
    assert fixes(text)[0].startswith("build it without recording")


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


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_lstmpred_on_cuda():
    text = doctor_text(train_lstmpred, False, "cuda")
    assert "`model.hidden[0] (its value from the previous iteration)`" in text
    assert fixes(text)[0].startswith("detach it where it is carried over")
    assert quietly(train_lstmpred, True, "cuda") == train_lstmpred(True, "cuda")
