"""my_autograd: your own autograd engine, written chapter by chapter on numpy, with PyTorch's names.

Search for "Exercise 2.7", replace its `raise NotImplementedError(...)` line with your code, save,
and run the check in the chapter's exercise notebook. Until you write a piece, the checks use the
course's answer for it. `import my_autograd as lib` runs the same programs as `import torch as lib`.

Contents: the pieces you write. The parts headed "Given" (PyTorch's texts, the tensor, the node
and the simple formulas at the top, the operations at the end) are not exercises.

    1.1  gradient_edge                           the edge (node, input_nr) a gradient flows into
    1.2  _record                                 the need-grad decision, the node, its edges
    1.3  detach                                  same memory and version counter, out of the graph
    1.6  _SetGradMode                            no_grad and enable_grad: nested blocks, decorators
    2.1  _sum_to                                 a broadcast input's gradient summed to its shape
    2.2  needs_input_grad, MulBackward0          d(self * other), only where a gradient is wanted
    2.3  MmBackward0                             d(self @ mat2)
    2.4  SumBackward0/1, MeanBackward1           d(self.sum()), d(self.sum(dim)), d(self.mean(dim))
    2.6  compute_dependencies                    how many gradients each node will receive
    2.7  _run_loop                               the engine's heart (and register_hook, retain_grad)
    2.8  AccumulateGrad                          adds into .grad (a new tensor under create_graph)
    3.1  mul, mm                                 what * and @ save, and why only that
    3.2  ExpBackward0, TanhBackward0             backward formulas from the saved result
    3.3  SavedTensor, saved_tensors_hooks        saving: the version stamp and the pack hook
    3.5  _in_place, check_version                in place bumps the version; the check refuses
    4.1  release_variables, unpack, saved        freeing what a node saved; reading it back
    4.5  backward, _initial_grads, run_backward  retain_graph's default, the first gradients
    5.1  SigmoidBackward0, DivBackward0          formulas that can be differentiated again
    5.5  grad                                    torch.autograd.grad
    5.6  _Capture, _nodes_leading_to             autograd.grad's targets: their gradients, no more
    6.5  rnn_tanh_cell                           one step of a recurrent network
    7.5  cross_entropy                           the capstone's loss from elementary operations
Every operation has one output: an edge's input_nr is 0.
"""

import functools  # noqa: F401 (a decorator keeps the function's name and docstring)
import heapq  # noqa: F401 (the run loop's queue of ready nodes)
import itertools
import sys  # noqa: F401 (the accumulator's sequence number)
from types import SimpleNamespace

import numpy as np

float32, float64, int64 = np.float32, np.float64, np.int64

# === Given: PyTorch's texts, the tensor, the node, and the operations that record them ==========

FREED_MESSAGE = "Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward."
LEAF_INPLACE_MESSAGE = "a leaf Variable that requires grad is being used in an in-place operation."
UNUSED_MESSAGE = "The differentiated Tensor at index {} appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior."
MODIFIED_MESSAGE = "one of the variables needed for gradient computation has been modified by an inplace operation: {} is at version {}; expected version {} instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."
SCALAR_ONLY_MESSAGE = "grad can be implicitly created only for scalar outputs"
NO_GRAD_FN_MESSAGE = "element {} of tensors does not require grad and does not have a grad_fn"
COUNT_MESSAGE = "got {} tensors and {} gradients"
SHAPE_MESSAGE = "Mismatch in shape: grad_output[{0}] has a shape of torch.Size({1}) and output[{0}] has a shape of torch.Size({2})."
NOT_REQUIRING_MESSAGE = "One of the differentiated Tensors does not require grad"
RETAIN_GRAD_MESSAGE = "can't retain_grad on Tensor that has requires_grad=False"
_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "int64": "LongTensor"}


def modified_error(tensor, producer, version, expected):
    """PyTorch's error for a saved tensor changed in place; `producer` is the node that made it."""
    described = f"[torch.{_TYPE_NAMES.get(tensor.dtype.name, 'Tensor')} {list(tensor.shape)}]"
    if producer is not None:
        described += f", which is output 0 of {producer.name().split('Backward')[0]},"
    return RuntimeError(MODIFIED_MESSAGE.format(described, version, expected))


_GradMode = SimpleNamespace(enabled=True)  # False inside `no_grad`: operations then record nothing


def is_grad_enabled():
    """True when operations record the graph (outside `no_grad`)."""
    return _GradMode.enabled


class Tensor:
    """An n-dimensional array with autograd: requires_grad, grad, grad_fn and a version counter."""

    def __init__(self, data, requires_grad=False, grad_fn=None):
        self._data = data  # a numpy array, never a Python number
        self.requires_grad = requires_grad
        self.grad = None
        self.grad_fn = grad_fn  # the node that made this tensor; None for a leaf
        self._version_counter = [0]  # one box, shared with detach()ed tensors, as in PyTorch
        self._accumulator = None  # a leaf's AccumulateGrad node, made on first use
        self._is_wrapped_number = False  # True when an operation made it from a Python number

    shape = property(lambda self: self._data.shape, doc="The size of each dimension.")
    dtype = property(lambda self: self._data.dtype, doc="The element type (a numpy dtype).")
    ndim = property(lambda self: self._data.ndim, doc="The number of dimensions.")
    is_leaf = property(lambda self: self.grad_fn is None, doc="True when no operation made it.")
    data = property(lambda self: Tensor(self._data), doc="The same memory, outside the graph.")
    _version = property(lambda self: self._version_counter[0], doc="Its in-place changes.")

    def numpy(self):
        """The data as a numpy array (shared memory); refused while it requires grad."""
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")  # fmt: skip
        return self._data

    def item(self):
        """The value of a one-element tensor, as a Python number."""
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")  # fmt: skip
        return self._data.item()

    def __repr__(self):
        node = f", grad_fn=<{self.grad_fn.name()}>" if self.grad_fn else ""
        return f"tensor({np.array2string(self._data, separator=', ')}{node})"

    def backward(self, gradient=None, retain_graph=None, create_graph=False):
        """Accumulate d(self)/d(leaf) into the .grad of every leaf that requires grad."""
        backward(self, gradient, retain_graph, create_graph)


