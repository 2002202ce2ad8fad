"""Gradient checks, as torch.autograd.gradcheck and gradgradcheck: the jacobian that backward
computes, one row per output element, against central finite differences of the function.

Finite differences need float64: with float32 the rounding error of f(x + eps) - f(x - eps)
is about as large as the difference itself, so the check warns for other dtypes.
"""

import warnings

import numpy as np

from ..core.backward_calls import grad
from ..core.tensor import Tensor
from ..creation import rand
from .function import Function


class GradcheckError(RuntimeError):
    """Error raised by gradcheck and gradgradcheck."""


NOT_REENTRANT = (
    "Backward is not reentrant, i.e., running backward with same input and grad_output multiple "
    "times gives different values, although analytical gradient matches numerical gradient."
    "The tolerance for nondeterminism was {}."
)
UNDEFINED_GRAD_CHECK_IS_NEW = (
    "Backwards compatibility: New undefined gradient support checking feature is enabled by "
    "default, but it may break existing callers of this function. If this is true for you, you "
    'can call this function with "check_undefined_grad=False" to disable the feature'
)
UNDEFINED_GRADS_NOT_HANDLED = (
    'Expected backward function to handle undefined output grads. Please look at "Notes about '
    'undefined output gradients" in "tools/autograd/derivatives.yaml"'
)
UNDEFINED_GRADS_NOT_ZERO = (
    "Expected all input grads to be undefined or zero when all output grads are undefined or "
    'zero. Please look at "Notes about undefined output gradients" in '
    '"tools/autograd/derivatives.yaml"'
)
FAST_MODE_NOTE = (
    "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
    "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
    "about fast mode.\n"
)


def gradcheck(
    func,
    inputs,
    *,
    eps=1e-6,
    atol=1e-5,
    rtol=1e-3,
    raise_exception=True,
    nondet_tol=0.0,
    check_undefined_grad=True,
    fast_mode=False,
):
    """True if backward's jacobian of func at inputs matches finite differences (else raises).

    fast_mode compares one number per (output, input) pair, v^T J u for random unit vectors u
    and v, instead of every element of J; backward runs twice, and the two results may differ
    by nondet_tol at most (else backward is "not reentrant"). check_undefined_grad: backward
    must also cope with undefined (None) output gradients, giving None or zero input gradients.
    """
    try:
        return _gradcheck(
            func, _as_tuple(inputs), eps, atol, rtol, nondet_tol, fast_mode, check_undefined_grad
        )
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps=1e-6,
    atol=1e-5,
    rtol=1e-3,
    raise_exception=True,
    nondet_tol=0.0,
    check_undefined_grad=True,
    fast_mode=False,
):
    """gradcheck of the gradients (create_graph=True) with respect to inputs and grad_outputs."""
    inputs = _as_tuple(inputs)
    if grad_outputs is None:  # random ones, as in PyTorch: uniform in [-1, 1), requiring grad
        grad_outputs = tuple(
            (rand(*o.shape, dtype=o.dtype) * 2 - 1).requires_grad_()
            for o in _differentiable(func(*inputs))
        )
    grad_outputs = _as_tuple(grad_outputs)
    count = len(grad_outputs)
    wrt = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]

    def first_derivatives(*args):
        xs, gs = args[:-count], args[-count:]
        outputs = _differentiable(func(*xs))
        grads = grad(outputs, [xs[i] for i in wrt], gs, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        first_derivatives,
        inputs + grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        fast_mode=fast_mode,
    )


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, fast_mode, check_undefined_grad):
    _check_inputs(inputs)
    wrt = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    func_out = _as_tuple(func(*inputs))
    outputs = _differentiable(func_out)
    floats = [o for o in func_out if o._data.dtype.kind == "f"]
    keep = [k for k, o in enumerate(floats) if o.requires_grad]
    check = _fast_gradcheck if fast_mode else _slow_gradcheck
    check(func, inputs, wrt, outputs, keep, eps, atol, rtol, nondet_tol)
    if outputs:
        _check_backward_multiplies_by_grad_output(outputs, wrt)
        if check_undefined_grad:
            _check_undefined_grad(func, inputs, wrt, len(outputs))
    return True


