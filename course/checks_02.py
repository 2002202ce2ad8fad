"""Checks for the exercise of chapter 02 (backward) that stays in the notebook.

    check_gradcheck(gradcheck)   # 2.5: a finite-difference gradient checker

It feeds the learner's gradcheck correct functions and functions whose backward formulas carry
planted bugs (patched into mini_autograd's nodes' formulas only while it runs); when the numbers
are wrong, it names the slip whose numbers they are (a sum of the gaps, a gradient that
accumulated, a comparison of totals...). Exercises 2.1 to 2.4 are checked by the build track
(course/specs.py).
"""

from __future__ import annotations

from unittest import mock

import numpy as np

import mini_autograd as ma
from course.check import Feedback, call, checker, first_line, named_mistake
from mini_autograd.ops.derivatives import ExpBackward0, MulBackward0, TanhBackward0
from mini_autograd.ops.formulas import compiled

# --- Exercise 2.5: a finite-difference gradient checker --------------------------------------

# MulBackward0 with a planted bug: the gradient of `other` has the wrong sign.
_negated_other_mul = compiled({"self": "grad * other", "other": "-grad * self"}, ("other", "self"))
# TanhBackward0 with a planted bug: 1 - result instead of 1 - result**2.
_tanh_without_square = compiled({"self": "grad * (1 - result)"}, ("result",))
# ExpBackward0 with a planted bug: the right gradient, its entries reversed along the last axis,
# so their total is right (a check of totals, one nudge of the whole input, cannot see it).
_exp_reversed = compiled({"self": "(grad * result)[..., ::-1]"}, ("result",))

_RNG = np.random.default_rng(20)
_A, _B = _RNG.normal(size=(2, 3)), _RNG.normal(size=3)
_A2, _B2 = _RNG.normal(size=(2, 3)) * 0.5, _RNG.normal(size=(3, 2)) * 0.5
# The bugs run on inputs of fixed signs, so that each wrong gradient is off in one direction
# only (the mul bug: too small for input 1; the tanh bug: too small for input 0 and too large
# for input 1). A gradcheck without the absolute value then returns a negative gap.
_A_POS, _B_NEG = np.abs(_A) + 0.1, -np.abs(_B) - 0.1


def _mul_tanh(x, y):
    return (x * y).tanh().sum()


def _mm_exp(x, y):
    return (x @ y).exp().mean()


def _exp_mul(x, y):
    return (x.exp() * y).sum()


def _pieces(fn, arrays, eps=1e-6):
    """Per input: the backward gradient, the central differences entry by entry, those of a loop
    that never puts a nudged entry back (each later one taken at a drifted point), and the
    derivative along the whole input at once (every entry nudged together)."""
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    tensors = [ma.tensor(a.copy(), requires_grad=True) for a in arrays]
    fn(*tensors).backward()

    def f(values):
        return fn(*[ma.tensor(v) for v in values]).item()

    def moved(i, step):
        return [a + step if k == i else a for k, a in enumerate(arrays)]

    central, drifting, along, drifted = [], [], [], [a.copy() for a in arrays]
    for i, a in enumerate(arrays):
        central.append(np.zeros(a.shape))
        drifting.append(np.zeros(a.shape))
        for index in np.ndindex(a.shape):
            step = np.zeros(a.shape)
            step[index] = eps
            central[i][index] = (f(moved(i, step)) - f(moved(i, -step))) / (2 * eps)
            drifted[i][index] += eps
            f_plus = f(drifted)
            drifted[i][index] -= 2 * eps
            drifting[i][index] = (f_plus - f(drifted)) / (2 * eps)
        along.append((f(moved(i, eps)) - f(moved(i, -eps))) / (2 * eps))
    return [t.grad.numpy() for t in tensors], central, drifting, along


def _largest(gradients, numerical):
    """Per input, the largest |gradient - numerical| (None when their shapes do not broadcast)."""
    try:
        return [float(np.abs(g - n).max()) for g, n in zip(gradients, numerical)]
    except ValueError:
        return None


def _slips(grads, central, drifting, along):
    """(words, the numbers it returns per input) for the typical slips of a gradcheck."""
    gaps = [np.abs(g - n) for g, n in zip(grads, central)]
    return [
        (
            "the sum of the gaps over the entries of each input, not the largest: a sum grows with the number of entries (and a mean shrinks with it), so one threshold cannot serve every shape; return, per input, the largest absolute difference",
            [float(gap.sum()) for gap in gaps],
        ),
        (
            "the mean of the gaps over the entries of each input, not the largest: a mean dilutes one wrong entry among many right ones; return, per input, the largest absolute difference",
            [float(gap.mean()) for gap in gaps],
        ),
        (
            "what input 0's backward gradient gives, compared with every input's finite differences: compare each input's finite differences with that input's own .grad",
            _largest([grads[0]] * len(grads), central),
        ),
        (
            "what a backward gradient k + 1 times too large gives for input k: backward runs once per input on the same tensors, and each pass adds its gradient into .grad (it accumulates); run backward once, then read every input's .grad",
            _largest([(k + 1) * g for k, g in enumerate(grads)], central),
        ),
        (
            "what finite differences taken at drifting points give: an entry nudged by +eps and -eps is not put back, so every later difference is taken at a shifted point (an error of about eps); put each entry back after its two calls, or nudge fresh copies",
            _largest(grads, drifting),
        ),
        (
            "what finite differences divided by eps, not 2 * eps, give: twice the gradient, so the gap is about the gradient itself; the points x + eps and x - eps are 2 * eps apart",
            _largest(grads, [2 * n for n in central]),
        ),
        (
            "what comparing every entry of the gradient with one number gives, the change when the whole input is nudged at once (the sum of the gradient's entries); nudge one entry at a time and compare entry by entry",
            _largest(grads, along),
        ),
    ]


