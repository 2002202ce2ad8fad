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

from ..node import Node
from ..saved import SavedTensor
from ..tensor_data import TensorData
from .broadcasting import sum_to

ARRAYS, TENSORS = {}, {}  # the helpers formulas may call: {name: its numpy form / Tensor form}
BUILTINS = {"float"}  # the builtins formulas call (min and max are saved names: clamp's bounds)


class FormulaNode(Node):
    """A node whose backward is its table entry: `formulas` holds, for each of its `inputs`, (the
    text, the function on arrays, the function on tensors), each taking `grad` and the values
    it saved that the formulas name, `uses`."""

    __slots__ = ()
    formulas = inputs = uses = ()

    def apply(self, grad):
        """Each input's formula, run on what `grad` is (arrays or tensors); None where no
        gradient is wanted; summed back to its input's shape when the operation broadcast."""
        on_arrays = not isinstance(grad, TensorData)
        values = [grad]
        for name in self.uses:
            value = self._saved[name] if name != "args" else self.args  # (args: not saved)
            if type(value) is SavedTensor:
                value = saved_array(value, self, grad) if on_arrays else value.unpack(self)
            values.append(value)
        grads = [
            None if edge[0] is None else formula[1 if on_arrays else 2](*values)
            for edge, formula in zip(self.next_functions, self.formulas)
        ]
        if self.input_shapes is None:
            return grads
        return [g if g is None else sum_to(g, s) for g, s in zip(grads, self.input_shapes)]

    apply.takes_arrays = True  # the engine hands it arrays unless create_graph (engine.py)


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
