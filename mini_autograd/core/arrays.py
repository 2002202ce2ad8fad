"""Gradients as numpy arrays: without create_graph, backward passes arrays from node to node.

The backward formulas of the table (ops/derivatives.py) run on arrays directly. A Tensor is
made only where PyTorch's API hands one to user code: hooks, a backward written on Tensors (a
custom Function's, convolution's...), autograd.grad's results; AccumulateGrad makes `.grad`.
With create_graph=True the gradients are Tensors throughout, and what backward does is recorded.
"""

import sys

from .grad_mode import GradMode
from .hooks import run_post_hooks, run_pre_hooks, run_tensor_hooks
from .tensor import Tensor


def tensors(grads):
    """The gradients as Tensors (None stays None, a Tensor stays itself)."""
    return [g if g is None or isinstance(g, Tensor) else Tensor._make(g) for g in grads]


def arrays(grads):
    """The gradients as arrays (None stays None)."""
    return [g._data if isinstance(g, Tensor) else g for g in grads]


def run(node, grads):
    """node's backward on the engine's gradients: arrays in and out, unless create_graph (grad
    mode on inside backward) or a backward written on Tensors (its apply not `takes_arrays`)."""
    if GradMode.enabled or hasattr(type(node).apply, "takes_arrays"):
        return node.apply(*grads)
    return arrays(node.apply(*tensors(grads)))


def pre_hooks(node, grads):
    """hooks.run_pre_hooks, given Tensors."""
    if GradMode.enabled:
        return run_pre_hooks(node, grads)
    return arrays(run_pre_hooks(node, tensors(grads)))


def post_hooks(node, outputs, grads):
    """hooks.run_post_hooks, given Tensors."""
    if GradMode.enabled:
        return run_post_hooks(node, outputs, grads)
    return arrays(run_post_hooks(node, tensors(outputs), tensors(grads)))


def tensor_hooks(node, grads):
    """hooks.run_tensor_hooks, given Tensors."""
    if GradMode.enabled:
        return run_tensor_hooks(node, grads)
    return arrays(run_tensor_hooks(node, tensors(grads)))


def _references(items):
    return sys.getrefcount(items[0])


_ONLY_IN_A_LIST = _references([object()])  # the count of an object that only a list holds


def held_only_by(items):
    """True when nothing but the list `items` holds items[0] (CPython's reference count), as
    PyTorch's AccumulateGrad asks of the gradient it is given before taking it as .grad. Ask
    before items[0] is evaluated as another argument of the same call, which holds it too."""
    return _references(items) == _ONLY_IN_A_LIST
