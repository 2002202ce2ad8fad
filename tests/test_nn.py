"""nn layers against torch.nn with the same weights: values, every gradient, and the graph."""

import numpy as np
import pytest
import torch

import mini_autograd as ma
from mini_autograd.core.errors import FREED as FREED_MESSAGE
from tests.parity_helpers import assert_close, describe_graph, error_of

LIBS = (torch, ma)


def twins(name, *args, **kwargs):
    """The same layer in both libraries, each loaded with torch's weights (so that both count the
    same in-place changes: one at init, one for load_state_dict)."""
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    ours = getattr(ma.nn, name)(*args, **kwargs)
    ours.load_state_dict(theirs.state_dict())
    theirs.load_state_dict(theirs.state_dict())
    return {torch: theirs, ma: ours}


def weighted_sum(lib, outputs, seed=3):
    """A scalar that weighs every element of every output differently."""
    rng = np.random.default_rng(seed)
    return sum(
        (out * lib.tensor(rng.standard_normal(out.shape).astype(np.float32))).sum()
        for out in outputs
    )


def flat(result):
    """(output, state) or (output, (h, c)) as a flat tuple of tensors."""
    if isinstance(result, tuple):
        return tuple(t for part in result for t in flat(part))
    return (result,)


def run_both(name, layer_args, layer_kwargs, input_shape, state_shapes=None):
    """Forward and backward in both libraries: {lib: (outputs, input grads, parameter grads, layer)}."""
    layers = twins(name, *layer_args, **layer_kwargs)
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(input_shape).astype(np.float32)]
    arrays += [rng.standard_normal(s).astype(np.float32) for s in state_shapes or ()]
    got = {}
    for lib in LIBS:
        inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
        state = None
        if len(inputs) == 2:
            state = inputs[1]
        elif len(inputs) == 3:
            state = (inputs[1], inputs[2] * 2)  # c0 made by an operation: an edge to follow
        outputs = flat(layers[lib](*inputs[:1], *([] if state is None else [state])))
        weighted_sum(lib, outputs).backward()
        params = {k: p.grad for k, p in layers[lib].named_parameters()}
        got[lib] = (outputs, [t.grad for t in inputs], params, layers[lib])
    return got


def assert_same_numbers(got, rtol=2e-5, atol=2e-6):
    (t_out, t_in, t_params, _), (m_out, m_in, m_params, _) = got[torch], got[ma]
    for k, (mine, theirs) in enumerate(zip(m_out, t_out)):
        assert_close(mine, theirs, f"output {k}", rtol, atol)
    for k, (mine, theirs) in enumerate(zip(m_in, t_in)):
        assert_close(mine, theirs, f"gradient of input {k}", rtol, atol)
    assert m_params.keys() == t_params.keys()
    for key in t_params:
        assert_close(m_params[key], t_params[key], f"gradient of {key}", rtol, atol)


RECURRENT_CASES = {
    # id: (layer kwargs, input shape, state shapes)
    "one layer": ({}, (5, 2, 3), None),
    "one layer with a state": ({}, (5, 2, 3), [(1, 2, 4), (1, 2, 4)]),
    "two layers with a state": ({"num_layers": 2}, (5, 2, 3), [(2, 2, 4), (2, 2, 4)]),
    "batch_first": ({"batch_first": True}, (2, 5, 3), None),
    "unbatched with a state": ({}, (5, 3), [(1, 4), (1, 4)]),
}


@pytest.mark.parametrize("case", RECURRENT_CASES, ids=str)
def test_lstm_matches_torch(case):
    kwargs, shape, states = RECURRENT_CASES[case]
    got = run_both("LSTM", (3, 4), kwargs, shape, states)
    assert_same_numbers(got)


@pytest.mark.parametrize("case", RECURRENT_CASES, ids=str)
def test_rnn_matches_torch(case):
    kwargs, shape, states = RECURRENT_CASES[case]
    got = run_both("RNN", (3, 4), kwargs, shape, states and states[:1])
    assert_same_numbers(got)


@pytest.mark.parametrize("name", ["LSTMCell", "RNNCell"])
def test_cells_match_torch(name):
    states = [(2, 4), (2, 4)] if name == "LSTMCell" else [(2, 4)]
    assert_same_numbers(run_both(name, (3, 4), {}, (2, 3), states))


def test_linear_matches_torch():
    assert_same_numbers(run_both("Linear", (3, 4), {}, (5, 3)))


