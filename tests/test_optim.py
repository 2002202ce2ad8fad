"""mini_autograd.optim against torch.optim: the same steps, state, state_dict, repr, schedules and errors.

Each run starts both libraries from the same parameters and gives them the same gradients, so
what is compared is the optimizers' arithmetic alone (the gradients of (p - 3)**2 / 2 plus fixed
noise, computed in numpy from each library's own parameters).
"""

import math
import warnings

import numpy as np
import pytest
import torch

import mini_autograd as ma
from mini_autograd.optim import _pointwise, adadelta, adagrad, adam, nadam, rmsprop
from tests.parity_helpers import error_of

LIBS = (torch, ma)
SHAPES = ((5, 7), (37,))  # 37 elements: several CPU vector widths and a remainder
STEPS = 20
RTOL = {np.float32: 1e-6, np.float64: 1e-12}

CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.5, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.1, "momentum": 0.5, "maximize": True}),
    ("Adam", {}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.9), "eps": 1e-6, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01, "amsgrad": True}),
    ("Adam", {"lr": 0.01, "betas": (0.3, 0.9)}),  # lerp's weight 0.7: its other formula
    ("Adam", {"lr": 0.01, "maximize": True, "amsgrad": True}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}),
    ("RMSprop", {}),
    ("RMSprop", {"lr": 0.001, "alpha": 0.9, "eps": 1e-6, "weight_decay": 0.1}),
    ("RMSprop", {"momentum": 0.9}),
    ("RMSprop", {"centered": True}),
    ("RMSprop", {"alpha": 0.4, "centered": True}),
    ("RMSprop", {"lr": 0.001, "momentum": 0.9, "centered": True, "maximize": True}),
    ("Adagrad", {}),
    (
        "Adagrad",
        {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1, "initial_accumulator_value": 0.1},
    ),
    ("Adagrad", {"eps": 1e-6, "maximize": True}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-5, "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {}),
    ("NAdam", {"lr": 0.01, "betas": (0.8, 0.9), "weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
]
CASE_IDS = [f"{name} {options}" for name, options in CASES]


def make_params(lib, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return [
        lib.tensor(rng.uniform(1, 2, shape).astype(dtype), requires_grad=True) for shape in SHAPES
    ]


def set_gradients(lib, params, noise, sign=1):
    """p.grad = sign * (p - 3) + noise: the gradient of sign * (p - 3)**2 / 2, noisy."""
    for p in params:
        x = p.detach().numpy()
        dtype = x.dtype.type
        p.grad = lib.tensor(
            dtype(sign) * (x - dtype(3)) + noise.normal(0, 0.5, x.shape).astype(dtype)
        )


def train(lib, name, options, dtype=np.float32, steps=STEPS, params=None, optimizer=None):
    """`steps` steps of lib.optim.<name>(params, **options): (params, optimizer)."""
    params = make_params(lib, dtype) if params is None else params
    optimizer = getattr(lib.optim, name)(params, **options) if optimizer is None else optimizer
    noise = np.random.default_rng(1)
    sign = -1 if options.get("maximize") else 1  # maximize the negated loss: the same way down
    for _ in range(steps):
        optimizer.zero_grad()
        set_gradients(lib, params, noise, sign)
        optimizer.step()
    return params, optimizer


def dtype_name(t):
    return str(t.dtype).rpartition(".")[2]


def assert_same(mine, theirs, rtol, where="value"):
    """Equal structure (dict keys in order, list lengths), tensors of one dtype, close to rtol."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(mine, ma.Tensor), f"{where}: {type(mine).__name__}, not a tensor"
        assert dtype_name(mine) == dtype_name(theirs), where
        assert tuple(mine.shape) == tuple(theirs.shape), where
        expected = theirs.detach().numpy()
        # atol: buffers such as momentum_buffer pass through zero, where rtol alone means bits
        atol = rtol * np.abs(expected).max(initial=0)
        np.testing.assert_allclose(mine.numpy(), expected, rtol=rtol, atol=atol, err_msg=where)
    elif isinstance(theirs, dict):
        assert isinstance(mine, dict), where
        assert list(mine) == list(theirs), f"{where}: keys {list(mine)} vs {list(theirs)}"
        for key in theirs:
            assert_same(mine[key], theirs[key], rtol, f"{where}[{key!r}]")
    elif isinstance(theirs, (list, tuple)):
        assert type(mine) is type(theirs) and len(mine) == len(theirs), f"{where}: {mine!r}"
        for i, (m, t) in enumerate(zip(mine, theirs)):
            assert_same(m, t, rtol, f"{where}[{i}]")
    else:
        assert mine == theirs, f"{where}: {mine!r} vs {theirs!r}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize(("name", "options"), CASES, ids=CASE_IDS)
def test_steps_state_and_state_dict_match_torch(name, options, dtype):
    (mine, my_opt), (theirs, their_opt) = (train(lib, name, options, dtype) for lib in (ma, torch))
    rtol = RTOL[dtype]
    for i, (m, t) in enumerate(zip(mine, theirs)):
        np.testing.assert_allclose(
            m.detach().numpy(), t.detach().numpy(), rtol=rtol, err_msg=f"param {i}"
        )
        assert m._version == t._version, f"param {i}: in-place changes"
    assert_same(my_opt.state_dict(), their_opt.state_dict(), rtol, "state_dict()")
    for i, (m, t) in enumerate(zip(mine, theirs)):
        state, their_state = my_opt.state[m], their_opt.state[t]
        assert_same(state, their_state, rtol, f"state[param {i}]")
        for key, value in their_state.items():
            assert state[key]._version == value._version, f"state[param {i}][{key!r}]: versions"
    assert repr(my_opt) == repr(their_opt)


@pytest.mark.skipif(
    torch.backends.cpu.get_cpu_capability() not in ("AVX2", "AVX512"),
    reason="torch's CPU kernels fuse multiply-adds (FMA) only in their AVX2/AVX512 builds",
)
@pytest.mark.parametrize(("name", "options"), CASES, ids=CASE_IDS)
def test_float32_steps_are_torchs_to_the_bit_given_torchs_sqrt(name, options, monkeypatch):
    """Every rounding is torch's but sqrt's: with torch's sqrt, float32 results are identical."""
    for module in (adam, rmsprop, adagrad, adadelta, nadam):
        monkeypatch.setattr(module, "sqrt", lambda x: torch.from_numpy(np.array(x)).sqrt().numpy())
    (mine, _), (theirs, _) = (train(lib, name, options) for lib in (ma, torch))
    for m, t in zip(mine, theirs):
        np.testing.assert_array_equal(m.detach().numpy(), t.detach().numpy())


@pytest.mark.parametrize(("name", "options"), CASES, ids=CASE_IDS)
def test_steps_taken_block_by_block_give_the_same_bits(name, options, monkeypatch):
    """A large float32 parameter is updated in blocks of _pointwise.BLOCK elements (a small
    float64 scratch): with blocks of 8 elements here, the same bits as in one piece."""
    whole, _ = train(ma, name, options)
    monkeypatch.setattr(_pointwise, "BLOCK", 8)
    blocks, _ = train(ma, name, options)
    for w, b in zip(whole, blocks):
        np.testing.assert_array_equal(w.detach().numpy(), b.detach().numpy())


def test_steps_change_the_parameters_in_place():
    for name, options in CASES:
        params = make_params(ma, np.float32)
        arrays = [p.detach().numpy() for p in params]  # the parameters' memory
        before = [a.copy() for a in arrays]
        train(ma, name, options, steps=3, params=params)
        for p, array, old in zip(params, arrays, before):
            assert p.detach().numpy() is array and not np.array_equal(array, old), name


PARAM_GROUPS = [
    ("SGD", {"lr": 0.1, "momentum": 0.9}, [{"lr": 0.01}, {"momentum": 0.5, "nesterov": True}]),
    ("Adam", {"lr": 0.01}, [{"betas": (0.5, 0.99)}, {"lr": 0.001, "amsgrad": True}]),
    ("RMSprop", {}, [{"centered": True}, {"lr": 0.1, "momentum": 0.5}]),
    ("Adagrad", {"lr": 0.1}, [{"lr_decay": 0.1}, {}]),
]


@pytest.mark.parametrize(("name", "defaults", "groups"), PARAM_GROUPS, ids=lambda x: str(x))
def test_parameter_groups_with_their_own_options(name, defaults, groups):
    runs = {}
    for lib in LIBS:
        params = make_params(lib, np.float32)
        optimizer = getattr(lib.optim, name)(
            [{"params": [p], **options} for p, options in zip(params, groups)], **defaults
        )
        runs[lib] = train(lib, name, defaults, params=params, optimizer=optimizer)
    (mine, my_opt), (theirs, their_opt) = runs[ma], runs[torch]
    for m, t in zip(mine, theirs):
        np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), rtol=1e-6)
    assert_same(my_opt.state_dict(), their_opt.state_dict(), 1e-6)
    assert repr(my_opt) == repr(their_opt)


def test_add_param_group_takes_the_defaults():
    reprs = {}
    for lib in LIBS:
        w, b = make_params(lib, np.float32)
        optimizer = lib.optim.Adam([w], lr=0.01, weight_decay=0.1)
        optimizer.add_param_group({"params": b, "betas": (0.5, 0.6)})
        reprs[lib] = repr(optimizer)
        assert [len(g["params"]) for g in optimizer.param_groups] == [1, 1]
    assert reprs[ma] == reprs[torch]
    assert reprs[ma].startswith(
        "Adam (\nParameter Group 0\n    amsgrad: False\n    betas: (0.9, 0.999)"
    )


@pytest.mark.parametrize(("name", "options"), CASES[1::3], ids=CASE_IDS[1::3])
def test_load_state_dict_carries_on_as_torch(name, options):
    """Ten steps, the state into a fresh optimizer over copies of the parameters, ten more steps."""
    runs = {}
    for lib in LIBS:
        params, first = train(lib, name, options, steps=10)
        copies = [p.detach().clone().requires_grad_(True) for p in params]
        second = getattr(lib.optim, name)(copies, **options)
        second.load_state_dict(first.state_dict())
        runs[lib] = train(lib, name, options, steps=10, params=copies, optimizer=second)
    (mine, my_opt), (theirs, their_opt) = runs[ma], runs[torch]
    for m, t in zip(mine, theirs):
        np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), rtol=1e-6)
    assert_same(my_opt.state_dict(), their_opt.state_dict(), 1e-6)


