"""The seeds' three programs (course/seeds.py) on torch and mini_autograd: the same error at the
same backward, and the same numbers once fixed."""

import numpy as np
import pytest
import torch

import mini_autograd as ma
from course import seeds

FREED = "Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward."
IN_PLACE = (
    "one of the variables needed for gradient computation has been modified by an inplace operation"
)


def error_text(program, lib, *args, **kwargs):
    """The RuntimeError's text of `program(lib, ...)`, or None when it runs."""
    try:
        program(lib, *args, **kwargs)
    except RuntimeError as error:
        return str(error)
    return None


@pytest.mark.parametrize("name", list(seeds.FIXES))
def test_each_seed_fails_at_its_second_backward_with_pytorchs_text(name):
    program = getattr(seeds, name)
    for lib in (torch, ma):
        assert error_text(program, lib) == FREED
    if name != "two_losses":  # a loop: its first epoch runs, its second backward fails
        assert error_text(program, ma, epochs=1) is error_text(program, torch, epochs=1) is None


@pytest.mark.parametrize(
    ("name", "fix"), [(n, f) for n, fixes in seeds.FIXES.items() for f in fixes]
)
def test_each_fix_gives_the_same_numbers_on_both_engines(name, fix):
    program = getattr(seeds, name)
    np.testing.assert_allclose(program(ma, fix), program(torch, fix), rtol=1e-5)


def test_retain_graph_on_the_carried_lstm_state_trips_the_version_check_on_both():
    texts = [error_text(seeds.lstm_carried, lib, "retain_graph") for lib in (torch, ma)]
    assert texts[0].startswith(IN_PLACE) and texts[1] == texts[0]
