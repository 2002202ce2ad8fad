"""The function forms of the operations, `torch.exp(x)`: the method, called the way torch's
functions may be called too.

- the first argument by name: `torch.sum(input=x, dim=0)`, or numpy's `x=` (`a=`, `x1=`), and
  numpy's `x2=` for `other`;
- `out=`: the result is written into a given tensor (resized if its shape differs, with torch's
  warning), which is returned. Autograd does not record such a call, so it is refused when an
  argument requires grad.

A call without keywords costs one extra function call; the methods (`x.exp()`) are not wrapped.
"""

import warnings

import numpy as np

from ..core import events, inference
from ..core.errors import CPP_TYPE_NAMES, SCALAR_TYPE_NAMES
from ..core.grad_mode import GradMode
from ..core.tensor import Tensor
from .inplace_elementwise import check_can_cast

INPUT_ALIASES = ("input", "x", "a", "x1")  # numpy's names torch accepts for `input`


def function_form(method, name, out_rule=None, first="input"):
    """torch.<name>(...): `method`, also called with its first argument by name (`first`) and
    with out=, written by `out_rule` (None: torch has no out= for it; see write_out)."""

    def function(*args, **kwargs):
        if not kwargs:
            return method(*args)
        return _call(method, name, out_rule, first, args, kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = method.__doc__
    function.__wrapped__ = method
    return function


def _call(method, name, out_rule, first, args, kwargs):
    names = INPUT_ALIASES if first == "input" else (first,)
    for alias in names:
        if alias in kwargs:
            if args:
                raise TypeError(f"{name}() got multiple values for argument '{first}'")
            args = (kwargs.pop(alias),)
            break
    if "x2" in kwargs:
        kwargs["other"] = kwargs.pop("x2")
    if "out" not in kwargs:
        return method(*args, **kwargs)
    out = kwargs.pop("out")
    if out_rule is None:
        raise TypeError(f"{name}() got an unexpected keyword argument 'out'")
    if out is None:
        return method(*args, **kwargs)
    return write_out(method, name, out_rule, args, kwargs, out)


def _tensors(values):
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from _tensors(v)


def write_out(method, name, rule, args, kwargs, out):
    """method(*args, **kwargs) written into `out` (a tensor, or a tuple for (values, indices)).

    `rule` says which dtypes `out` may have: "cast" any the result can be cast to; "dtype" any
    (the operation is computed in out's dtype, as sum's dtype= would); otherwise `rule` is
    torch's error message for an out of another dtype than the result's.
    """
    outs = out if isinstance(out, tuple) else (out,)
    for o in outs:
        if not isinstance(o, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(o).__name__}")
    if GradMode.enabled and any(
        t.requires_grad for t in _tensors((*args, *kwargs.values(), *outs))
    ):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )
    for o in outs:
        if o._is_inference:
            inference.check_inplace(o)
        for observer in events.tensor_modified:
            observer(o)
    if rule == "dtype":
        kwargs["dtype"] = out.dtype
    result = method(*args, **kwargs)
    results = result if isinstance(result, tuple) else (result,)
    if len(outs) != len(results):
        raise TypeError(f"expected tuple of {len(results)} elements but got {len(outs)}")
    for i, (o, r) in enumerate(zip(outs, results)):
        _check_dtype(o, r, INDICES_RULE if i == 1 else rule, name)
        _write(o, r)
    return type(result)(*outs) if isinstance(result, tuple) else out


# the indices of max(dim), sort, topk... must be int64
INDICES_RULE = "Expected out tensor to have dtype {result_c}, but got {out_c} instead"


def _check_dtype(out, result, rule, name):
    r, o = result._data.dtype, out._data.dtype
    if r == o or rule == "dtype":
        return
    if rule == "cast":
        check_can_cast(r, o)
        return
    raise RuntimeError(
        rule.format(
            name=name,
            result=SCALAR_TYPE_NAMES[r.name],
            out=SCALAR_TYPE_NAMES[o.name],
            result_c=CPP_TYPE_NAMES[r.name],
            out_c=CPP_TYPE_NAMES[o.name],
        )
    )


def _write(out, result):
    """Copy result's values into out (cast to out's dtype), resizing out where the shapes differ."""
    if out._data.shape != result._data.shape:
        if out._data.size:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out._data.shape)}, which does not match the required output shape "
                f"{list(result._data.shape)}. This behavior is deprecated, and in a future PyTorch "
                "release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                "t.resize_(0).",
                UserWarning,
                stacklevel=5,
            )
        out._data = np.empty(result._data.shape, out._data.dtype)
    np.copyto(out._data, result._data, casting="unsafe")
    out._bump_version()
