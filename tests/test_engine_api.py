"""The engine's public surface, compared with torch 2.13: the arguments of autograd.grad and
backward (their checks and exact errors), nodes that no gradient reaches, what autograd.grad
captures and runs, the Node API (metadata, _sequence_nr, repr), autograd.graph (GradientEdge,
get_gradient_edge, increment_version, register_multi_grad_hook), the legacy Variable and the
profiler.

Most tests run one program `fn(lib)` with `lib = torch` and `lib = mini_autograd` and compare
the results, or the errors (type and exact text, taken from torch in the same test).
"""

import re
import sys
import warnings

import numpy as np
import pytest
import torch
from parity_helpers import (
    error_of,
    f64,
    same_results,
)

import mini_autograd as ma
from mini_autograd.core import engine_state


def shown(obj):
    """repr(obj) with torch's and mini_autograd's spellings made equal: addresses (`at 0x7f..`)
    and mini_autograd's node numbers (`#3`) as `at 0x?`, `mini_autograd.` as `torch.`."""
    text = re.sub(r" at 0x[0-9a-fA-F]+| #\d+", " at 0x?", repr(obj))
    return text.replace("mini_autograd.", "torch.")


def dtype_of(t):
    return str(t.dtype).replace("mini_autograd.", "torch.")


# --- the arguments of autograd.grad and backward -------------------------------------------
def _graph(lib):
    """x (requires grad), z (requires grad, unused), c (a constant) and y = (x * 2).sum()."""
    x, z, c = f64(lib, [1.0, 2.0], True), f64(lib, [3.0, 4.0], True), f64(lib, [5.0, 6.0])
    return x, z, c, (x * 2).sum()


def _grad(*args, **kwargs):
    """A program calling autograd.grad with these arguments, where strings name tensors: those
    of _graph, y2 = y * 2, csum = c.sum(), and the constants one, two and pair ([1, 2])."""

    def program(lib):
        x, z, c, y = _graph(lib)
        names = {"x": x, "z": z, "c": c, "y": y, "y2": y * 2, "csum": c.sum()}
        names.update(one=f64(lib, 1.0), two=f64(lib, 2.0), pair=f64(lib, [1.0, 2.0]))

        def resolve(a):
            if isinstance(a, str) and a in names:
                return names[a]
            if isinstance(a, list):
                return [resolve(v) for v in a]
            if isinstance(a, tuple):
                return tuple(resolve(v) for v in a)
            if isinstance(a, dict):
                return {k: resolve(v) for k, v in a.items()}
            return a

        return lib.autograd.grad(*resolve(args), **{k: resolve(v) for k, v in kwargs.items()})

    return program


GRAD_CALLS = {
    "empty_list": _grad("y", []),
    "empty_tuple": _grad("y", ()),
    "empty_dict": _grad("y", {}),
    "materialize_without_allow_unused": _grad(
        "y", ["z"], materialize_grads=True, allow_unused=False
    ),
    "an_int_input": _grad("y", ["x", 3]),
    "a_none_input": _grad("y", ["x", None]),
    "no_grad_input_before_an_int": _grad("y", ["c", 3]),
    "an_int_before_a_no_grad_input": _grad("y", [3, "c"]),
    "inputs_an_int": _grad("y", 3),
    "outputs_an_int": _grad([3], ["x"]),
    "outputs_without_grad_and_an_int_input": _grad(["csum"], [3]),
    "grad_outputs_numbers": _grad("y", ["x"], grad_outputs=[1.0]),
    "grad_outputs_a_number": _grad("y", ["x"], grad_outputs=1.0),
    "grad_outputs_a_list_of_lists": _grad("y", ["x"], grad_outputs=[[1.0]]),
    "grad_outputs_a_numpy_number": _grad("y", ["x"], grad_outputs=[np.float64(1.0)]),
    "too_many_grad_outputs": _grad("y", ["x"], grad_outputs=["one", "two"]),
    "too_few_grad_outputs": _grad(["y", "y2"], ["x"], grad_outputs=[None]),
    "too_few_grad_outputs_of_a_wrong_type": _grad(["y", "y2"], ["x"], grad_outputs=[1.0]),
    "grad_output_of_another_shape": _grad("y", ["x"], grad_outputs=("pair",)),
    "a_dict_of_inputs": _grad("y", {"a": "x", "b": "x"}),
    "unused_input": _grad("y", ["x", "z"]),
    "unused_input_allowed": _grad("y", ["x", "z"], allow_unused=True),
    "outputs_empty": _grad([], ["x"]),
    "same_input_twice": _grad("y", ["x", "x"]),
    "same_input_around_an_unused_one": _grad("y", ["x", "z", "x"], allow_unused=True),
    "only_inputs_true": _grad("y", ["x"], only_inputs=True),
    "is_grads_batched_false": _grad("y", ["x"], is_grads_batched=False),
}


