"""`x[key] = value`, in-place changes through views (CopySlices), advanced indexing and
index_put_, compared with torch to the letter.

The differentiable programs of float64 leaves (their values, graphs, derivatives and freeing for
every requires_grad pattern) are the op catalogue's entries in op_catalogue_views.py, run by
test_ops_parity.py. Here:

- PROGRAMS: `fn(lib)` run on torch and mini_autograd, returning what must be the same (values,
  graphs, versions, gradients), or raising the same error.
- NEEDS: what a change outside the ops modules would make match (strict xfails that say which).
"""

import warnings

import numpy as np
import pytest
import torch
from parity_helpers import (
    describe_graph,
    outcome,
    to_numpy,
)

import mini_autograd as ma


# --- programs: fn(lib) on both libraries -----------------------------------------------------
def state(t):
    """What a program compares of a tensor: values, dtype, version, flags, recorded graph."""
    return (
        to_numpy(t),
        str(t.dtype).rpartition(".")[2],
        t._version,
        t.requires_grad,
        t.is_leaf,
        describe_graph(t),
    )


def grad_of(t):
    return to_numpy(t.grad)


def errors(*calls):
    """(type name, message) of each call, which must raise."""
    return [outcome(call)[1:] for call in calls]


def x23(lib, requires_grad=False):
    return lib.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], requires_grad=requires_grad)


def p_plain_setitem(lib):
    x = lib.zeros(2, 3)
    x[0] = 1
    x[:, 1] = 2.5
    x[1, 2] = lib.tensor(7.0)
    x[-1, -3] = True
    x[1:, ::2] = lib.tensor([[8.0, 9.0]])
    return state(x)


def p_plain_setitem_casts(lib):
    z = lib.zeros(2, 3, dtype=lib.long)
    z[0] = 2.7
    z[1, :2] = lib.tensor([2.7, -2.7])
    f = lib.zeros(3)
    f[lib.tensor([True, False, True])] = 5
    return state(z), state(f)


def p_plain_advanced(lib):
    z = lib.zeros(3, 3)
    z[[0, 1]] = 2.0
    z[z > 1] = 3.0
    z[0, [1, 2]] = lib.ones(2)
    z[[0, 2], [2, 0]] = lib.tensor([4.0, 5.0])
    z[range(3), 1] = -1.0
    return state(z)


def p_plain_0d_views(lib):
    """An element x[i, j] is a view (0-d) that shares x's memory and version."""
    x = lib.zeros(2, 3)
    e = x[1, 2]
    e.fill_(4.0)
    r = x[1]
    r[0] = 6.0
    return state(x), state(e), x.unbind(1)[2]._version


def p_setitem_on_leaf_that_requires_grad(lib):
    w = x23(lib, True)
    return errors(
        lambda: w.__setitem__(0, 1.0),
        lambda: w.__setitem__((slice(None), 1), 0.0),
        lambda: w.__setitem__([0], 1.0),
        lambda: w.__setitem__(w > 0, 0.0),
        lambda: w.__setitem__(Ellipsis, 0.0),
    ), w._version


def p_setitem_under_no_grad(lib):
    w = x23(lib, True)
    with lib.no_grad():
        w[0] = 0.0
        w[:, 1] = 5.0
        w[[1]] = 2.0
    before = state(w)
    (w * w).sum().backward()
    return before, grad_of(w)


def p_setitem_errors(lib):
    b = x23(lib, True) * 1
    return errors(
        lambda: b.__setitem__(0, [1.0, 2.0, 3.0]),
        lambda: b.__setitem__(0, np.ones(3)),
        lambda: b.__setitem__(0, "a"),
        lambda: b.__setitem__(0, lib.ones(2)),
        lambda: b.__setitem__(slice(None), lib.ones(2, 2, 3)),
        lambda: b.__setitem__([0, 1], lib.ones(2)),
        lambda: b.__setitem__([0, 1], lib.ones(2, 3, dtype=lib.float64)),
        lambda: b.__setitem__([0, 1], lib.tensor([1, 2, 3])),
        lambda: b.__setitem__(5, 1.0),
        lambda: b.__setitem__(([0], [5]), 1.0),
        lambda: b.__setitem__(lib.tensor([True, False, True]), 1.0),
        lambda: b.__setitem__((0, 0, 0), 1.0),
    ), b._version


