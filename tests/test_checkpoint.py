"""torch.utils.checkpoint compared with torch: the same programs give the same gradients, run the
function as many times, save fewer bytes, and raise or warn with the same type and text.

Each program `fn(lib)` runs with `lib = torch` and `lib = mini_autograd`.
"""

import functools
import importlib
import logging
import warnings

import numpy as np
import pytest
from parity_helpers import LIBS, plain, to_numpy
from parity_helpers import same_on_both as _same_on_both

import mini_autograd as ma

# checkpoint's errors name shapes and dtypes, which mini_autograd prints under its own name
same_on_both = functools.partial(_same_on_both, own_names=True)


def cp(lib):
    """lib.utils.checkpoint."""
    return importlib.import_module(f"{lib.__name__}.utils.checkpoint")


def leaf(lib, n=4, seed=0):
    values = np.random.default_rng(seed).standard_normal(n)
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


def block(lib):
    def f(x, y=None):
        h = x.sin().exp() * 2
        if y is not None:
            h = h * y
        return h.tanh().cos()

    return f


# --- gradients --------------------------------------------------------------------------------
@pytest.mark.parametrize("use_reentrant", [True, False])
def test_gradients_equal_the_unchecked_ones_and_torchs(use_reentrant):
    def run(lib):
        x = leaf(lib)
        block(lib)(x).sum().backward()
        expected = x.grad
        x.grad = None
        out = cp(lib).checkpoint(block(lib), x, use_reentrant=use_reentrant)
        out.sum().backward()
        assert np.allclose(to_numpy(x.grad), to_numpy(expected))
        return plain(out), plain(x.grad), out.grad_fn.name()

    same_on_both(run)


def test_non_reentrant_supports_kwargs_autograd_grad_and_double_backward():
    def run(lib):
        x, y = leaf(lib), leaf(lib, seed=1)
        out = cp(lib).checkpoint(block(lib), x, y=y, use_reentrant=False)
        gx, gy = lib.autograd.grad(out.sum(), (x, y), create_graph=True)
        (ggx,) = lib.autograd.grad(gx.sum(), x)
        return plain([gx, gy, ggx])

    same_on_both(run)


def test_nested_checkpoints_and_non_tensor_outputs():
    def run(lib):
        c = cp(lib).checkpoint
        x = leaf(lib)

        def inner(t, k):
            return t.sin() * k, "label"

        def outer(t):
            h, label = c(inner, t, 3, use_reentrant=False)
            return h.exp().sin(), label

        out, label = c(outer, x, use_reentrant=False)
        out.sum().backward()
        return label, plain(x.grad)

    same_on_both(run)


def test_checkpoint_sequential_gradients():
    def run(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(
            lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 4), lib.nn.Tanh(),
            lib.nn.Linear(4, 2),
        )  # fmt: skip
        x = lib.ones(5, 3, requires_grad=True)
        grads = []
        for use_reentrant in (True, False):
            out = cp(lib).checkpoint_sequential(model, 2, x, use_reentrant=use_reentrant)
            out.sum().backward()
            grads.append(np.round(to_numpy(model[0].weight.grad), 5).tolist())
            grads.append(np.round(to_numpy(x.grad), 5).tolist())
            model.zero_grad()
            x.grad = None
        return grads

    same_on_both(run)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_dropout_recomputed_with_the_forwards_random_state(use_reentrant):
    def run(lib):
        x = lib.ones(50, dtype=lib.float64, requires_grad=True)
        lib.manual_seed(0)
        out = cp(lib).checkpoint(
            lambda t: lib.nn.functional.dropout(t.exp(), 0.5), x, use_reentrant=use_reentrant
        )
        lib.manual_seed(1)  # the recomputation gets the forward's state back...
        out.sum().backward()
        after = lib.rand(3)  # ...and the state outside is left as it was
        lib.manual_seed(0)
        mask = to_numpy(lib.nn.functional.dropout(lib.ones(50), 0.5)) != 0
        return bool((mask == (to_numpy(x.grad) != 0)).all()), plain(after)

    assert same_on_both(run)[1][0] is True


def test_preserve_rng_state_false_recomputes_with_the_current_state():
    def run(lib):
        x = lib.ones(50, dtype=lib.float64, requires_grad=True)
        lib.manual_seed(0)
        out = cp(lib).checkpoint(
            lambda t: lib.nn.functional.dropout(t.exp(), 0.5),
            x,
            use_reentrant=False,
            preserve_rng_state=False,
        )
        lib.manual_seed(1)
        out.sum().backward()
        return plain(x.grad)

    same_on_both(run)


