"""The torch.nn surface tutorials use, against torch itself: losses, dropout, embedding,
activations, containers, nn.init and Module's methods.

Each test runs the same program on both libraries (same inputs, same weights, same seed) and
compares values, gradients, graphs (node names, edges, `_saved_*` names and values), freeing,
reprs and error texts.
"""

import copy
import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch
from op_catalogue_nn import LABELS, PROBS, TARGET, WEIGHT, F, X, const

import mini_autograd as ma
from tests.parity_helpers import (
    LIBS,
    assert_close,
    compare_nested,
    derivatives,
    describe_graph,
    error_of,
    outcome,
    same_on_both,
    weights_like,
)

pytestmark = pytest.mark.filterwarnings("ignore:Using a target size:UserWarning")


def test_bce_of_saturated_probabilities_matches_torch():
    """float32 sigmoids of large logits are exactly 0 or 1 (or below 1e-12): logs clamp at -100,
    the gradient's denominator at 1e-12."""
    logits = np.array([-40.0, -28.0, -3.0, 0.0, 3.0, 20.0], np.float32)
    target = np.array([1.0, 1.0, 0.0, 1.0, 1.0, 0.0], np.float32)
    got = {}
    for lib in LIBS:
        z = lib.tensor(logits, requires_grad=True)
        p = z.sigmoid()
        p.retain_grad()
        loss = F(lib).binary_cross_entropy(p, lib.tensor(target), reduction="sum")
        loss.backward()
        got[lib] = (loss, p.grad, z.grad)
    for k, (mine, theirs) in enumerate(zip(got[ma], got[torch])):
        assert_close(mine, theirs, f"output {k}", rtol=1e-6, atol=0)


def test_cross_entropy_with_float32_scores_matches_torch():
    scores = X.astype(np.float32)
    got = {}
    for lib in LIBS:
        x = lib.tensor(scores, requires_grad=True)
        loss = F(lib).cross_entropy(x, lib.tensor(LABELS))
        loss.backward()
        got[lib] = (loss, x.grad, loss.dtype == lib.float32)
    assert_close(got[ma][0], got[torch][0], "loss", rtol=1e-6)
    assert_close(got[ma][1], got[torch][1], "grad", rtol=1e-5, atol=1e-7)
    assert got[ma][2] and got[torch][2]


LOSS_MODULES = {
    # id: (class name, kwargs, fn(lib, module) -> loss)
    "MSELoss": ("MSELoss", {}, lambda lib, m: m(const(lib, X), const(lib, TARGET))),
    "L1Loss sum": (
        "L1Loss",
        {"reduction": "sum"},
        lambda lib, m: m(const(lib, X), const(lib, TARGET)),
    ),
    "BCELoss": ("BCELoss", {}, lambda lib, m: m(const(lib, PROBS), const(lib, TARGET))),
    "BCEWithLogitsLoss pos_weight": (
        "BCEWithLogitsLoss",
        {"pos_weight": WEIGHT},
        lambda lib, m: m(const(lib, X), const(lib, TARGET)),
    ),
    "CrossEntropyLoss weight": (
        "CrossEntropyLoss",
        {"weight": WEIGHT, "ignore_index": 1},
        lambda lib, m: m(const(lib, X), const(lib, LABELS)),
    ),
    "NLLLoss none": (
        "NLLLoss",
        {"reduction": "none"},
        lambda lib, m: m(const(lib, np.log(PROBS)), const(lib, LABELS)),
    ),
}