def p_versions(lib):
    h = lib.ones(3, requires_grad=True)
    b = x23(lib, True) * 1
    counts = [b._version]
    b[0] = 1.0
    counts.append(b._version)
    b[[1]] = h
    counts.append(b._version)
    b[:, 0].add_(1.0)
    counts.append(b._version)
    b[:, 1] += h[:2]  # add_ on the view, then b[:, 1] = the view: two changes
    counts.append(b._version)
    (b * b).sum().backward()
    return counts, state(b), grad_of(h)


def p_view_errors(lib):
    x = x23(lib, True)
    b = x * 1
    with lib.no_grad():
        quiet_view_of_leaf = x[0]
        quiet_view = b[0]
    return errors(
        lambda: b.split(1)[0].mul_(2.0),
        lambda: b.unbind(0)[1].add_(1.0),
        lambda: b.chunk(3, 1)[2].zero_(),
        lambda: quiet_view_of_leaf.mul_(2.0),
        lambda: quiet_view.mul_(2.0),
        lambda: b[0:1].expand(4, 3).mul_(2.0),
        lambda: lib.zeros(1, 3).expand(2, 3).add_(1.0),
        lambda: x[0].mul_(2.0),
        lambda: x.t()[1].zero_(),
        lambda: lib.zeros(2, 3)[0].requires_grad_().mul_(2.0),
        lambda: x.mul_(2.0),
        lambda: x.copy_(lib.ones(3)),
        lambda: b.copy_(lib.ones(4)),
        lambda: b.copy_(lib.ones(2, 2, 3)),
        lambda: b.fill_(lib.ones(2)),
        lambda: lib.ones(4).masked_fill_(lib.ones(3, 4, dtype=lib.bool), 1.0),
        lambda: b.index_put_((lib.tensor([0]),), 1.0),
        lambda: b.index_put_(lib.tensor([0]), lib.ones(3)),
        lambda: b.index_put_((None, lib.tensor([0])), lib.ones(2)),
        lambda: b.index_put_((lib.tensor([0]),), lib.ones(3, dtype=lib.float64)),
        lambda: b.index_put_((lib.tensor([0, 1]),), lib.ones(1, 1, 3)),
        lambda: b.as_strided((5, 2), (2, 1)),
    )


def p_views_under_no_grad_stay_quiet(lib):
    """In no_grad mode views change in place without recording, and without errors."""
    x = x23(lib, True)
    with lib.no_grad():
        v = x[0]
        v.mul_(2.0)
        x.t()[1].add_(1.0)
    return state(x)


def p_copy_into_plain_tensor(lib):
    h = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = lib.zeros(2, 3)
    z.copy_(h)
    (z * x23(lib)).sum().backward()
    return state(z), grad_of(h)


def p_integer_tensors_do_not_record(lib):
    h = lib.tensor([1.5, 2.5, 3.5], requires_grad=True)
    z = lib.zeros(2, 3, dtype=lib.long)
    z.copy_(h)
    y = lib.zeros(2, 3, dtype=lib.long)
    y[0] = h
    y[1].fill_(h[0])
    return state(z), state(y)


def p_copy_from_other_dtype(lib):
    h = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    b = x23(lib, True) * 1
    b.copy_(h)
    b.sum().backward()
    return state(b), grad_of(h), h.grad.dtype == h.dtype


