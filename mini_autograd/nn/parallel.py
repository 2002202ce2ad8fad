"""DataParallel, as in torch.nn.parallel, on a machine without GPUs: PyTorch's then just calls
the module it wraps, and so does this one."""

from .module import Module


class DataParallel(Module):
    """y = module(x): the wrapped module (under the name `module`, so state_dict keys start with
    'module.'), run as it is; with no GPU there is nothing to split the batch across, so
    device_ids, output_device and dim are unused, as in PyTorch (device_ids becomes [])."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        """module(*inputs, **kwargs)."""
        return self.module(*inputs, **kwargs)