@pytest.mark.parametrize("case", LOSS_MODULES, ids=str)
def test_loss_modules_match_torch(case):
    """Value, repr, attributes and state_dict (weight, pos_weight are buffers) of each loss layer."""
    name, kwargs, fn = LOSS_MODULES[case]
    got = {}
    for lib in LIBS:
        args = {k: const(lib, v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
        module = getattr(lib.nn, name)(**args)
        got[lib] = (fn(lib, module), repr(module), module.reduction, list(module.state_dict()))
    assert_close(got[ma][0], got[torch][0], case, rtol=1e-12)
    assert got[ma][1:] == got[torch][1:]


LOSS_ERRORS = {
    "cross_entropy: batch sizes differ": lambda lib: F(lib).cross_entropy(
        lib.zeros(3, 4), lib.tensor([0, 1])
    ),
    "cross_entropy: target too large": lambda lib: F(lib).cross_entropy(
        lib.zeros(3, 4), lib.tensor([0, 1, 5])
    ),
    "cross_entropy: negative target": lambda lib: F(lib).cross_entropy(
        lib.zeros(3, 4), lib.tensor([0, -1, 2])
    ),
    "cross_entropy: float target": lambda lib: F(lib).cross_entropy(
        lib.zeros(3, 4), lib.tensor([0.0, 1.0, 2.0])
    ),
    "cross_entropy: int32 target": lambda lib: F(lib).cross_entropy(
        lib.zeros(3, 4), lib.tensor([0, 1, 2], dtype=lib.int32)
    ),
    "cross_entropy: weight of the wrong size": lambda lib: F(lib).cross_entropy(
        lib.zeros(3, 4), lib.tensor([0, 1, 2]), lib.ones(3)
    ),
    "nll_loss: 2-D target": lambda lib: F(lib).nll_loss(
        lib.zeros(3, 4), lib.zeros(3, 4, dtype=lib.int64)
    ),
    "nll_loss: 0-D input": lambda lib: F(lib).nll_loss(lib.zeros(()), lib.tensor(0)),
    "mse_loss: bad reduction": lambda lib: F(lib).mse_loss(
        lib.zeros(3), lib.zeros(3), reduction="avg"
    ),
    "MSELoss: bad reduction": lambda lib: lib.nn.MSELoss(reduction="avg")(
        lib.zeros(3), lib.zeros(3)
    ),
    "l1_loss: shapes that do not broadcast": lambda lib: F(lib).l1_loss(
        lib.zeros(3, 4), lib.zeros(3)
    ),
    "bce: target of another shape": lambda lib: F(lib).binary_cross_entropy(
        lib.zeros(3, 4), lib.zeros(3)
    ),
    "bce: input above 1": lambda lib: F(lib).binary_cross_entropy(
        lib.full((3,), 1.5), lib.zeros(3)
    ),
    "bce: NaN input": lambda lib: F(lib).binary_cross_entropy(
        lib.full((3,), float("nan")), lib.zeros(3)
    ),
    "bce: int target": lambda lib: F(lib).binary_cross_entropy(
        lib.zeros(3), lib.zeros(3, dtype=lib.int64)
    ),
    "bce: bad reduction, then other shapes": lambda lib: F(lib).binary_cross_entropy(
        lib.zeros(3, 4), lib.zeros(3), reduction="avg"
    ),
    "bce_with_logits: bad reduction, then other shapes": lambda lib: F(
        lib
    ).binary_cross_entropy_with_logits(lib.zeros(3, 4), lib.zeros(4), reduction="avg"),
    "bce_with_logits: target of another shape": lambda lib: F(lib).binary_cross_entropy_with_logits(
        lib.zeros(3, 4), lib.zeros(4)
    ),
}


@pytest.mark.parametrize("case", LOSS_ERRORS, ids=str)
def test_bad_loss_calls_raise_torchs_errors(case):
    assert same_on_both(LOSS_ERRORS[case])[0] == "raises"


def test_losses_warn_like_torch_when_the_target_broadcasts():
    messages = {}
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            F(lib).mse_loss(lib.zeros(3, 4), lib.zeros(4))
            F(lib).l1_loss(lib.zeros(3, 1), lib.zeros(3))
        messages[lib] = [(w.category, str(w.message)) for w in caught]
    assert len(messages[ma]) == 2 and messages[ma] == messages[torch]


# --- smooth L1 and Huber losses, one_hot, LeakyReLU(inplace) ----------------------------------
DIFFS = np.array([[-2.5, -0.4, 0.0], [0.3, 1.0, 3.5]])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize(
    "loss, options",
    [("smooth_l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}), ("huber_loss", {"delta": 2.0})],
)
def test_smooth_losses_match_torch(loss, options, reduction):
    def run(lib):
        x = lib.tensor(DIFFS, requires_grad=True)
        target = lib.tensor(np.full((2, 3), 0.1))
        out = getattr(lib.nn.functional, loss)(x, target, reduction=reduction, **options)
        saved = sorted(a for a in dir(out.grad_fn) if a.startswith("_saved_"))
        (out * 1.5).sum().backward()
        return out.tolist(), x.grad.tolist(), out.grad_fn.name(), saved

    got, want = run(ma), run(torch)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    assert got[2:] == want[2:]


def test_smooth_loss_modules_match_torch():
    for lib in (torch, ma):
        assert repr(lib.nn.SmoothL1Loss()) == "SmoothL1Loss()"
        assert lib.nn.HuberLoss(delta=0.5)(lib.zeros(2), lib.ones(2)).item() == pytest.approx(0.375)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.nn.functional.one_hot(lib.tensor([0, 2, 1])),
        lambda lib: lib.nn.functional.one_hot(lib.tensor([[0], [2]]), 4),
        lambda lib: lib.nn.functional.one_hot(lib.tensor([0.0, 2.0])),
        lambda lib: lib.nn.functional.one_hot(lib.tensor([0, 5]), 3),
    ],
)
def test_one_hot_matches_torch(call):
    def outcome(lib):
        try:
            out = call(lib)
        except RuntimeError as error:
            return str(error)
        return out.tolist(), str(out.dtype).split(".")[-1]

    assert outcome(ma) == outcome(torch)


def test_leaky_relu_in_place():
    def run(lib):
        layer = lib.nn.LeakyReLU(0.2, inplace=True)
        x = lib.tensor([-1.0, 2.0])
        out = layer(x)
        return repr(layer), x.tolist(), out.tolist()

    assert run(ma) == run(torch)


# --- dropout ----------------------------------------------------------------------------------
def dropout_run(lib, p, seed=7, shape=(6, 5), **kwargs):
    """Seeded dropout on a leaf: output, its gradient, its graph."""
    lib.manual_seed(seed)
    x = lib.tensor(
        np.linspace(-1, 1, np.prod(shape), dtype=np.float32).reshape(shape), requires_grad=True
    )
    y = F(lib).dropout(x, p, **kwargs)
    graph = describe_graph(y)
    (y * lib.tensor(weights_like(y).astype(np.float32))).sum().backward()
    return y, x.grad, graph


@pytest.mark.parametrize("p", [0.2, 0.5, 0.9, 1.0])
def test_dropout_draws_torchs_mask_and_records_its_graph(p):
    """On the CPU torch records dropout as input * (bernoulli(1 - p) / (1 - p)): a MulBackward0
    that saved the scaled mask as `other`; after the same seed, the same mask."""
    mine, theirs = dropout_run(ma, p), dropout_run(torch, p)
    assert_close(mine[0], theirs[0], "output", rtol=0, atol=0)
    assert_close(mine[1], theirs[1], "gradient", rtol=0, atol=0)
    assert mine[2] == theirs[2]
    assert mine[2][0]["name"] == "MulBackward0"


@pytest.mark.parametrize("kwargs", [{"training": False}, {"p": 0.0}], ids=str)
def test_dropout_that_drops_nothing_returns_its_input(kwargs):
    for lib in LIBS:
        x = lib.ones(3, requires_grad=True)
        assert F(lib).dropout(x, **kwargs) is x


def test_dropout_module_follows_train_and_eval():
    for lib in LIBS:
        model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Dropout(0.5))
        x = lib.ones(4, 2)
        assert model.training and model[1].training
        assert model.eval() is model
        assert not model.training and not model[1].training
        assert model[1](x) is x
        model.train()
        assert model[1].training and model[1](x) is not x
        assert repr(model[1]) == "Dropout(p=0.5, inplace=False)"


def test_dropout_inplace_changes_its_input_like_torch():
    got = {}
    for lib in LIBS:
        lib.manual_seed(3)
        x = lib.ones(4, 5, requires_grad=True)
        h = x * 2
        y = lib.nn.Dropout(0.5, inplace=True)(h)
        got[lib] = (y is h, h._version, describe_graph(y))
    assert got[ma] == got[torch]


@pytest.mark.parametrize("p", [1.5, -0.1])
def test_dropout_probability_out_of_range_gives_torchs_error(p):
    for make in (lambda lib: F(lib).dropout(lib.ones(2), p), lambda lib: lib.nn.Dropout(p)):
        mine, theirs = error_of(make, ma), error_of(make, torch)
        assert (
            mine
            == theirs
            == ("ValueError", f"dropout probability has to be between 0 and 1, but got {p}")
        )


# --- embedding --------------------------------------------------------------------------------
INDICES = np.array([[0, 3, 3], [1, 4, 0]])


@pytest.mark.parametrize("padding_idx", [None, 3, -1])
def test_embedding_matches_torch(padding_idx):
    """Seeded N(0, 1) table (padding row zero), lookup, gradient (repeats add up, the padding row
    gets none), the EmbeddingBackward0 node and what it saved, repr."""
    got = {}
    for lib in LIBS:
        lib.manual_seed(0)
        layer = lib.nn.Embedding(5, 3, padding_idx=padding_idx)
        table = layer.weight.detach().numpy().copy()
        y = layer(lib.tensor(INDICES))
        graph = describe_graph(y)
        (y * lib.tensor(weights_like(y).astype(np.float32))).sum().backward()
        got[lib] = (table, y, layer.weight.grad, graph, repr(layer), layer.padding_idx)
    np.testing.assert_allclose(got[ma][0], got[torch][0], atol=1e-6)
    assert_close(got[ma][1], got[torch][1], "output", rtol=0, atol=1e-6)
    assert_close(got[ma][2], got[torch][2], "gradient", rtol=1e-6, atol=1e-7)
    assert got[ma][3] == got[torch][3]
    assert got[ma][3][0]["name"] == "EmbeddingBackward0"
    assert got[ma][4:] == got[torch][4:]


@pytest.mark.parametrize("padding_idx", [None, 1])
def test_embedding_gradients_of_gradients_match_torch(padding_idx):
    """create_graph=True: the weight's gradient is an EmbeddingDenseBackwardBackward0 node."""

    def fn(lib, weight):
        return F(lib).embedding(lib.tensor(INDICES), weight, padding_idx=padding_idx) ** 2

    table = np.random.default_rng(2).standard_normal((5, 3))
    compare_nested(derivatives(ma, fn, [table], [True]), derivatives(torch, fn, [table], [True]))
    got = {}
    for lib in LIBS:
        w = lib.tensor(table, requires_grad=True)
        g = lib.tensor(np.ones((2, 3, 3)), requires_grad=True)
        y = F(lib).embedding(lib.tensor(INDICES), w, padding_idx)
        (grad,) = lib.autograd.grad(y, w, g, create_graph=True)
        (grad_of_g,) = lib.autograd.grad((grad * lib.tensor(table)).sum(), g)
        got[lib] = (describe_graph(grad), grad_of_g)
    assert got[ma][0] == got[torch][0]
    assert_close(got[ma][1], got[torch][1], "gradient of the gradient", rtol=1e-12)


def test_embedding_from_pretrained_shares_and_freezes_like_torch():
    table = np.arange(6, dtype=np.float32).reshape(3, 2)
    for lib in LIBS:
        source = lib.tensor(table)
        layer = lib.nn.Embedding.from_pretrained(source)
        assert not layer.weight.requires_grad and repr(layer) == "Embedding(3, 2)"
        source[0].fill_(10.0)
        assert layer.weight[0, 0].item() == 10.0
        assert lib.nn.Embedding.from_pretrained(source, freeze=False).weight.requires_grad


EMBEDDING_ERRORS = {
    "index too large": lambda lib: F(lib).embedding(lib.tensor([5]), lib.zeros(5, 3)),
    "negative index": lambda lib: F(lib).embedding(lib.tensor([-1]), lib.zeros(5, 3)),
    "float indices": lambda lib: F(lib).embedding(lib.tensor([1.0]), lib.zeros(5, 3)),
    "padding_idx too large": lambda lib: lib.nn.Embedding(5, 3, padding_idx=5),
    "padding_idx too small": lambda lib: F(lib).embedding(lib.tensor([1]), lib.zeros(5, 3), -6),
}


@pytest.mark.parametrize("case", EMBEDDING_ERRORS, ids=str)
def test_bad_embedding_calls_raise_torchs_errors(case):
    assert same_on_both(EMBEDDING_ERRORS[case])[0] == "raises"


# --- activations and shape layers ---------------------------------------------------------------
LAYERS = {
    # id: (class name, args, input shape)
    "ReLU": ("ReLU", (), (4, 3)),
    "LeakyReLU": ("LeakyReLU", (), (4, 3)),
    "LeakyReLU 0.2": ("LeakyReLU", (0.2,), (4, 3)),
    "Tanh": ("Tanh", (), (4, 3)),
    "Sigmoid": ("Sigmoid", (), (4, 3)),
    "Softmax": ("Softmax", (1,), (4, 3)),
    "LogSoftmax dim=0": ("LogSoftmax", (0,), (4, 3)),
    "Flatten": ("Flatten", (), (2, 3, 4)),
    "Flatten 0..1": ("Flatten", (0, 1), (2, 3, 4)),
    "Identity": ("Identity", (3, "ignored"), (4, 3)),
}


@pytest.mark.parametrize("case", LAYERS, ids=str)
def test_activation_and_shape_layers_match_torch(case):
    name, args, shape = LAYERS[case]
    x0 = np.random.default_rng(1).standard_normal(shape)
    got = {}
    for lib in LIBS:
        layer = getattr(lib.nn, name)(*args)
        x = lib.tensor(x0, requires_grad=True)
        y = layer(x)
        loss = (y * lib.tensor(weights_like(y))).sum()
        graph = describe_graph(loss)
        loss.backward()
        got[lib] = (y, x.grad, graph, repr(layer), y is x)
    assert_close(got[ma][0], got[torch][0], "output", rtol=1e-12, atol=1e-12)
    assert_close(got[ma][1], got[torch][1], "gradient", rtol=1e-12, atol=1e-12)
    assert got[ma][2:] == got[torch][2:]


@pytest.mark.parametrize("shape", [(5,), (2, 3), (2, 3, 4)])
def test_softmax_without_dim_warns_and_picks_torchs_dim(shape):
    x0 = np.random.default_rng(1).standard_normal(shape)
    got = {}
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = lib.nn.Softmax()(lib.tensor(x0))
            z = F(lib).log_softmax(lib.tensor(x0))
        got[lib] = (y, z, [str(w.message) for w in caught])
    assert_close(got[ma][0], got[torch][0], "softmax", rtol=1e-12, atol=1e-12)
    assert_close(got[ma][1], got[torch][1], "log_softmax", rtol=1e-12, atol=1e-12)
    assert len(got[ma][2]) == 2 and got[ma][2] == got[torch][2]


# --- containers -------------------------------------------------------------------------------
def zoo(lib):
    """One of every layer, nested, to compare reprs."""
    nn = lib.nn
    return nn.Sequential(
        nn.Linear(3, 4),
        nn.ReLU(),
        nn.LeakyReLU(),
        nn.LeakyReLU(0.2),
        nn.Dropout(0.2),
        nn.Sequential(nn.Tanh(), nn.Linear(4, 1, bias=False)),
        nn.Softmax(dim=1),
        nn.LogSoftmax(dim=1),
        nn.Flatten(),
        nn.Identity(),
        nn.Sigmoid(),
        nn.Embedding(5, 3),
        nn.Embedding(5, 3, padding_idx=-2),
        nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2)]),
        nn.ModuleDict({"act": nn.Tanh(), "out": nn.Linear(2, 1)}),
        nn.ModuleList(),
        nn.Sequential(),
        nn.MSELoss(),
        nn.CrossEntropyLoss(),
        nn.NLLLoss(),
        nn.BCEWithLogitsLoss(),
        nn.BCELoss(),
        nn.L1Loss(reduction="sum"),
        nn.LSTM(3, 4),
        nn.RNN(3, 4, 2),
        nn.RNNCell(3, 4),
        nn.LSTMCell(3, 4),
    )


