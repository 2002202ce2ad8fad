"""my_autograd: your own autograd engine, written chapter by chapter, with PyTorch's names.

Each chapter's exercise notebook asks you to fill in some of the functions below: search this
file for "Exercise 2.3" and replace the `raise NotImplementedError(...)` line with your code.
The notebook's check cell runs the same programs on this engine and on PyTorch and compares
values, gradients, node names, `next_functions`, saved tensors, errors and the backward order.
Until you have written a piece, the checks use the course's answer for it, so you can work on
the exercises in any order.

    import my_autograd as lib          # or: import torch as lib
    x = lib.tensor([[1.0, 2.0]], requires_grad=True)
    loss = (x * x).sum()
    loss.grad_fn                        # <SumBackward0>
    loss.backward()                     # x.grad == 2 * x

numpy only. Everything here also exists in PyTorch under the same name.
"""

import heapq  # noqa: F401 (Exercise 2.4 uses it)
import itertools
import sys

import numpy as np

float32, float64, int64 = np.float32, np.float64, np.int64

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)
LEAF_INPLACE_MESSAGE = "a leaf Variable that requires grad is being used in an in-place operation."
_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "int64": "LongTensor"}


# === Chapter 01: tensors, nodes and recording ===================================================


class _GradMode:
    enabled = True  # False inside `no_grad`: operations then record nothing


def is_grad_enabled():
    """True when operations record the graph (outside `no_grad`)."""
    return _GradMode.enabled


class _SetGradMode:
    """Context manager (and decorator) that sets grad mode inside and restores it after."""

    mode = True

    def __enter__(self):
        ### BEGIN SOLUTION 1.7: entering no_grad
        self.previous = _GradMode.enabled
        _GradMode.enabled = self.mode
        ### END SOLUTION

    def __exit__(self, *exc_info):
        ### BEGIN SOLUTION 1.7: leaving no_grad
        _GradMode.enabled = self.previous
        ### END SOLUTION

    def __call__(self, function):
        def wrapper(*args, **kwargs):
            with type(self)():
                return function(*args, **kwargs)

        return wrapper


class no_grad(_SetGradMode):
    """Inside `with no_grad():` no operation records a node."""

    mode = False


class enable_grad(_SetGradMode):
    """Inside `with enable_grad():` operations record again (even within no_grad)."""

    mode = True


class Tensor:
    """An n-dimensional array with autograd: requires_grad, grad, grad_fn and a version counter."""

    def __init__(self, data, requires_grad=False, grad_fn=None):
        self._data = data  # a numpy array, never a Python number
        self.requires_grad = requires_grad
        self.grad = None
        self.grad_fn = grad_fn  # the node that made this tensor; None for a leaf
        self._version_box = [0]  # shared with detach()ed tensors, as PyTorch's version counter
        self._accumulator = None  # a leaf's AccumulateGrad node, made on first use
        self._retains_grad = False

    # --- what a tensor is ---
    shape = property(lambda self: self._data.shape, doc="The size of each dimension.")
    dtype = property(lambda self: self._data.dtype, doc="The element type (a numpy dtype).")
    ndim = property(lambda self: self._data.ndim, doc="The number of dimensions.")
    _version = property(lambda self: self._version_box[0], doc="How often it was changed in place.")

    @property
    def is_leaf(self):
        """True for a tensor not made by a recorded operation (it has no grad_fn)."""
        return self.grad_fn is None

    @property
    def data(self):
        """The same memory as a tensor outside the graph, with its own version counter."""
        return Tensor(self._data)

    def size(self, dim=None):
        """The shape, or the size of dimension `dim`."""
        return self.shape if dim is None else self.shape[dim]

    def dim(self):
        """The number of dimensions."""
        return self.ndim

    def numel(self):
        """The number of elements."""
        return self._data.size

    def numpy(self):
        """The data as a numpy array (shared memory); refused while it requires grad."""
        if self.requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        return self._data

    def item(self):
        """The value of a one-element tensor, as a Python number."""
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        return self._data.item()

    def tolist(self):
        """The data as (nested) Python lists."""
        return self._data.tolist()

    def __len__(self):
        return len(self._data)

    def __float__(self):
        return float(self.item())

    def __repr__(self):
        body = np.array2string(self._data, precision=4, separator=", ", prefix="tensor(")
        extras = "" if self._data.dtype == np.float32 else f", dtype=torch.{self._data.dtype}"
        if self.grad_fn is not None:
            extras += f", grad_fn=<{self.grad_fn.name()}>"
        elif self.requires_grad:
            extras += ", requires_grad=True"
        return f"tensor({body}{extras})"

    # --- the graph ---
    def detach(self):
        """The same data and version counter, cut out of the graph: no grad_fn, no requires_grad."""
        ### BEGIN SOLUTION 1.3: detach
        detached = Tensor(self._data)
        detached._version_box = self._version_box
        return detached
        ### END SOLUTION

    def requires_grad_(self, requires_grad=True):
        """Set requires_grad on a leaf, in place; returns the tensor."""
        if not self.is_leaf and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        self.requires_grad = requires_grad
        return self

    def backward(self, gradient=None, retain_graph=None, create_graph=False):
        """Accumulate d(self)/d(leaf) into the .grad of every leaf that requires grad."""
        backward(self, gradient, retain_graph, create_graph)

    def register_hook(self, hook):
        """Call hook(grad) when this tensor's gradient is computed; a non-None result replaces it."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        node = self.grad_fn if self.grad_fn is not None else self._grad_accumulator()
        node._tensor_pre_hooks.append(hook)
        return hook

    def retain_grad(self):
        """Keep this non-leaf tensor's gradient in .grad, as a leaf's is."""
        if self.grad_fn is not None and not self._retains_grad:
            self._retains_grad = True

            def keep(grad):
                self.grad = grad if self.grad is None else self.grad + grad

            self.grad_fn._tensor_pre_hooks.append(keep)

    def _grad_accumulator(self):
        if self._accumulator is None:
            self._accumulator = AccumulateGrad(self)
        return self._accumulator

    def zero_(self):
        """Set every element to zero, in place."""
        return _in_place(self, 0)


def tensor(data, dtype=None, requires_grad=False):
    """A new leaf tensor holding a copy of `data` (floats become float32, as in PyTorch)."""
    if isinstance(data, Tensor):
        data = data._data
    array = np.array(data, dtype=dtype)
    if dtype is None and array.dtype == np.float64 and not isinstance(data, np.ndarray):
        array = array.astype(np.float32)
    if requires_grad and array.dtype.kind != "f":
        raise RuntimeError("Only Tensors of floating point dtype can require gradients")
    return Tensor(array, requires_grad=requires_grad)


def zeros(*shape, dtype=float32, requires_grad=False):
    """A tensor of zeros."""
    return tensor(np.zeros(_shape_of(shape), dtype), requires_grad=requires_grad)


def ones(*shape, dtype=float32, requires_grad=False):
    """A tensor of ones."""
    return tensor(np.ones(_shape_of(shape), dtype), requires_grad=requires_grad)


def zeros_like(t):
    """Zeros with t's shape and dtype."""
    return tensor(np.zeros_like(t._data))