@pytest.mark.parametrize("name", list(GRAD_CALLS))
def test_grad_arguments_like_torch(name):
    same_results(GRAD_CALLS[name])


def test_grad_error_texts_are_torchs():
    """A few of the texts, written out, so that the test cannot pass with both sides wrong."""
    assert error_of(GRAD_CALLS["empty_list"], ma) == (
        "RuntimeError",
        "`inputs` argument to `grad()` cannot be empty.",
    )
    assert error_of(GRAD_CALLS["an_int_input"], ma) == (
        "RuntimeError",
        "all inputs have to be Tensors or GradientEdges, but got int",
    )
    assert error_of(GRAD_CALLS["grad_outputs_a_list_of_lists"], ma) == (
        "TypeError",
        "gradients can be either Tensors or None, but got list",
    )
    assert error_of(GRAD_CALLS["materialize_without_allow_unused"], ma) == (
        "ValueError",
        "Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
        "allow_unused=False.",
    )


def test_grad_casts_grad_outputs_to_the_outputs_dtype():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * 2).sum()
        gradients = (lib.tensor(1.0, dtype=lib.float64), lib.tensor(1))
        return [dtype_of(lib.autograd.grad(y, x, g, retain_graph=True)[0]) for g in gradients]

    assert same_results(program)[1] == ["torch.float32", "torch.float32"]


BACKWARD_CALLS = {
    "empty_inputs": lambda lib, x, c, y: lib.autograd.backward(y, inputs=[]),
    "an_int_input": lambda lib, x, c, y: lib.autograd.backward(y, inputs=[3]),
    "inputs_an_int": lambda lib, x, c, y: lib.autograd.backward(y, inputs=3),
    "an_input_without_grad": lambda lib, x, c, y: lib.autograd.backward(y, inputs=[c]),
    "a_mapping_that_is_not_a_dict": lambda lib, x, c, y: lib.autograd.backward(
        y, inputs=__import__("types").MappingProxyType({"x": x})
    ),
    "a_dict_of_inputs": lambda lib, x, c, y: lib.autograd.backward(y, inputs={"x": x}),
    "numbers_as_grad_tensors": lambda lib, x, c, y: lib.autograd.backward(y, grad_tensors=[1.0]),
    "a_number_as_grad_tensors": lambda lib, x, c, y: lib.autograd.backward(y, grad_tensors=1.0),
    "too_many_grad_tensors": lambda lib, x, c, y: lib.autograd.backward(
        [y], [f64(lib, 1.0), f64(lib, 1.0)]
    ),
    "an_output_without_grad": lambda lib, x, c, y: lib.autograd.backward([y, c.sum()]),
    "no_outputs": lambda lib, x, c, y: lib.autograd.backward([], inputs=[x]),
    "an_unused_input": lambda lib, x, c, y: lib.autograd.backward(
        y, inputs=[f64(lib, [1.0], True)]
    ),
    "the_same_input_twice": lambda lib, x, c, y: lib.autograd.backward(y, inputs=[x, x]),
}


@pytest.mark.parametrize("name", list(BACKWARD_CALLS))
def test_backward_arguments_like_torch(name):
    def program(lib):
        x, _, c, y = _graph(lib)
        return [BACKWARD_CALLS[name](lib, x, c, y), x.grad]

    same_results(program)


def test_materialize_grads_gives_zeros_like_the_input():
    """Zeros of the input's shape and dtype (not input * 0: NaN for inf), requiring grad under
    create_graph."""

    def program(lib):
        x = lib.tensor([1.0, float("inf")], requires_grad=True)
        unused = lib.tensor([[float("inf")], [float("nan")]], dtype=lib.float64, requires_grad=True)
        y = (x * 2).sum()
        results = []
        for create_graph in (False, True):
            gx, gu = lib.autograd.grad(
                y, [x, unused], materialize_grads=True, create_graph=create_graph, retain_graph=True
            )
            results.append([gu, dtype_of(gu), gu.requires_grad, gu.grad_fn, gx.requires_grad])
        return results

    assert same_results(program)[1][1][2] is True


