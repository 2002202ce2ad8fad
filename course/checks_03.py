"""Checks for chapter 03, saved tensors: each one runs the learner's piece inside mini_autograd.

    check_mul_saving(mul_saves)          # 3.1: what MulBackward0 keeps (conditional saving)
    check_exp_backward(exp_backward)     # 3.2: ExpBackward0.apply from its saved result
    check_version_check(check_version)   # 3.3: the version check and PyTorch's in-place error
    check_half_hooks(pack, unpack)       # 3.4: a saved_tensors_hooks pair storing float16

Every check patches the engine only while it runs, compares with PyTorch on the same program,
prints exactly one line (correct, not done yet, or what differs and why) and returns True or
False. An ordinary mistake is reported in words, never as a traceback.
"""

from __future__ import annotations

import contextlib
from unittest import mock

import numpy as np

import mini_autograd as ma
from course.check import gradient_problem as _grad_problem
from course.check import not_done as _not_done
from course.check import raised as _raised
from course.check import wrong as _wrong
from mini_autograd.ops import arithmetic
from mini_autograd.ops.elementwise import ExpBackward0
from mini_autograd.ops.recording import as_tensor, record, save, wants_grad
from mini_autograd.saved import SavedTensor
from mini_autograd.tensor import Tensor


class _Mistake(Exception):
    """Something the learner's code did that the check explains in words."""


def _torch():
    import torch

    return torch


def _grad_array(tensor):
    grad = tensor.grad
    return None if grad is None else np.asarray(grad.detach().cpu().numpy(), np.float64)


# --- 3.1: what MulBackward0 keeps --------------------------------------------------------------

_MUL_CASES = [
    # (description, a requires grad, b requires grad, b is a Python number)
    ("a * b where only a requires grad", True, False, False),
    ("a * b where only b requires grad", False, True, False),
    ("a * b where both require grad", True, True, False),
    ("a * 4 (a Python number)", True, False, True),
]
_MUL_A = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]])
_MUL_B = np.array([[2.0, 0.25, -1.0], [3.0, -0.5, 1.5]])


def _mul_program(lib, a_requires, b_requires, b_number):
    """Run a * b (or a * 4) with `lib`; return (a, b, out) where b is None for a number."""
    a = lib.tensor(_MUL_A, requires_grad=a_requires)
    b = 4 if b_number else lib.tensor(_MUL_B, requires_grad=b_requires)
    return a, (None if b_number else b), a * b


def _saved_set(node):
    """The names of the tensors a node saved (PyTorch's `_saved_*` attributes holding a tensor)."""
    names = set()
    for attr in dir(node):
        if attr.startswith("_saved_") and hasattr(getattr(node, attr), "grad_fn"):
            names.add(attr[len("_saved_") :])
    return names


def _learner_mul(mul_saves):
    """mini_autograd's mul, with the learner's choice of what MulBackward0 keeps."""

    def mul(self, other):
        other = as_tensor(other, self)
        data = self._data * other._data
        if not wants_grad(self, other):
            return Tensor._make(data)
        decision = mul_saves(self, other)
        if not isinstance(decision, dict) or not set(decision) <= {"self", "other"}:
            raise _Mistake(
                'mul_saves must return a dict with the keys "self" and "other" (a tensor or '
                f"None for each); it returned a {type(decision).__name__}"
            )
        saved = {}
        for name in ("self", "other"):
            value = decision.get(name)
            if value is not None and not isinstance(value, Tensor):
                raise _Mistake(
                    f'mul_saves returned a {type(value).__name__} for "{name}": save the tensor '
                    "itself (self or other) or None"
                )
            saved[name] = save(value)
        return record(arithmetic.MulBackward0, data, (self, other), saved, broadcasts=True)

    return mul


@contextlib.contextmanager
def _patched_mul(mul_saves):
    mul = _learner_mul(mul_saves)
    with (
        mock.patch.object(Tensor, "__mul__", mul),
        mock.patch.object(Tensor, "__rmul__", mul),
        mock.patch.object(Tensor, "mul", mul),
    ):
        yield


_NEEDED_FOR = {"self": "b's gradient (grad * a)", "other": "a's gradient (grad * b)"}


