"""The smaller classes: TestAllowMutationOnSaved, TestNestedCheckpoint, and the single-threaded
tests of TestMultithreadAutograd and TestAutogradMultipleDispatch (its CPU instantiation)."""

import collections
import importlib
import sys
import weakref
from functools import partial

import pytest

from .harness import Harness

INPLACE_MESSAGE = "variables needed for gradient computation has been modified by an inplace"


def utils_checkpoint(torch):
    return importlib.import_module(f"{torch.__name__}.utils.checkpoint")


class TestAllowMutationOnSaved(Harness):
    def assertClonedLenEqual(self, ctx, n):
        self.assertEqual(len(list(ctx.cloned.items())), n)

    def assertTIDMapLenEqual(self, ctx, n):
        self.assertEqual(len(list(ctx.tid_to_weakhandle.items())), n)

    def test_basic(self, torch):
        a = torch.rand(2, 3, requires_grad=True)

        def fn(a):
            b = a.clone()
            out = (b**2).sum()
            b.sin_()
            out.sum().backward()
            return a.grad

        with self.assertRaisesRegex(RuntimeError, INPLACE_MESSAGE):
            fn(a)
        with torch.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            da = fn(a)  # the saved b was cloned before sin_ changed it
        self.assertTrue(torch.allclose(a * 2, da))
        self.assertClonedLenEqual(ctx, 0)

    def test_views(self, torch):
        a = torch.rand(2, 3, requires_grad=True)

        def fn(a):
            b = a.clone()
            c = b.view_as(b)
            out = (b**2).sum()
            c.sin_()
            out.sum().backward()
            return a.grad

        with self.assertRaisesRegex(RuntimeError, INPLACE_MESSAGE):
            fn(a)
        with torch.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            da = fn(a)
        self.assertClonedLenEqual(ctx, 0)
        self.assertTrue(torch.allclose(a * 2, da))

    def test_save_base_and_modify_view(self, torch):
        with torch.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a = torch.rand(2, 3, requires_grad=True)
            b = a.clone()
            c = b[:1]
            out = b**2
            c *= 10  # modify the view
            out.sum().backward()
            self.assertClonedLenEqual(ctx, 0)
        self.assertClonedLenEqual(ctx, 0)
        self.assertTrue(torch.allclose(a * 2, a.grad))

    def test_save_view_modify_base(self, torch):
        with torch.autograd.graph.allow_mutation_on_saved_tensors():
            a = torch.rand(2, 3, requires_grad=True)
            b = a.clone()
            c = b[:]
            out = (c**2).sum()
            b *= 2
            out.backward()
            self.assertTrue(torch.allclose(a * 2, a.grad))

    def test_double_backward(self, torch):
        with torch.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a = torch.rand(2, 3, requires_grad=True)
            b = a.clone()
            out = (b**2).sum()
            b.sin_()
            torch.autograd.grad(out, a, create_graph=True)
            (da,) = torch.autograd.grad(out, a, create_graph=True)
            (d2a,) = torch.autograd.grad(da.sum(), a)
        self.assertTrue(torch.allclose(torch.ones_like(a) * 2, d2a))
        self.assertClonedLenEqual(ctx, 0)

    def test_saved_but_not_anymore(self, torch):
        # No clone for a tensor that was saved once but is no longer saved when modified.
        with torch.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a = torch.randn(2, 3, requires_grad=True).clone()
            out = (a**2).sum()
            self.assertTIDMapLenEqual(ctx, 1)
            self.assertClonedLenEqual(ctx, 0)
            out.backward()
            a.sin_()
            self.assertClonedLenEqual(ctx, 0)
            out = (a**2).sum()
            a.sin_()
            self.assertClonedLenEqual(ctx, 1)
            del out
            self.assertClonedLenEqual(ctx, 0)

    def test_saved_same_tensor_many_times(self, torch):
        with torch.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a = torch.randn(2, 3, requires_grad=True).clone()
            b = a**2
            c = a**2
            a.sin_()
            self.assertClonedLenEqual(ctx, 1)  # one clone for both
            del b, c
            self.assertClonedLenEqual(ctx, 0)

    def test_saved_same_tensor_different_versions(self, torch):
        with torch.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a = torch.randn(2, 3, requires_grad=True).clone()
            b = a**2
            a.sin_()
            c = a**2
            a.sin_()
            self.assertClonedLenEqual(ctx, 2)
            del b
            self.assertClonedLenEqual(ctx, 1)
            del c
            self.assertClonedLenEqual(ctx, 0)

    def test_with_out_variant(self, torch):
        with torch.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a = torch.tensor([1.0], requires_grad=True)
            b = torch.tensor([1.0])
            c = torch.tensor([2.0])
            out = a * b
            self.assertTIDMapLenEqual(ctx, 1)
            torch.sin(c, out=b)
            self.assertClonedLenEqual(ctx, 1)
            out.backward()
            self.assertClonedLenEqual(ctx, 0)

    def test_backward_out_of_context(self, torch):
        msg = "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
        with torch.autograd.graph.allow_mutation_on_saved_tensors():
            a = torch.rand(2, 3, requires_grad=True)
            out = (a**2).sum()
        with self.assertRaisesRegex(AssertionError, msg):
            out.backward()

        with torch.autograd.graph.allow_mutation_on_saved_tensors():
            a = torch.rand(2, 3, requires_grad=True)
            out = (a**2).sum()
        with torch.autograd.graph.allow_mutation_on_saved_tensors():  # another context
            with self.assertRaisesRegex(AssertionError, msg):
                out.backward()

    def test_disallow_nesting(self, torch):
        with torch.autograd.graph.allow_mutation_on_saved_tensors():
            with self.assertRaisesRegex(
                RuntimeError, "allow_mutation_on_saved_tensors contexts cannot be nested"
            ):
                with torch.autograd.graph.allow_mutation_on_saved_tensors():
                    pass