def ones_like(t):
    """Ones with t's shape and dtype."""
    return tensor(np.ones_like(t._data))


def _shape_of(shape):
    return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape


class Node:
    """A recorded operation: its backward formula `apply`, and edges to its inputs' nodes."""

    saved_names = ()  # the `_saved_*` attributes this kind of node has, as in PyTorch

    def __init__(self, next_functions):
        self.next_functions = tuple(next_functions)  # one edge (node or None, output_nr) per input
        self._sequence_nr = next(_sequence)  # creation order: backward runs the newest first
        self._saved = {}  # name -> SavedTensor
        self._tensor_pre_hooks = []  # hooks of the output tensor: hook(grad) -> grad or None
        self._pre_hooks = []  # hook(grad_outputs) -> grad_outputs or None
        self._hooks = []  # hook(grad_inputs, grad_outputs) -> grad_inputs or None

    def name(self):
        """The node's name, as PyTorch prints it."""
        return type(self).__name__

    def apply(self, *grads):
        """The backward formula: gradients for the inputs from the gradients of the outputs."""
        raise TypeError(f"{self.name()} has no backward formula")

    def needs_input_grad(self, i):
        """True when input i has an edge, so its gradient is wanted."""
        return self.next_functions[i][0] is not None

    def saved(self, name):
        """The saved tensor `name` (None when this node did not need to save it)."""
        saved = self._saved.get(name)
        return None if saved is None else saved.unpack(self)

    def __getattr__(self, attribute):  # called only for attributes that are not found otherwise
        if attribute.startswith("_saved_") and attribute[7:] in type(self).saved_names:
            return self.saved(attribute[7:])
        raise AttributeError(f"'{self.name()}' object has no attribute '{attribute}'")

    def __dir__(self):
        return [*super().__dir__(), *(f"_saved_{n}" for n in self.saved_names)]

    def register_prehook(self, hook):
        """Call hook(grad_outputs) before this node runs; a non-None result replaces them."""
        self._pre_hooks.append(hook)

    def register_hook(self, hook):
        """Call hook(grad_inputs, grad_outputs) after this node runs."""
        self._hooks.append(hook)

    def __repr__(self):
        return f"<{self.name()} object>"


class AccumulateGrad(Node):
    """The node at the end of every path: adds the gradient that arrives into `variable.grad`."""

    def __init__(self, variable):
        super().__init__(())
        self.variable = variable
        self._sequence_nr = sys.maxsize  # PyTorch's: among ready nodes, accumulation runs first

    def name(self):
        """PyTorch's name for the node."""
        return "torch::autograd::AccumulateGrad"

    def apply(self, grad):
        """variable.grad = grad, or variable.grad + grad when a gradient is already there."""
        ### BEGIN SOLUTION 2.6: accumulating into .grad
        variable = self.variable
        if variable.grad is None:
            variable.grad = grad if _GradMode.enabled else grad.detach()
        elif _GradMode.enabled:  # create_graph: keep the sum in the graph
            variable.grad = variable.grad + grad
        else:
            variable.grad._data = variable.grad._data + grad._data
        return ()
        ### END SOLUTION