# --- recomputation: how often the function runs -----------------------------------------------
@pytest.mark.parametrize("early_stop", [True, False])
def test_number_of_runs_and_early_stop(early_stop):
    def run(lib):
        calls = []

        def f(t):
            calls.append("forward")
            h = t.sin().exp()
            calls.append("after exp")
            return h.clone() + 1  # saves nothing after exp: early stop skips it

        x = leaf(lib)
        out = cp(lib).checkpoint(f, x, use_reentrant=False, early_stop=early_stop)
        out.sum().backward(retain_graph=True)
        out.sum().backward()  # a second backward call recomputes again
        return calls

    same_on_both(run)


def test_graph_exec_group_shares_one_recomputation():
    def run(lib):
        calls = []

        def f(t):
            calls.append(1)
            y = t.sin().cos()
            return y, y.sin().cos()

        x = leaf(lib)
        y, z = cp(lib).checkpoint(f, x, use_reentrant=False)
        with cp(lib).GraphExecGroup():
            (gy,) = lib.autograd.grad(z.sum(), y)
            (gx,) = lib.autograd.grad(y, x, gy)
        return len(calls), plain(gx)

    same_on_both(run)


# --- memory -----------------------------------------------------------------------------------
def saved_bytes_during(lib, fn):
    """Bytes of every tensor saved for backward while fn runs (an outer saved_tensors_hooks sees
    what the graph keeps: the checkpoint's inputs, not what the checkpoint recomputes)."""
    counted = []

    def pack(t):
        counted.append(t.numel() * t.element_size())
        return t

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return out, sum(counted)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_saves_fewer_bytes_while_the_graph_is_alive(use_reentrant):
    def run(lib):
        x = lib.ones(1000, dtype=lib.float64, requires_grad=True)
        f = block(lib)
        out_plain, plain_bytes = saved_bytes_during(lib, lambda: f(x).sum())
        out_ckpt, ckpt_bytes = saved_bytes_during(
            lib, lambda: cp(lib).checkpoint(f, x, use_reentrant=use_reentrant).sum()
        )
        out_plain.backward()
        out_ckpt.backward()  # and the graph still works
        return plain_bytes, ckpt_bytes

    plain_bytes, ckpt_bytes = same_on_both(run)[1]
    assert ckpt_bytes == 8000 < plain_bytes  # only the input is kept


def test_mini_autograd_drops_the_intermediates_after_the_forward():
    import weakref

    arrays = []

    def f(t):
        h = t.sin().exp()
        arrays.append(weakref.ref(h._data))  # mini_autograd's storage: a numpy array
        return h.cos()

    x = ma.ones(1000, dtype=ma.float64, requires_grad=True)
    kept = f(x)
    assert arrays[0]() is not None  # the plain graph keeps exp's result alive
    del kept
    out = cp(ma).checkpoint(f, x, use_reentrant=False)
    assert arrays[1]() is None  # the checkpoint does not
    out.sum().backward()


# --- errors and warnings: same type and text --------------------------------------------------
def test_warning_when_use_reentrant_is_not_passed():
    def run(lib):
        x = leaf(lib)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cp(lib).checkpoint(block(lib), x)
            cp(lib).checkpoint_sequential([lib.nn.Tanh(), lib.nn.Tanh()], 2, x)
            cp(lib).checkpoint(block(lib), x.detach(), use_reentrant=True)  # no input needs grad
            cp(lib).checkpoint(block(lib), x, use_reentrant=False)  # no warning
        return [(w.category.__name__, str(w.message)) for w in caught]

    assert len(same_on_both(run)[1]) == 3


def test_the_use_reentrant_warning_points_at_the_caller():
    # torch's points into torch._dynamo (the wrapper that keeps dynamo out of checkpoint)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed") as caught:
        cp(ma).checkpoint(block(ma), leaf(ma))
    assert caught[0].filename == __file__


def reentrant_with_autograd_grad(lib):
    x = leaf(lib)
    out = cp(lib).checkpoint(block(lib), x, use_reentrant=True)
    lib.autograd.grad(out.sum(), x)


def reentrant_with_backward_inputs(lib):
    x = leaf(lib)
    out = cp(lib).checkpoint(block(lib), x, use_reentrant=True)
    out.sum().backward(inputs=[x])


def reentrant_output_needs_no_grad(lib):
    x = leaf(lib)

    def f(t):
        with lib.no_grad():
            return t * 2

    cp(lib).checkpoint(f, x, use_reentrant=True).sum().backward()


def reentrant_with_kwargs(lib):
    cp(lib).checkpoint(block(lib), leaf(lib), y=leaf(lib), use_reentrant=True)


