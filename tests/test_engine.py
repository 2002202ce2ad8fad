"""The engine around the ops, compared with torch: accumulation, hooks, grad mode, versions,
retain_graph/create_graph, autograd.grad, custom Functions, saved-tensor hooks, deep graphs,
memory release, reference cycles, and errors with torch's exact type and message (the texts
of mini_autograd/core/errors.py, the freed graph's and the modified saved tensor's among them, are
test_error_texts.py's).

Most tests are one program `fn(lib)` run with `lib = torch` and `lib = mini_autograd`, whose
results (or errors) must be equal.
"""

import gc
import sys
import warnings
import weakref

import numpy as np
import pytest
import torch
from parity_helpers import (
    FREED_MESSAGE,
    LIBS,
    error_of,
    f64,
    outcome,
    plain,
    same_on_both,
    square,
)

import mini_autograd as ma


# --- errors: the same type and message as torch ------------------------------------------------
def _inplace_on_saved_float32_output(lib):
    x = lib.ones(2, 3, requires_grad=True)
    y = lib.sigmoid(x)
    y.mul_(2)
    y.sum().backward()


def _inplace_on_saved_leaf_no_grad(lib):
    x = f64(lib, [1.0, 2.0, 3.0], True)
    y = x * x
    with lib.no_grad():
        x.mul_(2)
    y.sum().backward()


def _inplace_on_saved_constant(lib):
    a = f64(lib, [[1.0, 2.0], [3.0, 4.0]])
    x = f64(lib, [[1.0, 2.0], [3.0, 4.0]], True)
    y = x * a
    a += 1
    a += 1
    y.sum().backward()


def _inplace_on_saved_intermediate(lib):
    x = f64(lib, [1.0, 2.0, 3.0], True)
    h = x * 2
    y = h * h
    h.mul_(3)
    y.sum().backward()


def _inplace_on_sigmoid_input(lib):
    x = f64(lib, [1.0, 2.0], True)
    h = x + 1
    y = h.log()
    h.sub_(0.5)
    y.sum().backward()


def _inplace_on_view_of_leaf(lib):
    x = f64(lib, [[1.0, 2.0], [3.0, 4.0]], True)
    x[0].add_(1)


def _wrong_grad_shape(lib):
    x = f64(lib, [1.0, 2.0, 3.0], True)
    (x * 2).backward(f64(lib, [1.0, 1.0]))


def _unused_input(lib):
    x, z = f64(lib, [1.0, 2.0], True), f64(lib, [1.0, 2.0], True)
    lib.autograd.grad((x * 2).sum(), [x, z])


def _grad_of_input_without_grad(lib):
    x, z = f64(lib, [1.0, 2.0], True), f64(lib, [1.0, 2.0])
    lib.autograd.grad((x * 2).sum(), [z])


def _hook_on_no_grad_tensor(lib):
    f64(lib, [1.0]).register_hook(lambda g: g)


def _saved_tensors_after_backward(lib):
    x = f64(lib, [1.0, 2.0], True)
    y = square(lib).apply(x)
    y.sum().backward()
    return y.grad_fn.saved_tensors


def _custom_function_wrong_number_of_grads(lib):
    class Bad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g

    x = f64(lib, [1.0, 2.0], True)
    Bad.apply(x, x).sum().backward()


def _node_hook_wrong_count(lib):
    x = f64(lib, [1.0, 2.0], True)
    y = x * x
    y.grad_fn.register_hook(lambda gi, go: (gi[0],))
    y.sum().backward()


def _node_prehook_wrong_count(lib):
    x = f64(lib, [1.0, 2.0], True)
    y = x * x
    y.grad_fn.register_prehook(lambda go: (go[0], go[0]))
    y.sum().backward()


