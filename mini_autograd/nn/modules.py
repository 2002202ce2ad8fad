"""torch.nn.modules' files, as paths to mini_autograd's classes: `nn.modules.linear.Linear`,
`nn.modules.rnn.LSTM`... are the classes of `nn`, so code that imports them from PyTorch's
files, or checks isinstance against them, runs unchanged. Each file is a small module object,
registered in sys.modules so that `from mini_autograd.nn.modules.rnn import LSTM` works;
`nn.modules` itself holds every class, as PyTorch's does."""

import sys
import types

from . import (
    activation,
    containers,
    conv,
    distance,
    embedding,
    hooks,
    layers,
    lazy,
    loss,
    module,
    normalization,
    rnn,
    upsampling,
)

# PyTorch's file under torch/nn/modules/ -> what it holds (defined elsewhere in mini_autograd.nn)
_CONTENTS = {
    "activation": [
        activation.ELU,
        activation.GELU,
        activation.Hardtanh,
        activation.LeakyReLU,
        activation.LogSoftmax,
        activation.ReLU,
        activation.ReLU6,
        activation.SELU,
        activation.Sigmoid,
        activation.SiLU,
        activation.Softmax,
        activation.Softplus,
        activation.Tanh,
    ],
    "batchnorm": [
        normalization.BatchNorm1d,
        normalization.BatchNorm2d,
        lazy.LazyBatchNorm1d,
        lazy.LazyBatchNorm2d,
    ],
    "container": [containers.ModuleDict, containers.ModuleList, containers.Sequential],
    "conv": [
        conv.Conv1d,
        conv.Conv2d,
        conv.ConvTranspose1d,
        conv.ConvTranspose2d,
        lazy.LazyConv1d,
        lazy.LazyConv2d,
    ],
    "distance": [distance.CosineSimilarity, distance.PairwiseDistance],
    "dropout": [layers.Dropout],
    "flatten": [layers.Flatten],
    "lazy": [lazy.LazyModuleMixin],
    "linear": [layers.Identity, layers.Linear, lazy.LazyLinear],
    "loss": [
        loss.BCELoss,
        loss.BCEWithLogitsLoss,
        loss.CrossEntropyLoss,
        loss.L1Loss,
        loss.MSELoss,
        loss.SmoothL1Loss,
        loss.HuberLoss,
        loss.NLLLoss,
        loss.KLDivLoss,
        loss.TripletMarginLoss,
    ],
    "module": [
        module.Module,
        hooks.register_module_forward_hook,
        hooks.register_module_forward_pre_hook,
        hooks.register_module_full_backward_hook,
        hooks.register_module_full_backward_pre_hook,
    ],
    "instancenorm": [normalization.InstanceNorm1d, normalization.InstanceNorm2d],
    "normalization": [normalization.LayerNorm],
    "upsampling": [upsampling.Upsample],
    "rnn": [
        rnn.GRU,
        rnn.GRUCell,
        rnn.LSTM,
        rnn.LSTMCell,
        rnn.RNN,
        rnn.RNNBase,
        rnn.RNNCell,
        rnn.RNNCellBase,
    ],
    "sparse": [embedding.Embedding],
}


def _torch_file(name, contents):
    """A module object nn.modules.<name> holding `contents` under their names, importable."""
    file = types.ModuleType(f"{__name__}.{name}", f"torch.nn.modules.{name}, in mini_autograd.")
    for item in contents:
        setattr(file, item.__name__, item)
    file.__all__ = [item.__name__ for item in contents]
    sys.modules[file.__name__] = file
    return file


_FILES = {name: _torch_file(name, contents) for name, contents in _CONTENTS.items()}
_CLASSES = {
    c.__name__: c for contents in _CONTENTS.values() for c in contents if isinstance(c, type)
}
globals().update(_FILES)  # nn.modules.linear, ... (in place of the modules imported above)
globals().update(_CLASSES)  # nn.modules.Linear, ...
__all__ = sorted(_CLASSES)
