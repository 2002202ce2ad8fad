"""TestAutogradDeviceType, its CPU instantiation (upstream names end in _cpu and the dtype)."""

import math
import sys
from itertools import product

import pytest

from .harness import Harness, mini_fails

DEVICE = "cpu"


def mask_not_all_zeros(torch, shape):
    """A random boolean mask with at least one True (torch's common_methods_invocations)."""
    while True:
        result = torch.randn(shape).gt(0)
        if result.sum() > 0:
            return result


class TestAutogradDeviceTypeCPU(Harness):
    def test_min_max_median_backprops_to_all_values_cpu(self, torch):
        device = DEVICE
        for f in [torch.min, torch.max, torch.median, torch.nanmedian]:
            x1 = torch.tensor([1.0, 0.0, 1.0, 0.0, 1.0, 0.0], device=device, requires_grad=True)
            x2 = torch.tensor([float("nan"), float("nan"), float("nan")], requires_grad=True)
            for x in [x1, x2]:
                y = f(x)
                y.backward()
                # The gradient is shared evenly among the tied extreme values.
                self.assertEqual(x.grad.sum(), 1.0)
                self.assertEqual((x.grad == 1 / 3).sum(), 3)

    def test_scatter_index_reduce_amin_amax_backprops_to_all_values_cpu(self, torch):
        device = DEVICE
        for fn, reduction in product((torch.scatter_reduce, torch.index_reduce), ("amin", "amax")):
            input = torch.randn((2, 3), device=device, dtype=torch.float64, requires_grad=True)
            src = input.clone().detach_().requires_grad_(True)
            idx = torch.arange(2).to(dtype=torch.long, device=device)
            if fn == torch.scatter_reduce:
                idx = idx.unsqueeze(-1).expand((2, 3))
            self.assertTrue(torch.autograd.gradcheck(fn, (input, 0, idx, src, reduction)))

    def test_scatter_index_reduce_prod_gradgrad_error_cpu(self, torch):
        device = DEVICE
        # Two zeros of src scattered to one position: double backward is refused.
        input = torch.tensor([1.0], device=device, dtype=torch.float64, requires_grad=True)
        src = torch.tensor([0.0, 0.0], device=device, dtype=torch.float64, requires_grad=True)
        idx = torch.tensor([0, 0], device=device, dtype=torch.long)
        for fn in (torch.scatter_reduce, torch.index_reduce):
            self.assertTrue(torch.autograd.gradcheck(fn, (input, 0, idx, src, "prod")))
            with self.assertRaisesRegex(RuntimeError, "Double backward is unsupported for"):
                torch.autograd.gradgradcheck(fn, (input, 0, idx, src, "prod"))

    def test_parameter_resize_cpu(self, torch):
        asd = torch.nn.Parameter(torch.ones(16, dtype=torch.double, device=DEVICE))
        for _ in range(2):
            with torch.no_grad():
                asd.set_(asd[1:])
                asd.grad = None
            m = torch.cat((asd, asd))
            m.sum().backward()

    def test_pyscalar_conversions_cpu(self, torch):
        Variable = torch.autograd.Variable

        def t(x):
            return x.to(DEVICE)

        def integral_conv(x):
            return int(x)

        long_t = t(torch.zeros(1, 1, 1, dtype=torch.long))  # integral -> integral
        pyscalar = -12345
        long_t[0] = pyscalar
        self.assertEqual(integral_conv(long_t), pyscalar)

        f = Variable(t(torch.randn(1, 1, dtype=torch.double)))  # float -> float
        pyscalar = -12345.1
        f[0] = pyscalar
        self.assertEqual(float(f), pyscalar)
        f[0] = math.nan
        self.assertTrue(math.isnan(float(f)))
        f[0] = math.inf
        self.assertEqual(float(f), math.inf)
        f[0] = -math.inf
        self.assertEqual(float(f), -math.inf)

        pyscalar = 1234567890123456789  # integral -> float, losing precision
        self.assertNotEqual(pyscalar, integral_conv(float(pyscalar)))
        long_t[0] = pyscalar
        self.assertEqual(float(long_t), float(pyscalar))

        f[0] = math.nan  # float -> integral
        self.assertRaises(ValueError, lambda: integral_conv(f[0]))
        f[0] = math.inf
        self.assertRaises(OverflowError, lambda: integral_conv(f[0]))
        f[0] = -math.inf
        self.assertRaises(OverflowError, lambda: integral_conv(f[0]))
        f[0] = sys.float_info.max
        self.assertEqual(integral_conv(f), sys.float_info.max)

        def test_nonzero(tensor, value, expected):
            tensor[0] = value
            self.assertEqual(expected, bool(tensor))
            self.assertEqual(expected, bool(tensor))

        test_nonzero(long_t, 0, False)
        test_nonzero(long_t, -2, True)
        test_nonzero(f, 0.0, False)
        test_nonzero(f, sys.float_info.min, True)
        test_nonzero(f, math.nan, bool(math.nan))
        test_nonzero(f, math.inf, bool(math.inf))
        test_nonzero(f, -math.inf, bool(-math.inf))

    @pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int16", "int32", "int64"])
    def test_set_requires_grad_only_for_floats_cpu(self, torch, dtype):
        dtype = getattr(torch, dtype)

        def f1():
            a = torch.ones(1, dtype=dtype, device=DEVICE)
            a.requires_grad_()

        def f2():
            a = torch.ones(1, dtype=dtype, device=DEVICE)
            a.requires_grad = True

        def f3():
            torch.ones(1, dtype=dtype, device=DEVICE, requires_grad=True)

        a = torch.ones(1, dtype=dtype, device=DEVICE)
        a.requires_grad = False  # always allowed
        a.requires_grad_(False)
        for f in [f1, f2, f3]:
            if dtype.is_floating_point:
                f()
            else:
                with self.assertRaisesRegex(RuntimeError, "floating point"):
                    f()

    def test_advanced_indexing_backwards_memory_format_cpu(self, torch):
        shape = (2, 8, 1, 2)
        i = torch.randint(1, shape, device=DEVICE).contiguous(memory_format=torch.channels_last)
        x = torch.randn(shape, requires_grad=True, device=DEVICE)
        x[i].sum().backward()

    def test_where_functional_cpu(self, torch):
        gradcheck, gradgradcheck = torch.autograd.gradcheck, torch.autograd.gradgradcheck
        x = torch.randn(5, 5, dtype=torch.double, device=DEVICE, requires_grad=True)
        y = torch.randn(5, 5, dtype=torch.double, device=DEVICE, requires_grad=True)
        cond = mask_not_all_zeros(torch, (5, 5)).to(device=DEVICE)

        def where(cond, x, y):
            return torch.where(cond, x, y)

        self.assertTrue(gradcheck(where, [cond, x, y], raise_exception=True))
        self.assertTrue(gradgradcheck(where, [cond, x, y], [torch.randn(5, 5, device=DEVICE)]))

        x = torch.randn(5, 1, 5, dtype=torch.double, device=DEVICE, requires_grad=True)
        y = torch.randn(5, 5, 1, dtype=torch.double, device=DEVICE, requires_grad=True)
        self.assertTrue(gradcheck(where, [cond, x, y], raise_exception=True))
        self.assertTrue(gradgradcheck(where, [cond, x, y], [torch.randn(5, 5, 5, device=DEVICE)]))

    def test_where_scalar_cpu(self, torch):
        gradcheck, gradgradcheck = torch.autograd.gradcheck, torch.autograd.gradgradcheck
        x = torch.randn(5, 5, dtype=torch.double, device=DEVICE, requires_grad=True)
        scalar = 4.0
        cond = mask_not_all_zeros(torch, (5, 5)).to(device=DEVICE)

        def where_scalar_first(cond, x):
            return torch.where(cond, scalar, x)

        def where_scalar_second(cond, x):
            return torch.where(cond, x, scalar)

        for fn in (where_scalar_first, where_scalar_second):
            self.assertTrue(gradcheck(fn, (cond, x)))
            self.assertTrue(gradgradcheck(fn, (cond, x)))

    def test_profiler_emit_itt_cpu(self, torch):
        a = torch.tensor([1, 2, 3], dtype=torch.float32, device=DEVICE)
        with torch.autograd.profiler.emit_itt():  # only that it constructs
            a.add(1.0)

    def test_grad_assignment_cpu(self, torch):
        x = torch.randn(5, 5, device=DEVICE)
        with self.assertRaisesRegex(TypeError, "expected to be a Tensor or None"):
            x.grad = 0
        with self.assertRaises(RuntimeError):  # wrong shape
            x.grad = torch.randn(2, 2, device=DEVICE)
        with self.assertRaises(RuntimeError):  # wrong dtype
            x.grad = torch.randn(5, 5, dtype=torch.long, device=DEVICE)
        with self.assertRaises(RuntimeError):  # itself
            x.grad = x

    @pytest.mark.parametrize("dtype", ["float32", "float64"])
    def test_requires_grad_factory_cpu(self, torch, dtype):
        dtype = getattr(torch, dtype)
        x = torch.randn(2, 3, dtype=dtype, device=DEVICE)
        for fn in [torch.ones_like, torch.randn_like]:
            for requires_grad in [True, False]:
                output = fn(x, dtype=dtype, device=DEVICE, requires_grad=requires_grad)
                self.assertEqual(requires_grad, output.requires_grad)
                self.assertIs(dtype, output.dtype)
                self.assertEqual(DEVICE, str(x.device))

    @mini_fails("missing API", "torch.bfloat16")
    def test_copy__cpu(self, torch):
        x = torch.randn(10, device=DEVICE, requires_grad=True)
        for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
            y = torch.empty(10, device=DEVICE, dtype=dt)
            y.copy_(x)
            self.assertTrue(y.requires_grad)
            z = x.to(torch.bfloat16)
            self.assertTrue(z.requires_grad)

    def test_inplace_on_view_backprop_base_cpu(self, torch):
        root = torch.randn(2, 2, device=DEVICE, requires_grad=True)
        x = root.clone()
        v1 = x.narrow(0, 0, 1)
        v1.mul_(2)  # modify the view, backprop through the base
        x.sum().backward()
        self.assertEqual(root.grad.tolist(), [[2, 2], [1, 1]])

    def test_inplace_on_view_backprop_view_of_view_cpu(self, torch):
        root = torch.randn(2, 2, device=DEVICE, requires_grad=True)
        x = root.clone()
        v1 = x.narrow(0, 0, 1)
        v2 = x.narrow(0, 0, 1)
        v1.mul_(2)  # modify one view, backprop through another
        v2.sum().backward()
        self.assertEqual(root.grad.tolist(), [[2, 2], [0, 0]])

    def test_inplace_on_view_of_view_cpu(self, torch):
        root = torch.randn(2, 2, device=DEVICE, requires_grad=True)
        x = root.clone()
        v1 = x.narrow(0, 0, 1)
        v2 = v1.narrow(1, 1, 1)
        v2.mul_(2)  # modify a view of a view, backprop through the base
        x.sum().backward()
        self.assertEqual(root.grad.tolist(), [[1, 2], [1, 1]])

    def test_inplace_on_view_then_no_grad_cpu(self, torch):
        a = torch.ones(3, 1, dtype=torch.double, device=DEVICE, requires_grad=True)
        b = a * 2
        c = b.view_as(b)
        c[0][0] = 3
        with torch.no_grad():
            _ = c.grad_fn  # the graph update happens with grad mode off
        c.sum().backward()

    def test_inplace_on_view_gradcheck_cpu(self, torch):
        a = torch.randn(4, 4, dtype=torch.double, device=DEVICE, requires_grad=True)
        b = torch.randn(2, 2, dtype=torch.double, device=DEVICE, requires_grad=True)

        def func(root, b):
            x = root.clone()
            x.narrow(1, 2, 2).narrow(0, 1, 2).mul_(b)
            x.narrow(1, 0, 2).narrow(0, 1, 2).mul_(b)
            return x

        self.assertTrue(torch.autograd.gradcheck(func, [a, b], raise_exception=True))
        go = torch.randn(a.size(), dtype=torch.double, device=DEVICE, requires_grad=True)
        self.assertTrue(torch.autograd.gradgradcheck(func, (a, b), (go,)))

    def test_inplace_on_view_multiple_outputs_cpu(self, torch):
        root = torch.arange(9.0, dtype=torch.double).reshape(3, 3).requires_grad_()
        x = root.clone()
        v1 = x.unbind()
        with self.assertRaises(RuntimeError):
            v1[0].mul_(2)

    def test_inplace_on_view_of_multiple_output_view_cpu(self, torch):
        a = torch.rand(10, dtype=torch.double, device=DEVICE, requires_grad=True).clone()
        b = a.unbind(0)
        c = b[0].view_as(b[0])
        with self.assertRaises(RuntimeError):
            c.mul_(2)

    def test_inplace_multiple_output_view_of_view_cpu(self, torch):
        a = torch.rand(10, dtype=torch.double, device=DEVICE, requires_grad=True).clone()
        b = a.view_as(a)
        c = b.unbind(0)
        with self.assertRaises(RuntimeError):
            c[0].mul_(2)

    def test_inplace_on_view_makes_base_require_grad_cpu(self, torch):
        a = torch.randn(4, 4, dtype=torch.double, device=DEVICE, requires_grad=False)
        b = torch.randn(4, 2, dtype=torch.double, device=DEVICE, requires_grad=True)
        test = self

        def func(root, b):
            x = root.clone()
            test.assertFalse(x.requires_grad)
            x.narrow(1, 2, 2).mul_(b)
            test.assertTrue(x.requires_grad)
            return x

        self.assertTrue(torch.autograd.gradcheck(func, [a, b], raise_exception=True))
        go = torch.randn(a.size(), dtype=torch.double, device=DEVICE, requires_grad=True)
        self.assertTrue(torch.autograd.gradgradcheck(func, (a, b), (go,)))

    def test_inplace_on_view_backprop_view_cpu(self, torch):
        a = torch.tensor([2.0, 5.0], device=DEVICE, requires_grad=False)
        b = torch.tensor([3.0], device=DEVICE, requires_grad=True)
        res = a.narrow(0, 1, 1).mul_(b)  # modify a view, backprop through the view
        res.sum().backward()
        self.assertEqual(b.grad.tolist(), [5])
        self.assertIsNone(a.grad)

    def test_inplace_on_view_modify_base_cpu(self, torch):
        # An in-place op that makes the base require grad makes its earlier views require it.
        r = torch.ones(1, dtype=torch.double, device=DEVICE, requires_grad=True)
        test = self

        def fn(r):
            x = torch.ones(5, dtype=torch.double, device=DEVICE)
            v = x.select(0, 1)
            test.assertFalse(v.requires_grad)
            test.assertIsNone(v.grad_fn)
            x.add_(r)
            test.assertTrue(v.requires_grad)
            return v

        self.assertTrue(torch.autograd.gradcheck(fn, [r]))
        self.assertTrue(torch.autograd.gradgradcheck(fn, [r]))

    def test_inplace_on_view_python_cpu(self, torch):
        a = torch.randn(4, 4, dtype=torch.double, device=DEVICE, requires_grad=True)
        b = torch.randn(2, 2, dtype=torch.double, device=DEVICE, requires_grad=True)

        class PyAdd(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.mark_dirty(x)
                x.add_(y)
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad, grad

        def func(root, b):
            x = root.clone()
            PyAdd.apply(x.narrow(1, 2, 2).narrow(0, 1, 2), b)
            PyAdd.apply(x.narrow(1, 0, 2).narrow(0, 1, 2), b)
            return x

        self.assertTrue(torch.autograd.gradcheck(func, [a, b], raise_exception=True))
        go = torch.randn(a.size(), dtype=torch.double, device=DEVICE, requires_grad=True)
        self.assertTrue(torch.autograd.gradgradcheck(func, (a, b), (go,)))

    def test_inplace_on_view_non_contig_cpu(self, torch):
        root = torch.ones(2, 3, 2, device=DEVICE).select(2, 1).t().requires_grad_(True)
        x = root.clone()
        v1 = x.narrow(0, 0, 1)
        v2 = v1.narrow(1, 1, 1)
        v2.mul_(2)
        x.sum().backward()
        self.assertEqual(root.grad.tolist(), [[1, 2], [1, 1], [1, 1]])

    def test_inplace_on_view_multi_output_unsafe_cpu(self, torch):
        for f in [
            lambda t: t.unsafe_split(1),
            lambda t: t.unsafe_split_with_sizes((1, 1, 1)),
            lambda t: t.unsafe_chunk(3),
        ]:
            a = torch.randn(3, 3, device=DEVICE, requires_grad=True)
            b = a + a
            s1, s2, s3 = f(b)
            s1.mul_(s2)
            s1.sum().backward()

    def test_inplace_on_view_multi_output_safe_cpu(self, torch):
        for f in [
            lambda t: t.split(1),
            lambda t: t.split_with_sizes((1, 1, 1)),
            lambda t: t.chunk(3),
        ]:
            a = torch.randn(3, 3, device=DEVICE, requires_grad=True)
            b = a + a
            s1, s2, s3 = f(b)
            with self.assertRaisesRegex(
                RuntimeError, "This view is the output of a function that returns multiple views."
            ):
                s1.mul_(s2)

    def test_inplace_on_view_undefined_grad_output_cpu(self, torch):
        a = torch.tensor([1.0], requires_grad=True)
        c = a.clone()
        v = c[:]
        b = torch.tensor(1.0, requires_grad=True)

        class InplaceFunc(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, other):
                ctx.mark_dirty(x)
                return x.mul_(2)

            @staticmethod
            def backward(ctx, grad):
                return grad * 2, None

        out = InplaceFunc.apply(v, b)
        out.backward()
        self.assertIsNone(b.grad)
        self.assertEqual(a.grad.item(), 2)

    def test_mv_grad_stride_0_cpu(self, torch):
        mat = torch.randn(2, 2, dtype=torch.double, device=DEVICE)
        vec = torch.randn(1, dtype=torch.double, device=DEVICE).requires_grad_(True)

        def fn(vec):
            vec = vec.expand(2)  # inside, so that gradcheck's input has no overlapping memory
            return (mat @ vec).sum()

        self.assertTrue(torch.autograd.gradcheck(fn, (vec)))
        self.assertTrue(torch.autograd.gradgradcheck(fn, (vec)))

    def test_strided_leaf_grad_layout_cpu(self, torch):
        # A dense leaf gets a .grad of its own layout.
        for fmt_a in (torch.contiguous_format, torch.channels_last):
            for fmt_b in (torch.contiguous_format, torch.channels_last):
                a = torch.rand((2, 3, 4, 5), device=DEVICE).to(memory_format=fmt_a)
                b = torch.rand((2, 3, 4, 5), device=DEVICE).to(memory_format=fmt_b)
                a.requires_grad_()
                b.requires_grad_()
                a.sum().backward()
                self.assertEqual(a.grad.stride(), a.stride())
                b.sum().backward()
                self.assertEqual(b.grad.stride(), b.stride())
                a.grad = None
                b.grad = None
                (a * b).sum().backward()
                self.assertEqual(a.grad.stride(), a.stride())
                self.assertEqual(b.grad.stride(), b.stride())

        # A leaf that is not dense gets a row-major contiguous .grad.
        c = torch.empty_strided((2, 2), (4, 2), device=DEVICE).copy_(
            torch.rand((2, 2), device=DEVICE)
        )
        c.requires_grad_()
        d = torch.rand((2, 2), device=DEVICE)
        c.sum().backward()
        self.assertEqual(c.grad.stride(), (2, 1))
        c.grad = None
        (c * d).sum().backward()
        self.assertEqual(c.grad.stride(), (2, 1))

    def test_non_differentiable_ops_cpu(self, torch):
        x = torch.tensor([[1, 2], [3, 4.0]], requires_grad=True, device=DEVICE)
        out = torch.isin(x, torch.tensor([2, 3], device=DEVICE))
        self.assertFalse(out.requires_grad)
        x = torch.randn(3, 3, requires_grad=True)
        out = torch.signbit(x)
        self.assertFalse(out.requires_grad)

    def test_resize_version_bump_cpu(self, torch):
        x = torch.rand((1,), device=DEVICE)
        y = torch.randn((3,), device=DEVICE)
        x.resize_((1, 2))
        self.assertEqual(x._version, 1)
        x.resize_as_(y)
        self.assertEqual(x._version, 2)
        x.resize_((3,))  # no-op resizes bump nothing
        self.assertEqual(x._version, 2)
        x.resize_as_(y)
        self.assertEqual(x._version, 2)