class TestMultithreadAutograd(Harness):
    """Only the two tests of the class that start no thread."""

    def test_preserve_backtrace(self, torch):
        class Foo(torch.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                return input

            @staticmethod
            def backward(ctx, *grad):
                raise ValueError("something")

        t = torch.rand(10, requires_grad=True)
        try:
            Foo.apply(t).sum().backward()
        except Exception:
            import traceback

            tb_str = "\n".join(traceback.format_tb(sys.exc_info()[2]))
            self.assertTrue('raise ValueError("something")' in tb_str)

    def test_set_multithreading_enabled_as_context_manager_and_function(self, torch):
        autograd = torch.autograd
        with autograd.set_multithreading_enabled(False):
            self.assertFalse(autograd.is_multithreading_enabled())
        self.assertTrue(autograd.is_multithreading_enabled())
        with autograd.set_multithreading_enabled(True):
            self.assertTrue(autograd.is_multithreading_enabled())
        self.assertTrue(autograd.is_multithreading_enabled())
        with autograd.set_multithreading_enabled(False):
            autograd.set_multithreading_enabled(True)
            self.assertTrue(autograd.is_multithreading_enabled())
        self.assertTrue(autograd.is_multithreading_enabled())
        autograd.set_multithreading_enabled(False)
        self.assertFalse(autograd.is_multithreading_enabled())
        autograd.set_multithreading_enabled(True)
        self.assertTrue(autograd.is_multithreading_enabled())


class TestNestedCheckpoint(Harness):
    @staticmethod
    def grad(torch, fn):
        def wrapper(x):
            with torch.enable_grad():
                out = fn(x)
                (grad_input,) = torch.autograd.grad(out, inputs=(x,), create_graph=True)
            return grad_input

        return wrapper

    @staticmethod
    def sum(fn):
        def wrapped(x):
            return fn(x).sum()

        return wrapped

    @staticmethod
    def checkpoint(torch, fn):
        def wrapped(*args, **kwargs):
            return utils_checkpoint(torch).checkpoint(fn, *args, use_reentrant=False, **kwargs)

        return wrapped

    def get_tests(self, torch, fn):
        def grad(f):
            return self.grad(torch, f)

        def c(f):
            return self.checkpoint(torch, f)

        # A function against the same function wrapped in checkpoints in several ways.
        return (
            (fn, (c(fn), c(c(fn)))),
            (grad(fn), (grad(c(fn)), grad(c(c(fn))))),
            (grad(grad(fn)), (grad(c(grad(fn))), c(grad(grad(c(fn)))), grad(c(grad(c(fn)))))),
            (grad(grad(grad(fn))), (grad(c(grad(grad(c(fn))))), grad(c(grad(c(grad(c(fn)))))))),
        )

    def check_graph_dies(self, torch, fn):
        def iter_graph(roots):
            seen, queue = set(), collections.deque()
            for node in roots:
                if node is not None:
                    seen.add(node)
                    queue.append(node)
            while queue:
                node = queue.popleft()
                for next_fn, _idx in node.next_functions:
                    if next_fn in seen or next_fn is None:
                        continue
                    seen.add(next_fn)
                    queue.append(next_fn)
                yield node

        class Handle:
            def __init__(self, node_name):
                self.node_name = node_name

        def scope():
            a = torch.randn((), requires_grad=True)
            out = fn(a)
            refs = []
            for node in iter_graph([out.grad_fn]):
                handle = Handle(node.name())
                refs.append(weakref.ref(handle))
                node.metadata["blah"] = handle
            return refs

        refs = scope()
        self.assertEqual([ref().node_name for ref in refs if ref() is not None], [])

    @pytest.mark.parametrize("early_stop", [True, False])
    def test_nested_checkpoint(self, torch, early_stop):
        with utils_checkpoint(torch).set_checkpoint_early_stop(early_stop):
            x = torch.randn((), requires_grad=True)

            def f(x):
                return x.sin().exp().sin()

            def g(x):
                a = x.sin().exp().sin()
                b = x.sin().exp().sin()
                torch.autograd.grad(a, x)
                torch.autograd.grad(b, x)
                return x.sin()

            for fn in (f, g):
                for expected_fn, actual_fns in self.get_tests(torch, fn):
                    expected = expected_fn(x)
                    for actual_fn in actual_fns:
                        actual = actual_fn(x)
                        self.assertTrue(torch.allclose(expected, actual))
                        self.check_graph_dies(torch, actual_fn)

    @pytest.mark.parametrize("early_stop", [True, False])
    def test_nested_checkpoint_two_children(self, torch, early_stop):
        with utils_checkpoint(torch).set_checkpoint_early_stop(early_stop):

            def grad(f):
                return self.grad(torch, f)

            def c(f):
                return self.checkpoint(torch, f)

            sum = self.sum

            def f(x):
                return x.sin().exp().sin()

            def g(x):
                return x.cos().sin().exp()

            def hc(x):
                return c(g)(c(f)(x))

            def h(x):
                return g(f(x))

            a = torch.randn(3, 3, requires_grad=True)
            expected = grad(sum(grad(sum(h))))(a)
            actual = grad(sum(grad(sum(c(hc)))))(a)
            self.assertTrue(torch.allclose(expected, actual))
            actual = grad(sum(c(grad(sum(c(hc))))))(a)
            self.assertTrue(torch.allclose(expected, actual))
            self.check_graph_dies(torch, grad(c(hc)))
            self.check_graph_dies(torch, grad(sum(grad(sum(c(hc))))))
            self.check_graph_dies(torch, grad(sum(c(grad(sum(c(hc)))))))

    @pytest.mark.parametrize("early_stop", [True, False])
    def test_nested_checkpoint_non_tensor_inputs_and_outputs(self, torch, early_stop):
        def fn(k, a, b, f):
            return f(k * a * b.exp()), 1, "abcd"

        k = 3
        a = torch.tensor(2.0, requires_grad=True)
        b = torch.tensor(3.0, requires_grad=True)

        def f(x):
            return x.sin()

        with utils_checkpoint(torch).set_checkpoint_early_stop(early_stop):
            out, _, _ = utils_checkpoint(torch).checkpoint(fn, k, a, b, f, use_reentrant=False)
        actual_grads = torch.autograd.grad(out, (a, b))
        out, _, _ = fn(k, a, b, f)
        expected_grads = torch.autograd.grad(out, (a, b))
        for actual, expected in zip(actual_grads, expected_grads):
            self.assertTrue(torch.allclose(actual, expected))

    @pytest.mark.parametrize("early_stop", [True, False])
    def test_nested_checkpoint_kwargs(self, torch, early_stop):
        def fn(a, blah=None):
            out = a.sin().exp()
            if blah is not None:
                out = out * blah
            return out.sin().exp()

        a = torch.tensor(2.0, requires_grad=True)
        b = torch.tensor(3.0, requires_grad=True)
        with utils_checkpoint(torch).set_checkpoint_early_stop(early_stop):
            out = utils_checkpoint(torch).checkpoint(fn, a, blah=b, use_reentrant=False)
            actual_grads = torch.autograd.grad(out, (a, b))
            out = fn(a, blah=b)
            expected_grads = torch.autograd.grad(out, (a, b))
            for actual, expected in zip(actual_grads, expected_grads):
                self.assertTrue(torch.allclose(actual, expected))

    @pytest.mark.parametrize("early_stop", [True, False])
    def test_nested_checkpoint_same_graph(self, torch, early_stop):
        counter = [0]

        def hook(*_unused_args):
            counter[0] += 1

        def fn(a):
            return a.sin().cos().sin()

        a = torch.tensor(1.0, requires_grad=True)
        with utils_checkpoint(torch).set_checkpoint_early_stop(early_stop):
            out = utils_checkpoint(torch).checkpoint(fn, a, use_reentrant=False)
        out.grad_fn.next_functions[0][0].register_hook(hook)  # on the original graph
        out.backward()  # as is backward
        self.assertEqual(counter[0], 1)

    @pytest.mark.parametrize("early_stop", [True, False])
    def test_nested_checkpoint_reentrant_backwards(self, torch, early_stop):
        def fn(a):
            x = a.sin().cos()
            out = x.sin()
            return x, out

        def hook(*_unused_args):
            x.backward(retain_graph=True)  # backward again, skipping the hooked part

        a = torch.tensor(1.0, requires_grad=True)
        with utils_checkpoint(torch).set_checkpoint_early_stop(early_stop):
            x, out = utils_checkpoint(torch).checkpoint(fn, a, use_reentrant=False)
        out.grad_fn.register_hook(hook)
        out.backward(retain_graph=True)

    def test_nested_checkpoint_set_early_stop(self, torch):
        uc = utils_checkpoint(torch)
        counter = [0]

        def clone(x):
            counter[0] += 1
            return x.clone()

        def fn(x):
            return clone(x.sin().cos())  # clone saves nothing: recomputed only without early stop

        def run(expected, early_stop_context=None, **kwargs):
            counter[0] = 0
            a = torch.tensor(1.0, requires_grad=True)
            if early_stop_context is None:
                out = uc.checkpoint(fn, a, use_reentrant=False, **kwargs)
            else:
                with early_stop_context:
                    out = uc.checkpoint(fn, a, use_reentrant=False, **kwargs)
            out.backward()
            self.assertEqual(counter[0], expected)

        run(1)  # early stop by default
        run(2, early_stop=False)
        run(1, early_stop=True)
        run(2, uc.set_checkpoint_early_stop(False))  # the setting holds for the recomputation
        run(1, uc.set_checkpoint_early_stop(True))
        counter[0] = 0
        a = torch.tensor(1.0, requires_grad=True)
        with uc.set_checkpoint_early_stop(False):
            with uc.set_checkpoint_early_stop(True):  # the inner context wins
                out = uc.checkpoint(fn, a, use_reentrant=False, early_stop=False)
        out.backward()
        self.assertEqual(counter[0], 1)
        run(2, uc.set_checkpoint_early_stop(False), early_stop=True)  # the context wins
        run(1, uc.set_checkpoint_early_stop(True), early_stop=False)


class TestAutogradMultipleDispatchCPU(Harness):
    """The tests of TestAutogradMultipleDispatch that use no private test op, nested tensor,
    CUDA or torch._C function."""

    def test_set_sequence_nr_cpu(self, torch):
        x = torch.randn((10,), dtype=torch.float32, requires_grad=True)
        y = torch.randn((10,), dtype=torch.float32, requires_grad=True)
        z = torch.randn((10,), dtype=torch.float32, requires_grad=True)
        a = x + y
        b = y + z
        c = a + b
        for t in (a, b, c):
            self.assertIsNotNone(t.grad_fn)
        a.grad_fn._set_sequence_nr(100)
        b.grad_fn._set_sequence_nr(99)
        c.grad_fn._set_sequence_nr(98)
        self.assertEqual(a.grad_fn._sequence_nr(), 100)
        self.assertEqual(b.grad_fn._sequence_nr(), 99)
        self.assertEqual(c.grad_fn._sequence_nr(), 98)

        def log_grad_order(grad, name, order):
            order.append(name)
            return grad

        order = []
        a.register_hook(partial(log_grad_order, name="a", order=order))
        b.register_hook(partial(log_grad_order, name="b", order=order))
        c.register_hook(partial(log_grad_order, name="c", order=order))
        c.sum().backward()
        # c runs first though its number is smallest; then a, now numbered above b.
        self.assertEqual(order, ["c", "a", "b"])
        self.assertEqual(x.grad, torch.ones_like(x))
        self.assertEqual(y.grad, 2 * torch.ones_like(x))
        self.assertEqual(z.grad, torch.ones_like(x))

    def test_atan2_zero_gradient_cpu(self, torch):
        x = torch.tensor([0.0], requires_grad=True)
        y = torch.tensor([0.0], requires_grad=True)
        z = torch.atan2(x, y)
        z.backward()
        self.assertEqual(x.grad, torch.zeros_like(x))
        self.assertEqual(y.grad, torch.zeros_like(y))

    def test_trace_backward_nonsquare_171704_cpu(self, torch):
        for shape in [(5, 2), (7, 3), (4, 1), (1, 5), (2, 5)]:
            x = torch.randn(shape, dtype=torch.float64, requires_grad=True)
            torch.trace(x).backward()
            expected = torch.zeros(shape, dtype=torch.float64)
            for i in range(min(shape)):
                expected[i, i] = 1.0
            self.assertEqual(x.grad, expected, msg=f"shape {shape}")