def tensor(data, dtype=None, requires_grad=False):
    """A new leaf tensor holding a copy of `data` (floats become float32, as in PyTorch)."""
    array = np.array(data._data if isinstance(data, Tensor) else data, dtype=dtype)
    if dtype is None and array.dtype == np.float64 and not isinstance(data, np.ndarray):
        array = array.astype(np.float32)
    if requires_grad and array.dtype.kind != "f":
        raise RuntimeError("Only Tensors of floating point dtype can require gradients")
    return Tensor(array, requires_grad=requires_grad)


def zeros(*shape, dtype=float32, requires_grad=False):
    """A tensor of zeros."""
    return tensor(np.zeros(_shape_of(shape), dtype), requires_grad=requires_grad)


def _shape_of(shape):
    return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape


_sequence_nrs = itertools.count()


class Node:
    """A recorded operation: its backward formula `apply`, and edges to its inputs' nodes."""

    saved_names = ()  # the `_saved_*` attributes this kind of node has, as in PyTorch

    def __init__(self, next_functions):
        self.next_functions = tuple(next_functions)  # one edge (node or None, input_nr) per input
        self._sequence_nr = next(_sequence_nrs)  # creation order: backward runs the newest first
        self._saved = {}  # name -> SavedTensor
        self._tensor_pre_hooks = []  # hooks of the output tensor: hook(grad) -> grad or None
        self._retain_grad_hook = None  # retain_grad's: it sees the gradient after those hooks
        self._pre_hooks = []  # hook(grad_outputs) -> grad_outputs or None
        self._hooks = []  # hook(grad_inputs, grad_outputs) -> grad_inputs or None

    def name(self):
        """The node's name, as PyTorch prints it."""
        return type(self).__name__

    def apply(self, g):
        """The backward formula: a tuple of gradients for the inputs, from `g` = d loss/d out."""
        raise TypeError(f"{self.name()} has no backward formula")

    def __getattr__(self, attribute):  # only for attributes not found otherwise: `_saved_self`
        if attribute.startswith("_saved_") and attribute[7:] in type(self).saved_names:
            return self.saved(attribute[7:])
        raise AttributeError(f"'{self.name()}' object has no attribute '{attribute}'")

    def __dir__(self):
        return [*super().__dir__(), *(f"_saved_{n}" for n in self.saved_names)]

    def register_prehook(self, hook):
        """Call hook(grad_outputs) before this node runs; a non-None result replaces them."""
        self._pre_hooks.append(hook)

    def register_hook(self, hook):
        """Call hook(grad_inputs, grad_outputs) after this node runs; a result replaces them."""
        self._hooks.append(hook)

    def __repr__(self):
        return f"<{self.name()} object>"


def _backward_node(name, saved_names, formula, doc):
    """A Node class called `name` whose backward is `formula(node, g)`: the simple operations."""
    return type(name, (Node,), {"saved_names": saved_names, "apply": formula, "__doc__": doc})


# The given backward formulas: (a gradient for each input) from g = d loss/d out.
# fmt: off
AddBackward0 = _backward_node("AddBackward0", (), lambda n, g: (_sum_to(g, n._shapes[0]), _sum_to(g, n._shapes[1])), "out = self + other: (g, g)")
SubBackward0 = _backward_node("SubBackward0", (), lambda n, g: (_sum_to(g, n._shapes[0]), _sum_to(-g, n._shapes[1])), "out = self - other: (g, -g)")
RsubBackward1 = _backward_node("RsubBackward1", (), lambda n, g: (-g,), "out = number - self: -g")
NegBackward0 = _backward_node("NegBackward0", (), lambda n, g: (-g,), "out = -self: -g")
ReciprocalBackward0 = _backward_node("ReciprocalBackward0", ("result",), lambda n, g: (-g * n.saved("result") ** 2,), "out = 1 / self: -g * out * out")
PowBackward0 = _backward_node("PowBackward0", ("self",), lambda n, g: (g * n._saved_exponent * n.saved("self") ** (n._saved_exponent - 1),), "out = self ** p: g * p * self ** (p - 1)")
LogBackward0 = _backward_node("LogBackward0", ("self",), lambda n, g: (g / n.saved("self"),), "out = log(self): g / self")
MeanBackward0 = _backward_node("MeanBackward0", (), lambda n, g: ((g / n._saved_self_sym_numel).expand(n._saved_self_sym_sizes),), "out = self.mean(): g / numel, spread over self's shape")
ExpandBackward0 = _backward_node("ExpandBackward0", (), lambda n, g: (_sum_to(g, n._saved_self_sym_sizes),), "out = self.expand(sizes): g summed back")
TBackward0 = _backward_node("TBackward0", (), lambda n, g: (g.t(),), "out = self.t(): gᵀ")
ViewBackward0 = _backward_node("ViewBackward0", (), lambda n, g: (g.reshape(n._saved_self_sym_sizes),), "out = self.view(sizes): g reshaped back")
SelectBackward0 = _backward_node("SelectBackward0", (), lambda n, g: (_index_grad(g, n),), "out = self[i]: g put back into zeros")
SliceBackward0 = _backward_node("SliceBackward0", (), lambda n, g: (_index_grad(g, n),), "out = self[a:b]: g put back into zeros")
CloneBackward0 = _backward_node("CloneBackward0", (), lambda n, g: (g,), "out = self.clone(): g")
CopyBackwards = _backward_node("torch::autograd::CopyBackwards", (), lambda n, g: (None, g), "out = new memory.copy_(src), two inputs: (None, g)")
IndexGrad = _backward_node("IndexGrad", (), lambda n, g: (g[n._where],), "out = zeros with g at `where`: out[where]")
# fmt: on