def test_load_state_dict_casts_the_state_to_the_parameters_dtype_but_not_step():
    for lib in LIBS:
        params, optimizer = train(lib, "Adam", {}, np.float32, steps=2)
        doubles = [p.detach().double().requires_grad_(True) for p in params]
        loaded = lib.optim.Adam(doubles)
        loaded.load_state_dict(optimizer.state_dict())
        state = loaded.state[doubles[0]]
        assert [dtype_name(state[k]) for k in state] == ["float32", "float64", "float64"], lib


def _closure(optimizer, params):
    """What step(closure) wants: zero the gradients, compute the loss, backward, return it."""

    def closure():
        optimizer.zero_grad()
        loss = sum(((p - 3) ** 2).sum() for p in params)
        loss.backward()
        return loss

    return closure


def test_step_runs_the_closure_with_grad_enabled_and_returns_its_loss():
    losses = {}
    for lib in LIBS:
        params = make_params(lib, np.float32)
        optimizer = lib.optim.SGD(params, lr=0.1)
        with lib.no_grad():
            losses[lib] = [optimizer.step(_closure(optimizer, params)).item() for _ in range(3)]
        assert optimizer.step() is None
    np.testing.assert_allclose(losses[ma], losses[torch], rtol=1e-6)


def test_zero_grad_sets_none_or_zeros_in_place():
    for lib in LIBS:
        w, b = make_params(lib, np.float32)
        optimizer = lib.optim.SGD([w, b])
        set_gradients(lib, [w, b], np.random.default_rng(0))
        grad = w.grad
        optimizer.zero_grad(set_to_none=False)
        assert w.grad is grad and not w.grad.numpy().any(), lib
        optimizer.zero_grad()
        assert w.grad is None and b.grad is None, lib


