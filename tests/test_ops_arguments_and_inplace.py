"""What real PyTorch code calls beyond the catalogue's gradients, compared with torch: numpy's
argument names (`x.sum(axis=1, keepdims=True)`), the function forms' keywords (`input=`, `out=`),
`dtype=`, the results that are not differentiable (sort's indices, count_nonzero...), the
activations' and new operations' dtypes and errors, and the in-place forms: their graphs, version
checks and errors.

Most tests are one program `fn(lib)` run with `lib = torch` and `lib = mini_autograd`, whose
results (tensors by dtype, shape and values), warnings or errors must be the same. The function
forms are taken from `mini_autograd.ops` (see `functions`).
"""

import math

import numpy as np
import pytest
import torch
from ops_api_helpers import ints, run_both, x34
from parity_helpers import (
    to_numpy,
)

import mini_autograd as ma
import mini_autograd.ops as ops
from mini_autograd.ops import activations, inplace_elementwise
from mini_autograd.ops.methods import METHODS


def functions(lib):
    """Where the function forms are: torch, or mini_autograd.ops (the package re-exports them)."""
    return torch if lib is torch else ops


def nn_functional(lib, name):
    """torch.nn.functional.<name>; for mini_autograd, ops/activations.py's until nn has it."""
    return getattr(lib.nn.functional, name, None) or getattr(activations, name)


def _out(lib, call, out_of):
    """call(out) with out = out_of(lib), and the out tensor itself, its identity and version."""
    out = out_of(lib)
    result = call(functions(lib), out)
    if isinstance(result, tuple):
        return result, tuple(r is o for r, o in zip(result, out))
    return result, result is out, out._version


def _in_place(lib, method, *args, make=x34):
    """A non-leaf tensor changed in place: (the returned tensor is it, its values, its version)."""
    y = make(lib).requires_grad_() * 1 if make is x34 else make(lib)
    returned = getattr(y, method)(*args)
    return returned is y, y.detach(), y._version


