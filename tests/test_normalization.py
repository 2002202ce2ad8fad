"""BatchNorm, InstanceNorm and LayerNorm against torch's: values, gradients, running statistics,
the node, what it saves, and second derivatives."""

import numpy as np
import pytest
import torch

import mini_autograd as ma
from mini_autograd.nn import normalization


def _pair(shape, seed=0):
    data = np.random.default_rng(seed).standard_normal(shape)
    return (
        torch.tensor(data, requires_grad=True),
        ma.tensor(data, dtype=ma.float64, requires_grad=True),
    )


def _layers(torch_layer, ma_layer):
    with torch.no_grad():
        for p, q in zip(torch_layer.parameters(), ma_layer.parameters()):
            p.copy_(torch.linspace(0.5, 1.5, p.numel()).reshape(p.shape))
            q.data = ma.tensor(p.detach().numpy())
    return torch_layer.double(), ma_layer


def _saved_names(node):
    return sorted(a for a in dir(node) if a.startswith("_saved_"))


def _check_same(t_out, m_out, t_inputs, m_inputs):
    np.testing.assert_allclose(m_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-6, atol=1e-8)
    assert m_out.grad_fn.name() == t_out.grad_fn.name()
    assert _saved_names(m_out.grad_fn) == _saved_names(t_out.grad_fn)
    weights = torch.linspace(-1, 1, t_out.numel(), dtype=torch.float64).reshape(t_out.shape)
    t_grads = torch.autograd.grad((t_out * weights).sum(), t_inputs, create_graph=True)
    m_grads = ma.autograd.grad(
        (m_out * ma.tensor(weights.numpy())).sum(), m_inputs, create_graph=True
    )
    for t_g, m_g in zip(t_grads, m_grads, strict=True):
        np.testing.assert_allclose(m_g.detach().numpy(), t_g.detach().numpy(), rtol=1e-6, atol=1e-8)
    # second derivatives: of the sum of squared input gradients
    t_second = torch.autograd.grad((t_grads[0] ** 2).sum(), t_inputs, allow_unused=True)
    m_second = ma.autograd.grad((m_grads[0] ** 2).sum(), m_inputs, allow_unused=True)
    for t_g, m_g in zip(t_second, m_second, strict=True):
        if t_g is None or m_g is None:
            assert t_g is None and m_g is None
        else:
            np.testing.assert_allclose(
                m_g.detach().numpy(), t_g.detach().numpy(), rtol=1e-5, atol=1e-8
            )


def _check_same_layer(t_layer, m_layer, t_x, m_x):
    """_check_same for a layer's output, with respect to its input, weight and bias."""
    _check_same(
        t_layer(t_x),
        m_layer(m_x),
        (t_x, t_layer.weight, t_layer.bias),
        (m_x, m_layer.weight, m_layer.bias),
    )


@pytest.mark.parametrize(
    "shape, kind",
    [((6, 3), "BatchNorm1d"), ((4, 3, 5), "BatchNorm1d"), ((2, 3, 2, 2), "BatchNorm2d")],
)
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_matches_torch(shape, kind, training):
    t_layer, m_layer = _layers(getattr(torch.nn, kind)(3), getattr(normalization, kind)(3))
    t_x, m_x = _pair(shape)
    for _ in range(2):  # the running statistics move twice
        t_layer(t_x.detach())
        m_layer(m_x.detach())
    np.testing.assert_allclose(
        m_layer.running_mean.numpy(), t_layer.running_mean.numpy(), rtol=1e-6
    )
    np.testing.assert_allclose(m_layer.running_var.numpy(), t_layer.running_var.numpy(), rtol=1e-6)
    assert m_layer.num_batches_tracked.item() == t_layer.num_batches_tracked.item() == 2
    t_layer.train(training)
    m_layer.train(training)
    _check_same_layer(t_layer, m_layer, t_x, m_x)
    assert repr(m_layer) == repr(t_layer)
    assert list(m_layer.state_dict()) == list(t_layer.state_dict())


def test_batch_norm_without_affine_or_running_stats():
    t_layer = torch.nn.BatchNorm1d(3, affine=False, track_running_stats=False).double()
    m_layer = normalization.BatchNorm1d(3, affine=False, track_running_stats=False)
    t_x, m_x = _pair((5, 3))
    _check_same(t_layer(t_x), m_layer(m_x), (t_x,), (m_x,))
    assert repr(m_layer) == repr(t_layer)