_sequence = itertools.count()


def _wants_grad(*inputs):
    """True when an operation on `inputs` records a node: grad mode on and an input requires grad."""
    ### BEGIN SOLUTION 1.1: when an operation records a node
    return _GradMode.enabled and any(isinstance(t, Tensor) and t.requires_grad for t in inputs)
    ### END SOLUTION


def _edge(t):
    """The edge (node, output_nr) that the gradient for input `t` flows into."""
    ### BEGIN SOLUTION 1.2: the edge of one input
    if not isinstance(t, Tensor) or not t.requires_grad:
        return (None, 0)
    if t.grad_fn is not None:
        return (t.grad_fn, 0)
    return (t._grad_accumulator(), 0)
    ### END SOLUTION


def _record(node_class, data, inputs, saved=(), saved_result=False, **attributes):
    """The result tensor of an operation, with its node when one is recorded.

    `saved` pairs a name with an input to keep for backward (None: not needed); `saved_result`
    keeps the output as `result`; `attributes` are set on the node (`_saved_dim=1`, `_shapes`).
    """
    ### BEGIN SOLUTION 1.6: recording a node
    if not _wants_grad(*inputs):
        return Tensor(data)
    node = node_class([_edge(t) for t in inputs])
    for name, value in attributes.items():
        setattr(node, name, value)
    for name, value in saved:
        if value is not None:
            node._saved[name] = SavedTensor(_as_tensor(value, data.dtype), node)
    result = Tensor(data, requires_grad=True, grad_fn=node)
    if saved_result:
        node._saved["result"] = SavedTensor(result, node, is_output=True)
    return result
    ### END SOLUTION


def _as_tensor(value, dtype):
    return value if isinstance(value, Tensor) else Tensor(np.asarray(value, dtype))


def _array(value):
    return value._data if isinstance(value, Tensor) else value


# === Chapter 02: backward formulas and the engine ===============================================


def _sum_to(grad, shape):
    """Sum a broadcast gradient back to `shape`: d(loss)/d(input) of an input that was broadcast."""
    if grad.shape == shape:
        return grad
    extra = grad.ndim - len(shape)
    dims = [i for i, size in enumerate(grad.shape) if i < extra or shape[i - extra] == 1 != size]
    return grad.sum(dim=tuple(dims), keepdim=True).reshape(shape)


def _backward_node(name, saved_names, formula, doc):
    """A Node class called `name` whose backward is `formula(node, g)`: the simple operations."""
    return type(name, (Node,), {"saved_names": saved_names, "apply": formula, "__doc__": doc})


def _both(node, grad_self, grad_other):
    return _sum_to(grad_self, node._shapes[0]), _sum_to(grad_other, node._shapes[1])


# The backward formula of each simple operation: (gradient for each input) from g = d loss/d out.
AddBackward0 = _backward_node(
    "AddBackward0", (), lambda n, g: _both(n, g, g), "out = self + other: (g, g)"
)
SubBackward0 = _backward_node(
    "SubBackward0", (), lambda n, g: _both(n, g, -g), "out = self - other: (g, -g)"
)
RsubBackward1 = _backward_node("RsubBackward1", (), lambda n, g: (-g,), "out = number - self: -g")
NegBackward0 = _backward_node("NegBackward0", (), lambda n, g: (-g,), "out = -self: -g")
ReciprocalBackward0 = _backward_node(
    "ReciprocalBackward0",
    ("result",),
    lambda n, g: (-g * n.saved("result") * n.saved("result"),),
    "out = 1 / self: -g * out * out",
)
PowBackward0 = _backward_node(
    "PowBackward0",
    ("self",),
    lambda n, g: (g * n._saved_exponent * n.saved("self") ** (n._saved_exponent - 1),),
    "out = self ** p, p a number: g * p * self ** (p - 1)",
)
LogBackward0 = _backward_node(
    "LogBackward0", ("self",), lambda n, g: (g / n.saved("self"),), "out = log(self): g / self"
)
TanhBackward0 = _backward_node(
    "TanhBackward0",
    ("result",),
    lambda n, g: (g * (1 - n.saved("result") * n.saved("result")),),
    "out = tanh(self): g * (1 - out * out)",
)
ReluBackward0 = _backward_node(
    "ReluBackward0",
    ("result",),
    lambda n, g: (g * Tensor((n.saved("result")._data > 0).astype(g.dtype)),),
    "out = max(self, 0): g where out > 0, else 0",
)
SumBackward0 = _backward_node(
    "SumBackward0",
    (),
    lambda n, g: (g.expand(n._saved_self_sym_sizes),),
    "out = self.sum(): g spread over self's shape",
)
MeanBackward0 = _backward_node(
    "MeanBackward0",
    (),
    lambda n, g: ((g / n._saved_self_sym_numel).expand(n._saved_self_sym_sizes),),
    "out = self.mean(): g / numel, spread over self's shape",
)
ExpandBackward0 = _backward_node(
    "ExpandBackward0",
    (),
    lambda n, g: (_sum_to(g, n._saved_self_sym_sizes),),
    "out = self.expand(sizes): g summed back",
)
TBackward0 = _backward_node("TBackward0", (), lambda n, g: (g.t(),), "out = self.t(): gᵀ")
PermuteBackward0 = _backward_node("PermuteBackward0", (), lambda n, g: (g.T,), "out = self.T: gᵀ")
ViewBackward0 = _backward_node(
    "ViewBackward0",
    (),
    lambda n, g: (g.reshape(n._saved_self_sym_sizes),),
    "out = self.reshape(shape): g reshaped back",
)
AliasBackward0 = _backward_node("AliasBackward0", (), lambda n, g: (g,), "out = self[:, :]: g")