def check_mul_saving(mul_saves):
    """Exercise 3.1: the learner's saving decision runs inside mini_autograd's `a * b`."""
    label = "3.1"
    hint = "save `self` only when `other` requires grad, and `other` only when `self` does"
    torch = _torch()
    saved_bytes = {"mine": 0, "all": 0}
    for description, a_req, b_req, b_number in _MUL_CASES:
        ta, tb, tout = _mul_program(torch, a_req, b_req, b_number)
        expected = _saved_set(tout.grad_fn)
        tout.sum().backward()
        try:
            with _patched_mul(mul_saves):
                a, b, out = _mul_program(ma, a_req, b_req, b_number)
        except NotImplementedError:
            return _not_done(label, hint)
        except _Mistake as mistake:
            return _wrong(label, f"{mistake} (on {description}).")
        except Exception as error:
            return _raised(label, error, f"on {description}")
        got = _saved_set(out.grad_fn)
        if got != expected:
            extra, missing = sorted(got - expected), sorted(expected - got)
            why = []
            if extra:
                why.append(
                    f"yours also keeps {', '.join(extra)}, which only "
                    f"{' and '.join(_NEEDED_FOR[n] for n in extra)} would need, and that "
                    "gradient is never computed here: wasted memory"
                )
            if missing:
                why.append(
                    f"yours does not keep {', '.join(missing)}, needed for "
                    f"{' and '.join(_NEEDED_FOR[n] for n in missing)}"
                )
            return _wrong(
                label,
                f"on {description}, PyTorch's MulBackward0 saves {_names(expected)} but yours "
                f"saves {_names(got)}: {'; '.join(why)}. Hint: {hint}.",
            )
        for _, saved in out.grad_fn.saved_tensors_info():
            saved_bytes["mine"] += saved.nbytes
        saved_bytes["all"] += _MUL_A.nbytes if b_number else 2 * _MUL_A.nbytes
        try:
            out.sum().backward()
        except Exception as error:
            return _wrong(
                label,
                f"backward of {description} failed with {type(error).__name__}: {error}. "
                "Check that each input is saved under the right name (self is a, other is b).",
            )
        for name, mine, theirs in (("a", a, ta), ("b", b, tb)):
            if mine is None:
                continue
            problem = _grad_problem(_grad_array(mine), _grad_array(theirs))
            if problem:
                return _wrong(
                    label,
                    f"on {description}, the gradient of {name} {problem} compared with PyTorch. "
                    "Did you save a under `other` and b under `self`? The gradient of a is "
                    "grad * other, the gradient of b is grad * self.",
                )
    print(
        f"Exercise {label}: correct ✓ — MulBackward0 saves what PyTorch saves in all "
        f"{len(_MUL_CASES)} cases, and the gradients match "
        f"({saved_bytes['mine']} bytes kept instead of {saved_bytes['all']} if it kept both)."
    )
    return True


def _names(names):
    return "{" + ", ".join(sorted(names)) + "}" if names else "nothing"


# --- 3.2: exp's backward from its saved result -------------------------------------------------

_EXP_X = np.array([[-1.0, 0.0, 0.5], [1.0, 2.0, -0.25]])
_EXP_W = np.array([[0.5, -2.0, 1.0], [3.0, 0.25, -1.0]])
_EXP_CASES = [
    ("x.exp().sum()", lambda lib, x, w: x.exp().sum()),
    (
        "(x.exp() * w).sum(), where the incoming gradient is w",
        lambda lib, x, w: (x.exp() * w).sum(),
    ),
    ("x.exp().exp().mean(), two exp nodes in a row", lambda lib, x, w: x.exp().exp().mean()),
    ("((x * w).exp() * x).sum()", lambda lib, x, w: ((x * w).exp() * x).sum()),
]


def _checked_apply(exp_backward):
    """ExpBackward0.apply that runs the learner's function and checks the shape of its answer."""

    def apply(self, g):
        result = exp_backward(self, g)
        if isinstance(result, Tensor):
            raise _Mistake(
                "exp_backward returned a Tensor; a node's apply returns a tuple with one "
                "gradient per input: `return (grad_x,)`"
            )
        if not isinstance(result, (tuple, list)) or len(result) != 1:
            raise _Mistake(
                f"exp_backward must return a tuple with one gradient, got a {type(result).__name__}"
                f"{'' if not isinstance(result, (tuple, list)) else f' of {len(result)}'}"
            )
        if not isinstance(result[0], Tensor):
            raise _Mistake(
                f"the gradient must be a mini_autograd Tensor, got {type(result[0]).__name__} "
                "(multiply g by the saved result: both are Tensors)"
            )
        return tuple(result)

    return apply


