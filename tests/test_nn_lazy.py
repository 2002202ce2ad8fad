"""Lazy modules (nn.LazyLinear, LazyConv1d/2d, LazyBatchNorm1d/2d) against torch's: reprs and
uninitialized parameters before the first call, the class, values and versions after it with the
same seed, the errors of using them early, loading a state_dict, and d2l's pattern of training."""

import copy
import re

import numpy as np
import pytest
import torch

import mini_autograd as ma
from tests.parity_helpers import assert_close, error_of

LIBS = (torch, ma)

LAYERS = [  # (name, args, kwargs, input shape)
    ("LazyLinear", (10,), {}, (3, 5)),
    ("LazyLinear", (4,), {"bias": False}, (2, 3, 7)),
    ("LazyLinear", (4,), {}, (6,)),
    ("LazyConv2d", (6, 5), {"padding": 2}, (2, 3, 8, 8)),
    ("LazyConv2d", (4, (3, 2)), {"stride": 2, "groups": 2, "bias": False}, (2, 6, 9, 9)),
    ("LazyConv2d", (4, 3), {}, (3, 7, 7)),
    ("LazyConv1d", (4, 3), {"stride": 2, "dilation": 2}, (2, 5, 11)),
    ("LazyBatchNorm2d", (), {}, (4, 3, 5, 5)),
    ("LazyBatchNorm2d", (), {"affine": False, "momentum": None}, (4, 3, 5, 5)),
    ("LazyBatchNorm1d", (), {"bias": False}, (4, 6)),
    ("LazyBatchNorm1d", (), {"track_running_stats": False}, (4, 6, 3)),
]
IDS = [f"{name}{args}{kwargs}" for name, args, kwargs, _ in LAYERS]


def short(text):
    """A repr or message with each library's name taken out (torch.Size / mini_autograd.Size)."""
    return text.replace("mini_autograd.", "torch.")


def build(lib, name, args, kwargs, seed=0):
    """The lazy layer, made right after seeding."""
    lib.manual_seed(seed)
    return getattr(lib.nn, name)(*args, **kwargs)


def state(layer):
    """{name: repr} of the parameters and buffers (before the first call: '<Uninitialized...>')."""
    found = {**dict(layer.named_parameters()), **dict(layer.named_buffers())}
    return {name: type(value).__name__ for name, value in found.items()}


@pytest.mark.parametrize("name, args, kwargs, shape", LAYERS, ids=IDS)
def test_before_the_first_call(name, args, kwargs, shape):
    layers = {lib: build(lib, name, args, kwargs) for lib in LIBS}
    assert repr(layers[ma]) == repr(layers[torch])
    assert state(layers[ma]) == state(layers[torch])
    assert layers[ma].has_uninitialized_params() == layers[torch].has_uninitialized_params()
    assert [short(repr(v)) for v in layers[ma].state_dict().values()] == [
        repr(v) for v in layers[torch].state_dict().values()
    ]
    assert isinstance(layers[ma], ma.nn.modules.lazy.LazyModuleMixin)