def _kept_shape(sizes, dims):
    """`sizes` with each dimension in `dims` (an int or a tuple) set to 1: keepdim's shape."""
    dims = {d % len(sizes) for d in (dims if isinstance(dims, tuple) else (dims,))}
    return tuple(1 if i in dims else s for i, s in enumerate(sizes))


def _index_grad(g, node):
    """Zeros of the indexed tensor's shape with g at the indexed place, recorded for create_graph."""
    data = np.zeros(node._saved_self_sym_sizes, g.dtype)
    data[node._where] = g._data
    return _record(IndexGrad, data, [g], _where=node._where)


# === Chapter 01: recording the graph ============================================================


def gradient_edge(t):
    """The edge (node, input_nr) that the gradient for `t` flows into: (None, 0) for none."""
    ### BEGIN SOLUTION 1.1: the edge of one input
    if not isinstance(t, Tensor) or not t.requires_grad:
        return (None, 0)
    if t.grad_fn is not None:
        return (t.grad_fn, 0)
    if t._accumulator is None:
        t._accumulator = AccumulateGrad(t)
    return (t._accumulator, 0)
    ### END SOLUTION


def _record(node_class, data, inputs, saved=(), saved_result=False, **attributes):
    """The result tensor of an operation on `inputs`, with its node when one is recorded:
    `saved` pairs a name with a value to keep for backward (None: not needed), `saved_result`
    keeps the output as `result`, `attributes` are set on the node (`_saved_dim=1`, `_shapes`)."""
    ### BEGIN SOLUTION 1.2: recording an operation
    wanted = _GradMode.enabled and any(_requires(t) for t in inputs)
    if not wanted:
        return Tensor(data)
    node = node_class([gradient_edge(t) for t in inputs])
    for name, value in attributes.items():
        setattr(node, name, value)
    for name, value in saved:
        if value is not None:
            node._saved[name] = SavedTensor(_as_tensor(value), node)
    result = Tensor(data, requires_grad=True, grad_fn=node)
    if saved_result:
        node._saved["result"] = SavedTensor(result, node, is_output=True)
    return result
    ### END SOLUTION


def detach(self):
    """Tensor.detach: the same data, cut out of the graph."""
    ### BEGIN SOLUTION 1.3: detach
    detached = Tensor(self._data)
    detached._version_counter = self._version_counter
    return detached
    ### END SOLUTION


class _SetGradMode:
    """Context manager (and decorator) that sets grad mode to `mode` inside, and restores it."""

    mode = True

    def __enter__(self):
        ### BEGIN SOLUTION 1.6: entering no_grad
        self.previous = _GradMode.enabled
        _GradMode.enabled = self.mode
        ### END SOLUTION

    def __exit__(self, *exc_info):
        ### BEGIN SOLUTION 1.6: leaving no_grad
        _GradMode.enabled = self.previous
        ### END SOLUTION

    def __call__(self, function):
        """Used as a decorator: the function runs inside a fresh block of this mode."""
        ### BEGIN SOLUTION 1.6: no_grad as a decorator

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with type(self)():
                return function(*args, **kwargs)

        return wrapper
        ### END SOLUTION


no_grad = type("no_grad", (_SetGradMode,), {"mode": False, "__doc__": "Inside, nothing records."})
enable_grad = type("enable_grad", (_SetGradMode,), {"mode": True, "__doc__": "Inside, ops record."})


# === Chapter 02: backward formulas and the engine ===============================================


def _sum_to(grad, shape):
    """The gradient of an input of shape `shape` that was broadcast to `grad`'s shape."""
    ### BEGIN SOLUTION 2.1: undoing broadcasting
    extra = grad.ndim - len(shape)
    dims = [i for i, size in enumerate(grad.shape) if i < extra or shape[i - extra] == 1 != size]
    if not dims:
        return grad
    return grad.sum(dim=tuple(dims), keepdim=True).reshape(shape)
    ### END SOLUTION


def needs_input_grad(self, i):
    """Node.needs_input_grad: True when input i of this node wants a gradient."""
    ### BEGIN SOLUTION 2.2: which inputs want a gradient
    return self.next_functions[i][0] is not None
    ### END SOLUTION


class MulBackward0(Node):
    """out = self * other, broadcast: a gradient for each input."""

    saved_names = ("other", "self")

    def apply(self, g):
        ### BEGIN SOLUTION 2.2: the backward formula of mul
        grad_self = grad_other = None
        if self.needs_input_grad(0):
            grad_self = _sum_to(g * self.saved("other"), self._shapes[0])
        if self.needs_input_grad(1):
            grad_other = _sum_to(g * self.saved("self"), self._shapes[1])
        return grad_self, grad_other
        ### END SOLUTION


