"""Checks for the exercises of chapter 08, debugging your own training loop.

The broken loop is PyTorch code, and so are the answers: each check runs the learner's function
with torch, compares it with a reference run from the same weights and batches, and prints
exactly one line: correct, "not done yet", or what is wrong in plain words.

    check_linking_tensor(linking_tensor)   # 8.1: the tensor the doctor names
    check_fixed_loop(train_smooth)         # 8.2: the loop, fixed
"""

from __future__ import annotations

import contextlib
import inspect
import re

import numpy as np
import torch

import mini_autograd as ma
from course.check import Feedback, describe_error, losses_of, run_check, tensor_note, verdict

ATOL, RTOL = 1e-6, 1e-5
LR, SMOOTH = 0.05, 0.1


# --- The loop, its data and its model -------------------------------------------------------------


def smoothing_data(steps=12, batch=16, seed=0):
    """(xs, ys): `steps` consecutive batches of a slowly changing series, float32 torch tensors.

    xs[k] is (batch, 3): sin t, cos t and t / 3 for the k-th stretch of time; ys[k] is
    (batch, 1): sin 2t with a little noise.
    """
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 3, steps * batch, dtype=np.float32).reshape(steps, batch, 1)
    xs = np.concatenate([np.sin(t), np.cos(t), t / 3], axis=2)
    ys = np.sin(2 * t) + 0.1 * rng.standard_normal(t.shape).astype(np.float32)
    return torch.tensor(xs), torch.tensor(ys)


def make_model(seed=0):
    """The network of the exercise, with the same weights for every call: 3 -> 16, tanh, -> 1."""
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))


def reference_loop(xs, ys, model, lr=LR, smooth=SMOOTH, variant="fixed"):
    """The exercise's loop: 'broken' as given, 'fixed', or a wrong fix, to recognise it."""
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    previous, losses = None, []
    for x, y in zip(xs, ys):
        if variant == "re-init":
            previous = None
        prediction = model(x)
        loss = torch.nn.functional.mse_loss(prediction, y)
        if previous is not None:
            other = prediction.detach() if variant == "penalty without grad" else prediction
            loss = loss + smooth * (other - previous).pow(2).mean()
        if variant != "no zero_grad":
            optimizer.zero_grad()
        loss.backward()
        if variant != "no step":
            optimizer.step()
        previous = prediction if variant == "broken" else prediction.detach()
        losses.append(loss.item())
    return losses


def _reference(variant):
    xs, ys = smoothing_data()
    return reference_loop(xs, ys, make_model(), variant=variant)


def doctors_name():
    """The name the doctor gives to the tensor that links the broken loop's iterations."""
    xs, ys = smoothing_data()
    with ma.doctor():
        try:
            reference_loop(xs, ys, make_model(), variant="broken")
        except RuntimeError as error:
            found = re.search(r"previous one\. It is `([^`]+)`", str(error))
            return found and found[1]
    return None


# --- 8.1: the tensor that links the iterations ----------------------------------------------------

PARAMETER = re.compile(r"(weight|bias|param|model|^\d+\.)", re.IGNORECASE)


@verdict
def check_linking_tensor(linking_tensor):
    """8.1: the name of the tensor that carries a graph from one iteration into the next."""

    def body():
        try:
            answer = linking_tensor()
        except NotImplementedError:
            raise
        except Exception as error:  # an ordinary mistake: report it in one line
            raise Feedback(f"your code raised {describe_error(error)}") from None
        if not isinstance(answer, str):
            raise Feedback(
                f"return the name as a string, such as 'loss', not {type(answer).__name__}"
            )
        name = answer.strip().strip("`'\" ").split(" (")[0]
        if name == doctors_name():
            return (
                f"`{name}` keeps this step's prediction, graph and all, for the next step's "
                "smoothness term, so the next backward goes back into a graph already freed."
            )
        if name == "prediction":
            raise Feedback(
                "`prediction` is what ends up in the tensor that links them, but it is made anew "
                "in every iteration: the doctor names the variable that is still there in the "
                "next one ('It is `...`')"
            )
        if name in ("loss", "penalty"):
            raise Feedback(
                f"`{name}` is made anew in every iteration, and nothing keeps the old one: look "
                "for the variable that the next iteration reads ('It is `...`' in the diagnosis)"
            )
        if name in ("x", "y", "xs", "ys"):
            raise Feedback(
                f"`{name}` is data, and it does not require grad here: it has no graph to carry. "
                "Look for 'It is `...`' in the diagnosis"
            )
        if PARAMETER.search(name):
            raise Feedback(
                f"`{name}` sounds like the model or a parameter: parameters are leaves, they "
                "carry no graph from one iteration to the next. Look for 'It is `...`' in the "
                "diagnosis"
            )
        raise Feedback(
            f"the doctor does not name `{name}`: run the cell above and look for 'It is `...`' "
            "in its diagnosis"
        )

    return run_check(
        "8.1",
        "run the broken loop under `with ma.doctor():` and return the name that follows 'It is'",
        body,
    )


# --- 8.2: the loop, fixed ------------------------------------------------------------------------