def _missing_grad(error):
    """Words for reading the .grad of a tensor that does not require grad (None otherwise)."""
    if isinstance(error, AttributeError) and "'NoneType'" in str(error):
        return f"your code raised AttributeError: {first_line(error)}: probably a .grad that is None. Backward fills the .grad of the tensors made with requires_grad=True only: make every input's tensor with requires_grad=True."
    return None


def _run(learner, fn, arrays, description):
    """The learner's gaps for fn at arrays (given copies, which must come back unchanged)."""
    given = [a.copy() for a in arrays]
    result = call(learner, fn, *given, explain=_missing_grad)
    for i, (before, after) in enumerate(zip(arrays, given)):
        if not np.allclose(before, after, rtol=1e-12, atol=1e-12):  # put back, maybe 1 ulp off
            raise Feedback(
                f"your gradcheck changed the arrays it was given (input {i} of {description}): a nudged entry is not put back, so the caller's data drift by eps, and each later difference is taken at a shifted point. np.asarray does not copy an array that already has the dtype asked for: nudge copies, or put each entry back after its two calls."
            )
    return _report(result, len(arrays), description)


def _named_slip(learner, values, fn, arrays):
    """Words for the slip of a gradcheck that returned `values` for fn at arrays (its gaps equal
    those of a slip of _slips, or stay the same for 1000 times a function), or None."""
    slips = _slips(*_pieces(fn, arrays))
    same = lambda slip: slip is not None and np.allclose(values, slip, rtol=1e-3, atol=1e-9)  # noqa: E731
    slip = named_mistake(same, slips)
    if slip:
        return f"that is {slip}"
    with mock.patch.object(TanhBackward0, "formulas", _tanh_without_square):
        once = _run(learner, _mul_tanh, (_A_POS, _B_NEG), f"a function using {TANH_BUG}")
        scaled = _run(learner, _thousand_times, (_A_POS, _B_NEG), "1000 times that function")
    if np.allclose(once, scaled, rtol=1e-2):
        return f"your gaps stay the same when the function is multiplied by 1000 ({_numbers(once)} with {TANH_BUG}, {_numbers(scaled)} for 1000 times it), where the absolute difference grows 1000 times: that is a relative error; return the absolute difference |backward - finite difference|, as the exercise asks"
    return None


def _thousand_times(x, y):
    return _mul_tanh(x, y) * 1000


def _numbers(values):
    return "[" + ", ".join(f"{v:.3g}" for v in values) + "]"


TANH_BUG = "TanhBackward0 computing g * (1 - out) instead of g * (1 - out**2)"


def _report(result, count, description):
    try:
        values = [float(v) for v in result]
    except TypeError:
        raise Feedback(
            f"gradcheck must return a list with one number per input, but for {description} it returned a {type(result).__name__}.",
            hint=True,
        ) from None
    if len(values) != count:
        raise Feedback(
            f"gradcheck must return one number per input ({count} for {description}), but it returned {len(values)}.",
            hint=True,
        )
    for i, v in enumerate(values):
        if np.isnan(v):
            raise Feedback(
                f"your gradcheck returned nan for input {i} of {description}: most likely that input's backward gradient is missing. Backward fills the .grad of the tensors made with requires_grad=True only, and every input's gradient is compared: make each input's tensor with requires_grad=True."
            )
        if v < 0:
            raise Feedback(
                f"your gradcheck returned a negative gap ({v:.3g} for input {i} of {description}): a gap is a distance, so take the absolute value, np.abs(backward - numerical), before the max; without it a gradient that is too small everywhere looks fine.",
            )
    return values


GRADCHECK_TODO = "write gradcheck: per input, the largest |backward gradient - finite difference|"
GRADCHECK_HINT = "make float64 tensors with requires_grad=True and call fn(...).backward(); then for each entry of each input compute (f(x + eps) - f(x - eps)) / (2 * eps) with fresh tensors, and return, per input, the largest absolute difference"
GRADCHECK_TOLERANCE = 1e-8  # central differences with eps=1e-6 agree to ~1e-10; one-sided to ~1e-7