class MulBackward0(Node):
    """out = self * other: (g * other, g * self)."""

    saved_names = ("other", "self")

    def apply(self, g):
        """(g * other, g * self), each summed to its input's shape."""
        ### BEGIN SOLUTION 2.1: the backward formula of mul
        grad_self = grad_other = None
        if self.needs_input_grad(0):
            grad_self = _sum_to(g * self.saved("other"), self._shapes[0])
        if self.needs_input_grad(1):
            grad_other = _sum_to(g * self.saved("self"), self._shapes[1])
        return grad_self, grad_other
        ### END SOLUTION


class DivBackward0(Node):
    """out = self / other: (g / other, -g * self / other**2)."""

    saved_names = ("other", "self")

    def apply(self, g):
        """(g / other, -g * self / other**2), each summed to its input's shape."""
        other = self.saved("other")
        grad_self = grad_other = None
        if self.needs_input_grad(0):
            grad_self = _sum_to(g / other, self._shapes[0])
        if self.needs_input_grad(1):
            grad_other = _sum_to(-g * self.saved("self") / (other * other), self._shapes[1])
        return grad_self, grad_other


class MmBackward0(Node):
    """out = self @ mat2, two matrices: (g @ mat2.T, self.T @ g)."""

    saved_names = ("mat2", "self")

    def apply(self, g):
        """(g @ mat2ᵀ, selfᵀ @ g)."""
        ### BEGIN SOLUTION 2.2: the backward formula of mm
        grad_self = grad_mat2 = None
        if self.needs_input_grad(0):
            grad_self = g @ self.saved("mat2").t()
        if self.needs_input_grad(1):
            grad_mat2 = self.saved("self").t() @ g
        return grad_self, grad_mat2
        ### END SOLUTION


class ExpBackward0(Node):
    """out = exp(self): g * out, from the saved result."""

    saved_names = ("result",)

    def apply(self, g):
        """(g * result,)."""
        ### BEGIN SOLUTION 3.2: exp backward from its result
        return (g * self.saved("result"),)
        ### END SOLUTION


class SigmoidBackward0(Node):
    """out = sigmoid(self): g * out * (1 - out)."""

    saved_names = ("result",)

    def apply(self, g):
        """(g * result * (1 - result),), written with tensor operations so it can be differentiated."""
        ### BEGIN SOLUTION 5.1: a differentiable sigmoid backward
        result = self.saved("result")
        return (g * result * (1 - result),)
        ### END SOLUTION


class SumBackward1(Node):
    """out = self.sum(dim, keepdim): g spread back along `dim`."""

    def apply(self, g):
        """(g with `dim` restored, expanded to self's shape,)."""
        if not self._saved_keepdim:
            g = g.reshape(_kept_shape(self._saved_self_sym_sizes, self._saved_dim))
        return (g.expand(self._saved_self_sym_sizes),)


class MeanBackward1(Node):
    """out = self.mean(dim, keepdim): g / count, spread back along `dim`."""

    def apply(self, g):
        """(g / count with `dim` restored, expanded to self's shape,)."""
        sizes = self._saved_self_sym_sizes
        count = self._saved_self_sym_numel // int(np.prod(_kept_shape(sizes, self._saved_dim)))
        if not self._saved_keepdim:
            g = g.reshape(_kept_shape(sizes, self._saved_dim))
        return ((g / count).expand(sizes),)


class _IndexBackward(Node):
    """out = self[index] for one dimension: g placed back into zeros of self's shape."""

    def apply(self, g):
        """(zeros of self's shape with g at the indexed place,)."""
        return (_IndexGrad.apply_to(g, self._saved_self_sym_sizes, self._where),)


class SelectBackward0(_IndexBackward):
    """out = self[i] along one dimension."""


class SliceBackward0(_IndexBackward):
    """out = self[start:end] along one dimension."""