T2x3 = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
ERRORS = [
    # backward and autograd.grad
    ("backward_without_grad_fn", lambda lib: f64(lib, [1.0, 2.0]).sum().backward()),
    ("non_scalar_implicit_grad", lambda lib: (f64(lib, [1.0, 2.0], True) * 2).backward()),
    ("backward_of_a_number", lambda lib: (f64(lib, [1.0], True) * 2).sum().backward(1.0)),
    ("wrong_grad_shape", _wrong_grad_shape),
    ("unused_input", _unused_input),
    ("grad_of_input_without_grad", _grad_of_input_without_grad),
    ("backward_inputs_empty", lambda lib: (f64(lib, [1.0], True) * 2).sum().backward(inputs=[])),
    ("saved_tensors_after_backward", _saved_tensors_after_backward),
    ("custom_function_wrong_number_of_grads", _custom_function_wrong_number_of_grads),
    # requires_grad, leaves, hooks
    ("node_hook_wrong_count", _node_hook_wrong_count),
    ("node_prehook_wrong_count", _node_prehook_wrong_count),
    ("int_requires_grad", lambda lib: lib.tensor([1, 2], requires_grad=True)),
    ("int_requires_grad_", lambda lib: lib.tensor([1, 2]).requires_grad_()),
    ("bool_requires_grad_", lambda lib: lib.tensor([True]).requires_grad_()),
    (
        "requires_grad_false_on_non_leaf",
        lambda lib: (f64(lib, [1.0], True) * 2).requires_grad_(False),
    ),
    ("retain_grad_without_grad", lambda lib: f64(lib, [1.0]).retain_grad()),
    ("hook_on_no_grad_tensor", _hook_on_no_grad_tensor),
    ("numpy_of_requires_grad", lambda lib: f64(lib, [1.0], True).numpy()),
    ("item_of_many", lambda lib: f64(lib, [1.0, 2.0]).item()),
    # in place
    ("inplace_on_leaf_add_", lambda lib: f64(lib, [1.0], True).add_(1)),
    ("inplace_on_leaf_mul_", lambda lib: f64(lib, [1.0], True).mul_(2)),
    ("inplace_on_leaf_zero_", lambda lib: f64(lib, [1.0], True).zero_()),
    ("inplace_on_leaf_fill_", lambda lib: f64(lib, [1.0], True).fill_(3.0)),
    ("inplace_on_leaf_iadd", lambda lib: f64(lib, [1.0], True).__iadd__(1)),
    ("inplace_on_leaf_isub", lambda lib: f64(lib, [1.0], True).__isub__(1)),
    ("inplace_on_view_of_leaf", _inplace_on_view_of_leaf),
    ("inplace_output_shape", lambda lib: f64(lib, [1.0, 2.0]).add_(f64(lib, [[1.0, 2.0]] * 2))),
    ("modified_saved_float32_output", _inplace_on_saved_float32_output),
    ("modified_saved_leaf_under_no_grad", _inplace_on_saved_leaf_no_grad),
    ("modified_saved_constant", _inplace_on_saved_constant),
    ("modified_saved_intermediate", _inplace_on_saved_intermediate),
    ("modified_saved_log_input", _inplace_on_sigmoid_input),
    # shapes
    ("broadcast", lambda lib: f64(lib, T2x3) + f64(lib, [1.0, 2.0])),
    ("broadcast_mul", lambda lib: f64(lib, [[1.0], [2.0]]) * f64(lib, [[1.0, 2.0, 3.0]] * 3)),
    ("view_of_non_contiguous", lambda lib: f64(lib, T2x3).t().view(6)),
    ("view_invalid_size", lambda lib: f64(lib, T2x3).view(4)),
    ("reshape_invalid_size", lambda lib: f64(lib, T2x3).reshape(5, -1)),
    ("reshape_two_minus_ones", lambda lib: f64(lib, T2x3).reshape(-1, -1)),
    ("mm_shapes", lambda lib: f64(lib, T2x3) @ f64(lib, T2x3)),
    ("mm_fn_shapes", lambda lib: lib.mm(f64(lib, T2x3), f64(lib, T2x3))),
    ("mv_shapes", lambda lib: f64(lib, T2x3) @ f64(lib, [1.0, 2.0])),
    ("dot_shapes", lambda lib: f64(lib, [1.0, 2.0, 3.0]) @ f64(lib, [1.0, 2.0])),
    ("vec_mat_shapes", lambda lib: f64(lib, [1.0, 2.0, 3.0]) @ f64(lib, T2x3)),
    ("3d_2d_shapes", lambda lib: f64(lib, [T2x3, T2x3]) @ f64(lib, T2x3)),
    ("3d_3d_shapes", lambda lib: f64(lib, [T2x3, T2x3]) @ f64(lib, [T2x3, T2x3])),
    ("matmul_0d", lambda lib: f64(lib, 1.0) @ f64(lib, [1.0])),
    ("mm_dtypes", lambda lib: lib.mm(f64(lib, T2x3), lib.ones(3, 2))),
    ("cat_sizes", lambda lib: lib.cat([f64(lib, T2x3), f64(lib, [[1.0, 2.0]])])),
    ("cat_empty", lambda lib: lib.cat([])),
    ("cat_dim_out_of_range", lambda lib: lib.cat([f64(lib, T2x3)], dim=2)),
    ("cat_ndim", lambda lib: lib.cat([f64(lib, T2x3), f64(lib, [1.0, 2.0, 3.0])])),
    ("stack_sizes", lambda lib: lib.stack([f64(lib, T2x3), f64(lib, [[1.0, 2.0]])])),
    ("expand_invalid", lambda lib: f64(lib, T2x3).expand(3, 4)),
    ("permute_wrong_length", lambda lib: f64(lib, T2x3).permute(0)),
    ("permute_repeated_dim", lambda lib: f64(lib, T2x3).permute(0, 0)),
    ("t_of_3d", lambda lib: f64(lib, [T2x3]).t()),
    # dims out of range
    ("sum_dim", lambda lib: f64(lib, T2x3).sum(2)),
    ("sum_neg_dim", lambda lib: f64(lib, T2x3).sum(-3)),
    ("mean_dim", lambda lib: f64(lib, T2x3).mean((0, 5))),
    ("max_dim", lambda lib: f64(lib, T2x3).max(2)),
    ("softmax_dim", lambda lib: f64(lib, T2x3).softmax(2)),
    ("log_softmax_dim", lambda lib: f64(lib, T2x3).log_softmax(-3)),
    ("transpose_dim", lambda lib: f64(lib, T2x3).transpose(0, 2)),
    ("unsqueeze_dim", lambda lib: f64(lib, T2x3).unsqueeze(3)),
    ("squeeze_dim", lambda lib: f64(lib, T2x3).squeeze(2)),
    ("flatten_dim", lambda lib: f64(lib, T2x3).flatten(3)),
    ("mean_of_ints", lambda lib: lib.tensor([1, 2]).mean()),
    # indexing
    ("index_out_of_bounds", lambda lib: f64(lib, T2x3)[2]),
    ("index_neg_out_of_bounds", lambda lib: f64(lib, T2x3)[-3]),
    ("index_col_out_of_bounds", lambda lib: f64(lib, T2x3)[:, 3]),
    ("index_list_out_of_bounds", lambda lib: f64(lib, T2x3)[[0, 2]]),
    ("too_many_indices", lambda lib: f64(lib, T2x3)[0, 0, 0]),
    ("index_float_list", lambda lib: f64(lib, T2x3)[f64(lib, [0.0])]),
    ("slice_negative_step", lambda lib: f64(lib, T2x3)[::-1]),
    # conversions
    ("len_of_0d", lambda lib: len(f64(lib, 1.0))),
    ("bool_of_many", lambda lib: bool(f64(lib, [1.0, 2.0]))),
    ("grad_wrong_shape", lambda lib: setattr(f64(lib, [1.0], True), "grad", f64(lib, [1.0, 2.0]))),
]