def reentrant_with_debug(lib):
    cp(lib).checkpoint(block(lib), leaf(lib), use_reentrant=True, debug=True)


def unknown_determinism_check(lib):
    cp(lib).checkpoint(block(lib), leaf(lib), use_reentrant=False, determinism_check="strict")


def debug_with_context_fn(lib):
    nulls = lambda: (lib.autograd.graph.saved_tensors_hooks(id, id), None)  # noqa: E731
    cp(lib).checkpoint(block(lib), leaf(lib), use_reentrant=False, debug=True, context_fn=nulls)


def nondeterministic(first, later, **kwargs):
    """A program whose checkpointed function does `first` in the forward, `later` afterwards."""

    def program(lib):
        runs = []

        def f(t):
            runs.append(1)
            return (first if len(runs) == 1 else later)(lib, t)

        out = cp(lib).checkpoint(f, leaf(lib), use_reentrant=False, **kwargs)
        out.sum().backward()

    program.__name__ = f"{first.__name__}_then_{later.__name__}"
    return program


def saves_3(lib, t):
    return t.sin().exp().sin()


def saves_2(lib, t):
    return t.sin().exp()


def saves_2_other_shape(lib, t):
    return t.sin() * lib.ones(2, 4, dtype=lib.float64)


def saves_2_other_dtype(lib, t):
    return t.sin().float().exp()


def unpacks_twice(lib):
    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * 2

        @staticmethod
        def backward(ctx, g):
            _ = ctx.saved_tensors
            _ = ctx.saved_tensors  # the recomputed tensors were handed out once already
            return g * 2

    out = cp(lib).checkpoint(lambda t: Twice.apply(t.sin()), leaf(lib), use_reentrant=False)
    out.sum().backward()


def overlapping_backward_in_a_group(lib):
    out = cp(lib).checkpoint(lambda t: t.sin().cos(), leaf(lib), use_reentrant=False)
    with cp(lib).GraphExecGroup():
        out.sum().backward(retain_graph=True)
        out.sum().backward()


def nested_groups(lib):
    with cp(lib).GraphExecGroup(), cp(lib).GraphExecGroup():
        pass


def freed_after_backward(lib):
    out = cp(lib).checkpoint(lambda t: t.exp(), leaf(lib), use_reentrant=False)
    out.sum().backward()
    _ = out.grad_fn._saved_result


ERRORS = [
    reentrant_with_autograd_grad,
    reentrant_with_backward_inputs,
    reentrant_output_needs_no_grad,
    reentrant_with_kwargs,
    reentrant_with_debug,
    unknown_determinism_check,
    debug_with_context_fn,
    nondeterministic(saves_3, saves_2),
    nondeterministic(saves_2, saves_3, early_stop=False),
    nondeterministic(saves_2, saves_2_other_shape),
    nondeterministic(saves_2, saves_2_other_dtype),
    unpacks_twice,
    overlapping_backward_in_a_group,
    freed_after_backward,
]


@pytest.mark.parametrize("program", ERRORS, ids=lambda p: p.__name__)
def test_errors_are_torchs(program):
    assert same_on_both(program)[0] == "raises"


def test_nested_group_error():  # its text has the group's address: compared up to it
    for lib in LIBS:
        with pytest.raises(RuntimeError, match="GraphExecGroup contexts cannot be nested"):
            nested_groups(lib)


def test_debug_error_names_the_debug_flag():
    # torch's debug mode logs through this logger with arguments its messages do not format, and
    # leaves it set when it raises (an earlier test's handlers may be on it): silence the logger
    # while this runs, then restore it
    logger = logging.getLogger("LoggingTensor")
    level, propagate, disabled = logger.level, logger.propagate, logger.disabled
    logger.propagate, logger.disabled = False, True
    try:
        for lib in LIBS:
            program = nondeterministic(saves_2, saves_2_other_shape, debug=True)
            with pytest.raises(RuntimeError, match="because you passed `debug=True` to checkpoint"):
                program(lib)
    finally:
        logger.setLevel(level)
        logger.propagate, logger.disabled = propagate, disabled


def test_determinism_check_none_lets_a_different_dtype_through():
    program = nondeterministic(saves_2, saves_2_other_dtype, determinism_check="none")
    assert same_on_both(program) == ("ok", None)


def test_checkpoint_under_no_grad_is_the_plain_function():
    def run(lib):
        with lib.no_grad():
            out = cp(lib).checkpoint(block(lib), leaf(lib), use_reentrant=False)
        return out.requires_grad, out.grad_fn is None

    same_on_both(run)
