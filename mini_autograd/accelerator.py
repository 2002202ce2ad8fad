"""torch.accelerator's questions, answered for an engine with no accelerator."""


def is_available():
    """False: mini_autograd runs on the CPU."""
    return False


def current_accelerator(check_available=False):
    """None: there is no accelerator."""
    return None


def device_count():
    """0 accelerators."""
    return 0
