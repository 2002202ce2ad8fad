"""The fused LSTM layer (ops/rnn.py) against torch: gradients reaching all three results,
float64, saturated gates, and how the layer meets the rest of the library."""

import warnings

import numpy as np
import pytest
import torch

import mini_autograd as ma
from mini_autograd.core import events
from mini_autograd.ops import rnn

STEPS, BATCH, HIDDEN, FEATURES = 6, 3, 5, 4


def _twins(scale=1.0, dtype=torch.float32):
    """torch.nn.LSTM and mini_autograd.nn.LSTM with the same weights (times scale), and inputs."""
    torch.manual_seed(0)
    reference = torch.nn.LSTM(FEATURES, HIDDEN).to(dtype)
    with torch.no_grad():
        for p in reference.parameters():
            p.mul_(scale)
    mine = ma.nn.LSTM(FEATURES, HIDDEN, dtype=getattr(ma, str(dtype).split(".")[1]))
    mine.load_state_dict({k: ma.tensor(v.numpy()) for k, v in reference.state_dict().items()})
    rng = np.random.default_rng(3)
    np_dtype = np.float32 if dtype == torch.float32 else np.float64
    data = [
        rng.standard_normal(s).astype(np_dtype)
        for s in ((STEPS, BATCH, FEATURES), (1, BATCH, HIDDEN), (1, BATCH, HIDDEN))
    ]
    weights = [
        rng.standard_normal(s).astype(np_dtype)
        for s in ((STEPS, BATCH, HIDDEN), (1, BATCH, HIDDEN), (1, BATCH, HIDDEN))
    ]
    return reference, mine, data, weights


def _run(lib, model, data, weights):
    x, h0, c0 = (lib.tensor(a, requires_grad=True) for a in data)
    out, (h, c) = model(x, (h0, c0))
    loss = sum((r * lib.tensor(w)).sum() for r, w in zip((out, h, c), weights))
    loss.backward()
    results = [out, h, c, x.grad, h0.grad, c0.grad]
    results += [p.grad for p in model.parameters()]
    return [r.detach().numpy() for r in results]


@pytest.mark.parametrize(
    "scale, dtype, atol",
    [(1.0, torch.float32, 1e-5), (1.0, torch.float64, 1e-12), (30.0, torch.float32, 1e-4)],
    ids=["float32", "float64", "saturated gates"],
)
def test_gradients_from_out_hy_and_cy_match_torch(scale, dtype, atol):
    reference, mine, data, weights = _twins(scale, dtype)
    expected = _run(torch, reference, data, weights)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # exp overflowing in saturated gates must stay silent
        got = _run(ma, mine, data, weights)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype
        np.testing.assert_allclose(g, e, atol=atol * max(1, np.abs(e).max()), rtol=0)


def test_backward_leaves_the_incoming_gradients_alone():
    _, mine, data, _ = _twins()
    x, h0, c0 = (ma.tensor(a) for a in data)
    out, workspace = rnn.lstm_forward(
        *(a._data for a in (x, *mine._layer_weights(0))), h0._data[0], c0._data[0]
    )
    grads = [np.ones_like(out), np.ones_like(h0._data[0]), np.ones_like(c0._data[0])]
    copies = [g.copy() for g in grads]
    w_ih, w_hh = mine.weight_ih_l0._data, mine.weight_hh_l0._data
    rnn.lstm_backward(*grads, x._data, h0._data[0], c0._data[0], w_ih, w_hh, out, workspace)
    for g, copy in zip(grads, copies):
        np.testing.assert_array_equal(g, copy)


def test_the_fused_node_is_announced_to_node_created_observers():
    _, mine, data, _ = _twins()
    seen = []

    def observer(node, output):
        seen.append((node.name(), output.shape))

    events.attach(events.node_created, observer)
    try:
        mine(ma.tensor(data[0]))
    finally:
        events.detach(events.node_created, observer)
    assert ("MkldnnRnnLayerBackward0", (STEPS, BATCH, HIDDEN)) in seen


def test_lstm_step_is_the_ops_one_everywhere():
    from mini_autograd.nn import layers
    from mini_autograd.nn import rnn as nn_rnn

    assert layers.lstm_step is nn_rnn.lstm_step is rnn.lstm_step
