"""TestAutograd, fifth part: reentrant errors, var_mean, hook ordering, views modified in place."""

import gc
from copy import deepcopy

from .harness import Harness, mini_fails


class TestAutograd(Harness):
    def test_reentrant_child_error(self, torch):
        class SimulateBackwardError(torch.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                return input.clone()

            @staticmethod
            @torch.autograd.function.once_differentiable
            def backward(ctx, input):
                raise Exception("Simulate error on backward pass")

        a = torch.rand(3, 3, requires_grad=True)  # the parent graph
        c = a * a
        b = torch.rand(3, 3, requires_grad=True)  # the reentrant child graph
        e = b * b
        f = SimulateBackwardError.apply(e)
        reentrant_root = f.sum()

        class ReentrantFunc(torch.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                return inp.clone()

            @staticmethod
            def backward(ctx, grad):
                reentrant_root.backward()  # raises in the child
                return grad

        d = ReentrantFunc.apply(c)
        with self.assertRaisesRegex(Exception, "Simulate error"):
            d.sum().backward()

    def test_var_mean_differentiable(self, torch):
        dim = [2, 4]
        keepdim = False
        input1 = torch.randn(3, 4, 5, 6, 2, 3, requires_grad=True)
        input2 = deepcopy(input1)
        var1, mean1 = torch.var_mean(input1, dim=dim, keepdim=keepdim)
        var2 = input2.var(dim=dim, keepdim=keepdim)
        mean2 = input2.mean(dim=dim, keepdim=keepdim)
        grad = torch.randn(3, 4, 6, 3, requires_grad=True)
        r1 = var1 * var1 * mean1 * mean1
        r2 = var2 * var2 * mean2 * mean2
        self.assertEqual(r1, r2, rtol=0.01, atol=0.0)
        torch.autograd.backward(r1, grad)
        torch.autograd.backward(r2, grad)
        self.assertEqual(input1.grad, input2.grad, rtol=0.01, atol=0.0)

    def test_variable_traverse(self, torch):
        def get_out_and_unrefed_cycle():
            inp = torch.randn(10, requires_grad=True)
            tmp = inp.view(10, 1)
            out = tmp.view(10)
            my_list = [tmp]  # a reference cycle holding a tensor of the graph
            my_list.append(my_list)
            return out

        out = get_out_and_unrefed_cycle()
        gc.collect()
        out.backward(torch.randn(out.size()))  # nothing of the graph was released

    def test_pow_zero_tensor_gradient(self, torch):
        def run_test(input_size, exponent):
            input = torch.zeros(*input_size, requires_grad=True)
            input.pow(exponent).sum().backward()
            self.assertEqual(input.grad.abs().sum(), 0)

        run_test((10,), torch.zeros(10))
        run_test((10, 10), torch.zeros(10, 10))
        run_test((10,), 0)

    def test_backward_hook_relative_ordering(self, torch):
        order = []

        class MyModule(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = torch.nn.Linear(10, 10)

            def forward(self, x):
                return self.linear(x)

        x = torch.randn(10, 10, requires_grad=True)
        module = MyModule()
        module.register_full_backward_hook(
            lambda _1, _2, _3: order.append(
                "module_full_backward_hook_BackwardHookFunctionBackward0"
            )
        )

        def make_pre_hook(id):
            return lambda _: order.append(f"pre_hook_{id}")

        def make_post_hook(id):
            return lambda _1, _2: order.append(f"post_hook_{id}")

        count = 0

        def register_hooks_on_all_nodes(nodes):
            nonlocal count
            for node, _ in nodes:
                count += 1
                id = f"{node.name()}_{count}"
                node.register_prehook(make_pre_hook(id))
                node.register_hook(make_post_hook(id))
                register_hooks_on_all_nodes(node.next_functions)

        loss = module(x).sum()
        register_hooks_on_all_nodes(((loss.grad_fn, None),))

        def make_tensor_pre_hook(id):
            return lambda _: order.append(f"tensor_pre_hook_{id}")

        def make_post_acc_grad_hook(id):
            return lambda _: order.append(f"post_acc_grad_hook_{id}")

        x.register_hook(make_tensor_pre_hook("x"))
        module.linear.weight.register_hook(make_tensor_pre_hook("weight"))
        module.linear.bias.register_hook(make_tensor_pre_hook("bias"))
        x.register_post_accumulate_grad_hook(make_post_acc_grad_hook("x"))
        module.linear.weight.register_post_accumulate_grad_hook(make_post_acc_grad_hook("weight"))
        module.linear.bias.register_post_accumulate_grad_hook(make_post_acc_grad_hook("bias"))
        loss.backward()

        expected_order = [
            "pre_hook_SumBackward0_1",
            "post_hook_SumBackward0_1",
            "pre_hook_BackwardHookFunctionBackward_2",
            "post_hook_BackwardHookFunctionBackward_2",
            "pre_hook_AddmmBackward0_3",
            "post_hook_AddmmBackward0_3",
            "tensor_pre_hook_bias",
            "pre_hook_torch::autograd::AccumulateGrad_4",
            "post_acc_grad_hook_bias",
            "post_hook_torch::autograd::AccumulateGrad_4",
            "pre_hook_TBackward0_7",
            "post_hook_TBackward0_7",
            "tensor_pre_hook_weight",
            "pre_hook_torch::autograd::AccumulateGrad_8",
            "post_acc_grad_hook_weight",
            "post_hook_torch::autograd::AccumulateGrad_8",
            "pre_hook_BackwardHookFunctionBackward_5",
            "module_full_backward_hook_BackwardHookFunctionBackward0",
            "post_hook_BackwardHookFunctionBackward_5",
            "tensor_pre_hook_x",
            "pre_hook_torch::autograd::AccumulateGrad_6",
            "post_acc_grad_hook_x",
            "post_hook_torch::autograd::AccumulateGrad_6",
        ]
        self.assertEqual(len(expected_order), len(order))
        for expected, actual in zip(expected_order, order):
            self.assertEqual(expected, actual)

    @mini_fails(
        "missing API",
        "torch.autograd._force_original_view_tracking and is_view_replay_enabled (view replay: "
        "a view's history remade by replaying its view operations, where mini_autograd always "
        "uses as_strided)",
    )
    def test_view_replay_enabled(self, torch):
        def f(x):
            out = x.clone().view(-1)
            out.add_(1)  # modifying the view: autograd replays or as_strides it
            return out

        force = torch.autograd._force_original_view_tracking
        x = torch.ones(2, 2, requires_grad=True)
        try:
            with force(False):
                out = f(x)
                self.assertTrue("AsStridedBackward" in str(out.grad_fn))
                self.assertFalse(torch.autograd.is_view_replay_enabled())
            self.assertFalse(torch.autograd.is_view_replay_enabled())

            with force(True):
                out = f(x)
                self.assertTrue("ViewBackward" in str(out.grad_fn))
                self.assertTrue(torch.autograd.is_view_replay_enabled())
            out = f(x)
            self.assertTrue("AsStridedBackward" in str(out.grad_fn))
            self.assertFalse(torch.autograd.is_view_replay_enabled())

            with force(False):
                force(True)
                out = f(x)
                self.assertTrue("ViewBackward" in str(out.grad_fn))
                self.assertTrue(torch.autograd.is_view_replay_enabled())
            self.assertFalse(torch.autograd.is_view_replay_enabled())

            force(False)  # as a function
            out = f(x)
            self.assertTrue("AsStridedBackward" in str(out.grad_fn))
            self.assertFalse(torch.autograd.is_view_replay_enabled())
            force(True)
            out = f(x)
            self.assertTrue("ViewBackward" in str(out.grad_fn))
            self.assertTrue(torch.autograd.is_view_replay_enabled())
        finally:
            force(False)  # upstream's tearDown

    def test_inplace_on_view_saved_output(self, torch):
        # An in-place op on a view that saves its output once made a reference cycle.
        dealloc = [0]

        class IncrementOnDelete:
            def __del__(self):
                dealloc[0] += 1

        def test():
            root = torch.randn(3, 3, requires_grad=True)
            copy = root.clone()
            copy.grad_fn.register_hook(IncrementOnDelete())
            view = copy.view(9)
            torch.nn.functional.relu(view, inplace=True)

        test()
        self.assertEqual(dealloc[0], 1)

    def test_inplace_on_view_leaf_errors(self, torch):
        x = torch.zeros(1, requires_grad=True)
        y = x.view_as(x)
        with self.assertRaisesRegex(
            RuntimeError,
            "a view of a leaf Variable that requires grad is being used in an in-place operation.",
        ):
            y.add_(1)

    def test_inplace_on_view_backward(self, torch):
        net = torch.nn.Sequential(torch.nn.InstanceNorm2d(2), torch.nn.ReLU(True))
        x = torch.tensor([[[[1.0, 1.0]]]], requires_grad=True)
        (g,) = torch.autograd.grad(
            net(x).pow(2), [x], grad_outputs=x.new_ones(x.shape), create_graph=True
        )
        torch.autograd.grad(g.sum(), [x])
        self.assertEqual(x, torch.tensor([[[[1.0, 1.0]]]]))

        inputs = torch.ones((1, 3, 256, 256), requires_grad=True)
        tmp1 = (inputs + 1).view_as(inputs)
        tmp2 = torch.nn.functional.threshold(tmp1, 0.0, 0.0, True)
        prob_interpolated = torch.sigmoid(tmp2)
        gradients = torch.autograd.grad(
            outputs=prob_interpolated,
            inputs=inputs,
            grad_outputs=torch.ones(prob_interpolated.size()),
            create_graph=True,
            retain_graph=True,
        )[0]
        gradient_penalty = gradients.sum()
        gradient_penalty.backward()
        fn = gradient_penalty.grad_fn.next_functions[0][0].next_functions[1][0]
        self.assertEqual(fn.name(), "ThresholdBackwardBackward0")

    def test_inplace_on_view_weak_grad_fn(self, torch):
        a = torch.arange(10.0, requires_grad=True)
        b = a.narrow(0, 0, 2).clone().view(-1)
        b.relu_()
        c = b.clone()
        del b
        gc.collect()
        s = c.sum()
        s.backward()  # b's grad_fn survived b
        self.assertEqual(s, torch.tensor(1.0))

        a = torch.rand(10, requires_grad=True).narrow(0, 0, 10)
        with self.assertRaises(RuntimeError):
            a.relu_()

    def test_out_variant_raises_when_inputs_require_grad(self, torch):
        a = torch.randn(2, 2, requires_grad=True)
        b = torch.randn(2, 2, requires_grad=True)
        x = torch.zeros_like(a)
        self.assertRaisesRegex(RuntimeError, "out=", lambda: torch.mul(a, b, out=x))
        with torch.no_grad():  # allowed when nothing records
            torch.mul(a, b, out=x)
            self.assertEqual(x, a * b)

        a = torch.randn(2, 2)
        b = torch.randn(2, 2)
        x = torch.zeros(2, 2, requires_grad=True)  # an out= tensor that requires grad
        self.assertRaisesRegex(RuntimeError, "out=", lambda: torch.mul(a, b, out=x))