@pytest.mark.parametrize("name, fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_error_matches_torch(name, fn):
    """Each bad program raises in both libraries, with the same exception type and message."""
    expected = error_of(fn, torch)
    assert expected is not None, f"{name}: torch does not raise"
    assert error_of(fn, ma) == expected


# --- accumulation --------------------------------------------------------------------------
def test_gradients_accumulate_across_backward_calls():
    def program(lib):
        x = f64(lib, [1.0, -2.0, 3.0], True)
        grads = [x.grad]
        y = (x * x).sum()
        y.backward(retain_graph=True)
        grads.append(plain(x.grad))
        y.backward()
        grads.append(plain(x.grad))
        (x * 3).sum().backward()
        grads.append(plain(x.grad))
        x.grad = None
        (x.exp() * x).sum().backward()  # a leaf used twice in one graph: both paths add up
        grads.append(plain(x.grad))
        return grads

    same_on_both(program)


def test_shared_gradient_is_copied_into_leaves():
    """add passes one gradient to both inputs; an in-place change of one .grad stays local."""

    def program(lib):
        a, b = f64(lib, [1.0, 2.0], True), f64(lib, [3.0, 4.0], True)
        (a + b).sum().backward()
        a.grad.mul_(10)
        return plain([a.grad, b.grad])

    same_on_both(program)


def test_non_leaf_grad_warns_and_is_none():
    for lib in LIBS:
        y = f64(lib, [1.0], True) * 2
        with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
            assert y.grad is None


# --- hooks ---------------------------------------------------------------------------------
def test_hooks_run_in_torchs_order():
    """Tensor hooks, retain_grad and the order nodes run in (a diamond plus a chain)."""

    def program(lib):
        events = []
        x = f64(lib, [1.0, 2.0], True)
        x.register_hook(lambda g: events.append(("x", plain(g))))
        a = x * 2
        a.register_hook(lambda g: events.append(("a", plain(g))))
        b = x.exp()
        b.register_hook(lambda g: events.append(("b", plain(g))) or g * 10)
        c = a * b
        c.retain_grad()
        c.register_hook(lambda g: events.append(("c", plain(g))) or g + 1)  # before retain_grad
        d = c.sum()
        d.backward()
        return events, plain([x.grad, c.grad])

    same_on_both(program)


@pytest.mark.parametrize("n", [3, 4, 5, 8, 13])
def test_leaves_ready_together_run_in_torchs_heap_order(n):
    """AccumulateGrad nodes share the largest sequence number: several ready at once come out of
    the ready queue in the order of PyTorch's heap, neither creation order nor its reverse."""

    def program(lib):
        order = []
        leaves = [f64(lib, [1.0, 2.0], True) for _ in range(n)]
        for i, leaf in enumerate(leaves):
            leaf.register_post_accumulate_grad_hook(lambda p, i=i: order.append(i))
        lib.cat(leaves).sum().backward()  # one node, n leaves ready when it has run
        head = leaves[0] * leaves[1]
        (lib.stack([head.sum(), *(leaf.sum() for leaf in leaves[2:])]).sum() * 3).backward()
        return order

    same_on_both(program)


def test_no_gradient_for_an_edge_that_leads_to_no_input():
    """Under autograd.grad (and backward(inputs=...)) a node computes no gradient for an edge that
    leads to none of the inputs: its post-hook sees None there, as in PyTorch."""

    def program(lib):
        x, w = f64(lib, [1.0, 2.0], True), f64(lib, [3.0, 4.0], True)
        seen = []
        y = (x * w).exp()
        for node in (y.grad_fn, y.grad_fn.next_functions[0][0]):
            node.register_hook(lambda gi, go: seen.append([plain(g) for g in gi]))
        lib.autograd.grad(y.sum(), x, retain_graph=True)
        y.sum().backward(inputs=[w], retain_graph=True)
        lib.autograd.grad(y.sum(), [x, w])
        return seen, plain([x.grad, w.grad])

    same_on_both(program)


def test_hook_removal_and_none_return():
    def program(lib):
        x = f64(lib, [1.0, 2.0], True)
        handle = x.register_hook(lambda g: g * 100)
        x.register_hook(lambda g: None)
        (x * 3).sum().backward()
        first = plain(x.grad)
        handle.remove()
        handle.remove()
        x.grad = None
        (x * 3).sum().backward()
        return first, plain(x.grad)

    same_on_both(program)


def test_node_hooks():
    """grad_fn.register_prehook / register_hook see (and may replace) the node's gradients."""

    def program(lib):
        seen = []
        x = f64(lib, [1.0, 2.0], True)
        y = x * x
        y.grad_fn.register_prehook(lambda go: seen.append(("pre", plain(go))))
        y.grad_fn.register_hook(lambda gi, go: seen.append(("post", plain(gi), plain(go))))
        y.grad_fn.register_hook(lambda gi, go: (gi[0] * 0 + 7, gi[1]))
        y.sum().backward()
        return seen, plain(x.grad)

    same_on_both(program)


def test_retain_grad_on_leaf_and_twice():
    def program(lib):
        x = f64(lib, [1.0, 2.0], True)
        x.retain_grad()
        y = x * 2
        y.retain_grad()
        y.retain_grad()
        (y * y).sum().backward()
        return plain([x.grad, y.grad]), y.retains_grad

    same_on_both(program)


# --- grad mode -----------------------------------------------------------------------------
def test_grad_modes():
    def program(lib):
        x = f64(lib, [1.0], True)
        flags = [lib.is_grad_enabled()]
        with lib.no_grad():
            flags += [(x * 2).requires_grad, lib.is_grad_enabled()]
            with lib.enable_grad():
                flags += [(x * 2).requires_grad]
            flags += [(x * 2).requires_grad]
        with lib.set_grad_enabled(False):
            flags += [(x * 2).requires_grad]
        flags += [lib.is_grad_enabled()]
        lib.set_grad_enabled(False)
        flags += [lib.is_grad_enabled(), (x * 2).grad_fn is None]
        lib.set_grad_enabled(True)

        @lib.no_grad()
        def no_grad_fn():
            return (x * 2).requires_grad

        @lib.enable_grad()
        def grad_fn():
            return (x * 2).requires_grad

        flags += [no_grad_fn(), lib.is_grad_enabled()]
        with lib.no_grad():
            flags += [grad_fn(), lib.is_grad_enabled()]
        return flags

    same_on_both(program)


def test_no_grad_result_is_a_leaf():
    def program(lib):
        x = f64(lib, [1.0], True)
        with lib.no_grad():
            y = x * 2
        return y.requires_grad, y.is_leaf, y.grad_fn is None, x.requires_grad

    same_on_both(program)


# --- versions, detach, views ---------------------------------------------------------------
def test_inplace_ops_bump_versions_shared_by_views_and_detach():
    def program(lib):
        x = f64(lib, [[1.0, 2.0], [3.0, 4.0]])
        v, d, t = x.view(4), x.detach(), x.t()
        versions = [x._version]
        x.add_(1)
        versions.append((x._version, v._version, d._version, t._version))
        v.mul_(2)
        d.sub_(1)
        t.zero_()
        x.fill_(3.0)
        x += 1
        x -= 1
        x *= 2
        versions.append((x._version, v._version, d._version, t._version))
        c = x.clone()
        versions.append(c._version)
        return versions, plain([x, v, d])

    same_on_both(program)


def test_detach_shares_memory_and_drops_the_graph():
    def program(lib):
        x = f64(lib, [1.0, 2.0], True)
        y = x * 2
        d = y.detach()
        d.add_(1)
        return plain(y), d.requires_grad, d.is_leaf, d.grad_fn is None, y._version

    same_on_both(program)


def test_inplace_on_non_leaf_replaces_grad_fn():
    def program(lib):
        x = f64(lib, [1.0, 2.0], True)
        y = x * 2
        names = [y.grad_fn.name()]
        y.add_(1)
        names.append(y.grad_fn.name())
        y.mul_(x)
        names.append(y.grad_fn.name())
        y.sum().backward()
        return names, plain(x.grad), y._version

    same_on_both(program)


# --- retain_graph / create_graph -----------------------------------------------------------
@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True:UserWarning")
def test_create_graph_retains_graph_and_gives_differentiable_grads():
    def program(lib):
        x = f64(lib, [1.0, 2.0], True)
        y = (x**3).sum()
        y.backward(create_graph=True)  # retain_graph defaults to create_graph
        g = x.grad
        result = [g.requires_grad, g.grad_fn is not None, plain(g)]
        (gx,) = lib.autograd.grad(g.sum(), x)  # second derivative 6x
        result.append(plain(gx))
        y.backward()  # graph was retained
        result.append(plain(x.grad))
        return result

    same_on_both(program)


def test_retain_graph_false_after_create_graph_frees():
    def program(lib):
        x = f64(lib, [1.0, 2.0], True)
        y = (x.exp()).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True, retain_graph=False)
        return plain(g), outcome(y.backward)[0]

    same_on_both(program)