CORRECT = [
    ("(a * b).tanh().sum() with b broadcast over the rows of a", _mul_tanh, (_A, _B)),
    ("(A @ B).exp().mean()", _mm_exp, (_A2, _B2)),
]
BUGS = [  # (node, its formulas with a bug, the bug in words, a function using it, wrong inputs)
    (
        MulBackward0,
        _negated_other_mul,
        "MulBackward0 with the sign of the gradient for its second input flipped",
        _mul_tanh,
        [False, True],
    ),
    (TanhBackward0, _tanh_without_square, TANH_BUG, _mul_tanh, [True, True]),
    (
        ExpBackward0,
        _exp_reversed,
        "ExpBackward0 handing back the right gradient with its entries reversed along the last axis (the right total in the wrong entries)",
        _exp_mul,
        [True, False],
    ),
]


@checker("2.5", GRADCHECK_TODO, GRADCHECK_HINT)
def check_gradcheck(learner):
    """Exercise 2.5: gradcheck(fn, *arrays) -> the largest |backward - numerical| per input."""
    for description, fn, arrays in CORRECT:
        values = _run(learner, fn, arrays, description)
        for i, v in enumerate(values):
            if not v < GRADCHECK_TOLERANCE:
                found = f"backward and central differences agree to about 1e-10 in float64 (a gap under {GRADCHECK_TOLERANCE:.0e} is expected)"
                slip = _named_slip(learner, values, fn, arrays)
                raise Feedback(
                    f"on the correct function {description}, your gradcheck reports a gap of {v:.3g} for input {i}, where {found}: "
                    + (
                        slip
                        or "use the central difference (f(x + eps) - f(x - eps)) / (2 * eps) with eps=1e-6 in float64; a one-sided (f(x + eps) - f(x)) / eps is off by about eps"
                    )
                    + "."
                )
    # The same correct function given float32 arrays: a checker that works in the arrays' own
    # dtype loses the step of 1e-6 to float32 rounding (about 7 significant digits).
    description = f"{CORRECT[0][0]}, given float32 arrays"
    values = _run(learner, _mul_tanh, tuple(x.astype(np.float32) for x in (_A, _B)), description)
    for i, v in enumerate(values):
        if not v < GRADCHECK_TOLERANCE:
            raise Feedback(
                f"on the correct function {description}, your gradcheck reports a gap of {v:.3g} for input {i}: float32 keeps about 7 significant digits, so a step of 1e-6 is mostly lost to rounding and the finite differences are noise. Whatever dtype the arrays come in, do the whole check (backward and finite differences) in float64.",
            )
    gaps = []
    for node_class, buggy, bug, fn, wrong in BUGS:
        with mock.patch.object(node_class, "formulas", buggy):
            gaps.append(_run(learner, fn, (_A_POS, _B_NEG), f"a function using {bug}"))
        _blame_advice(gaps[-1], bug, wrong, same_total=fn is _exp_mul)
    # Only then the numbers: for a bug whose errors all have one sign, a sum of the gaps and a
    # comparison of totals return the same numbers; the bug of ExpBackward0 stops the latter above.
    for (node_class, buggy, bug, fn, _), values in zip(BUGS, gaps):
        with mock.patch.object(node_class, "formulas", buggy):
            expected = _largest(*_pieces(fn, (_A_POS, _B_NEG))[:2])
            if not np.allclose(values, expected, rtol=1e-4, atol=1e-8):
                slip = _named_slip(learner, values, fn, (_A_POS, _B_NEG))
                raise Feedback(
                    f"with {bug}, your gradcheck returned {_numbers(values)}, where the largest |backward gradient - finite difference| per input is {_numbers(expected)}"
                    + (f": {slip}." if slip else "."),
                    hint=not slip,
                )
    return f"your gradcheck passes {len(CORRECT)} correct functions and catches {len(BUGS)} planted bugs in backward formulas, naming the right inputs."


def _blame_advice(values, bug, wrong, same_total):
    """Feedback unless `values` blame exactly the inputs whose gradients are `wrong`."""
    blamed = " and ".join(str(i) for i, is_wrong in enumerate(wrong) if is_wrong)
    for i, (v, is_wrong) in enumerate(zip(values, wrong)):
        if is_wrong and not v > 1e-3:
            advice = (
                "Its total is right, so a check of totals (one nudge of the whole input at once) cannot see it: nudge one entry at a time and compare entry by entry."
                if same_total
                else "Compare the gradient from backward() with the finite-difference one."
            )
            raise Feedback(
                f"your gradcheck did not notice a wrong backward formula: with {bug}, it reported {v:.3g} for input {i}, whose gradient is wrong. {advice}",
                hint=True,
            )
        if not is_wrong and not v < 1e-6:
            raise Feedback(
                f"with {bug}, your gradcheck reported {v:.3g} for input {i}, but that input's gradient is right: only input {blamed} should be blamed.",
                hint=True,
            )
