"""TestAutograd, eighth part: views and in-place ops through custom Functions, reference cycles."""
# ruff: noqa: B023 (closures defined in a loop use that iteration's variables, as upstream's do)

import gc
import math
import warnings
import weakref

import pytest

from .harness import Harness, disable_gc, mini_fails


class TestAutograd(Harness):
    def test_autograd_views_codegen(self, torch):
        # Which views are differentiable, and which may be modified in place (view_as, unbind).
        def run_test(grad_mode, requires_grad, is_view, should_raise_tuple):
            def maybe_check_raise(fn, should_raise):
                if should_raise is not None:
                    with self.assertRaisesRegex(RuntimeError, should_raise):
                        fn()
                else:
                    fn()

            inp = torch.rand(2, requires_grad=requires_grad).clone()
            with torch.set_grad_enabled(grad_mode):
                out = inp.view_as(inp)
            self.assertTrue(out._is_view() == is_view)
            maybe_check_raise(lambda: out.add_(1), should_raise_tuple[0])

            inp = torch.rand(2, requires_grad=requires_grad).clone()
            with torch.set_grad_enabled(grad_mode):
                out = inp.unbind()
            self.assertTrue(out[0]._is_view() == is_view)
            self.assertTrue(out[1]._is_view() == is_view)
            maybe_check_raise(lambda: out[0].add_(1), should_raise_tuple[1])
            maybe_check_raise(lambda: out[1].add_(1), should_raise_tuple[2])

        run_test(True, False, True, (None, None, None))
        # torch 2.13 names the node "Unbind", upstream "UnbindBackward0": either is accepted.
        inp_change_err = "Output {} of Unbind(Backward0)? is a view and is being modified inplace."
        run_test(True, True, True, (None, inp_change_err.format("0"), inp_change_err.format("1")))
        leaf_grad_err = "A view was created in no_grad mode and is being modified inplace"
        run_test(False, True, True, (leaf_grad_err, leaf_grad_err, leaf_grad_err))
        run_test(False, False, True, (None, None, None))

    def test_inplace_not_requires_grad(self, torch):
        class MyFn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                return inp.view_as(inp)

            @staticmethod
            def backward(ctx, grad):
                return grad

        custom_message = "This view was created inside a custom Function"
        a = torch.rand(1, 2)  # requires no grad
        b = torch.rand(1, requires_grad=True)  # what is written in does
        view_a = MyFn.apply(a)
        with self.assertRaisesRegex(RuntimeError, custom_message):
            view_a += b

        a = torch.rand(1, 2)
        b = torch.rand(1, requires_grad=True)
        view_a = MyFn.apply(a)
        with self.assertRaisesRegex(RuntimeError, custom_message):
            view_a.copy_(b)

        a = torch.rand(1, 2)
        b = torch.rand(1, requires_grad=True)
        view_a = a.unbind()[0]
        with self.assertRaisesRegex(
            RuntimeError, "This view is the output of a function that returns multiple views."
        ):
            view_a.copy_(b)

        a = torch.rand(1, 2)
        b = torch.rand(1, requires_grad=True)
        a.select(1, 0).copy_(b)  # a view that may be written in

    @mini_fails(
        "missing API",
        "ctx._is_pure_view: torch replays the output of a pure-view Function modified in "
        "place; mini_autograd refuses it with the custom-Function-view error ('Output 0 of "
        "IdOneOutput is a view and is being modified inplace. This view was created inside a "
        "custom Function...')",
    )
    def test_autograd_simple_views_python(self, torch):
        # A custom Function returning an input, a view of an input or of a temporary.
        dtype = torch.double  # upstream also runs torch.cdouble
        bw_called = [0]
        ga_nz = [False]

        class IdOneOutput(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a, make_view, pure_view):
                ctx._is_pure_view = pure_view
                return a.narrow(0, 0, 2) if make_view else a.clone()

            @staticmethod
            def backward(ctx, ga):
                bw_called[0] += 1
                return ga, None, None

        class IdTwoOutput(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a, b, make_view, pure_view):
                ctx._is_pure_view = pure_view
                a = a.narrow(0, 0, 2) if make_view else a.clone()
                return a, a + b

            @staticmethod
            def backward(ctx, ga, gab):
                bw_called[0] += 1
                ga_nz[0] = not ga.eq(0).all()
                return ga + gab, gab, None, None

        class ViewOfTemp(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a, make_view, pure_view):
                ctx._is_pure_view = pure_view
                ctx.save_for_backward(a)
                a = a.narrow(0, 0, 2) if make_view else a.clone()
                b = a.clone()
                return b.select(0, 0)

            @staticmethod
            def backward(ctx, grad):
                bw_called[0] += 1
                (a,) = ctx.saved_tensors
                res = torch.zeros_like(a)
                res.select(0, 0).copy_(grad)
                return res, None, None

        messages = {
            "one_output": (
                "Output 0 of IdOneOutput(Backward)? is a view and is being "
                "modified inplace. This view was created inside a custom Function"
            ),
            "two_output": (
                "Output 0 of IdTwoOutput(Backward)? is a view and is being modified inplace."
                " This view is the output of a function that returns multiple views.",
                "Pure view custom Function can only have one input Tensor and one output Tensor."
                " Open an issue if you need to support more.",
            ),
            "view_of_temp": (
                "Output 0 of ViewOfTemp(Backward)? is a view and is being "
                "modified inplace. This view was created inside a custom Function",
                "a view of a leaf Variable that requires grad is being used in an in-place operation",
            ),
        }
        for fn_id in ["one_output", "two_output", "view_of_temp"]:
            for inplace in [True, False]:
                for make_view in [True, False]:
                    for pure_view in [True, False]:
                        output_is_a_view = make_view or fn_id == "view_of_temp"

                        def fn(a, b):
                            a = a.clone()  # gradcheck's inputs are never modified
                            b = b.clone()
                            if fn_id == "two_output":
                                tmp1, tmp2 = IdTwoOutput.apply(a, b, make_view, pure_view)
                                if inplace:
                                    tmp1 += 3
                                    tmp2 += 3
                                else:
                                    tmp1 = tmp1 + 3
                                    tmp2 = tmp2 + 3
                                tmp = tmp1 * tmp2
                            else:
                                if fn_id == "one_output":
                                    tmp = IdOneOutput.apply(a, make_view, pure_view)
                                else:
                                    tmp = ViewOfTemp.apply(a + b, make_view, pure_view)
                                if inplace:
                                    tmp += 3
                                else:
                                    tmp = tmp + 3
                            return tmp.sum()

                        a = torch.ones(2, dtype=dtype, requires_grad=True)
                        b = torch.ones(2, dtype=dtype, requires_grad=True)
                        err_msg = messages[fn_id][int(pure_view)]
                        will_raise_error = (
                            (pure_view and fn_id == "two_output")
                            or (pure_view and fn_id == "view_of_temp" and inplace)
                            or (not pure_view and inplace and output_is_a_view)
                        )
                        if will_raise_error:
                            with self.assertRaisesRegex(RuntimeError, err_msg):
                                torch.autograd.gradcheck(fn, (a, b))
                        else:
                            torch.autograd.gradcheck(fn, (a, b))

                        bw_called[0] = 0
                        ga_nz[0] = True
                        expected_called = 1
                        if will_raise_error:
                            expected_called = 0
                            with self.assertRaisesRegex(RuntimeError, err_msg):
                                fn(a, b)
                        else:
                            fn(a, b).abs().backward()
                        if fn_id == "one_output" and inplace and output_is_a_view and pure_view:
                            expected_called = 0  # replayed from the pure view instead
                        self.assertTrue(bw_called[0] == expected_called)
                        self.assertTrue(ga_nz[0])

    def test_autograd_inplace_views_creation_meta(self, torch):
        class Func(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.view_as(x)

            @staticmethod
            def backward(ctx, x):
                return x

        def run_test(fn, fn_type, grad_mode_view, grad_mode_iview, requires_grad, error1, error2):
            base = torch.rand(2, 3, requires_grad=requires_grad).clone()
            with torch.set_grad_enabled(grad_mode_view):  # 1. a view
                if fn_type == "multi_view":
                    inp = base.unbind()[0]
                elif fn_type == "custom":
                    inp = Func.apply(base)
                else:
                    inp = base.view_as(base)
            with torch.set_grad_enabled(grad_mode_iview):  # 2. an in-place view op on it
                if error1 is not None:
                    with self.assertRaisesRegex(RuntimeError, error1):
                        fn(inp)
                    return
                fn(inp)
            if error2 is not None:  # 3. an in-place op on the result
                with self.assertRaisesRegex(RuntimeError, error2):
                    inp.add_(1)
            else:
                inp.add_(1)

        no_grad_err = "A view was created in no_grad mode"
        multi_view_err = "function that returns multiple views"
        custom_err = "view was created inside a custom Function"

        def run_tests(fn):
            for fn_type in ("normal", "multi_view", "custom"):
                for grad_mode_view in (True, False):
                    for grad_mode_iview in (True, False):
                        for requires_grad in (True, False):
                            error1 = error2 = None
                            if requires_grad:
                                if not grad_mode_view and grad_mode_iview:
                                    error1 = no_grad_err
                                if not grad_mode_view and not grad_mode_iview:
                                    error2 = no_grad_err
                                special = {"multi_view": multi_view_err, "custom": custom_err}
                                if fn_type in special:
                                    if grad_mode_view and grad_mode_iview:
                                        error1 = special[fn_type]
                                    if grad_mode_view and not grad_mode_iview:
                                        error2 = special[fn_type]
                            run_test(
                                fn,
                                fn_type,
                                grad_mode_view,
                                grad_mode_iview,
                                requires_grad,
                                error1,
                                error2,
                            )

        run_tests(lambda v: v.as_strided_((1, 0), (2, 2)))
        run_tests(lambda v: v.transpose_(0, 0))
        run_tests(lambda v: v.t_())
        run_tests(lambda v: v.squeeze_(0))
        run_tests(lambda v: v.unsqueeze_(0))
        run_tests(lambda v: v.swapdims_(0, 0))
        run_tests(lambda v: v.swapaxes_(0, 0))

    def test_autograd_print_tensor(self, torch):
        a = torch.ones(1, requires_grad=True)
        a_clone = a.clone()
        self.assertEqual(repr(a), "tensor([1.], requires_grad=True)")
        self.assertEqual(repr(a_clone), "tensor([1.], grad_fn=<CloneBackward0>)")
        with torch.no_grad():
            b = a[:]
            b *= 2
        # A view made in no_grad and modified in place there.
        self.assertEqual(repr(b), "tensor([2.], grad_fn=<Invalid>)")

        class Func(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, x):
                return x

        c = Func.apply(a)
        self.assertEqual(repr(c), "tensor([2.], grad_fn=<FuncBackward>)")

    def test_autograd_inplace_view_of_view(self, torch):
        x = torch.zeros(2)
        with torch.no_grad():
            y = x.view(2)
        y.requires_grad_(True)
        z = y.view(2)
        with self.assertRaisesRegex(
            RuntimeError, "a view of a view .* is being .* inside the no_grad block"
        ):
            z /= 2

        x = torch.zeros(2)
        with torch.inference_mode():
            y = x.view(2)
        y.requires_grad_(True)
        z = y.view(2)
        with self.assertRaisesRegex(
            RuntimeError, "a view of a view .* is being .* inside the inference_mode"
        ):
            z /= 2

    def test_autograd_multiple_views_python(self, torch):
        bw_called = [0]

        class ComplexView(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a, idx):
                res = a.narrow(0, idx, 1)
                res = a.select(0, idx)
                ctx.save_for_backward(a)
                ctx.idx = idx
                return res

            @staticmethod
            def backward(ctx, grad):
                bw_called[0] += 1
                (a,) = ctx.saved_tensors
                res = torch.zeros_like(a)
                res.select(0, ctx.idx).copy_(grad)
                return res, None

        a = torch.ones(2, requires_grad=True)
        idx = 1
        bw_called[0] = 0
        out = ComplexView.apply(a.clone(), idx)
        out.sum().backward()
        self.assertTrue(bw_called[0] == 1)

        out = ComplexView.apply(a.clone(), idx)
        with self.assertRaisesRegex(
            RuntimeError,
            "Output 0 of ComplexView(Backward)? is a view and is being modified inplace",
        ):
            out += 1

    def test_autograd_python_custom_function_inplace(self, torch):
        bw_called = [0]

        class MyAdder(torch.autograd.Function):  # one output
            @staticmethod
            def forward(ctx, a, b):
                a.add_(b)
                ctx.mark_dirty(a)
                return a

            @staticmethod
            def backward(ctx, grad):
                bw_called[0] += 1
                return grad, grad

        a = torch.ones(2, requires_grad=True)
        b = torch.ones(2, requires_grad=True)
        c = MyAdder.apply(a.clone(), b)
        c.sum().backward()
        self.assertTrue(bw_called[0] == 1)

        bw_called[0] = 0
        c = MyAdder.apply(a.clone(), b)
        c += 2  # a further in-place op on the output
        c.sum().backward()
        self.assertTrue(bw_called[0] == 1)

        bw_called[0] = 0
        c = MyAdder.apply(a.clone().view_as(a), b)  # the input is a view
        c.sum().backward()
        self.assertTrue(bw_called[0] == 1)

        class MyAdderBad(torch.autograd.Function):  # marks a tensor that is no input
            @staticmethod
            def forward(ctx, a, b):
                c = 3 * a
                c.add_(b)
                ctx.mark_dirty(c)
                return c

            @staticmethod
            def backward(ctx, grad):
                bw_called[0] += 1
                grad = 3 * grad
                return grad, grad

        a = torch.ones(2, requires_grad=True)
        b = torch.ones(2, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            MyAdderBad.apply(a.clone(), b)
        self.assertEqual(len(w), 1)

        class MyBadAdder(torch.autograd.Function):  # several outputs
            @staticmethod
            def forward(ctx, a, b):
                a.add_(b)
                ctx.mark_dirty(a)
                return a, a + b

            @staticmethod
            def backward(ctx, ga, gab):
                bw_called[0] += 1
                return ga + gab, ga + gab

        bw_called[0] = 0
        c, d = MyBadAdder.apply(a.clone(), b)
        (c * d).sum().backward()
        self.assertTrue(bw_called[0] == 1)

        bw_called[0] = 0
        c, d = MyBadAdder.apply(a.clone(), b)
        c += 2
        (c * d).sum().backward()
        self.assertTrue(bw_called[0] == 1)

        with self.assertRaisesRegex(
            RuntimeError, "your Function modifies inplace an input that is a view of another Tensor"
        ):
            c, d = MyBadAdder.apply(a.clone().view_as(a), b)

        class MyOutPlaceAdder(torch.autograd.Function):  # in place, and other outputs
            @staticmethod
            def forward(ctx, a, b):
                a.add_(b)
                ctx.mark_dirty(a)
                return a.clone(), a + b

            @staticmethod
            def backward(ctx, ga, gab):
                bw_called[0] += 1
                return ga + gab, ga + 2 * gab

        def fn(a, b):
            orig_a = a.clone().view_as(a)
            c, d = MyOutPlaceAdder.apply(orig_a, b)
            return (c * d).sum()

        with self.assertRaisesRegex(
            RuntimeError,
            "Some elements marked as dirty during the forward method were not returned as output.",
        ):
            fn(a, b)

    def test_custom_function_mark_output_view_of_intermediate(self, torch):
        class Func(torch.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                out = inp.clone().view_as(inp)
                ctx.mark_dirty(out)
                return out

            @staticmethod
            def backward(ctx, gO):
                pass

        a = torch.tensor([1.0], requires_grad=True)
        with self.assertRaisesRegex(RuntimeError, "received a tensor that was not an input."):
            Func.apply(a.clone())

    def test_custom_function_inplace_on_non_default_view(self, torch):
        class Func(torch.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                inp.add_(1)
                ctx.mark_dirty(inp)
                return inp

            @staticmethod
            def backward(ctx, gO):
                pass

        a = torch.tensor([1.0, 2.0], requires_grad=True)
        a_clone = a.clone()  # noqa: F841
        b, c = a.split_with_sizes([1, 1], dim=0)
        with self.assertRaisesRegex(
            RuntimeError, "output of a function that returns multiple view"
        ):
            Func.apply(b)

    def test_custom_function_inplace_on_view_of_leaf(self, torch):
        class Func(torch.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                inp.add_(1)
                ctx.mark_dirty(inp)
                return inp

            @staticmethod
            def backward(ctx, gO):
                pass

        a = torch.tensor([1.0, 2.0], requires_grad=True)
        b = a.view_as(a)
        with self.assertRaisesRegex(RuntimeError, "a view of a leaf Variable that requires grad"):
            Func.apply(b)

    def test_custom_function_saving_mutated_view_no_leak(self, torch):
        class Test(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                ctx.save_for_backward(x)
                return x

            @staticmethod
            def backward(ctx, grad):
                pass

        def scope():
            x = torch.tensor(1.0, requires_grad=True).clone()
            x = x.view_as(x)
            Test.apply(x)
            return weakref.ref(x)

        ref = scope()
        self.assertIsNone(ref())

    def test_custom_function_return_view_in_nograd(self, torch):
        class Alias(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x[:]

            @staticmethod
            def backward(ctx, gx):
                return gx

        inp = torch.rand(2, requires_grad=True)
        with torch.no_grad():
            output = Alias.apply(inp)
        with torch.no_grad():
            expected_output = inp[:]
        # As if the equivalent built-in op had run.
        self.assertEqual(output.requires_grad, expected_output.requires_grad)
        with self.assertRaisesRegex(
            RuntimeError, "A view was created in no_grad mode and is being modified inplace"
        ):
            output.zero_()

    def test_grad_mode_restored_reentrant(self, torch):
        test = self

        class MyFunction(torch.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                return inp.clone()

            @staticmethod
            def backward(ctx, go):
                original = torch.is_grad_enabled()  # upstream: torch._C.is_grad_enabled
                with torch.enable_grad():
                    test.assertTrue(torch.is_grad_enabled())
                    foo = torch.rand(go.size(), requires_grad=True)
                    (grad,) = torch.autograd.grad(foo**3, foo, grad_outputs=go)
                    test.assertTrue(torch.is_grad_enabled())
                test.assertTrue(torch.is_grad_enabled() == original)
                return grad

        inp = torch.rand(3, requires_grad=True)
        MyFunction.apply(inp).sum().backward()  # grad mode off in backward
        MyFunction.apply(inp).sum().backward(create_graph=True)  # on

    def test_power_function(self, torch):
        a = torch.tensor([0.0, 0.0, 0.0])
        b = torch.tensor([-1.0, 0.0, 1.0], requires_grad=True)
        c = torch.sum(a**b)
        c.backward()
        self.assertEqual(b.grad, torch.tensor([-math.inf, 0.0, 0.0]))

        s = 0
        b = torch.tensor([-1.0, 0.0, 1.0], requires_grad=True)
        c = torch.sum(s**b)
        c.backward()
        self.assertEqual(b.grad, torch.tensor([-math.inf, 0.0, 0.0]))

    def test_custom_function_error(self, torch):
        class BadFw(torch.autograd.Function):
            @staticmethod
            def backward(ctx, foo):
                return foo

        class BadBw(torch.autograd.Function):
            @staticmethod
            def forward(ctx, foo):
                return foo.clone()

        class BadBw2(torch.autograd.Function):
            @staticmethod
            def forward(ctx, foo):
                return foo.clone()

            @staticmethod
            def backward(ctx, foo):
                return foo

            @staticmethod
            def vjp(ctx, foo):
                return foo

        inp = torch.rand(1, requires_grad=True)
        with self.assertRaisesRegex(NotImplementedError, "must implement the forward"):
            BadFw.apply(inp)
        with self.assertRaisesRegex(RuntimeError, "must implement either the backward"):
            BadBw.apply(inp).sum().backward()
        with self.assertRaisesRegex(RuntimeError, "Implementing both 'backward' and 'vjp'"):
            BadBw2.apply(inp).sum().backward()
        # Upstream's last case (a missing jvp) needs forward-mode AD: left out.

    def test_custom_function_local_inplace(self, torch):
        class MyFn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, inp, inplace):
                view = inp.clone()[:3]
                if inplace:
                    view += 2
                return view

            @staticmethod
            def backward(ctx, grad):
                return grad, None

        base = torch.rand(10, requires_grad=True)
        foo = MyFn.apply(base, False)
        self.assertEqual(foo.grad_fn.__class__.__name__, "MyFnBackward")
        foo = MyFn.apply(base, True)
        self.assertEqual(foo.grad_fn.__class__.__name__, "MyFnBackward")

    def test_integer_outputs(self, torch):
        inp = torch.rand(4, requires_grad=True)
        for out in (inp.argmax(), inp.argmin(), inp.argsort()):
            self.assertFalse(out.dtype.is_floating_point)
            self.assertFalse(out.requires_grad)

        val = torch.rand((), requires_grad=True)
        out = torch.searchsorted(inp, val)
        self.assertFalse(out.dtype.is_floating_point)
        self.assertFalse(out.requires_grad)

        bins = torch.linspace(0, 1.0, steps=100, requires_grad=True)
        vals = torch.rand(5, 5, requires_grad=True)
        out = torch.bucketize(vals, bins)
        self.assertFalse(out.dtype.is_floating_point)
        self.assertFalse(out.requires_grad)

        val = torch.empty(5).requires_grad_()
        out = val.count_nonzero()
        self.assertFalse(out.requires_grad)

        def assert_only_first_requires_grad(res):
            if not isinstance(res, tuple):
                res = (res,)
            self.assertTrue(res[0].requires_grad)
            for out in res[1:]:
                if out is not None:
                    self.assertFalse(out.requires_grad)

        # Upstream also calls torch._unique, torch._VF.unique_dim and torch._unique2.
        for sort in [True, False]:
            for return_inverse in [True, False]:
                for return_counts in [True, False]:
                    flags = dict(return_inverse=return_inverse, return_counts=return_counts)
                    assert_only_first_requires_grad(torch.unique(inp, sorted=sort, **flags))
                    assert_only_first_requires_grad(torch.unique(inp, sorted=sort, dim=0, **flags))
                    assert_only_first_requires_grad(torch.unique_consecutive(inp, **flags))
                    assert_only_first_requires_grad(torch.unique_consecutive(inp, dim=0, **flags))

    def test_custom_function_cycle(self, torch):
        test = self

        class MyFn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, metadata):
                x = x.clone()
                ctx.meta = metadata
                ctx.save_for_backward(x)
                return x

            @staticmethod
            def backward(ctx, gO):
                (x,) = ctx.saved_tensors
                test.assertEqual(x, 3.14)
                test.assertEqual(ctx.meta["foo"], 3.14)
                return gO * x, None

        def get_refs(with_backward):
            a = torch.tensor(3.14, requires_grad=True)
            metadata = {}
            out = MyFn.apply(a, metadata)
            metadata["foo"] = out  # a cycle through ctx
            if with_backward:
                out.sum().backward()
                self.assertEqual(a.grad, a)
            return weakref.ref(out)  # upstream: torch._C._WeakTensorRef(out)

        with disable_gc():
            ref = get_refs(False)
            self.assertIsNotNone(ref())
        gc.collect()
        self.assertIsNone(ref())

        with disable_gc():  # backward clears the saved tensors, not ctx's __dict__
            ref = get_refs(True)
            self.assertIsNotNone(ref())
        gc.collect()
        self.assertIsNone(ref())

    def test_create_graph_and_full_backward_hook_cycle(self, torch):
        class TestCls:
            pass

        def get_ref(input_requires_grad, nb_hooks):
            t = torch.randn(10, requires_grad=input_requires_grad)
            a = torch.tensor(1.0, requires_grad=True)

            class Test(torch.nn.Module):
                def forward(self, x):
                    return x**2 * a**2

            mod = Test()
            for _ in range(nb_hooks):
                mod.register_full_backward_hook(lambda a, b, c: None)
            tmp = mod(t)
            test = TestCls()
            ref = weakref.ref(test)
            tmp.grad_fn.metadata["a"] = test  # an object kept by the graph
            warn_always = torch.is_warn_always_enabled()
            torch.set_warn_always(True)
            try:
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    tmp.exp().sum().backward(create_graph=True)
                    self.assertTrue(w)
                    found = sum(
                        "Using backward() with create_graph=True" in str(warning.message)
                        for warning in w
                    )
                    self.assertEqual(found, 1)
            finally:
                torch.set_warn_always(warn_always)
            a.grad = None  # break the create_graph cycle
            t.grad = None
            return ref

        for nb_hooks in (1, 2, 3):
            for input_requires_grad in (True, False):
                ref_ = get_ref(input_requires_grad=input_requires_grad, nb_hooks=nb_hooks)
                gc.collect()
                self.assertIsNone(ref_())

    @pytest.mark.parametrize("use_custom_function", [True, False])
    @pytest.mark.parametrize("use_tensor_hook", [True, False])
    def test_hook_closure_cycle(self, torch, use_custom_function, use_tensor_hook):
        # hook -> closure -> grad_fn_b -> hook: gc must not break the cycle while it is used.
        class Function(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad

        class Test:
            pass

        count = [0]

        def scope():
            a = torch.tensor(1.0, requires_grad=True)
            b = Function.apply(a) if use_custom_function else a.clone()
            grad_fn_b = b.grad_fn
            obj = Test()

            def hook(*args):
                grad_fn_b  # noqa: B018 (the closure holds the node and the sentinel)
                obj  # noqa: B018
                count[0] += 1

            if use_tensor_hook:
                b.register_hook(hook)
            else:
                b.grad_fn.register_hook(hook)
            c = b.clone()
            return c, weakref.ref(obj)

        with disable_gc():
            out, ref = scope()
            out.backward(retain_graph=True)
            gc.collect()
            out.backward(retain_graph=True)  # the hook is alive after a collection
            self.assertEqual(count[0], 2)
            self.assertIsNotNone(ref())
            del out
            gc.collect()
            self.assertIsNone(ref())

    def test_full_backward_hook_double_backward(self, torch):
        x = torch.rand(1, requires_grad=True)
        y = torch.rand_like(x)
        func = torch.nn.MSELoss()
        counter = [0]

        def hook(module, grad_input, grad_output):
            counter[0] += 1

        func.register_full_backward_hook(hook)
        f = func(x, y)
        (gradx_f,) = torch.autograd.grad(f, x, create_graph=True)
        self.assertEqual(counter[0], 1)
        _ = torch.autograd.grad(gradx_f, x)
        self.assertEqual(counter[0], 1)  # no error, and not called again

    def test_no_unnecessary_unwrapping(self, torch):
        a = torch.randn(5, requires_grad=True)
        a_orig = a.detach().clone()
        b = a * a
        c = a * b
        d = torch.exp(a)
        self.assertIs(b.grad_fn._saved_self, a)  # a leaf comes back as itself
        self.assertIs(b.grad_fn._saved_other, a)
        self.assertIs(c.grad_fn._saved_self, a)
        self.assertIs(c.grad_fn._saved_other, b)  # so does a non-output
        self.assertEqual(d.grad_fn._saved_result, d)  # an output comes back as a new object
        self.assertIsNot(d.grad_fn._saved_result, d)
        c.sum().backward()
        with self.assertRaisesRegex(RuntimeError, "after they have already been freed"):
            _ = c.grad_fn._saved_self
        self.assertEqual(a, a_orig)

    def test_saved_variable_version_counter(self, torch):
        a = torch.rand(2, requires_grad=True)
        b = torch.exp(a)
        b_unpacked = b.grad_fn._saved_result
        self.assertEqual(b, b_unpacked)
        self.assertEqual(b._version, b_unpacked._version)
        with torch.no_grad():
            b += 1
        self.assertEqual(b, b_unpacked)
        self.assertEqual(b._version, b_unpacked._version)
