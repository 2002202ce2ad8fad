"""The op catalogue the parity, gradcheck and property tests share: one line per op.

Each entry is `Op(id, fn, shapes, domain)`: `fn(lib, *inputs)` runs the op with `lib` = torch or
mini_autograd (the same code on both), `shapes` are the float64 input shapes and `domain` is
"pos" where the op needs positive inputs (log, sqrt, powers with a tensor exponent). `masks` are
the requires_grad patterns to run it with (empty: every pattern with at least one input);
`arrays`, where given, are the fixed inputs to run it on (instead of random ones of `shapes`).
"""

from collections.abc import Callable
from typing import NamedTuple


class Op(NamedTuple):
    id: str
    fn: Callable
    shapes: tuple
    domain: str = "any"
    masks: tuple = ()
    arrays: tuple = ()


def _inplace(method, *args, **kwargs):
    """An in-place op on a non-leaf copy of the first input (leaves that require grad refuse it)."""

    def fn(lib, x, *others):
        y = x.clone()
        getattr(y, method)(*[o for o in others], *args, **kwargs)
        return y

    return fn


def _index_add_(lib, x, source):
    """index_add_ on a non-leaf copy of x: x's graph goes through it, in place."""
    y = x * 1.0
    y.index_add_(1, lib.tensor([1, 1, 2]), source, alpha=-1)
    return y


def _iadd(lib, x, other):
    y = x * 1.0
    y += other
    return y


def _isub(lib, x, other):
    y = x * 1.0
    y -= other
    return y


def _iadd_number(lib, x):
    y = x.clone()
    y += 2.0
    return y


def _two_pieces(pieces):
    """Two of the outputs of a split: one node with several outputs, each with a gradient."""
    return pieces[0] * 2 + pieces[-1]


def _functional(name, *args, **kwargs):
    """torch.nn.functional.<name>; for mini_autograd, ops/activations.py's, until its
    nn.functional has it (then that one)."""

    def fn(lib, x):
        f = getattr(lib.nn.functional, name, None)
        if f is None:
            from mini_autograd.ops import activations

            f = getattr(activations, name)
        return f(x, *args, **kwargs)

    return fn