def test_parameters_without_a_gradient_are_left_alone():
    for lib in LIBS:
        w, b = make_params(lib, np.float32)
        optimizer = lib.optim.Adam([w, b])
        w.grad = lib.ones_like(w)
        optimizer.step()
        assert b._version == 0 and len(optimizer.state) == 1, lib


def test_sgd_without_momentum_keeps_no_state():
    for lib in LIBS:
        params, optimizer = train(lib, "SGD", {"lr": 0.1}, steps=2)
        assert optimizer.state_dict()["state"] == {}, lib


def test_a_users_optimizer_subclass_runs_on_both():
    results = {}
    for lib in LIBS:

        class PlainSGD(lib.optim.Optimizer):
            def __init__(self, params, lr):
                super().__init__(params, {"lr": lr})

            @lib.no_grad()
            def step(self, closure=None):
                for group in self.param_groups:
                    for p in group["params"]:
                        if p.grad is not None:
                            p.add_(p.grad, alpha=-group["lr"])

        params = make_params(lib, np.float32)
        train(lib, "PlainSGD", {}, params=params, optimizer=PlainSGD(params, lr=0.1), steps=5)
        results[lib] = params[0].detach().numpy().copy(), repr(PlainSGD(params, lr=0.1))
    np.testing.assert_allclose(results[ma][0], results[torch][0], rtol=1e-6)
    assert results[ma][1] == results[torch][1] == "PlainSGD (\nParameter Group 0\n    lr: 0.1\n)"


