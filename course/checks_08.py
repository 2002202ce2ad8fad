"""Checks for the exercises of chapter 08, debugging your own training loop. The broken loop
and the answers are PyTorch code, compared with a reference run from the same weights and batches.

    check_linking_tensor(linking_tensor)   # 8.1: the tensor the doctor names
    check_fixed_loop(train_smooth)         # 8.2: the loop, fixed
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
import textwrap

import numpy as np
import torch

import mini_autograd as ma
from course.check import (
    Feedback,
    Spy,
    call,
    checker,
    first_difference,
    freed_graph,
    kept_graphs,
    losses_of,
    named_mistake,
    no_weight_reached,
    retained_for_nothing,
    tensor_note,
)

ATOL, RTOL = 1e-6, 1e-5
LR, SMOOTH = 0.05, 0.1
LINKING_TODO = (
    "run the broken loop under `with ma.doctor():` and return the name that follows 'It is'"
)
LOOP_TODO = "copy broken_train and change the one line that carries a graph into the next step"


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


def doctors_name():
    """The name the doctor gives to the tensor that links the broken loop's iterations."""
    with ma.doctor():
        try:
            reference_loop(*smoothing_data(), make_model(), variant="broken")
        except RuntimeError as error:
            found = re.search(r"previous one\. It is `([^`]+)`", str(error))
            return found and found[1]
    return None


# --- 8.1: the tensor that links the iterations ----------------------------------------------------

PARAMETER = re.compile(r"(weight|bias|param|model|^\d+\.)", re.IGNORECASE)


@checker("8.1", LINKING_TODO)
def check_linking_tensor(linking_tensor):
    """8.1: the name of the tensor that carries a graph from one iteration into the next."""
    answer = call(linking_tensor)
    if not isinstance(answer, str):
        raise Feedback(f"return the name as a string, such as 'loss', not {type(answer).__name__}")
    name = answer.strip().strip("`'\" ").split(" (")[0]
    if name == doctors_name():
        return f"`{name}` keeps this step's prediction, graph and all, for the next step's smoothness term, so the next backward goes back into a graph already freed."
    if name == "prediction":
        raise Feedback(
            "`prediction` is what ends up in the tensor that links them, but it is made anew in every iteration: the doctor names the variable that is still there in the next one ('It is `...`')"
        )
    if name in ("loss", "penalty"):
        raise Feedback(
            f"`{name}` is made anew in every iteration, and nothing keeps the old one: look for the variable that the next iteration reads ('It is `...`' in the diagnosis)"
        )
    if name in ("x", "y", "xs", "ys"):
        raise Feedback(
            f"`{name}` is data, and it does not require grad here: it has no graph to carry. Look for 'It is `...`' in the diagnosis"
        )
    if PARAMETER.search(name):
        raise Feedback(
            f"`{name}` sounds like the model or a parameter: parameters are leaves, they carry no graph from one iteration to the next. Look for 'It is `...`' in the diagnosis"
        )
    raise Feedback(
        f"the doctor does not name `{name}`: run the cell above and look for 'It is `...`' in its diagnosis"
    )


# --- 8.2: the loop, fixed ------------------------------------------------------------------------


RETAIN_WORDS = "retain_graph=True is the wrong fix here: it keeps every step's graph, and the next step's backward goes back through it, into all the earlier steps"


def _source_note(fn):
    """' (note: ...)' when the learner's function reads `.data`; else ''."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return ""
    if any(isinstance(n, ast.Attribute) and n.attr == "data" for n in ast.walk(tree)):
        return " (note: `.data` works here, but `.detach()` is the safe cut: it keeps the version check that `.data` skips)"
    return ""


WRONG_FIXES = {  # a wrong fix (a variant of reference_loop): what is wrong with it
    "re-init": "your losses are those of the loop without its smoothness term: `previous` must bring the previous prediction's values into the next step, only without its graph (detach it where it is carried over). Re-initialising suits iterations that are independent; these are consecutive batches",
    "penalty without grad": "the smoothness term sends no gradient to this step's prediction: detach only the previous step's prediction (`previous`), not the one the current step makes",
    "no zero_grad": "optimizer.zero_grad() is missing, so each backward adds its gradients to the earlier ones: call it before every loss.backward()",
    "no step": "the model never learns: optimizer.step() finds no gradients, or is never called. Call optimizer.zero_grad() before loss.backward() (not between backward and step), and optimizer.step() after it",
}


def _explain(spy, error):
    """Words for an error of the learner's loop (read with what the spy saw)."""
    if isinstance(error, RuntimeError) and spy.retained:
        return f"{RETAIN_WORDS}; and optimizer.step() has since changed, in place, the weights that graph saved, hence the in-place error. Carry the previous prediction without its graph instead (detach it where it is carried over)"
    if freed_graph(error):
        return "the second step's backward still reaches into the first step's freed graph (through `previous`): carry the previous prediction without its graph: detach it where it is carried over (`clone()` would copy the graph too)"
    if "does not require grad" in str(error):
        return "no gradient reaches the parameters any more: cut the graph of the previous prediction only, not of this step's prediction or of the loss"
    return None


@checker("8.2", LOOP_TODO)
def check_fixed_loop(train_smooth):
    """8.2: train_smooth(xs, ys, model) gives the reference run's losses, without retain_graph."""
    expected = reference_loop(*smoothing_data(), make_model())
    with Spy(watch_graphs=True) as spy:
        result = call(
            train_smooth, *smoothing_data(), make_model(), explain=functools.partial(_explain, spy)
        )
    losses = losses_of(result, len(expected), per="step")
    problem = first_difference(losses, expected, "step", ATOL, RTOL)
    if spy.retained and problem is None:
        raise Feedback(
            retained_for_nothing("the previous prediction is carried detached", "this step's")
        )
    if spy.retained:
        raise Feedback(
            f"it runs, but {RETAIN_WORDS}: the gradients are not the loop's, and memory and time per step grow with every step (chapter 08, section 8). Carry the previous prediction without its graph instead (detach it where it is carried over)"
        )
    kept = kept_graphs(spy.graph_sizes)
    if problem is None and kept:
        raise Feedback(f"it trains, but {kept}")
    if problem is None:
        return f"all {len(expected)} steps train with the reference run's losses, and no backward keeps its graph.{tensor_note(result)}{_source_note(train_smooth)}"
    unreached = no_weight_reached(spy)
    if unreached:
        raise Feedback(f"{problem}: {unreached}")
    wrong_fixes = (
        (advice, reference_loop(*smoothing_data(), make_model(), variant=variant))
        for variant, advice in WRONG_FIXES.items()
    )
    same = lambda wrong: first_difference(losses, wrong, "step", ATOL, RTOL) is None  # noqa: E731
    advice = named_mistake(same, wrong_fixes) or (
        "keep the loop as it was (model, data, lr, smooth, the order of the steps) and change only what carries the graph into the next step"
    )
    raise Feedback(f"{problem}: {advice}")