def test_materialize_grads_refuses_an_unused_gradient_edge():
    def program(lib):
        x, z = f64(lib, [1.0], True), f64(lib, [2.0], True)
        edge = lib.autograd.graph.get_gradient_edge(z)
        return lib.autograd.grad((x * 2).sum(), [x, edge], materialize_grads=True)

    same_results(program)


def test_only_inputs_false_warns_as_torch():
    def program(lib):
        x, _, _, y = _graph(lib)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.autograd.grad(y, x, retain_graph=True, only_inputs=True)
            lib.autograd.grad(y, x, only_inputs=False)
        return [(w.category.__name__, str(w.message)) for w in caught]

    assert len(same_results(program)[1]) == 1


def test_is_grads_batched_true_is_refused():
    x = ma.tensor([1.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="is_grads_batched=True"):
        ma.autograd.grad((x * 2).sum(), x, ma.ones(3, 1), is_grads_batched=True)


# --- nodes that no gradient reaches ---------------------------------------------------------
def _hooked_chain(lib, probe_materializes):
    """x -> MulBackward0 -> Probe (a custom Function) -> Cut (whose backward returns None),
    with every kind of hook logging what it receives."""
    log = []

    class Cut(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            log.append("Cut.backward")
            return None

    class Probe(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(probe_materializes)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            log.append(("Probe.backward", g))
            return g

    x = f64(lib, [1.0, 2.0], True)
    x.register_hook(lambda g: log.append(("leaf hook", g)))
    a = x * 2
    a.register_hook(lambda g: log.append(("a hook", g)))
    a.grad_fn.register_prehook(lambda go: log.append(("mul prehook", go)))
    a.grad_fn.register_hook(lambda gi, go: log.append(("mul posthook", gi, go)))
    accumulate = a.grad_fn.next_functions[0][0]
    accumulate.register_prehook(lambda go: log.append(("accumulate prehook", go)))
    accumulate.register_hook(lambda gi, go: log.append(("accumulate posthook", gi, go)))
    p = Probe.apply(a)
    p.register_hook(lambda g: log.append(("p hook", g)))
    p.grad_fn.register_prehook(lambda go: log.append(("probe prehook", go)))
    p.grad_fn.register_hook(lambda gi, go: log.append(("probe posthook", gi, go)))
    Cut.apply(p).sum().backward()
    return log, x.grad


@pytest.mark.parametrize("materialize", [True, False], ids=["materialized", "not_materialized"])
def test_a_function_that_no_gradient_reaches_still_runs(materialize):
    """As in torch: every node reached runs, with its hooks (given None), even when no gradient
    came; a custom Function's backward gets zeros unless set_materialize_grads(False)."""
    log, grad = same_results(lambda lib: _hooked_chain(lib, materialize))[1]
    assert log[0] == "Cut.backward"
    assert log[1] == ("p hook", None)
    assert materialize or ("mul posthook", (None, None), (None,)) in log


def once_differentiable_cube(lib):
    """x**3 with a once_differentiable backward: create_graph gives its gradient an error node."""

    class MyCube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x**3

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, g):
            return g * 3

    return MyCube


def test_an_error_node_that_no_gradient_reaches_still_raises():
    def program(lib):
        class Cut(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return None

        x = f64(lib, [1.0, 2.0], True)
        cube = once_differentiable_cube(lib).apply(x)
        (g,) = lib.autograd.grad(cube, x, f64(lib, [1.0, 1.0], True), create_graph=True)
        return error_of(lambda: Cut.apply(g).sum().backward())

    assert same_results(program)[1] is not None


def test_hook_of_an_output_that_gets_no_gradient_is_called_with_none():
    def program(lib):
        log = []
        x = f64(lib, [1.0, 2.0], True)
        a, b = x.unbind(0)
        b.register_hook(lambda g: log.append(("b", g)))
        a.register_hook(lambda g: log.append(("a", g)))
        b.retain_grad()
        a.backward()
        return [log, x.grad, b.grad]

    same_results(program)


# --- what autograd.grad and backward(inputs=...) run ----------------------------------------
def _exp_square(lib, log):
    """h = exp(x) with a tensor hook (x10), a pre-hook and a post-hook; y = (h * h).sum()."""
    x = f64(lib, [1.0, 2.0], True)
    h = x.exp()
    h.grad_fn.register_hook(lambda gi, go: log.append("exp posthook"))
    h.grad_fn.register_prehook(lambda go: log.append("exp prehook"))
    h.register_hook(lambda g: log.append(("h hook", g)) or g * 10)
    return x, h, (h * h).sum()


def _read(node, name):
    return error_of(lambda: getattr(node, name)) or "readable"


def test_backward_with_a_non_leaf_input_runs_its_node():
    """torch runs the node of a non-leaf input (its hooks, and it frees what it saved)."""

    def program(lib):
        log = []
        x, h, y = _exp_square(lib, log)
        y.backward(inputs=[h])
        return [log, h.grad, x.grad, _read(h.grad_fn, "_saved_result")]

    result = same_results(program)[1]
    assert "exp posthook" in result[0]


def test_grad_of_a_non_leaf_that_leads_nowhere_else():
    """The node does not run (no pre-hook, nothing freed); its tensor hook does, and the
    gradient returned is the hook's."""

    def program(lib):
        log = []
        x, h, y = _exp_square(lib, log)
        result = lib.autograd.grad(y, [h])
        return [result, log, _read(h.grad_fn, "_saved_result")]

    same_results(program)


def test_grad_of_a_non_leaf_on_the_way_to_another_input():
    """The node runs (it leads to x); as in torch, h's gradient is returned as it arrived,
    before h's hook, which still changes what goes on to x."""

    def program(lib):
        log = []
        x, h, y = _exp_square(lib, log)
        return [lib.autograd.grad(y, [h, x]), log]

    same_results(program)


def test_grad_of_a_leaf_applies_its_hooks():
    def program(lib):
        log = []
        x = f64(lib, [1.0, 2.0], True)
        x.register_hook(lambda g: log.append(("x hook", g)) or g * 10)
        accumulate = (x * 1).grad_fn.next_functions[0][0]
        accumulate.register_prehook(lambda go: log.append("accumulate prehook"))
        return [lib.autograd.grad((x * x).sum(), [x]), log, x.grad]

    same_results(program)


def test_assigning_backward_hooks():
    """A dict assigned to a leaf's _backward_hooks replaces its hooks (each may return a new
    gradient, or None to leave it); on a non-leaf it is only kept; `del` is refused."""

    def program(lib):
        x = f64(lib, [1.0, 2.0], True)
        found = [x._backward_hooks]
        x.register_hook(lambda g: g * 5)  # dropped by the assignment
        hooks = {"a": lambda g: g * 2, "b": lambda g: None, "c": lambda g: g + 1}
        x._backward_hooks = hooks
        (x * 1).sum().backward()
        found += [x._backward_hooks is hooks, x.grad]
        x._backward_hooks, x.grad = None, None
        (x * 1).sum().backward()
        y = x * 1
        y._backward_hooks = {"b": lambda g: g * 3}
        y.sum().backward()
        plain = f64(lib, [1.0])
        plain._backward_hooks = {}
        deleting = error_of(lambda: delattr(plain, "_backward_hooks"))
        return found + [x._backward_hooks, x.grad, plain._backward_hooks, deleting]

    same_results(program)


def test_leaf_hooks_run_before_the_accumulate_grad_pre_hooks():
    def program(lib):
        log = []
        x = f64(lib, [1.0, 2.0], True)
        y = x * 3
        accumulate = y.grad_fn.next_functions[0][0]
        accumulate.register_prehook(lambda go: log.append(("prehook", go)))
        x.register_hook(lambda g: log.append(("leaf hook", g)) or g + 1)
        accumulate.register_hook(lambda gi, go: log.append(("posthook", gi, go)))
        y.sum().backward()
        return [log, x.grad]

    same_results(program)


def test_backward_inputs_runs_hooks_in_torchs_order():
    def program(lib):
        log = []
        x = f64(lib, [1.0, 2.0], True)
        x.register_hook(lambda g: log.append("x hook"))
        z = x * 2
        z.register_hook(lambda g: log.append("z hook"))
        w = z * 3
        w.register_hook(lambda g: log.append("w hook"))
        (w.sum() + (x * 5).sum()).backward(inputs=[x])
        return [log, x.grad, z.grad_fn.next_functions[0][0].variable is x]

    same_results(program)


# --- Node -------------------------------------------------------------------------------------
def test_node_repr_uses_the_class_name_as_torch():
    def program(lib):
        x = f64(lib, [1.0, 2.0], True)
        y = x * 2
        cube = once_differentiable_cube(lib).apply(x)
        (g,) = lib.autograd.grad(cube, x, f64(lib, [1.0, 1.0], True), create_graph=True)
        nodes = [y.grad_fn, y.grad_fn.next_functions[0][0], cube.grad_fn, g.grad_fn]
        return [[shown(n), n.name(), type(n).__name__] for n in nodes] + [
            shown(y.grad_fn.next_functions)
        ]

    result = same_results(program)[1]
    assert result[1] == [
        "<AccumulateGrad object at 0x?>",
        "torch::autograd::AccumulateGrad",
        "AccumulateGrad",
    ]
    assert result[2][0] == "<torch.autograd.function.MyCubeBackward object at 0x?>"
    assert result[3][:2] == ["<Error object at 0x?>", "torch::autograd::Error"]


def test_accumulate_grad_nodes_of_two_leaves_print_differently():
    x, w = ma.tensor([1.0], requires_grad=True), ma.tensor([2.0], requires_grad=True)
    (a, _), (b, _) = (x * w).grad_fn.next_functions
    assert repr(a) != repr(b)
    assert repr(a) == repr(x._grad_accumulator())


def test_sequence_nr_and_metadata():
    def program(lib):
        x = f64(lib, [1.0, 2.0], True)
        a = x * 2
        b = a.exp()
        c = b.sum()
        accumulate = a.grad_fn.next_functions[0][0]
        a.grad_fn.metadata["label"] = "a"
        return [
            b.grad_fn._sequence_nr() - a.grad_fn._sequence_nr(),
            c.grad_fn._sequence_nr() - a.grad_fn._sequence_nr(),
            accumulate._sequence_nr(),
            a.grad_fn.metadata,
            a.grad_fn.metadata is a.grad_fn.metadata,
            b.grad_fn.metadata,
            accumulate.metadata,
            type(accumulate.metadata).__name__,
        ]

    assert same_results(program)[1][2] == 2**64 - 1


def test_set_sequence_nr_changes_the_order_of_backward():
    def program(lib):
        log = []
        x = f64(lib, [1.0, 2.0], True)
        first, second = x * 2, x * 3
        first.register_hook(lambda g: log.append("first"))
        second.register_hook(lambda g: log.append("second"))
        first.grad_fn._set_sequence_nr(second.grad_fn._sequence_nr() + 1)
        (first + second).sum().backward()
        return log

    assert same_results(program)[1] == ["first", "second"]


def test_node_hooks_return_handles_that_remove():
    def program(lib):
        log = []
        x = f64(lib, [1.0, 2.0], True)
        y = x * 2
        handles = [
            y.grad_fn.register_hook(lambda gi, go: log.append("post")),
            y.grad_fn.register_prehook(lambda go: log.append("pre")),
        ]
        y.sum().backward(retain_graph=True)
        for handle in handles:
            handle.remove()
        y.sum().backward()
        return [log, [n.name() for n, _ in y.grad_fn.next_functions if n is not None]]

    same_results(program)


# --- autograd.graph -----------------------------------------------------------------------------
def test_gradient_edges():
    def program(lib):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        graph = lib.autograd.graph
        x = f64(lib, [1.0, 2.0], True)
        y = x * 3
        d = Double.apply(x)
        edges = [graph.get_gradient_edge(t) for t in (x, y, d)]
        described = [[shown(e), e.output_nr, e.node is e[0], isinstance(e, tuple)] for e in edges]
        loss = (y * y).sum() + d.sum()
        return [
            described,
            lib.autograd.grad(loss, edges[0], retain_graph=True),
            lib.autograd.grad(loss, [edges[1], x], retain_graph=True),
            lib.autograd.grad(loss, [edges[2]]),
            error_of(lambda: graph.get_gradient_edge(f64(lib, [1.0]))),
            shown(graph.GradientEdge(y.grad_fn, 0)),
        ]

    result = same_results(program)[1]
    assert result[0][2][0].endswith("ownership_token=<ViewBackward0 object at 0x?>)")


def test_backward_to_a_gradient_edge_accumulates_into_the_leaf():
    def program(lib):
        x = f64(lib, [1.0, 2.0], True)
        edge = lib.autograd.graph.get_gradient_edge(x)
        (x * 5).sum().backward(inputs=[edge])
        return x.grad

    same_results(program)


def test_increment_version():
    def program(lib):
        graph = lib.autograd.graph
        t = f64(lib, [1.0])
        versions = [t._version]
        graph.increment_version(t)
        versions.append(t._version)
        graph.increment_version([t, t])
        versions.append(t._version)
        x = f64(lib, [1.0, 2.0], True)
        y = x.exp()
        graph.increment_version(y)  # as if y had been changed in place behind autograd's back
        return [
            versions,
            error_of(lambda: graph.increment_version(3)),
            error_of(lambda: graph.increment_version([3])),
            error_of(lambda: y.sum().backward()),
        ]

    same_results(program)


def test_register_multi_grad_hook_all():
    """The example of torch's docstring, then autograd.grad, then remove()."""

    def program(lib):
        log = []
        a = f64(lib, np.ones((2, 3)), True)
        b = f64(lib, np.ones((2, 3)) * 2, True)
        c, d = a * b, a * b
        handle = lib.autograd.graph.register_multi_grad_hook(
            (a, b, c, d), lambda grads: log.append([g is not None for g in grads])
        )
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        lib.autograd.grad(c.sum(), (c,), retain_graph=True)
        failed = error_of(lambda: lib.autograd.grad(c.sum(), (b,), retain_graph=True))
        handle.remove()
        c.sum().backward()
        return [log, failed]

    assert same_results(program)[1][0][:2] == [
        [True, True, True, False],
        [True, False, True, False],
    ]


def test_register_multi_grad_hook_any_and_errors():
    def program(lib):
        log = []
        a, b = f64(lib, [1.0, 2.0], True), f64(lib, [3.0, 4.0], True)
        lib.autograd.graph.register_multi_grad_hook((a, b), log.append, mode="any")
        (a * b).sum().backward()
        (a * 2).sum().backward()
        return [
            log,
            error_of(lambda: lib.autograd.graph.register_multi_grad_hook((a,), print, mode="some")),
            error_of(
                lambda: lib.autograd.graph.register_multi_grad_hook((f64(lib, [1.0]),), print)
            ),
        ]

    same_results(program)


def test_engine_state_outside_a_backward_call():
    assert engine_state.current_graph_task_id() == torch._C._current_graph_task_id() == -1
    node = (ma.tensor([1.0], requires_grad=True) * 2).grad_fn
    torch_node = (torch.tensor([1.0], requires_grad=True) * 2).grad_fn
    expected = error_of(torch._C._will_engine_execute_node, torch_node)
    assert error_of(engine_state.will_engine_execute_node, node) == expected


# --- the legacy Variable --------------------------------------------------------------------
def test_variable_is_a_tensor_sharing_data_and_version():
    def program(lib):
        Variable = lib.autograd.Variable
        t = lib.tensor([1.0, 2.0])
        v, w = Variable(t), Variable(t, requires_grad=True)
        t.add_(1)
        x = f64(lib, [1.0, 2.0], True)
        y = Variable(x * 2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            volatile = Variable(t, volatile=True)
        return [
            [v, v.requires_grad, v is t, v._version],
            [w, w.requires_grad, w.is_leaf, t.requires_grad],
            [y, y.grad_fn, y.requires_grad],
            [volatile, [str(m.message) for m in caught]],
            [Variable(), dtype_of(Variable())],
            [isinstance(t, Variable), isinstance(3, Variable)],
            error_of(lambda: Variable([1.0])),
            error_of(lambda: Variable(lib.tensor([1, 2]), requires_grad=True)),
        ]

    same_results(program)


# --- the profiler ---------------------------------------------------------------------------
_TIME = re.compile(r"-?\d+\.\d+(?:%|ms|us|s)|NaN")


def _layout(table):
    """A profiler table as (length, words) per line, times and percentages as `T`: the columns
    have fixed widths, so equal lengths mean equal columns, whatever the times (the last line,
    the total time, has no columns)."""
    lines = table.splitlines()
    rows = [(len(line), _TIME.sub("T", line).split()) for line in lines[:-1]]
    return rows + [_TIME.sub("T", lines[-1])]


def _tutorial_loop(lib):
    """The profiled loop of PyTorch's introductory autograd tutorial (autogradyt_tutorial)."""
    x = (lib.rand(2, 3) + 1).requires_grad_()  # |x| >= 1: z / x never overflows
    y = lib.rand(2, 3, requires_grad=True)
    z = lib.ones(2, 3, requires_grad=True)
    with lib.autograd.profiler.profile(use_cuda=False) as prf:
        for _ in range(50):
            z = (z / x) * y
    return prf


@pytest.mark.parametrize("sort_by", ["self_cpu_time_total", "count", None])
def test_profiler_table_has_torchs_layout(sort_by):
    expected, actual = _tutorial_loop(torch), _tutorial_loop(ma)
    tables = [p.key_averages().table(sort_by=sort_by) for p in (expected, actual)]
    if sort_by == "self_cpu_time_total":  # the order depends on the times: compare the rows as sets
        tables = ["\n".join(sorted(t.splitlines())) + "\n" for t in tables]
    assert _layout(tables[1]) == _layout(tables[0])
    assert "aten::div" in tables[1] and tables[1].endswith("\n")


def test_profiler_counts_operations_nodes_and_blocks_as_torch():
    def program(lib):
        class MyCube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x**3

            @staticmethod
            def backward(ctx, g):
                return g * 3

        x = lib.ones(2, requires_grad=True)
        profiler = lib.autograd.profiler
        with profiler.profile() as prof:
            with profiler.record_function("my_block"):
                y = MyCube.apply(x)
                with lib.no_grad():
                    x * 2  # recorded although no node is
            y.sum().backward()
        counts = {e.key: e.count for e in prof.key_averages()}
        names = ["my_block", "MyCube", "aten::mul", "SumBackward0", "MyCubeBackward"]
        names.append("torch::autograd::AccumulateGrad")
        return [
            {name: counts.get(name) for name in names},
            [e.name for e in prof.function_events][:2],
        ]

    result = same_results(program)[1]
    assert result[0]["aten::mul"] == 2  # under no_grad, and in MyCubeBackward


def test_profiler_times_add_up():
    with ma.autograd.profiler.profile() as prof:
        with ma.autograd.profiler.record_function("block"):
            (ma.ones(3, requires_grad=True) * 2).sum().backward()
    block = prof.function_events[0]
    assert block.name == "block" and block.cpu_children
    assert 0 <= block.self_cpu_time_total <= block.cpu_time_total
    assert block.cpu_time_total >= sum(child.cpu_time_total for child in block.cpu_children)
    total = prof.key_averages().self_cpu_time_total
    assert total == pytest.approx(prof.self_cpu_time_total)
    assert prof.total_average().count == len(prof.function_events)


def test_profiler_outside_and_after_recording():
    def program(lib):
        profiler = lib.autograd.profiler
        unfinished = profiler.profile()
        with profiler.record_function("nothing records it"):
            pass
        with profiler.profile() as empty:
            pass
        return [str(unfinished), empty.key_averages().table(), str(empty.key_averages())]

    assert same_results(program)[1][0] == "<unfinished torch.autograd.profile>"


def test_profiler_leaves_tracing_as_it_found_it():
    def tracer(frame, event, arg):
        return None

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        with ma.autograd.profiler.profile():
            ma.ones(2) * 2
        assert sys.gettrace() is tracer
    finally:
        sys.settrace(previous)


def test_torch_profiler_api():
    Profile = ma.autograd.profiler.TorchProfile
    seen = []
    with Profile(
        activities=[ma.autograd.profiler.ProfilerActivity.CPU], on_trace_ready=seen.append
    ) as prof:
        with ma.autograd.profiler.record_function("step"):
            ma.ones(2, requires_grad=True) * 2
        prof.step()
    assert seen == [prof]
    assert [e.key for e in prof.key_averages()] == ["step", "aten::mul"]
    assert str(ma.autograd.profiler.ProfilerActivity.CPU) == str(
        torch.profiler.ProfilerActivity.CPU
    )


def test_memory_formats_and_the_layout_of_grad():
    """channels_last and contiguous_format: contiguous(), is_contiguous(), to(), clone() and
    their errors; empty_strided; a leaf's .grad has the leaf's strides where the leaf fills its
    memory without gaps, else row by row (PyTorch's layout contract)."""

    def program(lib):
        a = lib.arange(120.0, dtype=lib.float64).reshape(2, 3, 4, 5)
        last = a.contiguous(memory_format=lib.channels_last)
        found = [repr(lib.channels_last), repr(lib.contiguous_format), repr(lib.preserve_format)]
        found += [
            last.stride(),
            last.is_contiguous(),
            last.is_contiguous(memory_format=lib.channels_last),
        ]
        found += [last.contiguous(memory_format=lib.channels_last) is last, last.contiguous()]
        found += [a.to(memory_format=lib.contiguous_format) is a, last.to(lib.float32).stride()]
        found += [a.clone(memory_format=lib.channels_last).stride(), a[:1, :, :1, :1].stride()]
        found.append(lib.ones(1, 3, 1, 1).is_contiguous(memory_format=lib.channels_last))
        found.append(lib.empty_strided((2, 2), (4, 2)).stride())
        for bad in (
            lambda: lib.ones(2, 3).contiguous(memory_format=lib.channels_last),
            lambda: lib.ones(2, 3).to(memory_format=lib.channels_last_3d),
            lambda: a.contiguous(memory_format=lib.preserve_format) is a,
            lambda: last.contiguous(memory_format=lib.preserve_format),
        ):
            found.append(error_of(bad))
        leaves = [
            a.to(memory_format=lib.channels_last).requires_grad_(),
            a.requires_grad_(),
            lib.ones(3, 2, dtype=lib.float64).t().requires_grad_(),
            lib.empty_strided((2, 2), (4, 2), dtype=lib.float64).requires_grad_(),
        ]
        for leaf in leaves:
            (leaf * 2).sum().backward()
            leaf.sum().backward()
            found.append((leaf.stride(), leaf.grad.stride(), leaf.grad))
        return found

    same_results(program)


def test_grad_dtype():
    """A leaf's grad_dtype (its dtype by default, None for any): what .grad may be set to, the
    dtype backward, autograd.grad and a custom Function's gradient are cast to, and PyTorch's
    errors on a non-leaf, for a non-dtype and for a .grad of another dtype already there."""

    def program(lib):
        class Float64Grad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, i):
                return i * 2

            @staticmethod
            def backward(ctx, g):
                return g.to(lib.float64)

        def name(dtype):
            return None if dtype is None else str(dtype).rpartition(".")[2]

        found = []
        leaf = lib.tensor([1.0, 2.0], requires_grad=True)
        found.append(name(leaf.grad_dtype))
        leaf.grad_dtype = lib.float16
        found.append(name(leaf.grad_dtype))
        non_leaf = leaf * 2
        found.append(error_of(lambda: non_leaf.grad_dtype))
        found.append(error_of(lambda: setattr(non_leaf, "grad_dtype", lib.float16)))
        found.append(error_of(lambda: setattr(leaf, "grad_dtype", 3)))
        found.append(error_of(lambda: setattr(leaf, "grad", lib.tensor([1.0, 1.0]))))
        leaf.grad = lib.tensor([1.0, 1.0], dtype=lib.float16)
        found.append(error_of(lambda: setattr(leaf, "grad_dtype", lib.float32)))
        wide = lib.tensor([1.0, 2.0], requires_grad=True)
        wide.grad_dtype = lib.float64
        (wide * 2).sum().backward()
        (wide * 2).sum().backward()
        found += [wide.grad, lib.autograd.grad((wide * 2).sum(), wide)[0]]
        for setting in ("default", None, lib.float16):
            t = lib.tensor([1.0, 2.0], requires_grad=True)
            if setting != "default":
                t.grad_dtype = setting
            Float64Grad.apply(t).sum().backward()
            Float64Grad.apply(t).sum().backward()
            found.append(t.grad)
        free = lib.tensor([1.0, 2.0], requires_grad=True)
        free.grad_dtype = None
        (free * 2).sum().backward()
        free.grad = free.grad.to(lib.float16)
        (free * 3).sum().backward()
        return found + [
            free.grad,
            name(free.detach().grad_dtype),
            name(lib.ones(2).long().grad_dtype),
        ]

    same_results(program)