def test_a_model_trains_as_in_torch():
    """nn.Linear, mse_loss, Adam and StepLR: the loop of a PyTorch program, in both libraries."""
    torch.manual_seed(0)
    models = {torch: torch.nn.Linear(4, 3)}
    models[ma] = ma.nn.Linear(4, 3)
    models[ma].load_state_dict(models[torch].state_dict())
    rng = np.random.default_rng(0)
    x, y = (
        rng.standard_normal((8, 4)).astype(np.float32),
        rng.standard_normal((8, 3)).astype(np.float32),
    )
    losses = {}
    for lib, model in models.items():
        optimizer = lib.optim.Adam(model.parameters(), lr=0.05)
        scheduler = lib.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)
        losses[lib] = []
        for _ in range(15):
            optimizer.zero_grad()
            loss = lib.nn.functional.mse_loss(model(lib.tensor(x)), lib.tensor(y))
            loss.backward()
            optimizer.step()
            scheduler.step()
            losses[lib].append(loss.item())
    np.testing.assert_allclose(losses[ma], losses[torch], rtol=1e-5)
    np.testing.assert_allclose(
        models[ma].weight.detach().numpy(), models[torch].weight.detach().numpy(), atol=1e-6
    )


# --- errors and warnings -------------------------------------------------------


def _p(lib):
    return lib.zeros(2, requires_grad=True)


def _in_two_groups(lib):
    p = _p(lib)
    lib.optim.Adam([{"params": [p]}, {"params": [p], "lr": 0.1}])


def _one_cycle_past_the_end(lib):
    optimizer = lib.optim.SGD([_p(lib)])
    scheduler = lib.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1.0, total_steps=3)
    for _ in range(4):
        optimizer.step()
        scheduler.step()