class _IndexGrad(Node):
    """The backward of an index as an operation of its own, so create_graph can go through it."""

    @staticmethod
    def apply_to(g, sizes, where):
        data = np.zeros(sizes, g.dtype)
        data[where] = g._data
        out = _record(_IndexGrad, data, [g])
        if out.grad_fn is not None:
            out.grad_fn._where = where
        return out

    def apply(self, g):
        return (g[self._where],)


def _kept_shape(sizes, dims):
    dims = {d % len(sizes) for d in (dims if isinstance(dims, tuple) else (dims,))}
    return tuple(1 if i in dims else s for i, s in enumerate(sizes))


# --- The operations: numpy forward, then _record; Tensor's methods are bound at the end -----------


def _requires(value):
    return isinstance(value, Tensor) and value.requires_grad


def _shape(value):
    return value.shape if isinstance(value, Tensor) else ()


def _broadcast_check(a, b):
    """PyTorch's error for shapes that do not broadcast."""
    sa, sb = _shape(a), _shape(b)
    for i in range(1, min(len(sa), len(sb)) + 1):
        if sa[-i] != sb[-i] and 1 not in (sa[-i], sb[-i]):
            raise RuntimeError(
                f"The size of tensor a ({sa[-i]}) must match the size of tensor b ({sb[-i]}) at "
                f"non-singleton dimension {max(len(sa), len(sb)) - i}"
            )


def add(self, other):
    """self + other, broadcast."""
    _broadcast_check(self, other)
    data = np.asarray(_array(self) + _array(other))
    return _record(AddBackward0, data, [self, other], _shapes=(_shape(self), _shape(other)))


def sub(self, other):
    """self - other, broadcast."""
    _broadcast_check(self, other)
    data = np.asarray(_array(self) - _array(other))
    return _record(SubBackward0, data, [self, other], _shapes=(_shape(self), _shape(other)))


def rsub(self, number):
    """number - self."""
    return _record(RsubBackward1, number - self._data, [self])


def neg(self):
    """-self."""
    return _record(NegBackward0, -self._data, [self])


def mul(self, other):
    """self * other, broadcast; each input is saved only if the other one needs a gradient."""
    _broadcast_check(self, other)
    ### BEGIN SOLUTION 3.1: what mul saves
    data = np.asarray(_array(self) * _array(other))
    saved = [
        ("self", self if _requires(other) else None),
        ("other", other if _requires(self) else None),
    ]
    return _record(MulBackward0, data, [self, other], saved, _shapes=(_shape(self), _shape(other)))
    ### END SOLUTION


def div(self, other):
    """self / other, broadcast."""
    _broadcast_check(self, other)
    data = np.asarray(_array(self) / _array(other))
    saved = [("self", self if _requires(other) else None), ("other", other)]
    return _record(DivBackward0, data, [self, other], saved, _shapes=(_shape(self), _shape(other)))


def reciprocal(self):
    """1 / self."""
    return _record(ReciprocalBackward0, 1 / self._data, [self], saved_result=True)


def rdiv(self, number):
    """number / self, recorded as PyTorch does: reciprocal(self) * number."""
    return mul(reciprocal(self), number)


def pow(self, exponent):
    """self ** exponent, for a Python number exponent."""
    if isinstance(exponent, Tensor):
        raise TypeError("my_autograd's ** takes a Python number as the exponent")
    data = self._data**exponent
    return _record(PowBackward0, data, [self], [("self", self)], _saved_exponent=exponent)


def mm(self, mat2):
    """self @ mat2, for two matrices (n, k) @ (k, m)."""
    if self.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(
            f"my_autograd's @ multiplies two matrices; got shapes {self.shape} and {mat2.shape}"
        )
    if self.shape[1] != mat2.shape[0]:
        (n, k), (k2, m) = self.shape, mat2.shape
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")
    saved = [
        ("self", self if _requires(mat2) else None),
        ("mat2", mat2 if _requires(self) else None),
    ]
    return _record(MmBackward0, self._data @ mat2._data, [self, mat2], saved)


def exp(self):
    """e ** self, elementwise."""
    return _record(ExpBackward0, np.exp(self._data), [self], saved_result=True)


def log(self):
    """The natural logarithm, elementwise."""
    return _record(LogBackward0, np.log(self._data), [self], [("self", self)])


def tanh(self):
    """tanh(self), elementwise."""
    return _record(TanhBackward0, np.tanh(self._data), [self], saved_result=True)


def sigmoid(self):
    """1 / (1 + exp(-self)), elementwise."""
    data = (1 / (1 + np.exp(-self._data))).astype(self.dtype)
    return _record(SigmoidBackward0, data, [self], saved_result=True)


def relu(self):
    """max(self, 0), elementwise."""
    return _record(ReluBackward0, np.maximum(self._data, 0), [self], saved_result=True)