class MmBackward0(Node):
    """out = self @ mat2, two matrices: a gradient for each input."""

    saved_names = ("mat2", "self")

    def apply(self, g):
        ### BEGIN SOLUTION 2.3: the backward formula of mm
        grad_self = grad_mat2 = None
        if self.needs_input_grad(0):
            grad_self = g @ self.saved("mat2").t()
        if self.needs_input_grad(1):
            grad_mat2 = self.saved("self").t() @ g
        return grad_self, grad_mat2
        ### END SOLUTION


class SumBackward0(Node):
    """out = self.sum(): the gradient of self."""

    def apply(self, g):
        ### BEGIN SOLUTION 2.4: the backward of sum
        return (g.expand(self._saved_self_sym_sizes),)
        ### END SOLUTION


class SumBackward1(Node):
    """out = self.sum(dim, keepdim): the gradient of self."""

    def apply(self, g):
        ### BEGIN SOLUTION 2.4: the backward of sum along dimensions
        sizes = self._saved_self_sym_sizes
        return (g.reshape(_kept_shape(sizes, self._saved_dim)).expand(sizes),)
        ### END SOLUTION


class MeanBackward1(Node):
    """out = self.mean(dim, keepdim): the gradient of self."""

    def apply(self, g):
        ### BEGIN SOLUTION 2.4: the backward of mean along dimensions
        sizes = self._saved_self_sym_sizes
        kept = _kept_shape(sizes, self._saved_dim)
        count = int(np.prod([s for s, k in zip(sizes, kept) if s != k]))  # the reduced sizes
        return ((g.reshape(kept) / count).expand(sizes),)
        ### END SOLUTION


def compute_dependencies(roots):
    """{node: how many edges point into it}, for every node reachable from the nodes `roots`."""
    ### BEGIN SOLUTION 2.6: dependency counting
    counts = {}
    stack = list(dict.fromkeys(roots))  # each root once, even when it is given twice
    seen = set(stack)
    while stack:
        node = stack.pop()
        for next_node, _ in node.next_functions:
            if next_node is None:
                continue
            counts[next_node] = counts.get(next_node, 0) + 1
            if next_node not in seen:
                seen.add(next_node)
                stack.append(next_node)
    return counts
    ### END SOLUTION


def _run_loop(root_edges, grads, retain_graph, capture):
    """Run every node once all its gradients have arrived, the newest ready node first."""
    ### BEGIN SOLUTION 2.7: the run loop
    dependencies = compute_dependencies(node for node, _ in root_edges)
    buffers, ready, tie = {}, [], itertools.count()
    for (node, _), grad in zip(root_edges, grads):
        buffers[node] = grad if node not in buffers else buffers[node] + grad
    for node in buffers:
        if dependencies.get(node, 0) == 0:
            heapq.heappush(ready, (-node._sequence_nr, next(tie), node))
    while ready:
        node = heapq.heappop(ready)[2]
        grad = buffers.pop(node, None)  # None when every gradient sent here was None
        runs = capture is None or capture.runs(node)
        if runs and capture is not None:
            capture.keep(node, (grad,))  # PyTorch keeps what arrived, before any hook
        for hook in node._tensor_pre_hooks:
            result = hook(grad)
            grad = grad if result is None else result
        if node._retain_grad_hook is not None and grad is not None:
            node._retain_grad_hook(grad)
        if not runs:  # a node that does not run: kept after its tensor's hooks
            capture.keep(node, (grad,))
            continue
        grad_outputs = (grad,)  # the gradients of the node's output (PyTorch's word)
        for hook in node._pre_hooks:
            grad_outputs = hook(grad_outputs) or grad_outputs
        if all(g is None for g in grad_outputs):  # nothing came, so nothing goes on
            grad_inputs = (None,) * len(node.next_functions)
        else:
            grad_inputs = node.apply(*grad_outputs)  # one for each input of the node
        for hook in node._hooks:
            grad_inputs = hook(grad_inputs, grad_outputs) or grad_inputs
        if not retain_graph:
            release_variables(node)
        for (next_node, _), grad in zip(node.next_functions, grad_inputs):
            if next_node is None:
                continue
            if grad is not None:  # a None sends nothing, but the count falls all the same
                buffers[next_node] = grad if next_node not in buffers else buffers[next_node] + grad
            dependencies[next_node] -= 1
            if dependencies[next_node] == 0:
                heapq.heappush(ready, (-next_node._sequence_nr, next(tie), next_node))
    ### END SOLUTION


def register_hook(self, hook):
    """Tensor.register_hook: call hook(grad) when this tensor's gradient is computed."""
    ### BEGIN SOLUTION 2.7: a tensor's hook
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    gradient_edge(self)[0]._tensor_pre_hooks.append(hook)
    return hook
    ### END SOLUTION


def retain_grad(self):
    """Tensor.retain_grad: keep this non-leaf tensor's gradient in .grad, as a leaf's is."""
    ### BEGIN SOLUTION 2.7: keeping a non-leaf's gradient
    if not self.requires_grad:
        raise RuntimeError(RETAIN_GRAD_MESSAGE)
    if self.grad_fn is None:
        return

    def keep(grad):  # the first is copied, as in AccumulateGrad: the arriving one may be shared
        if self.grad is None:
            self.grad = _record(CloneBackward0, grad._data.copy(), [grad])
        else:
            self.grad = self.grad + grad

    self.grad_fn._retain_grad_hook = keep
    ### END SOLUTION