def test_reprs_are_torchs():
    assert repr(zoo(ma)) == repr(zoo(torch))


def test_module_tree_is_walked_in_torchs_order():
    models = {lib: zoo(lib) for lib in LIBS}
    seen = {}
    for lib, model in models.items():
        visited = []
        assert model.apply(lambda m, visited=visited: visited.append(type(m).__name__)) is model
        seen[lib] = (
            [name for name, _ in model.named_modules()],
            [type(m).__name__ for m in model.modules()],
            [type(m).__name__ for m in model.children()],
            [name for name, _ in model.named_children()],
            [(name, tuple(p.shape)) for name, p in model.named_parameters()],
            [tuple(p.shape) for p in model.parameters()],
            [(name, tuple(t.shape)) for name, t in model.state_dict().items()],
            visited,
        )
    for mine, theirs in zip(seen[ma], seen[torch]):
        assert mine == theirs


def test_sequential_forward_matches_torch_with_the_same_weights():
    """A classifier with dropout, trained for three SGD steps from the same weights and seeds."""
    x0 = np.random.default_rng(4).standard_normal((8, 3)).astype(np.float32)
    labels = np.array([0, 1, 2, 1, 0, 2, 2, 1])
    models = {}
    for lib in LIBS:
        nn = lib.nn
        models[lib] = nn.Sequential(
            OrderedDict(
                [
                    ("hidden", nn.Linear(3, 16)),
                    ("act", nn.ReLU()),
                    ("drop", nn.Dropout(0.25)),
                    ("out", nn.Linear(16, 3)),
                ]
            )
        )
    models[ma].load_state_dict(models[torch].state_dict())
    got = {}
    for lib, model in models.items():
        optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
        criterion = lib.nn.CrossEntropyLoss()
        lib.manual_seed(5)
        losses = []
        for _ in range(3):
            optimizer.zero_grad()
            loss = criterion(model(lib.tensor(x0)), lib.tensor(labels))
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        got[lib] = (losses, model.out.weight, model.hidden.bias.grad)
    np.testing.assert_allclose(got[ma][0], got[torch][0], rtol=1e-5)
    assert_close(got[ma][1], got[torch][1], "weight after training", rtol=1e-4, atol=1e-6)
    assert_close(got[ma][2], got[torch][2], "last gradient", rtol=1e-4, atol=1e-6)