def check_exp_backward(exp_backward):
    """Exercise 3.2: the learner's ExpBackward0.apply runs inside mini_autograd's backward."""
    label = "3.2"
    hint = "read the saved output with node.saved('result'); d exp(x) = exp(x) dx"
    torch = _torch()
    with mock.patch.object(ExpBackward0, "apply", _checked_apply(exp_backward)):
        for description, program in _EXP_CASES:
            mine = [ma.tensor(_EXP_X, requires_grad=True), ma.tensor(_EXP_W, requires_grad=True)]
            theirs = [
                torch.tensor(_EXP_X, requires_grad=True),
                torch.tensor(_EXP_W, requires_grad=True),
            ]
            program(torch, *theirs).backward()
            try:
                program(ma, *mine).backward()
            except NotImplementedError:
                return _not_done(label, hint)
            except _Mistake as mistake:
                return _wrong(label, f"{mistake} (in backward of {description}).")
            except Exception as error:
                return _raised(label, error, f"in backward of {description}")
            for name, m, t in zip(("x", "w"), mine, theirs):
                problem = _grad_problem(_grad_array(m), _grad_array(t))
                if problem:
                    return _wrong(
                        label,
                        f"in backward of {description}, the gradient of {name} {problem} "
                        f"compared with PyTorch. Hint: {hint}; multiply by the incoming "
                        "gradient g.",
                    )
        # The saved result must be read through the version check.
        x = ma.tensor(_EXP_X, requires_grad=True)
        y = x.exp()
        y.mul_(2)
        try:
            y.sum().backward()
        except RuntimeError as error:
            if "modified by an inplace operation" not in str(error):
                return _raised(label, error, "in backward after y.mul_(2)")
        except Exception as error:
            return _raised(label, error, "in backward after y.mul_(2)")
        else:
            return _wrong(
                label,
                "after y = x.exp(); y.mul_(2), backward should raise PyTorch's in-place error, "
                "but yours computed a (wrong) gradient. Read the saved output with "
                "node.saved('result'): it checks the version counter before handing it over.",
            )
    print(
        f"Exercise {label}: correct ✓ — your ExpBackward0 matches PyTorch's gradients on "
        f"{len(_EXP_CASES)} programs and refuses a result modified in place."
    )
    return True


# --- 3.3: the version check --------------------------------------------------------------------


def _unpack_with(check_version):
    """SavedTensor.unpack, with the learner's version check in place of the built-in one."""
    original = SavedTensor.unpack

    def unpack(self, node):
        if self.freed_by is not None or self._unpack is not None:
            return original(self, node)
        if self._is_output:
            unpacked = Tensor._make(self._value, True, node)
            unpacked._own_version = self._version_box  # the output's own version counter
            check_version(unpacked, self._version, node.name())
            return unpacked
        tensor = self._value
        producer = tensor.grad_fn
        check_version(tensor, self._version, None if producer is None else producer.name())
        return tensor

    return unpack