class AccumulateGrad(Node):
    """The node at the end of every path: adds the gradient that arrives into `variable.grad`."""

    def __init__(self, variable):
        ### BEGIN SOLUTION 2.8: a leaf's accumulator
        Node.__init__(self, ())  # not super(): the checks load this method on its own
        self.variable = variable
        self._sequence_nr = sys.maxsize  # PyTorch's: among ready nodes, accumulation runs first
        ### END SOLUTION

    def name(self):
        """PyTorch's name for the node."""
        return "torch::autograd::AccumulateGrad"

    def apply(self, grad):
        ### BEGIN SOLUTION 2.8: accumulating into .grad
        variable = self.variable
        if variable.grad is None:  # a copy: others may hold the incoming gradient itself
            variable.grad = _record(CopyBackwards, grad._data.copy(), [None, grad])
        elif _GradMode.enabled:  # create_graph: the sum is a new tensor, part of the graph
            variable.grad = variable.grad + grad
        else:  # in .grad's own memory: whoever shares it sees the sum, and its version goes up
            variable.grad._data += grad._data
            variable.grad._version_counter[0] += 1
        return ()
        ### END SOLUTION


# === Chapter 03: saved tensors and the version check ============================================


def mul(self, other):
    """self * other, broadcast, recorded with what its backward needs."""
    ### BEGIN SOLUTION 3.1: what mul saves
    data, shapes = _broadcast(self, other, np.multiply)
    saved = [
        ("self", self if _requires(other) else None),
        ("other", other if _requires(self) else None),
    ]
    return _record(MulBackward0, data, [self, other], saved, _shapes=shapes)
    ### END SOLUTION


def mm(self, mat2):
    """self @ mat2, for two matrices (n, k) @ (k, m)."""
    if self.ndim != 2 or mat2.ndim != 2 or self.shape[1] != mat2.shape[0]:
        a, b = ("x".join(map(str, m.shape)) for m in (self, mat2))
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a} and {b})")
    ### BEGIN SOLUTION 3.1: what mm saves
    saved = [
        ("self", self if _requires(mat2) else None),
        ("mat2", mat2 if _requires(self) else None),
    ]
    return _record(MmBackward0, self._data @ mat2._data, [self, mat2], saved)
    ### END SOLUTION


class ExpBackward0(Node):
    """out = exp(self): the gradient of self, from the saved result."""

    saved_names = ("result",)

    def apply(self, g):
        ### BEGIN SOLUTION 3.2: exp's backward from its result
        return (g * self.saved("result"),)
        ### END SOLUTION


class TanhBackward0(Node):
    """out = tanh(self): the gradient of self, from the saved result."""

    saved_names = ("result",)

    def apply(self, g):
        ### BEGIN SOLUTION 3.2: tanh's backward from its result
        result = self.saved("result")
        return (g * (1 - result * result),)
        ### END SOLUTION


class SavedTensor:
    """What a node keeps for its backward: the tensor (or what a pack hook made of it)."""

    def __init__(self, tensor, node, is_output=False):
        ### BEGIN SOLUTION 3.3: saving a tensor
        self.is_output = is_output  # the node's own result: its version error names the node
        self.freed = False
        self.version = tensor._version
        self.version_counter = tensor._version_counter
        self.unpack_hook = None
        self.value = Tensor(tensor._data) if is_output else tensor  # the output holds this node
        self.requires_grad, self.accumulator = tensor.requires_grad, tensor._accumulator
        self.grad_fn = None if is_output else tensor.grad_fn  # where a hooked value joins the graph
        if _hook_stack and not tensor._is_wrapped_number:
            pack, self.unpack_hook = _hook_stack[-1]
            with no_grad():
                self.value = pack(tensor)
        ### END SOLUTION

    def check_version(self, node):
        """Raise PyTorch's error when the tensor was modified in place after it was saved."""
        ### BEGIN SOLUTION 3.5: the version check
        if self.version_counter[0] != self.version:
            producer = node if self.is_output else self.value.grad_fn
            raise modified_error(self.value, producer, self.version_counter[0], self.version)
        ### END SOLUTION


_hook_stack = []  # the active (pack, unpack) pairs of saved_tensors_hooks, innermost last


class saved_tensors_hooks:
    """Inside, every tensor a node saves is stored as pack(tensor) and read back as unpack(...)."""

    def __init__(self, pack_hook, unpack_hook):
        ### BEGIN SOLUTION 3.3: the hooks' block: keeping the pair
        self.hooks = (pack_hook, unpack_hook)
        ### END SOLUTION

    def __enter__(self):
        ### BEGIN SOLUTION 3.3: entering the hooks' block
        _hook_stack.append(self.hooks)
        ### END SOLUTION

    def __exit__(self, *exc_info):
        ### BEGIN SOLUTION 3.3: leaving the hooks' block
        _hook_stack.pop()
        ### END SOLUTION


def _in_place(self, other, numpy_op, node_class=None):
    """self = numpy_op(self, other) in self's memory: bump its version, re-record its node."""
    if node_class is None and (_requires(other) or (self.requires_grad and _GradMode.enabled)):
        raise RuntimeError("my_autograd's mul_ and zero_ work on tensors outside the graph only")
    ### BEGIN SOLUTION 3.5: an in-place operation
    if self.requires_grad and self.is_leaf and _GradMode.enabled:
        raise RuntimeError(LEAF_INPLACE_MESSAGE)
    data, shapes = _broadcast(self, other, numpy_op)
    recorded = _record(node_class, data, [self, other], _shapes=shapes) if node_class else None
    self._data[...] = data
    self._version_counter[0] += 1
    if recorded is not None and recorded.grad_fn is not None:
        self.grad_fn, self.requires_grad = recorded.grad_fn, True
    return self
    ### END SOLUTION