def test_sequential_indexing_like_torch():
    for lib in LIBS:
        nn = lib.nn
        first, second, third = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
        model = nn.Sequential(first, second, third)
        assert len(model) == 3 and list(model) == [first, second, third]
        assert model[0] is first and model[-1] is third and model[-3] is first
        part = model[1:]
        assert type(part) is nn.Sequential and list(part) == [second, third]
        assert [name for name, _ in part.named_children()] == ["1", "2"]
        model[1] = nn.Tanh()
        assert type(model[1]) is nn.Tanh
        assert model.append(nn.Sigmoid()) is model and len(model) == 4
        named = nn.Sequential(OrderedDict([("fc", first), ("act", second)]))
        assert named.fc is first and named[1] is second and named[0:1].fc is first


def test_module_list_and_dict_like_torch():
    for lib in LIBS:
        nn = lib.nn
        layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
        assert len(layers) == 3 and layers[-1] is layers[2] and len(layers[1:]) == 2
        assert layers.append(nn.ReLU()) is layers and layers.extend([nn.Tanh()]) is layers
        assert [name for name, _ in layers.named_parameters()][:2] == ["0.weight", "0.bias"]
        assert len(list(layers.parameters())) == 6
        table = nn.ModuleDict({"encoder": nn.Linear(2, 3), "act": nn.ReLU()})
        table["decoder"] = nn.Linear(3, 2)
        assert list(table) == list(table.keys()) == ["encoder", "act", "decoder"]
        assert "act" in table and len(table) == 3 and table["encoder"] is table.encoder
        assert [name for name, _ in table.items()] == ["encoder", "act", "decoder"]
        del table["act"]
        assert list(table.keys()) == ["encoder", "decoder"]
        assert [type(m).__name__ for m in table.values()] == ["Linear", "Linear"]


