"""Derivatives of whole functions, as torch.autograd.functional: vjp, jvp, jacobian, hessian,
vhp and hvp, all built from autograd.grad.

`inputs` is a tensor or a tuple of tensors, and so is what `func` returns; each result has the
same structure, e.g. jacobian(f, (x, y)) for a single-tensor f is (df/dx, df/dy), each of shape
f(x, y).shape + input.shape. jvp and hvp use the double-backward trick: the gradient of a vjp
with respect to its (dummy) vector is the jvp. Results are detached unless create_graph=True.
strict=True raises where an output does not depend on an input instead of giving zeros.
`vectorize` only changes PyTorch's speed (it runs vmap), so it is accepted and ignored, except
for the errors it brings; jacobian's strategy="forward-mode" (PyTorch: forward-mode AD under
vmap) takes the jacobian column by column by the double-backward trick. Unlike PyTorch's, a
forward-over-reverse hessian does not require grad (PyTorch's keeps a graph left by vmap).
"""

from ..core.backward_calls import grad
from ..core.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from ..core.tensor import Tensor
from ..creation import zeros_like
from ..ops.shape import stack

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product, shaped like the inputs."""
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _preprocess(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tuple(
            func(*inputs), "outputs of the user-provided function", "vjp"
        )
        _check_requires_grad(outputs, "outputs", strict)
        v = _checked_v(v, outputs, outputs_tuple, "vjp", create_graph)
    product = _product(outputs, inputs, v, inputs, strict, create_graph, "back")
    return _results(outputs, outputs_tuple, product, inputs_tuple, create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, shaped like the outputs."""
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _preprocess(inputs, create_graph, need_graph=True)
        v = _checked_v(v, inputs, inputs_tuple, "jvp", create_graph)
        outputs_tuple, outputs = _as_tuple(
            func(*inputs), "outputs of the user-provided function", "jvp"
        )
        _check_requires_grad(outputs, "outputs", strict)
        # u^T J is linear in u, so d(u^T J v)/du = J v for any u: zeros will do.
        dummies = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _grad(outputs, inputs, dummies, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    product = _product(grad_inputs, dummies, v, outputs, strict, create_graph, "back_trick")
    return _results(outputs, outputs_tuple, product, outputs_tuple, create_graph)


def jacobian(
    func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"
):
    """d func / d inputs: for each output and input, a tensor of shape output.shape + input.shape."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` "
                'and `strategy="forward-mode"` are not supported together (yet). '
                "Please either set `create_graph=False` or "
                '`strategy="reverse-mode"`.'
            )
        return _jacfwd(func, inputs, strict, vectorize)
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _preprocess(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tuple(
            func(*inputs), "outputs of the user-provided function", "jacobian"
        )
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` "
                "and `vectorized=True` are not supported together. "
                "Please either set `strict=False` or "
                "`vectorize=False`."
            )
        jacobians = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]  # one vjp per output element: a row of the jacobian
            for j in range(out.numel()):
                grads = _grad((out.reshape(-1)[j],), inputs, None, create_graph, retain_graph=True)
                for k, (row, g, x) in enumerate(zip(rows, grads, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {k}. This is not allowed in strict mode."
                            )
                        g = zeros_like(x)
                    elif strict and create_graph and not g.requires_grad:
                        # PyTorch's text names the output's index i as the input's
                        raise RuntimeError(
                            "The jacobian of the user-provided function is independent of "
                            f"input {i}. This is not allowed in strict mode when "
                            "create_graph=True."
                        )
                    row.append(g)
            jacobians.append(_stacked(rows, out, inputs, dim=0))
        result = _postprocess(tuple(jacobians), create_graph)
        return _unpack(result, (outputs_tuple, inputs_tuple))


def _jacfwd(func, inputs, strict, vectorize):
    """jacobian's forward mode: the columns J e_k, from u^T J by the double-backward trick."""
    if strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` "
            'and `strategy="forward-mode"` are not supported together (yet). '
            "Please either set `strict=False` or "
            '`strategy="reverse-mode"`.'
        )
    if not vectorize:
        raise NotImplementedError(  # "isonly": PyTorch's text
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
            "only implemented for `vectorize=True`."
        )
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _preprocess(inputs, create_graph=False, need_graph=True)
        # PyTorch's forward mode names no function: "The outputs given to None must be ..."
        outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs", None)
        dummies = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        u_j = _grad(outputs, inputs, dummies, create_graph=True)  # u^T J, linear in u
        columns = [[[] for _ in inputs] for _ in outputs]
        for k, (row, x) in enumerate(zip(u_j, inputs)):
            for j in range(x.numel()):
                picked = (None,) if row is None else (row.reshape(-1)[j],)
                grads = _grad(picked, dummies, None, False, retain_graph=True)
                for out_columns, g, out in zip(columns, grads, outputs):
                    out_columns[k].append(zeros_like(out) if g is None else g)
    # lists where the reverse mode gives tuples, as PyTorch's; nothing recorded, nothing to detach
    jacobians = [
        list(_stacked(out_columns, out, inputs, dim=-1))
        for out_columns, out in zip(columns, outputs)
    ]
    return _unpack(jacobians, (outputs_tuple, inputs_tuple))


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
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*xs):
        out = func(*xs)
        _, outputs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outputs, "outputs", strict)
        if not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single "
                "element"
            )
        return out.squeeze()

    def gradient(*xs):
        jac = jacobian(scalar_func, xs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    result = jacobian(
        gradient, inputs, create_graph, strict, vectorize, strategy=outer_jacobian_strategy
    )
    return _unpack(result, (inputs_tuple, inputs_tuple))


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar func, shaped like the inputs."""
    outputs_tuple, outputs, inputs_tuple, inputs, v, gradient = _first_derivative(
        func, inputs, v, create_graph, strict, "vhp"
    )
    product = _product(gradient, inputs, v, inputs, strict, create_graph, "double_back")
    return _results(outputs, outputs_tuple, product, inputs_tuple, create_graph)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar func, shaped like the inputs (by the double-backward trick)."""
    outputs_tuple, outputs, inputs_tuple, inputs, v, gradient = _first_derivative(
        func, inputs, v, create_graph, strict, "hvp"
    )
    with enable_grad():
        dummies = tuple(zeros_like(x, requires_grad=True) for x in inputs)
        u_h = _grad(gradient, inputs, dummies, create_graph=True)  # u^T H, linear in u
    product = _product(u_h, dummies, v, inputs, strict, create_graph, "double_back_trick")
    return _results(outputs, outputs_tuple, product, inputs_tuple, create_graph)


def _first_derivative(func, inputs, v, create_graph, strict, name):
    """What vhp and hvp share: checked inputs, v, the scalar output and its gradient (recorded)."""
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
        inputs = _preprocess(inputs, create_graph, need_graph=True)
        v = _checked_v(v, inputs, inputs_tuple, name, create_graph)
        outputs_tuple, outputs = _as_tuple(
            func(*inputs), "outputs of the user-provided function", name
        )
        _check_requires_grad(outputs, "outputs", strict)
        if outputs_tuple:
            raise RuntimeError(f"The function given to {name} should return a single Tensor")
        if outputs[0].numel() != 1:
            raise RuntimeError(
                f"The Tensor returned by the function given to {name} should contain a single "
                "element"
            )
        gradient = _grad(outputs, inputs, None, create_graph=True)
        _check_requires_grad(gradient, "jacobian", strict)
    return outputs_tuple, outputs, inputs_tuple, inputs, v, gradient


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
                f"{prefix}v has invalid size: should be torch.Size({list(oi.shape)}) but got "
                f"torch.Size({list(vi.shape)})."
            )


# strict=True: PyTorch's error where a checked tensor is None (only gradients can be), or does
# not require grad, by what the tensors are.
_NOT_REQUIRING_GRAD = {
    "hessian": (
        "The hessian of the user-provided function with respect to input {i} is independent of "
        "the input. This is not allowed in strict mode. You should ensure that your function is "
        "thrice differentiable and that the hessian depends on the inputs."
    ),
    "jacobian": (
        "While computing the hessian, found that the jacobian of the user-provided function "
        "with respect to input {i} is independent of the input. This is not allowed in strict "
        "mode. You should ensure that your function is twice differentiable and that the "
        "jacobian depends on the inputs (this would be violated by a linear function for "
        "example)."
    ),
    "grad_inputs": (
        "The gradient with respect to input {i} is independent of the inputs of the "
        "user-provided function. This is not allowed in strict mode."
    ),
    "outputs": (
        "Output {i} of the user-provided function does not require gradients. The outputs must "
        "be computed in a differentiable manner from the input when running in strict mode."
    ),
}


def _check_requires_grad(tensors, kind, strict):
    """strict=True: every tensor (outputs, gradients) must be there and require grad."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. This is "
                "not allowed in strict mode."
            )
        if not t.requires_grad:
            raise RuntimeError(_NOT_REQUIRING_GRAD[kind].format(i=i))


# strict=True: PyTorch's error where a product's gradient did not reach input {i}, by the stage
# of the computation (a backward, the double-backward trick, a double backward, both).
_INDEPENDENT = {
    "back": (
        "The output of the user-provided function is independent of input {i}. This is not "
        "allowed in strict mode."
    ),
    "back_trick": (
        "The gradient with respect to the input is independent of entry {i} in the "
        "grad_outputs when using the double backward trick to compute forward mode gradients. "
        "This is not allowed in strict mode."
    ),
    "double_back": (
        "The jacobian of the user-provided function is independent of input {i}. This is not "
        "allowed in strict mode."
    ),
    "double_back_trick": (
        "The hessian of the user-provided function is independent of entry {i} in the "
        "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
        "backward trick to replace forward mode AD."
    ),
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """The mathematical value of a gradient that did not reach an input: zeros (strict: an error)."""
    filled = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i=i))
            g = zeros_like(ref)
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. This is "
                "not allowed in strict mode when create_graph=True."
            )
        filled.append(g)
    return tuple(filled)


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


def _stacked(parts, out, inputs, dim):
    """For each input, its derivatives of one output (rows or columns) as one tensor shaped
    out.shape + input.shape."""
    return tuple(
        stack(part, dim=dim).view(tuple(out.shape) + tuple(x.shape))
        for part, x in zip(parts, inputs)
    )


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


def _product(roots, inputs, v, like, strict, create_graph, stage):
    """v^T d(roots)/d(inputs), zeros (shaped as `like`) where a root does not reach an input;
    recorded when create_graph is on or grad mode was on outside."""
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _grad(roots, inputs, v, create_graph)
        return _fill_in_zeros(grads, like, strict, create_graph, stage)


def _results(outputs, outputs_tuple, product, product_tuple, create_graph):
    """(outputs, product), each detached unless create_graph and unpacked as it was given."""
    return (
        _unpack(_postprocess(outputs, create_graph), outputs_tuple),
        _unpack(_postprocess(product, create_graph), product_tuple),
    )