# === Chapter 04: freeing the graph, retain_graph ================================================


def unpack(self, node):
    """SavedTensor.unpack: the saved tensor, after checking that it was not freed or changed."""
    ### BEGIN SOLUTION 4.1: reading a saved tensor back
    if self.freed:
        raise RuntimeError(FREED_MESSAGE)
    if self.unpack_hook is not None:  # what unpack gives back takes the tensor's place in the graph
        data = self.unpack_hook(self.value)._data
        output = Tensor(data, self.requires_grad, node if self.is_output else self.grad_fn)
        output._accumulator = self.accumulator
        return output
    self.check_version(node)
    if not self.is_output:
        return self.value
    output = Tensor(self.value._data, requires_grad=True, grad_fn=node)  # the node made it
    output._version_counter = self.version_counter
    return output
    ### END SOLUTION


def saved(self, name):
    """Node.saved: the saved tensor `name`, unpacked (None when the node did not keep it)."""
    ### BEGIN SOLUTION 4.1: a node reads what it saved
    entry = self._saved.get(name)
    return None if entry is None else entry.unpack(self)
    ### END SOLUTION


def release_variables(node):
    """Free what `node` saved: its backward has run and retain_graph is off."""
    ### BEGIN SOLUTION 4.1: the freeing step
    for saved in node._saved.values():
        saved.value = None
        saved.freed = True
    ### END SOLUTION


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False):
    """Accumulate the gradients of `tensors` into the .grad of the leaves of their graph."""
    ### BEGIN SOLUTION 4.5: backward
    tensors = (tensors,) if isinstance(tensors, Tensor) else tuple(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    run_backward(tensors, _initial_grads(tensors, grad_tensors), retain_graph, create_graph)
    ### END SOLUTION


def _initial_grads(outputs, grad_outputs):
    """The gradient each output starts from: the one given in `grad_outputs` (None, one tensor,
    or one tensor or None per output), or ones for a one-element output."""
    ### BEGIN SOLUTION 4.5: the starting gradients
    if grad_outputs is None or isinstance(grad_outputs, Tensor):
        grad_outputs = [None] * len(outputs) if grad_outputs is None else [grad_outputs]
    grads = []
    for i, (out, grad) in enumerate(zip(outputs, grad_outputs)):  # extra gradients: ignored
        if grad is not None and grad.shape != out.shape:
            raise RuntimeError(SHAPE_MESSAGE.format(i, list(grad.shape), list(out.shape)))
        if grad is None and out.requires_grad and out._data.size != 1:
            raise RuntimeError(SCALAR_ONLY_MESSAGE)
        grads.append(Tensor(np.ones_like(out._data)) if grad is None else grad)
    if len(grads) != len(outputs):
        raise RuntimeError(COUNT_MESSAGE.format(len(outputs), len(grads)))
    for i, out in enumerate(outputs):  # PyTorch's engine checks this after the gradients
        if not out.requires_grad:
            raise RuntimeError(NO_GRAD_FN_MESSAGE.format(i))
    return grads
    ### END SOLUTION


def run_backward(roots, grads, retain_graph, create_graph, inputs=None):
    """Run the graph backward from the tensors `roots`; the gradients of `inputs`, or None."""
    ### BEGIN SOLUTION 4.5: running backward in the right grad mode
    root_edges = [gradient_edge(t) for t in roots]
    capture = None if inputs is None else _Capture(root_edges, inputs)
    previous, _GradMode.enabled = _GradMode.enabled, create_graph
    try:
        _run_loop(root_edges, grads, retain_graph, capture)
    finally:
        _GradMode.enabled = previous
    return None if capture is None else capture.grads
    ### END SOLUTION


# === Chapter 05: create_graph and autograd.grad =================================================


class SigmoidBackward0(Node):
    """out = sigmoid(self): the gradient of self, from the saved result, differentiable."""

    saved_names = ("result",)

    def apply(self, g):
        ### BEGIN SOLUTION 5.1: a differentiable sigmoid backward
        result = self.saved("result")
        return (g * result * (1 - result),)
        ### END SOLUTION


class DivBackward0(Node):
    """out = self / other, broadcast: a gradient for each input, differentiable."""

    saved_names = ("other", "self")

    def apply(self, g):
        ### BEGIN SOLUTION 5.1: a differentiable division backward
        other = self.saved("other")
        grad_self = grad_other = None
        if self.needs_input_grad(0):
            grad_self = _sum_to(g / other, self._shapes[0])
        if self.needs_input_grad(1):
            grad_other = _sum_to(-g * self.saved("self") / (other * other), self._shapes[1])
        return grad_self, grad_other
        ### END SOLUTION


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):  # fmt: skip
    """d(outputs)/d(inputs), returned as a tuple, without touching any .grad."""
    ### BEGIN SOLUTION 5.5: autograd.grad
    outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    grads = _initial_grads(outputs, grad_outputs)
    if not all(t.requires_grad for t in inputs):
        raise RuntimeError(NOT_REQUIRING_MESSAGE)
    if retain_graph is None:
        retain_graph = create_graph
    captured = run_backward(outputs, grads, retain_graph, create_graph, inputs)
    for i, g in enumerate(captured):
        if g is None and not allow_unused:
            raise RuntimeError(UNUSED_MESSAGE.format(i))
    return tuple(captured)
    ### END SOLUTION