CALLS = {
    # --- numpy's names: axis= for dim, keepdims= for keepdim -----------------------------------
    "sum_axis_keepdims": lambda lib: x34(lib).sum(axis=1, keepdims=True),
    "sum_dim_keepdims": lambda lib: x34(lib).sum(1, keepdims=True),
    "mean_axis": lambda lib: x34(lib).mean(axis=0),
    "max_axis": lambda lib: tuple(x34(lib).max(axis=1)),
    "min_axis_keepdims": lambda lib: tuple(x34(lib).min(axis=1, keepdims=True)),
    "argmax_axis": lambda lib: x34(lib).argmax(axis=1),
    "argmin_axis_keepdims": lambda lib: x34(lib).argmin(axis=0, keepdims=True),
    "std_axis": lambda lib: x34(lib).std(axis=1),
    "var_axis_keepdims": lambda lib: x34(lib).var(axis=1, keepdims=True),
    "prod_axis": lambda lib: x34(lib).prod(axis=1),
    "logsumexp_axis": lambda lib: x34(lib).logsumexp(axis=1),
    "all_axis": lambda lib: x34(lib).all(axis=1),
    "any_axis_keepdims": lambda lib: x34(lib).any(axis=0, keepdims=True),
    "softmax_axis": lambda lib: x34(lib).softmax(axis=1),
    "log_softmax_axis": lambda lib: x34(lib).log_softmax(axis=0),
    "cumsum_axis": lambda lib: x34(lib).cumsum(axis=1),
    "sort_axis": lambda lib: tuple(x34(lib).sort(axis=0)),
    "topk_axis": lambda lib: tuple(x34(lib).topk(2, axis=0)),
    "kthvalue_axis_keepdims": lambda lib: tuple(x34(lib).kthvalue(1, axis=0, keepdims=True)),
    "amax_axis": lambda lib: x34(lib).amax(axis=1),
    "count_nonzero_axis": lambda lib: x34(lib).count_nonzero(axis=1),
    "sum_fn_axis": lambda lib: functions(lib).sum(x34(lib), axis=0),
    "argmax_fn_axis": lambda lib: functions(lib).argmax(x34(lib), axis=1),
    "sum_dim_and_axis": lambda lib: x34(lib).sum(dim=1, axis=1),
    "sum_positional_dim_and_axis": lambda lib: x34(lib).sum(0, axis=0),
    "sum_keepdim_and_keepdims": lambda lib: x34(lib).sum(1, keepdim=True, keepdims=True),
    "logsumexp_no_dim": lambda lib: x34(lib).logsumexp(),
    "cumsum_no_dim": lambda lib: x34(lib).cumsum(),
    "softmax_no_dim": lambda lib: x34(lib).softmax(),
    "log_softmax_no_dim": lambda lib: x34(lib).log_softmax(),
    # --- the function forms' keywords: input= (numpy's x=, a=, x1=), x2= for other -------------
    "sum_input": lambda lib: functions(lib).sum(input=x34(lib), dim=0),
    "mean_input": lambda lib: functions(lib).mean(input=x34(lib)),
    "exp_input": lambda lib: functions(lib).exp(input=x34(lib)),
    "sum_x": lambda lib: functions(lib).sum(x=x34(lib), dim=0),
    "sum_a": lambda lib: functions(lib).sum(a=x34(lib)),
    "add_x1_x2": lambda lib: functions(lib).add(x1=x34(lib), x2=x34(lib)),
    "add_x2": lambda lib: functions(lib).add(x34(lib), x2=x34(lib)),
    "add_input_other_alpha": lambda lib: functions(lib).add(input=x34(lib), other=1.0, alpha=2),
    "matmul_input_other": lambda lib: functions(lib).matmul(input=x34(lib), other=x34(lib).t()),
    "mm_input_mat2": lambda lib: functions(lib).mm(input=x34(lib), mat2=x34(lib).t()),
    "max_input_dim": lambda lib: tuple(functions(lib).max(input=x34(lib), dim=1)),
    "clamp_input_min": lambda lib: functions(lib).clamp(input=x34(lib), min=0.0),
    "cat_tensors": lambda lib: functions(lib).cat(tensors=[x34(lib), x34(lib)], dim=1),
    "stack_tensors_axis": lambda lib: functions(lib).stack(tensors=[x34(lib), x34(lib)]),
    "where_condition": lambda lib: functions(lib).where(
        condition=x34(lib) > 0, input=x34(lib), other=-x34(lib)
    ),
    "sum_input_twice": lambda lib: functions(lib).sum(x34(lib), dim=0, input=x34(lib)),
    # --- out=: the result written into a given tensor ------------------------------------------
    "add_out": lambda lib: _out(
        lib, lambda f, o: f.add(x34(lib), 1, out=o), lambda lib: lib.empty(3, 4)
    ),
    "exp_out_into_input": lambda lib: _out(lib, lambda f, o: f.exp(o, out=o), x34),
    "mm_out": lambda lib: _out(
        lib, lambda f, o: f.mm(x34(lib), x34(lib).t(), out=o), lambda lib: lib.empty(3, 3)
    ),
    "add_out_resized": lambda lib: _out(
        lib, lambda f, o: f.add(x34(lib), 1, out=o), lambda lib: lib.zeros(2)
    ),
    "add_out_empty": lambda lib: _out(
        lib, lambda f, o: f.add(x34(lib), 1, out=o), lambda lib: lib.zeros(0)
    ),
    "add_out_float64": lambda lib: _out(
        lib, lambda f, o: f.add(x34(lib), 1, out=o), lambda lib: lib.zeros(3, 4, dtype=lib.float64)
    ),
    "add_out_long": lambda lib: _out(
        lib, lambda f, o: f.add(x34(lib), 1, out=o), lambda lib: lib.zeros(3, 4, dtype=lib.int64)
    ),
    "eq_out_float": lambda lib: _out(
        lib, lambda f, o: f.eq(x34(lib), 0.0, out=o), lambda lib: lib.zeros(0)
    ),
    "exp_ints_out_long": lambda lib: _out(
        lib, lambda f, o: f.exp(ints(lib), out=o), lambda lib: lib.zeros(0, dtype=lib.int64)
    ),
    "mm_out_float64": lambda lib: _out(
        lib,
        lambda f, o: f.mm(x34(lib), x34(lib).t(), out=o),
        lambda lib: lib.zeros(0, dtype=lib.float64),
    ),
    "matmul_out_float64": lambda lib: _out(
        lib,
        lambda f, o: f.matmul(x34(lib), x34(lib).t(), out=o),
        lambda lib: lib.zeros(0, dtype=lib.float64),
    ),
    "argmax_out": lambda lib: _out(
        lib, lambda f, o: f.argmax(x34(lib), 1, out=o), lambda lib: lib.zeros(0, dtype=lib.int64)
    ),
    "argmax_out_int32": lambda lib: _out(
        lib, lambda f, o: f.argmax(x34(lib), 1, out=o), lambda lib: lib.zeros(0, dtype=lib.int32)
    ),
    "abs_out_float64": lambda lib: _out(
        lib, lambda f, o: f.abs(x34(lib), out=o), lambda lib: lib.zeros(0, dtype=lib.float64)
    ),
    "all_out_float": lambda lib: _out(
        lib, lambda f, o: f.all(x34(lib), 1, out=o), lambda lib: lib.zeros(0)
    ),
    "amax_out_float64": lambda lib: _out(
        lib, lambda f, o: f.amax(x34(lib), 1, out=o), lambda lib: lib.zeros(0, dtype=lib.float64)
    ),
    "dot_out_float64": lambda lib: _out(
        lib,
        lambda f, o: f.dot(x34(lib)[0], x34(lib)[1], out=o),
        lambda lib: lib.zeros(0, dtype=lib.float64),
    ),
    "where_out_float64": lambda lib: _out(
        lib,
        lambda f, o: f.where(x34(lib) > 0, x34(lib), x34(lib), out=o),
        lambda lib: lib.zeros(0, dtype=lib.float64),
    ),
    "index_select_out_float64": lambda lib: _out(
        lib,
        lambda f, o: f.index_select(x34(lib), 1, lib.tensor([0]), out=o),
        lambda lib: lib.zeros(0, dtype=lib.float64),
    ),
    "sum_out_long_computes_in_long": lambda lib: _out(
        lib,
        lambda f, o: f.sum(x34(lib) + 0.25, 1, out=o),
        lambda lib: lib.zeros(0, dtype=lib.int64),
    ),
    "cumsum_out_long": lambda lib: _out(
        lib,
        lambda f, o: f.cumsum(x34(lib) + 0.25, 1, out=o),
        lambda lib: lib.zeros(0, dtype=lib.int64),
    ),
    "mean_out": lambda lib: _out(
        lib, lambda f, o: f.mean(x34(lib), 0, out=o), lambda lib: lib.zeros(4)
    ),
    "cat_out": lambda lib: _out(
        lib, lambda f, o: f.cat([x34(lib), x34(lib)], out=o), lambda lib: lib.zeros(6, 4)
    ),
    "softmax_out": lambda lib: _out(
        lib, lambda f, o: f.log_softmax(x34(lib), 1, out=o), lambda lib: lib.zeros(3, 4)
    ),
    "max_dim_out_tuple": lambda lib: _out(
        lib,
        lambda f, o: f.max(x34(lib), 1, out=o),
        lambda lib: (lib.zeros(3), lib.zeros(3, dtype=lib.int64)),
    ),
    "sort_out_tuple": lambda lib: _out(
        lib,
        lambda f, o: f.sort(x34(lib), out=o),
        lambda lib: (lib.zeros(0), lib.zeros(0, dtype=lib.int64)),
    ),
    "max_dim_out_float_indices": lambda lib: _out(
        lib, lambda f, o: f.max(x34(lib), 1, out=o), lambda lib: (lib.zeros(3), lib.zeros(3))
    ),
    "max_dim_out_one": lambda lib: _out(
        lib, lambda f, o: f.max(x34(lib), 1, out=o), lambda lib: (lib.zeros(3),)
    ),
    "exp_out_number": lambda lib: functions(lib).exp(x34(lib), out=3),
    "exp_out_none": lambda lib: functions(lib).exp(x34(lib), out=None),
    "reshape_out": lambda lib: functions(lib).reshape(x34(lib), (12,), out=lib.zeros(12)),
    "equal_out": lambda lib: functions(lib).equal(x34(lib), x34(lib), out=lib.zeros(())),
    "method_out": lambda lib: x34(lib).add(1, out=lib.zeros(3, 4)),
    "out_input_requires_grad": lambda lib: functions(lib).add(
        x34(lib).requires_grad_(), 1, out=lib.zeros(3, 4)
    ),
    "out_requires_grad": lambda lib: functions(lib).exp(
        x34(lib), out=lib.zeros(3, 4, requires_grad=True)
    ),
    "out_in_list_requires_grad": lambda lib: functions(lib).cat(
        [x34(lib), x34(lib).requires_grad_()], out=lib.zeros(6, 4)
    ),
    "out_no_grad": lambda lib: _no_grad_out(lib),
    # --- dtype= --------------------------------------------------------------------------------
    "sum_dtype_float64": lambda lib: x34(lib).sum(dtype=lib.float64),
    "sum_dim_dtype_int64": lambda lib: x34(lib).sum(1, dtype=lib.int64),
    "mean_ints_dtype": lambda lib: ints(lib).mean(dtype=lib.float32),
    "mean_dim_dtype": lambda lib: x34(lib).mean(0, dtype=lib.float64),
    "mean_ints_int_dtype": lambda lib: ints(lib).mean(dtype=lib.int64),
    "mean_ints": lambda lib: ints(lib).mean(),
    "cumsum_dtype": lambda lib: x34(lib).cumsum(1, dtype=lib.float64),
    "softmax_dtype": lambda lib: x34(lib).softmax(1, dtype=lib.float64),
    "softmax_dtype_positional": lambda lib: x34(lib).softmax(1, lib.float64),
    "softmax_fn_ints_dtype": lambda lib: lib.softmax(ints(lib), 1, dtype=lib.float32),
    "log_softmax_dtype": lambda lib: x34(lib).log_softmax(dim=1, dtype=lib.float64),
    "softmax_ints_last_dim": lambda lib: ints(lib).softmax(1),
    "softmax_ints": lambda lib: ints(lib).softmax(0),
    "log_softmax_ints_last_dim": lambda lib: ints(lib).log_softmax(-1),
    "log_softmax_ints": lambda lib: ints(lib).log_softmax(0),
    # --- the new elementwise operations: dtypes and special values -----------------------------
    "exp2_ints": lambda lib: ints(lib).exp2(),
    "log2_ints": lambda lib: lib.log2(ints(lib)),
    "log10_values": lambda lib: lib.tensor([0.0, 1.0, 100.0, -1.0]).log10(),
    "tan_ints": lambda lib: lib.tan(ints(lib)),
    "asin_out_of_range": lambda lib: lib.tensor([-1.0, 0.5, 1.0, 2.0]).asin(),
    "acos_bools": lambda lib: lib.acos(lib.tensor([True, False])),
    "atan_float64": lambda lib: x34(lib, lib.float64).atan(),
    "sinh_cosh": lambda lib: (x34(lib).sinh(), lib.cosh(x34(lib))),
    "erf_values": lambda lib: lib.erf(lib.tensor([-3.0, -0.5, 0.0, 0.5, 3.0, math.inf])),
    "erf_bools": lambda lib: lib.tensor([True, False]).erf(),
    "erf_float64": lambda lib: x34(lib, lib.float64).erf(),
    "atan2": lambda lib: lib.atan2(x34(lib), x34(lib).flip(0)),
    "atan2_ints": lambda lib: lib.atan2(ints(lib), ints(lib)),
    "atan2_int_float": lambda lib: ints(lib).atan2(lib.ones(2, dtype=lib.float64)),
    "atan2_0d": lambda lib: x34(lib).atan2(lib.tensor(1.0, dtype=lib.float64)),
    "atan2_number": lambda lib: lib.atan2(x34(lib), 2.0),
    "atan2_broadcast_error": lambda lib: lib.atan2(x34(lib), lib.ones(5)),
    "atan2_origin_gradient": lambda lib: _atan2_origin(lib),
    "arctan2": lambda lib: lib.arctan2(x34(lib), x34(lib)),
    # --- activations -----------------------------------------------------------------------
    "softplus_float32": lambda lib: nn_functional(lib, "softplus")(x34(lib) * 10),
    "softplus_threshold": lambda lib: nn_functional(lib, "softplus")(x34(lib), 2, 1),
    "softplus_ints": lambda lib: nn_functional(lib, "softplus")(ints(lib)),
    "elu_float32": lambda lib: nn_functional(lib, "elu")(x34(lib), 0.5),
    "elu_ints": lambda lib: nn_functional(lib, "elu")(ints(lib)),
    "selu_float32": lambda lib: nn_functional(lib, "selu")(x34(lib)),
    "selu_ints": lambda lib: lib.selu(ints(lib)),
    "silu_float32": lambda lib: nn_functional(lib, "silu")(x34(lib)),
    "silu_ints": lambda lib: nn_functional(lib, "silu")(ints(lib)),
    "mish_float32": lambda lib: nn_functional(lib, "mish")(x34(lib) * 10),
    "mish_ints": lambda lib: nn_functional(lib, "mish")(ints(lib)),
    "gelu_float32": lambda lib: nn_functional(lib, "gelu")(x34(lib).clamp(min=-1)),
    "gelu_tanh_float32": lambda lib: nn_functional(lib, "gelu")(x34(lib), approximate="tanh"),
    "gelu_bad_approximate": lambda lib: nn_functional(lib, "gelu")(x34(lib), approximate="fast"),
    "gelu_ints": lambda lib: nn_functional(lib, "gelu")(ints(lib)),
    "hardtanh_float32": lambda lib: nn_functional(lib, "hardtanh")(x34(lib) * 2),
    "hardtanh_ints": lambda lib: nn_functional(lib, "hardtanh")(ints(lib) - 2),
    "hardtanh_min_above_max": lambda lib: nn_functional(lib, "hardtanh")(x34(lib), 2.0, 1.0),
    "relu6_ints": lambda lib: nn_functional(lib, "relu6")(ints(lib) * 3 - 5),
    "relu6_float32": lambda lib: nn_functional(lib, "relu6")(x34(lib) * 3),
    "logsigmoid_float32": lambda lib: nn_functional(lib, "logsigmoid")(x34(lib) * 100),
    "logsigmoid_ints": lambda lib: nn_functional(lib, "logsigmoid")(ints(lib)),
    # --- running sums and products, sorting ----------------------------------------------------
    "cumsum_ints": lambda lib: ints(lib).cumsum(0),
    "cumsum_int32": lambda lib: lib.tensor([1, 2], dtype=lib.int32).cumsum(0),
    "cumsum_bools": lambda lib: lib.tensor([True, True, False]).cumsum(0),
    "cumprod_ints": lambda lib: lib.cumprod(ints(lib), 1),
    "cumsum_0d": lambda lib: lib.tensor(2.0).cumsum(0),
    "cumprod_0d": lambda lib: lib.tensor(2.0).cumprod(-1),
    "cumsum_bad_dim": lambda lib: x34(lib).cumsum(2),
    "sort": lambda lib: tuple(x34(lib).sort()),
    "sort_descending": lambda lib: tuple(lib.sort(x34(lib), 0, descending=True)),
    "sort_stable": lambda lib: tuple(x34(lib).sort(dim=1, stable=True)),
    "sort_ties_stable": lambda lib: tuple(lib.tensor([2.0, 1.0, 2.0, 1.0]).sort(stable=True)),
    "sort_nan_descending": lambda lib: tuple(
        lib.tensor([1.0, math.nan, 3.0, 3.0]).sort(descending=True)
    ),
    "sort_nan": lambda lib: tuple(lib.tensor([1.0, math.nan, -3.0]).sort()),
    "sort_ints_descending": lambda lib: tuple(
        lib.tensor([3, 1, 2], dtype=lib.uint8).sort(descending=True)
    ),
    "sort_0d": lambda lib: tuple(lib.tensor(1.0).sort()),
    "topk": lambda lib: tuple(x34(lib).topk(2)),
    "topk_smallest": lambda lib: tuple(lib.topk(x34(lib), 2, dim=0, largest=False)),
    "topk_all": lambda lib: tuple(x34(lib).topk(4, sorted=True)),
    "topk_zero": lambda lib: tuple(x34(lib).topk(0)),
    "topk_too_many": lambda lib: x34(lib).topk(5),
    "topk_negative": lambda lib: x34(lib).topk(-1),
    "topk_0d": lambda lib: tuple(lib.tensor(1.0).topk(1)),
    "kthvalue": lambda lib: tuple(x34(lib).kthvalue(2)),
    "kthvalue_dim_keepdim": lambda lib: tuple(lib.kthvalue(x34(lib), 1, 0, True)),
    "kthvalue_zero": lambda lib: x34(lib).kthvalue(0),
    "kthvalue_too_large": lambda lib: x34(lib).kthvalue(5),
    "amax": lambda lib: (x34(lib).amax(), x34(lib).amax(1), lib.amax(x34(lib), (0, 1))),
    "amin_keepdim": lambda lib: x34(lib).amin(dim=0, keepdim=True),
    "amax_list": lambda lib: x34(lib).amax([]),
    "amax_ints": lambda lib: ints(lib).amax(0),
    "amax_empty": lambda lib: lib.zeros(0).amax(),
    "amax_empty_rows": lambda lib: lib.zeros(0, 3).amax(1),
    "amin_empty_dim": lambda lib: lib.zeros(0, 3).amin(0),
    "count_nonzero": lambda lib: (x34(lib).count_nonzero(), lib.count_nonzero(x34(lib), dim=1)),
    "count_nonzero_tuple": lambda lib: x34(lib).count_nonzero((0, 1)),
    "count_nonzero_bools": lambda lib: lib.tensor([True, False, True]).count_nonzero(),
    # --- matrices: trace, diag, tril/triu, outer, addmm ----------------------------------------
    "trace": lambda lib: lib.trace(x34(lib)),
    "trace_ints": lambda lib: ints(lib).trace(),
    "trace_int32": lambda lib: lib.tensor([[1, 2], [3, 4]], dtype=lib.int32).trace(),
    "trace_bools": lambda lib: lib.tensor([[True, False], [True, True]]).trace(),
    "trace_3d": lambda lib: lib.trace(lib.zeros(2, 3, 4)),
    "tril": lambda lib: (x34(lib).tril(), x34(lib).tril(-1), lib.tril(x34(lib), 2)),
    "triu": lambda lib: (x34(lib).triu(), lib.triu(x34(lib), 1), x34(lib).triu(-5)),
    "tril_3d": lambda lib: lib.ones(2, 3, 4).tril(),
    "tril_1d": lambda lib: lib.zeros(3).tril(),
    "triu_ints": lambda lib: ints(lib).triu(),
    "diag": lambda lib: (
        x34(lib).diag(),
        x34(lib).diag(1),
        lib.diag(x34(lib), -1),
        x34(lib).diag(9),
    ),
    "diag_1d": lambda lib: (lib.tensor([1.0, 2.0]).diag(), lib.diag(lib.tensor([1, 2]), -1)),
    "diag_3d": lambda lib: lib.zeros(2, 2, 2).diag(),
    "outer": lambda lib: lib.outer(lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.0, 3.0])),
    "outer_int_float": lambda lib: lib.tensor([1, 2]).outer(lib.tensor([0.5, 2.0])),
    "outer_2d": lambda lib: lib.outer(x34(lib), x34(lib)[0]),
    "outer_2d_vec2": lambda lib: lib.outer(x34(lib)[0], x34(lib)),
    "addmm": lambda lib: lib.addmm(lib.ones(4), x34(lib).t(), x34(lib), beta=0.5, alpha=2),
    "addmm_beta_0_ignores_nan": lambda lib: lib.addmm(
        lib.full((3, 3), math.nan), x34(lib), x34(lib).t(), beta=0
    ),
    "addmm_dtypes": lambda lib: lib.addmm(lib.ones(4), x34(lib).t(), x34(lib, lib.float64)),
    "addmm_dtypes_mat1": lambda lib: lib.addmm(
        lib.ones(3, dtype=lib.float64), x34(lib), x34(lib, lib.float64).t()
    ),
    "addmm_dtypes_self": lambda lib: lib.addmm(
        lib.ones(3, dtype=lib.float64), x34(lib), x34(lib).t()
    ),
    "addmm_shapes": lambda lib: lib.addmm(lib.ones(4), x34(lib), x34(lib)),
    # --- in place: dtype and shape errors, values, the version -----------------------------------
    "exp_": lambda lib: _in_place(lib, "exp_"),
    "sign_": lambda lib: _in_place(lib, "sign_"),
    "pow_": lambda lib: _in_place(lib, "pow_", 3),
    "square_": lambda lib: _in_place(lib, "square_"),
    "ipow": lambda lib: _in_place(lib, "__ipow__", 2),
    "clamp_": lambda lib: _in_place(lib, "clamp_", -1, 1),
    "clip_": lambda lib: _in_place(lib, "clip_", None, 1),
    "round_": lambda lib: _in_place(lib, "round_", make=lambda lib: lib.tensor([0.5, 1.5, 2.5])),
    "round_decimals_": lambda lib: _in_place(
        lib, "round_", make=lambda lib: lib.tensor([1.25, 2.5, -0.35])
    ),
    "floor_ints": lambda lib: _in_place(lib, "floor_", make=ints),
    "square_ints": lambda lib: _in_place(lib, "square_", make=ints),
    "abs_ints": lambda lib: _in_place(lib, "abs_", make=lambda lib: -ints(lib)),
    "clamp_ints_": lambda lib: _in_place(lib, "clamp_", 0, 2, make=ints),
    "exp_ints": lambda lib: ints(lib).exp_(),
    "sqrt_ints": lambda lib: ints(lib).sqrt_(),
    "pow_ints_float": lambda lib: ints(lib).pow_(0.5),
    "neg_bools": lambda lib: lib.tensor([True]).neg_(),
    "clamp_broadcast": lambda lib: lib.tensor([1.0, 2.0]).clamp_(lib.zeros(3, 2)),
    "pow_broadcast": lambda lib: lib.tensor([1.0, 2.0]).pow_(lib.ones(2, 2)),
    "exp_leaf": lambda lib: x34(lib).requires_grad_().exp_(),
    "relu_leaf": lambda lib: lib.relu_(x34(lib).requires_grad_()),
    "relu_leaf_no_grad": lambda lib: _leaf_in_place_no_grad(lib),
    "sigmoid_then_mul_": lambda lib: _backward_after(lib, "sigmoid", "mul_", 2),
    "exp_then_mul_": lambda lib: _backward_after(lib, "exp_", "mul_", 2),
    "sin_then_add_": lambda lib: _backward_after(lib, "sin_", "add_", 1),
    "exp_view_of_non_leaf": lambda lib: _view_in_place(lib, "exp_"),
    "sin_view_of_non_leaf": lambda lib: _view_in_place(lib, "sin_"),
}


