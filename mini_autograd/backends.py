"""torch.backends' flags: accepted so that scripts setting them run; the CPU engine ignores them."""

from types import SimpleNamespace


def _absent():
    return False


mps = SimpleNamespace(is_available=_absent, is_built=_absent)
cuda = SimpleNamespace(is_built=_absent, matmul=SimpleNamespace(allow_tf32=False))
cudnn = SimpleNamespace(
    is_available=_absent, enabled=True, deterministic=False, benchmark=False, allow_tf32=True
)
mkldnn = SimpleNamespace(is_available=_absent, enabled=True)
