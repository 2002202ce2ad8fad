"""Module hooks, torch.nn.modules' paths, nn.utils, DataParallel and the recurrent layers
(RNN, LSTM, GRU and their cells), against torch itself.

Each test runs the same program with both libraries (same inputs, same seed, so the same
weights) and compares what the program sees: hook calls and their arguments, values, gradients,
graphs (node names, edges, `_saved_*` names and values), reprs, warnings and error texts.
"""

import importlib
import warnings

import numpy as np
import pytest
import torch

import mini_autograd as ma
from tests.parity_helpers import LIBS, assert_close, describe_graph, error_of


def arrays(*shapes, seed=1):
    """Fixed float32 inputs of these shapes."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(np.float32) for shape in shapes]


def rounded(t):
    """A tensor (or None) as a comparable nested list."""
    return None if t is None else np.round(t.detach().numpy().astype(np.float64), 5).tolist()


def same_graph(mine, theirs, atol=1e-5, skip=()):
    """The two graphs have the same nodes, edges and saved names, and saved values to atol."""
    m_graph, t_graph = describe_graph(mine), describe_graph(theirs)
    assert (m_graph is None) == (t_graph is None)
    assert [n["name"] for n in m_graph] == [n["name"] for n in t_graph]
    for m_node, t_node in zip(m_graph, t_graph):
        assert m_node.keys() == t_node.keys()
        assert m_node["edges"] == t_node["edges"], t_node["name"]
        assert m_node["saved"] == t_node["saved"], t_node["name"]
        assert m_node.get("variable") == t_node.get("variable")
        for name, value in t_node["values"].items():
            got = m_node["values"][name]
            if name in skip:
                continue
            if isinstance(value, tuple) and value[:1] == ("tensor",):
                assert got[:2] == value[:2], (t_node["name"], name)
                np.testing.assert_allclose(got[2], value[2], atol=atol, err_msg=name)
            else:
                assert got == value, (t_node["name"], name)


# --- exports -------------------------------------------------------------------------------
def test_normalization_is_exported_like_torch():
    from mini_autograd.nn import normalization

    for name in ("BatchNorm1d", "BatchNorm2d", "LayerNorm"):
        assert getattr(ma.nn, name) is getattr(normalization, name)
    x = arrays((4, 3))[0]
    got = {}
    for lib in LIBS:
        F = lib.nn.functional
        ones, zeros = lib.ones(3), lib.zeros(3)
        got[lib] = (
            F.layer_norm(lib.tensor(x), (3,)),
            F.batch_norm(lib.tensor(x), zeros, ones, training=True),
        )
    for mine, theirs in zip(got[ma], got[torch]):
        assert_close(mine, theirs, rtol=1e-5, atol=1e-6)


# --- forward hooks -------------------------------------------------------------------------
def _scaled(lib):
    """A module whose forward takes a keyword: forward(x, scale=1.0) = x * scale."""

    class Scaled(lib.nn.Module):
        def forward(self, x, scale=1.0):
            return x * scale

    return Scaled()


def forward_hook_log(lib):
    """Every forward hook kind on one module: what each sees and returns, in call order."""
    log = []
    module = _scaled(lib)

    def pre(name, new_args=None):
        return lambda m, args: log.append((name, rounded(args[0]))) or new_args

    module.register_forward_pre_hook(pre("pre", lib.tensor([10.0])))  # a single value: wrapped
    module.register_forward_pre_hook(pre("pre first"), prepend=True)
    module.register_forward_pre_hook(
        lambda m, args, kwargs: log.append(("pre kwargs", dict(kwargs))) or (args, {"scale": 3.0}),
        with_kwargs=True,
    )
    module.register_forward_hook(lambda m, args, out: log.append(("hook", rounded(out))) or out + 1)
    module.register_forward_hook(
        lambda m, args, kwargs, out: log.append(("hook kwargs", kwargs, rounded(out))),
        with_kwargs=True,
    )
    removed = module.register_forward_hook(lambda m, args, out: log.append("removed"))
    removed.remove()
    removed.remove()  # twice is fine
    with module.register_forward_pre_hook(lambda m, args: log.append("inside with")):
        log.append(("output", rounded(module(lib.tensor([2.0]), scale=5.0))))
    log.append(("output", rounded(module(lib.tensor([2.0])))))
    return log


def test_forward_hooks_run_in_torchs_order_with_torchs_arguments():
    assert forward_hook_log(ma) == forward_hook_log(torch)
    assert forward_hook_log(ma)[-1] == ("output", [31.0])  # 10 * 3 + 1


def always_call_log(lib):
    """Forward raises: the always_call hooks still run (a failing one is reported as a warning)."""
    log = []

    class Broken(lib.nn.Module):
        def forward(self, x):
            raise ValueError("forward failed")

    module = Broken()
    module.register_forward_hook(lambda m, args, out: log.append("plain"))
    module.register_forward_hook(lambda m, args, out: log.append(("always", out)), always_call=True)
    module.register_forward_hook(lambda m, args, out: 1 / 0, always_call=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        log.append(error_of(module, lib.zeros(1)))
    return log, [str(w.message) for w in caught]


def test_always_called_forward_hooks_run_when_forward_raises_like_torch():
    assert always_call_log(ma) == always_call_log(torch)


def test_bad_forward_pre_hook_result_gives_torchs_error():
    errors = {}
    for lib in LIBS:
        module = _scaled(lib)
        module.register_forward_pre_hook(lambda m, args, kwargs: "oops", with_kwargs=True)
        errors[lib] = error_of(module, lib.zeros(1))
    assert errors[ma] == errors[torch] and errors[ma][0] == "RuntimeError"


def global_hook_log(lib):
    """Hooks of every module (nn.modules.module's), and one module's own, on a Sequential."""
    log = []
    model = lib.nn.Sequential(lib.nn.Tanh(), lib.nn.ReLU())
    own = model[1]
    own.register_forward_pre_hook(lambda m, args: log.append(("own pre", type(m).__name__)))
    own.register_forward_hook(lambda m, args, out: log.append(("own", type(m).__name__)))
    own.register_full_backward_hook(lambda m, gi, go: log.append(("own backward", rounded(gi[0]))))
    hooks = lib.nn.modules.module
    handles = [
        hooks.register_module_forward_pre_hook(
            lambda m, args: log.append(("pre", type(m).__name__))
        ),
        hooks.register_module_forward_hook(
            lambda m, args, out: log.append(("global", type(m).__name__))
        ),
        hooks.register_module_full_backward_hook(
            lambda m, gi, go: log.append(("backward", type(m).__name__, rounded(gi[0])))
        ),
    ]
    try:
        model(lib.tensor([0.5, -1.0], requires_grad=True)).sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    model(lib.zeros(2))  # removed: only the module's own hooks run
    return log


def test_hooks_of_every_module_run_first_like_torch():
    log = global_hook_log(ma)
    assert log == global_hook_log(torch)
    assert log[-2:] == [("own pre", "ReLU"), ("own", "ReLU")] and log[0] == ("pre", "Sequential")


# --- backward hooks ------------------------------------------------------------------------
def _two_outputs(lib):
    class Two(lib.nn.Module):
        def forward(self, a, b, flag=None):
            return a * b, a + 1

    return Two()


def backward_hook_log(lib, use_second_output=True, b_requires_grad=False):
    """Full backward hooks and pre-hooks on a module with two inputs (and a non-tensor one) and
    two outputs: what they see, what the graph looks like, the gradients that arrive."""
    log = []
    module = _two_outputs(lib)

    def pre_hook(m, grad_output):
        log.append(("pre", [rounded(g) for g in grad_output]))
        return (grad_output[0] * 2, grad_output[1])

    def hook(m, grad_input, grad_output):
        log.append(("hook", [rounded(g) for g in grad_input], [rounded(g) for g in grad_output]))
        return (grad_input[0] + 100, *grad_input[1:])

    module.register_full_backward_pre_hook(pre_hook)
    module.register_full_backward_hook(hook)
    module.register_full_backward_hook(
        lambda m, gi, go: log.append(("first", len(gi))), prepend=True
    )
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, -1.0], requires_grad=b_requires_grad)
    x, y = module(a, b, "not a tensor")
    log.append([n["name"] for n in describe_graph(x)])
    loss = (x * lib.tensor([1.0, 2.0])).sum()
    if use_second_output:
        loss = loss + y.sum()
    loss.backward()
    log.append(("a.grad", rounded(a.grad), "b.grad", rounded(b.grad)))
    return log


@pytest.mark.parametrize("second", [True, False], ids=["both outputs", "one output"])
@pytest.mark.parametrize("b_grad", [False, True], ids=["b constant", "b requires grad"])
def test_full_backward_hooks_see_and_change_torchs_gradients(second, b_grad):
    mine = backward_hook_log(ma, second, b_grad)
    assert mine == backward_hook_log(torch, second, b_grad)
    assert mine[0][0] == "BackwardHookFunctionBackward"  # the outputs' boundary node


def constant_input_log(lib):
    """A full backward hook on a Linear layer whose input needs no gradient."""
    log = []
    lib.manual_seed(0)
    layer = lib.nn.Linear(2, 2)
    layer.register_full_backward_hook(
        lambda m, gi, go: log.append((gi, [tuple(g.shape) for g in go]))
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        layer(lib.ones(1, 2)).sum().backward()
    return log, [str(w.message) for w in caught], rounded(layer.weight.grad)


def test_backward_hook_on_a_layer_fires_at_its_outputs_when_no_input_needs_grad():
    got = constant_input_log(ma)
    assert got == constant_input_log(torch)
    assert got[0] == [((None,), [(1, 2)])] and len(got[1]) == 1


BAD_BACKWARD_HOOKS = {
    "hook returns too many": ("register_full_backward_hook", lambda m, gi, go: (gi[0], gi[0])),
    "pre-hook returns too many": ("register_full_backward_pre_hook", lambda m, go: (go[0],) * 2),
}


@pytest.mark.parametrize("case", BAD_BACKWARD_HOOKS, ids=str)
def test_bad_backward_hook_results_give_torchs_errors(case):
    method, hook = BAD_BACKWARD_HOOKS[case]
    errors = {}
    for lib in LIBS:
        module = lib.nn.Tanh()
        getattr(module, method)(hook)
        out = module(lib.ones(2, requires_grad=True))
        errors[lib] = error_of(out.sum().backward)
    assert errors[ma] == errors[torch] and errors[ma][0] == "RuntimeError"


def nested_hook_log(lib):
    """Backward hooks and pre-hooks on a Sequential and on each of its layers."""
    log = []
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1))
    for name, module in model.named_modules():
        module.register_full_backward_pre_hook(
            lambda m, go, name=name: log.append(("pre", name, rounded(go[0])))
        )
        module.register_full_backward_hook(
            lambda m, gi, go, name=name: log.append(("hook", name, rounded(gi[0])))
        )
    x = lib.tensor(arrays((2, 3))[0], requires_grad=True)
    model(x).sum().backward()
    return [*log, rounded(x.grad)]


def test_backward_hooks_of_nested_modules_run_in_torchs_order():
    assert nested_hook_log(ma) == nested_hook_log(torch)


def test_backward_hooks_warn_like_torch_when_the_output_is_not_a_tensor():
    got = {}
    for lib in LIBS:

        class Boxed(lib.nn.Module):
            def forward(self, x):
                return {"y": x * 2}

        module = Boxed()
        module.register_full_backward_hook(lambda m, gi, go: None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = module(lib.ones(1, requires_grad=True))
        got[lib] = ([str(w.message) for w in caught], rounded(out["y"]))
    assert got[ma] == got[torch] and len(got[ma][0]) == 1


# --- torch.nn.modules' paths ---------------------------------------------------------------
MODULE_PATHS = [
    ("activation", "ReLU"),
    ("activation", "Softmax"),
    ("batchnorm", "BatchNorm1d"),
    ("container", "Sequential"),
    ("container", "ModuleList"),
    ("dropout", "Dropout"),
    ("flatten", "Flatten"),
    ("linear", "Linear"),
    ("linear", "Identity"),
    ("loss", "MSELoss"),
    ("loss", "CrossEntropyLoss"),
    ("module", "Module"),
    ("normalization", "LayerNorm"),
    ("rnn", "LSTM"),
    ("rnn", "GRU"),
    ("rnn", "RNNBase"),
    ("sparse", "Embedding"),
]


@pytest.mark.parametrize("file, name", MODULE_PATHS, ids=lambda p: p)
def test_torch_nn_modules_paths_name_the_same_classes(file, name):
    for lib in LIBS:
        path = f"{lib.__name__}.nn.modules.{file}"
        assert getattr(importlib.import_module(path), name) is getattr(lib.nn, name)
        assert getattr(lib.nn.modules, name) is getattr(lib.nn, name)


def test_parameter_and_module_hooks_have_torchs_paths():
    assert ma.nn.parameter.Parameter is ma.nn.Parameter
    for lib in LIBS:
        module = lib.nn.modules.module
        for name in (
            "register_module_forward_hook",
            "register_module_forward_pre_hook",
            "register_module_full_backward_hook",
            "register_module_full_backward_pre_hook",
        ):
            assert callable(getattr(module, name))


# --- nn.utils ------------------------------------------------------------------------------
def clip_log(lib, clip):
    """clip(parameters) on three gradients: the result, the gradients, their versions."""
    params = [lib.ones(*shape, requires_grad=True) for shape in ((2, 2), (3,), (1,))]
    for p, grad in zip(params, ([[1.0, -5.0], [2.0, 0.5]], [3.0, 4.0, -1.0], [0.0])):
        p.grad = lib.tensor(grad)
    versions = [p.grad._version for p in params]
    result = clip(lib, params)
    grads = [rounded(p.grad) for p in params]
    bumps = [p.grad._version - v for p, v in zip(params, versions)]
    if isinstance(result, (torch.Tensor, ma.Tensor)):
        result = (rounded(result), str(result.dtype).split(".")[-1])
    return result, grads, bumps


CLIPS = {
    "norm, clipped": lambda lib, ps: lib.nn.utils.clip_grad_norm_(ps, 1.0),
    "norm, left alone": lambda lib, ps: lib.nn.utils.clip_grad_norm_(ps, 100.0),
    "norm 1": lambda lib, ps: lib.nn.utils.clip_grad_norm_(ps, 2.0, norm_type=1),
    "norm inf": lambda lib, ps: lib.nn.utils.clip_grad_norm_(ps, 2.0, norm_type="inf"),
    "norm, foreach": lambda lib, ps: lib.nn.utils.clip_grad_norm_(ps, 1.0, foreach=True),
    "norm, one tensor": lambda lib, ps: lib.nn.utils.clip_grad_norm_(ps[0], 1.0),
    "norm, nothing": lambda lib, ps: lib.nn.utils.clip_grad_norm_([], 1.0),
    "value": lambda lib, ps: lib.nn.utils.clip_grad_value_(ps, 2.0),
    "value, no foreach": lambda lib, ps: lib.nn.utils.clip_grad_value_(ps, 2.0, foreach=False),
}


@pytest.mark.parametrize("case", CLIPS, ids=str)
def test_gradient_clipping_matches_torch(case):
    assert clip_log(ma, CLIPS[case]) == clip_log(torch, CLIPS[case])


def test_clip_grad_norm_errors_and_warnings_are_torchs():
    got = {}
    for lib in LIBS:
        w = lib.ones(3, requires_grad=True)
        w.grad = lib.tensor([float("inf"), 1.0, 1.0])
        error = error_of(lib.nn.utils.clip_grad_norm_, w, 1.0, error_if_nonfinite=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.utils.clip_grad_norm_((p for p in []), 1.0)
        got[lib] = (error, [str(c.message) for c in caught])
    assert got[ma] == got[torch] and got[ma][0][0] == "RuntimeError"


def test_parameters_to_vector_and_back_match_torch():
    got = {}
    for lib in LIBS:
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 2)
        vec = lib.nn.utils.parameters_to_vector(model.parameters())
        (vec * lib.arange(8.0)).sum().backward()
        grads = [rounded(p.grad) for p in model.parameters()]
        lib.nn.utils.vector_to_parameters(lib.arange(8.0), model.parameters())
        bad = error_of(lib.nn.utils.vector_to_parameters, [1.0], model.parameters())
        got[lib] = (vec.grad_fn.name(), rounded(vec), grads, rounded(model.weight), bad)
    assert got[ma] == got[torch]


# --- DataParallel --------------------------------------------------------------------------
def test_data_parallel_without_gpus_is_the_module_itself_like_torch():
    got = {}
    for lib in LIBS:
        lib.manual_seed(0)
        inner = lib.nn.Linear(3, 2)
        model = lib.nn.DataParallel(inner)
        out = model(lib.tensor(arrays((4, 3))[0]))
        got[lib] = (repr(model), list(model.state_dict()), model.device_ids, rounded(out))
        assert model.module is inner and isinstance(model, lib.nn.parallel.DataParallel)
    assert got[ma] == got[torch]
    loaded = ma.nn.DataParallel(ma.nn.Linear(3, 2))
    loaded.load_state_dict(torch.nn.DataParallel(torch.nn.Linear(3, 2)).state_dict())


# --- linear: PyTorch's three ways of recording it -------------------------------------------
LINEAR_INPUTS = {
    "2-D": lambda lib: lib.tensor(arrays((2, 4))[0], requires_grad=True),
    "3-D": lambda lib: lib.tensor(arrays((2, 3, 4))[0], requires_grad=True),
    "3-D transposed": lambda lib: lib.tensor(arrays((3, 2, 4))[0], requires_grad=True).transpose(
        0, 1
    ),
    "1-D": lambda lib: lib.tensor(arrays((4,))[0], requires_grad=True),
}


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no bias"])
@pytest.mark.parametrize("case", LINEAR_INPUTS, ids=str)
def test_linear_records_torchs_graph(case, bias):
    w, b = arrays((5, 4), (5,), seed=2)
    outs = {}
    for lib in LIBS:
        weight = lib.tensor(w, requires_grad=True)
        outs[lib] = lib.nn.functional.linear(
            LINEAR_INPUTS[case](lib), weight, lib.tensor(b, requires_grad=True) if bias else None
        )
    same_graph(outs[ma], outs[torch])


# --- recurrent layers: the same weights from the same seed -----------------------------------
SEEDED = {
    "Linear": ((5, 3), {}),
    "Linear, 17 inputs": ((17, 2), {}),
    "Embedding": ((10, 3), {}),
    "Embedding, padding_idx": ((10, 3), {"padding_idx": 2}),
    "RNN": ((3, 4, 2), {"nonlinearity": "relu"}),
    "LSTM": ((3, 4, 2), {"bidirectional": True}),
    "GRU": ((3, 5), {"bias": False}),
    "RNNCell": ((3, 4), {}),
    "LSTMCell": ((3, 4), {}),
    "GRUCell": ((3, 4), {}),
}


def seeded(lib, case):
    name = case.split(",")[0]
    args, kwargs = SEEDED[case]
    lib.manual_seed(7)
    return getattr(lib.nn, name)(*args, **kwargs)


def assert_same_draws(mine, theirs, case):
    """Bit for bit; Embedding's N(0, 1) within 2 float32 ulps: random.py computes the
    Box-Muller transform of 16 or more normals with numpy's float32 log and cos, which may round
    differently from PyTorch's vectorised ones."""
    assert [k for k, _ in mine] == [k for k, _ in theirs]
    for (name, m), (_, t) in zip(mine, theirs):
        m, t = m.detach().numpy(), t.detach().numpy()
        if case.startswith("Embedding"):
            np.testing.assert_array_max_ulp(m, t, maxulp=2)
        else:
            np.testing.assert_array_equal(m, t, err_msg=name)


@pytest.mark.parametrize("case", SEEDED, ids=str)
def test_layers_draw_torchs_weights_from_the_same_seed(case):
    layers = {lib: seeded(lib, case) for lib in LIBS}
    assert_same_draws(*(list(layers[lib].named_parameters()) for lib in (ma, torch)), case)
    assert repr(layers[ma]) == repr(layers[torch])
    for lib in LIBS:  # reset_parameters draws again, in the same order
        lib.manual_seed(8)
        layers[lib].reset_parameters()
    assert_same_draws(*(list(layers[lib].named_parameters()) for lib in (ma, torch)), case)


# --- recurrent layers: values, gradients, graphs ---------------------------------------------
def run_recurrent(name, kwargs, x_shape, state_shapes=(), train=True):
    """Both libraries from the same seed: {lib: (outputs, input grads, parameter grads)}."""
    shapes = [x_shape, *state_shapes]
    got = {}
    for lib in LIBS:
        lib.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # dropout with one layer
            layer = getattr(lib.nn, name)(3, 4, **kwargs).train(train)
        lib.manual_seed(5)  # the dropout masks
        inputs = [lib.tensor(a, requires_grad=True) for a in arrays(*shapes)]
        state = inputs[1] if len(inputs) == 2 else tuple(inputs[1:]) or None
        result = layer(inputs[0], state) if state is not None else layer(inputs[0])
        outputs = _flat(result)
        weights = arrays(*[tuple(o.shape) for o in outputs], seed=3)
        sum((o * lib.tensor(w)).sum() for o, w in zip(outputs, weights)).backward()
        params = {k: p.grad for k, p in layer.named_parameters()}
        got[lib] = (outputs, [t.grad for t in inputs], params)
    return got


def _flat(result):
    if isinstance(result, tuple):
        return tuple(t for part in result for t in _flat(part))
    return (result,)


def assert_same_numbers(got):
    (m_out, m_in, m_params), (t_out, t_in, t_params) = got[ma], got[torch]
    for k, (mine, theirs) in enumerate([*zip(m_out, t_out), *zip(m_in, t_in)]):
        assert_close(mine, theirs, f"output or input gradient {k}", rtol=2e-5, atol=2e-6)
    assert m_params.keys() == t_params.keys()
    for key in t_params:
        assert_close(m_params[key], t_params[key], f"gradient of {key}", rtol=2e-5, atol=2e-6)


RECURRENT = {
    # id: (layer kwargs, input shape, state shapes)
    "one layer": ({}, (5, 2, 3), ()),
    "two layers with a state": ({"num_layers": 2}, (5, 2, 3), [(2, 2, 4)]),
    "batch_first": ({"batch_first": True}, (2, 5, 3), ()),
    "unbatched, batch_first": ({"batch_first": True}, (5, 3), ()),
    "unbatched with a state": ({}, (5, 3), [(1, 4)]),
    "no bias": ({"bias": False}, (5, 2, 3), ()),
    "bidirectional, two layers": ({"bidirectional": True, "num_layers": 2}, (5, 2, 3), ()),
    "dropout, three layers": ({"num_layers": 3, "dropout": 0.5}, (5, 2, 3), ()),
    "dropout, one layer": ({"dropout": 0.5}, (5, 2, 3), ()),
}
CELLS = {
    "batch": ({}, (2, 3), ()),
    "one sample": ({}, (3,), ()),
    "batch with a state": ({}, (2, 3), [(2, 4)]),
    "one sample with a state": ({}, (3,), [(4,)]),
    "no bias": ({"bias": False}, (2, 3), [(2, 4)]),
}


def recurrent_cases(names, cases):
    return [
        pytest.param(name, case, id=f"{name}-{case}")
        for name in names
        for case in cases
        if not (name == "RNN" and "relu" in case)
    ]


def _states(name, shapes):
    """LSTM and LSTMCell take two states (h, c) of the same shape."""
    return [*shapes, *shapes] if name.startswith("LSTM") else list(shapes)


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("name, case", recurrent_cases(("RNN", "GRU", "LSTM"), RECURRENT))
def test_recurrent_layers_match_torch(name, case, train):
    kwargs, x_shape, states = RECURRENT[case]
    assert_same_numbers(run_recurrent(name, kwargs, x_shape, _states(name, states), train))


@pytest.mark.parametrize("name, case", recurrent_cases(("RNNCell", "GRUCell", "LSTMCell"), CELLS))
def test_cells_match_torch(name, case):
    kwargs, x_shape, states = CELLS[case]
    assert_same_numbers(run_recurrent(name, kwargs, x_shape, _states(name, states)))


def test_relu_rnn_and_cell_match_torch():
    for name, shape, states in (("RNN", (5, 2, 3), [(2, 2, 4)]), ("RNNCell", (2, 3), [(2, 4)])):
        kwargs = {"nonlinearity": "relu"} | ({"num_layers": 2} if name == "RNN" else {})
        assert_same_numbers(run_recurrent(name, kwargs, shape, states))


# LSTM with bias=False or bidirectional is left out: see test_lstm_graph_differences_are_known.
GRAPHS = recurrent_cases(("RNN", "GRU"), RECURRENT) + [
    pytest.param("LSTM", case, id=f"LSTM-{case}")
    for case in RECURRENT
    if case not in ("no bias", "bidirectional, two layers")
]


@pytest.mark.parametrize("name, case", GRAPHS)
def test_recurrent_layers_record_torchs_graph(name, case):
    """Node by node: names, edges, saved names and values (but the fused LSTM's workspace)."""
    kwargs, x_shape, states = RECURRENT[case]
    outs = {}
    for lib in LIBS:
        lib.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            layer = getattr(lib.nn, name)(3, 4, **kwargs)
        lib.manual_seed(5)
        inputs = [lib.tensor(a, requires_grad=True) for a in arrays(x_shape, *states)]
        state = tuple(inputs[1:]) * (2 if name == "LSTM" else 1) if states else None
        if name != "LSTM" and state is not None:
            state = state[0]
        outs[lib] = _flat(layer(inputs[0], state))
    for mine, theirs in zip(outs[ma], outs[torch]):
        same_graph(mine, theirs, skip={"_saved_result3"})


@pytest.mark.parametrize("name, case", recurrent_cases(("RNNCell", "GRUCell", "LSTMCell"), CELLS))
def test_cells_record_torchs_graph(name, case):
    kwargs, x_shape, states = CELLS[case]
    outs = {}
    for lib in LIBS:
        lib.manual_seed(0)
        cell = getattr(lib.nn, name)(3, 4, **kwargs)
        inputs = [lib.tensor(a, requires_grad=True) for a in arrays(x_shape, *states)]
        state = None
        if states:
            state = (inputs[1], inputs[1] * 2) if name == "LSTMCell" else inputs[1]
        outs[lib] = _flat(cell(inputs[0], state))
    for mine, theirs in zip(outs[ma], outs[torch]):
        same_graph(mine, theirs)


def test_gru_gates_are_torchs_unsafe_split_in_order_r_z_n():
    cell = ma.nn.GRUCell(3, 4)
    h = cell(ma.randn(2, 3))
    names = {n["name"] for n in describe_graph(h, values=False)}
    assert "UnsafeSplitBackward0" in names and "SliceBackward0" not in names


def test_lstm_graph_differences_are_known():
    """Two documented differences, until ops/rnn.py's layer takes `reverse` and `has_biases`:
    the reverse direction runs on a flipped sequence (FlipBackward0 around its node), and
    without biases the node receives zero biases (so it saves has_biases=True)."""
    x = ma.tensor(arrays((5, 2, 3))[0], requires_grad=True)
    out, _ = ma.nn.LSTM(3, 4, bidirectional=True)(x)
    names = [n["name"] for n in describe_graph(out, values=False)]
    assert names.count("MkldnnRnnLayerBackward0") == 2 and names.count("FlipBackward0") == 2
    out, _ = ma.nn.LSTM(3, 4, bias=False)(x)
    assert out.grad_fn.next_functions[3:5] == ((None, 0), (None, 0))  # as in torch


@pytest.mark.parametrize("kwargs", [{"num_layers": 2, "bidirectional": True}, {"bias": False}])
def test_recurrent_layers_keep_torchs_weight_lists(kwargs):
    """_flat_weights_names, _flat_weights and all_weights: the parameters, by layer and direction."""
    listed = {}
    for lib in LIBS:
        layer = lib.nn.GRU(3, 4, **kwargs)
        params = dict(layer.named_parameters())
        by_name = {id(p): name for name, p in params.items()}
        assert layer.flatten_parameters() is None
        listed[lib] = (
            layer._flat_weights_names,
            [by_name[id(w)] for w in layer._flat_weights],
            [[by_name[id(w)] for w in ws] for ws in layer.all_weights],
        )
    assert listed[ma] == listed[torch]


# --- recurrent layers: settings and calls PyTorch refuses -------------------------------------
BAD_SETTINGS = {
    "dropout above 1": ("LSTM", (3, 4), {"dropout": 1.5}),
    "dropout a bool": ("GRU", (3, 4), {"dropout": True}),
    "unknown nonlinearity": ("RNN", (3, 4), {"nonlinearity": "sigmoid"}),
    "proj_size for GRU": ("GRU", (3, 4), {"proj_size": 2}),
    "bias not a bool": ("RNN", (3, 4), {"bias": 1}),
    "hidden_size zero": ("GRU", (3, 0), {}),
    "input_size a float": ("LSTM", (3.0, 4), {}),
    "no layers": ("GRU", (3, 4), {"num_layers": 0}),
}


@pytest.mark.parametrize("case", BAD_SETTINGS, ids=str)
def test_bad_recurrent_settings_give_torchs_errors(case):
    name, args, kwargs = BAD_SETTINGS[case]
    errors = {lib: error_of(getattr(lib.nn, name), *args, **kwargs) for lib in LIBS}
    assert errors[ma] is not None and errors[ma] == errors[torch]


def test_dropout_with_one_layer_warns_like_torch():
    messages = {}
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.GRU(3, 4, dropout=0.25)
        messages[lib] = [str(w.message) for w in caught]
    assert messages[ma] == messages[torch] and len(messages[ma]) == 1


BAD_CALLS = {
    # id: (layer, input shape, state shapes)
    "GRU: 4-D input": ("GRU", (5, 2, 3, 1), None),
    "GRU: wrong input size": ("GRU", (5, 2, 2), None),
    "GRU: state of the wrong batch": ("GRU", (5, 2, 3), [(1, 3, 4)]),
    "GRU: 3-D state for 2-D input": ("GRU", (5, 3), [(1, 2, 4)]),
    "GRU: 2-D state for 3-D input": ("GRU", (5, 2, 3), [(2, 4)]),
    "GRU: empty sequence": ("GRU", (0, 2, 3), None),
    "RNN: empty sequence": ("RNN", (0, 2, 3), None),
    "GRU bidirectional: one direction's state": ("GRU-bi", (5, 2, 3), [(1, 2, 4)]),
    "LSTM bidirectional: one direction's state": ("LSTM-bi", (5, 2, 3), [(1, 2, 4), (2, 2, 4)]),
    "RNNCell: wrong input size": ("RNNCell", (2, 2), None),
    "RNNCell: state of the wrong batch": ("RNNCell", (2, 3), [(3, 4)]),
    "GRUCell: state of the wrong size": ("GRUCell", (2, 3), [(2, 5)]),
    "GRUCell: 3-D input": ("GRUCell", (2, 3, 1), None),
    "GRUCell: 3-D state": ("GRUCell", (2, 3), [(1, 2, 4)]),
    "LSTMCell: c of the wrong size": ("LSTMCell", (2, 3), [(2, 4), (2, 5)]),
    "LSTMCell: 3-D c": ("LSTMCell", (2, 3), [(2, 4), (1, 2, 4)]),
}


@pytest.mark.parametrize("case", BAD_CALLS, ids=str)
def test_bad_recurrent_calls_give_torchs_errors(case):
    name, x_shape, state_shapes = BAD_CALLS[case]
    errors = {}
    for lib in LIBS:
        layer_name, _, bi = name.partition("-")
        layer = getattr(lib.nn, layer_name)(3, 4, bidirectional=True) if bi else None
        layer = layer or getattr(lib.nn, layer_name)(3, 4)
        states = None if state_shapes is None else [lib.zeros(*s) for s in state_shapes]
        if states is not None:
            states = tuple(states) if len(states) == 2 else states[0]
        args = (lib.zeros(*x_shape),) + (() if states is None else (states,))
        errors[lib] = error_of(layer, *args)
    assert errors[ma] is not None and errors[ma] == errors[torch]


def test_relu_cell_with_an_unknown_nonlinearity_fails_when_called_like_torch():
    errors = {}
    for lib in LIBS:
        cell = lib.nn.RNNCell(3, 4, nonlinearity="sigmoid")
        errors[lib] = error_of(cell, lib.zeros(2, 3))
    assert errors[ma] == errors[torch] == ("RuntimeError", "Unknown nonlinearity: sigmoid")


def test_recurrent_reprs_are_torchs():
    for name, args, kwargs in (
        ("GRU", (3, 4, 2), {"bias": False, "batch_first": True, "dropout": 0.5}),
        ("RNN", (3, 4), {"nonlinearity": "relu", "bidirectional": True}),
        ("LSTM", (3, 4), {}),
        ("RNNCell", (3, 4), {"bias": False, "nonlinearity": "relu"}),
        ("GRUCell", (3, 4), {}),
    ):
        assert repr(getattr(ma.nn, name)(*args, **kwargs)) == repr(
            getattr(torch.nn, name)(*args, **kwargs)
        )


# --- activations -----------------------------------------------------------------------------
def test_relu_in_place_is_torchs():
    got = {}
    for lib in LIBS:
        x = lib.tensor([-1.0, 2.0, -3.0], requires_grad=True)
        y = x * 2
        out = lib.nn.ReLU(inplace=True)(y)
        got[lib] = (out is y, y._version, describe_graph(out), repr(lib.nn.ReLU(inplace=True)))
        out.sum().backward()
        got[lib] += (rounded(x.grad), rounded(lib.nn.functional.relu(x)), repr(lib.nn.ReLU()))
    assert got[ma] == got[torch]
