# %% [markdown]
# # Exercises 03 · Saved tensors
#
# What your engine keeps for backward, and how it guards it:
#
# | exercise | you write | where |
# |---|---|---|
# | 3.1 | what `*` and `@` save, only when it is needed | `mul`, `mm` in your engine |
# | 3.2 | the backward of `exp` and `tanh` from their saved result | `ExpBackward0.apply`, `TanhBackward0.apply` in your engine |
# | 3.3 | saving: the version stamp and the pack hooks | `SavedTensor.__init__`, `saved_tensors_hooks` in your engine |
# | 3.4 | saved-tensor hooks that halve the memory | this notebook |
# | 3.5 | in-place operations and the version check | `_in_place`, `SavedTensor.check_version` in your engine |
#
# About 75 minutes. Each check prints one line: `correct ✓`, `not done yet`, or what differs
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
# ## Exercise 3.1 (your engine): what `*` and `@` save
#
# For `out = self * other` the backward needs `other` to compute the gradient of `self`, and
# `self` for the gradient of `other`. PyTorch keeps a value only when a formula will read it:
# `x * c` with a constant `c` keeps `c` but not `x`. Write `mul(self, other)` (compute the data
# with `_broadcast`, decide what to keep, record with `_record`, whose `_shapes` attribute
# `_sum_to` needs) and the end of `mm(self, mat2)` (its node is `MmBackward0`, which keeps
# `self` and `mat2`, each only when needed). The check compares the saved tensors
# (`_saved_self`, `_saved_other`) with PyTorch's for `x * w`, `x * c`, `c * x` and `x * 4`.

# %%
track.check("3.1")

# %% [markdown]
# ## Exercise 3.2 (your engine): backward from the saved result
#
# `out = exp(self)` keeps no input: its derivative is its own output, so it keeps that (under the
# name `result`). `tanh` does the same: its derivative can be written with its output alone.
# Write `ExpBackward0.apply` and `TanhBackward0.apply` from the saved result, read through the
# node's `saved`, which unpacks it and checks it (chapters 03 and 04). The check also
# differentiates them twice and runs them under pack hooks.

# %%
track.check("3.2")

# %% [markdown]
# ## Exercise 3.3 (your engine): saving a tensor
#
# `SavedTensor(tensor, node, is_output)` is where a node keeps a value. Write its `__init__`
# (`node` is the node that saves: the node holds its SavedTensors, so what would keeping it make?). To
# detect later that the tensor was changed in place, stamp the version it has **now** and keep
# its version counter (the object itself, to read later). Remember `is_output` and that nothing
# is freed yet. A node's own output (`is_output`) is a special case: the output's `grad_fn` is
# this very node, so keeping the output would make a reference cycle that only Python's garbage
# collector breaks, some time later. PyTorch keeps the output's memory without its node; keep
# it in a new tensor of that data (exercise 4.1 gives the node back when reading it).
#
# Then the hooks: inside `with saved_tensors_hooks(pack, unpack):` the tensor is not kept
# itself; the **innermost** active pair's `pack(tensor)` decides what is kept, computed outside
# the graph, and its `unpack` is remembered to read it back. One exception: a Python number
# (the `2` of `x * 2`) is saved as a tensor the operation made for it, marked
# `_is_wrapped_number`, and PyTorch never packs that one: a hook sees only the program's own
# tensors. A pack hook may keep anything, a detached copy or a float16 one, so the graph cannot
# be read from what it keeps: remember where the tensor stood in the graph (whether it requires
# grad, its `grad_fn`, a leaf's accumulator) for exercise 4.1. Write `saved_tensors_hooks` too: it
# keeps its pair and puts it on `_hook_stack` for the duration of its block. The names the rest
# of the engine reads: `value`, `version`, `version_counter`, `unpack_hook`, `freed`,
# `is_output`, `requires_grad`, `grad_fn`, `accumulator`.
#
# <details><summary>A worked example</summary>
#
# `y = x * 2; y.add_(1); z = y * y`: `y`'s version is 1 when `y * y` saves it, so that is the
# stamp, and backward works. `a = x * 2; b = a * a; a.add_(1)`: the stamp is 0, the version
# becomes 1, and backward must refuse (exercise 3.5). With two nested `saved_tensors_hooks`
# blocks, only the inner block's pack runs.
# </details>

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
# Write `pack_half(t)`, which stores `t` in float16 (half the bytes of float32; `Tensor.to`
# converts between dtypes, as in PyTorch), and `unpack_half(packed)`, which gives back a tensor
# in the dtype `t` had. `unpack_half` receives only what `pack_half` returned, and a float16
# copy no longer knows which dtype it came from: what must `pack_half` return? The check runs a small two-layer
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
# ## Exercise 3.5 (your engine): in-place operations and the version check
#
# An in-place operation such as `y.add_(1)` writes into `y`'s memory. Write the end of
# `_in_place(self, other, numpy_op, node_class)` (the check for operations this engine does
# not support is given). A leaf that requires grad cannot be changed in place while grad mode is
# on (PyTorch's error is `LEAF_INPLACE_MESSAGE`). Otherwise compute the new data, record the operation's node when `node_class` is
# given (with `self` and `other` as inputs, **before** `self` changes), write the data into
# `self`'s array, count the change in `self`'s version counter, and make `self`'s history the new
# node when one was recorded. Then `SavedTensor.check_version(node)`: when the version now differs
# from the stamp, raise `modified_error(tensor, producer, version now, version stamped)`, which
# builds PyTorch's text. The `producer` is the node that made the tensor: for a node's own
# result, that node; for a saved input, the input's `grad_fn` (None for a leaf). The check is
# for a tensor kept as it is; what a pack hook made is not checked (exercise 4.1 reads it back).

# %%
track.check("3.5")

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
