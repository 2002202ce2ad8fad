"""What the ops API tests share: run_both(fn), one program `fn(lib)` on torch and mini_autograd
compared, and the fixed inputs x34 and ints."""

import warnings

import torch
from parity_helpers import assert_same, describe, outcome

import mini_autograd as ma


def run_both(fn):
    """fn(lib) on torch and mini_autograd: the same result and warnings, or the same error."""
    results = []
    for lib in (torch, ma):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            warnings.filterwarnings("ignore", category=RuntimeWarning)  # numpy's, for log(0)...
            result = outcome(fn, lib)
        messages = [str(w.message).partition(" (Triggered")[0] for w in caught]
        results.append((result, messages))
    (expected, expected_warnings), (actual, actual_warnings) = results
    if expected[0] == "raises":
        assert actual == expected
    else:
        assert actual[0] == "ok", actual
        assert_same(describe(actual[1]), describe(expected[1]))
    assert actual_warnings == expected_warnings


def x34(lib, dtype=None):
    """A fixed 3 x 4 tensor with distinct values, negative and positive."""
    data = [[0.5, -1.25, 2.0, 0.0], [3.5, -0.75, -2.5, 1.0], [-0.25, 1.5, 0.25, -3.0]]
    return lib.tensor(data, dtype=dtype or lib.float32)


def ints(lib):
    """A fixed 2 x 2 int64 tensor."""
    return lib.tensor([[1, 2], [3, 4]])
