"""Diagnosis mode: the freed-graph error names the node, the earlier backward and the carried tensor."""

import re

import pytest

import mini_autograd as ma
from mini_autograd.core.errors import FREED as FREED_MESSAGE
from tests.conftest import (
    assert_names_carried_lstm_state,
    assert_previous_is_a_carried_state,
    fixes,
    line_of,
)


def second_backward_error(run):
    with pytest.raises(RuntimeError) as info:
        run()
    return str(info.value)


def two_losses():
    x = ma.randn(1, 4, requires_grad=True)
    z = x**2 * 4  # create
    loss1, loss2 = z.mean(), z.sum()
    loss1.backward()  # first
    loss2.backward()  # second


def test_off_by_default_gives_pytorchs_exact_message():
    assert not ma.instruments.diagnose.DiagnosisMode.enabled
    assert second_backward_error(two_losses) == FREED_MESSAGE


def test_two_losses_names_node_and_earlier_call():
    with ma.diagnosis_mode():
        text = second_backward_error(two_losses)
    assert text.startswith(FREED_MESSAGE + "\n\nDiagnosis")
    assert (
        f"MulBackward0, created at test_diagnose.py, line {line_of(two_losses, '# create')} (in two_losses)"
        in text
    )
    first, failing = re.findall(r"backward call #(\d+) at test_diagnose\.py, line (\d+)", text)
    assert int(first[1]) == line_of(two_losses, "# first")
    assert int(failing[1]) == line_of(two_losses, "# second")
    assert int(failing[0]) == int(first[0]) + 1
    assert "two backward calls over one graph" in text
    best, second = fixes(text)
    assert best.startswith("add the losses and call backward once: `(loss1 + loss2).backward()`")
    assert second.startswith("only if you really need two backward calls: pass retain_graph=True")


def regression_with_input_requiring_grad():
    x = ma.randn(100, 1, requires_grad=True)
    y = 1 + 2 * x + 0.3 * ma.randn(100, 1)  # target
    x_train, y_train = x[:70], y[:70]  # split
    model = ma.nn.Linear(1, 1)
    for _ in range(2):
        loss = ma.nn.functional.mse_loss(model(x_train), y_train)
        loss.backward()


def test_input_requiring_grad_names_the_target():
    with ma.diagnosis_mode():
        text = second_backward_error(regression_with_input_requiring_grad)
    scenario = regression_with_input_requiring_grad
    assert (
        f"MulBackward0, created at test_diagnose.py, line {line_of(scenario, '# target')}" in text
    )
    assert (
        f"made by SliceBackward0 at test_diagnose.py, line {line_of(scenario, '# split')}" in text
    )
    assert "It is `y_train`." in text
    assert "x_train" not in text  # x_train's graph holds nothing freed: it is not the culprit
    assert "- It is data or a target, not a state: its graph reaches no parameter, only `x`" in text
    best, inside_the_loop, not_retain = fixes(text)  # ordered for a target: do not record it
    assert best.startswith("build it without recording: create the input it is computed from")
    assert "requires_grad=False" in best and "`with mini_autograd.no_grad():`" in best
    assert inside_the_loop.startswith("or compute it inside the loop")
    assert not_retain.startswith("not retain_graph=True")
    assert "h.detach()" not in text


class CarriedLSTM(ma.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = ma.nn.LSTM(1, 4)
        self.hidden = (ma.zeros(1, 1, 4, requires_grad=True), ma.zeros(1, 1, 4, requires_grad=True))

    def forward(self, seq):
        out, self.hidden = self.lstm(seq, self.hidden)  # carried
        return out


def lstm_with_carried_hidden_state():
    model = CarriedLSTM()
    seq = ma.randn(5, 1, 1)
    for _ in range(2):
        model(seq).sum().backward()


def test_carried_lstm_hidden_state_is_named():
    with ma.diagnosis_mode():
        text = second_backward_error(lstm_with_carried_hidden_state)
    line = line_of(CarriedLSTM.forward, "# carried")
    assert f"created at test_diagnose.py, line {line} (in forward)" in text
    assert "The node that needs the freed tensor is MkldnnRnnLayerBackward0" in text
    assert (
        f"2 (1, 1, 4) tensors made by StackBackward0 at test_diagnose.py, line {line} (in forward)"
        in text
    )
    assert_names_carried_lstm_state(text)
    assert "requires_grad=False" not in text


def output_fed_back_into_the_next_step():
    w = ma.randn(3, 3, requires_grad=True)
    x, previous = ma.randn(1, 3), ma.zeros(1, 3)
    for _ in range(2):
        out = (x @ w + previous).tanh()
        out.sum().backward()
        with ma.no_grad():
            w -= 0.1 * w.grad
        previous = out


def test_a_named_carried_tensor_whose_graph_goes_through_a_parameter_is_a_state():
    with ma.diagnosis_mode():
        text = second_backward_error(output_fed_back_into_the_next_step)
    # The loop assigns `previous`; `w` is a plain tensor, but the loop updates it in place.
    assert_previous_is_a_carried_state(text)


def test_reading_a_freed_saved_tensor_is_explained():
    with ma.diagnosis_mode():
        y = ma.randn(3, requires_grad=True).exp()
        y.sum().backward()
        text = second_backward_error(lambda: y.grad_fn._saved_result)
    assert "ExpBackward0" in text and "read again" in text


def weight_computed_once():
    weight = ma.nn.Parameter(ma.randn(4, 3))
    scaled = weight * 2  # computed once, before the loop
    for _ in range(2):
        (ma.randn(5, 4) @ scaled).pow(2).mean().backward()


def a_tensor_two_calls_share():
    layer = ma.nn.Linear(2, 3)
    shared = layer(ma.randn(4, 2))
    shared.sum().backward()
    (shared * 2).sum().backward()


def test_what_the_carried_tensor_is_tells_the_fixes():
    with ma.diagnosis_mode():
        once = second_backward_error(weight_computed_once)
        shared = second_backward_error(a_tensor_two_calls_share)
    assert "it links this iteration to the previous one. It is `scaled`." in once
    assert "- It is computed once, before the loop: the loop never gives `scaled` a new" in once
    assert fixes(once)[0].startswith("compute it inside the loop")
    assert "in one iteration. It is `shared`." in shared and "previous" not in shared
    assert "- It is shared by two backward calls of one iteration" in shared
    assert fixes(shared)[0].startswith("if the first loss should not train what made it")
