"""numpy meets a tensor as it meets PyTorch's: numpy's scalars leave the arithmetic to the
tensor (`np.sqrt(2.0) * x` stays in the graph), and numpy's functions of a tensor give a tensor."""

import warnings

import numpy as np
import pytest
import torch

import mini_autograd as ma

CASES = {
    "np.float64 * x": lambda lib, x: np.float64(2.5) * x,
    "np.float32 + x": lambda lib, x: np.float32(1.5) + x,
    "np.int64 - x": lambda lib, x: np.int64(3) - x,
    "np.float64 / x": lambda lib, x: np.float64(1.0) / x,
    "np.float64 ** x": lambda lib, x: np.float64(2.0) ** x,
    "x * np.float64": lambda lib, x: x * np.float64(2.5),
    "np.sin(x)": lambda lib, x: np.sin(x.detach()),
    "np.exp of float64": lambda lib, x: np.exp(x.detach().double()),
    "np.greater(x, 0)": lambda lib, x: np.greater(x.detach(), 0),
    "np.maximum(x, 0)": lambda lib, x: np.maximum(x.detach(), 0),
    "np.sin(x), x requiring grad": lambda lib, x: np.sin(x),
}


def outcome(lib, name):
    x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # torch's __array_wrap__, numpy 2
            y = CASES[name](lib, x)
    except Exception as error:
        return type(error).__name__, str(error)
    node = y.grad_fn.name() if y.grad_fn is not None else None
    dtype = str(y.dtype).split(".")[-1]
    return type(y).__name__, dtype, np.round(y.detach().numpy(), 6).tolist(), node


@pytest.mark.parametrize("name", list(CASES))
def test_numpy_with_a_tensor_as_in_torch(name):
    assert outcome(ma, name) == outcome(torch, name)