def _no_grad_out(lib):
    x = x34(lib).requires_grad_()
    with lib.no_grad():
        out = lib.zeros(3, 4)
        result = functions(lib).mul(x, 2, out=out)
    return result is out, out, out.requires_grad


def _atan2_origin(lib):
    a, b = lib.zeros(3, requires_grad=True), lib.tensor([0.0, 2.0, -1.0], requires_grad=True)
    return lib.autograd.grad(lib.atan2(a, b).sum(), [a, b])


def _leaf_in_place_no_grad(lib):
    w = x34(lib).requires_grad_()
    with lib.no_grad():
        w.clamp_(-1, 1).relu_()
    return w.detach(), w.requires_grad, w.is_leaf, w._version


def _backward_after(lib, first, second, value):
    """A tensor made by `first` (in place or not), changed by `second`, then backward."""
    x = x34(lib, lib.float64).requires_grad_()
    y = getattr(x * 1 if first.endswith("_") else x, first)()
    getattr(y, second)(value)
    y.sum().backward()
    return x.grad


def _view_in_place(lib, method):
    """In place on a view of a non-leaf: the base sees the change, and the gradient flows."""
    x = x34(lib, lib.float64).requires_grad_()
    y = x * 2
    getattr(y[1], method)()
    (y * lib.arange(4.0, dtype=lib.float64)).sum().backward()
    return y.detach(), x.grad, y.grad_fn.name()