def lstm_graph(lib, layers, x, state_shape=None):
    """out, h_n, c_n of an LSTM on x, from a state that requires grad when its shape is given."""
    state = None
    if state_shape is not None:
        rng = np.random.default_rng(1)
        state = tuple(
            lib.tensor(rng.standard_normal(state_shape).astype(np.float32), requires_grad=True)
            for _ in range(2)
        )
    out, (h_n, c_n) = layers[lib](lib.tensor(x, requires_grad=True), state)
    return out, h_n, c_n


GRAPH_CASES = {
    # id: (layer kwargs, input shape, state shape)
    "two layers, given state": ({"num_layers": 2}, (5, 2, 3), (2, 2, 4)),
    "two layers, no state": ({"num_layers": 2}, (5, 2, 3), None),
    "batch_first": ({"batch_first": True}, (2, 5, 3), (1, 2, 4)),
}


@pytest.mark.parametrize("case", GRAPH_CASES, ids=str)
def test_lstm_records_pytorchs_graph(case):
    """One MkldnnRnnLayerBackward0 per layer, the same edges and saved names; values too, but
    for the workspace (result3), which is oneDNN's own buffer in PyTorch."""
    kwargs, x_shape, state_shape = GRAPH_CASES[case]
    layers = twins("LSTM", 3, 4, **kwargs)
    x = np.random.default_rng(0).standard_normal(x_shape).astype(np.float32)
    graphs = {
        lib: [describe_graph(t) for t in lstm_graph(lib, layers, x, state_shape)] for lib in LIBS
    }
    for mine, theirs in zip(graphs[ma], graphs[torch]):
        for node in (*mine, *theirs):
            if "values" in node:
                node["values"].pop("_saved_result3", None)
        for m_node, t_node in zip(mine, theirs):
            assert m_node.keys() == t_node.keys()
            assert m_node["name"] == t_node["name"]
            assert m_node["edges"] == t_node["edges"]
            assert m_node["saved"] == t_node["saved"]
            for name, value in t_node.get("values", {}).items():
                if isinstance(value, tuple) and value[:1] == ("tensor",):
                    np.testing.assert_allclose(
                        m_node["values"][name][2], value[2], atol=2e-6, err_msg=name
                    )
                else:
                    assert m_node["values"][name] == value, name
        assert len(mine) == len(theirs)
    names = [node["name"] for node in graphs[ma][0]]
    assert names.count("MkldnnRnnLayerBackward0") == kwargs.get("num_layers", 1)


def test_lstm_frees_its_saved_tensors_like_torch():
    layers = twins("LSTM", 3, 4, num_layers=2)
    x = np.random.default_rng(0).standard_normal((5, 2, 3)).astype(np.float32)
    errors = {}
    for lib in LIBS:
        out, _, _ = lstm_graph(lib, layers, x, (2, 2, 4))
        out.sum().backward()
        errors[lib] = (
            error_of(out.sum().backward),
            error_of(lambda out=out: out.grad_fn._saved_result3),
        )
    assert errors[ma] == errors[torch]
    assert errors[ma][0] == ("RuntimeError", FREED_MESSAGE)


def test_lstm_weight_changed_in_place_gives_torchs_error():
    layers = twins("LSTM", 3, 4)
    x = np.random.default_rng(0).standard_normal((5, 2, 3)).astype(np.float32)
    errors = {}
    for lib in LIBS:
        out, _ = layers[lib](lib.tensor(x))
        with lib.no_grad():
            layers[lib].weight_hh_l0.mul_(0.5)
        errors[lib] = error_of(out.sum().backward)
    assert errors[ma] == errors[torch]
    assert "[torch.FloatTensor [16, 4]] is at version 3; expected version 2" in errors[ma][1]


def test_lstm_under_no_grad_records_nothing():
    lstm = ma.nn.LSTM(3, 4)
    with ma.no_grad():
        out, (h_n, c_n) = lstm(ma.randn(5, 2, 3))
    assert out.grad_fn is None and h_n.grad_fn is None and not c_n.requires_grad


def test_lstm_saves_its_state_through_saved_tensor_hooks():
    packed = []

    def pack(t):
        packed.append(tuple(t.shape))
        return t

    lstm = ma.nn.LSTM(3, 4)
    with ma.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out, _ = lstm(ma.randn(5, 2, 3))
    assert (5, 2, 3) in packed and (16, 4) in packed
    out.sum().backward()
    assert lstm.weight_ih_l0.grad is not None


