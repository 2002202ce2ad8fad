"""TestAutograd, first part: grad mode on classes, custom Functions, accumulation, grad, edges."""

import importlib
import random
import warnings
import weakref

from .harness import Harness, disable_gc, graph_desc, mini_fails


class TestAutograd(Harness):
    def test_grad_mode_class_decoration(self, torch):
        with self.assertWarnsRegex(FutureWarning, "Decorating classes is deprecated"):

            @torch.no_grad()
            class Foo:
                def __init__(self):
                    assert not torch.is_grad_enabled()

                def foo(self):
                    assert torch.is_grad_enabled()  # methods are not decorated

            Foo().foo()

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")

            @torch.no_grad()
            def foo():
                assert not torch.is_grad_enabled()

            foo()

            class Foo2:
                @torch.no_grad()
                def __init__(self):
                    assert not torch.is_grad_enabled()

                @torch.no_grad()
                def foo(self):
                    assert not torch.is_grad_enabled()

            Foo2().foo()
        self.assertEqual(len(caught), 0)

    def test_tensor_grad_warnings(self, torch):
        dummy = torch.empty(1)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            dummy.requires_grad_()
            _ = dummy.grad  # a leaf: no warning
            self.assertEqual(len(caught), 0)
            dummy = dummy.clone()
            _ = dummy.grad  # a non-leaf: warns
            self.assertEqual(len(caught), 1)
            dummy.retain_grad()
            _ = dummy.grad  # a non-leaf that retains its grad: no further warning
            self.assertEqual(len(caught), 1)

    def _function_test(self, torch, cls):
        x = torch.randn(5, 5, requires_grad=True)
        y = torch.randn(5, 5, requires_grad=True)
        result = cls.apply(x, 2, y)
        go = torch.ones((), requires_grad=True)
        result.sum().backward(go, create_graph=True)
        self.assertEqual(x.grad, y + torch.ones(5, 5))
        self.assertEqual(y.grad, x + torch.ones(5, 5) * 2)
        self.assertIsNotNone(x.grad.grad_fn)
        self.assertIsNotNone(y.grad.grad_fn)
        return x, y

    def test_once_differentiable(self, torch):
        test = self

        class MyFunction(torch.autograd.Function):
            @staticmethod
            def forward(ctx, tensor1, pyscalar, tensor2):
                ctx.pyscalar = pyscalar
                ctx.save_for_backward(tensor1, tensor2)
                return tensor1 + pyscalar * tensor2 + tensor1 * tensor2

            @staticmethod
            @torch.autograd.function.once_differentiable
            def backward(ctx, grad_output):
                test.assertFalse(torch.is_grad_enabled())
                t1, t2 = ctx.saved_tensors
                return (
                    grad_output + grad_output * t2,
                    None,
                    grad_output * ctx.pyscalar + grad_output * t1,
                )

        x, y = self._function_test(torch, MyFunction)
        expected = "CopyBackwards(None, Error(AccumulateGrad(), None, AccumulateGrad()))"
        self.assertEqual(graph_desc(x.grad.grad_fn), expected)
        self.assertEqual(graph_desc(y.grad.grad_fn), expected)

    def test_function_returns_input(self, torch):
        class MyFunction(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad * 2

        for shape in [(1,), ()]:
            v = torch.ones(shape, requires_grad=True)
            MyFunction.apply(v).backward()
            self.assertEqual(v.grad, torch.full(shape, 2.0))
            with torch.no_grad():
                v.grad.zero_()
            MyFunction.apply(v.clone()).backward()
            self.assertEqual(v.grad, torch.full(shape, 2.0))

    def test_function_returns_undefined_tensor(self, torch):
        class MyFunction(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return None

        # A None from backward travels on as "no gradient", never as zeros.
        x = torch.ones(1, requires_grad=True)
        MyFunction.apply(x).backward()
        self.assertIsNone(x.grad)
        MyFunction.apply(x**2).backward()
        self.assertIsNone(x.grad)
        MyFunction.apply(x).sum().backward()
        self.assertIsNone(x.grad)
        self.assertIsNone(torch.autograd.grad(MyFunction.apply(x), x, allow_unused=True)[0])

    def test_set_materialize_non_diff_grads(self, torch):
        test = self

        class Func(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                out0, out1 = x.clone(), x.clone()
                ctx.mark_non_differentiable(out1)
                ctx._materialize_non_diff_grads = False
                return out0, out1

            @staticmethod
            def backward(ctx, g0, g1):
                test.assertIsNone(g1)
                return g0

        a = torch.tensor(1.0, requires_grad=True)
        Func.apply(a)[0].backward()

    def test_unused_grad_requires_grad_with_materialize(self, torch):
        x = torch.ones(10, requires_grad=True)
        y = torch.ones(10, requires_grad=True)
        z = (x**2).sum()
        g = torch.autograd.grad(
            z, (x, y), allow_unused=True, materialize_grads=True, create_graph=False
        )
        self.assertFalse(g[0].requires_grad)
        self.assertFalse(g[1].requires_grad)

    def test_legacy_function_deprecation_exception(self, torch):
        class MyFunction(torch.autograd.Function):
            def forward(self, x):
                return x

            def backward(self, grad_output):
                return grad_output

        with self.assertRaisesRegex(
            RuntimeError, "Legacy autograd function with non-static forward method is deprecated"
        ):
            MyFunction()(torch.randn(3, 4))

    def test_custom_function_exception(self, torch):
        class SimulateBackwardError(torch.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                return input.clone()

            @staticmethod
            @torch.autograd.function.once_differentiable
            def backward(ctx, input):
                raise Exception("Simulate error on backward pass")

        t1 = torch.rand((3, 3), requires_grad=True)
        t2 = torch.rand((3, 3), requires_grad=True)
        tmp = (t1 + t2) * (t1 + t2)
        t3 = SimulateBackwardError.apply(tmp)
        with self.assertRaisesRegex(Exception, "Simulate error on backward pass"):
            t3.sum().backward()

    def test_custom_function_non_tensor_inputs_outputs(self, torch):
        test = self

        class MyFunction(torch.autograd.Function):
            @staticmethod
            def forward(ctx, t1, t2, scale, t3):
                t4 = t1 + t2 * t3
                t5 = t1 * t2 + t3
                t4 *= scale
                t5 *= scale
                ctx.scale = scale
                ctx.save_for_backward(t1, t2, t3)
                return scale, t4, None, True, t5, "bar", t1

            @staticmethod
            @torch.autograd.function.once_differentiable
            def backward(ctx, *grads):
                test.assertEqual(7, len(grads))
                for i in (0, 2, 3, 5):  # the outputs that are not tensors get None
                    test.assertIsNone(grads[i])
                scale = ctx.scale
                var1, var2, var3 = ctx.saved_tensors
                return (
                    grads[1] * scale + grads[4] * var2 * scale + grads[6],
                    grads[1] * var3 * scale + grads[4] * var1 * scale,
                    None,
                    grads[1] * var2 * scale + grads[4] * scale,
                )

        t1 = torch.rand(10, dtype=torch.double, requires_grad=True)
        t2 = torch.rand(10, dtype=torch.double, requires_grad=True)
        t3 = torch.rand(10, dtype=torch.double)
        scale = random.randint(0, 10)
        res = MyFunction.apply(t1, t2, scale, t3)
        self.assertEqual(scale, res[0])
        self.assertEqual((t1 + t2 * t3) * scale, res[1])
        self.assertEqual(None, res[2])
        self.assertEqual(True, res[3])
        self.assertEqual((t1 * t2 + t3) * scale, res[4])
        self.assertEqual("bar", res[5])
        self.assertEqual(t1, res[6])

        torch.autograd.backward([res[1].sum(), res[4].sum(), res[6].sum()])
        self.assertIsNotNone(t1.grad)
        self.assertIsNotNone(t2.grad)
        self.assertIsNone(t3.grad)

        def foo(t1, t2, t3):
            res = MyFunction.apply(t1, t2, scale, t3)
            return res[1], res[4], res[6]

        self.assertTrue(torch.autograd.gradcheck(foo, (t1, t2, t3)))

    def test_custom_function_no_tensors(self, torch):
        class MyFunction(torch.autograd.Function):
            @staticmethod
            def forward(ctx, t1, t2, scale, t3):
                t4 = t1 + t2 * t3
                t5 = t1 * t2 + t3
                t4 *= scale
                t5 *= scale
                return scale, t4, None, True, t5, "bar", t1

            @staticmethod
            @torch.autograd.function.once_differentiable
            def backward(ctx, *args):
                return (args[0], args[1], None, args[2])

        t1, t2, t3 = random.random(), random.random(), random.random()
        scale = random.randint(0, 10)
        res = MyFunction.apply(t1, t2, scale, t3)
        self.assertEqual(scale, res[0])
        self.assertEqual((t1 + t2 * t3) * scale, res[1])
        self.assertEqual(None, res[2])
        self.assertEqual(True, res[3])
        self.assertEqual((t1 * t2 + t3) * scale, res[4])
        self.assertEqual("bar", res[5])
        self.assertEqual(t1, res[6])

    def test_invalid_gradients(self, torch):
        class MyFunction(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad_output):
                return torch.randn(10, dtype=torch.float)

        with self.assertRaisesRegex(RuntimeError, "expected shape"):
            input = torch.randn(5, 5, dtype=torch.float, requires_grad=True)
            MyFunction.apply(input).sum().backward()

    def test_unrelated_inputs(self, torch):
        # gradcheck and gradgradcheck pass with an input the output does not depend on.
        def my_function(x, y):
            return x * x

        x = torch.rand(10, dtype=torch.double, requires_grad=True)
        y = torch.rand(10, dtype=torch.double, requires_grad=True)
        self.assertTrue(torch.autograd.gradcheck(my_function, (x, y)))
        self.assertTrue(torch.autograd.gradgradcheck(my_function, (x, y)))

    def test_saved_tensor_hooks_extra_exit_during_bw_no_crash(self, torch):
        # Leaving a hooks context from inside an unpack hook is unsupported, but must not crash.
        def unpack(x):
            ctx_1.__exit__()
            return x

        ctx_1 = torch.autograd.graph.saved_tensors_hooks(lambda x: x, unpack)
        ctx_2 = torch.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x)
        for _ in range(10):
            with ctx_2:
                ctx_1.__enter__()
                x = torch.randn(3, 3, requires_grad=True)
                x.sin().sum().backward()
        for _ in range(10):
            ctx_1.__exit__()
        # No hooks are left on the stack: registering hooks on a saved tensor is allowed.
        a = torch.tensor(1.0, requires_grad=True)
        y = a.exp()
        y.grad_fn._raw_saved_result.register_hooks(lambda x: x, lambda x: x)

    def test_saved_tensor_hooks_extra_enter_during_bw_no_leak(self, torch):
        # Entering a hooks context from inside an unpack hook is unsupported, but must not leak.
        def scope():
            def unpack(x):
                weak_ctx_1().__enter__()
                return x

            ctx_1 = torch.autograd.graph.saved_tensors_hooks(lambda x: x, unpack)
            weak_ctx_1 = weakref.ref(ctx_1)
            x = torch.randn(3, 3, requires_grad=True)
            with ctx_1:
                x.sin().sum().backward()
            return weakref.ref(unpack)

        with disable_gc():
            unpack_hook_ref = scope()
            self.assertIsNone(unpack_hook_ref())

    def test_custom_function_setup_context_simple(self, torch):
        class MySquare(torch.autograd.Function):
            @staticmethod
            def forward(x):
                return x**2

            @staticmethod
            def setup_context(ctx, inputs, output):
                (x,) = inputs
                ctx.save_for_backward(x)

            @staticmethod
            def backward(ctx, gO):
                (x,) = ctx.saved_tensors
                return gO * 2 * x

        x = torch.randn([], requires_grad=True)
        y = MySquare.apply(x)
        (gx,) = torch.autograd.grad(y, x)
        self.assertEqual(gx, 2 * x)

    def test_custom_function_setup_context_multi_output(self, torch):
        class MySquare(torch.autograd.Function):
            @staticmethod
            def forward(x):
                two_x = x.item() * 2
                return x**2, two_x

            @staticmethod
            def setup_context(ctx, inputs, output):
                _, two_x = output
                ctx.two_x = two_x

            @staticmethod
            @torch.autograd.function.once_differentiable
            def backward(ctx, gO, _):
                return gO * ctx.two_x

        x = torch.randn([], requires_grad=True)
        y, _ = MySquare.apply(x)
        (gx,) = torch.autograd.grad(y, x)
        self.assertEqual(gx, 2 * x)

    def test_custom_function_setup_context_multi_input(self, torch):
        class MyReshape(torch.autograd.Function):
            @staticmethod
            def forward(x, shape, scale_forward, scale_backward):
                return x.reshape(shape) * scale_forward

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, shape, scale_forward, scale_backward = inputs
                ctx.scale_backward = scale_backward
                ctx.x_shape = x.shape

            @staticmethod
            def backward(ctx, gO):
                return gO.reshape(ctx.x_shape) * ctx.scale_backward, None, None, None

        class MyReshapeRef(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, shape, scale_forward, scale_backward):
                ctx.scale_backward = scale_backward
                ctx.x_shape = x.shape
                return x.reshape(shape) * scale_forward

            @staticmethod
            def backward(ctx, gO):
                return gO.reshape(ctx.x_shape) * ctx.scale_backward, None, None, None

        def check(x, shape, scale_forward, scale_backward):
            y = MyReshape.apply(x, shape, scale_forward, scale_backward).sum()
            (gx,) = torch.autograd.grad(y, x)
            y_expected = MyReshapeRef.apply(x, shape, scale_forward, scale_backward).sum()
            (gx_expected,) = torch.autograd.grad(y_expected, x)
            self.assertEqual(y_expected, y)
            self.assertEqual(gx_expected, gx)

        check(torch.randn(24, requires_grad=True), (3, 8), 7, 11)
        check(torch.randn(2, 3, 4, requires_grad=True), (6, 4), -1, 2)

    def test_accumulate_grad(self, torch):
        grad_output = torch.ones(5, 5)

        def compute_grad(create_graph):
            x = torch.randn(5, 5, requires_grad=True)
            y = x + 2
            y.backward(grad_output, retain_graph=True)
            x_grad = x.grad
            x_grad_clone = x.grad.clone()
            y.backward(grad_output, create_graph=create_graph)
            return x_grad, x_grad_clone

        # Without create_graph the second gradient is added into the first .grad in place.
        x_grad, x_grad_clone = compute_grad(create_graph=False)
        self.assertEqual(x_grad, x_grad_clone * 2)
        # With create_graph, .grad becomes a new tensor; the old one is left as it was.
        x_grad, x_grad_clone = compute_grad(create_graph=True)
        self.assertEqual(x_grad, x_grad_clone)

    def test_accumulate_grad_tensor_reference(self, torch):
        def check(params_grad_tensor, backward_grad_tensor, should_preserve_reference, cg):
            params = torch.tensor([1.5, 1.5]).requires_grad_()
            params.grad = params_grad_tensor
            grad_saved = params.grad
            params.backward(backward_grad_tensor, create_graph=cg)
            self.assertEqual(id(grad_saved) == id(params.grad), should_preserve_reference)

        for create_graph in (False, True):
            # Dense into dense keeps the same .grad object, but only without create_graph.
            check(
                torch.tensor([1.5, 1.5]), torch.tensor([1.5, 1.5]), not create_graph, create_graph
            )

    def test_accumulate_grad_with_zero_numel_grad(self, torch):
        a = torch.rand(4, 0, requires_grad=True)
        b = torch.rand(4, 1, requires_grad=True)
        c = a + b
        assert c.shape == (4, 0)
        c.sum().backward()
        self.assertEqual(b.grad, torch.zeros(4, 1))
        self.assertEqual(a.grad, torch.zeros(4, 0))

    def test_hessian_vector(self, torch):
        x = torch.randn(2, 2, requires_grad=True)
        y = torch.randn(2, 2, requires_grad=True)
        z = x**2 + y * x + y**2
        z.backward(torch.ones(2, 2), create_graph=True)
        with torch.no_grad():
            x_grad = 2 * x + y
            y_grad = x + 2 * y
        self.assertEqual(x.grad, x_grad)
        self.assertEqual(y.grad, y_grad)

        grad_sum = 2 * x.grad + y.grad
        grad_sum.backward(torch.ones(2, 2))
        x_hv = torch.ones(2, 2) * 5
        y_hv = torch.ones(2, 2) * 4
        self.assertEqual(x.grad, x_grad + x_hv)
        self.assertEqual(y.grad, y_grad + y_hv)

    @mini_fails(
        "error type or text",
        "str(Size) is 'mini_autograd.Size([2])' while the shape-mismatch error says 'torch.Size([2])'",
    )
    def test_grad(self, torch):
        x = torch.randn(2, 2, requires_grad=True)
        y = torch.randn(2, 2, requires_grad=True)
        z = x**2 + y * x + y**2
        z.backward(torch.ones(2, 2), create_graph=True)
        x_grad = 2 * x + y
        y_grad = x + 2 * y
        self.assertEqual(x.grad, x_grad)
        self.assertEqual(y.grad, y_grad)

        grad_sum = 2 * x.grad + y.grad
        x_hv = torch.autograd.grad(
            outputs=[grad_sum], grad_outputs=[torch.ones(2, 2)], inputs=[x], create_graph=True
        )
        self.assertEqual(x_hv[0], torch.ones(2, 2) * 5)
        self.assertEqual(x.grad, x_grad)  # autograd.grad leaves .grad alone
        self.assertEqual(y.grad, y_grad)

        grad_out = torch.ones(2)
        with self.assertRaises(RuntimeError) as caught:
            torch.autograd.grad(
                outputs=[grad_sum], grad_outputs=[grad_out], inputs=[x], create_graph=True
            )
        self.assertEqual(
            str(caught.exception),
            f"Mismatch in shape: grad_output[0] has a shape of {grad_out.shape} and "
            f"output[0] has a shape of {grad_sum.shape}.",
        )

    def test_grad_to_node(self, torch):
        def check_matches(out, inp):
            ref = torch.autograd.grad(out.sum(), inp)
            edge = torch.autograd.graph.get_gradient_edge(inp)
            new = torch.autograd.grad(out.sum(), edge)
            self.assertEqual(ref, new)

        # An AccumulateGrad node, a built-in node, a custom Function's node, a multi-output node.
        x = torch.rand(2, requires_grad=True)
        check_matches(x.clone(), x)
        x = x.clone()
        check_matches(x.clone(), x)
        functions = importlib.import_module(f"{torch.__name__}.autograd._functions")
        x = functions.Resize.apply(x, (2,))
        check_matches(x.clone(), x)
        x = torch.var_mean(x)[1]
        check_matches(x.clone(), x)

    def test_grad_to_node_set(self, torch):
        x = torch.rand(2, requires_grad=True)
        x_edge = torch.autograd.graph.get_gradient_edge(x)
        out = x.clone()
        with torch.no_grad():
            x.set_(torch.rand_like(x))
        with self.assertRaisesRegex(RuntimeError, "to not have been used in the graph"):
            torch.autograd.grad(out.sum(), x)
        torch.autograd.grad(out.sum(), x_edge)  # the edge still names the node that was used

    def test_grad_to_node_inplace(self, torch):
        x = torch.rand(2, requires_grad=True).clone()
        x_edge = torch.autograd.graph.get_gradient_edge(x)
        x *= 2
        g_old, g_new = torch.autograd.grad(x.sum(), (x_edge, x))
        self.assertEqual(g_old, 2 * torch.ones_like(x))
        self.assertEqual(g_new, torch.ones_like(x))

    def test_grad_to_node_multi(self, torch):
        x = torch.rand(2, requires_grad=True).clone()
        y = torch.rand(2, requires_grad=True).clone()
        out = x + y
        ref = torch.autograd.grad(out.sum(), (x, y))
        GradientEdge = torch.autograd.graph.GradientEdge
        inp_edges = (GradientEdge(x.grad_fn, x.output_nr), GradientEdge(y.grad_fn, y.output_nr))
        new = torch.autograd.grad(out.sum(), inp_edges)
        self.assertEqual(ref, new)

    def test_grad_to_node_materialize(self, torch):
        GradientEdge = torch.autograd.graph.GradientEdge
        x = torch.rand(2, requires_grad=True).clone()
        edge_x = GradientEdge(x.grad_fn, x.output_nr)
        y = torch.rand(2, requires_grad=True).clone()
        edge_y = GradientEdge(y.grad_fn, y.output_nr)
        out = x.clone()
        torch.autograd.grad(out.sum(), (edge_x, y), allow_unused=True, materialize_grads=True)
        torch.autograd.grad(out.sum(), (x, y), allow_unused=True, materialize_grads=True)
        torch.autograd.grad(out.sum(), (x, edge_y), allow_unused=True)
        with self.assertRaisesRegex(
            RuntimeError, "materialize_grads cannot be used when the given input is a GradientEdge"
        ):
            torch.autograd.grad(out.sum(), (x, edge_y), allow_unused=True, materialize_grads=True)

    def test_backward_to_node(self, torch):
        GradientEdge = torch.autograd.graph.GradientEdge
        x = torch.rand(2, requires_grad=True).clone()
        edge_x = GradientEdge(x.grad_fn, x.output_nr)
        y = torch.rand(2, requires_grad=True).clone()
        edge_y = GradientEdge(y.grad_fn, y.output_nr)
        out = x.clone()
        torch.autograd.backward(out.sum(), inputs=(edge_x, y))
        torch.autograd.backward(out.sum(), inputs=(x, y))
        torch.autograd.backward(out.sum(), inputs=(x, edge_y))
        torch.autograd.backward(out.sum(), inputs=(edge_x, edge_y))

    @mini_fails(
        "missing API",
        "a GradientEdge as an output of autograd.grad/backward (a node keeps no shapes of its "
        "outputs, which PyTorch's checks of grad_outputs read)",
    )
    def test_gradient_edge_output(self, torch):
        x = torch.tensor([1.0, 2.0], requires_grad=True)

        def fn(x, reduce=True):
            tmp = x.sin().cos()
            if reduce:
                tmp = tmp.sum()
            out = tmp.exp().clone().sin().sum()
            return out, torch.autograd.graph.get_gradient_edge(tmp)

        # Backward in two steps through the edge equals backward in one go.
        out, tmp_edge = fn(x)
        (tmp_grad,) = torch.autograd.grad(out, (tmp_edge,))
        (x_grad,) = torch.autograd.grad(tmp_edge, (x,), grad_outputs=(tmp_grad,))
        out, _ = fn(x)
        (x_grad_ref,) = torch.autograd.grad(out, (x,))
        self.assertEqual(x_grad, x_grad_ref)

        out, tmp_edge = fn(x, reduce=False)
        with self.assertRaisesRegex(
            RuntimeError, "grad can be implicitly created only for scalar output"
        ):
            torch.autograd.grad(tmp_edge, (x,))
        out, tmp_edge = fn(x, reduce=True)
        torch.autograd.grad(tmp_edge, (x,))  # a scalar output needs no grad_outputs

        out, tmp_edge = fn(x)
        with self.assertRaisesRegex(RuntimeError, "Mismatch in shape"):
            torch.autograd.grad(tmp_edge, (x,), grad_outputs=torch.tensor([1.0, 2.0, 3.0, 4.0]))

        out, tmp_edge = fn(x)
        torch.autograd.backward(tmp_edge, retain_graph=True)
        (x_grad_ref,) = torch.autograd.grad(tmp_edge, (x,), retain_graph=True)
        self.assertEqual(x.grad, x_grad_ref)

        x.grad = None
        torch.autograd.backward((tmp_edge,), retain_graph=True)
        self.assertEqual(x.grad, x_grad_ref)

        out1, tmp_edge1 = fn(x)
        out2, tmp_edge2 = fn(x)
        (x_grad_ref,) = torch.autograd.grad((tmp_edge1, out2), (x,), retain_graph=True)
        x.grad = None
        torch.autograd.backward((tmp_edge1, out2), retain_graph=True)
        self.assertEqual(x.grad, x_grad_ref)

        out, tmp_edge = fn(x)
        with self.assertRaisesRegex(RuntimeError, "Mismatch in shape"):
            torch.autograd.backward(
                tmp_edge, inputs=(x,), grad_tensors=torch.tensor([1.0, 2.0, 3.0, 4.0])
            )

    @mini_fails(
        "missing API",
        "a GradientEdge as an output of autograd.backward (a node keeps no shapes of its outputs)",
    )
    def test_gradient_edge_graph_ownership(self, torch):
        class Clone(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, gX):
                return gX.clone()

        inp = torch.rand(1, requires_grad=True).clone()
        # The edge keeps its node alive after the output is gone: a built-in node, a Function's.
        for make in (lambda t: t.clone(), Clone.apply):
            out = make(inp)
            edge = torch.autograd.graph.get_gradient_edge(out)
            torch.autograd.backward(edge)
            del out
            torch.autograd.backward(edge)

    def test_grad_nonleaf(self, torch):
        x_init = torch.randn(2, 2, requires_grad=True)
        x = x_init
        y = torch.randn(2, 2, requires_grad=True)
        grad_output = torch.ones(2, 2)

        def fn(x):
            return x**2 + y * x + y**2

        for _ in range(5):
            (grad_x,) = torch.autograd.grad(fn(x), x, grad_outputs=grad_output, create_graph=True)
            grad_x_expected = 2 * x + y
            self.assertIsNone(y.grad)
            self.assertIsNone(x.grad)
            self.assertEqual(grad_x, grad_x_expected)
            x = x + 0.05 * grad_x

        val_init = fn(x_init).sum()
        val_final = fn(x).sum()
        self.assertGreater(val_final, val_init)
        x.backward(grad_output)
        self.assertIsNotNone(y.grad)
        self.assertIsNotNone(x_init.grad)

    def test_grad_nonleaf_many_outputs(self, torch):
        # Two gradients of one node's outputs are captured; the leaf's hook never runs.
        x = torch.randn(4, 2, requires_grad=True)
        a, b = x.chunk(2)
        hook_called = [False]

        def hook(*grads):
            hook_called[0] = True

        x.register_hook(hook)
        go = torch.randn(2, 2)
        grad_a, grad_b = torch.autograd.grad(
            (a + 2 * b), [a, b], grad_outputs=go, create_graph=True
        )
        self.assertEqual(grad_a, go)
        self.assertEqual(grad_b, go * 2)
        self.assertFalse(hook_called[0])
        self.assertIsNone(x.grad)

    def test_grad_nonleaf_register_hook(self, torch):
        x = torch.randn(5, requires_grad=True)
        x_list = x.unbind()
        x0 = x_list[0]
        hook_results = [None]

        def hook(grad):
            hook_results[0] = grad

        x0.register_hook(hook)
        x_list[0].backward()
        self.assertEqual(hook_results[0], torch.tensor(1.0))
        expected_grad = torch.tensor([1.0, 0, 0, 0, 0])
        self.assertEqual(x.grad, expected_grad)
        self.assertIsNone(x_list[0].grad)

        for i in range(1, 5, 1):
            x_list[i].backward()
            self.assertEqual(hook_results[0], None)
            expected_grad[i] = 1.0
            self.assertEqual(x.grad, expected_grad)
            self.assertIsNone(x_list[i].grad)

    def test_grad_materialize_grads(self, torch):
        x = torch.tensor(0.5, requires_grad=True)
        a = torch.tensor(1.0, requires_grad=True)
        y = x * a
        dydx = torch.autograd.grad(y, x, create_graph=True)
        d2ydx2_none = torch.autograd.grad(dydx, x, create_graph=True, allow_unused=True)
        d2ydx2 = torch.autograd.grad(
            dydx, x, create_graph=True, allow_unused=True, materialize_grads=True
        )
        d3ydx3 = torch.autograd.grad(d2ydx2, x, materialize_grads=True)  # allow_unused implied
        self.assertIsNone(d2ydx2_none[0])
        self.assertEqual(d2ydx2[0].item(), 0)
        self.assertEqual(d3ydx3[0].item(), 0)
        with self.assertRaisesRegex(
            ValueError, "Expected allow_unused to be True or not passed when"
        ):
            torch.autograd.grad(y, x, allow_unused=False, materialize_grads=True)