ERRORS = {
    "negative lr": lambda lib: lib.optim.SGD([_p(lib)], lr=-1),
    "negative momentum": lambda lib: lib.optim.SGD([_p(lib)], momentum=-0.5),
    "negative weight decay": lambda lib: lib.optim.SGD([_p(lib)], weight_decay=-1e-3),
    "nesterov without momentum": lambda lib: lib.optim.SGD([_p(lib)], nesterov=True),
    "nesterov with dampening": lambda lib: lib.optim.SGD(
        [_p(lib)], momentum=0.9, dampening=0.1, nesterov=True
    ),
    "empty list": lambda lib: lib.optim.SGD([], lr=0.1),
    "NAdam: negative momentum_decay": lambda lib: lib.optim.NAdam([_p(lib)], momentum_decay=-1),
    "NAdam: beta": lambda lib: lib.optim.NAdam([_p(lib)], betas=(0.9, 1.0)),
    "a tensor as params": lambda lib: lib.optim.SGD(_p(lib), lr=0.1),
    "a number as a param": lambda lib: lib.optim.Adam([1.0]),
    "a non-leaf": lambda lib: lib.optim.Adam([_p(lib) * 2]),
    "a set in a group": lambda lib: lib.optim.Adam([{"params": {_p(lib)}}]),
    "a param in two groups": lambda lib: _in_two_groups(lib),
    "add_param_group of a list": lambda lib: lib.optim.Adam([_p(lib)]).add_param_group([_p(lib)]),
    "Adam negative lr": lambda lib: lib.optim.Adam([_p(lib)], lr=-0.5),
    "Adam eps": lambda lib: lib.optim.Adam([_p(lib)], eps=-1e-8),
    "Adam beta1": lambda lib: lib.optim.Adam([_p(lib)], betas=(1.0, 0.999)),
    "Adam beta2": lambda lib: lib.optim.Adam([_p(lib)], betas=(0.9, -0.1)),
    "Adam weight decay": lambda lib: lib.optim.Adam([_p(lib)], weight_decay=-1),
    "Adam integer betas": lambda lib: lib.optim.Adam([_p(lib)], betas=(0, 0.9)),
    "AdamW lr": lambda lib: lib.optim.AdamW([_p(lib)], lr=-1e-3),
    "RMSprop alpha": lambda lib: lib.optim.RMSprop([_p(lib)], alpha=-0.9),
    "RMSprop momentum": lambda lib: lib.optim.RMSprop([_p(lib)], momentum=-1),
    "RMSprop eps": lambda lib: lib.optim.RMSprop([_p(lib)], eps=-1),
    "Adagrad lr_decay": lambda lib: lib.optim.Adagrad([_p(lib)], lr_decay=-1),
    "Adagrad initial value": lambda lib: lib.optim.Adagrad([_p(lib)], initial_accumulator_value=-1),
    "Adagrad eps": lambda lib: lib.optim.Adagrad([_p(lib)], eps=-1),
    "Adadelta rho": lambda lib: lib.optim.Adadelta([_p(lib)], rho=1.5),
    "Adadelta lr": lambda lib: lib.optim.Adadelta([_p(lib)], lr=-1),
    "load: group count": lambda lib: lib.optim.SGD([_p(lib)]).load_state_dict(
        lib.optim.SGD([{"params": [_p(lib)]}, {"params": [_p(lib)]}]).state_dict()
    ),
    "load: group size": lambda lib: lib.optim.SGD([_p(lib)]).load_state_dict(
        lib.optim.SGD([_p(lib), _p(lib)]).state_dict()
    ),
    "scheduler of a non-optimizer": lambda lib: lib.optim.lr_scheduler.StepLR([_p(lib)], 2),
    "resuming without initial_lr": lambda lib: lib.optim.lr_scheduler.StepLR(
        lib.optim.SGD([_p(lib)]), 2, last_epoch=3
    ),
    "LambdaLR: one lambda per group": lambda lib: lib.optim.lr_scheduler.LambdaLR(
        lib.optim.SGD([_p(lib)]), [abs, abs]
    ),
    "ReduceLROnPlateau factor": lambda lib: lib.optim.lr_scheduler.ReduceLROnPlateau(
        lib.optim.SGD([_p(lib)]), factor=1.0
    ),
    "ReduceLROnPlateau mode": lambda lib: lib.optim.lr_scheduler.ReduceLROnPlateau(
        lib.optim.SGD([_p(lib)]), mode="median"
    ),
    "ReduceLROnPlateau threshold mode": lambda lib: lib.optim.lr_scheduler.ReduceLROnPlateau(
        lib.optim.SGD([_p(lib)]), threshold_mode="ratio"
    ),
    "ReduceLROnPlateau min_lrs": lambda lib: lib.optim.lr_scheduler.ReduceLROnPlateau(
        lib.optim.SGD([_p(lib)]), min_lr=[0.1, 0.2]
    ),
    "OneCycleLR without steps": lambda lib: lib.optim.lr_scheduler.OneCycleLR(
        lib.optim.SGD([_p(lib)]), max_lr=0.1
    ),
    "OneCycleLR pct_start": lambda lib: lib.optim.lr_scheduler.OneCycleLR(
        lib.optim.SGD([_p(lib)]), max_lr=0.1, total_steps=10, pct_start=1
    ),
    "OneCycleLR past the end": lambda lib: _one_cycle_past_the_end(lib),
    "OneCycleLR without momentum": lambda lib: lib.optim.lr_scheduler.OneCycleLR(
        lib.optim.Adagrad([_p(lib)]), 1.0, 3
    ),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors_are_torchs(case):
    theirs = error_of(ERRORS[case], torch)
    assert theirs is not None
    mine = error_of(ERRORS[case], ma)
    expected = (theirs[0], theirs[1].replace("torch.FloatTensor", "mini_autograd.FloatTensor"))
    assert mine == expected


def test_the_unknown_type_is_named_as_torch_names_it():
    assert error_of(ERRORS["a tensor as params"], ma)[1].endswith(
        "but got mini_autograd.FloatTensor"
    )
    assert error_of(ERRORS["a number as a param"], ma)[1].endswith("params is float")


def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(w.category, str(w.message)) for w in caught]