CONTAINER_ERRORS = {
    "Sequential index too large": lambda lib: lib.nn.Sequential(lib.nn.ReLU())[1],
    "Sequential index too small": lambda lib: lib.nn.Sequential(lib.nn.ReLU())[-2],
    "Sequential string index": lambda lib: lib.nn.Sequential(lib.nn.ReLU())["0"],
    "ModuleList index too large": lambda lib: lib.nn.ModuleList([lib.nn.ReLU()])[3],
    "ModuleDict missing key": lambda lib: lib.nn.ModuleDict()["x"],
    "calling a ModuleList": lambda lib: lib.nn.ModuleList()(lib.zeros(1)),
    "a ModuleDict key that is an attribute": lambda lib: lib.nn.ModuleDict(
        {"train": lib.nn.ReLU()}
    ),
    "a module name with a dot": lambda lib: lib.nn.Module().add_module("a.b", lib.nn.ReLU()),
    "not a module": lambda lib: lib.nn.Module().add_module("a", 3),
}


@pytest.mark.parametrize("case", CONTAINER_ERRORS, ids=str)
def test_bad_container_use_raises_torchs_errors(case):
    assert same_on_both(CONTAINER_ERRORS[case])[0] == "raises"


# --- Module -----------------------------------------------------------------------------------
def tied_model(lib):
    """A model for either library: shared weights, buffers (one not persistent), a plain attribute."""

    class Model(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = lib.nn.Embedding(4, 2)
            self.head = lib.nn.Linear(2, 4, bias=False)
            self.head.weight = self.embed.weight  # weight tying: one parameter, two names
            self.register_buffer("steps", lib.zeros((), dtype=lib.int64))
            self.register_buffer("scale", lib.ones(2))
            self.register_buffer("cache", lib.zeros(2), persistent=False)
            self.note = "not a parameter"

        def forward(self, ids):
            return self.head(self.embed(ids) * self.scale)

    return Model()


def test_shared_parameters_and_buffers_are_listed_like_torch():
    got = {}
    for lib in LIBS:
        model = tied_model(lib)
        got[lib] = (
            [name for name, _ in model.named_parameters()],
            [name for name, _ in model.named_buffers()],
            list(model.state_dict()),
            len(list(model.parameters())),
            len(list(model.buffers())),
            model.note,
            "steps" in dir(model) and "embed" in dir(model),
        )
    assert got[ma] == got[torch]


def test_to_double_and_float_cast_in_place_like_torch():
    for lib in LIBS:
        model = tied_model(lib)
        weight, steps = model.embed.weight, model.steps
        model(lib.tensor([1, 2])).sum().backward()
        assert model.double() is model and model.to("cpu") is model and model.cpu() is model
        assert model.embed.weight is weight and weight.dtype == lib.float64
        assert weight.grad.dtype == lib.float64 and model.scale.dtype == lib.float64
        assert model.steps is steps and steps.dtype == lib.int64
        assert model.to(lib.float32) is model and model.float() is model
        assert weight.dtype == lib.float32 and model.cache.dtype == lib.float32


def test_zero_grad_sets_grads_to_none_by_default():
    got = {}
    for lib in LIBS:
        layer = lib.nn.Linear(3, 2)
        layer(lib.ones(1, 3)).sum().backward()
        layer.zero_grad(set_to_none=False)
        zeroed = [p.grad.abs().sum().item() for p in layer.parameters()]
        layer(lib.ones(1, 3)).sum().backward()
        layer.zero_grad()
        got[lib] = (zeroed, [p.grad for p in layer.parameters()])
    assert got[ma] == got[torch] == ([0.0, 0.0], [None, None])


def test_requires_grad_and_train_return_the_module():
    for lib in LIBS:
        model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Linear(2, 1))
        assert model.requires_grad_(False) is model
        assert not any(p.requires_grad for p in model.parameters())
        assert model(lib.ones(1, 2)).grad_fn is None
        assert model.requires_grad_() is model and all(p.requires_grad for p in model.parameters())
        assert model.train(False) is model and not model[0].training


