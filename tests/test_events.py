"""events.py: optional features watch the core through observer lists, empty unless attached."""

import pytest

import mini_autograd as ma
from mini_autograd.core import events

EVENTS = ["node_created", "backward_started", "backward_finished", "node_released"]
EVENTS += ["freed_tensor_read", "tensor_modified"]


@pytest.fixture
def heard():
    """Attach a recording observer to every event; detach them afterwards."""
    calls, observers = [], {}
    for name in EVENTS:
        observers[name] = lambda *args, name=name: calls.append((name, *args))
        events.attach(getattr(events, name), observers[name])
    yield calls
    for name, observer in observers.items():
        events.detach(getattr(events, name), observer)


def test_no_observer_is_attached_by_default():
    assert all(getattr(events, name) == [] for name in EVENTS)


def test_observers_hear_each_event_in_order(heard):
    x = ma.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 3).sum()
    y.backward()
    names = [call[0] for call in heard]
    assert names == ["node_created", "node_created", "backward_started"] + ["node_released"] * 2 + [
        "backward_finished"
    ]
    created = [call for call in heard if call[0] == "node_created"]
    assert [(node.name(), out.shape) for _, node, out in created] == [
        ("MulBackward0", ma.Size([2])),
        ("SumBackward0", ma.Size([])),
    ]
    started, finished = heard[2], heard[-1]
    assert started[1] is finished[1] and started[2] == [(y.grad_fn, 0)]


def test_a_freed_tensor_read_asks_observers_for_more_text(heard):
    events.attach(events.freed_tensor_read, lambda node, saved: " Extra words.")
    try:
        y = (ma.tensor([1.0], requires_grad=True) * 2).sum()
        y.backward()
        with pytest.raises(RuntimeError) as error:
            y.backward()
    finally:
        events.freed_tensor_read.pop()
    assert str(error.value) == ma.core.errors.FREED + " Extra words."
    assert ("freed_tensor_read", y.grad_fn.next_functions[0][0]) == heard[-2][:2]


def test_diagnosis_mode_attaches_its_observers_only_inside():
    with ma.diagnosis_mode():
        assert events.node_created and events.backward_started and events.freed_tensor_read
    assert events.node_created == events.backward_started == events.freed_tensor_read == []


def test_attaching_twice_keeps_one():
    def observer(*args):
        pass

    events.attach(events.node_created, observer)
    events.attach(events.node_created, observer)
    assert events.node_created == [observer]
    events.detach(events.node_created, observer)
    events.detach(events.node_created, observer)
    assert events.node_created == []