class _RetainSpy:
    """Sees every torch backward call that keeps its graph, whatever the entry point.

    Tensor.backward calls torch.autograd.backward, so wrapping it and torch.autograd.grad sees
    every call; retain_graph defaults to create_graph.
    """

    def __init__(self):
        self.retained = False

    def _wrap(self, original):
        signature = inspect.signature(original)

        def entry(*args, **kwargs):
            try:
                arguments = signature.bind(*args, **kwargs).arguments
            except TypeError:
                return original(*args, **kwargs)  # torch's own error for wrong arguments
            retain = arguments.get("retain_graph")
            keeps = arguments.get("create_graph", False) if retain is None else retain
            self.retained = self.retained or bool(keeps)
            return original(*args, **kwargs)

        return entry

    @contextlib.contextmanager
    def watching(self):
        originals = torch.autograd.backward, torch.autograd.grad
        torch.autograd.backward, torch.autograd.grad = (self._wrap(fn) for fn in originals)
        try:
            yield self
        finally:
            torch.autograd.backward, torch.autograd.grad = originals


RETAIN_WORDS = (
    "retain_graph=True is the wrong fix here: it keeps every step's graph, and the next step's "
    "backward goes back through it, into all the earlier steps"
)


def _first_difference(got, expected):
    for k, (a, b) in enumerate(zip(got, expected)):
        if not np.isclose(a, b, atol=ATOL, rtol=RTOL):
            return f"the loss of step {k} is {a:.6g}, expected {b:.6g}"
    return None


def _source_note(fn):
    """' (note: ...)' when the learner's function reads `.data`; else ''."""
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        return ""
    if re.search(r"\.data\b", source):
        return (
            " (note: `.data` works here, but `.detach()` is the safe cut: it keeps the version "
            "check that `.data` skips)"
        )
    return ""


WRONG_FIXES = (
    (
        "re-init",
        "your losses are those of the loop without its smoothness term: `previous` must bring "
        "the previous prediction's values into the next step, only without its graph "
        "(`previous = prediction.detach()`). Re-initialising suits iterations that are "
        "independent; these are consecutive batches",
    ),
    (
        "penalty without grad",
        "the smoothness term sends no gradient to this step's prediction: detach only the "
        "previous step's prediction (`previous`), not the one the current step makes",
    ),
    (
        "no zero_grad",
        "optimizer.zero_grad() is missing, so each backward adds its gradients to the earlier "
        "ones: call it before every loss.backward()",
    ),
    ("no step", "the model never learns: call optimizer.step() after each backward"),
)


def _run_learner(train_smooth, spy):
    """The learner's losses, or Feedback for an error (read with what the spy saw)."""
    xs, ys = smoothing_data()
    try:
        with spy.watching():
            return train_smooth(xs, ys, make_model())
    except NotImplementedError:
        raise
    except RuntimeError as error:
        text = str(error)
        if spy.retained:
            raise Feedback(
                f"{RETAIN_WORDS}; and optimizer.step() has since changed, in place, the weights "
                "that graph saved, hence the in-place error. Carry the previous prediction "
                "without its graph instead (`previous = prediction.detach()`)"
            ) from None
        if "backward through the graph a second time" in text:
            raise Feedback(
                "the second step's backward still reaches into the first step's freed graph "
                "(through `previous`): carry the previous prediction without its graph, "
                "`previous = prediction.detach()` (`clone()` would copy the graph too)"
            ) from None
        if "does not require grad" in text:
            raise Feedback(
                "no gradient reaches the parameters any more: cut the graph of the previous "
                "prediction only, not of this step's prediction or of the loss"
            ) from None
        raise Feedback(f"your code raised {describe_error(error)}") from None
    except Exception as error:
        raise Feedback(f"your code raised {describe_error(error)}") from None


@verdict
def check_fixed_loop(train_smooth):
    """8.2: train_smooth(xs, ys, model) gives the reference run's losses, without retain_graph."""

    def body():
        expected = _reference("fixed")
        spy = _RetainSpy()
        result = _run_learner(train_smooth, spy)
        if spy.retained:
            raise Feedback(
                f"it runs, but {RETAIN_WORDS}: the gradients are not the loop's, and memory and "
                "time per step grow with every step (chapter 08, section 8). Carry the previous "
                "prediction without its graph instead (`previous = prediction.detach()`)"
            )
        losses = losses_of(result, len(expected), per="step")
        problem = _first_difference(losses, expected)
        if problem is None:
            return (
                f"all {len(expected)} steps train with the reference run's losses, and no "
                f"backward keeps its graph.{tensor_note(result)}{_source_note(train_smooth)}"
            )
        for variant, advice in WRONG_FIXES:
            if _first_difference(losses, _reference(variant)) is None:
                raise Feedback(f"{problem}: {advice}")
        raise Feedback(
            f"{problem}: keep the loop as it was (model, data, lr, smooth, the order of the steps) "
            "and change only what carries the graph into the next step"
        )

    return run_check(
        "8.2",
        "copy broken_train and change the one line that carries a graph into the next step",
        body,
    )
