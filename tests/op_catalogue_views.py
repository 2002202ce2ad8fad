"""The op catalogue's in-place entries: `x[key] = value`, in-place changes through views
(CopySlices, AsStridedBackward0), index_put_ and advanced indexing, as `Op` entries run by the
parity suite (tests/test_ops_parity.py) for every requires_grad pattern of their inputs.
"""

import numpy as np
from op_catalogue import Op

S = (3, 4)
ROW_MASK = [True, False, True]
MASK = [[True, False, True, False], [False, False, True, True], [True, True, False, False]]


def _rows(lib, a):
    """A non-leaf copy of a: in-place changes of a leaf that requires grad are refused."""
    return a * 1


def _setitem(key, value=None):
    """b = a * 1; b[key] = value (a number, or the op's second input when value is None)."""

    def fn(lib, a, *others):
        b = _rows(lib, a)
        b[key(lib) if callable(key) else key] = others[0] if value is None else value
        return b

    return fn


def _into_zeros(lib, c):
    out = lib.zeros(3, 4, dtype=lib.float64)
    out[1] = c * 2
    return out


def _loop_rows(lib, c):
    out = lib.zeros(3, 4, dtype=lib.float64)
    for i in range(3):
        out[i] = c * (i + 1)
    return out


def _masked_division(lib, a, d):
    y = a.clone()
    mask = lib.tensor(MASK)
    y[mask] = a[mask] / d[mask]
    return y


def _in_place_on_view(method, *args, view=lambda b: b[0], result=lambda b, v: b, **kwargs):
    """b = a * 1; view(b).method(*args, *others, **kwargs); the result (b, or the view itself)."""

    def fn(lib, a, *others):
        b = _rows(lib, a)
        v = view(b)
        getattr(v, method)(*args, *others, **kwargs)
        return result(b, v)

    return fn


def _view_twice(lib, a, c):
    b = _rows(lib, a)
    v = b[0]
    v.mul_(2.0)
    v.add_(c)
    return b


def _view_of_view(lib, a, c):
    b = _rows(lib, a)
    b[1][1:].add_(c[1:])
    return b


def _view_of_plain(lib, c):
    z = lib.zeros(3, 4, dtype=lib.float64)
    z[1].add_(c)
    return z


def _transposed_base(lib, a, c):
    b = a.t() * 2  # a (4, 3): b is laid out column by column, in both libraries
    v = b[1]
    v.mul_(c)
    return b + v.sum()


def _in_place(method, *args, **kwargs):
    """b = a * 1; b.method(*args, *others, **kwargs)."""

    def fn(lib, a, *others):
        b = _rows(lib, a)
        getattr(b, method)(*args, *others, **kwargs)
        return b

    return fn


def _index_put_(accumulate):
    def fn(lib, a, values):
        b = _rows(lib, a)
        b.index_put_((lib.tensor([0, 2, 0]),), values, accumulate=accumulate)
        return b

    return fn


def _masked_fill_view(lib, a):
    b = _rows(lib, a)
    b[0].masked_fill_(lib.tensor(MASK[0]), 1.5)
    return b


