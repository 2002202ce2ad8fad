"""torch.cuda's questions, answered for an engine with no GPU: nothing is available."""

from .core.device import check


def is_available():
    """False: mini_autograd runs on the CPU."""
    return False


def device_count():
    """0 GPUs."""
    return 0


def manual_seed(seed):
    """Accepted and ignored, as torch does when CUDA is absent."""


manual_seed_all = manual_seed


def current_device():
    """Refused: there is no GPU."""
    check("cuda")
