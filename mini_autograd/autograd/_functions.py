"""torch.autograd._functions: Resize, an autograd Function from PyTorch's early API that it keeps."""

import math

from .function import Function


class Resize(Function):
    """`tensor` reshaped to `sizes` (the same number of elements); backward reshapes back."""

    @staticmethod
    def forward(ctx, tensor, sizes):
        """The reshaped tensor, or PyTorch's error when the number of elements differs."""
        ctx.sizes = sizes
        ctx.numel = math.prod(sizes)
        if tensor.numel() != ctx.numel:
            raise RuntimeError(
                f"requested resize to {'x'.join(map(str, sizes))} ({ctx.numel} elements in "
                f"total), but the given tensor has a size of {'x'.join(map(str, tensor.size()))} "
                f"({tensor.numel()} elements). autograd's resize can only change the shape of a "
                "given tensor, while preserving the number of elements. "
            )
        ctx.input_sizes = tensor.size()
        if tensor.is_contiguous():
            return tensor.new(tensor).contiguous().view(*sizes)
        return tensor.contiguous().view(*sizes)

    @staticmethod
    def backward(ctx, grad_output):
        """The gradient in the input's shape; None for `sizes`."""
        if grad_output.numel() != ctx.numel:
            raise AssertionError(
                f"Expected grad_output to have {ctx.numel} elements, but got {grad_output.numel()}"
            )
        return grad_output.contiguous().view(ctx.input_sizes), None
