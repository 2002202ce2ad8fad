"""TestAutograd, sixth part: anomaly mode, gradcheck's own checks, version counters, .data."""

import importlib
import io
import sys
import warnings
import weakref

from .harness import Harness


def gradcheck_module(torch):
    """torch.autograd.gradcheck the module (the attribute of that name is the function)."""
    return importlib.import_module(f"{torch.__name__}.autograd.gradcheck")


class TestAutograd(Harness):
    def test_anomaly_detect_nan(self, torch):
        size = 10

        class MyFunc(torch.autograd.Function):
            @staticmethod
            def forward(ctx, inp1, inp2, fail_0th):
                ctx.fail_0th = fail_0th
                return inp1.sum(0, keepdim=True)

            @staticmethod
            def backward(ctx, gO):
                gI = gO.clone().expand(size)
                gI[0] = 0
                gI[0] /= 0  # a nan
                if ctx.fail_0th:
                    return gI, None, None
                return None, gI, None

        inp = torch.rand(size, requires_grad=True)
        out = MyFunc.apply(inp, inp, True)
        out.backward()  # no anomaly mode: no error

        inp = torch.rand(size, requires_grad=True)
        out = MyFunc.apply(inp, inp, True)
        with self.assertRaisesRegex(
            RuntimeError, "Function 'MyFuncBackward' returned nan values in its 0th output."
        ):
            with warnings.catch_warnings(record=True) as w:
                with torch.autograd.detect_anomaly():
                    out.backward()
            self.assertIn("No forward pass information", str(w[0].message))

        inp = torch.rand(size, requires_grad=True)
        with self.assertRaisesRegex(
            RuntimeError, "Function 'MyFuncBackward' returned nan values in its 1th output."
        ):
            with warnings.catch_warnings(record=True) as w:
                with torch.autograd.detect_anomaly():
                    out = MyFunc.apply(inp, inp, False)
                    out.backward()
            self.assertIn("MyFunc.apply", str(w[0].message))

    def test_nested_anomaly_detect_nan(self, torch):
        size = 10

        class MyFunc(torch.autograd.Function):
            @staticmethod
            def forward(ctx, inp1, fail_0th):
                ctx.fail_0th = fail_0th
                ctx.save_for_backward(inp1)
                return inp1.sum(0, keepdim=True)

            @staticmethod
            def backward(ctx, gO):
                (inp,) = ctx.saved_tensors
                g = gO.clone().expand(size)
                return MyFunc2.apply(g * inp, g + inp, ctx.fail_0th), None

        class MyFunc2(torch.autograd.Function):
            @staticmethod
            def forward(ctx, inp1, inp2, fail_0th):
                ctx.fail_0th = fail_0th
                return inp1 * 2.0 + inp2

            @staticmethod
            def backward(ctx, gO):
                g1, g2 = gO.clone(), gO.clone()
                g1[0] = 0
                g2[0] = 0
                if ctx.fail_0th:  # a nan in one of the two gradients
                    g1[0] /= 0
                else:
                    g2[0] /= 0
                return g1, g2, None

        inp = torch.rand(size, requires_grad=True)
        out = MyFunc.apply(inp, True)
        (ginp,) = torch.autograd.grad(out, (inp,), create_graph=True)
        ginp.sum().backward()  # no anomaly mode: no error

        inp = torch.rand(size, requires_grad=True)
        out = MyFunc.apply(inp, True)
        (ginp,) = torch.autograd.grad(out, (inp,), create_graph=True)
        gsum = ginp.sum()
        with warnings.catch_warnings(record=True) as w:
            with self.assertRaisesRegex(
                RuntimeError, "Function 'MyFunc2Backward' returned nan values in its 0th output."
            ):
                with torch.autograd.detect_anomaly():
                    gsum.backward()
        self.assertIn("No forward pass information", str(w[1].message))

        inp = torch.rand(size, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            with self.assertRaisesRegex(
                RuntimeError, "Function 'MyFunc2Backward' returned nan values in its 1th output."
            ):
                with torch.autograd.detect_anomaly():
                    out = MyFunc.apply(inp, False)
                    (ginp,) = torch.autograd.grad(out, (inp,), create_graph=True)
                    ginp.sum().backward()
        self.assertIn("MyFunc2.apply", str(w[1].message))
        self.assertIn("MyFunc.apply", str(w[2].message))

    def test_anomaly_grad_warnings(self, torch):
        class StdErrDiverter:
            def __enter__(self):
                self.stderr_orig = sys.stderr
                self.stderr_new = io.StringIO()
                sys.stderr = self.stderr_new
                return self

            def __exit__(self, *args):
                self.captured = self.stderr_new.getvalue()
                sys.stderr = self.stderr_orig

        inplace_message = (
            "one of the variables needed for gradient computation has been "
            "modified by an inplace operation"
        )
        # Warnings that do not raise are recorded.
        with self.assertRaisesRegex(RuntimeError, inplace_message):
            with warnings.catch_warnings(record=True) as w:
                with torch.autograd.detect_anomaly():
                    a = torch.randn(5, requires_grad=True)
                    d1 = a + 1
                    d2 = d1**2
                    d1 += 1
                    torch.autograd.grad(d2.sum(), a)
        self.assertEqual(len(w), 2)
        self.assertIn("Anomaly Detection has been enabled", str(w[0].message))
        self.assertIn("Error detected in PowBackward0", str(w[1].message))

        # A warning that raises is printed to stderr instead.
        with self.assertRaisesRegex(RuntimeError, inplace_message):
            with warnings.catch_warnings(record=True) as w:
                with torch.autograd.detect_anomaly():
                    warnings.simplefilter("error")
                    with StdErrDiverter() as s:
                        a = torch.randn(5, requires_grad=True)
                        d1 = a + 1
                        d2 = d1**2
                        d1 += 1
                        torch.autograd.grad(d2.sum(), a)
        self.assertEqual(len(w), 1)
        self.assertIn("Anomaly Detection has been enabled", str(w[0].message))
        self.assertIn("Error detected in PowBackward0", s.captured)

    def test_anomaly_assign_parent_cleanup(self, torch):
        # The anomaly metadata a node gets from its parent must not keep objects alive.
        def get_ref():
            x = torch.randn(2, 2, requires_grad=True)
            t = x.exp()
            with torch.autograd.detect_anomaly():
                torch.autograd.grad(t, x, torch.ones_like(t), create_graph=True)

            class Foo:
                pass

            my_obj = Foo()
            meta_dict = t.grad_fn.metadata
            meta_dict[0] = my_obj
            return t, weakref.ref(my_obj)

        t, ref = get_ref()
        self.assertIsNotNone(ref())
        del t
        self.assertIsNone(ref())

    def test_nested_anomaly_printstack_cleanup(self, torch):
        def get_ref():
            class MyFunc(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    ctx.save_for_backward(x)
                    return x

                @staticmethod
                def backward(ctx, gO):
                    (x,) = ctx.saved_tensors
                    return MyFunc2.apply(x)

            class MyFunc2(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    return x

                @staticmethod
                def backward(ctx, gO):
                    return gO + float("NaN")

            inp = torch.rand(1, requires_grad=True)
            out = MyFunc.apply(inp)
            (ginp,) = torch.autograd.grad(out, (inp,), create_graph=True)
            with warnings.catch_warnings(record=True):
                with self.assertRaisesRegex(
                    RuntimeError,
                    "Function 'MyFunc2Backward' returned nan values in its 0th output.",
                ):
                    with torch.autograd.detect_anomaly():
                        ginp.backward()

            class Foo:
                pass

            my_obj = Foo()
            meta_dict = out.grad_fn.metadata
            meta_dict[0] = my_obj
            return out, weakref.ref(my_obj)

        t, ref = get_ref()
        self.assertIsNotNone(ref())
        del t
        self.assertIsNone(ref())

    def test_anomaly_mode_no_check_nan(self, torch):
        class MyFunc(torch.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                return inp.clone()

            @staticmethod
            def backward(ctx, gO):
                return torch.tensor(float("nan")).expand(10, 10)

        def run_fn(a):
            return MyFunc.apply(a).sum()

        with warnings.catch_warnings(record=True):
            with torch.autograd.detect_anomaly(check_nan=False):
                inp = torch.rand(10, 10, requires_grad=True)
                out = run_fn(inp)
                out.backward(retain_graph=True)
                with torch.autograd.detect_anomaly(check_nan=True):
                    with self.assertRaisesRegex(
                        RuntimeError,
                        "Function 'MyFuncBackward' returned nan values in its 0th output.",
                    ):
                        out.backward(retain_graph=True)
                out.backward()

    def test_no_grad_copy(self, torch):
        class MyFunc(torch.autograd.Function):
            static_grad_ptr = None

            @staticmethod
            def forward(ctx, inp1, inp2):
                return inp1 + inp2

            @staticmethod
            def backward(ctx, grad):
                MyFunc.static_grad_ptr = grad.data_ptr()
                return grad, grad

        class NonContGradFunc(torch.autograd.Function):
            @staticmethod
            def forward(ctx, inp1):
                ctx.size = inp1.size()
                return torch.tensor([1.0])

            @staticmethod
            def backward(ctx, grad):
                return torch.ones(1).expand(ctx.size)

        a = torch.randn(5, 6, requires_grad=True)
        b = torch.randn(5, 6, requires_grad=True)
        NonContGradFunc.apply(MyFunc.apply(a, b)).backward()  # a non-contiguous grad is copied
        self.assertFalse(a.grad.data_ptr() == MyFunc.static_grad_ptr)
        self.assertFalse(b.grad.data_ptr() == MyFunc.static_grad_ptr)
        a.grad = b.grad = None
        MyFunc.apply(a, b)[1][0].backward()  # one of a and b takes the buffer without a copy
        p_g = MyFunc.static_grad_ptr
        p_a = a.grad.data_ptr()
        p_b = b.grad.data_ptr()
        self.assertFalse(p_a == p_b)
        self.assertTrue(p_a == p_g or p_b == p_g)

    def test_gradcheck_single_input(self, torch):
        def f(inp):
            return inp.mul(5)

        for fast_mode in (True, False):
            self.assertTrue(
                torch.autograd.gradcheck(
                    f, torch.rand(10, dtype=torch.float64, requires_grad=True), fast_mode=fast_mode
                )
            )
            self.assertTrue(
                torch.autograd.gradgradcheck(
                    f, torch.rand(10, dtype=torch.float64, requires_grad=True), fast_mode=fast_mode
                )
            )

    def test_gradcheck_nondeterministic(self, torch):
        class NonDetFunc(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, jitter=0.0):
                ctx._jitter = jitter
                return x

            @staticmethod
            def backward(ctx, grad_out):
                return (
                    NonDetFunc.apply(grad_out, ctx._jitter)
                    * (1 + torch.rand_like(grad_out) * ctx._jitter),
                    None,
                )

        gradcheck, gradgradcheck = torch.autograd.gradcheck, torch.autograd.gradgradcheck
        for fast_mode in (True, False):
            inp = torch.randn(5, 5, dtype=torch.double, requires_grad=True)
            gradcheck(lambda x: NonDetFunc.apply(x, 0.0), inp, fast_mode=fast_mode)
            with self.assertRaisesRegex(RuntimeError, "Backward is not reentrant"):
                gradcheck(lambda x: NonDetFunc.apply(x, 1e-6), inp, fast_mode=fast_mode)
            with self.assertRaisesRegex(RuntimeError, "Backward is not reentrant"):
                gradgradcheck(lambda x: NonDetFunc.apply(x, 1e-12), inp, fast_mode=fast_mode)
            gradcheck(lambda x: NonDetFunc.apply(x, 0.0), inp, nondet_tol=1e-5, fast_mode=fast_mode)
            gradcheck(
                lambda x: NonDetFunc.apply(x, 1e-6), inp, nondet_tol=1e-5, fast_mode=fast_mode
            )
            gradgradcheck(
                lambda x: NonDetFunc.apply(x, 1e-12), inp, nondet_tol=1e-5, fast_mode=fast_mode
            )

    def test_gradcheck_validates_inputs(self, torch):
        gradcheck = torch.autograd.gradcheck
        for fast_mode in (True, False):
            # No input requires grad: raises even with raise_exception=False.
            x = torch.rand(10, requires_grad=False)
            with self.assertRaisesRegex(
                ValueError, "at least one input tensor to require gradient"
            ):
                gradcheck(lambda x: x, (x,), raise_exception=False, fast_mode=fast_mode)

            # An input that is not double: a warning.
            x = torch.ones(1, dtype=torch.float32, requires_grad=True)
            with self.assertWarnsRegex(
                UserWarning, "Input #0 requires gradient and is not a double precision"
            ):
                self.assertTrue(gradcheck(lambda x: x, (x,), atol=1e-1, fast_mode=fast_mode))

            # An input with a stride-0 dimension: raises even with raise_exception=False.
            x = torch.ones(1, dtype=torch.float64, requires_grad=True)
            x = x.expand((2, 2))
            with self.assertRaisesRegex(
                RuntimeError, "The 0th input has a dimension with stride 0"
            ):
                gradcheck(lambda x: x, (x,), raise_exception=False, fast_mode=fast_mode)

    def test_gradcheck_check_no_differentiable_outputs(self, torch):
        gradcheck = torch.autograd.gradcheck
        for fast_mode in (True, False):
            x = torch.ones((1,), requires_grad=True)
            with self.assertRaisesRegex(
                RuntimeError, "Numerical gradient for function expected to be zero"
            ):
                gradcheck(lambda x: torch.tensor([x]), x)
            self.assertFalse(
                gradcheck(
                    lambda x: torch.tensor([x]), x, raise_exception=False, fast_mode=fast_mode
                )
            )
            self.assertTrue(gradcheck(lambda x: (), (x,), fast_mode=fast_mode))  # no outputs

    def test_gradcheck_backward_mul_by_grad_output(self, torch):
        gradcheck = torch.autograd.gradcheck
        for fast_mode in (True, False):

            def fn2(x):  # its backward is not multiplied by grad_output
                y = x.clone()
                y.register_hook(lambda x: x + 1e-2)
                return y

            x = torch.ones(1, dtype=torch.double, requires_grad=True)
            with self.assertRaisesRegex(RuntimeError, "backward not multiplied by grad_output"):
                gradcheck(fn2, (x,), atol=1e-1, fast_mode=fast_mode)
            self.assertFalse(
                gradcheck(fn2, (x,), atol=1e-1, raise_exception=False, fast_mode=fast_mode)
            )

    def test_gradcheck_undefined_grad(self, torch):
        gradcheck = torch.autograd.gradcheck
        for fast_mode in (True, False):

            def fn(x):
                def hook(x):
                    if x is None:
                        raise RuntimeError("x is undefined")

                y = x.clone()
                y.register_hook(hook)
                return y

            x = torch.ones(1, dtype=torch.double, requires_grad=True)
            with self.assertWarnsRegex(
                UserWarning,
                "Backwards compatibility: New undefined gradient support checking feature",
            ):
                with self.assertRaisesRegex(
                    RuntimeError, "Expected backward function to handle undefined output grads"
                ):
                    gradcheck(fn, (x,), fast_mode=fast_mode)
                self.assertFalse(gradcheck(fn, (x,), raise_exception=False, fast_mode=fast_mode))

    def test_gradcheck_jacobian_mismatch(self, torch):
        gradcheck = torch.autograd.gradcheck
        for fast_mode in (True, False):

            def fn(x):
                y = x.clone()
                y.register_hook(lambda x: x + 1e-2)
                return y

            x = torch.ones(2, 2, requires_grad=True)
            with self.assertRaisesRegex(
                RuntimeError, "Jacobian mismatch for output 0 with respect to input 0"
            ):
                gradcheck(fn, (x,), fast_mode=fast_mode)
            self.assertFalse(gradcheck(fn, (x,), raise_exception=False, fast_mode=fast_mode))

    def test_gradcheck_output_shape_or_dtype_depend_on_values(self, torch):
        gradcheck = torch.autograd.gradcheck
        for fast_mode in (True, False):

            def fn(x):
                if torch.all(x >= 1):
                    return torch.cat([x, x])
                return x

            a = torch.ones(1, dtype=torch.double, requires_grad=True)
            with self.assertRaisesRegex(
                AssertionError, "return outputs with the same shape when inputs are perturbed"
            ):
                self.assertTrue(gradcheck(fn, (a,), fast_mode=fast_mode))

            def fn2(x):
                if torch.all(x >= 1):
                    return x.to(torch.float32)
                return x

            with self.assertRaisesRegex(
                AssertionError, "return outputs with the same dtype when inputs are perturbed"
            ):
                self.assertTrue(gradcheck(fn2, (a,), fast_mode=fast_mode))

    def test_gradcheck_get_numerical_jacobian(self, torch):
        get_numerical_jacobian = gradcheck_module(torch).get_numerical_jacobian

        def fn(inputs):  # takes the inputs as one tuple
            x, y = inputs[0], inputs[1]
            return 2 * x + y, x + 2 * y

        a = torch.rand(2, 2, requires_grad=True, dtype=torch.float64)
        b = torch.rand(2, 2, requires_grad=True, dtype=torch.float64)
        deprecated = "`get_numerical_jacobian` was part of PyTorch's private API"
        with self.assertWarnsRegex(FutureWarning, deprecated):
            jacobian = get_numerical_jacobian(fn, (a, b), target=a, eps=1e-6)
        self.assertEqual(jacobian[0], 2 * torch.eye(4, dtype=torch.double))
        with self.assertWarnsRegex(FutureWarning, deprecated):
            jacobian = get_numerical_jacobian(fn, (a, b), eps=1e-6)
        self.assertEqual(jacobian[0], 2 * torch.eye(4, dtype=torch.double))
        self.assertEqual(jacobian[1], 1 * torch.eye(4, dtype=torch.double))
        with self.assertRaisesRegex(ValueError, "Expected grad_out to be 1.0"):
            get_numerical_jacobian(fn, (a, b), eps=1e-6, grad_out=2.0)

    def test_gradcheck_get_analytical_jacobian(self, torch):
        get_analytical_jacobian = gradcheck_module(torch).get_analytical_jacobian

        def fn(x, y):
            return 2 * x + y, x + 2 * y

        a = torch.rand(2, 2, requires_grad=True, dtype=torch.float64)
        b = torch.rand(2, 2, requires_grad=True, dtype=torch.float64)
        outputs = fn(a, b)
        deprecated = "`get_analytical_jacobian` was part of PyTorch's private API"
        with self.assertWarnsRegex(FutureWarning, deprecated):
            jacobians, reentrant, _, _ = get_analytical_jacobian((a, b), outputs[0])
        self.assertEqual(jacobians[0], 2 * torch.eye(4, dtype=torch.double))
        self.assertEqual(jacobians[1], 1 * torch.eye(4, dtype=torch.double))
        self.assertTrue(reentrant)

        class NonDetFunc(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, jitter=0.0):
                ctx._jitter = jitter
                return x

            @staticmethod
            def backward(ctx, grad_out):
                return (
                    NonDetFunc.apply(grad_out, ctx._jitter)
                    * (1 + torch.rand_like(grad_out) * ctx._jitter),
                    None,
                )

        outputs = NonDetFunc.apply(a, 1e-6)
        with self.assertWarnsRegex(FutureWarning, deprecated):
            jacobians, reentrant, _, _ = get_analytical_jacobian((a,), outputs)
        self.assertFalse(reentrant)
        with self.assertRaisesRegex(ValueError, "Expected grad_out to be 1.0"):
            get_analytical_jacobian((a,), outputs, grad_out=2.0)

    def test_gradcheck_custom_error(self, torch):
        gradcheck = torch.autograd.gradcheck
        GradcheckError = gradcheck_module(torch).GradcheckError
        for fast_mode in (True, False):

            def fn(x):
                y = x.clone()
                y.register_hook(lambda x: x + 1e-2)
                return y

            x = torch.ones(2, 2, requires_grad=True)
            mismatch = "Jacobian mismatch for output 0 with respect to input 0"
            with self.assertRaisesRegex(GradcheckError, mismatch):
                gradcheck(fn, (x,), fast_mode=fast_mode)
            with self.assertRaisesRegex(RuntimeError, mismatch):  # a subclass of RuntimeError
                gradcheck(fn, (x,), fast_mode=fast_mode)
            self.assertFalse(gradcheck(fn, (x,), raise_exception=False, fast_mode=fast_mode))

            def fn2(x):
                raise RuntimeError("Not a GradcheckError!")

            # raise_exception=False does not swallow other errors.
            with self.assertRaisesRegex(RuntimeError, "Not a GradcheckError!"):
                gradcheck(fn2, (x,), fast_mode=fast_mode, raise_exception=False)

    def test_version_counter(self, torch):
        x = torch.randn(1, 2)
        x_saved_version = x._version
        x.add_(1).add_(1)  # in-place ops bump the version
        self.assertTrue(x._version > x_saved_version)

        xz = x[:]  # a view shares the counter
        self.assertTrue(x._version == xz._version)
        xz.add_(1)
        self.assertTrue(x._version == xz._version)

        x_saved_version = x._version
        x.data = torch.randn(2, 3)  # keeps x's counter
        self.assertTrue(x._version == x_saved_version)
        x.add_(1)
        self.assertTrue(x._version > x_saved_version)
        self.assertTrue(x._version == xz._version)  # still the one shared with xz
        xz.add_(1)
        self.assertTrue(x._version == xz._version)

    def test_set_data_preserve_pyobj(self, torch):
        a = torch.randn(1, 2)
        b = torch.randn(1, 2)
        b_id_saved = id(b)
        b.data = a
        self.assertTrue(b_id_saved == id(b))

    def test_set_data_self_requires_grad(self, torch):
        a = torch.tensor(1.0, requires_grad=True)
        b = torch.tensor(2.0)
        c = torch.tensor(3, dtype=torch.int64)
        a.data = b
        with self.assertRaisesRegex(RuntimeError, "must be floating point or complex dtype"):
            a.data = c
