"""In-place random fills and multinomial against torch: the same seed gives the same numbers, and
a fill in the graph is recorded with torch's node (zero gradient)."""

import numpy as np
import pytest
import torch

import mini_autograd as ma

PROBABILITIES = [0.1, 0.2, 0.3, 0.4]
CALLS = {
    "uniform_": lambda lib: lib.empty(5).uniform_(-1, 1),
    "normal_": lambda lib: lib.empty(20).normal_(0, 0.02),
    "normal_ float64": lambda lib: lib.empty(3, dtype=lib.float64).normal_(),
    "bernoulli_": lambda lib: lib.empty(8).bernoulli_(0.3),
    "bernoulli_ tensor": lambda lib: lib.empty(6).bernoulli_(lib.full((6,), 0.5)),
    "exponential_": lambda lib: lib.empty(5).exponential_(2.0),
    "random_ from to": lambda lib: lib.empty(4).random_(0, 10),
    "random_ to": lambda lib: lib.empty(3).random_(5),
    "random_ float range": lambda lib: lib.empty(3).random_(),
    "random_ int64": lambda lib: lib.zeros(3, dtype=lib.int64).random_(-3, 3),
    "multinomial one": lambda lib: lib.multinomial(lib.tensor(PROBABILITIES), 1),
    "multinomial without replacement": lambda lib: lib.multinomial(lib.tensor(PROBABILITIES), 3),
    "multinomial with replacement": lambda lib: lib.multinomial(
        lib.tensor(PROBABILITIES), 10, replacement=True
    ),
    "multinomial rows": lambda lib: lib.multinomial(
        lib.tensor([PROBABILITIES, PROBABILITIES[::-1]]), 6, replacement=True
    ),
    "multinomial method, unnormalised": lambda lib: (lib.tensor(PROBABILITIES) * 7).multinomial(2),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_the_same_seed_gives_torchs_samples(name):
    torch.manual_seed(0)
    want = CALLS[name](torch)
    ma.manual_seed(0)
    got = CALLS[name](ma)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(np.asarray(got.tolist()), np.asarray(want.tolist()), rtol=1e-6)


def test_makemore_style_sampling_with_a_generator():
    def sample(lib):
        g = lib.Generator().manual_seed(2147483647)
        p = lib.rand(27, generator=g)
        p = p / p.sum()
        return [lib.multinomial(p, 1, replacement=True, generator=g).item() for _ in range(20)]

    assert sample(ma) == sample(torch)


FILLS = {
    "uniform_": lambda y, lib: y.uniform_(),
    "normal_": lambda y, lib: y.normal_(),
    "bernoulli_": lambda y, lib: y.bernoulli_(0.5),
    "bernoulli_ tensor": lambda y, lib: y.bernoulli_(lib.full((3,), 0.5)),
    "exponential_": lambda y, lib: y.exponential_(),
    "random_": lambda y, lib: y.random_(),
    "random_ to": lambda y, lib: y.random_(4),
    "random_ from to": lambda y, lib: y.random_(1, 4),
}


@pytest.mark.parametrize("fill", list(FILLS))
def test_a_fill_in_the_graph_is_recorded_with_zero_gradient(fill):
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        FILLS[fill](y, lib)
        (y * 3 + x).sum().backward()
        return y.grad_fn.name(), y._version, x.grad.tolist()

    assert run(ma) == run(torch)


def test_a_fill_of_a_leaf_that_requires_grad_is_refused_as_in_torch():
    for lib in (torch, ma):
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            lib.ones(2, requires_grad=True).uniform_()
        w = lib.ones(2, requires_grad=True)
        with lib.no_grad():
            w.normal_()  # how initialisation code does it


def test_bad_distributions_are_refused():
    for lib in (torch, ma):
        with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist.size"):
            lib.multinomial(lib.tensor([0.5, 0.5]), 3)


def _graph(lib, sample, *params):
    """What sampling records, as plain values: torch's and mini_autograd's must agree."""
    node = sample.grad_fn
    saved = {name: tuple(getattr(node, name)) for name in dir(node) if name.startswith("_saved_")}
    edges = [None if n is None else n.name() for n, _ in node.next_functions]
    sample.sum().backward()
    grads = [None if p.grad is None else (p.grad.tolist(), str(p.grad.dtype)[-7:]) for p in params]
    return sample.requires_grad, node.name(), edges, saved, sample.tolist(), grads


SAMPLERS = {
    "bernoulli": lambda lib, a, b: lib.bernoulli(a),
    "bernoulli method": lambda lib, a, b: a.bernoulli(),
    "bernoulli generator": lambda lib, a, b: lib.bernoulli(a, generator=lib.Generator()),
    "normal(mean, number)": lambda lib, a, b: lib.normal(a, 1.0),
    "normal(number, std)": lambda lib, a, b: lib.normal(1.0, b),
    "normal(mean, std)": lambda lib, a, b: lib.normal(a, b),
    "normal(mean, std), only std requires grad": lambda lib, a, b: lib.normal(a.detach(), b),
    "normal(mean, std), broadcast": lambda lib, a, b: lib.normal(a, b.expand(2, 3)),
}


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_sampling_records_torchs_node_with_zero_gradients(name):
    def run(lib):
        lib.manual_seed(0)
        a = lib.full((3,), 0.25, dtype=lib.float64, requires_grad=True)
        b = lib.full((3,), 2.0, dtype=lib.float64, requires_grad=True)
        return _graph(lib, SAMPLERS[name](lib, a, b), a, b)

    want = run(torch)
    assert want[1] != "" and run(ma) == want


def test_bernoulli_with_a_number_p_records_a_node_whose_backward_raises():
    for lib in (torch, ma):
        p = lib.full((3,), 0.5, requires_grad=True)
        sample = lib.bernoulli(p, 0.3)
        assert sample.grad_fn.name() == "torch::autograd::NotImplemented"
        assert [type(n).__name__ for n, _ in sample.grad_fn.next_functions] == ["AccumulateGrad"]
        with pytest.raises(
            RuntimeError, match="^derivative for aten::bernoulli is not implemented$"
        ):
            sample.sum().backward()


def test_bernoulli_in_place_with_probabilities_that_require_grad():
    def run(lib):
        p = lib.full((3,), 0.5, requires_grad=True)
        y = lib.zeros(2, 3).bernoulli_(p)
        edges = [None if n is None else n.name() for n, _ in y.grad_fn.next_functions]
        y.sum().backward()
        return y.requires_grad, y.grad_fn.name(), edges, p.grad.tolist()

    assert run(ma) == run(torch)


def test_samples_record_nothing_without_grad_and_their_gradients_are_constants():
    def run(lib):
        p = lib.full((3,), 0.5, requires_grad=True)
        with lib.no_grad():
            plain = [lib.bernoulli(p), lib.normal(p, 1.0), lib.normal(1.0, p)]
        plain.append(lib.multinomial(p, 2))
        (grad,) = lib.autograd.grad(lib.normal(p, p).sum(), p, create_graph=True)
        return [t.requires_grad for t in plain], grad.requires_grad, grad.tolist()

    assert run(ma) == run(torch)
