"""TestAutogradInferenceMode: inference tensors, and normal tensors used in inference mode."""
# ruff: noqa: B023 (closures defined in a loop use that iteration's variables, as upstream's do)

from itertools import product

from .harness import Harness

INPLACE_MESSAGE = (
    "one of the variables needed for gradient computation has been modified by an inplace operation"
)


class TestAutogradInferenceMode(Harness):
    def test_inference_mode_context_manager(self, torch):
        self.assertFalse(torch.is_inference_mode_enabled())
        with torch.inference_mode():
            self.assertTrue(torch.is_inference_mode_enabled())
            with torch.inference_mode(False):
                self.assertFalse(torch.is_inference_mode_enabled())
            self.assertTrue(torch.is_inference_mode_enabled())
        self.assertFalse(torch.is_inference_mode_enabled())

    def test_inference_mode_decorator(self, torch):
        def func(x):
            self.assertEqual(torch.is_inference_mode_enabled(), mode)
            return x * x

        for mode, use_kwarg in product((True, False, None), (True, False)):
            if mode is None:  # used bare, as @inference_mode
                decorated = (
                    torch.inference_mode(mode=func) if use_kwarg else torch.inference_mode(func)
                )
                mode = True
            elif use_kwarg:
                decorated = torch.inference_mode(mode=mode)(func)
            else:
                decorated = torch.inference_mode(mode)(func)
            for requires_grad in (True, False):
                c = torch.ones(1, 2, 3, requires_grad=requires_grad)
                d = decorated(c)
                self.assertTrue(not mode or torch.is_inference(d))
                self.assertEqual(d.requires_grad, requires_grad and not mode)

    def test_inference_mode_tensor_creation(self, torch):
        with torch.inference_mode():
            c = torch.ones(1, 2, 3)  # made inside: an inference tensor
            self.assertFalse(c.requires_grad)
            self.assertTrue(torch.is_inference(c))
            tmp = torch.ones(1, 2, 3, requires_grad=True)
            self.assertTrue(tmp.requires_grad)
            self.assertTrue(torch.is_inference(tmp))
            tmp = torch.ones(1, 2, 3).requires_grad_(False)
            self.assertFalse(tmp.requires_grad)
            self.assertTrue(torch.is_inference(tmp))

    def test_inference_mode_existing_autograd_session(self, torch):
        s = torch.ones(1, 2, 3, requires_grad=True)
        a = s.clone()
        out = a * a  # a saved outside inference mode
        with torch.inference_mode():
            a.add_(2)
        self.assertFalse(torch.is_inference(a))
        # A tensor made outside keeps its version counter: backward sees the change.
        with self.assertRaisesRegex(RuntimeError, INPLACE_MESSAGE):
            out.backward(torch.ones_like(out))

    def test_inference_mode_inf_tensor_in_inf_mode_functional_op(self, torch):
        with torch.inference_mode():
            for requires_grad in (True, False):
                c = torch.ones(1, 2, 3, requires_grad=requires_grad)
                func_out = c * c
                self.assertTrue(torch.is_inference(func_out))
                self.assertFalse(func_out.requires_grad)

    def test_inference_mode_inf_tensor_in_inf_mode_inplace_op(self, torch):
        @torch.inference_mode()
        def run_test(fn):
            for requires_grad in (True, False):
                c = torch.ones(1, 2, 3, requires_grad=requires_grad)
                fn(c)
                self.assertTrue(torch.is_inference(c))
                self.assertEqual(c.requires_grad, requires_grad)

        run_test(lambda x: x.add_(2))
        run_test(lambda x: x.transpose_(0, 1))
        run_test(lambda x: x.resize_(1, 2))
        run_test(lambda x: x.resize_as_(torch.ones(1, 2)))
        run_test(lambda x: x.copy_(torch.ones(1, 2, 3)))

    def test_inference_mode_inf_tensor_in_inf_mode_view_op(self, torch):
        with torch.inference_mode():
            for requires_grad in (True, False):
                c = torch.ones(1, 2, 3, requires_grad=requires_grad)
                view_out = c.view(-1)
                self.assertTrue(torch.is_inference(view_out))
                self.assertFalse(view_out.requires_grad)

    def test_inference_mode_inf_tensor_in_normal_mode_functional_op(self, torch):
        for requires_grad in (True, False):
            with torch.inference_mode():
                c = torch.ones(1, 2, 3, requires_grad=requires_grad)
        func_out = c * c
        self.assertFalse(torch.is_inference(func_out))
        self.assertFalse(func_out.requires_grad)
        self.assertTrue(func_out.is_leaf)

    def test_inference_mode_inf_tensor_in_normal_mode_inplace_op(self, torch):
        def run_test(fn):
            for requires_grad in (False, True):
                with torch.inference_mode():
                    c = torch.ones(1, 2, 3, requires_grad=requires_grad)
                if not requires_grad:
                    with self.assertRaisesRegex(
                        RuntimeError, "Inplace update to inference tensor outside InferenceMode"
                    ):
                        fn(c)

        run_test(lambda x: x.add_(2))
        run_test(lambda x: x.transpose_(0, 1))

    def test_inference_mode_inf_tensor_in_normal_mode_view_op(self, torch):
        for requires_grad in (True, False):
            with torch.inference_mode():
                c = torch.ones(1, 2, 3, requires_grad=requires_grad)
            out = c.view(-1)
            self.assertTrue(torch.is_inference(out))
            self.assertFalse(out.requires_grad)
            self.assertFalse(out._is_view())
            self.assertTrue(out.is_leaf)

    def test_normal_tensor_inplace_output_in_inference_mode(self, torch):
        def run_test(fn):
            for requires_grad in (True, False):
                s = torch.ones(1, 2, 3, requires_grad=requires_grad)
                a = s.clone()
                with torch.inference_mode():
                    fn(a)
                    self.assertFalse(torch.is_inference(a))
                    self.assertEqual(a.requires_grad, requires_grad)
                    fn(a)  # in place twice
                    self.assertFalse(torch.is_inference(a))
                    self.assertEqual(a.requires_grad, requires_grad)
                    view_out = a.view(-1)  # then a view
                    self.assertFalse(torch.is_inference(view_out))
                    self.assertEqual(view_out.requires_grad, requires_grad)

        run_test(lambda x: x.add_(2))
        run_test(lambda x: x.transpose_(0, 1))

    def test_normal_tensor_view_output_in_inference_mode(self, torch):
        for requires_grad in (True, False):
            s = torch.ones(1, 2, 3, requires_grad=requires_grad)
            a = s.clone()
            with torch.inference_mode():
                out = a.view(-1)
                self.assertFalse(torch.is_inference(out))
                self.assertEqual(out.requires_grad, requires_grad)
                self.assertTrue(out._is_view())
                tmp = out.view(-1)  # view of a view
                self.assertFalse(torch.is_inference(tmp))
                self.assertEqual(tmp.requires_grad, requires_grad)
                self.assertTrue(tmp._is_view())
                self.assertTrue(tmp.is_leaf)
                self.assertTrue(torch.is_inference_mode_enabled())
                tmp.add_(2)  # then in place
                self.assertFalse(torch.is_inference(tmp))
                self.assertEqual(tmp.requires_grad, requires_grad)
                self.assertEqual(a._version, tmp._version)

    def test_normal_tensor_view_output_in_normal_mode(self, torch):
        for requires_grad in (True, False):
            s = torch.ones(1, 2, 3, requires_grad=requires_grad)
            a = s.clone()
            with torch.inference_mode():
                out = a.view(-1)
                self.assertFalse(torch.is_inference(out))
                self.assertEqual(out.requires_grad, requires_grad)
                self.assertTrue(out._is_view())
                self.assertTrue(out.is_leaf)
            tmp = out * out
            self.assertFalse(torch.is_inference(tmp))
            self.assertEqual(tmp.requires_grad, requires_grad)
            if requires_grad:
                with self.assertRaisesRegex(
                    RuntimeError,
                    "A view was created in inference mode and is being modified inplace",
                ):
                    out.add_(2)
            else:
                out.add_(2)
            tmp = out.view(2, 3)
            self.assertFalse(torch.is_inference(tmp))
            self.assertEqual(tmp.requires_grad, requires_grad)

    def test_mix_inference_and_normal_tensor_functional_op(self, torch):
        for requires_grad in (True, False):
            s = torch.ones(1, 2, 3, requires_grad=requires_grad)
            with torch.inference_mode():
                c = torch.ones(1, 2, 3, requires_grad=requires_grad)
            out = c.add(s)  # add saves nothing: allowed
            self.assertFalse(torch.is_inference(out))
            self.assertEqual(out.requires_grad, requires_grad)
            if requires_grad:
                out.backward(torch.ones_like(out))  # an inference leaf still gets a gradient
                self.assertEqual(c.grad, torch.ones_like(c))
                with self.assertRaisesRegex(
                    RuntimeError, "Inference tensors cannot be saved for backward"
                ):
                    c * s

    def test_mix_inference_and_normal_tensor_inplace_op(self, torch):
        for requires_grad in (True, False):
            s = torch.ones(1, 2, 3, requires_grad=requires_grad)
            a = s.clone()
            with torch.inference_mode():
                c = torch.ones(1, 2, 3)
            self.assertTrue(torch.is_inference(c))
            if requires_grad:
                with self.assertRaisesRegex(
                    RuntimeError, "Inference tensors cannot be saved for backward"
                ):
                    a.mul_(c)
                with self.assertRaisesRegex(
                    RuntimeError,
                    "out=... arguments don't support automatic differentiation, "
                    "but one of the arguments requires grad",
                ):
                    torch.mul(s, s, out=c)
            else:
                a.mul_(c)
                with self.assertRaisesRegex(
                    RuntimeError,
                    "Inplace update to inference tensor outside InferenceMode is not allowed",
                ):
                    torch.mul(s, s, out=c)

    def test_mix_inference_and_normal_tensor_view_op(self, torch):
        for requires_grad in (True, False):
            s = torch.ones(1, 2, 3, requires_grad=requires_grad)
            with torch.inference_mode():
                c = torch.ones(1, 2, 3)
            tmp1 = c.view_as(s)  # a view of c alone
            self.assertTrue(torch.is_inference(tmp1))
            self.assertFalse(tmp1.requires_grad)
            tmp2 = s.view_as(c)  # a view of s alone
            self.assertFalse(torch.is_inference(tmp2))
            self.assertEqual(tmp2.requires_grad, requires_grad)

    def test_inference_mode_handle_direct_view_on_rebase(self, torch):
        def run_test(fn):
            for requires_grad in (True, False):
                s = torch.ones(1, 2, 3, requires_grad=requires_grad)
                a = s.clone()
                with torch.inference_mode():
                    view_out = a.view_as(a)
                if requires_grad:
                    with self.assertRaisesRegex(
                        RuntimeError,
                        "A view was created in inference mode and is being modified inplace",
                    ):
                        fn(view_out)
                else:
                    fn(view_out)

        run_test(lambda x: x.add_(2))
        run_test(lambda x: x.transpose_(0, 1))

    def test_inference_mode_handle_indirect_view_on_rebase(self, torch):
        def run_test(fn):
            for requires_grad in (True, False):
                s = torch.ones(1, 2, 3, requires_grad=requires_grad)
                a = s.clone()
                with torch.inference_mode():
                    view_out = a.view(-1)
                fn(a)
                if requires_grad:
                    with self.assertRaisesRegex(
                        RuntimeError,
                        "A view was created in inference mode and its base or another view ",
                    ):
                        _ = view_out.grad_fn
                else:
                    _ = view_out.grad_fn

        run_test(lambda x: x.add_(2))
        run_test(lambda x: x.transpose_(0, 1))
