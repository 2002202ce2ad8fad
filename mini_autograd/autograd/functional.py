"""Derivatives of whole functions, as torch.autograd.functional: vjp, jvp, jacobian, hessian,
vhp and hvp, all built from autograd.grad.

`inputs` is a tensor or a tuple of tensors, and so is what `func` returns; each result has the
same structure, e.g. jacobian(f, (x, y)) for a single-tensor f is (df/dx, df/dy), each of shape
f(x, y).shape + input.shape. jvp and hvp use the double-backward trick: the gradient of a vjp
with respect to its (dummy) vector is the jvp. Results are detached unless create_graph=True.
Only strict=False is available, and jacobian/hessian run reverse mode (vectorize only changes
PyTorch's speed, so it is accepted and ignored).
"""

from ..core.backward_calls import grad
from ..core.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from ..core.tensor import Tensor
from ..creation import zeros_like
from ..ops.shape import stack

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product, shaped like the inputs."""
    _refuse_strict(strict)
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _preprocess(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tuple(
            func(*inputs), "outputs of the user-provided function", "vjp"
        )
        v = _checked_v(v, outputs, outputs_tuple, "vjp", create_graph)
    product = _product(roots=outputs, inputs=inputs, v=v, like=inputs, create_graph=create_graph)
    return _results(outputs, outputs_tuple, product, inputs_tuple, create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, shaped like the outputs."""
    _refuse_strict(strict)
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _preprocess(inputs, create_graph, need_graph=True)
        v = _checked_v(v, inputs, inputs_tuple, "jvp", create_graph)
        outputs_tuple, outputs = _as_tuple(
            func(*inputs), "outputs of the user-provided function", "jvp"
        )
        # u^T J is linear in u, so d(u^T J v)/du = J v for any u: zeros will do.
        dummies = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _grad(outputs, inputs, dummies, create_graph=True)
    product = _product(
        roots=grad_inputs, inputs=dummies, v=v, like=outputs, create_graph=create_graph
    )
    return _results(outputs, outputs_tuple, product, outputs_tuple, create_graph)


def jacobian(
    func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"
):
    """d func / d inputs: for each output and input, a tensor of shape output.shape + input.shape."""
    _refuse_strict(strict)
    if strategy != "reverse-mode":
        raise NotImplementedError("mini_autograd computes jacobians in reverse mode only")
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _preprocess(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tuple(
            func(*inputs), "outputs of the user-provided function", "jacobian"
        )
        jacobians = []
        for out in outputs:
            rows = [[] for _ in inputs]  # one vjp per output element: a row of the jacobian
            for j in range(out.numel()):
                grads = _grad((out.reshape(-1)[j],), inputs, None, create_graph, retain_graph=True)
                for row, g in zip(rows, _zeros_for_none(grads, inputs)):
                    row.append(g)
            jacobians.append(
                tuple(
                    stack(row).view(tuple(out.shape) + tuple(x.shape))
                    for row, x in zip(rows, inputs)
                )
            )
        result = _postprocess(tuple(jacobians), create_graph)
        return _unpack(result, (outputs_tuple, inputs_tuple))


def hessian(
    func,
    inputs,
    create_graph=False,
    strict=False,
    vectorize=False,
    outer_jacobian_strategy="reverse-mode",
):
    """The second derivatives of a scalar func: for inputs i, j a tensor of shape x_i.shape + x_j.shape."""
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")

    def scalar_func(*xs):
        out = func(*xs)
        _as_tuple(out, "outputs of the user-provided function", "hessian")
        if not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single "
                "element"
            )
        return out.squeeze()

    def gradient(*xs):
        return jacobian(scalar_func, xs, create_graph=True)

    result = jacobian(
        gradient, inputs, create_graph, strict, vectorize, strategy=outer_jacobian_strategy
    )
    return _unpack(result, (inputs_tuple, inputs_tuple))


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar func, shaped like the inputs."""
    outputs_tuple, outputs, inputs_tuple, inputs, v, gradient = _first_derivative(
        func, inputs, v, create_graph, strict, "vhp"
    )
    product = _product(roots=gradient, inputs=inputs, v=v, like=inputs, create_graph=create_graph)
    return _results(outputs, outputs_tuple, product, inputs_tuple, create_graph)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar func, shaped like the inputs (by the double-backward trick)."""
    outputs_tuple, outputs, inputs_tuple, inputs, v, gradient = _first_derivative(
        func, inputs, v, create_graph, strict, "hvp"
    )
    with enable_grad():
        dummies = tuple(zeros_like(x, requires_grad=True) for x in inputs)
        u_h = _grad(gradient, inputs, dummies, create_graph=True)  # u^T H, linear in u
    product = _product(roots=u_h, inputs=dummies, v=v, like=inputs, create_graph=create_graph)
    return _results(outputs, outputs_tuple, product, inputs_tuple, create_graph)


