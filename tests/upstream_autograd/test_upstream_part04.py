"""TestAutograd, fourth part: in-place checks, custom Function outputs, setitem, detach, dtypes."""

import gc
import math
import pickle

from .harness import Harness, mini_fails


def inplace_function(torch):
    return torch.autograd.function.InplaceFunction


class TestAutograd(Harness):
    @mini_fails(
        "error type or text",
        "del x._grad_fn deletes the slot instead of raising torch's RuntimeError: a __delattr__ "
        "would route every attribute assignment of every tensor through Python (3x slower to make)",
    )
    def test_attribute_deletion(self, torch):
        x = torch.randn((5, 5), requires_grad=True)
        del x.grad
        self.assertIsNone(x.grad)
        with self.assertRaises(RuntimeError):
            del x.data
        with self.assertRaises(TypeError):
            x.data = None
        with self.assertRaises(RuntimeError):
            del x.requires_grad
        with self.assertRaises(RuntimeError):
            del x._grad_fn
        with self.assertRaises(RuntimeError):
            del x._backward_hooks

    def test_duplicate_backward_root(self, torch):
        a = torch.randn(5, 5, requires_grad=True)
        b = torch.randn(5, 5, requires_grad=True)
        x = a * b
        grad_output = torch.randn_like(x)
        torch.autograd.backward([x, x], [grad_output, grad_output])
        self.assertEqual(a.grad, b * grad_output * 2)
        self.assertEqual(b.grad, a * grad_output * 2)

    def test_backward_no_grad(self, torch):
        a = torch.randn(5, 5, requires_grad=True)
        b = a + 2
        with self.assertRaises(RuntimeError):
            torch.autograd.backward([b], [None])

    def test_backward_twice_with_saved_values(self, torch):
        b = torch.randn(3, requires_grad=True, dtype=torch.double)
        c = torch.zeros(3, dtype=torch.double)
        c[[1, 2]] = b[[1, 1]]
        c.backward(torch.tensor([1, 1, 1], dtype=torch.double))
        self.assertRaisesRegex(
            RuntimeError,
            "Specify retain_graph=True",
            lambda: c.backward(torch.tensor([1, 1, 1], dtype=torch.double)),
        )

    def test_backward_twice_retained_graph_with_saved_values(self, torch):
        b = torch.randn(3, requires_grad=True, dtype=torch.double)
        c = torch.zeros(3, dtype=torch.double)
        c[[1, 2]] = b[[1, 1]]
        c.backward(torch.tensor([1, 1, 1], dtype=torch.double), retain_graph=True)
        c.backward(torch.tensor([1, 1, 1], dtype=torch.double))

    def test_backward_twice_without_saved_values(self, torch):
        b = torch.randn(3, requires_grad=True, dtype=torch.double)
        c = b + 1
        c.backward(torch.tensor([1, 1, 1], dtype=torch.double))
        c.backward(torch.tensor([1, 1, 1], dtype=torch.double))

    def test_backward_twice_retained_graph_without_saved_values(self, torch):
        b = torch.randn(3, requires_grad=True, dtype=torch.double)
        c = torch.zeros(3, dtype=torch.double)
        c[[1, 2]] = b[[1, 1]]
        c.backward(torch.tensor([1, 1, 1], dtype=torch.double), retain_graph=True)
        c.backward(torch.tensor([1, 1, 1], dtype=torch.double))

    def test_backward_create_graph_warns(self, torch):
        import warnings

        warn_always = torch.is_warn_always_enabled()
        torch.set_warn_always(True)
        try:
            b = torch.randn(3, requires_grad=True, dtype=torch.double)
            c = b * b
            with warnings.catch_warnings(record=True) as ws:
                warnings.simplefilter("always")
                c.backward(torch.ones_like(c), create_graph=True)
            b.grad = None
            message = "Using backward() with create_graph=True"
            self.assertTrue(any(message in str(w.message) for w in ws))
            with warnings.catch_warnings(record=True) as ws:  # autograd.grad does not warn
                warnings.simplefilter("always")
                torch.autograd.grad(c, b, torch.ones_like(c), create_graph=True)
            self.assertFalse(any(message in str(w.message) for w in ws))
        finally:
            torch.set_warn_always(warn_always)

    def test_next_functions(self, torch):
        x = torch.randn(5, 5, requires_grad=True)
        y = torch.randn(5, 5, requires_grad=True)
        a = x + y
        self.assertIsNotNone(a.grad_fn)
        next_functions = a.grad_fn.next_functions
        self.assertEqual(len(next_functions), 2)
        # Upstream: isinstance(..., torch._C._functions.AccumulateGrad); here by class name.
        self.assertEqual(type(next_functions[0][0]).__name__, "AccumulateGrad")
        self.assertEqual(next_functions[0][1], 0)
        self.assertEqual(type(next_functions[1][0]).__name__, "AccumulateGrad")
        self.assertEqual(next_functions[1][1], 0)

        b = a + 5
        next_functions = b.grad_fn.next_functions
        self.assertEqual(len(next_functions), 2)
        self.assertIs(next_functions[0][0], a.grad_fn)
        self.assertIs(next_functions[1][0], None)

    def test_inplace(self, torch):
        Variable = torch.autograd.Variable
        x = torch.ones(5, 5, requires_grad=True)
        y = Variable(torch.ones(5, 5) * 4, requires_grad=True)

        z = x * y
        q = z + y
        w = z * y
        z.add_(2)
        q.backward(torch.ones(5, 5), retain_graph=True)  # add saves nothing: fine
        self.assertRaises(RuntimeError, lambda: w.backward(torch.ones(5, 5)))  # mul saved z

        z = x * y
        q = z * y
        r = z + y
        w = z.add_(y)
        w.backward(torch.ones(5, 5), retain_graph=True)  # w is the latest version
        r.backward(torch.ones(5, 5), retain_graph=True)  # r does not use z's value
        self.assertRaises(RuntimeError, lambda: q.backward(torch.ones(5, 5)))

        with torch.no_grad():
            x.grad.zero_()
        m = x / 2
        z = m + y / 8
        q = z * y
        r = z + y
        prev_version = z._version
        w = z.exp_()
        self.assertNotEqual(z._version, prev_version)
        r.backward(torch.ones(5, 5), retain_graph=True)
        self.assertEqual(x.grad, torch.ones(5, 5) / 2)
        w.backward(torch.ones(5, 5), retain_graph=True)
        self.assertEqual(x.grad, torch.empty(5, 5).fill_((1 + math.e) / 2))
        self.assertRaises(RuntimeError, lambda: q.backward(torch.ones(5, 5)))

        leaf = torch.ones(5, 5, requires_grad=True)
        x = leaf.clone()
        x.add_(10)
        self.assertEqual(x, torch.ones(5, 5) * 11)
        y = x + 2  # x is still usable
        y.backward(torch.ones(5, 5))
        self.assertEqual(leaf.grad, torch.ones(5, 5))
        z = x * y
        x.add_(2)
        self.assertRaises(RuntimeError, lambda: z.backward(torch.ones(5, 5)))

    def test_mark_non_differentiable(self, torch):
        class MyFunction(torch.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                output = input > 0
                ctx.mark_non_differentiable(output)
                return output

            @staticmethod
            def backward(ctx, grad_output):
                return (grad_output * 0).to(torch.double)

        x = torch.randn(5, 5, requires_grad=True)
        mask = MyFunction.apply(x)
        self.assertFalse(mask.requires_grad)
        y = x.masked_fill(mask, 0)
        y.sum().backward()

    def test_mark_non_differentiable_mixed(self, torch):
        test = self

        class MyFunction(torch.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                a = input + 1
                b = input + 2
                ctx.mark_non_differentiable(a)
                return a, b

            @staticmethod
            def backward(ctx, grad_a, grad_b):
                test.assertTrue((grad_a == 0).all())
                test.assertTrue((grad_b == 1).all())
                return grad_b

        x = torch.randn(5, 5, requires_grad=True)
        a, b = MyFunction.apply(x)
        self.assertFalse(a.requires_grad)
        self.assertTrue(b.requires_grad)
        b.sum().backward()
        self.assertEqual(x.grad, torch.ones(5, 5))

    def test_mark_non_differentiable_none(self, torch):
        # A None gradient from a Function must reach the built-in node before it safely.
        class MyFunction(torch.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                output = input.clone()
                ctx.mark_non_differentiable(output)
                return output

            @staticmethod
            def backward(ctx, grad_output):
                return None

        x = torch.randn(5, 5, requires_grad=True)
        r = MyFunction.apply(x * x)
        (r * x).sum().backward()

    def test_return_duplicate(self, torch):
        test = self

        class DoubleDuplicate(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                output = x * 2
                return output, output

            @staticmethod
            def backward(ctx, grad1, grad2):
                return grad1 * 2 + grad2 * 2

        def fn(x):
            a, b = DoubleDuplicate.apply(x)
            test.assertIs(a, b)
            return a + b

        x = torch.randn(5, 5, dtype=torch.double, requires_grad=True)
        self.assertTrue(torch.autograd.gradcheck(fn, [x]))
        self.assertTrue(torch.autograd.gradgradcheck(fn, [x]))

    def test_return_duplicate_inplace(self, torch):
        test = self

        class DoubleInplace(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x, x

            @staticmethod
            def backward(ctx, grad1, grad2):
                return grad1 * 2 + grad2 * 2

        def inplace_fn(x):
            a, b = DoubleInplace.apply(x.clone())
            test.assertIs(a, b)
            return a + b

        x = torch.randn(5, 5, dtype=torch.double, requires_grad=True)
        self.assertTrue(torch.autograd.gradcheck(inplace_fn, [x]))
        self.assertTrue(torch.autograd.gradgradcheck(inplace_fn, [x]))
        InplaceFunction = inplace_function(torch)
        # A leaf cannot be modified in place; a Function modifying a view returns one output.
        self.assertRaises(RuntimeError, lambda: InplaceFunction.apply(x))
        self.assertRaises(RuntimeError, lambda: InplaceFunction.apply(x.clone()[0]))

    def _test_setitem(self, torch, size, index):
        x = torch.ones(*size, requires_grad=True)
        y = x + 2
        y_version = y._version
        y[index] = 2
        self.assertNotEqual(y._version, y_version)
        y.backward(torch.ones(*size))
        expected_grad = torch.ones(*size)
        expected_grad[index] = 0
        self.assertEqual(x.grad, expected_grad)

    def _test_setitem_tensor(self, torch, size, index):
        x = torch.ones(*size, requires_grad=True)
        y = x + 2
        y_version = y._version
        value = x.new(x[index].size()).fill_(7)
        value.requires_grad = True
        y[index] = value
        self.assertNotEqual(y._version, y_version)
        y.backward(torch.ones(*size))
        expected_grad_input = torch.ones(*size)
        expected_grad_input[index] = 0
        self.assertEqual(x.grad, expected_grad_input)
        self.assertEqual(value.grad, torch.ones_like(value))

        x = torch.randn(4, requires_grad=True)  # x broadcasts into y[1]
        y = torch.zeros(2, 3, 4)
        y[1] = x
        y.backward(torch.randn(2, 3, 4))
        self.assertEqual(x.size(), x.grad.size())

    def test_setitem(self, torch):
        Variable = torch.autograd.Variable
        all_ = slice(None)
        for size, index in [
            ((5, 5), 1),
            ((5,), 1),
            ((1,), 0),
            ((10,), ([0, 4, 2])),
            ((5, 5), ([0, 4], [2, 2])),
            ((5, 5, 5), (all_, all_, [1, 3])),
            ((5, 5, 5), (all_, [1, 3], all_)),
            ((5, 5, 5), ([1, 3], all_, all_)),
            ((5, 5, 5), (all_, [2, 4], [1, 3])),
            ((5, 5, 5), ([1, 3], [2, 4], all_)),
        ]:
            self._test_setitem(torch, size, index)
        for size, index in [
            ((5, 5), 3),
            ((5, 5), ([0, 1], [1, 0])),
            ((5,), 3),
            ((5,), Variable(torch.LongTensor([3]), requires_grad=False).sum()),
            ((5,), [[0, 1, 2, 3]]),
            ((5, 5, 5), (all_, all_, [1, 3])),
            ((5, 5, 5), (all_, [1, 3], all_)),
            ((5, 5, 5), ([1, 3], all_, all_)),
            ((5, 5, 5), (all_, [2, 4], [1, 3])),
            ((5, 5, 5), ([1, 3], [2, 4], all_)),
            ((5, 5, 5), (Variable(torch.LongTensor([1, 3]), requires_grad=False), [2, 4], all_)),
        ]:
            self._test_setitem_tensor(torch, size, index)

    def test_setitem_mask(self, torch):
        Variable = torch.autograd.Variable
        mask = torch.BoolTensor(5, 5).bernoulli_()
        self._test_setitem(torch, (5, 5), Variable(mask))
        self._test_setitem(torch, (5,), Variable(mask[0]))
        self._test_setitem(torch, (1,), Variable(mask[0, 0:1]))
        self._test_setitem_tensor(torch, (5, 5), Variable(mask))
        self._test_setitem_tensor(torch, (5,), Variable(mask[0]))

    def test_select_sum(self, torch):
        x = torch.randn(10, dtype=torch.double, requires_grad=True)

        def func(x):
            return x.select(0, 1).sum()

        self.assertTrue(torch.autograd.gradcheck(func, [x]))
        self.assertTrue(torch.autograd.gradgradcheck(func, [x]))

    def test_diagonal_expanded_v(self, torch):
        value = torch.rand([])
        v_expanded = torch.tensor(value).expand(10)
        a = torch.rand(10, 10, dtype=torch.double, requires_grad=True)
        (result,) = torch.autograd.grad(a.diagonal(), a, v_expanded)
        self.assertEqual(result, torch.eye(10, dtype=torch.double) * value)

    def test_select_expanded_v(self, torch):
        v_expanded = torch.rand(10).expand(10, 10)
        a = torch.rand(10, 10, 10, requires_grad=True)
        (result,) = torch.autograd.grad(a[0], a, v_expanded)
        expected = torch.zeros(10, 10, 10)
        expected[0] = v_expanded
        self.assertEqual(result, expected)

    def test_slice_expanded_v(self, torch):
        v_expanded = torch.rand(10, 1).expand(2, 10, 10)
        a = torch.rand(10, 10, 10, requires_grad=True)
        (result,) = torch.autograd.grad(a[3:5], a, v_expanded)
        expected = torch.zeros(10, 10, 10)
        expected[3:5] = v_expanded
        self.assertEqual(result, expected)

    def test_unused_output(self, torch):
        x = torch.randn(10, 10, requires_grad=True)
        outputs = x.chunk(5)
        o = outputs[2]
        o = o * 4 + 2
        o.sum().backward()
        expected_grad = torch.zeros(10, 10)
        expected_grad[4:6] = 4
        self.assertEqual(x.grad, expected_grad)

        with torch.no_grad():
            x.grad.zero_()
        grad_output = torch.randn(2, 10)
        outputs = x.chunk(5)
        outputs[0].backward(grad_output)
        expected_grad = torch.zeros(10, 10)
        expected_grad[:2] = grad_output
        self.assertEqual(x.grad, expected_grad)

    @mini_fails(
        "missing API",
        "torch.bfloat16 (numpy has no bfloat16), in the last two cases; grad_dtype before them "
        "passes",
    )
    def test_grad_dtype(self, torch):
        leaf = torch.tensor([1.0, 2.0], requires_grad=True)
        self.assertEqual(leaf.grad_dtype, torch.float32)  # the tensor's dtype by default
        leaf.grad_dtype = torch.float16
        self.assertEqual(leaf.grad_dtype, torch.float16)
        leaf.grad_dtype = None  # any dtype
        self.assertIsNone(leaf.grad_dtype)

        non_leaf = leaf * 2
        self.assertFalse(non_leaf.is_leaf)
        with self.assertRaisesRegex(
            RuntimeError, "grad_dtype can only be accessed on leaf tensors"
        ):
            _ = non_leaf.grad_dtype
        with self.assertRaisesRegex(RuntimeError, "grad_dtype can only be set on leaf tensors"):
            non_leaf.grad_dtype = torch.float16

        x = torch.tensor([1.0, 2.0], requires_grad=True)
        x.grad = torch.tensor([1.0, 1.0])
        self.assertEqual(x.grad.dtype, torch.float32)
        x.grad = None
        x.grad_dtype = torch.float16
        with self.assertRaisesRegex(
            RuntimeError,
            "attempting to assign a gradient with dtype.*float.*to a tensor with grad_dtype.*Half",
        ):
            x.grad = torch.tensor([1.0, 1.0])
        x.grad = None
        x.grad_dtype = None
        x.grad = torch.tensor([1.0, 1.0], dtype=torch.float64)
        self.assertEqual(x.grad.dtype, torch.float64)

        class MismatchedGradientFunction(torch.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                return inp * 2

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output.to(torch.float64)

        d = torch.tensor([1.0, 2.0], requires_grad=True)
        MismatchedGradientFunction.apply(d).sum().backward()
        self.assertEqual(d.grad.dtype, torch.float32)  # cast to the tensor's dtype
        self.assertTrue(torch.allclose(d.grad, torch.tensor([1.0, 1.0])))

        e = torch.tensor([3.0, 4.0], requires_grad=True)
        e.grad_dtype = None
        MismatchedGradientFunction.apply(e).sum().backward()
        self.assertTrue(torch.allclose(e.grad, torch.tensor([1.0, 1.0], dtype=torch.float64)))

        f = torch.tensor([5.0, 6.0], requires_grad=True)
        f.grad_dtype = torch.float16
        MismatchedGradientFunction.apply(f).sum().backward()
        self.assertTrue(torch.allclose(f.grad, torch.tensor([1.0, 1.0], dtype=torch.float16)))

        g = torch.tensor([1.0, 2.0], requires_grad=True)
        g.grad = torch.tensor([1.0, 1.0])
        g.grad_dtype = torch.float32
        self.assertEqual(g.grad_dtype, torch.float32)
        with self.assertRaisesRegex(
            RuntimeError, "Cannot set grad_dtype.*because there is already a gradient"
        ):
            g.grad_dtype = torch.float16
        g.grad_dtype = None
        self.assertIsNone(g.grad_dtype)
        g.grad = None
        g.grad_dtype = torch.float16
        self.assertEqual(g.grad_dtype, torch.float16)

        h = torch.tensor([1.0, 2.0], requires_grad=True)
        _ = h.clone()  # h has an AccumulateGrad node already
        h.grad_dtype = None
        MismatchedGradientFunction.apply(h).sum().backward()
        self.assertEqual(h.grad.dtype, torch.float64)

        k = torch.tensor([1.0, 2.0], requires_grad=True)
        k.grad_dtype = None
        (k * 2).sum().backward()
        k.grad = k.grad.to(torch.bfloat16)
        _ = k * 3
        self.assertEqual(k.grad.dtype, torch.bfloat16)

        m = torch.tensor([3.0, 4.0], requires_grad=True, dtype=torch.bfloat16)
        m.grad_dtype = None
        (m * 2).sum().backward()
        m.grad = m.grad.to(torch.float32)
        (m * 3).sum().backward()
        self.assertEqual(m.grad.dtype, torch.float32)

    def test_gc_in_destructor(self, torch):
        # A Function whose destructor collects garbage must not crash.
        class CollectOnDelete(torch.autograd.Function):
            def forward(self, x):
                return x

            def backward(self, grad_output):
                return grad_output

            def __del__(self):
                gc.collect()

        for _ in range(10):
            CollectOnDelete().forward(torch.randn(1, requires_grad=True)).backward()

    def test_custom_autograd_repeated_grad_grad(self, torch):
        def mult1(x):
            return x.prod(dim=-1).prod(dim=-1)

        class Mult(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = mult1(x)
                ctx.save_for_backward(x, y)
                return y

            @staticmethod
            def backward(ctx, grad_output):
                x, y = ctx.saved_tensors
                return (grad_output * y)[:, None, None] / x

        mult2 = Mult.apply

        def check_gradgrad_repeated(x, y):
            (gy,) = torch.autograd.grad(y[0], x, create_graph=True)
            (ggy_1,) = torch.autograd.grad(gy[0, 0, 0], x, retain_graph=True)
            (gy,) = torch.autograd.grad(y[0], x, create_graph=True)
            (ggy_2,) = torch.autograd.grad(gy[0, 0, 0], x, retain_graph=True)
            self.assertEqual(ggy_1[0, 0, 1], ggy_2[0, 0, 1])

        x = torch.ones(2, 4, 4).requires_grad_()
        check_gradgrad_repeated(x, mult1(x))
        check_gradgrad_repeated(x, mult2(x))

    def test_custom_autograd_no_early_free(self, torch):
        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x**2
                ctx.save_for_backward(x, y)
                return y

            @staticmethod
            def backward(ctx, grad_output):
                x, _ = ctx.saved_tensors
                return grad_output * 2 * x

        class Double2(Double):  # the same, using forward's output in backward
            @staticmethod
            def backward(ctx, grad_output):
                x, y = ctx.saved_tensors
                return grad_output * 2 * y / x

        double, double2 = Double.apply, Double2.apply
        x = torch.tensor(2).double().requires_grad_()
        self.assertTrue(torch.autograd.gradcheck(double, x))
        self.assertTrue(torch.autograd.gradgradcheck(double, x))
        self.assertTrue(torch.autograd.gradcheck(double2, x))
        self.assertTrue(torch.autograd.gradgradcheck(double2, x))

        y = double(x)
        torch.autograd.grad(y, x, create_graph=True)
        torch.autograd.grad(y, x)
        y = double2(x)
        torch.autograd.grad(y, x, create_graph=True)
        torch.autograd.grad(y, x)

    def test_detach(self, torch):
        x = torch.randn(10, 10, requires_grad=True)
        y = x + 2
        y = y.detach()
        z = y * 4 + 2
        self.assertFalse(y.requires_grad)
        self.assertFalse(z.requires_grad)

        x = torch.randn(10, 10, requires_grad=True)
        y = x * 2
        y = y.detach()
        self.assertFalse(y.requires_grad)
        self.assertIsNone(y.grad_fn)
        z = x + y
        z.sum().backward()
        self.assertEqual(x.grad, torch.ones(10, 10))  # detach() hides y's dependence on x

        x = torch.randn(10, 10, requires_grad=True)
        y = torch.randn(10, 10, requires_grad=True)
        a = x * 2
        (y + a).sum().backward(retain_graph=True)
        a.detach_()
        self.assertFalse(a.requires_grad)
        (y + a).sum().backward()  # does not reach x
        self.assertEqual(x.grad, torch.ones(10, 10) * 2)
        self.assertEqual(y.grad, torch.ones(10, 10) * 2)

        view = x.narrow(0, 1, 4)
        self.assertRaisesRegex(RuntimeError, "view", lambda: view.detach_())

    def test_detach_base(self, torch):
        # Detaching the base does not detach its view.
        x = torch.randn(10, 10, requires_grad=True)
        view = x.narrow(0, 1, 4)
        x.detach_()
        self.assertFalse(x.requires_grad)
        self.assertTrue(view.requires_grad)
        self.assertIsNotNone(view.grad_fn)
        self.assertIs(view._base, x)

    def test_detach_then_inplace_raises_in_autograd(self, torch):
        x = torch.randn([], requires_grad=True)
        y = x**2  # saves x
        z = x.detach()
        z.zero_()  # shares x's version counter
        with self.assertRaisesRegex(RuntimeError, "has been modified by an inplace"):
            y.backward()

    def test_type_conversions(self, torch):
        Variable = torch.autograd.Variable
        x = torch.randn(5, 5)
        self.assertIsInstance(x.float(), torch.FloatTensor)
        self.assertIsInstance(x.int(), torch.IntTensor)
        for t in [torch.DoubleTensor, torch.FloatTensor, torch.IntTensor, torch.ByteTensor]:
            for y_var in (True, False):
                y = torch.randint(5, (5, 5), dtype=t.dtype)
                y = Variable(y) if y_var else y
                self.assertIsInstance(x.type(t), t)
                self.assertIsInstance(x.type_as(y), t)
                t_dtype = t().dtype
                self.assertIsInstance(x.type(t_dtype), t)
                self.assertIs(t_dtype, x.type(t_dtype).dtype)
                self.assertEqual(y.data_ptr(), y.type(t).data_ptr())

        fvar = Variable(torch.randn(5, 5).float(), requires_grad=True)
        fvar.double().sum().backward()
        self.assertEqual(fvar.grad, torch.ones_like(fvar))
        self.assertEqual(type(fvar.grad), type(fvar))
        dvar = Variable(torch.randn(5, 5).double(), requires_grad=True)
        dvar.float().sum().backward()
        self.assertEqual(dvar.grad, torch.ones_like(dvar))
        self.assertEqual(type(dvar.grad), type(dvar))

    def test_isolated_node(self, torch):
        x = torch.randn(5, 5, requires_grad=True)
        y = torch.randn(5, 5, requires_grad=True)
        a = x + y
        b = torch.max(a, 1, True)[1].repeat(1, 5).double()
        o = (b + a).sum()
        o.backward()

    def test_shape(self, torch):
        x = torch.randn(3, 4)
        self.assertEqual(2, len(x.shape))
        self.assertEqual(x.shape[0], 3)
        self.assertEqual(x.shape[1], 4)

    def test_numpy_requires_grad(self, torch):
        x = torch.randn(2, 2, requires_grad=True)
        err_msg_outputs = (
            r"Can't call numpy\(\) on Tensor that requires grad. "
            r"Use tensor.detach\(\).numpy\(\) instead."
        )
        with self.assertRaisesRegex(RuntimeError, err_msg_outputs):
            x.numpy()
        with torch.no_grad():
            x.numpy()
        x = torch.randn(2, 2)
        x.numpy()
        with torch.no_grad():
            x.numpy()

    def test_return_leaf(self, torch):
        test = self

        class Identity(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a, a + b

            @staticmethod
            def backward(ctx, grad_a, grad_b):
                return grad_a + grad_b, grad_b

        hook_called = [False]
        x = torch.randn(5, 5, requires_grad=True)
        y = torch.randn(5, 5, requires_grad=True)
        q, p = Identity.apply(x, y)

        def hook(grad):  # gets the gradient from q's use only, not x's
            hook_called[0] = True
            test.assertEqual(grad, torch.ones(5, 5))

        q.register_hook(hook)
        (q + p + x).sum().backward()
        self.assertEqual(x.grad, torch.ones(5, 5) * 3)
        self.assertEqual(y.grad, torch.ones(5, 5))
        self.assertTrue(hook_called[0])

    def test_return_leaf_inplace(self, torch):
        class Inplace(inplace_function(torch)):
            @staticmethod
            def forward(ctx, a, b):
                ctx.mark_dirty(a)
                return a.add_(b), b + 2

            @staticmethod
            def backward(ctx, grad_a, grad_b):
                return grad_a, grad_a + grad_b

        x = torch.randn(5, 5)
        y = torch.randn(5, 5, requires_grad=True)
        q, p = Inplace.apply(x, y)
        self.assertIs(q, x)
        self.assertIs(q.grad_fn.__class__, Inplace._backward_cls)
        self.assertTrue(q.requires_grad)
        q.sum().backward()
        self.assertEqual(y.grad, torch.ones(5, 5))

    def test_leaf_assignment(self, torch):
        x = torch.randn(5, 5)
        y = torch.randn(5, requires_grad=True)
        z = torch.randn(5, requires_grad=True)
        x[0] = y
        x[1] = 2 * z
        self.assertTrue(x.requires_grad)
        self.assertIsNot(x.grad_fn, None)
        x.sum().backward()
        self.assertEqual(y.grad, torch.ones(5))
        self.assertEqual(z.grad, torch.ones(5) * 2)

    def test_no_grad_assignment(self, torch):
        x = torch.randn(5, 5, requires_grad=True)
        y = torch.randn(5)
        with torch.no_grad():
            x[0] = y
        self.assertTrue(x.requires_grad)
        self.assertIsNone(x.grad_fn)

    def test_no_grad_modifies_version(self, torch):
        x = torch.randn(5, requires_grad=True)
        y = torch.randn(5, requires_grad=True)
        z = (x * y).sum()
        with torch.no_grad():
            x *= 2
        self.assertRaisesRegex(
            RuntimeError, "modified by an inplace operation", lambda: z.backward()
        )

    def test_increment_version(self, torch):
        a = torch.rand(5, requires_grad=True)
        v = a._version
        torch.autograd.graph.increment_version(a)
        self.assertEqual(a._version, v + 1)

        a = torch.zeros(5, dtype=torch.int)
        v = a._version
        torch.autograd.graph.increment_version(a)
        self.assertEqual(a._version, v + 1)

        with torch.inference_mode():
            a = torch.rand(5, requires_grad=True)
            torch.autograd.graph.increment_version(a)  # an inference tensor: no error
        torch.autograd.graph.increment_version(a)

    def test_no_grad_input(self, torch):
        class MyFunction(torch.autograd.Function):
            @staticmethod
            def forward(self, x):
                return x

            @staticmethod
            def backward(self, grad_output):
                return grad_output

        x = torch.randn(5, requires_grad=True)
        with torch.no_grad():
            y = MyFunction.apply(x)
        self.assertTrue(x.requires_grad)
        self.assertIsNone(y.grad_fn)

    def test_backward_copy(self, torch):
        # One gradient buffered in three places must not be summed into in place.
        x = torch.ones(5, 5, requires_grad=True)
        y = torch.ones(5, 5, requires_grad=True)
        a = x + 2
        b = y + 2
        c = x + 2
        add1 = a + b  # its backward hands the same grad_output on twice
        add2 = add1 + c
        for _ in range(4):  # a long branch, so the gradient gets buffered
            a = a * 2
            b = b * 2
            c = c * 2
        branch = a + b + c
        out = add2 + branch
        out.backward(torch.ones(5, 5))
        self.assertEqual(x.grad, torch.ones(5, 5) * 34)  # 16 from a, 16 from c, 2 from add2
        self.assertEqual(y.grad, torch.ones(5, 5) * 17)  # 16 from b, 1 from add2

    def test_save_none_for_backward(self, torch):
        test_case = self

        class MyFn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                ctx.save_for_backward(None, input, None)
                return input * input

            @staticmethod
            def backward(ctx, grad_output):
                n1, input, n2 = ctx.saved_tensors
                test_case.assertIsNone(n1)
                test_case.assertIsNone(n2)
                return 2 * input * grad_output

        x = torch.randn(5, 5, requires_grad=True)
        MyFn.apply(x).sum().backward()
        self.assertEqual(x.grad, 2 * x)

    def test_too_many_grads(self, torch):
        class MyFn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                return input

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output, None, None  # extra Nones are allowed

        x = torch.randn(5, 5, requires_grad=True)
        MyFn.apply(x).sum().backward()
        self.assertEqual(x.grad, torch.ones_like(x))

    def test_pickle(self, torch):
        x = torch.randn(10, 10, requires_grad=True)
        y = torch.randn(10, 10, requires_grad=False)
        for protocol in range(3):
            xc, yc = pickle.loads(pickle.dumps([x, y], protocol=protocol))
            for copy, original in ((xc, x), (yc, y)):
                self.assertEqual(copy, original)
                self.assertEqual(copy.requires_grad, original.requires_grad)

    def test_dep_nograd(self, torch):
        class F1(torch.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                out = torch.randn(input.size())
                ctx.mark_non_differentiable(out)
                return input, out

            @staticmethod
            def backward(ctx, grad_output, ignored):
                return grad_output

        class F2(torch.autograd.Function):
            @staticmethod
            def forward(ctx, input, ignored):
                return input

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output, None

        x = torch.randn(5, requires_grad=True)
        a, b = F1.apply(x)
        b = b + 1  # another op between F1 and F2
        self.assertTrue(a.requires_grad)
        self.assertFalse(b.requires_grad)
        c = F2.apply(a, b)
        c.backward(torch.ones(c.size()))
        self.assertEqual(x.grad, torch.ones(x.size()))

    def test_set_grad_enabled(self, torch):
        x = torch.tensor([1.0], requires_grad=True)
        with torch.set_grad_enabled(False):
            y = x * 2
        self.assertFalse(y.requires_grad)
        with torch.set_grad_enabled(True):
            y = x * 2
        self.assertTrue(y.requires_grad)
        with torch.set_grad_enabled(False):
            torch.set_grad_enabled(True)
            y = x * 2
        self.assertTrue(y.requires_grad)

    def test_set_grad_enabled_wraps(self, torch):
        for decorator in [True, False]:
            with torch.enable_grad():
                self.assertTrue(torch.is_grad_enabled())
                if decorator:

                    @torch.set_grad_enabled(False)  # must not change the global mode
                    def inner_func(x):
                        return x.sin()

                else:

                    def inner_func(x):
                        return x.sin()

                    obj = torch.set_grad_enabled(False)  # sets the mode at once...
                    self.assertTrue(not torch.is_grad_enabled())
                    inner_func = obj(inner_func)  # ...and decorating takes it back
                    self.assertTrue(torch.is_grad_enabled())

                self.assertTrue(torch.is_grad_enabled())
                x = torch.zeros(1, requires_grad=True)
                self.assertTrue(not inner_func(x).requires_grad)

    def test_simple_reentrant(self, torch):
        Variable = torch.autograd.Variable
        y_data = torch.randn(2, 2)

        class Reenter(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                with torch.enable_grad():
                    ctx.x = Variable(x, requires_grad=True)
                    ctx.y = Variable(y_data, requires_grad=True)
                    ctx.output_var = ctx.x * ctx.y
                return ctx.output_var.detach()

            @staticmethod
            def backward(ctx, grad_output):
                with torch.enable_grad():
                    ctx.output_var.sum().backward()
                return ctx.x.grad * grad_output

        x = torch.randn(2, 2, requires_grad=True)
        out = Reenter.apply(x)
        out.sum().backward()
        self.assertEqual(x.grad, y_data)
