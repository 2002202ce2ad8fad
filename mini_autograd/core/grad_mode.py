"""Grad mode: one global switch that says whether operations record the graph."""

from ._contextlib import context_decorator


class GradMode:
    """The grad-mode state: `GradMode.enabled` is True while operations record the graph."""

    enabled = True


def is_grad_enabled():
    """True when operations record backward nodes (the default)."""
    return GradMode.enabled


class _GradModeContext:
    """Sets grad mode to `self.mode` inside a `with` block or a decorated function."""

    mode = True

    def __new__(cls, function=None):
        if callable(function):  # used as a bare decorator: @no_grad, @enable_grad
            return cls()(function)
        return super().__new__(cls)

    def __enter__(self):
        self.prev = GradMode.enabled
        GradMode.enabled = self.mode
        return self

    def __exit__(self, *exc):
        GradMode.enabled = self.prev
        return False

    def __call__(self, fn):
        return context_decorator(self._fresh, fn)

    def _fresh(self):
        return type(self)()


class no_grad(_GradModeContext):
    """Context manager/decorator (`@no_grad()` or `@no_grad`): operations inside record no graph."""

    mode = False


class enable_grad(_GradModeContext):
    """Context manager/decorator (`@enable_grad()` or `@enable_grad`): record even in no_grad."""

    mode = True


class set_grad_enabled(_GradModeContext):
    """Switch grad mode now (as torch does); used with `with`, restores it on exit."""

    def __init__(self, mode):
        self.mode = bool(mode)
        self.prev = GradMode.enabled
        GradMode.enabled = self.mode

    def __enter__(self):
        return self

    def __call__(self, fn):
        GradMode.enabled = self.prev  # as a decorator it sets the mode only while `fn` runs
        return super().__call__(fn)

    def _fresh(self):
        ctx = _GradModeContext()
        ctx.mode = self.mode
        return ctx
