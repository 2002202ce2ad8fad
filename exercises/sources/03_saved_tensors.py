# %% [markdown]
# # Exercises 03 · Saved tensors
#
# Four pieces of the engine that decide what a node keeps for its backward and guard it:
#
# * **3.1** what `MulBackward0` saves, and only when it is needed (conditional saving);
# * **3.2** the backward of `exp`, written from the one thing `exp` keeps: its own output;
# * **3.3** the version check that raises PyTorch's in-place error;
# * **3.4** a pair of saved-tensor hooks that stores every saved tensor at half the size.
#
# Each check cell runs your code **inside** `mini_autograd` (it replaces the engine's own piece
# while the check runs), runs the same program in PyTorch, and prints one line: `correct ✓`,
# `not done yet`, or what differs and why. Until you fill a cell in, its check says "not done
# yet", so the notebook always runs top to bottom. Answers: `solutions/03_saved_tensors.ipynb`.

# %%
import torch

import mini_autograd as ma
from course.checks_03 import (
    check_exp_backward,
    check_half_hooks,
    check_mul_saving,
    check_version_check,
)

# %% [markdown]
# ## Exercise 3.1: what `MulBackward0` keeps
#
# For `out = self * other` the backward is
# $\frac{\partial L}{\partial \text{self}} = g \cdot \text{other}$ and
# $\frac{\partial L}{\partial \text{other}} = g \cdot \text{self}$: each input's gradient needs
# the *other* input. PyTorch saves an input only when the gradient that needs it will be
# computed, that is, when the other input requires grad.
#
# Write `mul_saves(self, other)`: it receives the two input tensors of a multiplication (a
# Python number has already been turned into a tensor) and returns a dict
# `{"self": ..., "other": ...}` holding, for each name, the tensor to keep or `None`. The check
# puts your function into `mini_autograd`'s `*`, runs four multiplications, and compares the
# saved set with PyTorch's `_saved_self` / `_saved_other`, then the gradients.


# %%
def mul_saves(self, other):
    """What MulBackward0 keeps: {"self": tensor or None, "other": tensor or None}."""
    ### BEGIN SOLUTION 3.1: conditional saving in mul
    return {
        "self": self if other.requires_grad else None,  # needed only for other's gradient
        "other": other if self.requires_grad else None,  # needed only for self's gradient
    }
    ### END SOLUTION


# %%
check_mul_saving(mul_saves)

# %% [markdown]
# ## Exercise 3.2: the backward of `exp` from its saved result
#
# $\frac{d}{dx} e^x = e^x$: the derivative of `exp` *is its output*. So `ExpBackward0` does not
# keep its input at all; it keeps the output under the name `result`.
#
# Write `exp_backward(node, g)`, the body of `ExpBackward0.apply`: `node` is the
# `ExpBackward0` node (what `self` is inside the class), `g` the gradient arriving for the
# output. Read the saved output with `node.saved("result")` (it checks that the tensor was not
# freed or modified in place before handing it over) and return a **tuple** with one gradient
# per input, here just one. Use only Tensor operations (`*`), no numpy.


# %%
def exp_backward(node, g):
    """ExpBackward0.apply: the gradient for exp's input, as a one-element tuple."""
    ### BEGIN SOLUTION 3.2: exp backward from its result
    result = node.saved("result")
    return (g * result,)
    ### END SOLUTION


# %%
check_exp_backward(exp_backward)

# %% [markdown]
# ## Exercise 3.3: the version check
#
# Every tensor counts its in-place changes in `tensor._version`. When a node saves a tensor, it
# notes the version; when backward unpacks it, the versions must still agree, otherwise the
# values have changed under the node's feet and PyTorch refuses with this error (here from
# PyTorch itself):

# %%
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x.exp()
y.mul_(2)
try:
    y.sum().backward()
except RuntimeError as error:
    print(error)

# %% [markdown]
# Write `check_version(tensor, saved_version, producer_name)`. It is called each time backward
# unpacks a saved tensor: `tensor` is the saved tensor as it is now, `saved_version` the version
# it had when it was saved, `producer_name` the name of the node that produced it
# (`"ExpBackward0"`) or `None` for a tensor made by no operation. If the versions agree, return
# nothing. Otherwise raise `RuntimeError` with `MESSAGE` filled in, where `described` is
#
# * `[torch.FloatTensor [3]]`: the type name from `TYPE_NAMES` and `list(tensor.shape)`,
# * followed by `, which is output 0 of Exp,` when there is a producer: its name up to the word
#   `Backward` (`"ExpBackward0"` → `"Exp"`).
#
# The check compares your message with PyTorch's character by character on five programs.

# %%
MESSAGE = (
    "one of the variables needed for gradient computation has been modified by an inplace "
    "operation: {described} is at version {version}; expected version {saved_version} instead. "
    "Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
    "with torch.autograd.set_detect_anomaly(True, check_nan=False)."
)
TYPE_NAMES = {ma.float16: "HalfTensor", ma.float32: "FloatTensor", ma.float64: "DoubleTensor"}


def check_version(tensor, saved_version, producer_name):
    """Raise PyTorch's in-place error if `tensor` changed since it was saved."""
    ### BEGIN SOLUTION 3.3: the version check
    if tensor._version == saved_version:
        return
    described = f"[torch.{TYPE_NAMES[tensor.dtype]} {list(tensor.shape)}]"
    if producer_name is not None:
        described += f", which is output 0 of {producer_name[: producer_name.rfind('Backward')]},"
    raise RuntimeError(
        MESSAGE.format(described=described, version=tensor._version, saved_version=saved_version)
    )
    ### END SOLUTION


# %%
check_version_check(check_version)

# %% [markdown]
# ## Exercise 3.4: saved-tensor hooks that halve the memory
#
# Inside `with ma.autograd.graph.saved_tensors_hooks(pack, unpack):` every tensor a node saves
# is handed to `pack`, and the node keeps whatever `pack` returns; in backward, `unpack`
# receives that object and must give back a tensor like the original (same shape, same dtype).
# PyTorch has the same API, `torch.autograd.graph.saved_tensors_hooks`.
#
# Write `pack_half(t)`, which stores a float16 copy (`t.to(ma.float16)`, half the bytes of
# float32), and `unpack_half(packed)`, which converts it back to the dtype `t` had. Remember
# that dtype in what `pack_half` returns (a tuple is fine). The check runs a small two-layer
# model with your hooks, counts the bytes your pack stores, and compares the gradients with
# PyTorch's float32 ones without hooks: they should differ only by float16 rounding.


# %%
def pack_half(t):
    """Store a saved tensor as float16; return whatever unpack_half needs."""
    ### BEGIN SOLUTION 3.4: float16 pack and unpack hooks
    return (t.dtype, t.to(ma.float16))
    ### END SOLUTION


def unpack_half(packed):
    """Give back a tensor with the original dtype from what pack_half stored."""
    ### BEGIN SOLUTION 3.4: float16 pack and unpack hooks
    dtype, half = packed
    return half.to(dtype)
    ### END SOLUTION


# %%
check_half_hooks(pack_half, unpack_half)

# %% [markdown]
# Done? You have written the three things a saved tensor goes through: the decision to save it,
# the backward that uses it, the guard that refuses it when it changed, plus the hook point
# where PyTorch lets you decide how it is stored. Next, chapter 04: when saved tensors are
# *freed*, and what `retain_graph=True` changes.