def p_retain_grad_moves_to_the_change(lib):
    x = x23(lib, True)
    b = x * 1
    b.retain_grad()
    b.mul_(2.0)
    c = x * 1
    c.retain_grad()
    c[0].mul_(3.0)
    (b * c).sum().backward()
    return grad_of(b), grad_of(c), grad_of(x)


def p_hook_sees_the_gradient_before_the_change(lib):
    x = x23(lib, True)
    seen = []
    b = x * 1
    b.register_hook(lambda g: seen.append(to_numpy(g)))
    b[1].mul_(5.0)
    (b * 2).sum().backward()
    return seen, grad_of(x)


def p_retain_graph_through_copy_slices(lib):
    x = x23(lib, True)
    b = x * 2
    b[0] = 1.0
    b.sum().backward(retain_graph=True)
    b.sum().backward()
    return grad_of(x)


def p_rnn_style_rows(lib):
    w = lib.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=lib.float64, requires_grad=True)
    h = lib.tensor([1.0, -1.0], dtype=lib.float64, requires_grad=True)
    out = lib.zeros(3, 2, dtype=lib.float64)
    for t in range(3):
        h = lib.tanh(w @ h)
        out[t] = h * 2
    out.sum().backward()
    return state(out), grad_of(w)


def p_in_place_division(lib):
    b = x23(lib, True) * 1
    b /= 4.0
    d = x23(lib, True) * 1
    d /= x23(lib, True)[0].abs()
    return state(b), state(d)


def p_index_errors(lib):
    x = lib.zeros(3, 4, 5)
    return errors(
        lambda: x[5],
        lambda: x[[5]],
        lambda: x[[0], [9]],
        lambda: x[-4],
        lambda: x[[-4]],
        lambda: x[lib.tensor([1.0])],
        lambda: x[lib.tensor([True, False])],
        lambda: x[:, lib.tensor([True, False, True])],
        lambda: x[[0, 1], [0, 1, 2]],
        lambda: x[0, 0, 0, 0],
        lambda: x[[0], [0], [0], [0]],
        lambda: x[1.5],
    )


def p_uint8_mask_warns(lib):
    x = lib.arange(4.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = x[lib.tensor([1, 0, 1, 0], dtype=lib.uint8)]
    return state(y), [str(w.message).partition(" (Triggered")[0] for w in caught]


def p_as_strided_view(lib):
    x = lib.arange(12.0)
    y = x.as_strided((2, 3), (1, 2), 2)
    y[0, 0] = -1.0
    return state(x), state(y)


def assert_same(actual, expected):
    """Equal, float arrays within float32's precision, through tuples and lists."""
    if isinstance(expected, np.ndarray):
        assert isinstance(actual, np.ndarray) and actual.shape == expected.shape
        np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-6)
    elif isinstance(expected, (tuple, list)):
        assert type(actual) is type(expected) and len(actual) == len(expected), (actual, expected)
        for a, e in zip(actual, expected):
            assert_same(a, e)
    else:
        assert actual == expected


def run_both(program):
    expected, actual = outcome(program, torch), outcome(program, ma)
    assert expected[0] == "ok", expected
    assert_same(actual, expected)


# --- what needed a change outside the ops modules --------------------------------------------
# A program in NEEDS is a strict xfail: it fails today, and fails (XPASS) once the change is made,
# to say the entry can go. None is left: a view's requires_grad follows its base's (tensor.py,
# node.py) since the upstream autograd tests asked for it.
def p_base_changed_after_view(lib):
    x = x23(lib, True)
    b = x * 1
    v = b[0]
    b.mul_(2.0)
    (v * 1).sum().backward()
    return state(v), grad_of(x)


def p_other_view_changed(lib):
    x = x23(lib, True)
    b = x * 1
    v1, v2 = b[0], b[1]
    v1.mul_(2.0)
    return state(v2)


def p_view_of_plain_tensor_joins_the_graph(lib):
    h = lib.ones(3, requires_grad=True)
    z = lib.zeros(2, 3)
    v = z[1]
    z[0] = h * 2
    return v.requires_grad, state(v)


