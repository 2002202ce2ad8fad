"""backward() and autograd.grad(): PyTorch's checks of their arguments, then the engine.

Both turn their arguments into root tensors, their starting gradients and target edges, check
them as PyTorch does (with its texts), and hand them to engine.run_backward.
"""

import warnings
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from . import dtypes, engine, errors, hooks
from .errors import warn_once
from .node import Node, gradient_edge
from .tensor import Tensor
from .tensor_data import numpy_grad_dtype


class GradientEdge(NamedTuple):
    """Where the gradient of a tensor goes: its node and input number, as PyTorch's GradientEdge.

    `autograd.grad(loss, edge)` is the same as `autograd.grad(loss, tensor)`; the edge keeps its
    node alive by itself, so `ownership_token` is only there for PyTorch's custom Function nodes.
    """

    node: Node
    output_nr: int
    ownership_token: Node | None = None


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(tensors)/d(leaf) into leaf.grad for every leaf (or only `inputs`)."""
    inputs = None if inputs is None else _inputs_tuple(inputs, "backward")
    tensors = _as_tuple(tensors)
    grads = _make_grads(tensors, grad_tensors)
    retain_graph = create_graph if retain_graph is None else retain_graph
    _check_outputs(tensors, grads)
    targets = None if inputs is None else [_input_edge(x, accumulate_grad=True) for x in inputs]
    if create_graph:
        warn_once(errors.CREATE_GRAPH_WITH_BACKWARD, stacklevel=4)
    _run_backward(tensors, grads, retain_graph, create_graph, targets)


def tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Compute d(self)/d(leaf) for every leaf of the graph and accumulate it into leaf.grad."""
    backward(self, gradient, retain_graph, create_graph, inputs)


TENSOR_METHODS = {"backward": tensor_backward}


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    only_inputs=True,
    allow_unused=None,
    is_grads_batched=False,
    materialize_grads=False,
):
    """Return d(outputs)/d(inputs) without touching any .grad (a dict for a dict of inputs)."""
    if materialize_grads and allow_unused is False:
        raise ValueError(errors.MATERIALIZE_WITHOUT_ALLOW_UNUSED)
    allow_unused = materialize_grads if allow_unused is None else allow_unused
    outputs, inputs_tuple = _as_tuple(outputs), _inputs_tuple(inputs, "grad")
    if not only_inputs:
        warnings.warn(errors.ONLY_INPUTS_DEPRECATED, FutureWarning, stacklevel=2)
    if is_grads_batched:
        raise NotImplementedError(
            "mini_autograd does not support is_grads_batched=True: call autograd.grad once per "
            "row of grad_outputs instead."
        )
    grads = _make_grads(outputs, grad_outputs)
    retain_graph = create_graph if retain_graph is None else retain_graph
    _check_outputs(outputs, grads)
    targets = [_input_edge(x, accumulate_grad=False) for x in inputs_tuple]
    result = _run_backward(
        outputs, grads, retain_graph, create_graph, targets, accumulate_grad=False
    )
    for i, (x, g) in enumerate(zip(inputs_tuple, result)):
        if g is None and not allow_unused:
            raise RuntimeError(errors.INPUT_UNUSED.format(i=i))
        dtype = numpy_grad_dtype(x) if isinstance(x, Tensor) and x.grad_fn is None else None
        if isinstance(x, Tensor) and x.grad_fn is not None:
            dtype = x._data.dtype
        if g is not None and dtype is not None and g._data.dtype != dtype:
            result[i] = g.to(dtypes.from_numpy(dtype))  # PyTorch's validate_outputs
    if materialize_grads:
        result = [
            _zeros_for(x, create_graph) if g is None else g for x, g in zip(inputs_tuple, result)
        ]
    if type(inputs) is dict:
        return dict(zip(inputs, result))
    return tuple(result)


def _run_backward(*args, **kwargs):
    """engine.run_backward on the caller's saved-tensors-hooks stack, which is put back after:
    a hook that enters or exits a hooks context during backward changes it only meanwhile, as
    PyTorch's engine restores the thread-local state it captured from the caller."""
    stack = list(hooks.saved_tensors_hook_stack)
    try:
        return engine.run_backward(*args, **kwargs)
    finally:
        hooks.saved_tensors_hook_stack[:] = stack


def _as_tuple(x):
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _inputs_tuple(inputs, api):
    """`inputs` of backward() or grad() as a tuple: a tensor, an edge, a sequence or a dict's values."""
    if isinstance(inputs, (Tensor, GradientEdge)):
        return (inputs,)
    if type(inputs) is dict:
        inputs = inputs.values()
    elif isinstance(inputs, Mapping):
        raise TypeError(errors.INPUTS_NOT_A_DICT.format(api=api, type=type(inputs).__name__))
    inputs = tuple(inputs)
    if not inputs:
        raise RuntimeError(errors.INPUTS_EMPTY.format(api=api))
    return inputs


def _input_edge(x, accumulate_grad):
    """The edge where the gradient of input `x` arrives, after PyTorch's checks.

    backward() fills the .grad of a non-leaf input through retain_grad, as PyTorch does.
    """
    if isinstance(x, GradientEdge):
        return (x.node, x.output_nr)
    if not isinstance(x, Tensor):
        raise RuntimeError(errors.INPUT_NOT_A_TENSOR.format(type=type(x).__name__))
    if accumulate_grad:
        x.retain_grad()
    if not x.requires_grad:
        raise RuntimeError(errors.INPUT_WITHOUT_GRAD)
    return gradient_edge(x)


def _make_grads(outputs, grad_outputs):
    """The gradient each output starts with: given, or 1 for a one-element output (PyTorch's
    _make_grads: an output beyond the gradients given is left to _check_outputs)."""
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else _as_tuple(grad_outputs)
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not isinstance(out, Tensor):
            raise AssertionError(errors.OUTPUT_NOT_A_TENSOR)
        if isinstance(g, Tensor):
            if g.shape != out.shape:
                shapes = {"grad": list(g.shape), "output": list(out.shape)}
                raise RuntimeError(errors.GRADIENT_SHAPE.format(i=i, **shapes))
            if g._data.dtype != out._data.dtype:
                g = g.to(out.dtype)  # as PyTorch's engine does
        elif g is not None:
            raise TypeError(errors.GRADIENT_NOT_A_TENSOR.format(type=type(g).__name__))
        elif out.requires_grad:
            if out._data.size != 1:
                raise RuntimeError(errors.IMPLICIT_GRAD_OF_NON_SCALAR)
            g = Tensor._make(np.ones_like(out._data))
        grads.append(g)
    return grads


def _check_outputs(outputs, grads):
    """PyTorch's engine checks: one gradient per output, and every output requires grad."""
    if len(grads) != len(outputs):
        raise RuntimeError(
            errors.TENSORS_AND_GRADIENTS.format(tensors=len(outputs), gradients=len(grads))
        )
    for i, out in enumerate(outputs):
        if not out.requires_grad:
            raise RuntimeError(errors.OUTPUT_WITHOUT_GRAD.format(i=i))


def _zeros_for(x, create_graph):
    """materialize_grads: zeros shaped as input `x` (which requires grad under create_graph)."""
    if isinstance(x, GradientEdge):
        raise RuntimeError(errors.MATERIALIZE_GRADIENT_EDGE)
    return Tensor._make(np.zeros_like(x._data), create_graph)