def test_hessian_vector_product_and_gradient_penalty():
    def program(lib):
        x = f64(lib, [[0.5, -1.0], [2.0, 0.3]], True)
        w = f64(lib, [[1.0, 2.0], [-1.0, 0.5]], True)
        y = lib.tanh(x @ w).sum()
        (gx,) = lib.autograd.grad(y, x, create_graph=True)
        penalty = ((gx**2).sum() - 1) ** 2
        penalty.backward()
        v = f64(lib, [[1.0, 0.0], [0.0, 1.0]])
        z = lib.sigmoid(x * w).sum()
        (gz,) = lib.autograd.grad(z, x, create_graph=True)
        (hv,) = lib.autograd.grad(gz, x, grad_outputs=v)
        return plain([x.grad, w.grad, hv])

    same_on_both(program)


# --- autograd.grad and backward(inputs=...) ------------------------------------------------
def test_autograd_grad_variants():
    def program(lib):
        x, z = f64(lib, [1.0, 2.0], True), f64(lib, [3.0], True)
        y = x * x
        out = []
        out.append(
            plain(lib.autograd.grad(y, x, grad_outputs=f64(lib, [1.0, -1.0]), retain_graph=True))
        )
        out.append(plain(lib.autograd.grad(y.sum(), [x, z], allow_unused=True, retain_graph=True)))
        out.append(plain(lib.autograd.grad([y.sum(), (x * 3).sum()], [x], retain_graph=True)))
        out.append(plain(lib.autograd.grad(y.sum(), x, materialize_grads=True)))
        out.append((x.grad, z.grad))  # autograd.grad never touches .grad
        return out

    same_on_both(program)


