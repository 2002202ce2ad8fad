"""unsafe_split, unsafe_split_with_sizes, unsafe_chunk: split's pieces (the same memory), which
autograd does not treat as views, so they can be changed in place (the caller vouches for it)."""

from .shape import SplitBackward0, SplitWithSizesBackward0, chunk, split, split_with_sizes


class UnsafeSplitBackward0(SplitBackward0):
    """outs = unsafe_split(self, split_size, dim):  d self = the gradients joined along dim."""

    __slots__ = ()


class UnsafeSplitWithSizesBackward0(SplitWithSizesBackward0):
    """outs = unsafe_split_with_sizes(self, sizes, dim):  d self = the gradients joined along dim."""

    __slots__ = ()


def _not_views(pieces, node_type):
    """split's pieces made plain tensors (their own versions), recorded by node_type."""
    node = pieces[0]._grad_fn if pieces else None
    if node is not None:
        node.__class__ = node_type  # the same node, another name and no view restrictions
    for piece in pieces:
        piece._view_base = None
        piece._view_made_in_no_grad = False  # not one of split's views, refused in place
    return pieces


def unsafe_split(self, split_size, dim=0):
    """split(self, split_size, dim), the pieces not views for autograd."""
    return _not_views(split(self, split_size, dim), UnsafeSplitBackward0)


def unsafe_split_with_sizes(self, split_sizes, dim=0):
    """split_with_sizes(self, split_sizes, dim), the pieces not views for autograd."""
    return _not_views(split_with_sizes(self, split_sizes, dim), UnsafeSplitWithSizesBackward0)


def unsafe_chunk(self, chunks, dim=0):
    """chunk(self, chunks, dim), the pieces not views for autograd."""
    return _not_views(chunk(self, chunks, dim), UnsafeSplitBackward0)
