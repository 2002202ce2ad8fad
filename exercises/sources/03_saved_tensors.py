# %% [markdown]
# # Exercises 03 · Saved tensors
#
# What your engine keeps for backward, and how it guards it:
#
# | exercise | you write | where |
# |---|---|---|
# | 3.1 | what `*` saves, only when it is needed | `mul` in your engine |
# | 3.2 | the backward of `exp` from its saved result | `ExpBackward0.apply` in your engine |
# | 3.5 | saving: the version stamp and the pack hooks | `SavedTensor.__init__` in your engine |
# | 3.3 | the version check, with PyTorch's error | `SavedTensor.check_version` in your engine |
# | 3.4 | saved-tensor hooks that halve the memory | this notebook |
#
# About 60 minutes. Each check prints one line: `correct ✓`, `not done yet`, or what differs
# and why. Answers: `solutions/03_saved_tensors.ipynb` and `solutions/my_autograd.py`.
# %%
import mini_autograd as ma  # noqa: F401 (for your code in 3.4)
from course import track
from course.checks_03 import (
    check_half_hooks,
)

# %% [markdown]
# ## Your engine: `my_autograd.py`
#
# Open `exercises/my_autograd.py` in JupyterLab, search for "Exercise 3.1", write the piece,
# save, and run its check cell here. A check reloads your file, runs the same programs on your
# engine and on PyTorch, and compares them; pieces you have not written yet are taken from
# the course's answer while it runs. Chapter 01's exercise notebook explains the build track.

# %% [markdown]
# ## Exercise 3.1 (your engine): what `*` saves
#
# For `out = self * other` the backward needs `other` to compute the gradient of `self`, and
# `self` for the gradient of `other`. So PyTorch saves each input **only if the other one
# requires grad**: `x * c` with a constant `c` saves `c` but not `x`. Write the body of
# `mul(self, other)` in your engine: compute `data`, build the `saved` pairs with `None` for an
# input that need not be kept (`_requires(value)` tells whether a value requires grad), and
# return `_record(MulBackward0, data, [self, other], saved, _shapes=...)` as the other
# operations do. The check compares the saved tensors (`_saved_self`, `_saved_other`) with
# PyTorch's, for `x * w`, `x * c`, `c * x` and `x * 4`.

# %%
track.check("3.1")

# %% [markdown]
# ## Exercise 3.2 (your engine): the backward of `exp` from its saved result
#
# `out = exp(self)` saves neither input: its derivative is its own output, so it keeps that
# (`saved_result=True`, under the name `result`). Write `ExpBackward0.apply(self, g)` from the
# saved result. The check compares the saved set and the gradients with PyTorch's.

# %%
track.check("3.2")

# %% [markdown]
# ## Exercise 3.5 (your engine): saving, through the pack hooks
#
# `SavedTensor.__init__(self, tensor, node, is_output)` is where a value is kept. Write it:
# stamp `self.version = tensor._version` and keep `self.version_box = tensor._version_box`
# (so the check above can compare); then, if `saved_tensors_hooks` is active (`_hook_stack`
# is not empty), store `pack(tensor)` of the innermost pair, computed under `no_grad()`, and
# remember its unpack in `self.unpack_hook`; otherwise store the tensor itself and set
# `self.unpack_hook = None`. The check uses hooks that record the shapes they were given.

# %%
track.check("3.5")

# %% [markdown]
# ## Exercise 3.3 (your engine): the version check
#
# Every tensor counts its in-place changes in `_version`. When a node saves a tensor it stamps
# the version; when backward unpacks it, a different version means the value backward needs is
# gone. Write `SavedTensor.check_version(self, node)`: when `self.version_box[0]` differs from
# `self.version`, raise PyTorch's error, to the letter:
#
# ```
# one of the variables needed for gradient computation has been modified by an inplace
# operation: [torch.FloatTensor [2, 3]], which is output 0 of Mul, is at version 1; expected
# version 0 instead. Hint: enable anomaly detection to find the operation that failed to
# compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).
# ```
#
# (one line). The type name comes from the dtype (`_TYPE_NAMES`), the list is the shape. The
# ", which is output 0 of Mul," part names the node that made the tensor, without `Backward0`:
# for a saved result that is the saving node itself; for a saved input, the input's current
# `grad_fn` (a leaf has none, and the part is left out).

# %%
track.check("3.3")

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

# %% [markdown]
# ## Your engine so far
#
# Every build-track exercise of the course, checked against your file (the same table as
# `make progress` prints):

# %%
track.progress()