def test_autograd_grad_does_not_free_unvisited_nodes():
    """Only the nodes on the way to `inputs` run, so only their saved tensors are freed."""

    def program(lib):
        a, b = f64(lib, [1.0, 2.0], True), f64(lib, [3.0, 4.0], True)
        ea, eb = a.exp(), b.exp()
        y = (ea + eb).sum()
        lib.autograd.grad(y, [a])
        reads = [outcome(getattr, n, "_saved_result")[0] for n in (ea.grad_fn, eb.grad_fn)]
        (gb,) = lib.autograd.grad(y, [b])
        return reads, plain(gb)

    same_on_both(program)


def test_backward_inputs_only_accumulates_there():
    def program(lib):
        a, b = f64(lib, [1.0, 2.0], True), f64(lib, [3.0, 4.0], True)
        h = a * b
        h.retain_grad()
        y = (h * h).sum()
        y.backward(inputs=[a], retain_graph=True)
        result = [plain(a.grad), plain(b.grad), plain(h.grad)]
        y.backward(inputs=[h])
        result.append(plain([a.grad, h.grad]))
        return result

    same_on_both(program)


def test_multiple_roots_backward():
    def program(lib):
        x = f64(lib, [1.0, 2.0], True)
        a, b = x * 2, x.exp()
        lib.autograd.backward([a, b], [f64(lib, [1.0, 1.0]), f64(lib, [2.0, 0.5])])
        return plain(x.grad)

    same_on_both(program)


# --- custom Function -----------------------------------------------------------------------
def _custom_functions(lib):
    class MulAdd(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, scale):
            ctx.save_for_backward(x, y)
            ctx.scale = scale
            return x * y * scale + x

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * (y * ctx.scale + 1), g * x * ctx.scale, None

    class SplitExp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            e = x.exp()
            ctx.save_for_backward(e)
            return e, x * 2

        @staticmethod
        def backward(ctx, ge, g2):
            (e,) = ctx.saved_tensors
            return ge * e + g2 * 2

    return MulAdd, SplitExp