@pytest.mark.parametrize(
    "options",
    [{}, {"affine": True}, {"track_running_stats": True}, {"affine": True, "momentum": None}],
)
@pytest.mark.parametrize(
    "shape, kind", [((2, 3, 4), "InstanceNorm1d"), ((2, 3, 2, 2), "InstanceNorm2d")]
)
def test_instance_norm_layers_match_torch(shape, kind, options):
    """Each sample's channels normalised by their own statistics: values, gradients, the graph
    (a view of batch_norm of a view), running statistics and repr; one sample without its batch
    dim too."""
    t_layer, m_layer = _layers(
        getattr(torch.nn, kind)(3, **options), getattr(normalization, kind)(3, **options)
    )
    t_x, m_x = _pair(shape)
    for _ in range(2):
        t_layer(t_x.detach())
        m_layer(m_x.detach())
    if t_layer.running_mean is not None:
        for name in ("running_mean", "running_var"):
            got, want = getattr(m_layer, name).numpy(), getattr(t_layer, name).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-6)
    if options.get("affine"):
        _check_same_layer(t_layer, m_layer, t_x, m_x)
    else:
        _check_same(t_layer(t_x), m_layer(m_x), (t_x,), (m_x,))
    node = m_layer(m_x).grad_fn
    assert [node.name(), node.next_functions[0][0].name()] == [
        "ViewBackward0",
        "NativeBatchNormBackward0",
    ]
    assert repr(m_layer) == repr(t_layer)
    one = m_layer(m_x[0].detach())
    want = t_layer(t_x[0].detach()).detach().numpy()
    np.testing.assert_allclose(one.detach().numpy(), want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, nn: nn.InstanceNorm2d(3, affine=True)(lib.zeros(2, 2, 3, 3)),
        lambda lib, nn: nn.InstanceNorm2d(3)(lib.zeros(2, 3)),
        lambda lib, nn: lib.nn.functional.instance_norm(lib.zeros(2, 3, 1, 1)),
        lambda lib, nn: nn.BatchNorm1d(3)(lib.zeros(1, 3)),
        lambda lib, nn: nn.BatchNorm1d(3)(lib.zeros(2, 3, 4, 5)),
        lambda lib, nn: nn.BatchNorm2d(3)(lib.zeros(2, 3)),
        lambda lib, nn: nn.LayerNorm(4)(lib.zeros(2, 3)),
        lambda lib, nn: nn.InstanceNorm2d(3)(lib.zeros(3, 4)),
        lambda lib, nn: nn.InstanceNorm1d(3)(lib.zeros(2, 3, 1)),
        lambda lib, nn: nn.InstanceNorm2d(3, affine=True)(lib.zeros(2, 4, 3, 3)),
    ],
)
def test_bad_inputs_fail_as_in_torch(call):
    with pytest.raises(Exception) as want:
        call(torch, torch.nn)
    with pytest.raises(type(want.value)) as got:
        call(ma, normalization)
    assert str(got.value).replace("mini_autograd.", "torch.") == str(want.value)


@pytest.mark.parametrize("shape, normalized", [((4, 3), 3), ((2, 3, 4), (3, 4))])
def test_layer_norm_matches_torch(shape, normalized):
    t_layer, m_layer = _layers(torch.nn.LayerNorm(normalized), normalization.LayerNorm(normalized))
    t_x, m_x = _pair(shape)
    _check_same_layer(t_layer, m_layer, t_x, m_x)
    assert repr(m_layer) == repr(t_layer)


def _graph(node, depth=0):
    """The names of a graph's nodes, depth first."""
    if node is None or depth > 5:
        return []
    return [node.name(), *(n for f, _ in node.next_functions for n in _graph(f, depth + 1))]


@pytest.mark.parametrize(
    "shape, kind",
    [
        ((2, 3, 4, 5), "InstanceNorm2d"),
        ((3, 4, 5), "InstanceNorm2d"),
        ((2, 3, 6), "InstanceNorm1d"),
    ],
)
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"affine": True},
        {"track_running_stats": True},
        {"affine": True, "track_running_stats": True, "momentum": 0.3},
    ],
    ids=["plain", "affine", "running", "both"],
)
@pytest.mark.parametrize("training", [True, False])
def test_instance_norm_matches_torch(shape, kind, options, training):
    """Values, gradients, running statistics, repr and the graph (a batch norm of the input viewed
    as (1, N * C, ...), between two views, with the weight and bias repeated), in float32."""
    data = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    weights = np.linspace(-1, 1, data.size, dtype=np.float32).reshape(shape)
    got = {}
    for lib in (torch, ma):
        layer = getattr(lib.nn, kind)(3, **options)
        layer.train(training)
        x = lib.tensor(data, requires_grad=True)
        y = layer(x)
        (y * lib.tensor(weights)).sum().backward()
        tensors = [y, x.grad, *(p.grad for p in layer.parameters())]
        tensors += [b for b in layer.buffers() if b.dtype != lib.int64]
        got[lib] = tensors, repr(layer), _graph(y.grad_fn)
    for mine, theirs in zip(got[ma][0], got[torch][0], strict=True):
        np.testing.assert_allclose(
            mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-5, atol=1e-6
        )
    assert got[ma][1:] == got[torch][1:]


def test_instance_norm_warns_as_torch_does_when_num_features_is_unused():
    for lib in (torch, ma):
        with pytest.warns(UserWarning, match="input's size at dim=1 does not match num_features"):
            lib.nn.InstanceNorm2d(5)(lib.zeros(2, 3, 4, 4))