def _scheduler_first(lib):
    optimizer = lib.optim.SGD([_p(lib)], lr=0.1)
    scheduler = lib.optim.lr_scheduler.StepLR(optimizer, 2)
    scheduler.step()
    optimizer.step()
    scheduler.step()


def _optimizer_first(lib):
    optimizer = lib.optim.SGD([_p(lib)], lr=0.1)
    scheduler = lib.optim.lr_scheduler.StepLR(optimizer, 2)
    for _ in range(3):
        optimizer.step()
        scheduler.step()


def _step_replaced(lib):
    optimizer = lib.optim.SGD([_p(lib)], lr=0.1)
    scheduler = lib.optim.lr_scheduler.ExponentialLR(optimizer, 0.5)
    optimizer.step = lambda closure=None: None
    optimizer.step()
    scheduler.step()


def _step_with_epoch(lib):
    optimizer = lib.optim.SGD([_p(lib)], lr=0.1)
    scheduler = lib.optim.lr_scheduler.StepLR(optimizer, 2)
    optimizer.step()
    scheduler.step(4)


WARNINGS = {
    "scheduler.step() before optimizer.step()": _scheduler_first,
    "in the right order": _optimizer_first,
    "optimizer.step replaced": _step_replaced,
    "get_lr() called directly": lambda lib: lib.optim.lr_scheduler.StepLR(
        lib.optim.SGD([_p(lib)]), 2
    ).get_lr(),
    "step(epoch)": _step_with_epoch,
    "a duplicate parameter": lambda lib: lib.optim.SGD([_p(lib)] * 2),
}


@pytest.mark.parametrize("case", WARNINGS)
def test_warnings_are_torchs(case):
    theirs = _warnings_of(lambda: WARNINGS[case](torch))
    assert _warnings_of(lambda: WARNINGS[case](ma)) == theirs
    assert (case == "in the right order") == (theirs == [])


def test_differentiable_is_refused():
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        ma.optim.SGD([_p(ma)], differentiable=True)


# --- learning-rate schedules ---------------------------------------------------