def test_custom_function_matches_torch():
    def program(lib):
        MulAdd, SplitExp = _custom_functions(lib)
        x, y = f64(lib, [1.0, 2.0], True), f64(lib, [3.0, -1.0])
        out = MulAdd.apply(x, y, 2.0)
        node = out.grad_fn
        info = [node.name(), node.needs_input_grad, len(node.saved_tensors), out.requires_grad]
        e, twice = SplitExp.apply(x)
        info.append((e.grad_fn is twice.grad_fn, e.grad_fn.name()))
        (out.sum() + e.sum() + twice.sum()).backward()
        info.append(plain(x.grad))
        info.append(error_of(lambda: node.saved_tensors))
        with lib.no_grad():
            info.append(MulAdd.apply(x, y, 1.0).requires_grad)
        return info

    result = same_on_both(program)
    assert result[1][-2] == ("RuntimeError", FREED_MESSAGE)


def test_custom_function_saved_tensors_retained():
    def program(lib):
        MulAdd, _ = _custom_functions(lib)
        x, y = f64(lib, [1.0, 2.0], True), f64(lib, [3.0, -1.0], True)
        out = MulAdd.apply(x, y, 0.5).sum()
        out.backward(retain_graph=True)
        out.backward()
        return plain([x.grad, y.grad]), outcome(out.backward)[0]

    same_on_both(program)


# --- saved tensor hooks --------------------------------------------------------------------
def test_saved_tensors_hooks_pack_and_unpack():
    def program(lib):
        log = []

        def pack(t):
            log.append(("pack", tuple(t.shape)))
            return t * 1  # the packed form may be anything

        def unpack(p):
            log.append(("unpack", tuple(p.shape)))
            return p

        x, w = f64(lib, [1.0, 2.0], True), f64(lib, [[1.0], [2.0]], True)
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (lib.tanh(x) * x).sum() + (x @ w).sum()
        z = (x * x).sum()  # outside the context: no hooks
        (y + z).backward()
        return log, plain([x.grad, w.grad])

    same_on_both(program)


# --- deep graphs -----------------------------------------------------------------------------
def test_100k_op_chain_backward_without_recursion():
    limit = sys.getrecursionlimit()
    x = ma.tensor([1.0], dtype=ma.float64, requires_grad=True)
    y = x
    for _ in range(50_000):
        y = y * 0.99999
        y = y + 0.0
    y.sum().backward()
    assert sys.getrecursionlimit() == limit
    np.testing.assert_allclose(x.grad.numpy(), [0.99999**50_000])
    del y  # dropping a 100k-node graph must not overflow the C stack either
    gc.collect()


# --- memory: saved arrays are released, no reference cycles -------------------------------
class TrackedArray(np.ndarray):
    """A numpy array that can be watched with weakref (plain ndarrays can too; this names it)."""


def _tracked(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).view(TrackedArray)


def test_backward_releases_saved_arrays():
    """After backward without retain_graph, what nodes saved is collectable although the
    graph (loss) is still referenced; with retain_graph=True it stays alive."""
    for retain in (False, True):
        x = ma.tensor(_tracked((50, 50)), requires_grad=True)
        h = x.exp()  # ExpBackward0 saves h (its result)
        z = h.tanh()  # TanhBackward0 saves z; MulBackward0 below saves z and c
        c = ma.tensor(_tracked((50, 50), 1))
        loss = (z * c).sum()
        refs = [weakref.ref(h._data), weakref.ref(z._data), weakref.ref(c._data)]
        del h, z, c
        assert all(r() is not None for r in refs)
        loss.backward(retain_graph=retain)
        alive = [r() is not None for r in refs]
        assert alive == [retain] * 3, f"retain_graph={retain}: {alive}"
        del loss
        assert all(r() is None for r in refs)  # and the graph itself frees everything


def test_no_reference_cycles():
    """Forward + backward + dropping everything frees all tensors and nodes by refcount alone."""
    gc.collect()
    gc.disable()
    try:
        x = ma.tensor(_tracked((4, 3)), requires_grad=True)
        w = ma.tensor(_tracked((3, 2), 1), requires_grad=True)
        MulAdd, SplitExp = _custom_functions(ma)
        h = (x @ w).tanh()
        h.retain_grad()
        h.register_hook(lambda g: g * 1)
        e, twice = SplitExp.apply(h)
        y = MulAdd.apply(e, twice, 2.0).softmax(-1)[:, 0].sum() + x.relu().max() + h[1:].mean()
        (gx,) = ma.autograd.grad(y, x, create_graph=True, retain_graph=True)
        y.backward(retain_graph=True)
        (gx * gx).sum().backward()  # a double backward through the same graph
        refs = [weakref.ref(t) for t in (x, w, h, e, twice, y, gx)]
        refs += [weakref.ref(n) for n in (h.grad_fn, e.grad_fn, y.grad_fn, gx.grad_fn)]
        refs += [weakref.ref(x._data), weakref.ref(h._data)]
        del x, w, h, e, twice, y, gx
        alive = [i for i, r in enumerate(refs) if r() is not None]
        assert alive == [], f"kept alive by a reference cycle: {alive}"
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_saved_output_does_not_keep_its_node_alive():
    x = ma.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    node = weakref.ref(y.grad_fn)
    gc.disable()
    try:
        del y
        assert node() is None
    finally:
        gc.enable()


