"""Grad mode: one global switch that says whether operations record the graph."""

import functools


class _State:
    enabled = True


def is_grad_enabled():
    """True when operations record backward nodes (the default)."""
    return _State.enabled


class _GradModeContext:
    """Sets grad mode to `self.mode` inside a `with` block or a decorated function."""

    mode = True

    def __enter__(self):
        self.prev = _State.enabled
        _State.enabled = self.mode
        return self

    def __exit__(self, *exc):
        _State.enabled = self.prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self._fresh():
                return fn(*args, **kwargs)

        return wrapper

    def _fresh(self):
        return type(self)()


class no_grad(_GradModeContext):
    """Context manager/decorator: operations inside record no graph."""

    mode = False


class enable_grad(_GradModeContext):
    """Context manager/decorator: record the graph even inside `no_grad`."""

    mode = True


class set_grad_enabled(_GradModeContext):
    """Switch grad mode now (as torch does); used with `with`, restores it on exit."""

    def __init__(self, mode):
        self.mode = bool(mode)
        self.prev = _State.enabled
        _State.enabled = self.mode

    def __enter__(self):
        return self

    def _fresh(self):
        ctx = _GradModeContext()
        ctx.mode = self.mode
        return ctx
