"""Devices: mini_autograd computes with numpy on the CPU. `device("cpu")` is accepted wherever
torch takes a device; any other device gets one line saying so, at the moment a tensor would
go there (as in torch, naming a device is allowed; using one that is absent is not)."""


class device:
    """Where a tensor lives: always the CPU for mini_autograd tensors."""

    __slots__ = ("type", "index")

    def __init__(self, type="cpu", index=None):  # noqa: A002 (torch's parameter name)
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int):
            type, index = "cuda", type
        else:
            type, _, number = str(type).partition(":")
            index = int(number) if number else index
        self.type, self.index = type, index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{index})"

    def __eq__(self, other):
        if not isinstance(other, (str, device)) and not hasattr(other, "index"):
            return NotImplemented
        other = device(str(other))  # a name, or a torch.device
        return (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


CPU = device("cpu")


def check(where):
    """Accept None or the CPU; for any other device, raise one line that says what to do."""
    if where is None or str(where) == "cpu" or getattr(where, "type", None) == "cpu":
        return CPU
    kind = str(getattr(where, "type", where)).partition(":")[0]
    raise RuntimeError(
        f"mini_autograd runs on the CPU only (it computes with numpy), so device '{where}' is "
        f"not available. Use device='cpu', or run this code with PyTorch to use {kind}."
    )