@pytest.mark.parametrize("fn", CALLS.values(), ids=CALLS.keys())
def test_call_matches_torch(fn):
    run_both(fn)


def test_threshold_matches_torch():
    """F.threshold, in place or not, torch.threshold and threshold_: values (NaN kept), nodes and
    what they save, first and second derivatives (ThresholdBackwardBackward0)."""

    def program(lib):
        F = lib.nn.functional
        x = lib.tensor([float("nan"), 1.0, 0.1, -1.0], dtype=lib.float64, requires_grad=True)
        y = F.threshold(x, 0.1, 5.0)
        (g,) = lib.autograd.grad((y * 2).sum(), x, create_graph=True)
        z = x * 1
        w = F.threshold(z, 0.1, 2.0, True)
        found = [y, y.grad_fn.name(), y.grad_fn._saved_threshold, g, g.grad_fn.name()]
        found += [w is z, w.grad_fn.name(), w.grad_fn._saved_self.grad_fn.name(), z._version]
        w.sum().backward()
        ints = lib.threshold(lib.tensor([1, 2, 3]), 2, 0)
        return found + [x.grad, ints, lib.threshold_(lib.tensor([1.0, 2.0]), 1.5, 0.0)]

    run_both(program)


IN_PLACE_VIEWS = {
    "squeeze_dim": lambda v: v.squeeze_(1),
    "squeeze_all": lambda v: v.squeeze_(),
    "squeeze_dims": lambda v: v.squeeze_((0, -2)),
    "swapdims_": lambda v: v.swapdims_(0, 2),
    "swapaxes_": lambda v: v.swapaxes_(-1, 0),
    "t_": lambda v: v[0].t_(),
    "as_strided_": lambda v: v.as_strided_((2, 2), (3, 1), 1),
    "as_strided_of_a_view": lambda v: v[1].as_strided_((2,), (1,), 1),
    "t_3d": lambda v: v.t_(),
    "squeeze_out_of_range": lambda v: v.squeeze_(3),
    "as_strided_out_of_bounds": lambda v: v.as_strided_((3, 3), (3, 1)),
}