def p_no_grad_view_requires_grad(lib):
    x = x23(lib, True)
    with lib.no_grad():
        v = x[0]
    return v.requires_grad


def p_no_grad_view_after_base_changed(lib):
    b = x23(lib, True) * 1
    with lib.no_grad():
        v = b[0]
    b.mul_(2.0)
    return errors(lambda: v.grad_fn)


def p_view_made_before_its_base_required_grad(lib):
    z = lib.zeros(3)
    v = z[:2]
    z.requires_grad_()
    return errors(lambda: v.mul_(2.0))


def p_no_grad_view_of_plain_tensor(lib):
    z = lib.zeros(3)
    with lib.no_grad():
        v = z[:2]
    return errors(lambda: v.mul_(lib.ones(2, requires_grad=True)))


def p_second_backward_through_copy_slices(lib):
    b = x23(lib, True) + 0
    b[0] = 1.0  # CopySlices(CopyBackwards): no saved tensor anywhere, yet it is freed
    b.sum().backward()
    return outcome(b.sum().backward)


def p_double_backward_through_in_place_on_view(lib):
    # The saved result of relu_ on a view leads to the view's history (through CopySlices),
    # not to the relu node inside CopySlices: a double backward runs (upstream's
    # test_inplace_on_view_backward, with relu_ for threshold_). Values only: g's own graph
    # differs (AsStridedBackward0's backward records IndexPutImpl, not torch's CopySlices).
    x = x23(lib, True)
    view = (x + 1).view_as(x)
    out = lib.sigmoid(lib.nn.functional.relu(view, inplace=True))
    (g,) = lib.autograd.grad(out, x, lib.ones(2, 3), create_graph=True, retain_graph=True)
    g.sum().backward()
    return to_numpy(g), grad_of(x)


PROGRAMS = [
    p_plain_setitem,
    p_plain_setitem_casts,
    p_plain_advanced,
    p_plain_0d_views,
    p_setitem_on_leaf_that_requires_grad,
    p_setitem_under_no_grad,
    p_setitem_errors,
    p_versions,
    p_view_errors,
    p_views_under_no_grad_stay_quiet,
    p_copy_into_plain_tensor,
    p_integer_tensors_do_not_record,
    p_copy_from_other_dtype,
    p_retain_grad_moves_to_the_change,
    p_hook_sees_the_gradient_before_the_change,
    p_retain_graph_through_copy_slices,
    p_rnn_style_rows,
    p_in_place_division,
    p_index_errors,
    p_uint8_mask_warns,
    p_as_strided_view,
    p_base_changed_after_view,
    p_other_view_changed,
    p_view_of_plain_tensor_joins_the_graph,
    p_no_grad_view_requires_grad,
    p_no_grad_view_after_base_changed,
    p_view_made_before_its_base_required_grad,
    p_no_grad_view_of_plain_tensor,
    p_second_backward_through_copy_slices,
    p_double_backward_through_in_place_on_view,
]
NEEDS = {}


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__[2:] for p in PROGRAMS])
def test_program_matches_torch(program, request):
    """The same values, graphs, versions and gradients, or the same errors."""
    if program in NEEDS:
        request.applymarker(pytest.mark.xfail(strict=True, reason=NEEDS[program]))
    run_both(program)


def test_writing_into_an_expanded_tensor_writes_its_one_element():
    """An expanded tensor shares its element: t[0] = 5 is seen in every position, as in PyTorch
    (and an in-place operation over all of it is refused, as there)."""

    def program(lib):
        t = lib.zeros(1).clone().expand(3)
        t[0] = 5
        try:
            lib.zeros(1).expand(3).add_(1)
        except RuntimeError as error:
            refused = str(error)
        return t.tolist(), refused

    assert program(ma) == program(torch)