class _Capture:
    """What autograd.grad needs from the run loop: the gradients reaching `inputs`, and no more."""

    def __init__(self, root_edges, inputs):
        ### BEGIN SOLUTION 5.6: what to capture
        self.slots = {}  # edge -> the positions of the inputs it feeds (one input may come twice)
        for i, t in enumerate(inputs):
            self.slots.setdefault(gradient_edge(t), []).append(i)
        self.grads = [None] * len(inputs)
        self.wanted = _nodes_leading_to(root_edges, self.slots)
        ### END SOLUTION

    def runs(self, node):
        """True when `node` must run: it leads to an input (no AccumulateGrad ever runs)."""
        ### BEGIN SOLUTION 5.6: which nodes run
        return not isinstance(node, AccumulateGrad) and node in self.wanted
        ### END SOLUTION

    def keep(self, node, grads):
        """Keep the gradients `grads` of `node`'s outputs that are meant for an input."""
        ### BEGIN SOLUTION 5.6: capturing the gradients of the inputs
        for nr, grad in enumerate(grads):
            for slot in self.slots.get((node, nr), ()):
                self.grads[slot] = grad
        ### END SOLUTION


def _nodes_leading_to(root_edges, targets):
    """The nodes with a path to the node of an edge (node, input_nr) in `targets`: those to run."""
    ### BEGIN SOLUTION 5.6: the nodes that lead to an input
    target_nodes = {node for node, _ in targets}
    leads, seen = set(), set()
    for root, _ in root_edges:
        stack = [] if root in seen else [(root, iter(root.next_functions))]
        seen.add(root)
        while stack:  # depth first; a node is decided once all its children are
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                if any(n in leads or n in target_nodes for n, _ in node.next_functions):
                    leads.add(node)
            elif child[0] is not None and child[0] not in seen:
                seen.add(child[0])
                stack.append((child[0], iter(child[0].next_functions)))
    return leads
    ### END SOLUTION


# The `torch.autograd` names: autograd.grad, autograd.backward, autograd.graph.saved_tensors_hooks
autograd = SimpleNamespace(grad=grad, backward=backward,
                           graph=SimpleNamespace(saved_tensors_hooks=saved_tensors_hooks))  # fmt: skip


# === Chapter 06: a recurrent cell ===============================================================


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One step of an Elman RNN: the next hidden state from the input and the previous one."""
    ### BEGIN SOLUTION 6.5: a recurrent cell
    pre = input @ w_ih.t()
    if b_ih is not None:
        pre = pre + b_ih
    pre = pre + hx @ w_hh.t()
    if b_hh is not None:
        pre = pre + b_hh
    return pre.tanh()
    ### END SOLUTION


# === Chapter 07: the capstone's loss ============================================================


def cross_entropy(input, target):
    """The mean over the rows of -log softmax(input)[target]."""
    ### BEGIN SOLUTION 7.5: cross-entropy from elementary operations
    shift = Tensor(input._data.max(axis=1, keepdims=True))  # a constant: it cancels out
    shifted = input - shift
    log_probs = shifted - shifted.exp().sum(dim=1, keepdim=True).log()
    one_hot = np.eye(input.shape[1], dtype=input.dtype)[_array(target)]
    return -(log_probs * Tensor(one_hot)).sum() / len(one_hot)
    ### END SOLUTION


nn = SimpleNamespace(functional=SimpleNamespace(cross_entropy=cross_entropy))  # torch.nn's names


# === Given: the operations (numpy forward, then _record), bound as Tensor's methods =============


def _requires(value):
    return isinstance(value, Tensor) and value.requires_grad


def _array(value):  # a wrapped number counts as the Python number it was, as in PyTorch
    if not isinstance(value, Tensor):
        return value
    return value._data.item() if value._is_wrapped_number else value._data


def _as_tensor(value):
    if isinstance(value, Tensor):
        return value
    number = Tensor(np.asarray(value))  # an int is int64, a float float64, as in PyTorch
    number._is_wrapped_number = True  # PyTorch's name: a hook never packs a wrapped number
    return number


def _broadcast(self, other, numpy_op):
    """(numpy_op of both arrays, both shapes), with PyTorch's error for shapes that do not match."""
    sa, sb = np.shape(_array(self)), np.shape(_array(other))
    for i in range(1, min(len(sa), len(sb)) + 1):
        if sa[-i] != sb[-i] and 1 not in (sa[-i], sb[-i]):
            raise RuntimeError(f"The size of tensor a ({sa[-i]}) must match the size of tensor b ({sb[-i]}) at non-singleton dimension {max(len(sa), len(sb)) - i}")  # fmt: skip
    return np.asarray(numpy_op(_array(self), _array(other))), (sa, sb)


def _binary(node_class, numpy_op, saves=lambda self, other: (), doc=""):
    """An operation of two broadcast inputs; `saves(self, other)` gives the (name, value) pairs."""

    def operation(self, other):
        data, shapes = _broadcast(self, other, numpy_op)
        return _record(node_class, data, [self, other], saves(self, other), _shapes=shapes)

    operation.__doc__ = doc
    return operation


add = _binary(AddBackward0, np.add, doc="self + other, broadcast.")
sub = _binary(SubBackward0, np.subtract, doc="self - other, broadcast.")
div = _binary(DivBackward0, np.divide, lambda a, b: [("self", a if _requires(b) else None),
              ("other", b)], "self / other, broadcast.")  # fmt: skip


