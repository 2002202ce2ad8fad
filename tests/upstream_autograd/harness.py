"""The thin harness the ported tests run on: unittest's assertions, torch's assertEqual rules.

Nothing here computes a gradient: a test calls the engine it is given (`torch` or
`mini_autograd`, the fixture named `torch` in conftest.py) and this module only compares what it
got. `mini_fails` marks a test that mini_autograd does not pass yet (strict xfail on its run only).
"""

import contextlib
import math
import numbers
import re
import unittest
import warnings

import numpy as np

# The classes a failure on mini_autograd falls in, by the first thing the test trips on.
KINDS = ("wrong numbers", "error type or text", "graph structure", "missing API")

# torch.testing's default (rtol, atol) by dtype; integers and bool compare exactly.
TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
}


def mini_fails(kind, reason):
    """Mark a test as failing on mini_autograd, for `reason`, classed under `kind`."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")

    def mark(test):
        test.mini_fails = (kind, reason)
        return test

    return mark


def mini_skip(reason):
    """Skip a test on mini_autograd only: running it there would not end (a hang, a crash)."""

    def mark(test):
        test.mini_skip = reason
        return test

    return mark


def is_tensor(x):
    if isinstance(x, type):
        return False
    return all(hasattr(x, name) for name in ("detach", "shape", "dtype", "requires_grad"))


def dtype_name(x):
    return str(x.dtype).rpartition(".")[2]


def to_numpy(t):
    t = t.detach()
    if hasattr(t, "resolve_conj"):  # torch: numpy() refuses some views; force copies them out
        return np.asarray(t.numpy(force=True))
    return np.asarray(t.numpy())


class Harness:
    """The assertion methods of torch's TestCase that the ported tests use.

    assertEqual follows torch's rules: tensors match in shape and (unless exact_dtype=False)
    dtype, and their values agree within the dtype's default tolerance, NaN equal to NaN; a
    number against a tensor compares values only; lists and tuples compare element by element.
    """

    _unittest = unittest.TestCase()

    def __getattr__(self, name):  # assertTrue, assertIsNone, assertRaisesRegex, fail, ...
        if name.startswith(("assert", "fail")):
            return getattr(self._unittest, name)
        raise AttributeError(name)

    def assertEqual(self, x, y, msg=None, *, atol=None, rtol=None, exact_dtype=True, **_):
        problem = self._difference(x, y, atol, rtol, exact_dtype)
        if problem:
            raise AssertionError(f"{problem}{': ' + str(msg) if msg else ''}")

    def assertNotEqual(self, x, y, msg=None, *, atol=None, rtol=None, **_):
        if not self._difference(x, y, atol, rtol, exact_dtype=False):
            raise AssertionError(msg or f"{x!r} == {y!r}")

    def assertNotWarn(self, callable, msg=""):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            callable()
        if caught:
            raise AssertionError(f"{msg} unexpected warning: {caught[0].message}")

    @contextlib.contextmanager
    def assertWarnsOnceRegex(self, category, regex=""):
        """torch's: a warning of `category` matching `regex` (here without set_warn_always)."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
        if not caught:
            raise AssertionError("no warning caught")
        matching = [w for w in caught if type(w.message) is category]
        if not any(re.match(regex, str(w.message)) for w in matching):
            raise AssertionError(f"{regex!r} matches none of {[str(w.message) for w in matching]}")

    def _difference(self, x, y, atol, rtol, exact_dtype):
        if is_tensor(x) or is_tensor(y):
            return self._tensor_difference(x, y, atol, rtol, exact_dtype)
        if isinstance(x, numbers.Number) and isinstance(y, numbers.Number):
            if x == y or (isinstance(x, float) and isinstance(y, float) and math.isnan(x + y)):
                return None
            if atol is None and rtol is None:
                return f"{x!r} != {y!r}"
            return None if math.isclose(x, y, rel_tol=rtol or 0, abs_tol=atol or 0) else "far"
        if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
            if len(x) != len(y):
                return f"lengths differ: {len(x)} != {len(y)}"
            for i, (a, b) in enumerate(zip(x, y)):
                problem = self._difference(a, b, atol, rtol, exact_dtype)
                if problem:
                    return f"item {i}: {problem}"
            return None
        return None if x == y else f"{x!r} != {y!r}"

    def _tensor_difference(self, x, y, atol, rtol, exact_dtype):
        if x is None or y is None:
            return f"{x!r} != {y!r}"
        if not (is_tensor(x) and is_tensor(y)):  # a number or a list against a tensor
            tensor, other = (x, y) if is_tensor(x) else (y, x)
            a, b = to_numpy(tensor), np.asarray(other)
            names = {dtype_name(tensor)}
        else:
            if tuple(x.shape) != tuple(y.shape):
                return f"shapes differ: {tuple(x.shape)} != {tuple(y.shape)}"
            names = {dtype_name(x), dtype_name(y)}
            if exact_dtype and len(names) > 1:
                return f"dtypes differ: {x.dtype} != {y.dtype}"
            a, b = to_numpy(x), to_numpy(y)
        default_rtol, default_atol = max(TOLERANCES.get(n, (0.0, 0.0)) for n in names)
        rtol = default_rtol if rtol is None else rtol
        atol = default_atol if atol is None else atol
        if a.dtype == bool or b.dtype == bool:
            close = a == b
        else:
            close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        if np.all(close):
            return None
        return f"values differ:\n{a}\n!=\n{b}"


def graph_desc(fn):
    """A node and everything below it as nested names: 'MulBackward0(AccumulateGrad(), None)'."""
    if fn is None:
        return "None"
    inner = ", ".join(graph_desc(next_fn) for next_fn, _ in fn.next_functions)
    return f"{type(fn).__name__}({inner})"


@contextlib.contextmanager
def disable_gc():
    """Garbage collection off inside the block (torch's common_utils.disable_gc)."""
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
