"""Anomaly detection, as torch.autograd's detect_anomaly and set_detect_anomaly.

While it is on, each new node keeps the stack of the forward call that made it (in its
metadata, "traceback_") and, when a backward made it (create_graph), the node whose backward
that was ("parent_"). In backward, a node that raises has those stacks shown as warnings, and
with check_nan a node that returns nan values raises. Off, nothing is attached: the engine
calls each node's apply directly.
"""

import sys
import traceback
import warnings

import numpy as np

from ..core import arrays, engine, events

__all__ = ["detect_anomaly", "set_detect_anomaly"]

ENABLED = (
    "Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
    "enabled for debugging."
)
NO_FORWARD_INFO = (
    "No forward pass information available. Enable detect anomaly during forward pass for more "
    "information."
)


class AnomalyMode:
    """The anomaly-mode state (one switch for the process, as GradMode)."""

    enabled = False
    check_nan = True


_running = []  # the nodes whose backward runs now, innermost last: the parents of new nodes


def is_anomaly_enabled():
    """True while anomaly detection is on."""
    return AnomalyMode.enabled


def is_anomaly_check_nan_enabled():
    """True when anomaly detection (once on) checks backward's results for nan."""
    return AnomalyMode.check_nan


def set_anomaly_enabled(enabled, check_nan=True):
    """Switch anomaly detection on or off, now."""
    AnomalyMode.enabled, AnomalyMode.check_nan = bool(enabled), bool(check_nan)
    if enabled:
        events.attach(events.node_created, _remember_forward)
        engine.apply_node = _apply_checked
    else:
        events.detach(events.node_created, _remember_forward)
        engine.apply_node = None


class detect_anomaly:
    """Context manager: anomaly detection on inside (with a warning that it is slow)."""

    def __init__(self, check_nan=True):
        self.prev, self.prev_check_nan = AnomalyMode.enabled, AnomalyMode.check_nan
        self.check_nan = check_nan
        warnings.warn(ENABLED, stacklevel=2)

    def __enter__(self):
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc):
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Switch anomaly detection on or off now; used with `with`, restores it on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev, self.prev_check_nan = AnomalyMode.enabled, AnomalyMode.check_nan
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        set_anomaly_enabled(self.prev, self.prev_check_nan)


def _remember_forward(node, output):
    """The node_created observer: the stack that made `node`, and the node being run (if any)."""
    node.metadata["traceback_"] = traceback.format_stack()[:-1]  # (not this function's frame)
    if _running:
        node.metadata["parent_"] = _running[-1]


def _apply_checked(node, grads):
    """node.apply(*grads) for the engine: a failure shows where the node came from."""
    _running.append(node)
    try:
        outputs = arrays.run(node, grads)
        if AnomalyMode.check_nan:
            for i, g in enumerate(arrays.arrays(outputs)):
                if g is not None and g.dtype.kind == "f" and np.isnan(g).any():
                    raise RuntimeError(
                        f"Function '{node.name()}' returned nan values in its {i}th output."
                    )
        return outputs
    except Exception:
        _print_stack(node)
        raise
    finally:
        _running.pop()


def _print_stack(node):
    """Warn with the forward stacks of `node` and of the nodes whose backward made it."""
    stack = node.metadata.get("traceback_")
    if stack is None:
        _warn(f"Error detected in {node.name()}. {NO_FORWARD_INFO}")
        return
    _warn(
        f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
        + "".join(stack)
    )
    parent = node.metadata.get("parent_")
    while parent is not None:
        stack = parent.metadata.get("traceback_")
        _warn(
            f"\n\nPrevious calculation was induced by {parent.name()}. Traceback of forward call "
            "that induced the previous calculation:\n" + "".join(stack or ())
        )
        parent = parent.metadata.get("parent_")


def _warn(message):
    """A UserWarning; where warnings are made errors, printed instead (the error is the node's)."""
    try:
        warnings.warn(message, UserWarning, stacklevel=2)
    except UserWarning:
        print(f"UserWarning: {message}", file=sys.stderr)
