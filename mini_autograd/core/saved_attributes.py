"""How PyTorch shows what a node saved: `node._saved_self`, `node._raw_saved_self`, and dir(node).

PyTorch's Python binding shows saved integers (a dim of -1) as unsigned 64-bit ones, and the
saved Python numbers (its Scalars) as they are; this mixin gives Node the same attributes.
"""

from .saved import SavedTensor

# Saved Python numbers (PyTorch's Scalars), shown signed; every other saved int is shown unsigned.
_SCALARS = frozenset(
    {"alpha", "exponent", "self", "threshold", "other", "min", "max", "min_val", "max_val"}
    | {"beta", "scale", "input_scale"}
)


class SavedAttributes:
    """`_saved_<name>` (the unpacked value) and `_raw_saved_<name>` (the SavedTensor) attributes."""

    __slots__ = ()

    def __getattr__(self, attr):
        saved = object.__getattribute__(self, "_saved")
        if attr.startswith("_saved_") and saved is not None and attr[7:] in saved:
            value = self.saved(attr[7:])
            return value if attr[7:] in _SCALARS else _unsigned(value)
        if attr.startswith("_raw_saved_"):  # the SavedTensor itself, e.g. to register_hooks
            value = (saved or {}).get(attr[11:])
            if type(value) is SavedTensor or (type(value) is tuple and value):
                return value
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")

    def __dir__(self):
        return [*super().__dir__(), *(f"_saved_{name}" for name in self._saved or ())]


def _unsigned(value):
    """A negative saved integer (dim=-1), or a tuple of them, as PyTorch shows it: plus 2**64."""
    if type(value) is int and value < 0:
        return value + 2**64
    if type(value) is tuple and any(type(v) is int and v < 0 for v in value):
        return tuple(v + 2**64 if type(v) is int and v < 0 else v for v in value)
    return value