def _first_derivative(func, inputs, v, create_graph, strict, name):
    """What vhp and hvp share: checked inputs, v, the scalar output and its gradient (recorded)."""
    _refuse_strict(strict)
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
        inputs = _preprocess(inputs, create_graph, need_graph=True)
        v = _checked_v(v, inputs, inputs_tuple, name, create_graph)
        outputs_tuple, outputs = _as_tuple(
            func(*inputs), "outputs of the user-provided function", name
        )
        if outputs_tuple:
            raise RuntimeError(f"The function given to {name} should return a single Tensor")
        if outputs[0].numel() != 1:
            raise RuntimeError(
                f"The Tensor returned by the function given to {name} should contain a single "
                "element"
            )
        gradient = _grad(outputs, inputs, None, create_graph=True)
    return outputs_tuple, outputs, inputs_tuple, inputs, v, gradient


def _refuse_strict(strict):
    if strict:
        raise NotImplementedError("mini_autograd's functional API supports strict=False only")


def _as_tuple(x, arg_name, fn_name):
    """(whether x was a tuple, x as a tuple of tensors), with PyTorch's TypeError otherwise."""
    is_tuple = isinstance(x, tuple)
    items = x if is_tuple else (x,)
    for i, item in enumerate(items):
        if not isinstance(item, Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {arg_name}"
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                f"but {where} has type {type(item)}."
            )
    return is_tuple, items


def _preprocess(tensors, create_graph, need_graph):
    """New tensor objects to differentiate with respect to: views (create_graph) or detached leaves."""
    return tuple(
        t.view(t.shape)
        if create_graph and t.requires_grad
        else t.detach().requires_grad_(need_graph)
        for t in tensors
    )


def _checked_v(v, like, like_is_tuple, fn_name, create_graph):
    """v as tensors to multiply by, checked against `like` (vjp's outputs, else the inputs);
    None is allowed only where `like` is a single one-element tensor."""
    if v is not None:
        v = _preprocess(_as_tuple(v, "v", fn_name)[1], create_graph, need_graph=False)
        _validate_v(v, like, like_is_tuple)
    elif len(like) != 1 or like[0].numel() != 1:
        what = (  # vjp's v multiplies the outputs, the others' the inputs
            "the user-provided function returns"
            if fn_name == "vjp"
            else "the input to the user-provided function is"
        )
        raise RuntimeError(
            f"The vector v can only be None if {what} a single Tensor with a single element."
        )
    return v


def _validate_v(v, other, other_is_tuple):
    if len(v) != len(other):
        if other_is_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (vi, oi) in enumerate(zip(v, other)):
        if vi.size() != oi.size():
            prefix = f"Entry {i} in " if other_is_tuple else ""
            raise RuntimeError(
                f"{prefix}v has invalid size: should be {oi.size()} but got {vi.size()}."
            )


def _grad(outputs, inputs, grad_outputs, create_graph, retain_graph=None):
    """autograd.grad over the outputs that require grad (None for every input if none does)."""
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else grad_outputs
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    outs, gos = zip(*pairs)
    return grad(
        outs, inputs, gos, retain_graph=retain_graph, create_graph=create_graph, allow_unused=True
    )


def _zeros_for_none(grads, refs):
    """The mathematical value of a gradient that did not reach an input: zeros."""
    return tuple(zeros_like(r) if g is None else g for g, r in zip(grads, refs))


def _postprocess(results, create_graph):
    """Detach the results (nested tuples too) unless the caller wants their graph."""
    if isinstance(results[0], Tensor):
        return results if create_graph else tuple(r.detach() for r in results)
    return tuple(_postprocess(r, create_graph) for r in results)


def _unpack(results, was_tuple):
    """Undo _as_tuple: a single tensor for a single-tensor argument (two levels for jacobians)."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            results = tuple(r[0] for r in results)
        return results if outer else results[0]
    return results if was_tuple else results[0]


def _product(roots, inputs, v, like, create_graph):
    """v^T d(roots)/d(inputs), zeros (shaped as `like`) where a root does not reach an input;
    recorded when create_graph is on or grad mode was on outside."""
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        return _zeros_for_none(_grad(roots, inputs, v, create_graph), like)


def _results(outputs, outputs_tuple, product, product_tuple, create_graph):
    """(outputs, product), each detached unless create_graph and unpacked as it was given."""
    return (
        _unpack(_postprocess(outputs, create_graph), outputs_tuple),
        _unpack(_postprocess(product, create_graph), product_tuple),
    )