@pytest.mark.parametrize("change", IN_PLACE_VIEWS.values(), ids=IN_PLACE_VIEWS.keys())
def test_in_place_view_methods_match_torch(change):
    """The in-place view methods: self itself, its new shape, strides and version, the node and
    what it saves, the gradient through it, and torch's errors."""

    def program(lib):
        a = lib.arange(6.0, dtype=lib.float64).reshape(2, 1, 3).requires_grad_()
        x = a * 1
        y = change(x)
        node = y.grad_fn
        saved = sorted((k, getattr(node, k)) for k in dir(node) if k.startswith("_saved_"))
        (y * lib.arange(1.0, y.numel() + 1, dtype=lib.float64).reshape(y.shape)).sum().backward()
        return [y is x or y._base is x, tuple(y.shape), y.stride(), x._version, node.name()] + [
            saved,
            a.grad,
        ]

    run_both(program)


def test_the_package_exports_the_function_forms():
    """`import mini_autograd as torch; torch.sum(input=x)`: the package's names are ops's."""
    assert [n for n in ops.__all__ if getattr(ma, n) is not getattr(ops, n)] == []


def test_function_forms_wrap_the_methods():
    """Every function form is the method itself, called with torch's keywords too."""
    for name in ops.__all__:
        if name in METHODS and name != "where":
            assert getattr(ops, name).__wrapped__ is METHODS[name], name