def _slow_gradcheck(func, inputs, wrt, outputs, keep, eps, atol, rtol, nondet_tol):
    """Every element of backward's jacobian against central finite differences."""
    numerical = _numerical_jacobians(func, inputs, wrt, eps)  # [input][float output]
    if not outputs:
        if any(np.any(j != 0) for per_input in numerical for j in per_input):
            raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    for i, out in enumerate(outputs):
        analytical = _analytical_jacobians(wrt, out)
        if any(
            np.max(np.abs(a - b), initial=0) > nondet_tol
            for a, b in zip(analytical, _analytical_jacobians(wrt, out))
        ):
            raise GradcheckError(NOT_REENTRANT.format(nondet_tol))
        for j, (a, per_input) in enumerate(zip(analytical, numerical)):
            n = per_input[keep[i]]
            if not np.allclose(a, n, rtol, atol):
                raise GradcheckError(
                    f"Jacobian mismatch for output {i:d} with respect to input {j:d},\n"
                    f"numerical:{Tensor._make(n)!r}\nanalytical:{Tensor._make(a)!r}\n"
                )


class _UndefinedGrad(Function):
    """x (a copy) whose backward sends no gradient on, as torch._C._functions.UndefinedGrad."""

    @staticmethod
    def forward(ctx, x):
        """A copy of x."""
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        """No gradient (None) for x, whatever came in."""
        return None


def _check_undefined_grad(func, inputs, wrt, count):
    """PyTorch's check that backward copes with undefined (None) output gradients: all of them
    undefined, and for several outputs each one alone; the input gradients must be None or 0."""
    checks = [[_UndefinedGrad.apply(o) for o in _differentiable(func(*inputs))]]
    if len(checks[0]) > 1:
        for k in range(count):
            outputs = _differentiable(func(*inputs))
            checks.append([_UndefinedGrad.apply(o) if i == k else o for i, o in enumerate(outputs)])
    for outputs in checks:
        zeros = [Tensor._make(np.zeros_like(o._data)) for o in outputs]
        try:
            grads = grad(outputs, wrt, zeros, allow_unused=True)
        except RuntimeError as e:
            warnings.warn(UNDEFINED_GRAD_CHECK_IS_NEW, stacklevel=4)
            raise GradcheckError(UNDEFINED_GRADS_NOT_HANDLED) from e
        if any(g is not None and np.any(g._data != 0) for g in grads):
            warnings.warn(UNDEFINED_GRAD_CHECK_IS_NEW, stacklevel=4)
            raise GradcheckError(UNDEFINED_GRADS_NOT_ZERO)


def _fast_gradcheck(func, inputs, wrt, outputs, keep, eps, atol, rtol, nondet_tol):
    """PyTorch's fast mode: for each output i and input j, v_i . (J u_j) from finite differences
    along u_j against (v_i^T J) . u_j from one backward, with atol scaled by sum(u) sum(v)."""
    rng = np.random.default_rng(0)
    us = [_unit(rng, x) for x in wrt]
    jvps = [_numerical_directional(func, inputs, x, u, eps) for x, u in zip(wrt, us)]
    if not outputs:
        if any(np.any(d != 0) for per_input in jvps for d in per_input):
            raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    for i, out in enumerate(outputs):
        v = _unit(rng, out)
        vjps = [grad(out, wrt, Tensor._make(v), retain_graph=True, allow_unused=True) for _ in "12"]
        for g1, g2 in zip(*vjps):
            if g1 is not None and np.max(np.abs(g1._data - g2._data), initial=0) > nondet_tol:
                raise GradcheckError(NOT_REENTRANT.format(nondet_tol))
        for j, (g, u, per_input) in enumerate(zip(vjps[0], us, jvps)):
            analytical = 0.0 if g is None else float(np.sum(g._data * u))
            numerical = float(np.sum(v * per_input[keep[i]].reshape(v.shape)))
            if not np.isclose(analytical, numerical, rtol, atol * u.sum() * v.sum()):
                raise GradcheckError(
                    f"Jacobian mismatch for output {i:d} with respect to input {j:d},\n"
                    f"numerical:{Tensor._make(np.asarray(numerical))!r}\n"
                    f"analytical:{Tensor._make(np.asarray(analytical))!r}\n" + FAST_MODE_NOTE
                )