VIEW_OPS = [
    # --- x[key] = value with basic keys: a view, then copy_ / fill_ (CopySlices) ---------------
    Op("setitem_row_number", _setitem(0, 5.0), (S,)),
    Op("setitem_element_number", _setitem((1, -1), 2.5), (S,)),
    Op("setitem_column", _setitem((slice(None), 1)), (S, (3,))),
    Op("setitem_rows_broadcast", _setitem(slice(0, 2)), (S, (4,))),
    Op("setitem_leading_ones", lambda lib, a, c: _setitem(0)(lib, a, c[None]), (S, (4,))),
    Op("setitem_0d_tensor", _setitem(1), (S, ())),
    Op("setitem_ellipsis_number", _setitem(Ellipsis, 2.0), (S,)),
    Op("setitem_full_slice", _setitem(slice(None)), (S, (4,))),
    Op("setitem_full_slices_tensor", _setitem((slice(None), slice(None))), (S, S)),
    Op("setitem_none", _setitem((None, 1)), (S, (4,))),
    Op("setitem_step_slice", _setitem((slice(None), slice(None, None, 2))), (S, (3, 2))),
    Op("setitem_into_zeros", _into_zeros, ((4,),)),
    Op("setitem_loop_rows", _loop_rows, ((4,),)),
    # --- x[key] = value with index tensors: index_put_ (IndexPutBackward0) ----------------------
    Op("setitem_list", _setitem([0, 2]), (S, (4,))),
    Op("setitem_list_rows", _setitem([0, 2]), (S, (2, 4))),
    Op("setitem_tensor_index", _setitem(lambda lib: lib.tensor([2, 1])), (S, (2, 4))),
    Op("setitem_mask_number", _setitem(lambda lib: lib.tensor(MASK), 0.0), (S,)),
    Op("setitem_row_mask", _setitem(lambda lib: lib.tensor(ROW_MASK)), (S, (4,))),
    Op("setitem_masked_division", _masked_division, (S, S), "pos"),
    Op("setitem_two_lists", _setitem(([0, 1], [1, 2])), (S, (2,))),
    Op("setitem_full_then_list", _setitem((slice(None), [1, 2]), 0.5), (S,)),
    Op("setitem_select_then_list", _setitem((0, [1, 2])), (S, (2,))),
    Op("setitem_list_leading_ones", _setitem([0, 2]), (S, (1, 1, 4))),
    Op("setitem_list_broadcast_rows", _setitem([1, 2]), (S, (1, 4))),
    # --- in-place changes of views: CopySlices on the base, AsStridedBackward0 on the view -----
    Op("view_mul_number", _in_place_on_view("mul_", 2.0), (S,)),
    Op("view_mul_tensor", _in_place_on_view("mul_"), (S, (4,))),
    Op("view_mul_result_is_view", _in_place_on_view("mul_", result=lambda b, v: v), (S, (4,))),
    Op("view_twice", _view_twice, (S, (4,))),
    Op("view_of_view", _view_of_view, (S, (4,))),
    Op("view_transposed", _in_place_on_view("mul_", 3.0, view=lambda b: b.t()[1]), (S,)),
    Op("view_column_add_", _in_place_on_view("add_", view=lambda b: b[:, 2]), (S, (3,))),
    Op("view_sub_alpha", _in_place_on_view("sub_", alpha=2), (S, (4,))),
    Op("view_div_", _in_place_on_view("div_"), (S, (4,)), "pos"),
    Op("view_zero_", _in_place_on_view("zero_"), (S,)),
    Op("view_fill_", _in_place_on_view("fill_", 2.0, view=lambda b: b[:, 0]), (S,)),
    Op("view_fill_tensor", _in_place_on_view("fill_", view=lambda b: b[:, 0]), (S, ())),
    Op("view_copy_", _in_place_on_view("copy_"), (S, (4,))),
    Op("view_copy_broadcast", _in_place_on_view("copy_", view=lambda b: b[1:]), (S, (4,))),
    Op("view_masked_fill_", _masked_fill_view, (S,)),
    Op("view_of_plain_tensor", _view_of_plain, ((4,),)),
    Op("view_of_transposed_base", _transposed_base, ((4, 3), (4,))),
    Op("view_reshape", _in_place_on_view("mul_", 2.0, view=lambda b: b.view(2, 6)[1]), (S,)),
    # --- in-place changes of tensors that own their memory ----------------------------------
    Op("copy_", _in_place("copy_"), (S, (4,))),
    Op("copy_same_shape", _in_place("copy_"), (S, S)),
    Op("div_", _in_place("div_"), (S, (4,)), "pos"),
    Op("div_number", _in_place("div_", 4.0), (S,)),
    Op("fill_tensor", _in_place("fill_"), (S, ())),
    Op("masked_fill_", lambda lib, a: _rows(lib, a).masked_fill_(lib.tensor(MASK), 0.5), (S,)),
    Op(
        "masked_fill_tensor",
        lambda lib, a, s: _rows(lib, a).masked_fill_(lib.tensor(ROW_MASK)[:, None], s),
        (S, ()),
    ),
    Op("index_put_", _index_put_(False), (S, (4,))),
    Op("index_put_accumulate", _index_put_(True), (S, (3, 4))),
    Op(
        "index_put",
        lambda lib, a, v: lib.index_put(a, (lib.tensor([1, 1]), lib.tensor([0, 3])), v, True),
        (S, (2,)),
    ),
    Op(
        "index_put_method",
        lambda lib, a, v: a.index_put((lib.tensor([[0], [2]]), lib.tensor([3, 0])), v),
        (S, (2, 2)),
    ),
    # --- advanced indexing: several index tensors, masks, mixed with basic entries -------------
    Op("index_range_tensor", lambda lib, a: a[range(3), lib.tensor([0, 3, 1])], (S,)),
    Op("index_arange", lambda lib, a: a[lib.arange(3), lib.tensor([1, 1, 0])], (S,)),
    Op("index_list_slice", lambda lib, a: a[[0, 2], :], (S,)),
    Op("index_slice_list", lambda lib, a: a[:, [1, 3, 1]], (S,)),
    Op("index_row_mask", lambda lib, a: a[lib.tensor(ROW_MASK)], (S,)),
    Op("index_mask", lambda lib, a: a[lib.tensor(MASK)], (S,)),
    Op("index_mask_then_int", lambda lib, a: a[lib.tensor(ROW_MASK), 0], (S,)),
    Op("index_mask_then_slice", lambda lib, a: a[lib.tensor(MASK[:2])[:, :3], 1:], ((2, 3, 4),)),
    Op("index_two_lists", lambda lib, a: a[[0, 1], [1, 2]], (S,)),
    Op("index_lists_broadcast", lambda lib, a: a[[[0], [2]], [1, 3]], (S,)),
    Op("index_separated", lambda lib, a: a[[0, 1], :, [1, 2]], ((2, 3, 4),)),
    Op("index_middle", lambda lib, a: a[:, [0, 2], :], ((2, 3, 4),)),
    Op("index_ellipsis_list", lambda lib, a: a[..., [0, 1]], ((2, 3, 4),)),
    Op("index_none_list", lambda lib, a: a[None, [0, 1]], (S,)),
    Op("index_int_list", lambda lib, a: a[0, :, [1, 2]], ((2, 3, 4),)),
    Op("index_slice_list_int", lambda lib, a: a[0:2, [0, 2], 1], ((2, 3, 4),)),
    Op("index_0d_tensor", lambda lib, a: a[lib.tensor(1)], (S,)),
    Op("index_0d_tensor_and_list", lambda lib, a: a[lib.tensor(1), [0, 2]], (S,)),
    Op("index_negative", lambda lib, a: a[[-1, 0, -1], -2], (S,)),
    Op("index_true", lambda lib, a: a[True], (S,)),
    Op("index_false_then_int", lambda lib, a: a[False, 1], (S,)),
    Op("index_numpy_array", lambda lib, a: a[np.array([2, 0])], (S,)),
    Op("as_strided", lambda lib, a: a.as_strided((2, 2), (1, 4), 1), (S,)),
    Op("as_strided_overlapping", lambda lib, a: lib.as_strided(a, (3, 3), (1, 1)), (S,)),
]
