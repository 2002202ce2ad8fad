"""Backward formulas as data: the node class an entry of the table (derivatives.py) becomes.

An entry names PyTorch's node and gives the gradient of each input once, as an expression over
`grad` (the gradient that reached the node), what the node saved (`self`, `other`, `result`...)
and a few named helpers, as PyTorch's derivatives.yaml writes `self: grad * result` for exp.

One formula, two backends. Each expression is compiled twice, with the helpers' numpy forms
(ARRAYS) and with their Tensor forms (TENSORS). Without create_graph the engine hands a node
numpy arrays, and the formula runs on them: no Tensor is made, nothing is recorded. With
create_graph=True, or when code calls a node on tensors (`node(grad)`), it runs on Tensors, and
what it does is recorded with PyTorch's names, so it can be differentiated again.
"""

import ast

from ..core.node import Node
from ..core.saved import SavedTensor
from ..core.tensor_data import TensorData
from .broadcasting import sum_to

# the helpers formulas may call: {name: its numpy form / Tensor form}; a warning numpy gives
# inside a formula names this module (see the filter in mini_autograd/__init__.py)
ARRAYS, TENSORS = {"__name__": __name__}, {"__name__": __name__}
BUILTINS = {"float"}  # the builtins formulas call (min and max are saved names: clamp's bounds)


class FormulaNode(Node):
    """A node whose backward is its table entry: `formulas` holds, for each of its `inputs`, (the
    text, the function on arrays, the function on tensors), each taking `grad` and the values
    it saved that the formulas name, `uses`. Its `apply` is written from the entry (`source`)."""

    __slots__ = ()
    formulas = inputs = uses = ()
    source = ""


# A node's apply, written from its entry: the saved values its formulas read, unpacked as arrays
# or as tensors (whichever grad is), then each input's formula where its gradient is wanted,
# summed back to the input's shape where the operation broadcast.
APPLY = """def apply(self, grad):
    \"\"\"The formulas of the node's entry (its class's docstring), on arrays or on tensors.\"\"\"
    on_arrays = not isinstance(grad, TensorData)
    saved = self._saved
{unpack}    formulas, edges, k = self.formulas, self.next_functions, 1 if on_arrays else 2
    grads = ({grads})
    return grads if self.input_shapes is None else summed(grads, self.input_shapes)
"""
UNPACK = """    {name}_ = saved["{name}"]
    if type({name}_) is SavedTensor:
        {name}_ = saved_array({name}_, self, grad) if on_arrays else {name}_.unpack(self)
"""


def _apply(inputs, uses):
    """(the source, the function) of apply for a node with `inputs` whose formulas read `uses`."""
    unpack = "".join(
        "    args_ = self.args\n" if name == "args" else UNPACK.format(name=name) for name in uses
    )
    values = ", ".join(["grad", *(f"{name}_" for name in uses)])
    grads = "".join(
        f"formulas[{i}][k]({values}) if edges[{i}][0] is not None else None, "
        for i in range(len(inputs))
    )
    source = APPLY.format(unpack=unpack, grads=grads)
    namespace = {"TensorData": TensorData, "SavedTensor": SavedTensor}
    exec(source, {**namespace, "saved_array": saved_array, "summed": summed}, namespace)
    namespace["apply"].takes_arrays = True  # the engine hands it arrays unless create_graph
    return source, namespace["apply"]


def summed(grads, shapes):
    """Each gradient summed back to the shape of its input (None stays None)."""
    return tuple([g if g is None else sum_to(g, s) for g, s in zip(grads, shapes)])


def saved_array(saved, node, grad):
    """The array of a saved tensor, checked as SavedTensor.unpack checks it, with no Tensor made.

    numpy's promotion is brought in line with PyTorch's: a saved Python number (a wrapped one)
    comes back as the number, and a saved integer, or a 0-d float meeting a gradient with
    dimensions, in the gradient's dtype (numpy would widen the result; PyTorch keeps grad's).
    """
    value = saved._value
    if saved._unpack is not None or saved.freed_by is not None:
        array = saved.unpack(node)._data  # the unpack hook, or PyTorch's error, as unpack gives it
    elif saved._output_type is not None:
        if saved._version_counter[0] != saved._version:
            saved.unpack(node)  # raises the version error
        array = value
    elif value._is_wrapped_number:
        return value._data.item()
    else:
        if value._version != saved._version or (saved._graph[0] and value._grad_fn is None):
            saved.unpack(node)  # raises
        array = value._data
    kind = array.dtype.kind
    if array.dtype != grad.dtype and (
        kind in "iu" or (kind == "f" and array.ndim == 0 < grad.ndim)
    ):
        return array.astype(grad.dtype)
    return array


def formula_node(name, doc, formulas, module):
    """The node class `name`, of `module`, for {input: formula text}; its docstring is `doc`
    and the formulas."""
    known = ARRAYS.keys() | TENSORS.keys() | BUILTINS | {"grad"}
    uses = tuple(sorted({n for text in formulas.values() for n in _names(text)} - known))
    lines = "\n".join(f"    {input}: {text}" for input, text in formulas.items())
    attributes = {"__slots__": (), "__doc__": f"{doc}\n\n{lines}", "__module__": module}
    attributes.update(formulas=compiled(formulas, uses), inputs=tuple(formulas), uses=uses)
    attributes["source"], attributes["apply"] = _apply(formulas, uses)
    return type(name, (FormulaNode,), attributes)


def compiled(formulas, uses):
    """{input: formula text} as a node's `formulas`: for each input, (the text, the function on
    arrays, the function on tensors), each taking `grad` and the saved values named in `uses`."""
    signature = ", ".join(["grad", *uses])
    return tuple(
        (text, *(eval(f"lambda {signature}: {text}", names) for names in (ARRAYS, TENSORS)))
        for text in formulas.values()
    )


def _names(text):
    """The names an expression reads, but those it names itself (`(s := sigmoid(self))`)."""
    nodes = list(ast.walk(ast.parse(text, mode="eval")))
    named = {n.target.id for n in nodes if isinstance(n, ast.NamedExpr)}
    return {n.id for n in nodes if isinstance(n, ast.Name)} - named
