"""torch.testing.assert_close: are two tensors (or numbers) equal up to a tolerance that depends on
their dtype? |actual - expected| <= atol + rtol * |expected|, elementwise."""

import numpy as np

from .core.tensor import Tensor

# (rtol, atol) by dtype, as torch's defaults
_TOLERANCES = {"float16": (1e-3, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}


def _parts(x):
    if isinstance(x, Tensor):
        return x.detach()._data, x
    return np.asarray(x), None


def assert_close(
    actual, expected, *, rtol=None, atol=None, equal_nan=False, check_dtype=True, msg=None
):
    """Raise AssertionError with torch's message unless actual is close to expected."""
    a, a_tensor = _parts(actual)
    e, e_tensor = _parts(expected)
    if a_tensor is not None and e_tensor is not None:
        for name, got, want in (
            ("shape", a_tensor.shape, e_tensor.shape),
            ("dtype", a_tensor.dtype, e_tensor.dtype),
        ):
            if (name != "dtype" or check_dtype) and got != want:
                raise AssertionError(
                    msg or f"The values for attribute '{name}' do not match: {got!r} != {want!r}."
                )
    default_rtol, default_atol = _TOLERANCES.get(np.result_type(a, e).name, (0.0, 0.0))
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    common = np.result_type(a, e, np.float32)  # torch reports differences in the tensors' dtype
    a, e = a.astype(common), e.astype(common)
    close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if close.all():
        return
    if msg is not None:
        raise AssertionError(msg)
    absolute = np.abs(a - e)
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = absolute / np.abs(e)
    if a_tensor is None and e_tensor is None:
        raise AssertionError(
            f"Scalars are not close!\n\nExpected {e.item()} but got {a.item()}.\n"
            f"Absolute difference: {absolute.item()} (up to {atol} allowed)\n"
            f"Relative difference: {relative.item()} (up to {rtol} allowed)"
        )
    worst_abs = np.unravel_index(np.nanargmax(np.where(close, -1, absolute)), absolute.shape)
    worst_rel = np.unravel_index(np.nanargmax(np.where(close, -1, relative)), relative.shape)
    mismatched = int((~close).sum())
    raise AssertionError(
        "Tensor-likes are not close!\n\n"
        f"Mismatched elements: {mismatched} / {close.size} ({100 * mismatched / close.size:.1f}%)\n"
        f"Greatest absolute difference: {absolute[worst_abs].item()} at index "
        f"{tuple(int(i) for i in worst_abs)} (up to {atol} allowed)\n"
        f"Greatest relative difference: {relative[worst_rel].item()} at index "
        f"{tuple(int(i) for i in worst_rel)} (up to {rtol} allowed)"
    )