S = (3, 4)
OPS = [
    # --- arithmetic, with broadcasting and Python numbers on both sides --------------------
    Op("add", lambda lib, a, b: a + b, (S, S)),
    Op("add_broadcast", lambda lib, a, b: a + b, ((2, 1, 4), (3, 1))),
    Op("add_number", lambda lib, a: a + 2, (S,)),
    Op("radd_number", lambda lib, a: 2.5 + a, (S,)),
    Op("add_alpha", lambda lib, a, b: lib.add(a, b, alpha=2), (S, (4,))),
    Op("sub", lambda lib, a, b: a - b, (S, (4,))),
    Op("sub_number", lambda lib, a: a - 2, (S,)),
    Op("rsub_number", lambda lib, a: 2 - a, (S,)),
    Op("mul", lambda lib, a, b: a * b, (S, S)),
    Op("mul_broadcast", lambda lib, a, b: a * b, ((3, 1), (1, 4))),
    Op("mul_number", lambda lib, a: a * 3, (S,)),
    Op("rmul_number", lambda lib, a: 0.5 * a, (S,)),
    Op("mul_0d", lambda lib, a, b: a * b, (S, ())),
    Op("div_0d", lambda lib, a, b: a / b, ((), S), "pos"),
    Op("mul_self", lambda lib, a: a * a, (S,)),
    Op("div", lambda lib, a, b: a / b, (S, (4,)), "pos"),
    Op("div_number", lambda lib, a: a / 2, (S,)),
    Op("rdiv_number", lambda lib, a: 2 / a, (S,), "pos"),
    Op("pow_2", lambda lib, a: a**2, (S,)),
    Op("pow_3", lambda lib, a: a**3, (S,)),
    Op("pow_half", lambda lib, a: a**0.5, (S,), "pos"),
    Op("pow_minus1", lambda lib, a: a**-1, (S,), "pos"),
    Op("pow_tensor", lambda lib, a, b: a**b, (S, S), "pos"),
    Op("pow_tensor_broadcast", lambda lib, a, b: a**b, (S, (4,)), "pos"),
    Op("rpow_number", lambda lib, a: 2**a, (S,)),
    Op("neg", lambda lib, a: -a, (S,)),
    # --- matrix products --------------------------------------------------------------------
    Op("dot", lambda lib, a, b: a @ b, ((3,), (3,))),
    Op("mv", lambda lib, a, b: a @ b, ((2, 3), (3,))),
    Op("mm", lambda lib, a, b: a @ b, ((2, 3), (3, 4))),
    Op("mm_fn", lambda lib, a, b: lib.mm(a, b.t()), ((2, 3), (4, 3))),
    Op("vec_mat", lambda lib, a, b: a @ b, ((3,), (3, 4))),
    Op("3d_2d", lambda lib, a, b: a @ b, ((2, 2, 3), (3, 4))),
    Op("3d_3d", lambda lib, a, b: a @ b, ((2, 2, 3), (2, 3, 4))),
    Op("4d_4d_broadcast", lambda lib, a, b: a @ b, ((2, 1, 2, 3), (3, 3, 4))),
    Op("3d_1d", lambda lib, a, b: a @ b, ((2, 2, 3), (3,))),
    Op("1d_3d", lambda lib, a, b: a @ b, ((3,), (2, 3, 4))),
    Op("2d_3d", lambda lib, a, b: a @ b, ((2, 3), (2, 3, 4))),
    Op("attention_scores", lambda lib, q, k: q @ k.transpose(-2, -1), ((1, 2, 3, 4), (1, 2, 3, 4))),
    Op("addmm", lambda lib, c, a, b: lib.addmm(c, a, b), ((4,), (2, 3), (3, 4))),
    Op(
        "addmm_beta_alpha",
        lambda lib, c, a, b: c.addmm(a, b, beta=0.5, alpha=2),
        (S, (3, 2), (2, 4)),
    ),
    Op("outer", lambda lib, a, b: lib.outer(a, b), ((3,), (4,))),
    Op("trace", lambda lib, a: a.trace(), (S,)),
    Op("diag", lambda lib, a: lib.diag(a), (S,)),
    Op("diag_offset", lambda lib, a: a.diag(-1), (S,)),
    Op("diag_1d", lambda lib, a: a.diag(1), ((3,),)),
    Op("tril", lambda lib, a: a.tril(), (S,)),
    Op("tril_neg", lambda lib, a: lib.tril(a, -1), (S,)),
    Op("triu", lambda lib, a: lib.triu(a, 1), ((2, 3, 4),)),
    # --- elementwise ------------------------------------------------------------------------
    Op("exp", lambda lib, a: a.exp(), (S,)),
    Op("exp_fn", lambda lib, a: lib.exp(a), (S,)),
    Op("log", lambda lib, a: lib.log(a), (S,), "pos"),
    Op("tanh", lambda lib, a: lib.tanh(a), (S,)),
    Op("sigmoid", lambda lib, a: lib.sigmoid(a), (S,)),
    Op("relu", lambda lib, a: lib.relu(a), (S,)),
    Op("sqrt", lambda lib, a: lib.sqrt(a), (S,), "pos"),
    Op("abs", lambda lib, a: lib.abs(a), (S,)),
    Op("clone", lambda lib, a: a.clone(), (S,)),
    Op("sin", lambda lib, a: a.sin(), (S,)),
    Op("sin_fn", lambda lib, a: lib.sin(a), (S,)),
    Op("cos", lambda lib, a: lib.cos(a), (S,)),
    Op("log1p", lambda lib, a: lib.log1p(a), (S,), "pos"),
    Op("expm1", lambda lib, a: a.expm1(), (S,)),
    Op("rsqrt", lambda lib, a: lib.rsqrt(a), (S,), "pos"),
    Op("sign", lambda lib, a: lib.sign(a), (S,)),
    Op("floor", lambda lib, a: a.floor(), (S,)),
    Op("ceil", lambda lib, a: lib.ceil(a), (S,)),
    Op("round", lambda lib, a: a.round(), (S,)),
    Op("round_decimals", lambda lib, a: lib.round(a, decimals=1), (S,)),
    Op("exp2", lambda lib, a: a.exp2(), (S,)),
    Op("log2", lambda lib, a: lib.log2(a), (S,), "pos"),
    Op("log10", lambda lib, a: a.log10(), (S,), "pos"),
    Op("tan", lambda lib, a: lib.tan(a), (S,)),
    Op("asin", lambda lib, a: (a * 0.3).asin(), (S,)),
    Op("arcsin_fn", lambda lib, a: lib.arcsin(a * 0.3), (S,)),
    Op("acos", lambda lib, a: lib.acos(a * 0.3), (S,)),
    Op("atan", lambda lib, a: a.atan(), (S,)),
    Op("atan2", lambda lib, a, b: lib.atan2(a, b), (S, S)),
    Op("atan2_broadcast", lambda lib, a, b: a.atan2(b), (S, (4,))),
    Op("sinh", lambda lib, a: a.sinh(), (S,)),
    Op("cosh", lambda lib, a: lib.cosh(a), (S,)),
    Op("erf", lambda lib, a: lib.erf(a), (S,)),
    Op("erfc", lambda lib, a: a.erfc(), (S,)),
    # --- activations (torch.nn.functional) -----------------------------------------------------
    Op("softplus", _functional("softplus"), (S,)),
    Op("softplus_beta_threshold", _functional("softplus", beta=2, threshold=1), (S,)),
    Op("elu", _functional("elu"), (S,)),
    Op("elu_alpha", _functional("elu", alpha=0.5), (S,)),
    Op("selu", _functional("selu"), (S,)),
    Op("selu_fn", lambda lib, a: lib.selu(a), (S,)),
    Op("silu", _functional("silu"), (S,)),
    Op("gelu", _functional("gelu"), (S,)),
    Op("gelu_tanh", _functional("gelu", approximate="tanh"), (S,)),
    Op("hardtanh", _functional("hardtanh"), (S,)),
    Op("hardtanh_bounds", _functional("hardtanh", -0.5, 0.5), (S,)),
    Op("relu6", lambda lib, a: _functional("relu6")(lib, a * 4), (S,)),
    Op("logsigmoid", _functional("logsigmoid"), (S,)),
    Op("mish", _functional("mish"), (S,)),
    # --- choosing between values: the gradient goes to the one chosen --------------------------
    Op("clamp", lambda lib, a: a.clamp(-0.5, 0.5), (S,)),
    Op("clamp_only_min", lambda lib, a: lib.clamp(a, min=-0.5), (S,)),
    Op("clamp_only_max", lambda lib, a: a.clamp(max=0.5), (S,)),
    Op("clip", lambda lib, a: lib.clip(a, -0.5, 0.5), (S,)),
    Op("clamp_tensors", lambda lib, a, low, high: a.clamp(low, high), (S, (4,), S)),
    Op("clamp_tensor_min", lambda lib, a, low: lib.clamp(a, min=low), (S, (3, 1))),
    Op("clamp_tensor_max_broadcast_self", lambda lib, a, high: a.clamp(max=high), ((4,), S)),
    Op("clamp_min", lambda lib, a: a.clamp_min(-0.5), (S,)),
    Op("clamp_max", lambda lib, a: lib.clamp_max(a, 0.5), (S,)),
    Op("clamp_min_tensor", lambda lib, a, b: a.clamp_min(b), (S, (4,))),
    Op("clamp_max_tensor", lambda lib, a, b: lib.clamp_max(a, b), (S, S)),
    Op("where", lambda lib, a, b: lib.where(a > 0, a, b), (S, (4,))),
    Op("where_number", lambda lib, a: lib.where(a > 0, a, 0.0), (S,)),
    Op("where_number_first", lambda lib, a: lib.where(a > 0, 1.0, a), (S,)),
    Op("where_method", lambda lib, a, b: a.where(b > 0, b), (S, S)),
    Op("maximum", lambda lib, a, b: lib.maximum(a, b), (S, (4,))),
    Op("minimum", lambda lib, a, b: a.minimum(b), (S, S)),
    Op("max_of_two", lambda lib, a, b: lib.max(a, b), (S, S)),
    Op("min_of_two", lambda lib, a, b: lib.min(a, b), ((4,), S)),
    Op("masked_fill", lambda lib, a: a.masked_fill(a > 0, 0.5), (S,)),
    Op("masked_fill_tensor", lambda lib, a, v: lib.masked_fill(a, a > 0, v), (S, ())),
    Op(
        "masked_fill_row_mask",
        lambda lib, a: a.masked_fill(lib.tensor([True, False, True, False]), -1.0),
        (S,),
    ),
    # --- reductions -------------------------------------------------------------------------
    Op("sum", lambda lib, a: a.sum(), (S,)),
    Op("sum_dim", lambda lib, a: a.sum(1), (S,)),
    Op("sum_neg_keepdim", lambda lib, a: a.sum(-1, keepdim=True), (S,)),
    Op("sum_tuple", lambda lib, a: a.sum((0, 2)), ((2, 3, 4),)),
    Op("sum_tuple_neg_keepdim", lambda lib, a: a.sum(dim=(0, -1), keepdim=True), ((2, 3, 4),)),
    Op("sum_fn", lambda lib, a: lib.sum(a, 0), (S,)),
    Op("mean", lambda lib, a: a.mean(), (S,)),
    Op("mean_dim", lambda lib, a: a.mean(0), (S,)),
    Op("mean_neg_keepdim", lambda lib, a: a.mean(-1, keepdim=True), (S,)),
    Op("mean_tuple", lambda lib, a: a.mean((1, 2)), ((2, 3, 4),)),
    Op("max", lambda lib, a: a.max(), (S,)),
    Op("max_dim", lambda lib, a: a.max(1).values, (S,)),
    Op("max_dim_neg_keepdim", lambda lib, a: a.max(-1, keepdim=True)[0], (S,)),
    Op("max_fn", lambda lib, a: lib.max(a, 0)[0], (S,)),
    Op("min", lambda lib, a: a.min(), (S,)),
    Op("min_dim", lambda lib, a: a.min(1).values, (S,)),
    Op("min_fn_neg_keepdim", lambda lib, a: lib.min(a, -1, keepdim=True)[0], (S,)),
    Op("prod", lambda lib, a: a.prod(), (S,)),
    Op("prod_dim", lambda lib, a: lib.prod(a, 1), (S,)),
    Op("prod_neg_keepdim", lambda lib, a: a.prod(-1, keepdim=True), (S,)),
    Op("std", lambda lib, a: a.std(), (S,)),
    Op("std_dim", lambda lib, a: lib.std(a, 1), (S,)),
    Op("std_unbiased_false", lambda lib, a: a.std(unbiased=False), (S,)),
    Op("std_correction_keepdim", lambda lib, a: a.std(-1, correction=0, keepdim=True), (S,)),
    Op("std_tuple", lambda lib, a: a.std((0, 2)), ((2, 3, 4),)),
    Op("var", lambda lib, a: a.var(), (S,)),
    Op("var_dim", lambda lib, a: lib.var(a, 0), (S,)),
    Op("var_unbiased_false", lambda lib, a: a.var(1, unbiased=False), (S,)),
    Op(
        "var_correction_keepdim", lambda lib, a: a.var(dim=(0, 1), correction=2, keepdim=True), (S,)
    ),
    Op("var_1d", lambda lib, a: a.var(0), ((5,),)),
    Op("var_mean_two_outputs", lambda lib, a: _two_pieces(lib.var_mean(a, 1)), (S,)),
    Op("var_mean_keepdim_var_only", lambda lib, a: lib.var_mean(a, keepdim=True)[0], (S,)),
    Op("var_mean_mean_only", lambda lib, a: lib.var_mean(a, (0, 1), correction=0)[1], (S,)),
    Op("std_mean_two_outputs", lambda lib, a: _two_pieces(lib.std_mean(a, 0, keepdim=True)), (S,)),
    Op("std_mean_mean_only", lambda lib, a: lib.std_mean(a)[1], (S,)),
    Op("logsumexp", lambda lib, a: a.logsumexp(1), (S,)),
    Op("logsumexp_fn_neg_keepdim", lambda lib, a: lib.logsumexp(a, -1, keepdim=True), (S,)),
    Op("logsumexp_tuple", lambda lib, a: a.logsumexp((0, 2)), ((2, 3, 4),)),
    Op("sum_axis_keepdims", lambda lib, a: a.sum(axis=1, keepdims=True), (S,)),
    Op("sum_dtype", lambda lib, a: a.sum(dtype=lib.float64), (S,)),
    Op("sum_dim_dtype", lambda lib, a: lib.sum(a, 1, dtype=lib.float64), (S,)),
    Op("mean_axis", lambda lib, a: a.mean(axis=-1), (S,)),
    Op("mean_dtype", lambda lib, a: a.mean(dtype=lib.float64), (S,)),
    Op("max_axis_keepdims", lambda lib, a: a.max(axis=1, keepdims=True).values, (S,)),
    Op("std_axis", lambda lib, a: a.std(axis=0), (S,)),
    Op("logsumexp_axis", lambda lib, a: a.logsumexp(axis=1), (S,)),
    Op("amax", lambda lib, a: a.amax(1), (S,)),
    Op("amax_all", lambda lib, a: lib.amax(a), (S,)),
    Op("amin_tuple_keepdim", lambda lib, a: a.amin((0, -1), keepdim=True), ((2, 3, 4),)),
    Op("amax_ties", lambda lib, a: a.clamp(max=0.5).amax(-1), (S,)),
    # --- along a dim: running sums and products, sorting ---------------------------------------
    Op("cumsum", lambda lib, a: a.cumsum(1), (S,)),
    Op("cumsum_fn_neg", lambda lib, a: lib.cumsum(a, -2), (S,)),
    Op("cumsum_axis_dtype", lambda lib, a: a.cumsum(axis=0, dtype=lib.float64), (S,)),
    Op("cumprod", lambda lib, a: a.cumprod(1), (S,)),
    Op("cumprod_fn_neg", lambda lib, a: lib.cumprod(a, -2), (S,)),
    # cumprod through zeros: torch's backward takes another formula (with cumsums) there
    Op(
        "cumprod_with_zeros",
        lambda lib, a: (a * lib.tensor([1.0, 0.0, 1.0, 0.0], dtype=lib.float64)).cumprod(1),
        (S,),
    ),
    Op(
        "cumprod_with_a_zero",
        lambda lib, a: (a * lib.tensor([[1.0], [0.0], [1.0]], dtype=lib.float64)).cumprod(0),
        (S,),
    ),
    Op("sort", lambda lib, a: a.sort().values, (S,)),
    Op("sort_descending_dim0", lambda lib, a: lib.sort(a, 0, descending=True)[0], (S,)),
    Op("topk", lambda lib, a: a.topk(2).values, (S,)),
    Op("topk_smallest_dim0", lambda lib, a: lib.topk(a, 2, dim=0, largest=False)[0], (S,)),
    Op("kthvalue", lambda lib, a: a.kthvalue(2).values, (S,)),
    Op("kthvalue_keepdim_dim0", lambda lib, a: lib.kthvalue(a, 3, 0, keepdim=True)[0], (S,)),
    # --- views and shapes -------------------------------------------------------------------
    Op("reshape", lambda lib, a: a.reshape(4, 3), (S,)),
    Op("reshape_minus1", lambda lib, a: a.reshape(-1), (S,)),
    Op("reshape_tuple", lambda lib, a: lib.reshape(a, (2, 6)), (S,)),
    Op("view", lambda lib, a: a.view(2, 2, 3), (S,)),
    Op("reshape_noncontiguous", lambda lib, a: a.t().reshape(12), (S,)),
    Op("transpose", lambda lib, a: a.transpose(0, 1), (S,)),
    Op("transpose_neg", lambda lib, a: a.transpose(-1, -3), ((2, 3, 4),)),
    Op("T", lambda lib, a: a.T, (S,)),
    Op("T_3d", lambda lib, a: a.T, ((2, 3, 4),)),
    Op("t", lambda lib, a: a.t(), (S,)),
    Op("permute", lambda lib, a: a.permute(2, 0, 1), ((2, 3, 4),)),
    Op("permute_neg", lambda lib, a: lib.permute(a, (-1, 0, 1)), ((2, 3, 4),)),
    Op("unsqueeze", lambda lib, a: a.unsqueeze(0), (S,)),
    Op("unsqueeze_neg", lambda lib, a: lib.unsqueeze(a, -1), (S,)),
    Op("squeeze", lambda lib, a: a.squeeze(), ((3, 1, 4, 1),)),
    Op("squeeze_dim", lambda lib, a: a.squeeze(1), ((3, 1, 4),)),
    Op("squeeze_neg_dim", lambda lib, a: a.squeeze(-1), ((3, 4, 1),)),
    Op("squeeze_dim_not_1", lambda lib, a: a.squeeze(0), ((3, 1, 4),)),
    Op("flatten", lambda lib, a: a.flatten(), ((2, 3, 4),)),
    Op("flatten_start", lambda lib, a: lib.flatten(a, 1), ((2, 3, 4),)),
    Op("flatten_noncontiguous", lambda lib, a: a.transpose(0, 1).flatten(), ((2, 3, 4),)),
    Op("expand", lambda lib, a: a.expand(3, 4), ((1, 4),)),
    Op("expand_new_dims", lambda lib, a: a.expand(2, -1, 4), ((3, 1),)),
    Op("expand_as", lambda lib, a: a.expand_as(lib.zeros(3, 4)), ((1, 4),)),
    Op("view_as", lambda lib, a: a.view_as(lib.zeros(2, 6)), (S,)),
    Op("reshape_as_noncontiguous", lambda lib, a: a.t().reshape_as(lib.zeros(12)), (S,)),
    # --- indexing ---------------------------------------------------------------------------
    Op("index_int", lambda lib, a: a[1], (S,)),
    Op("index_neg_int", lambda lib, a: a[-1], (S,)),
    Op("index_slice", lambda lib, a: a[1:3], (S,)),
    Op("index_slice_step", lambda lib, a: a[::2], (S,)),
    Op("index_full_slice", lambda lib, a: a[:], (S,)),
    Op("index_col", lambda lib, a: a[:, 1], (S,)),
    Op("index_row_slice", lambda lib, a: a[1, 1:3], (S,)),
    Op("index_slice_slice", lambda lib, a: a[0:2, 1:], (S,)),
    Op("index_neg_slice", lambda lib, a: a[-3:-1], (S,)),
    Op("index_slice_past_end", lambda lib, a: a[:, 1:100], (S,)),
    Op("index_none", lambda lib, a: a[None], (S,)),
    Op("index_ellipsis", lambda lib, a: a[...], (S,)),
    Op("index_ellipsis_int", lambda lib, a: a[..., 2], ((2, 3, 4),)),
    Op("index_list", lambda lib, a: a[[0, 2, 0]], (S,)),
    Op("index_bool_mask", lambda lib, a: a[a > 0], (S,)),
    Op("index_tensor", lambda lib, a: a[lib.tensor([2, 0])], (S,)),
    # --- copying by index ---------------------------------------------------------------------
    Op("gather", lambda lib, a: a.gather(1, lib.tensor([[0, 1], [2, 3], [1, 1]])), (S,)),
    Op("gather_fn", lambda lib, a: lib.gather(a, 0, lib.tensor([[2, 0, 1, 0]])), (S,)),
    Op("index_select", lambda lib, a: a.index_select(1, lib.tensor([0, 2, 2])), (S,)),
    Op("index_select_fn", lambda lib, a: lib.index_select(a, -2, lib.tensor([1])), (S,)),
    Op("repeat", lambda lib, a: a.repeat(2, 1), (S,)),
    Op("repeat_more_dims", lambda lib, a: a.repeat(2, 1, 3), (S,)),
    Op("flip", lambda lib, a: a.flip(0), (S,)),
    Op("flip_dims", lambda lib, a: lib.flip(a, (0, -1)), (S,)),
    Op(
        "einsum_attention",
        lambda lib, q, k: lib.einsum("bqd,bkd->bqk", q, k),
        ((2, 3, 4), (2, 5, 4)),
    ),
    Op("einsum_implicit_mm", lambda lib, a, b: lib.einsum("ij,jk", a, b), (S, (4, 2))),
    Op(
        "einsum_ellipsis",
        lambda lib, a, b: lib.einsum("...ij,...jk->...ik", a, b),
        ((2, 3, 4), (4, 2)),
    ),
    Op("einsum_outer", lambda lib, a, b: lib.einsum("i,j->ij", a, b), ((3,), (4,))),
    Op("einsum_sum", lambda lib, a: lib.einsum("ij->", a), (S,)),
    Op(
        "einsum_three",
        lambda lib, a, b, c: lib.einsum("bn,anm,bm->ba", [a, b, c]),
        ((2, 3), (4, 3, 5), (2, 5)),
    ),
    Op("einsum_diagonal", lambda lib, a: lib.einsum("iij->j", a), ((3, 3, 2),)),
    Op("roll", lambda lib, a: a.roll(1), (S,)),
    Op("roll_dims", lambda lib, a: lib.roll(a, (1, -2), (0, 1)), (S,)),
    Op("masked_select", lambda lib, a: a.masked_select(a > 0), (S,)),
    Op(
        "masked_select_broadcast",
        lambda lib, a: lib.masked_select(a, lib.tensor([True, False, True, True])),
        (S,),
    ),
    Op(
        "index_add",
        lambda lib, a, b: a.index_add(0, lib.tensor([0, 2]), b, alpha=2),
        (S, (2, 4)),
    ),
    Op(
        "index_add_repeated",
        lambda lib, a, b: a.index_add(1, lib.tensor([3, 3, 0]), b),
        (S, (3, 3)),
    ),
    Op("index_add_", _index_add_, (S, (3, 3))),
    # --- joining ----------------------------------------------------------------------------
    Op("cat", lambda lib, a, b: lib.cat([a, b]), (S, (2, 4))),
    Op("cat_dim1", lambda lib, a, b: lib.cat((a, b), dim=1), (S, (3, 2))),
    Op("cat_neg", lambda lib, a, b: lib.cat([a, b, a], -1), (S, (3, 2))),
    Op("stack", lambda lib, a, b: lib.stack([a, b]), (S, S)),
    Op("stack_dim1", lambda lib, a, b: lib.stack((a, b), dim=1), (S, S)),
    Op("stack_neg", lambda lib, a, b: lib.stack([a, b], -1), (S, S)),
    # --- splitting (views) -------------------------------------------------------------------
    Op("narrow", lambda lib, a: a.narrow(1, 1, 2), (S,)),
    Op("narrow_neg", lambda lib, a: lib.narrow(a, -1, -3, 2), (S,)),
    Op("split", lambda lib, a: a.split(2)[1], (S,)),
    Op("split_neg_dim", lambda lib, a: lib.split(a, 3, dim=-1)[0], (S,)),
    Op("split_sizes", lambda lib, a: a.split([1, 3], 1)[1], (S,)),
    Op("split_sizes_fn", lambda lib, a: lib.split(a, (2, 1))[0], (S,)),
    Op("split_two_pieces", lambda lib, a: _two_pieces(a.split(2, 1)), (S,)),
    Op("chunk", lambda lib, a: a.chunk(2)[1], (S,)),
    Op("chunk_uneven", lambda lib, a: lib.chunk(a, 3, 1)[0], (S,)),
    Op("unbind", lambda lib, a: a.unbind()[1], (S,)),
    Op("unbind_neg", lambda lib, a: lib.unbind(a, -1)[2], (S,)),
    Op("unbind_two_pieces", lambda lib, a: _two_pieces(a.unbind(1)), (S,)),
    Op("chunk_4_1", lambda lib, a: (lambda c: c[0] * c[3] + c[1].tanh())(a.chunk(4, 1)), ((3, 8),)),
    Op(
        "chunk_uneven_sums",
        lambda lib, a: (lambda c: c[0].sum() + (c[2] * 2).sum())(a.chunk(3, 0)),
        ((5, 2),),
    ),
    Op("chunk_dim_kw", lambda lib, a: a.chunk(2, dim=-1)[1].exp(), (S,)),
    Op("chunk_one", lambda lib, a: a.chunk(1)[0] * 3, (S,)),
    Op("chunk_all_used", lambda lib, a: (lambda c: c[0] - c[1])(a.chunk(2)), ((4, 3),)),
    # --- norms --------------------------------------------------------------------------------
    Op("norm", lambda lib, a: a.norm(), (S,)),
    Op("norm_2_dim1", lambda lib, a: a.norm(2, dim=1), (S,)),
    Op("norm_p2_keepdim", lambda lib, a: a.norm(p=2, dim=0, keepdim=True), (S,)),
    Op("norm_1", lambda lib, a: a.norm(1, dim=1), (S,)),
    Op("norm_3_dims", lambda lib, a: a.norm(3, dim=(0, 2)), ((2, 3, 4),)),
    Op("norm_float_p", lambda lib, a: a.norm(1.5), (S,)),
    Op("norm_inf", lambda lib, a: a.norm(float("inf"), dim=1), (S,)),
    # --- softmax ----------------------------------------------------------------------------
    Op("softmax", lambda lib, a: a.softmax(-1), (S,)),
    Op("softmax_fn", lambda lib, a: lib.softmax(a, 0), (S,)),
    Op("log_softmax", lambda lib, a: a.log_softmax(1), (S,)),
    Op("log_softmax_fn", lambda lib, a: lib.log_softmax(a, -1), ((2, 3, 4),)),
    # --- in place ---------------------------------------------------------------------------
    Op("add_", _inplace("add_"), (S, S)),
    Op("add_alpha_", _inplace("add_", alpha=-0.5), (S, (4,))),
    Op("sub_", _inplace("sub_"), (S, S)),
    Op("mul_", _inplace("mul_"), (S, S)),
    Op("mul_number_", _inplace("mul_", 3.0), (S,)),
    Op("zero_", _inplace("zero_"), (S,)),
    Op("fill_", _inplace("fill_", 2.0), (S,)),
    Op("pow_", _inplace("pow_", 2), (S,)),
    Op("square_", _inplace("square_"), (S,)),
    Op("sqrt_", _inplace("sqrt_"), (S,), "pos"),
    Op("pow_tensor_", _inplace("pow_"), (S, S), "pos"),
    Op("iadd", _iadd, (S, S)),
    Op("isub", _isub, (S, (4,))),
    Op("iadd_number", _iadd_number, (S,)),
    Op("exp_", _inplace("exp_"), (S,)),
    Op("erfc_", _inplace("erfc_"), (S,)),
    Op("exp_fn_", lambda lib, a: lib.exp_(a.clone()), (S,)),
    Op("log_", _inplace("log_"), (S,), "pos"),
    Op("sin_", _inplace("sin_"), (S,)),
    Op("cos_", _inplace("cos_"), (S,)),
    Op("tanh_", _inplace("tanh_"), (S,)),
    Op("sigmoid_", _inplace("sigmoid_"), (S,)),
    Op("relu_", _inplace("relu_"), (S,)),
    Op("abs_", _inplace("abs_"), (S,)),
    Op("neg_", _inplace("neg_"), (S,)),
    Op("rsqrt_", _inplace("rsqrt_"), (S,), "pos"),
    Op("reciprocal_", _inplace("reciprocal_"), (S,), "pos"),
    Op("clamp_", _inplace("clamp_", -0.5, 0.5), (S,)),
    Op("clamp_tensors_", _inplace("clamp_"), (S, (4,), S)),
    Op("clamp_min_", _inplace("clamp_min_", 0.0), (S,)),
    Op("clamp_max_tensor_", _inplace("clamp_max_"), (S, S)),
    Op("sign_", _inplace("sign_"), (S,)),
    Op("floor_", _inplace("floor_"), (S,)),
    Op("round_", _inplace("round_"), (S,)),
    Op("expm1_", _inplace("expm1_"), (S,)),
    Op("log1p_", _inplace("log1p_"), (S,), "pos"),
    Op("erf_", _inplace("erf_"), (S,)),
    Op("tan_", _inplace("tan_"), (S,)),
    Op("atan_", _inplace("atan_"), (S,)),
    # --- a few compositions ------------------------------------------------------------------
    Op("transposed_matmul", lambda lib, a, b: a.T @ b, ((3, 2), (3, 4))),
    Op("linear_tanh", lambda lib, x, w, b: lib.tanh(x @ w.t() + b), ((2, 3), (4, 3), (4,))),
    Op("mse", lambda lib, a, b: ((a - b) ** 2).mean(), (S, S)),
    Op("logsumexp_like", lambda lib, a: lib.log(lib.exp(a).sum(-1)), (S,)),
    Op("view_then_mul", lambda lib, a, b: a.view(12) * b.reshape(-1), (S, S)),
    Op(
        "layer_norm_like",
        lambda lib, a: (a - a.mean(-1, keepdim=True)) * (a.var(-1, keepdim=True) + 1e-5).rsqrt(),
        (S,),
    ),
    Op("clamped_log", lambda lib, a: lib.log(a.clamp(min=0.1)), (S,)),
    Op("logsumexp_minus_max", lambda lib, a: a.logsumexp(1) - a.max(1).values, (S,)),
]
OPS_BY_ID = {op.id: op for op in OPS}

# dtype= that changes the dtype (the gradient comes back in the input's dtype): float32 steps, so
# the parity suite runs these and gradcheck does not
DTYPE_OPS = [
    Op("sum_dtype", lambda lib, a: a.float().sum(1, dtype=lib.float64), (S,)),
    Op("mean_dtype", lambda lib, a: a.float().mean(dtype=lib.float64), (S,)),
    Op("softmax_dtype", lambda lib, a: a.float().softmax(1, dtype=lib.float64), (S,)),
    Op("cumsum_dtype", lambda lib, a: a.float().cumsum(0, dtype=lib.float64), (S,)),
]