def sum(self, dim=None, keepdim=False):
    """The sum of all elements, or along `dim` (an int or a tuple of ints)."""
    if dim is None:
        return _record(SumBackward0, np.asarray(self._data.sum()), [self],
                       _saved_self_sym_sizes=self.shape)  # fmt: skip
    data = np.asarray(self._data.sum(axis=dim, keepdims=keepdim))
    return _record(SumBackward1, data, [self], _saved_self_sym_sizes=self.shape,
                   _saved_dim=dim, _saved_keepdim=keepdim)  # fmt: skip


def mean(self, dim=None, keepdim=False):
    """The mean of all elements, or along `dim`."""
    numel, sizes = self._data.size, self.shape
    if dim is None:
        data = np.asarray(self._data.mean())
        return _record(MeanBackward0, data, [self], _saved_self_sym_sizes=sizes,
                       _saved_self_sym_numel=numel)  # fmt: skip
    data = np.asarray(self._data.mean(axis=dim, keepdims=keepdim))
    return _record(MeanBackward1, data, [self], _saved_self_sym_sizes=sizes,
                   _saved_self_sym_numel=numel, _saved_dim=dim, _saved_keepdim=keepdim)  # fmt: skip


def expand(self, *sizes):
    """self broadcast to `sizes`, without copying in PyTorch (copied here)."""
    sizes = _shape_of(sizes)
    data = np.array(np.broadcast_to(self._data, sizes))
    return _record(ExpandBackward0, data, [self], _saved_self_sym_sizes=self.shape)


def reshape(self, *shape):
    """The same elements in a new shape."""
    data = self._data.reshape(_shape_of(shape)).copy()
    return _record(ViewBackward0, data, [self], _saved_self_sym_sizes=self.shape)


def t(self):
    """The transpose of a matrix."""
    return _record(TBackward0, self._data.T.copy(), [self])


def _permuted(self):
    return _record(PermuteBackward0, self._data.T.copy(), [self])


def getitem(self, key):
    """self[key] for integers and slices: one SelectBackward0 or SliceBackward0 per dimension."""
    if isinstance(key, slice):  # x[a:b] alone is always a slice, even x[:]
        return _index(self, SliceBackward0, 0, key)
    out, dim = self, 0
    for part in key if isinstance(key, tuple) else (key,):
        if isinstance(part, slice) and part == slice(None):
            dim += 1
        elif isinstance(part, slice):
            out, dim = _index(out, SliceBackward0, dim, part), dim + 1
        elif isinstance(part, (int, np.integer)):
            out = _index(out, SelectBackward0, dim, int(part))
        else:
            raise TypeError(f"my_autograd indexes with integers and slices, not {part!r}")
    if out is self:
        return _record(AliasBackward0, self._data.copy(), [self])
    return out


def _index(self, node_class, dim, part):
    if isinstance(part, int) and not -self.shape[dim] <= part < self.shape[dim]:
        raise IndexError(
            f"index {part} is out of bounds for dimension {dim} with size {self.shape[dim]}"
        )
    where = (slice(None),) * dim + (part,)
    out = _record(node_class, self._data[where].copy(), [self], _saved_self_sym_sizes=self.shape)
    if out.grad_fn is not None:
        out.grad_fn._where = where
    return out


def _in_place(self, new_data, node_class=None, other=None):
    """Write `new_data` into self's memory, bump its version, and record the operation."""
    if self.requires_grad and self.is_leaf and _GradMode.enabled:
        raise RuntimeError(LEAF_INPLACE_MESSAGE)
    recorded = node_class is not None and _wants_grad(self, other)
    edges = [_edge(self), _edge(other)] if recorded else None
    self._data[...] = new_data
    _bump_version(self)
    if recorded:
        self.grad_fn = node_class(edges)
        self.grad_fn._shapes = (self.shape, _shape(other))
        self.requires_grad = True
    return self


def add_(self, other):
    """self += other, in place."""
    return _in_place(self, self._data + _array(other), AddBackward0, other)


def sub_(self, other):
    """self -= other, in place."""
    return _in_place(self, self._data - _array(other), SubBackward0, other)


def mul_(self, number):
    """self *= number, in place (a number or a tensor that needs no gradient)."""
    if _requires(number) or (self.requires_grad and _GradMode.enabled):
        raise RuntimeError("my_autograd's mul_ works on tensors outside the graph only")
    return _in_place(self, self._data * _array(number))


for _name, _function in {
    "__add__": add, "__radd__": add, "__sub__": sub, "__rsub__": rsub, "__neg__": neg,
    "__mul__": mul, "__rmul__": mul, "__truediv__": div, "__rtruediv__": rdiv, "__pow__": pow,
    "__matmul__": mm, "__getitem__": getitem, "__iadd__": add_, "__isub__": sub_,
    "__imul__": mul_, "add": add, "sub": sub, "mul": mul, "div": div, "pow": pow, "mm": mm,
    "matmul": mm, "exp": exp, "log": log, "tanh": tanh, "sigmoid": sigmoid, "relu": relu,
    "reciprocal": reciprocal, "sum": sum, "mean": mean, "expand": expand, "reshape": reshape,
    "view": reshape, "t": t, "T": property(_permuted), "add_": add_, "sub_": sub_, "mul_": mul_,
}.items():  # fmt: skip
    setattr(Tensor, _name, _function)