def _unit(rng, tensor):
    """A random vector of the tensor's shape and dtype, of norm 1, as fast mode draws them."""
    vector = rng.random(tensor.shape).astype(tensor._data.dtype)
    return vector / np.linalg.norm(vector)


def _numerical_directional(func, inputs, x, u, eps):
    """(f(x + eps u) - f(x - eps u)) / (2 eps) for each float output: J u, x changed in place."""
    data, original = x._data, x._data.copy()
    data[...] = original - eps * u
    before = _float_outputs(func, inputs)
    data[...] = original + eps * u
    after = _float_outputs(func, inputs)
    data[...] = original
    _check_same_shape_and_dtype(before, after, eps)
    return [(a - b) / (2 * eps) for b, a in zip(before, after)]


def _check_same_shape_and_dtype(before, after, eps, index=None):
    """PyTorch's AssertionError when perturbing an input changes an output's shape or dtype."""
    on_index = f"on index {index} " if index is not None else ""
    perturbed = f"when inputs are perturbed {on_index}by {eps}, but got:"
    for b, a in zip(before, after):
        if b.shape != a.shape:
            raise AssertionError(
                f"Expected `func` to return outputs with the same shape {perturbed} shapes "
                f"torch.Size({list(b.shape)}) and torch.Size({list(a.shape)})."
            )
        if b.dtype != a.dtype:
            raise AssertionError(
                f"Expected `func` to return outputs with the same dtype {perturbed} dtypes "
                f"torch.{b.dtype} and torch.{a.dtype}."
            )


def _check_inputs(inputs):
    """PyTorch's warning for inputs that are not float64, and its errors."""
    any_requires_grad = False
    for idx, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x.requires_grad):
            continue
        if x._data.dtype != np.float64:
            warnings.warn(
                f"Input #{idx} requires gradient and is not a double precision floating point or "
                "complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. ",
                stacklevel=4,
            )
        if not all(st > 0 or sz <= 1 for st, sz in zip(x._data.strides, x._data.shape)):
            raise RuntimeError(
                f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                "inputs that are non-overlapping to be able to compute the numerical gradients "
                "correctly. You should call .contiguous on the input before passing it to "
                "gradcheck."
            )
        any_requires_grad = True
    if not any_requires_grad:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of them "
            "have requires_grad=True."
        )


def _numerical_jacobians(func, inputs, wrt, eps):
    """For each input in wrt, a (numel(input), numel(output)) array per float output of func.

    Column j of output k is (f(x + eps e_i) - f(x - eps e_i)) / (2 eps) for element i of the
    input: its memory is changed in place, so the version counter does not see it (PyTorch
    perturbs x.data).
    """
    jacobians = []
    for x in wrt:
        data = x._data
        per_output = None
        for row, index in enumerate(np.ndindex(data.shape)):
            original = data[index].copy()
            data[index] = original - eps
            before = _float_outputs(func, inputs)
            data[index] = original + eps
            after = _float_outputs(func, inputs)
            data[index] = original
            _check_same_shape_and_dtype(before, after, eps, index)
            if per_output is None:
                per_output = [np.zeros((data.size, b.size), b.dtype) for b in before]
            for jacobian, b, a in zip(per_output, before, after):
                jacobian[row] = ((a - b) / (2 * eps)).reshape(-1)
        jacobians.append(per_output or [])
    return jacobians