def test_load_state_dict_reports_like_torch():
    got = {}
    for lib in LIBS:
        model = lib.nn.Sequential(OrderedDict([("fc", lib.nn.Linear(2, 2))]))
        state = {"fc.weight": lib.ones(2, 2), "fc.bias": lib.zeros(2)}
        matched = model.load_state_dict(state)
        partial = model.load_state_dict(
            {"fc.weight": lib.zeros(2, 2), "x": lib.ones(1)}, strict=False
        )
        got[lib] = (
            repr(matched),
            str(matched),
            repr(partial),
            partial.missing_keys,
            partial.unexpected_keys,
            model.fc.weight.sum().item(),
            model.fc.weight.requires_grad,
        )
    assert got[ma] == got[torch]


STATE_DICT_ERRORS = {
    "missing": {"fc.weight": (2, 2)},
    "unexpected": {"fc.weight": (2, 2), "fc.bias": (2,), "x": (1,), "fc.extra": (3,)},
    "missing and unexpected": {"fc.weight": (2, 2), "y": (1,)},
    "size mismatch": {"fc.weight": (2, 3), "fc.bias": (2,)},
    "size mismatch and missing": {"fc.weight": (2, 3), "z": (1,)},
}


@pytest.mark.parametrize("case", STATE_DICT_ERRORS, ids=str)
def test_bad_state_dicts_give_torchs_errors(case):
    def load(lib, strict=True):
        model = lib.nn.Sequential(OrderedDict([("fc", lib.nn.Linear(2, 2))]))
        state = {k: lib.zeros(*shape) for k, shape in STATE_DICT_ERRORS[case].items()}
        return model.load_state_dict(state, strict=strict)

    for strict in (True, False):
        mine, theirs = outcome(load, ma, strict), outcome(load, torch, strict)
        assert mine[0] == theirs[0]
        if mine[0] == "raises":
            assert mine == theirs
        else:
            assert repr(mine[1]) == repr(theirs[1])
    assert error_of(load, ma) is not None