matmul = mm


def count_dependencies(roots):
    """{node: how many edges point into it}, for every node reachable from the nodes `roots`."""
    ### BEGIN SOLUTION 2.3: dependency counting
    counts = {}
    stack = [node for node in roots if node is not None]
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


def run_backward(roots, grads, retain_graph, create_graph, inputs=None):
    """Run the graph backward from the tensors `roots`, starting from the gradients `grads`.

    Returns the gradients that reach the tensors `inputs` (for autograd.grad), or None.
    """
    root_edges = [_edge(t) for t in roots]
    capture = None if inputs is None else _Capture(root_edges, inputs)
    previous_mode, _GradMode.enabled = _GradMode.enabled, create_graph
    try:
        _run_loop(root_edges, grads, retain_graph, capture)
    finally:
        _GradMode.enabled = previous_mode
    return None if capture is None else capture.grads


def _run_loop(root_edges, grads, retain_graph, capture):
    """Run every node once all its gradients have arrived, the newest ready node first."""
    ### BEGIN SOLUTION 2.4: the run loop
    dependencies = count_dependencies(node for node, _ in root_edges)
    buffers, ready, tie = {}, [], itertools.count()
    for (node, nr), grad in zip(root_edges, grads):
        _add_to_buffer(buffers, node, nr, grad)
    for node in buffers:
        if dependencies.get(node, 0) == 0:
            heapq.heappush(ready, (-node._sequence_nr, next(tie), node))
    while ready:
        node = heapq.heappop(ready)[2]
        grads_in = _run_pre_hooks(node, buffers.pop(node))
        if capture is not None and capture.takes(node, grads_in):
            continue
        grads_out = node.apply(*grads_in)
        for hook in node._hooks:
            grads_out = hook(grads_out, grads_in) or grads_out
        if not retain_graph:
            release_saved(node)
        for (next_node, nr), grad in zip(node.next_functions, grads_out):
            if next_node is None:
                continue
            _add_to_buffer(buffers, next_node, nr, grad)
            dependencies[next_node] -= 1
            if dependencies[next_node] == 0:
                heapq.heappush(ready, (-next_node._sequence_nr, next(tie), next_node))
    ### END SOLUTION


def _add_to_buffer(buffers, node, nr, grad):
    """Add `grad` into input `nr` of `node`'s buffer (one slot per output of the node)."""
    buffer = buffers.setdefault(node, [None] * max(nr + 1, 1))
    buffer.extend([None] * (nr + 1 - len(buffer)))
    buffer[nr] = grad if buffer[nr] is None else buffer[nr] + grad


def _run_pre_hooks(node, grads):
    """The gradients after the output tensor's hooks and the node's pre-hooks have run."""
    grads = list(grads)
    for hook in node._tensor_pre_hooks:
        result = hook(grads[0])
        grads[0] = grads[0] if result is None else result
    for hook in node._pre_hooks:
        grads = list(hook(tuple(grads)) or grads)
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False):
    """Accumulate the gradients of `tensors` into the .grad of the leaves of their graph."""
    tensors = (tensors,) if isinstance(tensors, Tensor) else tuple(tensors)
    ### BEGIN SOLUTION 4.6: retain_graph's default
    if retain_graph is None:
        retain_graph = create_graph
    ### END SOLUTION
    run_backward(tensors, _initial_grads(tensors, grad_tensors), retain_graph, create_graph)


def _initial_grads(outputs, grad_outputs):
    """The gradient each output starts from: the one given, or 1 for a one-element output."""
    if grad_outputs is None or isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs] * len(outputs) if len(outputs) == 1 else [None] * len(outputs)
    grads = []
    for i, (out, grad) in enumerate(zip(outputs, grad_outputs)):
        if not out.requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        if grad is None:
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            grad = Tensor(np.ones_like(out._data))
        grads.append(grad)
    return grads


# === Chapter 03: saved tensors and the version check ============================================


