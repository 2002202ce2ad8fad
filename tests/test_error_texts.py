"""One parity test per PyTorch text of mini_autograd/core/errors.py: the same mistake, made with torch
and with mini_autograd, gives the same exception type (or warning category) and the same text,
and that text is the one errors.py holds.

CASES maps the name of each text in errors.py to a program `fn(lib)` that makes the mistake.
"""

import re
import types
import warnings

import pytest
import torch
from parity_helpers import error_of, f64

import mini_autograd as ma
from mini_autograd.core import errors


def identity(x):
    """A pack or unpack hook that keeps the tensor as it is."""
    return x


def will_engine_execute_node(lib, node):
    """torch._C._will_engine_execute_node, or mini_autograd's own (it has no torch._C)."""
    if lib is torch:
        return torch._C._will_engine_execute_node(node)
    return ma.core.engine_state.will_engine_execute_node(node)


# --- the mistakes, one per text -------------------------------------------------------------
def _second_backward(lib):
    x = f64(lib, [1.0, 2.0], True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def _saved_output_modified_in_place(lib):
    x = f64(lib, [1.0, 2.0, 3.0], True)
    y = x.exp()
    y.add_(1)
    y.sum().backward()


def _saved_tensor_hooks_set_twice(lib):
    y = f64(lib, [1.0, 2.0], True).exp()
    y.grad_fn._raw_saved_result.register_hooks(identity, identity)
    y.grad_fn._raw_saved_result.register_hooks(identity, identity)


def _saved_tensor_hooks_after_free(lib):
    y = f64(lib, [1.0, 2.0], True).exp()
    saved = y.grad_fn._raw_saved_result
    y.sum().backward()
    saved.register_hooks(identity, identity)


def _integer_tensor_created_with_requires_grad(lib):
    lib.tensor([1, 2], requires_grad=True)


def _integer_tensor_requires_grad_(lib):
    lib.tensor([1, 2]).requires_grad_()


def _non_leaf_requires_grad_false(lib):
    (f64(lib, [1.0, 2.0], True) * 2).requires_grad_(False)


def _non_leaf_grad_read(lib):
    return (f64(lib, [1.0, 2.0], True) * 2).grad


def _grad_set_to_a_float(lib):
    f64(lib, [1.0, 2.0], True).grad = 1.0


def _grad_set_with_the_wrong_size(lib):
    f64(lib, [1.0, 2.0], True).grad = f64(lib, [1.0, 2.0, 3.0])


def _view_detached_in_place(lib):
    f64(lib, [1.0, 2.0, 3.0])[:2].detach_()


def _retain_grad_without_grad(lib):
    f64(lib, [1.0, 2.0]).retain_grad()


def _hook_on_tensor_without_grad(lib):
    f64(lib, [1.0, 2.0]).register_hook(identity)


def _node_prehook_returns_two_gradients(lib):
    def two_gradients(grad_outputs):
        return (grad_outputs[0], grad_outputs[0])

    y = f64(lib, [1.0, 2.0], True) * 2
    y.grad_fn.register_prehook(two_gradients)
    y.sum().backward()


def _numpy_of_tensor_requiring_grad(lib):
    f64(lib, [1.0, 2.0], True).numpy()


def _item_of_three_elements(lib):
    f64(lib, [1.0, 2.0, 3.0]).item()


def _bool_of_three_elements(lib):
    bool(f64(lib, [1.0, 2.0, 3.0]))


def _len_of_0d(lib):
    len(f64(lib, 1.0))


def _iterate_0d(lib):
    iter(f64(lib, 1.0))


def _size_of_dim_out_of_range(lib):
    lib.ones(2, 3).size(5)


def _grad_of_a_float(lib):
    lib.autograd.grad([1.0], [f64(lib, [1.0], True)])


def _backward_with_a_float_gradient(lib):
    lib.autograd.backward([(f64(lib, [1.0, 2.0], True) * 2).sum()], [1.0])


def _backward_with_gradient_of_wrong_shape(lib):
    (f64(lib, [1.0, 2.0, 3.0], True) * 2).backward(f64(lib, [1.0, 1.0]))


def _backward_of_non_scalar(lib):
    (f64(lib, [1.0, 2.0], True) * 2).backward()


def _two_outputs_one_gradient(lib):
    x = f64(lib, [1.0, 2.0], True)
    lib.autograd.backward([(x * 2).sum(), (x * 3).sum()], [f64(lib, 1.0)])


def _backward_of_tensor_without_grad(lib):
    f64(lib, [1.0, 2.0]).sum().backward()


def _grad_inputs_as_a_mapping_proxy(lib):
    x = f64(lib, [1.0, 2.0], True)
    lib.autograd.grad((x * 2).sum(), types.MappingProxyType({"x": x}))


def _grad_inputs_empty(lib):
    lib.autograd.grad((f64(lib, [1.0, 2.0], True) * 2).sum(), [])


def _grad_input_a_float(lib):
    lib.autograd.grad((f64(lib, [1.0, 2.0], True) * 2).sum(), [1.0])


def _grad_input_without_grad(lib):
    lib.autograd.grad((f64(lib, [1.0, 2.0], True) * 2).sum(), [f64(lib, [1.0, 2.0])])


def _grad_input_unused(lib):
    x, z = f64(lib, [1.0, 2.0], True), f64(lib, [1.0, 2.0], True)
    lib.autograd.grad((x * 2).sum(), [x, z])


def _materialize_grads_without_allow_unused(lib):
    x = f64(lib, [1.0, 2.0], True)
    lib.autograd.grad((x * 2).sum(), [x], allow_unused=False, materialize_grads=True)


def _materialize_grads_of_unused_gradient_edge(lib):
    x, z = f64(lib, [1.0, 2.0], True), f64(lib, [1.0, 2.0], True)
    edge = lib.autograd.graph.get_gradient_edge(z)
    lib.autograd.grad((x * 2).sum(), [x, edge], materialize_grads=True)


def _backward_with_create_graph(lib):
    (f64(lib, [1.0, 2.0], True) ** 3).sum().backward(create_graph=True)


def _float_of_a_tensor_that_requires_grad(lib):
    float(f64(lib, [1.0], True) * 2)


def _grad_with_only_inputs_false(lib):
    x = f64(lib, [1.0, 2.0], True)
    lib.autograd.grad((x * 2).sum(), [x], only_inputs=False)


def _will_engine_execute_node_outside_backward(lib):
    will_engine_execute_node(lib, (f64(lib, [1.0, 2.0], True) * 2).grad_fn)


def _multi_grad_hook_on_leaves_in_autograd_grad(lib):
    a, b = f64(lib, [1.0, 2.0], True), f64(lib, [3.0, 4.0], True)
    lib.autograd.graph.register_multi_grad_hook([a, b], lambda grads: None)
    lib.autograd.grad((a * b).sum(), [a, b])


def _integer_tensor_requires_grad_set(lib):
    lib.tensor([1, 2]).requires_grad = True


def _non_leaf_requires_grad_set(lib):
    (f64(lib, [1.0, 2.0], True) * 2).requires_grad = True


def _grad_set_to_itself(lib):
    x = f64(lib, [1.0, 2.0], True)
    x.grad = x


def _integer_data_on_a_tensor_that_requires_grad(lib):
    f64(lib, [1.0, 2.0], True).data = lib.tensor([1, 2])


def _pack_hook_changes_its_input(lib):
    def pack(t):
        return t.add_(1)

    a = f64(lib, [1.0, 2.0], True) * 1
    with lib.autograd.graph.saved_tensors_hooks(pack, identity):
        a * a


def _unpack_hook_returns_a_number(lib):
    x = f64(lib, [1.0, 2.0], True)
    with lib.autograd.graph.saved_tensors_hooks(identity, lambda t: 1):
        y = x.pow(2)
    y.sum().backward()


def _saved_tensor_detached_in_place(lib):
    a = f64(lib, [1.0, 2.0], True) * 2
    y = a * a
    a.detach_()
    y.sum().backward()


def _post_accumulate_hook_on_a_non_leaf(lib):
    (f64(lib, [1.0, 2.0], True) * 2).register_post_accumulate_grad_hook(identity)


def _post_accumulate_hook_returns_a_value(lib):
    x = f64(lib, [1.0, 2.0], True)
    x.register_post_accumulate_grad_hook(lambda t: t.grad)
    (x * 2).sum().backward()


def _inference_tensor_saved_for_backward(lib):
    with lib.inference_mode():
        c = f64(lib, [1.0, 2.0])
    f64(lib, [1.0, 2.0], True) * c


def _node_called_with_two_gradients(lib):
    x = f64(lib, [1.0], True)
    (x * 2).grad_fn(x.detach(), x.detach())


CASES = {
    "FREED": _second_backward,
    "MODIFIED_INPLACE": _saved_output_modified_in_place,  # errors.version_error
    "SAVED_HOOKS_TWICE": _saved_tensor_hooks_set_twice,
    "SAVED_HOOKS_AFTER_FREE": _saved_tensor_hooks_after_free,
    "ONLY_FLOAT_CAN_REQUIRE_GRAD": _integer_tensor_created_with_requires_grad,
    "ONLY_FLOAT_REQUIRES_GRAD_": _integer_tensor_requires_grad_,
    "NON_LEAF_REQUIRES_GRAD_": _non_leaf_requires_grad_false,
    "NON_LEAF_GRAD_ACCESSED": _non_leaf_grad_read,
    "GRAD_NOT_A_TENSOR": _grad_set_to_a_float,
    "GRAD_WRONG_SIZE": _grad_set_with_the_wrong_size,
    "ONLY_FLOAT_REQUIRES_GRAD_SET": _integer_tensor_requires_grad_set,
    "NON_LEAF_FLAG": _non_leaf_requires_grad_set,
    "GRAD_IS_ITSELF": _grad_set_to_itself,
    "DATA_NOT_FLOAT": _integer_data_on_a_tensor_that_requires_grad,
    "PACK_HOOK_MODIFIED_INPUT": _pack_hook_changes_its_input,
    "UNPACK_HOOK_NOT_A_TENSOR": _unpack_hook_returns_a_number,
    "SAVED_DETACHED_IN_PLACE": _saved_tensor_detached_in_place,
    "INFERENCE_SAVED": _inference_tensor_saved_for_backward,
    "POST_ACCUMULATE_ON_NON_LEAF": _post_accumulate_hook_on_a_non_leaf,
    "POST_ACCUMULATE_HOOK_RETURNED": _post_accumulate_hook_returns_a_value,
    "DETACH_VIEW_INPLACE": _view_detached_in_place,
    "RETAIN_GRAD_WITHOUT_GRAD": _retain_grad_without_grad,
    "HOOK_WITHOUT_GRAD": _hook_on_tensor_without_grad,
    "HOOK_RESULT_COUNT": _node_prehook_returns_two_gradients,
    "NUMPY_OF_REQUIRES_GRAD": _numpy_of_tensor_requiring_grad,
    "ITEM_OF_MANY": _item_of_three_elements,
    "BOOL_OF_MANY": _bool_of_three_elements,
    "LEN_OF_0D": _len_of_0d,
    "ITERATE_0D": _iterate_0d,
    "DIM_OUT_OF_RANGE": _size_of_dim_out_of_range,
    "OUTPUT_NOT_A_TENSOR": _grad_of_a_float,
    "GRADIENT_NOT_A_TENSOR": _backward_with_a_float_gradient,
    "GRADIENT_SHAPE": _backward_with_gradient_of_wrong_shape,
    "IMPLICIT_GRAD_OF_NON_SCALAR": _backward_of_non_scalar,
    "TENSORS_AND_GRADIENTS": _two_outputs_one_gradient,
    "OUTPUT_WITHOUT_GRAD": _backward_of_tensor_without_grad,
    "INPUTS_NOT_A_DICT": _grad_inputs_as_a_mapping_proxy,
    "INPUTS_EMPTY": _grad_inputs_empty,
    "INPUT_NOT_A_TENSOR": _grad_input_a_float,
    "INPUT_WITHOUT_GRAD": _grad_input_without_grad,
    "INPUT_UNUSED": _grad_input_unused,
    "MATERIALIZE_WITHOUT_ALLOW_UNUSED": _materialize_grads_without_allow_unused,
    "MATERIALIZE_GRADIENT_EDGE": _materialize_grads_of_unused_gradient_edge,
    "CREATE_GRAPH_WITH_BACKWARD": _backward_with_create_graph,
    "SCALAR_OF_REQUIRES_GRAD": _float_of_a_tensor_that_requires_grad,
    "ONLY_INPUTS_DEPRECATED": _grad_with_only_inputs_false,
    "NOT_IN_BACKWARD": _will_engine_execute_node_outside_backward,
    "LEAF_IN_AUTOGRAD_GRAD": _multi_grad_hook_on_leaves_in_autograd_grad,
    "NODE_CALL_ARGUMENTS": _node_called_with_two_gradients,
}


# --- what a mistake gives, and where its text comes from ------------------------------------
def without_cpp_location(message):
    """A warning's text without the ' (Triggered internally at file.cpp:N.)' torch's C++ adds."""
    return message.split(" (Triggered internally at ")[0]


def mistake_of(lib, program):
    """(type name, message) of the error program(lib) raises, else of the one warning it gives."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        error = error_of(program, lib)
    if error is not None:
        return error
    given = [(w.category.__name__, without_cpp_location(str(w.message))) for w in caught]
    return given[0] if len(given) == 1 else given  # none, or several: a list fails the test


# torch gives these warnings once per process (TORCH_WARN_ONCE in its C++ code), whatever the
# warnings filter says: catch them here, on import, before any test makes the mistake.
TORCH_ONCE_PER_PROCESS = {
    "CREATE_GRAPH_WITH_BACKWARD": mistake_of(torch, _backward_with_create_graph),
    "SCALAR_OF_REQUIRES_GRAD": mistake_of(torch, _float_of_a_tensor_that_requires_grad),
}


def template_pattern(text):
    """A regex for the texts str.format makes of `text`: each `{field}` matches anything."""
    return ".+".join(re.escape(part) for part in re.split(r"\{[^{}]*\}", text))


def public_texts():
    """The names of errors.py's texts: its UPPER_CASE strings (not TENSOR_TYPE_NAMES, a dict)."""
    return {name for name, value in vars(errors).items() if name.isupper() and type(value) is str}


# --- the tests -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", CASES)
def test_the_mistake_gives_torch_s_text_from_errors_py(name, monkeypatch):
    """The same type and text as torch, and the text is errors.py's (its template filled in)."""
    monkeypatch.setattr(ma.core.errors, "_warned", set())  # as in a fresh process
    if name in TORCH_ONCE_PER_PROCESS:
        expected = TORCH_ONCE_PER_PROCESS[name]
    else:
        expected = mistake_of(torch, CASES[name])
    got = mistake_of(ma, CASES[name])
    assert got == expected
    assert isinstance(got, tuple), f"neither an error nor one warning: {got!r}"
    assert re.fullmatch(template_pattern(getattr(errors, name)), got[1], re.DOTALL)


def test_every_text_of_errors_py_has_its_case():
    """A new text in errors.py needs its case here (and a case needs its text)."""
    assert set(CASES) == public_texts()


@pytest.mark.parametrize("grad_dtype", ["float64", "float16", "int64", "int32", "bool", "uint8"])
def test_a_grad_of_another_dtype_gives_torch_s_text(grad_dtype):
    """errors.grad_wrong_dtype names both types the way PyTorch's .grad setter does."""

    def mistake(lib):
        x = lib.ones(2, requires_grad=True)
        x.grad = lib.ones(2, dtype=getattr(lib, grad_dtype))

    assert mistake_of(ma, mistake) == mistake_of(torch, mistake)