def test_in_place_forms_are_torchs_methods():
    """Each in-place form is a method of torch.Tensor, named after its out-of-place operation."""
    in_place = [m for m, f in METHODS.items() if f.__module__ == inplace_elementwise.__name__]
    assert len(in_place) > 30
    assert sorted(m for m in in_place if not hasattr(torch.Tensor, m)) == []
    assert sorted(m for m in in_place if m[:-1] not in METHODS) == ["__ipow__"]  # y **= 2


def test_in_place_saves_what_torch_saves():
    """exp_ saves its result (self itself, at the new version); sin_ a clone of self before."""
    for lib in (torch, ma):
        x = x34(lib, lib.float64).requires_grad_()
        y = x * 1
        y.exp_()
        assert y.grad_fn.name() == "ExpBackward0"
        assert y.grad_fn.next_functions[0][0].name() == "MulBackward0"
        np.testing.assert_allclose(to_numpy(y.grad_fn._saved_result), to_numpy(y))
        z = x * 1
        z.sin_()
        assert z.grad_fn.next_functions[0][0].name() == "MulBackward0"
        assert z.grad_fn._saved_self.grad_fn.name() == "CloneBackward0"
        np.testing.assert_allclose(to_numpy(z.grad_fn._saved_self), to_numpy(x))


@pytest.mark.parametrize("method", ["exp_", "sin_", "neg_", "clamp_"])
def test_in_place_packs_one_saved_tensor_as_torch(method):
    """Under saved_tensors_hooks, pack sees the tensors torch's in-place forms save: exp_ its
    result, sin_ and clamp_ a clone of self, neg_ nothing."""
    counts = []
    for lib in (torch, ma):
        packed = []
        y = x34(lib, lib.float64).requires_grad_() * 1
        args = (-1.0, 1.0) if method == "clamp_" else ()
        with lib.autograd.graph.saved_tensors_hooks(
            lambda t, packed=packed: packed.append(t) or t, lambda t: t
        ):
            getattr(y, method)(*args)
        counts.append(len(packed))
    assert counts[1] == counts[0]


def test_function_forms_cost_nothing_for_the_methods():
    """The methods are the operations themselves; only the function forms are wrapped."""
    assert ma.Tensor.sum is METHODS["sum"] is ops.sum.__wrapped__
    assert ma.Tensor.exp_ is METHODS["exp_"]
