"""torch.autograd.grad_mode's switch of the engine's threads: set_multithreading_enabled.

PyTorch's engine can run the backward of each device on a thread of its own; mini_autograd's
runs on the calling thread always, so the setting is only remembered and reported.
"""

_multithreading_enabled = True


def is_multithreading_enabled():
    """Whether backward may use a thread per device (the setting; mini_autograd uses none)."""
    return _multithreading_enabled


class set_multithreading_enabled:
    """Set the setting now; as a context manager, put back the previous one on exit."""

    def __init__(self, mode):
        global _multithreading_enabled
        self.prev, _multithreading_enabled, self.mode = _multithreading_enabled, bool(mode), mode

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        global _multithreading_enabled
        _multithreading_enabled = self.prev

    def clone(self):
        """A new set_multithreading_enabled of the same mode."""
        return self.__class__(self.mode)
