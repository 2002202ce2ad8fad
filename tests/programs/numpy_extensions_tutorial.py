# ruff: noqa
# fmt: off
# "Creating Extensions Using NumPy and SciPy": the NumPy part (BadFFTFunction).
# Source: pytorch/tutorials, advanced_source/numpy_extensions_tutorial.py
# Commit: not known (the current published text, read from a stored copy whose commit was
#   not reported; the stored pytorch/tutorials revisions 0651409a7265828ba6907f1c42a68f56b4ed7606
#   and 040f4449313883ed10cfa204a2c8fd3cde58ed0c are older texts with legacy
#   non-static Functions that current torch rejects)
# URL: https://github.com/pytorch/tutorials/blob/main/advanced_source/numpy_extensions_tutorial.py
# Licence: BSD-3-Clause (pytorch/tutorials)
# Changes:
# - The SciPy part ("Parametrized example": ScipyConv2dFunction, ScipyConv2d, the example
#   usage and the gradcheck) is left out: scipy is not installed in this environment
#   (`import scipy` fails) and nothing was installed for it.
# - torch.manual_seed(0) added after `import torch` (the program draws torch.randn).
# - The module docstring and prose blocks are left out; the other code lines are as published.

import torch
torch.manual_seed(0)  # added
from torch.autograd import Function

from numpy.fft import rfft2, irfft2


class BadFFTFunction(Function):
    @staticmethod
    def forward(ctx, input):
        numpy_input = input.detach().numpy()
        result = abs(rfft2(numpy_input))
        return input.new(result)

    @staticmethod
    def backward(ctx, grad_output):
        numpy_go = grad_output.numpy()
        result = irfft2(numpy_go)
        return grad_output.new(result)

# since this layer does not have any parameters, we can
# simply declare this as a function, rather than as an ``nn.Module`` class


def incorrect_fft(input):
    return BadFFTFunction.apply(input)

###############################################################
# **Example usage of the created layer:**

input = torch.randn(8, 8, requires_grad=True)
result = incorrect_fft(input)
print(result)
result.backward(torch.randn(result.size()))
print(input)