@pytest.mark.parametrize("name, args, kwargs, shape", LAYERS, ids=IDS)
def test_after_the_first_call(name, args, kwargs, shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    layers = {lib: build(lib, name, args, kwargs) for lib in LIBS}
    outputs = {}
    for lib in LIBS:
        lib.manual_seed(1)
        outputs[lib] = layers[lib](lib.tensor(x))
    ours, theirs = layers[ma], layers[torch]
    assert type(ours).__name__ == type(theirs).__name__
    assert type(ours) is getattr(ma.nn, type(theirs).__name__)
    assert repr(ours) == repr(theirs)
    assert not ours._forward_pre_hooks and not hasattr(ours, "has_uninitialized_params")
    assert state(ours) == state(theirs)
    for (key, mine), (other, value) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert key == other
        assert_close(mine, value, key, rtol=1e-6, atol=1e-7)
    for (key, mine), value in zip(ours.named_parameters(), theirs.parameters()):
        assert mine._version == value._version, key
    assert_close(outputs[ma], outputs[torch].detach(), "output", rtol=1e-5, atol=1e-6)


def test_uninitialized_parameter_answers_what_torch_answers():
    weights = {lib: lib.nn.LazyLinear(3).weight for lib in LIBS}
    ours, theirs = weights[ma], weights[torch]
    assert repr(ours) == repr(theirs) == "<UninitializedParameter>"
    assert isinstance(ours, ma.nn.Parameter) and ma.nn.parameter.is_lazy(ours)
    assert tuple(ours.size()) == tuple(theirs.size()) == (0,)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert ours.requires_grad and ours.is_floating_point() and ours.grad is None
    assert repr(ma.nn.parameter.UninitializedBuffer()) == "<UninitializedBuffer>"
    assert ma.nn.UninitializedParameter is ma.nn.parameter.UninitializedParameter


def torch_free(message):
    """An uninitialized-use message without the function it names (each library's own)."""
    return re.sub(r" in <[^>]*>\.", " in <...>.", message)


@pytest.mark.parametrize(
    "use",
    [
        lambda lib, w: w.shape,
        lambda lib, w: w + 1,
        lambda lib, w: w.sum(),
        lambda lib, w: w.dim(),
        lambda lib, w: w.detach(),
        lambda lib, w: lib.nn.init.normal_(w),
        lambda lib, w: lib.nn.init.xavier_uniform_(w),
        lambda lib, w: w.share_memory_(),
    ],
    ids=["shape", "add", "sum", "dim", "detach", "normal_", "xavier_uniform_", "share_memory_"],
)
def test_using_a_parameter_early_raises_torch_error(use):
    found = {lib: error_of(use, lib, lib.nn.LazyLinear(3).weight) for lib in LIBS}
    assert found[ma][0] == found[torch][0]
    assert torch_free(found[ma][1]) == torch_free(found[torch][1])


def test_layer_errors():
    for lib in LIBS:  # a batch norm materializes, becomes BatchNorm2d, then refuses the input
        layer = lib.nn.LazyBatchNorm2d()
        assert error_of(layer, lib.ones(5, 5)) == ("ValueError", "expected 4D input (got 2D input)")
        assert type(layer).__name__ == "BatchNorm2d" and layer.num_features == 5
    found = [error_of(lib.nn.LazyConv2d(6, 5), lib.ones(5, 5)) for lib in LIBS]
    assert found[0] == (found[1][0], short(found[1][1]))
    found = [error_of(lib.nn.LazyConv2d(6, 3, groups=2), lib.ones(1, 3, 5, 5)) for lib in LIBS]
    assert found[0] == found[1] == ("ValueError", "in_channels must be divisible by groups")

    class Incomplete(ma.nn.modules.lazy.LazyModuleMixin, ma.nn.Module):
        pass

    assert error_of(Incomplete(), ma.ones(1)) == (
        "NotImplementedError",
        "initialize_parameters is not implemented for Incomplete",
    )


def test_initialize_parameters_by_hand():
    for lib in LIBS:
        lib.manual_seed(0)
        layer = lib.nn.LazyLinear(3)
        assert layer.has_uninitialized_params()
        layer.initialize_parameters(lib.ones(2, 4))
        assert not layer.has_uninitialized_params()
        assert type(layer).__name__ == "LazyLinear" and layer.in_features == 4
    assert tuple(layer.weight.shape) == (3, 4)


def test_load_state_dict_into_a_lazy_module():
    """d2l's file I/O: a lazy clone loads the saved weights, then runs."""
    torch.manual_seed(0)
    saved = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    clone = ma.nn.Sequential(ma.nn.LazyLinear(3), ma.nn.ReLU(), ma.nn.LazyLinear(2))
    clone.load_state_dict(saved.state_dict())
    assert repr(clone[0]) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    x = np.ones((2, 4), np.float32)
    assert_close(clone(ma.tensor(x)), saved(torch.tensor(x)).detach(), rtol=1e-6)
    assert repr(clone[0]) == "Linear(in_features=4, out_features=3, bias=True)"
    reloaded = ma.nn.LazyLinear(3)
    reloaded.load_state_dict(clone[0].state_dict())
    assert error_of(reloaded, ma.ones(2, 5))[0] == "AssertionError"


def test_to_before_the_first_call():
    for lib in LIBS:
        layer = lib.nn.LazyLinear(3).double()
        assert layer.weight.dtype == lib.float64
        layer(lib.ones(1, 2, dtype=lib.float64))
        assert layer.weight.dtype == lib.float64 and tuple(layer.weight.shape) == (3, 2)


def d2l_net(lib):
    """d2l's LeNet-with-batch-norm shape: lazy layers only, the input sizes left to the first call."""
    nn = lib.nn
    return nn.Sequential(
        nn.LazyConv2d(6, kernel_size=5, padding=2),
        nn.LazyBatchNorm2d(),
        nn.Sigmoid(),
        nn.AvgPool2d(kernel_size=2, stride=2),
        nn.LazyConv2d(16, kernel_size=3),
        nn.LazyBatchNorm2d(),
        nn.Sigmoid(),
        nn.Flatten(),
        nn.LazyLinear(32),
        nn.LazyBatchNorm1d(),
        nn.ReLU(),
        nn.LazyLinear(10),
    )


def train_d2l(lib, steps=4):
    """Build, call once on a dummy batch, apply an init, then train with SGD: the losses."""
    lib.manual_seed(0)
    net = d2l_net(lib)
    net(lib.zeros(2, 1, 12, 12))

    def init_cnn(module):  # d2l's: xavier for Linear and Conv2d, found by their type
        if type(module) is lib.nn.Linear or type(module) is lib.nn.Conv2d:
            lib.nn.init.xavier_uniform_(module.weight)

    net.apply(init_cnn)
    optimizer = lib.optim.SGD(net.parameters(), lr=0.1)
    rng = np.random.default_rng(0)
    losses = []
    for _ in range(steps):
        x = lib.tensor(rng.standard_normal((8, 1, 12, 12)).astype(np.float32))
        y = lib.tensor(rng.integers(0, 10, 8))
        loss = lib.nn.functional.cross_entropy(net(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, net


def test_d2l_pattern_trains_as_torch():
    (ours, net), (theirs, torch_net) = train_d2l(ma), train_d2l(torch)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    assert repr(net) == repr(torch_net)


def test_a_deep_copy_initializes_on_its_own():
    """The copy's first call turns the copy, not the original, into Linear (its hook is its own)."""
    for lib in LIBS:
        net = lib.nn.Sequential(lib.nn.LazyLinear(8), lib.nn.ReLU(), lib.nn.LazyLinear(1))
        clone = copy.deepcopy(net)
        clone(lib.ones(2, 3))
        assert type(clone[0]).__name__ == "Linear" and type(net[0]).__name__ == "LazyLinear"
        assert len(net[0]._forward_pre_hooks) == 1
        net(lib.ones(2, 5))
        assert repr(net[0]) == "Linear(in_features=5, out_features=8, bias=True)"


def test_an_optimizer_made_before_the_first_call_trains():
    for lib in LIBS:
        layer = lib.nn.LazyLinear(2)
        optimizer = lib.optim.SGD(layer.parameters(), lr=0.1)
        layer(lib.ones(3, 4)).sum().backward()
        optimizer.step()
        assert tuple(layer.weight.grad.shape) == (2, 4)