class SavedTensor:
    """What a node keeps for its backward: the tensor (or what a pack hook made of it)."""

    def __init__(self, tensor, node, is_output=False):
        self.is_output = is_output  # the node's own result: its version error names the node
        self.freed = False
        ### BEGIN SOLUTION 3.5: saving, through the pack hooks
        self.version = tensor._version
        self.version_box = tensor._version_box
        if _hook_stack:
            pack, self.unpack_hook = _hook_stack[-1]
            with no_grad():
                self.value = pack(tensor)
        else:
            self.value, self.unpack_hook = tensor, None
        ### END SOLUTION

    def unpack(self, node):
        """The saved tensor, after checking that it was not freed or modified in place."""
        self.check_not_freed()
        value = self.value if self.unpack_hook is None else self.unpack_hook(self.value)
        if self.unpack_hook is None:
            self.check_version(node)
        return value

    def check_version(self, node):
        """Raise PyTorch's error when the tensor was modified in place after it was saved."""
        ### BEGIN SOLUTION 3.3: the version check
        if self.version_box[0] == self.version:
            return
        tensor = self.value
        producer = node if self.is_output else tensor.grad_fn
        described = f"[torch.{_TYPE_NAMES.get(tensor.dtype.name, 'Tensor')} {list(tensor.shape)}]"
        if producer is not None:
            described += f", which is output 0 of {producer.name().split('Backward')[0]},"
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: {described} is at version {self.version_box[0]}; expected "
            f"version {self.version} instead. Hint: enable anomaly detection to find the "
            "operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True, check_nan=False)."
        )
        ### END SOLUTION

    def check_not_freed(self):
        """Raise PyTorch's error when backward has already freed this saved tensor."""
        ### BEGIN SOLUTION 4.5: the error after freeing
        if self.freed:
            raise RuntimeError(FREED_MESSAGE)
        ### END SOLUTION


_hook_stack = []  # the active (pack, unpack) pairs, innermost last


class saved_tensors_hooks:
    """Inside, every tensor a node saves is stored as pack(tensor) and read back as unpack(...)."""

    def __init__(self, pack_hook, unpack_hook):
        self.hooks = (pack_hook, unpack_hook)

    def __enter__(self):
        _hook_stack.append(self.hooks)

    def __exit__(self, *exc_info):
        _hook_stack.pop()


def _bump_version(t):
    t._version_box[0] += 1


# === Chapter 04: freeing the graph ==============================================================


def release_saved(node):
    """Free what `node` saved: its backward has run and retain_graph is off."""
    ### BEGIN SOLUTION 4.1: the freeing step
    for saved in node._saved.values():
        saved.value = None
        saved.freed = True
    ### END SOLUTION


# === Chapter 05: create_graph and autograd.grad =================================================


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):  # fmt: skip
    """d(outputs)/d(inputs), returned as a tuple, without touching any .grad."""
    outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    ### BEGIN SOLUTION 5.5: autograd.grad
    if retain_graph is None:
        retain_graph = create_graph
    grads = _initial_grads(outputs, grad_outputs)
    captured = run_backward(outputs, grads, retain_graph, create_graph, inputs)
    for i, g in enumerate(captured):
        if g is None and not allow_unused:
            raise RuntimeError(
                f"The differentiated Tensor at index {i} appears to not have been used in the "
                "graph. Set allow_unused=True if this is the desired behavior."
            )
    return tuple(captured)
    ### END SOLUTION


class _Capture:
    """What autograd.grad needs from the run loop: the gradients reaching `inputs`, and no more."""

    def __init__(self, root_edges, inputs):
        self.slots = {_edge(t): i for i, t in enumerate(inputs)}
        self.grads = [None] * len(inputs)
        self.wanted = _nodes_leading_to(root_edges, self.slots)

    def takes(self, node, grads):
        """Keep the gradients meant for an input; True when `node` must not run."""
        ### BEGIN SOLUTION 5.6: capturing the gradients of the inputs
        for nr, grad in enumerate(grads):
            slot = self.slots.get((node, nr))
            if slot is not None:
                self.grads[slot] = grad
        return isinstance(node, AccumulateGrad) or node not in self.wanted
        ### END SOLUTION


def _nodes_leading_to(root_edges, targets):
    """The nodes with a path to a target edge's node: the only ones autograd.grad runs.

    A target's own node is among them only when it leads to another target.
    """
    target_nodes = {node for node, _ in targets}
    leads, seen = set(), set()
    for root, _ in root_edges:
        if root is None or root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(root.next_functions))]
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


class autograd:
    """The `torch.autograd` names: `autograd.grad`, `autograd.backward`, `autograd.graph`."""

    grad = staticmethod(grad)
    backward = staticmethod(backward)

    class graph:
        saved_tensors_hooks = saved_tensors_hooks


# === Chapter 06: a recurrent cell ===============================================================


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One step of an Elman RNN: h' = tanh(input @ w_ihᵀ + b_ih + hx @ w_hhᵀ + b_hh)."""
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
    """mean over the rows of -log softmax(input)[target]: logsumexp(row) - row[target]."""
    ### BEGIN SOLUTION 7.5: cross-entropy from elementary operations
    shift = Tensor(input._data.max(axis=1, keepdims=True))  # a constant: it cancels out
    shifted = input - shift
    log_probs = shifted - shifted.exp().sum(dim=1, keepdim=True).log()
    one_hot = np.eye(input.shape[1], dtype=input.dtype)[_array(target)]
    return -(log_probs * Tensor(one_hot)).sum() / len(one_hot)
    ### END SOLUTION


class nn:
    """The `torch.nn.functional` names this engine has."""

    class functional:
        cross_entropy = staticmethod(cross_entropy)