def test_a_loaded_torch_state_dict_gives_the_same_outputs():
    x0 = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    models = {
        lib: lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
        for lib in LIBS
    }
    models[ma].load_state_dict(models[torch].state_dict())
    assert_close(
        models[ma](ma.tensor(x0)), models[torch](torch.tensor(x0)), "output", rtol=1e-6, atol=1e-6
    )


MODULE_ERRORS = {
    "a tensor for a parameter": lambda lib: setattr(lib.nn.Linear(2, 2), "weight", lib.zeros(2, 2)),
    "a number for a child module": lambda lib: setattr(lib.nn.Sequential(lib.nn.ReLU()), "0", 3),
    "a number for a buffer": lambda lib: setattr(tied_model(lib), "scale", 3),
    "a non-leaf parameter": lambda lib: lib.nn.Module().register_parameter(
        "w", lib.nn.Parameter(lib.ones(2)) * 2
    ),
    "a buffer that is a number": lambda lib: lib.nn.Module().register_buffer("b", 3),
    "a buffer name that exists": lambda lib: lib.nn.Linear(2, 2).register_buffer(
        "weight", lib.ones(1)
    ),
    "an empty buffer name": lambda lib: lib.nn.Module().register_buffer("", lib.ones(1)),
    "a missing attribute": lambda lib: lib.nn.Linear(2, 2).wieght,
    "train with a string": lambda lib: lib.nn.Linear(2, 2).train("yes"),
    "a module without forward": lambda lib: lib.nn.Module()(lib.ones(1)),
    "load_state_dict of a list": lambda lib: lib.nn.Linear(2, 2).load_state_dict([1]),
}


@pytest.mark.parametrize("case", MODULE_ERRORS, ids=str)
def test_bad_module_use_raises_torchs_errors(case):
    assert same_on_both(MODULE_ERRORS[case])[0] == "raises"


