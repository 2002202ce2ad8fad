"""TestAutograd, third part: backward with several roots and inputs, grad mode, indexing."""
# ruff: noqa: B023 (closures defined in a loop use that iteration's variables, as upstream's do)

import warnings
from collections import OrderedDict
from functools import reduce

from .harness import Harness


class TestAutograd(Harness):
    def test_backward(self, torch):
        v = torch.randn(5, 5, requires_grad=True)
        x = torch.randn(5, 5, requires_grad=True)
        y = (torch.rand(5, 5) + 0.1).requires_grad_(True)
        z = torch.randn(5, 5, requires_grad=True)
        grad_output = torch.randn(5, 5)

        v.backward(grad_output)
        self.assertEqual(v.grad, grad_output)

        a = x + (y * z) + 4 * z**2 * x / y
        a.backward(grad_output)
        x_grad = 4 * z.pow(2) / y + 1
        y_grad = z - 4 * x * z.pow(2) / y.pow(2)
        z_grad = 8 * x * z / y + y
        self.assertEqual(x.grad, x_grad * grad_output)
        self.assertEqual(y.grad, y_grad * grad_output)
        self.assertEqual(z.grad, z_grad * grad_output)

    def test_multi_backward(self, torch):
        x = torch.randn(5, 5, requires_grad=True)
        y = torch.randn(5, 5, requires_grad=True)
        q = torch.randn(5, 5, requires_grad=True)
        a = torch.randn(5, 5, requires_grad=True)
        b = torch.randn(5, 5, requires_grad=True)
        q2 = q * 2
        z = x + y + q2
        c = a * b + q2
        grad_z = torch.randn(5, 5)
        grad_c = torch.randn(5, 5)
        torch.autograd.backward([z, c], [grad_z, grad_c])
        self.assertEqual(x.grad, grad_z)
        self.assertEqual(y.grad, grad_z)
        self.assertEqual(a.grad, grad_c * b)
        self.assertEqual(b.grad, grad_c * a)
        self.assertEqual(q.grad, (grad_c + grad_z) * 2)

    def test_multi_backward_no_grad(self, torch):
        x = torch.randn(5, 5, requires_grad=True)
        y = torch.randn(5, 5, requires_grad=False)
        z = x + y
        q = y * 2  # requires no grad and has no grad_fn: backward refuses it

        def call_backwards():
            torch.autograd.backward([z, q], [torch.ones(5, 5), torch.ones(5, 5)])

        self.assertRaises(RuntimeError, call_backwards)

    def test_backward_with_inputs(self, torch):
        x = torch.randn(2, 2, dtype=torch.double, requires_grad=True)
        y = torch.randn(2, 2, dtype=torch.double, requires_grad=True)

        def fn():
            return x**2 + y * x + y**2

        gradient = torch.ones(2, 2)
        x_grad_expected = 2 * x + y
        y_grad_expected = x + 2 * y

        @torch.no_grad()
        def reset_grad():
            x.grad.zero_()
            y.grad.zero_()

        torch.autograd.backward(fn(), gradient, inputs=[x, y])
        self.assertEqual(x.grad, x_grad_expected)
        self.assertEqual(y.grad, y_grad_expected)

        reset_grad()
        torch.autograd.backward(fn(), gradient, inputs=[x])
        self.assertEqual(x.grad, x_grad_expected)
        self.assertEqual(y.grad, torch.zeros(2, 2), exact_dtype=False)

        reset_grad()
        torch.autograd.backward(fn(), gradient, inputs=[y])
        self.assertEqual(y.grad, y_grad_expected)
        self.assertEqual(x.grad, torch.zeros(2, 2), exact_dtype=False)

        reset_grad()
        torch.autograd.backward(fn(), gradient, inputs=y)
        self.assertEqual(y.grad, y_grad_expected)
        self.assertEqual(x.grad, torch.zeros(2, 2), exact_dtype=False)

        reset_grad()
        self.assertRaisesRegex(
            RuntimeError,
            "cannot be empty",
            lambda: torch.autograd.backward(fn(), gradient, inputs=[]),
        )

    def test_backward_with_scalar_input(self, torch):
        x = torch.randn([], dtype=torch.double, requires_grad=True)
        out = x**2
        out.backward(inputs=x)
        self.assertEqual(x.grad, 2 * x)

    def test_backward_with_nonleaf_inputs(self, torch):
        x = torch.randn(2, 2, dtype=torch.double, requires_grad=True)
        x_nonleaf = x * 1
        y = torch.randn(2, 2, dtype=torch.double, requires_grad=True)
        z = torch.randn(2, 2, dtype=torch.double, requires_grad=True)
        out = x_nonleaf**2 + y * x_nonleaf + y**2
        out.backward(
            torch.ones(2, 2, dtype=torch.double), create_graph=True, inputs=[x, y, x_nonleaf]
        )
        self.assertEqual(y.grad, x + 2 * y)
        self.assertEqual(x.grad, 2 * x + y)
        self.assertEqual(x_nonleaf.grad, 2 * x_nonleaf + y)

        # backward has no allow_unused: an input outside the graph keeps grad None.
        out.backward(torch.ones(2, 2, dtype=torch.double), create_graph=True, inputs=[z])
        self.assertIsNone(z.grad)

    def test_dependent_backward(self, torch):
        x = torch.randn(10, requires_grad=True)
        y = x**2
        z = y**3
        go_y = torch.randn(10)
        go_z = torch.randn(10)
        torch.autograd.backward([y, z], [go_y, go_z])
        self.assertEqual(x.grad, 2 * x * go_y + 6 * x.pow(5) * go_z)

    def test_save_output_nr(self, torch):
        test = self
        x = torch.randn(10, requires_grad=True)

        class MultiOutputFn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x[:5], x[5:]

            @staticmethod
            def backward(ctx, *grad):
                return torch.cat(grad)

        a, b = MultiOutputFn.apply(x)
        self.assertEqual(b.output_nr, 1)

        class TestFn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, b):
                ctx.save_for_backward(b)
                return b * 2

            @staticmethod
            def backward(ctx, grad_b):
                (b,) = ctx.saved_tensors
                test.assertEqual(b.output_nr, 1)  # a saved tensor keeps its output number

        TestFn.apply(b).sum().backward()

    def test_free_deep_graph(self, torch):
        def scope():
            x = torch.randn(1, requires_grad=True)
            y = x.clone()
            for _ in range(
                15000
            ):  # upstream 150000; a chain: freeing it must not overflow the stack
                y = y + y * 0.000001

        scope()

    def test_free_deep_graph_complicated(self, torch):
        def scope():
            depth = 10000  # upstream 100000
            randchoice = torch.randint(2, [depth, 2])
            x = torch.randn(1, requires_grad=True)
            y = x.clone()
            prev_values = [None, None]  # a chain with skip connections
            for _ in range(depth):
                prev_tensors = [tensor for tensor in prev_values[:-1] if tensor is not None]
                prev_values.append(y)
                prev_values.pop(0)
                y += y * 0.000001
                if len(prev_tensors) == 2:  # never true, as upstream
                    y += randchoice[depth].mul(torch.cat(prev_tensors)).sum()

        scope()

    def test_free_deep_graph_pyfunction(self, torch):
        class MyOp(torch.autograd.Function):
            @staticmethod
            def forward(ctx, tensor1, tensor2):
                return tensor1 + tensor2

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output, grad_output

        def scope():
            x = torch.randn(1, requires_grad=True)
            y = x.clone()
            for _ in range(15000):  # upstream 150000
                y = MyOp.apply(y, y)

        scope()

    def test_no_unnecessary_save(self, torch):
        # x * ft must not save x (only ft is needed): x changes in place every iteration.
        mu = torch.ones(1, requires_grad=True)
        x = torch.empty(1)
        loss = 0
        for i in range(3):
            x.detach_()
            x.copy_(mu + i)
            ft = torch.tensor([float(i)])
            multiplied = x * ft
            s = multiplied.sum()
            loss += s
        loss.backward()

    def test_no_grad(self, torch):
        x = torch.ones(5, 5, requires_grad=True)
        y = torch.ones(5, 5) * 4
        with torch.no_grad():
            w = x + y

        def adder(x, y):
            return x + y

        adders = [torch.no_grad()(adder), torch.no_grad(adder)]
        for adder in adders:
            z = adder(x, y)
            self.assertFalse(w.requires_grad)
            self.assertRaises(RuntimeError, lambda: w.backward(torch.ones(5, 5)))
            self.assertIsNone(w.grad_fn)
            self.assertFalse(z.requires_grad)
            self.assertRaises(RuntimeError, lambda: z.backward(torch.ones(5, 5)))
            self.assertIsNone(z.grad_fn)

        with torch.no_grad():
            self.assertFalse(torch.is_grad_enabled())
            w = adder(x, y)
            self.assertFalse(torch.is_grad_enabled())

    def test_enable_grad_decorator_no_paren(self, torch):
        x = torch.ones(1, requires_grad=True)

        @torch.enable_grad
        def doubler(x):
            return x * 2

        with torch.no_grad():
            z = doubler(x)
        self.assertTrue(z.requires_grad)

    def test_set_grad_generator_functions(self, torch):
        @torch.no_grad()
        def gen_no_grad():
            for i in range(10):
                self.assertEqual(torch.is_grad_enabled(), False)
                yield i

        with torch.enable_grad():
            for _ in gen_no_grad():
                self.assertEqual(torch.is_grad_enabled(), True)

        @torch.enable_grad()
        def gen_enable_grad():
            for i in range(10):
                self.assertEqual(torch.is_grad_enabled(), True)
                yield i

        with torch.no_grad():
            for _ in gen_enable_grad():
                self.assertEqual(torch.is_grad_enabled(), False)

    def test_set_grad_generator_functions_recursive(self, torch):
        # Decorators and context managers calling each other keep the caller's mode.
        @torch.enable_grad()
        def enable_grad_decorator_recursive(depth):
            self.assertTrue(torch.is_grad_enabled())
            if depth > 0:
                no_grad_decorator_recursive(depth - 1)
                self.assertTrue(torch.is_grad_enabled())

        @torch.no_grad()
        def no_grad_decorator_recursive(depth):
            self.assertFalse(torch.is_grad_enabled())
            if depth > 0:
                enable_grad_decorator_recursive(depth - 1)
                self.assertFalse(torch.is_grad_enabled())

        def enable_grad_context_manager_recursive(depth):
            with torch.enable_grad():
                self.assertTrue(torch.is_grad_enabled())
                if depth > 0:
                    no_grad_context_manager_recursive(depth - 1)
                    self.assertTrue(torch.is_grad_enabled())

        def no_grad_context_manager_recursive(depth):
            with torch.no_grad():
                self.assertFalse(torch.is_grad_enabled())
                if depth > 0:
                    enable_grad_context_manager_recursive(depth - 1)
                    self.assertFalse(torch.is_grad_enabled())

        for mode, enabled in ((torch.enable_grad, True), (torch.no_grad, False)):
            with mode():
                self.assertEqual(torch.is_grad_enabled(), enabled)
                enable_grad_decorator_recursive(10)
                self.assertEqual(torch.is_grad_enabled(), enabled)
                enable_grad_context_manager_recursive(10)
                self.assertEqual(torch.is_grad_enabled(), enabled)

    def test_set_grad_coroutines(self, torch):
        @torch.no_grad()
        def coro_no_grad(n=10):
            self.assertFalse(torch.is_grad_enabled())
            for i in range(n):
                self.assertFalse(torch.is_grad_enabled())
                r = yield i
                self.assertFalse(torch.is_grad_enabled())
                self.assertEqual(i, r)
            self.assertFalse(torch.is_grad_enabled())

        @torch.enable_grad()
        def coro_enable_grad(n=10):
            self.assertTrue(torch.is_grad_enabled())
            for i in range(n):
                self.assertTrue(torch.is_grad_enabled())
                r = yield i
                self.assertTrue(torch.is_grad_enabled())
                self.assertEqual(i, r)
            self.assertTrue(torch.is_grad_enabled())

        for outer, coro_fn, enabled in (
            (torch.enable_grad, coro_no_grad, True),
            (torch.no_grad, coro_enable_grad, False),
        ):
            with outer():
                self.assertEqual(torch.is_grad_enabled(), enabled)
                coro, r = coro_fn(), None
                try:
                    while True:
                        self.assertEqual(torch.is_grad_enabled(), enabled)
                        r = coro.send(r)
                        self.assertEqual(torch.is_grad_enabled(), enabled)
                except StopIteration:
                    pass

    def test_set_grad_coroutines_benign_exceptions(self, torch):
        class RecoverableException(Exception):
            pass

        def make(mode, enabled):
            @mode()
            def coro(n=10):
                has_raised = False
                for i in range(n):
                    try:
                        self.assertEqual(torch.is_grad_enabled(), enabled)
                        yield (-i if has_raised else i)
                    except RecoverableException:
                        self.assertEqual(torch.is_grad_enabled(), enabled)
                        has_raised = True

            return coro

        for outer, inner, enabled in (
            (torch.enable_grad, torch.no_grad, False),
            (torch.no_grad, torch.enable_grad, True),
        ):
            with outer():
                coro = make(inner, enabled)()
                assert next(coro) == 0
                try:
                    while True:
                        r = coro.throw(RecoverableException)
                        self.assertLess(r, 0)
                except StopIteration:
                    pass

    def test_set_grad_coroutines_critical_exceptions(self, torch):
        class UnrecoverableException(Exception):
            pass

        class SecondaryException(Exception):
            pass

        def make(mode, enabled):
            @mode()
            def coro(n=10):
                has_raised = False
                for i in range(n):
                    try:
                        self.assertEqual(torch.is_grad_enabled(), enabled)
                        yield (-i if has_raised else i)
                    except UnrecoverableException:
                        self.assertEqual(torch.is_grad_enabled(), enabled)
                        raise SecondaryException from None

            return coro

        for outer, inner, enabled in (
            (torch.enable_grad, torch.no_grad, False),
            (torch.no_grad, torch.enable_grad, True),
        ):
            with outer():
                coro = make(inner, enabled)()
                assert next(coro) == 0
                with self.assertRaises(SecondaryException):
                    coro.throw(UnrecoverableException)

    def test_set_grad_coroutines_exit(self, torch):
        def make(mode, enabled):
            @mode()
            def coro(state):
                for i in range(10):
                    try:
                        self.assertEqual(torch.is_grad_enabled(), enabled)
                        yield i
                    except GeneratorExit:
                        self.assertEqual(torch.is_grad_enabled(), enabled)
                        state.add("GeneratorExit")
                        raise

            return coro

        for outer, inner, enabled in (
            (torch.enable_grad, torch.no_grad, False),
            (torch.no_grad, torch.enable_grad, True),
        ):
            state = set()
            with outer():
                coro = make(inner, enabled)(state)
                for _ in range(5):
                    next(coro)
                coro.close()
            self.assertTrue("GeneratorExit" in state)

    def test_no_grad_python_function(self, torch):
        x = torch.ones(5, 5, requires_grad=True)

        class MyOp(torch.autograd.Function):
            @staticmethod
            def forward(self, x):
                return x + 1

            @staticmethod
            def backward(self, dy):
                return dy

        with torch.no_grad():
            y = MyOp.apply(x)
        self.assertFalse(y.requires_grad)

    def test_indexing(self, torch):
        Variable = torch.autograd.Variable

        def compare(x, y, idx, indexed_tensor, indexed_var):
            indexed_var_t = indexed_var.data
            if not isinstance(indexed_tensor, torch.Tensor):
                indexed_var_t = indexed_var_t[0]
            self.assertEqual(indexed_tensor, indexed_var_t)
            indexed_var.sum().backward()
            expected_grad = torch.empty(x.size()).fill_(0)
            expected_grad[idx] = 1
            self.assertEqual(y.grad, expected_grad)

        def check_index(x, y, idx):
            if y.grad is not None:
                with torch.no_grad():
                    y.grad.zero_()
            compare(x, y, idx, x[idx], y[idx])

        x = torch.arange(1.0, 17).view(4, 4)
        y = Variable(x, requires_grad=True)
        for idx in [
            1,
            (1, 1),
            slice(1, None),
            slice(None, 2),
            (slice(None, 2), 2),
            (slice(1, 2), 2),
            (1, slice(2, None)),
            (slice(None, None), slice(2, None)),
            torch.LongTensor([0, 2]),
            torch.rand(4, 4).bernoulli().bool(),
            (Ellipsis, slice(2, None)),
            ([0], [0]),
            ([1, 2, 3], [0]),
            ([1, 2], [2, 1]),
            ([[1, 2], [3, 0]], [[0, 1], [2, 3]]),
            (slice(None), [2, 3]),
            ([2, 3], slice(None)),
            [0],
            ([0],),
        ]:
            check_index(x, y, idx)

        x = torch.arange(1.0, 49).view(4, 3, 4)
        y = Variable(x, requires_grad=True)
        for idx in [
            (slice(None), [0], [0]),
            ([0], [0], slice(None)),
            (slice(None), [0, 1, 2], [0]),
            ([0, 1, 2], [0], slice(None)),
            (slice(None), [1, 2], [2, 1]),
            ([1, 2], [2, 1], slice(None)),
            (slice(None), [[1, 2], [2, 0]], [[0, 1], [2, 3]]),
            ([[1, 2], [3, 0]], [[0, 1], [2, 2]], slice(None)),
            (slice(None), slice(None), [2, 1]),
            (slice(None), [2, 1], slice(None)),
            ([2, 1], slice(None), slice(None)),
            ([0],),
            ([0], slice(None)),
            ([0], Ellipsis),
            ([1, 2], [0, 1]),
            ([1, 2], [0, 1], Ellipsis),
            (Ellipsis, [1, 2], [0, 1]),
        ]:
            check_index(x, y, idx)

        # An index tensor wrapped in a Variable.
        z = torch.LongTensor([0, 1])
        zv = Variable(z, requires_grad=False)
        seq, seqv = (z, Ellipsis), (zv, Ellipsis)
        if y.grad is not None:
            with torch.no_grad():
                y.grad.zero_()
        compare(x, y, seq, x[seq], y[seqv])

    def test_indexing_duplicates(self, torch):
        Variable = torch.autograd.Variable
        x = torch.arange(1.0, 17).view(4, 4)
        y = Variable(x, requires_grad=True)
        idx = torch.LongTensor([1, 1, 3, 2, 1, 2])
        y[idx].sum().backward()
        expected_grad = torch.zeros(4, 4)
        for i in idx:
            expected_grad[i] += 1
        self.assertEqual(y.grad, expected_grad)

        x = torch.arange(1.0, 17).view(4, 4)
        y = Variable(x, requires_grad=True)
        idx = ([1, 1, 3, 2, 1, 2], [0])
        y[idx].sum().backward()
        expected_grad = torch.zeros(4, 4)
        for i in idx[0]:
            for j in idx[1]:
                expected_grad[i][j] += 1
        self.assertEqual(y.grad, expected_grad)

        x = torch.arange(1.0, 17).view(4, 4)
        y = Variable(x, requires_grad=True)
        idx = ([[1, 2], [0, 0]], [[0, 1], [1, 1]])
        y[idx].sum().backward()
        expected_grad = torch.tensor(
            [
                [0.0, 2.0, 0.0, 0.0],
                [1.0, 0.0, 0.0, 0.0],
                [0.0, 1.0, 0.0, 0.0],
                [0.0, 0.0, 0.0, 0.0],
            ]
        )
        self.assertEqual(y.grad, expected_grad)

        x = torch.arange(1.0, 65).view(4, 4, 4)
        y = Variable(x, requires_grad=True)
        idx = ([1, 1, 1], slice(None), slice(None))
        y[idx].sum().backward()
        expected_grad = torch.empty(4, 4, 4).zero_()
        expected_grad[1].fill_(3)
        self.assertEqual(y.grad, expected_grad)

    def test_index_backward_does_not_save_tensor(self, torch):
        # If indexing saved `tensor`, the assignment below would fail the version check.
        a = torch.tensor([1.0, 0, 0])
        b = torch.zeros(3, requires_grad=True)
        tensor = b + 0
        tensor[a != 0] = tensor[a != 0]
        tensor.backward(torch.zeros_like(tensor))

    def test_volatile_deprecated(self, torch):
        v = torch.autograd.torch.randn(3, 3)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            self.assertFalse(v.volatile)
        self.assertIn("volatile", str(w[0].message))

    def test_saved_variables_deprecated(self, torch):
        class MyFunction(torch.autograd.Function):
            @staticmethod
            def forward(ctx, tensor1, tensor2):
                ctx.save_for_backward(tensor1, tensor2)
                return tensor1 + tensor2

            @staticmethod
            def backward(ctx, grad_output):
                var1, var2 = ctx.saved_variables
                return (grad_output, grad_output)

        with warnings.catch_warnings(record=True) as warns:
            warnings.simplefilter("always")
            x = torch.randn((3, 3), requires_grad=True)
            y = torch.randn((3, 3), requires_grad=True)
            MyFunction.apply(x, y).sum().backward()
            has_deprecated = (
                "deprecated" in str(warn) and "saved_variables" in str(warn) for warn in warns
            )
            self.assertTrue(reduce(lambda x, y: x or y, has_deprecated))

    def test_requires_grad(self, torch):
        x = torch.randn(5, 5)
        y = torch.randn(5, 5)
        z = torch.randn(5, 5, requires_grad=True)
        a = x + y
        self.assertFalse(a.requires_grad)
        b = a + z
        self.assertTrue(b.requires_grad)

        def error():
            raise RuntimeError

        # Backward must not reach the tensors that do not require grad.
        a._backward_hooks = OrderedDict()
        x._backward_hooks = OrderedDict()
        y._backward_hooks = OrderedDict()
        a._backward_hooks["test"] = error
        x._backward_hooks["test"] = error
        y._backward_hooks["test"] = error
        b.backward(torch.ones(5, 5))

    def test_requires_grad_(self, torch):
        x = torch.randn(5, 5)
        y = torch.randn(5, 5, requires_grad=True)
        self.assertIs(x, x.requires_grad_())
        self.assertTrue(x.requires_grad)
        self.assertIs(y, y.requires_grad_())
        self.assertTrue(y.requires_grad)
        self.assertIs(x, x.requires_grad_(True))
        self.assertTrue(x.requires_grad)
        self.assertIs(y, y.requires_grad_(True))
        self.assertTrue(y.requires_grad)
        z = x * y
        self.assertRaises(RuntimeError, lambda: z.requires_grad_(False))
        self.assertIs(z, z.requires_grad_())
        self.assertTrue(z.requires_grad)
        self.assertIs(z, z.requires_grad_(True))
        self.assertTrue(z.requires_grad)
        self.assertIs(x, x.requires_grad_(False))
        self.assertFalse(x.requires_grad)
        self.assertIs(y, y.requires_grad_(False))
        self.assertFalse(y.requires_grad)

    def test_requires_grad_inplace(self, torch):
        a = torch.randn(5, 5)
        b = torch.randn(5, 5, requires_grad=True)
        a += b
        self.assertTrue(a.requires_grad)

        a = torch.randn(5, 5) + 0  # a non-leaf
        b = torch.randn(5, 5, requires_grad=True)
        a += b
        self.assertTrue(a.requires_grad)

    def test_no_requires_grad_inplace(self, torch):
        a = torch.randn(2, 3)
        a.add_(5)  # in place before requires_grad is set: allowed
        a.requires_grad = True
        a.sum().backward()
        self.assertEqual(a.grad, torch.ones(2, 3))

        a = torch.randn(2, 3)
        b = a[:]
        b.add_(5)  # the same through a view
        a.requires_grad = True
        a.sum().backward()
        self.assertEqual(a.grad, torch.ones(2, 3))

        a = torch.randn(2, 3)
        b = a[:]
        a.requires_grad = True  # now the leaf and its view refuse in-place changes
        with self.assertRaises(RuntimeError):
            a.add_(5)
        with self.assertRaises(RuntimeError):
            b.add_(5)