def _float_outputs(func, inputs):
    return [o._data.copy() for o in _as_tuple(func(*inputs)) if o._data.dtype.kind == "f"]


def _analytical_jacobians(wrt, output):
    """For each input, the (numel(input), numel(output)) jacobian, column j = grad of output[j]."""
    jacobians = [np.zeros((x.numel(), output.numel()), x._data.dtype) for x in wrt]
    for j in range(output.numel()):
        grad_output = np.zeros_like(output._data)
        grad_output.reshape(-1)[j] = 1
        grads = grad(output, wrt, Tensor._make(grad_output), retain_graph=True, allow_unused=True)
        for jacobian, g, x in zip(jacobians, grads, wrt):
            if g is None:
                continue
            if g.shape != x.shape:
                raise GradcheckError("Analytical gradient has incorrect size")
            jacobian[:, j] = g._data.reshape(-1)
    return jacobians


def _check_backward_multiplies_by_grad_output(outputs, wrt):
    """With zero grad_outputs every gradient must be zero, of the input's dtype and size."""
    zeros = [Tensor._make(np.zeros_like(o._data)) for o in outputs]
    for g, x in zip(grad(outputs, wrt, zeros, allow_unused=True), wrt):
        if g is None:
            continue
        if np.any(g._data != 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if g._data.dtype != x._data.dtype:
            raise GradcheckError("grad is incorrect type")
        if g.shape != x.shape:
            raise GradcheckError("grad is incorrect size")


def _differentiable(outputs):
    return tuple(o for o in _as_tuple(outputs) if o.requires_grad)


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _deprecated(name):
    warnings.warn(
        f"`{name}` was part of PyTorch's private API and not meant to be exposed. We are "
        "deprecating it and it will be removed in a future version of PyTorch. If you have a "
        "specific use for this or feature request for this to be a stable API, please file us an "
        "issue at https://github.com/pytorch/pytorch/issues/new",
        FutureWarning,
        stacklevel=3,
    )


def _check_grad_out(name, grad_out):
    if grad_out != 1.0:  # the argument is only kept for old code
        raise ValueError(
            f"Expected grad_out to be 1.0. {name} no longer supports values of grad_out != 1.0."
        )


def get_numerical_jacobian(fn, inputs, target=None, eps=1e-3, grad_out=1.0):
    """Deprecated: the finite-difference Jacobian of fn(inputs)'s first output, one
    (numel(input), numel(output)) tensor per tensor of target (default: inputs) requiring grad."""
    _deprecated("get_numerical_jacobian")
    _check_grad_out("get_numerical_jacobian", grad_out)
    target = inputs if target is None else target
    wrt = [t for t in _as_tuple(target) if isinstance(t, Tensor) and t.requires_grad]
    jacobians = _numerical_jacobians(lambda *xs: fn(xs), inputs, wrt, eps)
    return tuple(Tensor._make(per_output[0]) for per_output in jacobians)


def get_analytical_jacobian(inputs, output, nondet_tol=0.0, grad_out=1.0):
    """Deprecated: (jacobians, reentrant, sizes_ok, types_ok): backward's Jacobian of output, one
    (numel(input), numel(output)) tensor per input requiring grad; computed twice, reentrant
    says whether both agree within nondet_tol."""
    _deprecated("get_analytical_jacobian")
    _check_grad_out("get_analytical_jacobian", grad_out)
    wrt = [t for t in _as_tuple(inputs) if isinstance(t, Tensor) and t.requires_grad]
    first, second = _analytical_jacobians(wrt, output), _analytical_jacobians(wrt, output)
    reentrant = all(a.size == 0 or np.abs(a - b).max() <= nondet_tol for a, b in zip(first, second))
    return tuple(Tensor._make(j) for j in first), reentrant, True, True