def test_lstm_gradients_of_gradients_match_torch():
    """create_graph=True through the fused layer: first and second derivatives, two layers."""
    layers = twins("LSTM", 3, 4, num_layers=2)
    x0 = np.random.default_rng(0).standard_normal((5, 2, 3)).astype(np.float32)
    got = {}
    for lib in LIBS:
        lstm = layers[lib]
        x = lib.tensor(x0, requires_grad=True)
        h0 = lib.tensor(np.full((2, 2, 4), 0.1, np.float32), requires_grad=True)
        out, (_, c_n) = lstm(x, (h0, h0 * 2))
        loss = (out**2).sum() + (c_n**2).sum()
        firsts = lib.autograd.grad(loss, [lstm.weight_hh_l0, x, h0], create_graph=True)
        penalty = sum((g * g).sum() for g in firsts)
        seconds = lib.autograd.grad(penalty, [lstm.weight_hh_l0, lstm.bias_ih_l1, x, h0])
        got[lib] = (*firsts, *seconds)
    for k, (mine, theirs) in enumerate(zip(got[ma], got[torch])):
        assert_close(mine, theirs, f"derivative {k}", rtol=1e-4, atol=1e-5)


BAD_CALLS = {
    "hx of the wrong batch": lambda lib: ((5, 2, 3), ((1, 3, 4), (1, 2, 4))),
    "cx of the wrong layers": lambda lib: ((5, 2, 3), ((1, 2, 4), (2, 2, 4))),
    "4-D input": lambda lib: ((5, 2, 3, 1), None),
    "1-D input": lambda lib: ((3,), None),
    "wrong input size": lambda lib: ((5, 2, 2), None),
    "3-D state for 2-D input": lambda lib: ((5, 3), ((1, 2, 4), (1, 2, 4))),
    "2-D state for 3-D input": lambda lib: ((5, 2, 3), ((2, 4), (1, 2, 4))),
}


@pytest.mark.parametrize(
    "name, case",
    [("LSTM", case) for case in BAD_CALLS]
    + [("RNN", case) for case in BAD_CALLS if "cx" not in case],
)
def test_recurrent_layers_reject_bad_shapes_with_torchs_errors(name, case):
    layers = twins(name, 3, 4)
    errors = {}
    for lib in LIBS:
        x_shape, state_shapes = BAD_CALLS[case](lib)
        state = None if state_shapes is None else tuple(lib.zeros(*s) for s in state_shapes)
        if name == "RNN" and state is not None:
            state = state[0]
        errors[lib] = error_of(layers[lib], lib.zeros(*x_shape), state)
    assert errors[ma] is not None and errors[ma] == errors[torch]


def test_recurrent_input_of_another_dtype_says_how_to_convert():
    error = error_of(ma.nn.LSTM(3, 4), ma.zeros(5, 2, 3, dtype=ma.float64))
    assert error == (
        "ValueError",
        "RNN input dtype (mini_autograd.float64) does not match weight dtype "
        "(mini_autograd.float32). Convert input: input.to(mini_autograd.float32)",
    )


def test_lstm_bias_gradients_do_not_share_memory():
    """Both biases get the same values, as two tensors: changing one in place leaves the other."""
    lstm = ma.nn.LSTM(3, 4)
    out, _ = lstm(ma.randn(5, 2, 3))
    g_ih, g_hh = ma.autograd.grad(out.sum(), [lstm.bias_ih_l0, lstm.bias_hh_l0])
    np.testing.assert_array_equal(g_ih.numpy(), g_hh.numpy())
    assert not np.shares_memory(g_ih.numpy(), g_hh.numpy())


OPTIMIZERS = {
    "SGD": {"lr": 0.01},
    "SGD momentum, dampening": {"lr": 0.01, "momentum": 0.5, "dampening": 0.1},
    "SGD nesterov, weight decay": {
        "lr": 0.01,
        "momentum": 0.9,
        "weight_decay": 0.01,
        "nesterov": True,
    },
    "Adam": {"lr": 0.01},
    "Adam weight decay": {"lr": 0.01, "weight_decay": 0.1},
}


@pytest.mark.parametrize("case", OPTIMIZERS, ids=str)
def test_optimizers_match_torch_over_five_steps(case):
    got = {}
    for lib in LIBS:
        w = lib.tensor(np.array([1.0, -2.0, 3.0], np.float32), requires_grad=True)
        optimizer = getattr(lib.optim, case.split()[0])([w], **OPTIMIZERS[case])
        for _ in range(5):
            optimizer.zero_grad()
            (w**2).sum().backward()
            optimizer.step()
        got[lib] = w
    assert_close(got[ma], got[torch], case, rtol=1e-6, atol=1e-7)