def test_backward_inputs_runs_leaf_hooks():
    def program(lib):
        seen = []
        x = f64(lib, [1.0, 2.0], True)
        x.register_hook(lambda g: seen.append(plain(g)) or g * 2)
        (x * x).sum().backward(inputs=[x])
        return seen, plain(x.grad)

    same_on_both(program)


def test_inplace_on_view_of_non_leaf():
    def program(lib):
        x = f64(lib, [[1.0, 2.0], [3.0, 4.0]], True)
        y = x * 2
        y[0].mul_(3)
        y.sum().backward()
        return plain(x.grad), y.grad_fn.name()

    same_on_both(program)


def test_backward_frees_memory_tracemalloc():
    """The saved intermediates of a chain are given back to the allocator by backward."""
    import tracemalloc

    x = ma.tensor(np.random.default_rng(0).standard_normal(125_000), requires_grad=True)  # 1 MB
    tracemalloc.start()
    try:
        y = x
        for _ in range(20):
            y = y.tanh()  # each saves its 1 MB result
        loss = y.sum()
        del y
        before = tracemalloc.get_traced_memory()[0]
        loss.backward()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert before - after > 15_000_000, (before, after)


def test_data_versus_detach_matches_torch():
    """.data shares memory but not the version counter: autograd misses the change; detach() does not."""
    for lib in (torch, ma):
        x = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
        y = x.tanh()
        y.data.mul_(0)  # invisible to autograd: backward silently uses the zeroed result
        assert y._version == 0
        y.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0, 1.0])
        z = x.tanh()
        z.detach().mul_(0)  # seen by autograd: backward refuses to use the changed result
        assert z._version == 1
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()
        assert type(x.data) is type(x) and not x.data.requires_grad


# --- found by PyTorch's own autograd tests (issue #27) --------------------------------------------
def test_a_root_given_twice_gets_both_gradients():
    def program(lib):
        a = f64(lib, [1.0, 2.0], True)
        b = a * 2
        lib.autograd.backward([b, b], [lib.ones(2, dtype=lib.float64)] * 2)
        return a.grad.tolist()

    assert same_on_both(program) == ("ok", [4.0, 4.0])


def test_no_grad_holds_inside_a_decorated_generator_at_every_resume():
    def program(lib):
        @lib.no_grad()
        def steps():
            x = f64(lib, [1.0], True)
            yield (x * 2).requires_grad
            yield lib.is_grad_enabled()

        outside = []
        for inside in steps():
            outside.append((inside, lib.is_grad_enabled()))
        return outside

    assert same_on_both(program) == ("ok", [(False, True), (False, True)])


def test_set_grad_enabled_as_a_decorator_leaves_grad_mode_as_it_was():
    def program(lib):
        @lib.set_grad_enabled(False)
        def inside():
            return lib.is_grad_enabled()

        after_decorating = lib.is_grad_enabled()
        return inside(), after_decorating, lib.is_grad_enabled()

    assert same_on_both(program) == ("ok", (False, True, True))


def test_numpy_of_a_tensor_that_requires_grad_is_allowed_under_no_grad():
    def program(lib):
        x = f64(lib, [1.0, 2.0], True)
        with lib.no_grad():
            return x.numpy().tolist()

    assert same_on_both(program) == ("ok", [1.0, 2.0])


def test_reentrant_backward_two_thousand_levels_deep():
    """A backward inside a Function's backward, nested 2,000 deep: PyTorch's engine moves deep
    nesting to fresh threads, and so does mini_autograd's, so no RecursionError."""

    def program(lib, depth=2000):
        reached = [0]

        class Reenter(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, grad):
                if reached[0] < depth:
                    reached[0] += 1
                    with lib.enable_grad():
                        Reenter.apply(f64(lib, [1.0], True)).sum().backward()
                return grad

        x = f64(lib, [1.0], True)
        Reenter.apply(x).sum().backward()
        return reached[0], x.grad.tolist()

    assert same_on_both(program) == ("ok", (2000, [1.0]))