def test_parameters_modules_and_buffers_can_be_replaced_and_deleted():
    for lib in LIBS:
        layer = lib.nn.Linear(2, 2)
        layer.bias = None
        assert [name for name, _ in layer.named_parameters()] == ["weight"]
        assert layer(lib.ones(1, 2)).shape == (1, 2)
        del layer.weight
        assert list(layer.parameters()) == [] and not hasattr(layer, "weight")
        model = tied_model(lib)
        model.scale = None
        assert "scale" not in model.state_dict()
        model.head = lib.nn.Identity()
        assert [name for name, _ in model.named_children()] == ["embed", "head"]


def test_a_copied_module_has_its_own_parameters():
    model = ma.nn.Sequential(ma.nn.Linear(2, 3), ma.nn.ReLU())
    twin = copy.deepcopy(model)
    assert repr(twin) == repr(model) and twin[0].weight is not model[0].weight
    np.testing.assert_array_equal(twin[0].weight.detach().numpy(), model[0].weight.detach().numpy())


def test_linear_repr_is_torchs():
    for bias in (True, False):
        assert repr(ma.nn.Linear(3, 1, bias=bias)) == repr(torch.nn.Linear(3, 1, bias=bias))
        assert ma.nn.Linear(3, 1).extra_repr() == torch.nn.Linear(3, 1).extra_repr()


# --- nn.init ----------------------------------------------------------------------------------
INITS = {
    # id: (function name, args, kwargs, tensor shape)
    "uniform_": ("uniform_", (), {}, (4, 5)),
    "uniform_ -2, 3": ("uniform_", (-2.0, 3.0), {}, (30,)),
    "normal_": ("normal_", (), {}, (4, 5)),
    "normal_ small": ("normal_", (1.0, 0.1), {}, (3, 2)),
    "xavier_uniform_": ("xavier_uniform_", (), {}, (6, 4)),
    "xavier_uniform_ gain": ("xavier_uniform_", (), {"gain": 5 / 3}, (3, 4, 2)),
    "xavier_normal_": ("xavier_normal_", (), {}, (8, 4)),
    "kaiming_uniform_": ("kaiming_uniform_", (), {}, (6, 4)),
    "kaiming_uniform_ a=sqrt(5)": ("kaiming_uniform_", (), {"a": 5**0.5}, (6, 4)),
    "kaiming_normal_ fan_out relu": (
        "kaiming_normal_",
        (),
        {"mode": "fan_out", "nonlinearity": "relu"},
        (6, 4),
    ),
    "constant_": ("constant_", (0.3,), {}, (2, 3)),
    "ones_": ("ones_", (), {}, (2, 3)),
    "zeros_": ("zeros_", (), {}, (2, 3)),
}


@pytest.mark.parametrize("case", INITS, ids=str)
def test_init_functions_fill_like_torch(case):
    """The same numbers after the same seed, written in place into a parameter, unrecorded."""
    name, args, kwargs, shape = INITS[case]
    got = {}
    for lib in LIBS:
        lib.manual_seed(11)
        weight = lib.nn.Parameter(lib.zeros(*shape, dtype=lib.float64))
        result = getattr(lib.nn.init, name)(weight, *args, **kwargs)
        got[lib] = (result is weight, weight.grad_fn, weight.requires_grad, weight._version, weight)
    assert got[ma][:4] == got[torch][:4] == (True, None, True, 1)
    assert_close(got[ma][4], got[torch][4], case, rtol=1e-6, atol=1e-7)


GAINS = [
    ("linear", None),
    ("conv2d", None),
    ("sigmoid", None),
    ("tanh", None),
    ("relu", None),
    ("leaky_relu", None),
    ("leaky_relu", 0.2),
    ("leaky_relu", 3),
    ("selu", None),
]


@pytest.mark.parametrize("name, param", GAINS)
def test_calculate_gain_is_torchs(name, param):
    assert ma.nn.init.calculate_gain(name, param) == torch.nn.init.calculate_gain(name, param)


INIT_ERRORS = {
    "fans of a vector": lambda lib: lib.nn.init.xavier_uniform_(lib.zeros(3)),
    "a bad mode": lambda lib: lib.nn.init.kaiming_normal_(lib.zeros(3, 2), mode="fan_avg"),
    "an unknown nonlinearity": lambda lib: lib.nn.init.calculate_gain("swish"),
    "a slope that is a bool": lambda lib: lib.nn.init.calculate_gain("leaky_relu", True),
}


@pytest.mark.parametrize("case", INIT_ERRORS, ids=str)
def test_bad_init_calls_raise_torchs_errors(case):
    assert same_on_both(INIT_ERRORS[case])[0] == "raises"


def test_kaiming_on_an_empty_tensor_warns_like_torch():
    messages = {}
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.init.kaiming_uniform_(lib.zeros(0, 3))
        messages[lib] = [str(w.message) for w in caught]
    assert messages[ma] == messages[torch] == ["Initializing zero-element tensors is a no-op"]
