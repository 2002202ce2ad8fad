"""TestAutograd, seventh part: reentrant backward, checkpoint, engine callbacks, saved tensors."""
# ruff: noqa: B023 (closures defined in a loop use that iteration's variables, as upstream's do)

import contextlib
import importlib
import weakref
from copy import deepcopy

import pytest

from .harness import Harness, mini_fails


def checkpoint_module(torch):
    return importlib.import_module(f"{torch.__name__}.utils.checkpoint")


class TestAutograd(Harness):
    def test_deep_reentrant(self, torch):
        Variable = torch.autograd.Variable

        class DeepReentrant(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                with torch.enable_grad():
                    ctx.x = Variable(x.detach(), requires_grad=True)
                    ctx.x = ctx.x - 1
                return ctx.x.detach()

            @staticmethod
            def backward(ctx, x):
                if ctx.x < 0:
                    return x
                with torch.enable_grad():
                    DeepReentrant.apply(ctx.x).sum().backward()
                return x

        # 2000 nested backward calls: too deep for one thread's stack, unless handled.
        v = torch.tensor(2000.0, requires_grad=True)
        DeepReentrant.apply(v).sum().backward()
        v2 = torch.tensor(200.0, requires_grad=True)  # again, reusing the workers
        DeepReentrant.apply(v2).sum().backward()

    def test_reentrant_priority(self, torch):
        Variable = torch.autograd.Variable
        order = []

        class MyFunction(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, x):
                order.append("MyFunction")
                return x

        class Reentrant(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                with torch.enable_grad():
                    ctx.x = Variable(x.detach(), requires_grad=True)
                    ctx.x = ctx.x - 1
                return ctx.x.detach()

            @staticmethod
            def backward(ctx, x):
                order.append("Reentrant")
                if ctx.x < 0:
                    return x
                with torch.enable_grad():
                    Reentrant.apply(ctx.x).backward()
                return x

        a = MyFunction.apply(torch.tensor(6.0, requires_grad=True))
        b = Reentrant.apply(torch.tensor(9.0, requires_grad=True))
        v = a * b
        v.backward()
        # All reentrant tasks run before MyFunction's, whatever their sequence numbers.
        self.assertEqual(len(order), 11)
        self.assertEqual(order.count("Reentrant"), 10)
        self.assertEqual(order[-1], "MyFunction")

    @mini_fails("missing API", "torch.autocast, and behind it torch.bfloat16 (numpy has none)")
    def test_checkpointing_non_reentrant_autocast_cpu(self, torch):
        checkpoint = checkpoint_module(torch).checkpoint
        for enabled in [True, False]:

            def foo(x, y, z):
                x = torch.mm(x, y)  # mm runs in autocast's dtype
                y = torch.mm(x, z)
                z = torch.mm(z, z)
                expected_dtype = torch.float32 if not enabled else torch.bfloat16
                self.assertEqual(expected_dtype, z.dtype)
                return z

            x = torch.randn(3, 3, requires_grad=True)
            y = torch.randn(3, 3, requires_grad=True)
            z = torch.randn(3, 3, requires_grad=True)
            with torch.autocast(enabled=enabled, device_type="cpu", dtype=torch.bfloat16):
                loss = checkpoint(foo, x, y, z, use_reentrant=False)
                loss = loss.sum()
            loss.backward()  # the recomputation runs in bfloat16 again

    def test_checkpointing_without_reentrant_custom_function_works(self, torch):
        checkpoint = checkpoint_module(torch).checkpoint
        msg = "Unpack is being triggered for a tensor that was already unpacked once"
        test = self

        class MyFunc(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, z):
                w = x * y * z
                out = w + w
                ctx.save_for_backward(x, y, z, w, out)
                return out

            @staticmethod
            def backward(ctx, grad_out):
                x, y, z, w, out = ctx.saved_tensors
                with test.assertRaisesRegex(RuntimeError, msg):  # recomputed ones clear on use
                    _ = ctx.saved_tensors
                return x, y, z

        x = torch.tensor(1.0, requires_grad=True)
        y = torch.tensor(2.0, requires_grad=True)
        z = torch.tensor(3.0, requires_grad=True)

        def foo(x, y, z):
            x = x * y * z
            y = y * y * z
            z = z * z
            return MyFunc.apply(x, y, z)

        out = checkpoint(foo, x, y, z, use_reentrant=False)
        out.sum().backward()

    def test_checkpoint_warns_if_use_reentrant_not_passed_explcitly(self, torch):
        checkpoint = checkpoint_module(torch).checkpoint
        a = torch.randn(1, requires_grad=True)
        self.assertNotWarn(lambda: checkpoint(lambda x: x, a, use_reentrant=False))
        with self.assertWarnsOnceRegex(
            UserWarning, ".*the use_reentrant parameter should be passed explicitly.*"
        ):
            checkpoint(lambda x: x, a)

    def test_checkpoint_sequential_warns_if_use_reentrant_not_passed_explcitly(self, torch):
        checkpoint_sequential = checkpoint_module(torch).checkpoint_sequential
        a = torch.randn(3, requires_grad=True)
        modules_list = [torch.nn.Linear(3, 3), torch.nn.Linear(3, 3), torch.nn.Linear(3, 3)]
        self.assertNotWarn(lambda: checkpoint_sequential(modules_list, 3, a, use_reentrant=False))
        with self.assertWarnsOnceRegex(
            UserWarning, ".*the use_reentrant parameter should be passed explicitly.*"
        ):
            checkpoint_sequential(modules_list, 3, a)

    def test_checkpoint_graph_execution_group(self, torch):
        utils_checkpoint = checkpoint_module(torch)
        checkpoint = utils_checkpoint.checkpoint

        def run(use_graph_execution_group):
            counter = [0]

            def fn(x):
                counter[0] += 1
                y = x.sin().cos()
                z = y.sin().cos()
                return y, z

            x = torch.randn(3, 3, requires_grad=True)
            y, z = checkpoint(fn, x, use_reentrant=False)
            group = utils_checkpoint.GraphExecGroup()
            ctx = group if use_graph_execution_group else contextlib.nullcontext()
            with ctx:
                (grad_y,) = torch.autograd.grad(z, inputs=(y,), grad_outputs=(torch.ones(3, 3),))
                (grad_x,) = torch.autograd.grad(y, inputs=(x,), grad_outputs=(grad_y,))
            # In one group the two backward calls share one recomputation.
            self.assertEqual(counter[0], 2 if use_graph_execution_group else 3)

        run(use_graph_execution_group=True)
        run(use_graph_execution_group=False)

        def fn(x):
            return x.sin().cos()

        x = torch.randn(3, 3, requires_grad=True)
        out = checkpoint(fn, x, use_reentrant=False)
        with utils_checkpoint.GraphExecGroup():  # two overlapping backward calls: refused
            out.sum().backward(retain_graph=True)
            with self.assertRaisesRegex(RuntimeError, "Performing two backward calls that overlap"):
                out.sum().backward()

    def test_checkpoint_detects_non_determinism(self, torch):
        utils_checkpoint = checkpoint_module(torch)
        checkpoint = utils_checkpoint.checkpoint

        def save_3_tensors(x):
            out = x.sin().exp()
            return out.sin()

        def save_2_tensors(x):
            return x.sin().exp()

        def save_2_tensors_alt(x):
            return x.sin() * torch.tensor([1.0, 2.0])

        def get_non_det_fn(orig_fn, recompute_fn):
            counter = [0]

            def fn(x):
                if counter[0] == 0:
                    counter[0] += 1
                    return orig_fn(x)
                return recompute_fn(x)

            return fn

        a = torch.randn(1, requires_grad=True)
        fn = get_non_det_fn(orig_fn=save_3_tensors, recompute_fn=save_2_tensors)
        with self.assertRaisesRegex(RuntimeError, "A different number of tensors was saved"):
            checkpoint(fn, a, use_reentrant=False).backward()

        fn = get_non_det_fn(orig_fn=save_2_tensors, recompute_fn=save_3_tensors)
        with utils_checkpoint.set_checkpoint_early_stop(False):
            with self.assertRaisesRegex(
                RuntimeError, "trying to save more tensors during recomputation"
            ):
                checkpoint(fn, a, use_reentrant=False).backward()

        fn = get_non_det_fn(orig_fn=save_2_tensors, recompute_fn=save_3_tensors)
        checkpoint(fn, a, use_reentrant=False).backward()  # early stop: no error

        fn = get_non_det_fn(orig_fn=save_2_tensors, recompute_fn=save_2_tensors_alt)
        with self.assertRaisesRegex(RuntimeError, "tensors have different metadata"):
            checkpoint(fn, a, use_reentrant=False).backward()

        debug_message = "You are seeing this error because you passed `debug=True` to checkpoint"
        fn = get_non_det_fn(orig_fn=save_2_tensors, recompute_fn=save_2_tensors_alt)
        with self.assertRaisesRegex(RuntimeError, debug_message):
            checkpoint(fn, a, use_reentrant=False, debug=True).backward()

        fn = get_non_det_fn(orig_fn=save_2_tensors, recompute_fn=save_2_tensors_alt)
        with self.assertRaisesRegex(RuntimeError, debug_message):
            with utils_checkpoint.set_checkpoint_debug_enabled(True):
                checkpoint(fn, a, use_reentrant=False, debug=False).backward()

        fn = get_non_det_fn(orig_fn=save_2_tensors, recompute_fn=save_2_tensors_alt)
        with self.assertRaisesRegex(
            RuntimeError, "Recomputed values for the following tensors have different"
        ):
            with utils_checkpoint.set_checkpoint_debug_enabled(False):
                checkpoint(fn, a, use_reentrant=False, debug=True).backward()

    def test_access_saved_tensor_twice_without_recomputation_works(self, torch):
        checkpoint = checkpoint_module(torch).checkpoint
        count = [0]

        def foo(a):
            count[0] += 1
            b = a * a
            c = a * b  # noqa: F841
            return torch.exp(a)

        a = torch.randn(5, requires_grad=True)
        d = checkpoint(foo, a, use_reentrant=False)
        self.assertEqual(count[0], 1)
        # Outside a backward call each read of a saved value recomputes, then drops it.
        _ = d.grad_fn._saved_result
        self.assertEqual(count[0], 2)
        _ = d.grad_fn._saved_result
        self.assertEqual(count[0], 3)
        d.sum().backward()
        self.assertEqual(count[0], 4)
        with self.assertRaisesRegex(
            RuntimeError, "or directly access saved tensors after they have already been freed"
        ):
            _ = d.grad_fn._saved_result

    def test_checkpoint_valid_reset_on_error(self, torch):
        checkpoint = checkpoint_module(torch).checkpoint
        a = torch.randn(2, 2, requires_grad=True)
        with self.assertRaisesRegex(Exception, "torch.utils.checkpoint is incompatible"):
            b = checkpoint(torch.exp, a, use_reentrant=True).sum()
            torch.autograd.grad(b, (a,))
        c = checkpoint(torch.exp, a, use_reentrant=True).sum()
        c.backward()  # the failed call left no state behind

    @pytest.mark.parametrize("use_reentrant", [True, False])
    def test_checkpointing_without_reentrant_detached_tensor(self, torch, use_reentrant):
        checkpoint = checkpoint_module(torch).checkpoint

        class NoGradModule(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = torch.nn.Linear(2, 2, bias=False)
                self.lin2 = torch.nn.Linear(2, 2, bias=False)

            def forward(self, x):
                with torch.no_grad():
                    return self.lin2(self.linear(x))

        module = NoGradModule()
        a = torch.randn(2, 2, requires_grad=True)
        for _ in range(3):
            err_ctx = (
                self.assertRaisesRegex(RuntimeError, "none of output has requires_grad=True")
                if use_reentrant
                else contextlib.nullcontext()
            )
            with err_ctx:
                out = checkpoint(module, a, use_reentrant=use_reentrant)  # requires no grad
                out += a
                out.sum().backward()

    def test_checkpointing_without_reentrant_saved_object_identity(self, torch):
        checkpoint = checkpoint_module(torch).checkpoint
        x_backward = None

        class Test(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.save_for_backward(y)
                return x

            @staticmethod
            def backward(ctx, x):
                nonlocal x_backward
                (x_backward,) = ctx.saved_tensors
                return x, None

        a = torch.tensor(1.0, requires_grad=True)
        b = torch.tensor(1.0, requires_grad=False)
        Test.apply(a, b).backward()
        self.assertIs(b, x_backward)
        x_backward = None
        checkpoint(Test.apply, a, b, use_reentrant=False).backward()
        self.assertIs(b, x_backward)

    def test_checkpointing_without_reentrant_correct_grad(self, torch):
        checkpoint = checkpoint_module(torch).checkpoint
        a = torch.randn(2, 2, requires_grad=True)
        b = torch.exp(a).sum()
        b.backward()
        b_grad = a.grad
        a.grad = None
        c = checkpoint(torch.exp, a, use_reentrant=False).sum()
        c.backward()
        c_grad = a.grad
        a.grad = None
        d = checkpoint(torch.exp, a, use_reentrant=False).sum()
        (d_grad,) = torch.autograd.grad(d, (a,))
        self.assertEqual(b_grad, c_grad)
        self.assertEqual(b_grad, d_grad)

    def test_checkpointing_without_reentrant_dataparallel(self, torch):
        checkpoint = checkpoint_module(torch).checkpoint

        class LinearModule(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = torch.nn.Linear(2, 2, bias=False)

            def forward(self, inp):
                return self.linear(inp)

        a = torch.randn(2, 2, requires_grad=True)
        model = LinearModule()
        b = deepcopy(model)(a).sum()
        b.backward()
        b_grad = a.grad
        a.grad = None
        module = torch.nn.DataParallel(deepcopy(model))
        c = checkpoint(module, a, use_reentrant=False).sum()
        c.backward()
        self.assertEqual(b_grad, a.grad)

    def test_checkpointing_without_reentrant_parameter_used_in_an_out(self, torch):
        checkpoint = checkpoint_module(torch).checkpoint
        w = torch.randn(10, 10, requires_grad=True)
        count = 0

        def hook(grad):
            nonlocal count
            count += 1

        w.register_hook(hook)
        x = torch.rand(10, 10, requires_grad=True)
        h = w * x  # w used outside the checkpoint...
        out = checkpoint(lambda x: w * x, h, use_reentrant=False)  # ...and inside
        out.sum().backward()
        self.assertEqual(count, 1)  # the hook runs once

    def test_checkpointing_without_reentrant_arbitrary_input_output(self, torch):
        checkpoint = checkpoint_module(torch).checkpoint

        class MyModel(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = torch.nn.Linear(5, 5, bias=False)

            def forward(self, dict_input):
                return {"result": self.layer(dict_input["tensor"])}

        model_no_checkpoint = MyModel()
        model_checkpoint = deepcopy(model_no_checkpoint)
        inp = {"tensor": torch.randn(5, 5)}
        out_no_checkpoint = model_no_checkpoint(inp)["result"].sum()
        out_checkpoint = checkpoint(model_checkpoint, inp, use_reentrant=False)["result"].sum()
        self.assertEqual(out_checkpoint, out_no_checkpoint)
        out_no_checkpoint.backward()
        out_checkpoint.backward()
        for param, checkpoint_param in zip(
            model_no_checkpoint.parameters(), model_checkpoint.parameters()
        ):
            self.assertEqual(param.grad, checkpoint_param.grad)

    def test_callback_adds_callback(self, torch):
        engine = torch.autograd.Variable._execution_engine
        called = [0]

        def callback_final():
            called[0] += 1

        def callback_adds_callback():
            called[0] += 1
            engine.queue_callback(callback_final)

        class MyFunc(torch.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                return input

            @staticmethod
            @torch.autograd.function.once_differentiable
            def backward(ctx, grad):
                engine.queue_callback(callback_adds_callback)
                return grad

        a = torch.rand((3, 3), requires_grad=True)
        MyFunc.apply(a).sum().backward()
        self.assertEqual(called[0], 2)

    def _test_reentrant_with_callbacks(self, torch, install_callbacks_in_depths):
        engine = torch.autograd.Variable._execution_engine
        counter = {"inner": 0, "outer": 0}

        def inc_inner_counter():
            counter["inner"] += 1

        def inc_outer_counter():
            counter["outer"] += 1

        class MyFunc(torch.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                return input

            @staticmethod
            @torch.autograd.function.once_differentiable
            def backward(ctx, input):
                if 1 in install_callbacks_in_depths:
                    engine.queue_callback(inc_inner_counter)
                return input

        class MyReentrantFunc(torch.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                return input

            @staticmethod
            @torch.autograd.function.once_differentiable
            def backward(ctx, input):
                if 0 in install_callbacks_in_depths:
                    engine.queue_callback(inc_outer_counter)
                tmp_inp = input.detach().requires_grad_()
                with torch.enable_grad():
                    tmp_out = (MyFunc.apply(tmp_inp)).sum()
                tmp_out.backward()  # reentrant
                return input

        t1 = torch.rand((3, 3), requires_grad=True)
        t3 = MyReentrantFunc.apply(t1).sum()
        torch.autograd.backward([t3])
        return counter

    def test_reentrant_with_callbacks_depth_0(self, torch):
        ret = self._test_reentrant_with_callbacks(torch, [0])
        self.assertEqual((ret["outer"], ret["inner"]), (1, 0))

    def test_reentrant_with_callbacks_depth_1(self, torch):
        ret = self._test_reentrant_with_callbacks(torch, [1])
        self.assertEqual((ret["outer"], ret["inner"]), (0, 1))

    def test_reentrant_with_callbacks_both_depths(self, torch):
        ret = self._test_reentrant_with_callbacks(torch, [0, 1])
        self.assertEqual((ret["outer"], ret["inner"]), (1, 1))

    def test_reentrant_with_leaf_variable_hook(self, torch):
        handle = None
        param = torch.rand(10, requires_grad=True)

        def add_gradient_penalty_to_grad(grad):
            handle.remove()
            old_param_grad = grad
            param.grad = None
            with torch.enable_grad():  # a gradient penalty, by a backward call in the hook
                g = grad.detach().requires_grad_()
                new_param = param.detach().requires_grad_()
                out = ((g * 2) + new_param).sum()
                out.backward()
            res = g.grad + grad
            param.grad = old_param_grad
            return res

        handle = param.register_hook(add_gradient_penalty_to_grad)
        tmp = param * param
        tmp.sum().backward()

    def test_reentrant_with_non_leaf_variable_hook(self, torch):
        handle = None
        param = torch.rand(10, requires_grad=True)

        def manual_increase_gradient(grad):
            handle.remove()
            with torch.enable_grad():
                g = grad.detach().requires_grad_()
                out = ((g * 2) + 5).sum()
                out.backward()
            return g.grad + grad

        tmp = param * param
        handle = tmp.register_hook(manual_increase_gradient)
        tmp.sum().backward()
        self.assertEqual(param.grad, 6 * param)

    def test_get_data_and_hooks_from_raw_saved_variable(self, torch):
        def pack_hook(t):
            return t

        def unpack_hook(t):
            return t

        a = torch.tensor(2.0, requires_grad=True)
        with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
            b = a**2
        c = b.exp()
        d = c**2
        pow_sv = b.grad_fn._raw_saved_self
        exp_sv = c.grad_fn._raw_saved_result
        pow2_sv = d.grad_fn._raw_saved_self
        self.assertTrue(pow_sv.data is a)  # the packed object as it is
        self.assertTrue(pow_sv.unpack_hook is unpack_hook)
        self.assertFalse(exp_sv.data is c)  # a saved output comes back detached
        self.assertIsNone(exp_sv.unpack_hook)
        self.assertTrue(pow2_sv.data is c)  # a saved input does not
        self.assertIsNone(pow2_sv.unpack_hook)

    def test_saved_tensor_constructor_forbidden_without_flag(self, torch):
        torch.randn(5, requires_grad=True)
        with self.assertRaisesRegex(
            RuntimeError, "Trying to create a SavedTensor object from Python is forbidden"
        ):
            torch.autograd.SavedTensor()

    def test_custom_function_saved_tensors(self, torch):
        def getFn(save=True):
            class MyFn(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    if save:
                        ctx.save_for_backward(x, None)
                    return x

                @staticmethod
                def backward(ctx, g):
                    return g

            return MyFn

        a = torch.randn(5, requires_grad=True)
        y = getFn(True).apply(a)
        self.assertEqual((a, None), y.grad_fn.saved_tensors)
        saved = y.grad_fn._raw_saved_tensors
        # Upstream: isinstance(..., torch._C._autograd.SavedTensor); here by class name.
        self.assertEqual(type(saved[0]).__name__, "SavedTensor")
        self.assertEqual(type(saved[1]).__name__, "SavedTensor")  # None too, until unpacked
        with self.assertRaisesRegex(RuntimeError, "None is forbidden"):
            saved[1].register_hooks(lambda x: x, lambda x: x)
        with self.assertRaisesRegex(TypeError, "incompatible function arguments"):
            saved[0].register_hooks(lambda x: x)
        with self.assertRaisesRegex(TypeError, "incompatible function arguments"):
            saved[0].register_hooks(1, 1)
        saved[0].register_hooks(lambda x: x, lambda x: x)
        with self.assertRaisesRegex(RuntimeError, "already been set"):
            saved[0].register_hooks(lambda x: x, lambda x: x)
        y.sum().backward()

        del saved
        with self.assertRaisesRegex(RuntimeError, "after they have already been freed"):
            _ = y.grad_fn._raw_saved_tensors
        with self.assertRaisesRegex(RuntimeError, "after they have already been freed"):
            _ = y.grad_fn.saved_tensors

        y = getFn(False).apply(a)
        self.assertEqual(y.grad_fn.saved_tensors, ())
        self.assertEqual(y.grad_fn._raw_saved_tensors, ())

    def test_clear_saved_tensors_on_access(self, torch):
        test = self

        class MyFn(torch.autograd.Function):
            clear_saved_tensors_on_access = True

            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.clone()

            @staticmethod
            def backward(ctx, grad_output):
                (x,) = ctx.saved_tensors
                ref = weakref.ref(x)
                del x
                test.assertIsNone(ref())  # the local name was the last reference
                return grad_output

        x = torch.randn(3, requires_grad=True)
        y = MyFn.apply(x.clone())
        y.sum().backward()

    def test_clear_saved_tensors_on_access_double_access_error(self, torch):
        class MyFn(torch.autograd.Function):
            clear_saved_tensors_on_access = True

            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.clone()

            @staticmethod
            def backward(ctx, grad_output):
                _ = ctx.saved_tensors
                _ = ctx.saved_tensors  # the second read raises
                return grad_output

        x = torch.randn(3, requires_grad=True)
        y = MyFn.apply(x)
        with self.assertRaisesRegex(RuntimeError, "can only be accessed once"):
            y.sum().backward()