class Halving:
    """A callable object as lr_lambda: LambdaLR's state_dict keeps its attributes."""

    def __init__(self):
        self.base = 0.5

    def __call__(self, epoch):
        return self.base ** (epoch // 4)


SCHEDULES = [
    ("StepLR", {"step_size": 7}),
    ("StepLR", {"step_size": 3, "gamma": 0.5}),
    ("MultiStepLR", {"milestones": [3, 10, 10, 25], "gamma": 0.3}),
    ("ExponentialLR", {"gamma": 0.9}),
    ("LambdaLR", {"lr_lambda": lambda epoch: 1 / (1 + epoch)}),
    ("LambdaLR", {"lr_lambda": [lambda epoch: math.cos(epoch / 10), Halving()]}),
    ("CosineAnnealingLR", {"T_max": 10}),
    ("CosineAnnealingLR", {"T_max": 7, "eta_min": 0.001}),
    ("OneCycleLR", {"max_lr": 0.5, "total_steps": 30}),
    ("OneCycleLR", {"max_lr": [1.0, 0.1], "epochs": 3, "steps_per_epoch": 10, "three_phase": True}),
    (
        "OneCycleLR",
        {"max_lr": 0.5, "total_steps": 31, "anneal_strategy": "linear", "pct_start": 0.5},
    ),
]

SCHEDULE_IDS = [f"{name} {', '.join(options)} {i}" for i, (name, options) in enumerate(SCHEDULES)]


def _two_groups(lib, name="SGD"):
    """lib.optim.<name> over two parameter groups, of lr 0.1 and 0.02."""
    params = make_params(lib, np.float32)
    return getattr(lib.optim, name)(
        [{"params": params[:1]}, {"params": params[1:], "lr": 0.02}], lr=0.1
    )


def _schedule(lib, name, options, optimizer_name="SGD", epochs=30):
    optimizer = _two_groups(lib, optimizer_name)
    scheduler = getattr(lib.optim.lr_scheduler, name)(optimizer, **options)
    seen = [scheduler.get_last_lr()]
    for _ in range(epochs if name != "OneCycleLR" else scheduler.total_steps):
        optimizer.step()
        scheduler.step()
        seen.append(
            [dict((k, v) for k, v in g.items() if k != "params") for g in optimizer.param_groups]
        )
        seen.append(scheduler.get_last_lr())
    return seen, scheduler, optimizer


@pytest.mark.parametrize(("name", "options"), SCHEDULES, ids=SCHEDULE_IDS)
def test_schedules_match_torch_over_30_epochs(name, options):
    (mine, my_scheduler, my_opt), (theirs, their_scheduler, their_opt) = (
        _schedule(lib, name, options) for lib in (ma, torch)
    )
    assert mine == theirs
    assert my_scheduler.state_dict() == their_scheduler.state_dict()
    assert list(my_scheduler.state_dict()) == list(their_scheduler.state_dict())
    assert repr(my_opt) == repr(their_opt)


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("CosineAnnealingLR", {"T_max": 10}),
        ("StepLR", {"step_size": 4}),
        ("ExponentialLR", {"gamma": 0.5}),
    ],
    ids=str,
)
def test_a_schedule_resumed_at_last_epoch_matches_torch(name, options):
    seen = {}
    for lib in LIBS:
        optimizer = _two_groups(lib)
        for group in optimizer.param_groups:
            group["initial_lr"] = group["lr"] * 2
        scheduler = getattr(lib.optim.lr_scheduler, name)(optimizer, last_epoch=5, **options)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # get_lr() called directly
            seen[lib] = [scheduler.get_last_lr(), scheduler.get_lr()]
        for _ in range(10):
            optimizer.step()
            scheduler.step()
            seen[lib].append(scheduler.get_last_lr())
    assert seen[ma] == seen[torch]


def test_one_cycle_cycles_adams_beta1():
    runs = [
        _schedule(lib, "OneCycleLR", {"max_lr": 0.5, "total_steps": 12}, "Adam") for lib in LIBS
    ]
    assert runs[0][0] == runs[1][0]


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR"])
def test_step_with_an_epoch_uses_the_closed_form(name):
    options = dict(SCHEDULES[[n for n, _ in SCHEDULES].index(name)][1])
    seen = {}
    for lib in LIBS:
        optimizer = _two_groups(lib)
        scheduler = getattr(lib.optim.lr_scheduler, name)(optimizer, **options)
        optimizer.step()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            seen[lib] = [
                (scheduler.step(epoch), scheduler.get_last_lr())[1] for epoch in (5, 2, 17)
            ]
    assert seen[ma] == seen[torch]


def test_state_dict_restores_a_schedule():
    for lib in LIBS:
        _, first, _ = _schedule(lib, "CosineAnnealingLR", {"T_max": 10}, epochs=12)
        _, second, _ = _schedule(lib, "CosineAnnealingLR", {"T_max": 10}, epochs=0)
        second.load_state_dict(first.state_dict())
        assert second.last_epoch == 12 and second.get_last_lr() == first.get_last_lr(), lib
    states = [
        _schedule(lib, "LambdaLR", {"lr_lambda": [lambda epoch: math.cos(epoch / 10), Halving()]})[
            1
        ].state_dict()
        for lib in LIBS
    ]
    assert states[0]["lr_lambdas"] == states[1]["lr_lambdas"] == [None, {"base": 0.5}]