def _unary(node_class, numpy_op, saves=None, doc=""):
    """An operation of one tensor whose node saves "self", "result" or nothing."""

    def operation(self):
        data = np.asarray(numpy_op(self._data)).astype(self.dtype)
        saved = [("self", self)] if saves == "self" else []
        return _record(node_class, data, [self], saved, saved_result=saves == "result")

    operation.__doc__ = doc
    return operation


neg = _unary(NegBackward0, np.negative, doc="-self.")
reciprocal = _unary(ReciprocalBackward0, np.reciprocal, "result", "1 / self.")
exp = _unary(ExpBackward0, np.exp, "result", "e ** self, elementwise.")
log = _unary(LogBackward0, np.log, "self", "The natural logarithm, elementwise.")
tanh = _unary(TanhBackward0, np.tanh, "result", "tanh(self), elementwise.")
sigmoid = _unary(SigmoidBackward0, lambda a: 1 / (1 + np.exp(-a)), "result", "1 / (1 + e^-self).")
t = _unary(TBackward0, lambda a: a.T.copy(), doc="The transpose of a matrix.")


def _pow(self, exponent):
    """self ** exponent, for a Python number exponent."""
    if isinstance(exponent, Tensor):
        raise TypeError("my_autograd's ** takes a Python number as the exponent")
    data = np.asarray(self._data**exponent)
    return _record(PowBackward0, data, [self], [("self", self)], _saved_exponent=exponent)


def _sum(self, dim=None, keepdim=False):  # not `sum`: Python's sum stays usable in this file
    """The sum of all elements, or along `dim` (an int or a tuple of ints)."""
    if dim is None:
        data = np.asarray(self._data.sum())
        return _record(SumBackward0, data, [self], _saved_self_sym_sizes=self.shape)
    data = np.asarray(self._data.sum(axis=dim, keepdims=keepdim))
    return _record(SumBackward1, data, [self], _saved_self_sym_sizes=self.shape, _saved_dim=dim,
                   _saved_keepdim=keepdim)  # fmt: skip


def mean(self, dim=None, keepdim=False):
    """The mean of all elements, or along `dim` (an int or a tuple of ints)."""
    known = {"_saved_self_sym_sizes": self.shape, "_saved_self_sym_numel": self._data.size}
    if dim is None:
        return _record(MeanBackward0, np.asarray(self._data.mean()), [self], **known)
    data = np.asarray(self._data.mean(axis=dim, keepdims=keepdim))
    return _record(MeanBackward1, data, [self], _saved_dim=dim, _saved_keepdim=keepdim, **known)


def expand(self, *sizes):
    """self broadcast to `sizes` (a view in PyTorch, a copy here)."""
    data = np.array(np.broadcast_to(self._data, _shape_of(sizes)))
    return _record(ExpandBackward0, data, [self], _saved_self_sym_sizes=self.shape)


def reshape(self, *shape):
    """The same elements in a new shape."""
    data = self._data.reshape(_shape_of(shape)).copy()
    return _record(ViewBackward0, data, [self], _saved_self_sym_sizes=self.shape)


def getitem(self, key):
    """self[i] or self[a:b], along the first dimension: a SelectBackward0 or SliceBackward0 node."""
    if not isinstance(key, (int, np.integer, slice)):
        raise TypeError("my_autograd indexes the first dimension only, with an int or a slice")
    if not isinstance(key, slice) and not -len(self._data) <= key < len(self._data):
        raise IndexError(f"index {key} is out of bounds for dimension 0 with size {len(self._data)}")  # fmt: skip
    node_class = SliceBackward0 if isinstance(key, slice) else SelectBackward0
    return _record(node_class, self._data[key].copy(), [self], _where=key,
                   _saved_self_sym_sizes=self.shape)  # fmt: skip


for _name, _function in {
    "__add__": add, "__radd__": add, "__sub__": sub, "__neg__": neg, "__mul__": mul,
    "__rmul__": mul, "__truediv__": div, "__pow__": _pow, "tolist": lambda s: s._data.tolist(),
    "dim": lambda s: s.ndim, "numel": lambda s: s._data.size, "__len__": lambda s: len(s._data),
    "size": lambda s, dim=None: s.shape if dim is None else s.shape[dim],
    "__rsub__": lambda s, number: _record(RsubBackward1, np.asarray(number - s._data), [s]),
    "__rtruediv__": lambda s, number: mul(reciprocal(s), number),  # recorded as PyTorch does
    "__matmul__": mm, "__getitem__": getitem, "add": add, "sub": sub, "mul": mul, "div": div,
    "pow": _pow, "mm": mm, "matmul": mm, "exp": exp, "log": log, "tanh": tanh, "sigmoid": sigmoid,
    "reciprocal": reciprocal, "sum": _sum, "mean": mean, "expand": expand, "reshape": reshape,
    "view": reshape, "t": t, "detach": detach, "register_hook": register_hook,
    "retain_grad": retain_grad,
    "add_": lambda s, o: _in_place(s, o, np.add, AddBackward0),
    "sub_": lambda s, o: _in_place(s, o, np.subtract, SubBackward0),
    "mul_": lambda s, o: _in_place(s, o, np.multiply),
    "zero_": lambda s: _in_place(s, 0, lambda a, b: np.zeros_like(a)),
}.items():  # fmt: skip
    setattr(Tensor, _name, _function)
Tensor.__iadd__, Tensor.__isub__, Tensor.__imul__ = Tensor.add_, Tensor.sub_, Tensor.mul_
Node.needs_input_grad, Node.saved, SavedTensor.unpack = needs_input_grad, saved, unpack