def _v_untouched(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.exp()
    return [x], y.sum(), y


def _v_before_saving(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = x * 1
    a.mul_(2)  # changed before pow saves it: version 1 is what is saved
    return [x], (a**2).sum(), a


def _v_exp_output(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.exp()
    y.mul_(2)
    return [x], y.sum(), y


def _v_plain_input(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = lib.tensor([0.5, 0.5, 0.5])
    out = (x * w).sum()
    w.add_(1)
    return [x], out, w


def _v_double_twice(lib):
    x = lib.tensor(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), requires_grad=True)
    a = x * 1
    out = a.log().sum()
    a.add_(1)
    a.add_(1)
    return [x], out, a


_VERSION_CASES = [
    ("x.exp(), nothing modified", _v_untouched),
    ("a.mul_(2) before a**2 saves a", _v_before_saving),
    ("y = x.exp(); y.mul_(2)", _v_exp_output),
    ("w (no grad, a plain input of x * w) changed by w.add_(1)", _v_plain_input),
    ("a float64 (2, 3) tensor saved by log, changed twice", _v_double_twice),
]


def _run_version_case(lib, program):
    """('ok', grads) or ('error', type name, message) for one program run with `lib`."""
    try:
        # The program also returns the tensors it modified, kept alive until backward is done.
        inputs, out, _modified = program(lib)
        out.backward()
    except NotImplementedError:
        raise
    except RuntimeError as error:
        return ("error", type(error).__name__, str(error))
    return ("ok", [_grad_array(t) for t in inputs])


def _first_difference(mine, theirs):
    i = next(
        (i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b), min(len(mine), len(theirs))
    )
    return f"character {i}: yours {mine[i : i + 40]!r}, PyTorch's {theirs[i : i + 40]!r}"


def check_version_check(check_version):
    """Exercise 3.3: the learner's check runs every time backward unpacks a saved tensor."""
    label = "3.3"
    hint = "compare tensor._version with saved_version; raise RuntimeError(MESSAGE.format(...))"
    torch = _torch()
    for description, program in _VERSION_CASES:
        expected = _run_version_case(torch, program)
        try:
            with mock.patch.object(SavedTensor, "unpack", _unpack_with(check_version)):
                got = _run_version_case(ma, program)
        except NotImplementedError:
            return _not_done(label, hint)
        except Exception as error:
            return _raised(label, error, f"on {description}")
        if expected[0] == "ok" and got[0] == "error":
            return _wrong(
                label,
                f"on {description}, yours raised, but nothing was modified after it was saved, "
                f"so PyTorch computes the gradient. Compare the version now with the version "
                f"at saving time, not with 0. Your message: {got[2][:80]!r}...",
            )
        if expected[0] == "error" and got[0] == "ok":
            return _wrong(
                label,
                f"on {description}, PyTorch raises its in-place error but yours let backward "
                "use the modified values (a silently wrong gradient). Hint: " + hint + ".",
            )
        if expected[0] == "ok":
            for mine, theirs in zip(got[1], expected[1]):
                problem = _grad_problem(mine, theirs)
                if problem:
                    return _wrong(label, f"on {description}, the gradient {problem}.")
            continue
        if got[2] != expected[2]:
            return _wrong(
                label,
                f"on {description}, your message differs from PyTorch's at "
                f"{_first_difference(got[2], expected[2])}.",
            )
    print(
        f"Exercise {label}: correct ✓ — your check raises PyTorch's exact error in the "
        f"{sum(1 for c in _VERSION_CASES if c[1] not in (_v_untouched, _v_before_saving))} "
        "programs that modify a saved tensor and stays quiet in the 2 that do not."
    )
    return True


# --- 3.4: float16 saved-tensor hooks ------------------------------------------------------------


def _hook_model_arrays():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(32, 16)).astype(np.float32)
    w1 = (rng.normal(size=(16, 24)) * 0.3).astype(np.float32)
    w2 = (rng.normal(size=(24, 8)) * 0.3).astype(np.float32)
    return x, w1, w2


def _hook_model(lib, x, w1, w2):
    h = (x @ w1).tanh()
    return ((h @ w2).sigmoid() * 2).exp().mean()


def _nbytes(obj):
    """Bytes of the arrays inside what a pack hook returned (tensors, arrays, containers)."""
    if isinstance(obj, Tensor):
        return obj._data.nbytes
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, (bytes, bytearray)):
        return len(obj)
    if isinstance(obj, (tuple, list)):
        return sum(_nbytes(item) for item in obj)
    if isinstance(obj, dict):
        return sum(_nbytes(item) for item in obj.values())
    if hasattr(obj, "element_size") and hasattr(obj, "numel"):  # a torch tensor
        return obj.element_size() * obj.numel()
    return 0


def _arrays_in(obj):
    """The arrays inside what a pack hook returned (tensors, arrays, containers), as numpy."""
    if isinstance(obj, Tensor):
        return [obj._data]
    if isinstance(obj, np.ndarray):
        return [obj]
    if isinstance(obj, (tuple, list)):
        return [a for item in obj for a in _arrays_in(item)]
    if isinstance(obj, dict):
        return [a for item in obj.values() for a in _arrays_in(item)]
    if hasattr(obj, "detach") and hasattr(obj, "numel"):  # a torch tensor
        return [obj.detach().cpu().numpy()]
    return []


def _holds_values(packed, t):
    """Whether what pack returned holds t's values (to float16 rounding), or bytes we can't read."""
    if isinstance(packed, (bytes, bytearray)) or (
        isinstance(packed, (tuple, list)) and any(isinstance(p, (bytes, bytearray)) for p in packed)
    ):
        return True
    values = np.asarray(t._data, np.float64)
    for array in _arrays_in(packed):
        if array.size == values.size and np.allclose(
            np.asarray(array, np.float64).reshape(values.shape), values, rtol=2e-3, atol=1e-4
        ):
            return True
    return False


def _describe_packed(packed):
    text = repr(packed) if packed is None or isinstance(packed, (int, str)) else None
    return text or f"a {type(packed).__name__} with no tensor data in it"


def check_half_hooks(pack, unpack):
    """Exercise 3.4: the learner's hooks store every saved tensor of a small model."""
    label = "3.4"
    hint = "pack: t.to(ma.float16) (and remember t.dtype); unpack: convert back to that dtype"
    torch = _torch()
    arrays = _hook_model_arrays()
    theirs = [torch.tensor(a, requires_grad=i > 0) for i, a in enumerate(arrays)]
    _hook_model(torch, *theirs).backward()

    received, stored, originals = [], [], []

    def counting_pack(t):
        packed = pack(t)
        if packed is t:
            raise _Mistake(
                "pack returned the tensor itself, so nothing is saved: store a float16 copy"
            )
        if not _arrays_in(packed) and not _nbytes(packed):
            raise _Mistake(
                f"your pack hook returned {_describe_packed(packed)}, so the saved values must be "
                "hidden somewhere else (a closure, a dict, a global), where they still take full "
                "memory: unpack receives only what pack returned, so return the float16 copy "
                "itself, e.g. (t.dtype, t.to(ma.float16))"
            )
        if not _holds_values(packed, t):
            raise _Mistake(
                "what your pack hook returned does not hold the saved values (no tensor or array "
                f"in it matches the {tuple(t.shape)} tensor it was given, even to float16 "
                "rounding): store t.to(ma.float16), a copy of its values"
            )
        received.append(t._data.nbytes)
        stored.append(_nbytes(packed))
        halved = t._data.astype(np.float16).astype(t._data.dtype)
        originals.append((t.dtype, t.shape, t._data.copy(), halved, stored[-1] < received[-1]))
        return (len(originals) - 1, packed)

    def checking_unpack(ticket):
        index, packed = ticket
        value = unpack(packed)
        dtype, shape, original, halved, is_smaller = originals[index]
        if not isinstance(value, Tensor):
            raise _Mistake(f"unpack returned a {type(value).__name__}; it must return a Tensor")
        if value.shape != shape:
            raise _Mistake(f"unpack returned shape {tuple(value.shape)}, expected {tuple(shape)}")
        if value.dtype != dtype:
            raise _Mistake(
                f"unpack returned a {value.dtype} tensor for a saved {dtype} one: convert it "
                "back, or backward computes in the wrong precision"
            )
        if (
            is_smaller
            and not np.array_equal(original, halved)
            and np.array_equal(value._data, original)
        ):
            raise _Mistake(
                "unpack gave back the original full-precision values, which the float16 copy "
                "pack stored cannot hold: unpack must rebuild the tensor from what pack returned "
                "(the only thing it receives), not fetch the original from a closure or a dict, "
                "which keeps it in memory"
            )
        return value

    mine = [ma.tensor(a, requires_grad=i > 0) for i, a in enumerate(arrays)]
    try:
        with ma.autograd.graph.saved_tensors_hooks(counting_pack, checking_unpack):
            loss = _hook_model(ma, *mine)
        loss.backward()
    except NotImplementedError:
        return _not_done(label, hint)
    except _Mistake as mistake:
        return _wrong(label, f"{mistake}.")
    except Exception as error:
        return _raised(label, error, "while running the model with your hooks")
    ratio = sum(stored) / sum(received)
    if ratio > 0.5 + 1e-9:
        return _wrong(
            label,
            f"your pack hook stores {sum(stored)} bytes for {sum(received)} bytes of saved "
            f"tensors ({ratio:.0%}); float16 copies take half. Hint: {hint}.",
        )
    for name, m, t in zip(("w1", "w2"), mine[1:], theirs[1:]):
        problem = _grad_problem(_grad_array(m), _grad_array(t), atol=1e-3, rtol=1e-2)
        if problem:
            return _wrong(
                label,
                f"the gradient of {name} {problem} compared with PyTorch without hooks: more "
                "than float16 rounding explains. Does unpack give back the values pack stored?",
            )
        if m.grad.dtype != ma.float32:
            return _wrong(label, f"the gradient of {name} is {m.grad.dtype}, expected float32.")
    worst = max(
        float(np.max(np.abs(_grad_array(m) - _grad_array(t)))) for m, t in zip(mine[1:], theirs[1:])
    )
    print(
        f"Exercise {label}: correct ✓ — {len(received)} saved tensors take {sum(stored)} bytes "
        f"instead of {sum(received)} ({ratio:.0%}), and the gradients stay within "
        f"{_bucket(worst)} of PyTorch's float32 ones."
    )
    return True


def _bucket(value):
    """A stable upper bound for a small float difference (so stored outputs do not flicker)."""
    for bound in (1e-6, 1e-5, 1e-4, 1e-3, 1e-2):
        if value < bound:
            return f"{bound:.0e}"
    return f"{value:.1g}"