def test_what_an_unpack_hook_returns_rejoins_the_graph():
    """Double backward through hooked saved tensors (a leaf, a non-leaf, an output), and the
    unpacked tensors are new objects, as in PyTorch."""

    def program(lib):
        x = f64(lib, [1.0, 2.0], True)
        unpacked = []

        def unpack(t):
            unpacked.append(t)
            return t

        with lib.autograd.graph.saved_tensors_hooks(identity, unpack):
            cube, bent = x.pow(3), (x * 2).tanh()
            grown = cube.exp()
        (g,) = lib.autograd.grad(cube.sum() + bent.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        saved_result = grown.grad_fn._saved_result
        same_object = saved_result is grown
        return np.round(gg.numpy(), 10).tolist(), saved_result.grad_fn.name(), same_object

    same_on_both(program)


def identity(t):
    """A pack hook that keeps the tensor."""
    return t


def test_a_function_with_both_backward_and_vjp_is_refused_and_vjp_alone_works():
    def program(lib, both):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def vjp(ctx, grad):
                return grad * 2

        if both:
            Double.backward = staticmethod(lambda ctx, grad: grad)
        x = f64(lib, [1.0], True)
        Double.apply(x).sum().backward()
        return x.grad.tolist()

    assert same_on_both(lambda lib: program(lib, both=False)) == ("ok", [2.0])
    assert same_on_both(lambda lib: program(lib, both=True))[0] == "raises"


def test_a_node_can_be_called_on_a_gradient():
    def program(lib):
        y = f64(lib, [1.0, 3.0], True) * 2
        return [
            None if g is None else g.tolist() for g in y.grad_fn(lib.ones(2, dtype=lib.float64))
        ]

    assert same_on_both(program) == ("ok", [[2.0, 2.0], None])


def test_python_numbers_never_go_through_pack_hooks():
    """`x * 3` keeps the 3 as a wrapped number; PyTorch packs only real tensors."""

    def program(lib):
        packed = []

        def pack(t):
            packed.append(tuple(t.shape))
            return t

        x = f64(lib, [1.0, 2.0], True)
        with lib.autograd.graph.saved_tensors_hooks(pack, identity):
            x * 3, 3 * x, x / 2, x.pow(2), 2**x  # noqa: B018 (recorded for what they save)
        return packed

    assert same_on_both(program) == ("ok", [(2,), (2,), (2,)])


def test_a_grad_made_under_create_graph_is_a_recorded_copy():
    """The first .grad under create_graph is a copy (CopyBackwards), never the gradient itself
    nor a view of it, so zero_grad(set_to_none=False) can detach it in place afterwards."""

    def program(lib):
        layer = lib.nn.Linear(3, 1).double()
        optimizer = lib.optim.SGD(layer.parameters(), lr=0.1)
        layer(lib.ones(2, 3, dtype=lib.float64)).pow(3).sum().backward(create_graph=True)
        nodes = [type(p.grad.grad_fn).__name__ for p in layer.parameters()]
        optimizer.zero_grad(set_to_none=False)
        return nodes, [p.grad.abs().sum().item() for p in layer.parameters()]

    same_on_both(program)


def test_post_accumulate_grad_hooks_run_after_grad_is_updated_and_can_be_removed():
    def program(lib):
        seen = []
        x = f64(lib, [1.0, 2.0], True)
        handle = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
        (x * 3).sum().backward()
        handle.remove()
        (x * 3).sum().backward()
        lib.autograd.grad((x * 3).sum(), x)  # autograd.grad accumulates nothing: no hook
        return seen, x.grad.tolist()

    assert same_on_both(program) == ("ok", ([[3.0, 3.0]], [6.0, 6.0]))


def test_small_tensor_api_of_pytorch():
    """_base, output_nr, `del t.grad`, a bare @enable_grad, InplaceFunction."""

    def program(lib):
        x = f64(lib, [1.0, 2.0, 3.0], True)
        view = x[:2]
        (x * 2).sum().backward()
        del x.grad

        @lib.enable_grad
        def records():
            return (x * 2).requires_grad

        with lib.no_grad():
            recorded = records()
        inplace = lib.autograd.function.InplaceFunction.__init__.__defaults__
        return view._base is x, x._base, view.output_nr, x.grad, recorded, inplace

    assert same_on_both(program) == ("ok", (True, None, 0, None, True, (False,)))


def test_a_second_backward_with_create_graph_makes_a_new_grad():
    """Under create_graph the sum is a new tensor: a .grad referenced before keeps its values."""

    def program(lib):
        x = lib.ones(3, requires_grad=True, dtype=lib.float64)
        y = x * 2
        y.sum().backward(retain_graph=True)
        before = x.grad
        y.sum().backward(create_graph=True)
        return before.tolist(), x.grad.tolist(), before is x.grad

    assert same_on_both(program) == ("ok", ([2.0] * 3, [4.0] * 3, False))


def test_a_list_holding_a_tensor_that_requires_grad_makes_a_tensor_of_its_values():
    assert (
        same_on_both(lambda lib: lib.tensor([lib.ones(1, requires_grad=True)]).tolist())[0] == "ok"
    )


def test_decorating_a_class_with_no_grad_warns_as_pytorch_does():
    def program(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")

            @lib.no_grad()
            class Made:
                def __init__(self):
                    self.records = lib.ones(1, requires_grad=True).mul(2).requires_grad

        return Made().records, [(w.category.__name__, str(w.message)) for w in caught]

    assert same_on_both(program)[1][0] is False