METRICS = [1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.8, 0.8, 0.8, 0.8] * 3


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"patience": 1},
        {"patience": 0, "factor": 0.5, "cooldown": 2, "min_lr": [0.01, 0.001]},
        {"mode": "max", "patience": 2, "threshold": 0.1, "threshold_mode": "abs"},
        {"mode": "max", "patience": 1, "min_lr": 0.05},
        {"patience": 1, "threshold_mode": "abs", "eps": 0.05},
    ],
    ids=str,
)
def test_reduce_lr_on_plateau_matches_torch(options):
    seen = {}
    for lib in LIBS:
        optimizer = _two_groups(lib)
        scheduler = lib.optim.lr_scheduler.ReduceLROnPlateau(optimizer, **options)
        seen[lib] = [scheduler.get_last_lr()]
        for metric in METRICS:
            optimizer.step()
            scheduler.step(lib.tensor(metric))
            seen[lib].append((scheduler.get_last_lr(), scheduler.num_bad_epochs, scheduler.best))
        seen[lib].append(scheduler.state_dict())
    assert seen[ma] == seen[torch]


# Few iterations, so that the runs stop short of the minimum, where directions are rounding noise
LBFGS_CASES = [
    {"max_iter": 4},
    {"lr": 0.5, "history_size": 2, "max_iter": 5},
    {"line_search_fn": "strong_wolfe", "max_iter": 3},
    {"line_search_fn": "strong_wolfe", "history_size": 2, "max_iter": 4, "max_eval": 5},
    {"tolerance_change": 1e-1},
]


def lbfgs_run(lib, options, dtype, steps=2):
    """`steps` LBFGS steps on a smooth, curved loss whose value and gradient the closure works
    out in numpy (the same bits for both libraries): (losses, params, optimizer)."""
    params = make_params(lib, dtype)
    optimizer = lib.optim.LBFGS(params, **options)

    def closure():
        optimizer.zero_grad()
        loss = 0.0
        for p in params:
            x = p.detach().numpy().astype(np.float64)
            loss += float((0.5 * (x - 3) ** 2 + 0.05 * x**4).sum())
            p.grad = lib.tensor((x - 3 + 0.2 * x**3).astype(dtype))
        return lib.tensor(loss, dtype=p.dtype)

    losses = [optimizer.step(closure).item() for _ in range(steps)]
    return losses, params, optimizer


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("options", LBFGS_CASES, ids=str)
def test_lbfgs_steps_and_state_match_torch(options, dtype):
    """LBFGS (the two-loop recursion, or the strong Wolfe line search) takes torch's steps and
    keeps torch's state: directions, step sizes, the stored pairs, counts."""
    rtol = {np.float32: 1e-4, np.float64: 1e-10}[dtype]  # dot products summed in another order
    (t_losses, t_params, t_opt), (m_losses, m_params, m_opt) = (
        lbfgs_run(lib, options, dtype) for lib in LIBS
    )
    np.testing.assert_allclose(m_losses, t_losses, rtol=rtol)
    for mine, theirs in zip(m_params, t_params):
        assert_same(mine.detach(), theirs.detach(), rtol, "param")
    t_state, m_state = t_opt.state[t_params[0]], m_opt.state[m_params[0]]
    assert list(m_state) == list(t_state)
    for key in ("func_evals", "n_iter"):
        assert m_state[key] == t_state[key], key
    for key in ("d", "prev_flat_grad", "old_dirs", "old_stps", "ro", "H_diag"):
        assert_same(m_state[key], t_state[key], rtol, key)
    assert len(m_state["al"]) == len(t_state["al"])


def test_lbfgs_errors_are_torchs():
    def groups(lib):
        return lib.optim.LBFGS([{"params": [_p(lib)]}, {"params": [_p(lib)]}])

    def line_search(lib):
        p = lib.ones(2, requires_grad=True)
        optimizer = lib.optim.LBFGS([p], line_search_fn="armijo")
        optimizer.step(lambda: (p * p).sum().backward() or (p * p).sum())

    for program in (groups, line_search, lambda lib: lib.optim.LBFGS([_p(lib)], lr=-1)):
        assert error_of(program, ma) == error_of(program, torch) != None  # noqa: E711
