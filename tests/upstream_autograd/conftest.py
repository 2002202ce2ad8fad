"""Run every ported test twice: with `torch` bound to PyTorch, and to mini_autograd.

A test takes the fixture `torch` and calls only that module, so its body reads as upstream's.
The torch run checks the port; on the mini_autograd run, a test marked with harness.mini_fails
is a strict xfail (it fails the suite the day it passes, so the mark is removed with the fix).
"""

import importlib
import random

import pytest

ENGINES = {"torch": "torch", "mini": "mini_autograd"}


def pytest_generate_tests(metafunc):
    if "torch" not in metafunc.fixturenames:
        return
    test = metafunc.function
    params = []
    for engine_id, module in ENGINES.items():
        marks = []
        if engine_id == "mini" and hasattr(test, "mini_fails"):
            kind, reason = test.mini_fails
            marks.append(pytest.mark.xfail(strict=True, reason=f"{kind}: {reason}"))
        if engine_id == "mini" and hasattr(test, "mini_skip"):
            marks.append(pytest.mark.skip(reason=test.mini_skip))
        params.append(pytest.param(module, id=engine_id, marks=marks))
    metafunc.parametrize("torch", params, indirect=True)


# mini_autograd's process-wide stacks: a test that fails half-way (inside a saved-tensors-hooks
# context or a backward call) must not leave them to the tests after it. Restoring them is test
# isolation only; torch's run needs none (its tests leave no state behind when they pass).
MINI_STACKS = (
    ("mini_autograd.core.hooks", "saved_tensors_hook_stack"),
    ("mini_autograd.core.engine", "_running"),
)


@pytest.fixture
def torch(request):
    """The engine under test, seeded as torch's TestCase seeds; grad mode and dtype restored."""
    engine = importlib.import_module(request.param)
    engine.set_grad_enabled(True)  # whatever a test of another file left behind
    engine.manual_seed(0)
    random.seed(0)
    dtype = engine.get_default_dtype()
    stacks = []
    if request.param == "mini_autograd":
        for module, name in MINI_STACKS:
            stack = getattr(importlib.import_module(module), name)
            stacks.append((stack, list(stack)))
    yield engine
    for stack, content in stacks:
        stack[:] = content
    engine.set_grad_enabled(True)
    engine.set_default_dtype(dtype)
