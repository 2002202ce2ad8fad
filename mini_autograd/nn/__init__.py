"""Neural-network layers, as in torch.nn: Module and its containers, Parameter, layers, losses,
activations, normalisation, recurrent layers, `functional`, `init`, `utils`, and `modules` (the
paths of PyTorch's files, torch.nn.modules.linear.Linear...)."""

from . import functional, init, lazy, modules, parallel, parameter, utils
from .activation import (
    ELU,
    GELU,
    SELU,
    Hardtanh,
    LeakyReLU,
    LogSoftmax,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Tanh,
)
from .containers import ModuleDict, ModuleList, Sequential
from .conv import (
    AdaptiveAvgPool2d,
    AvgPool1d,
    AvgPool2d,
    Conv1d,
    Conv2d,
    ConvTranspose1d,
    ConvTranspose2d,
    MaxPool1d,
    MaxPool2d,
)
from .distance import CosineSimilarity, PairwiseDistance
from .embedding import Embedding
from .layers import Dropout, Dropout2d, Flatten, Identity, Linear
from .lazy import (
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyConv1d,
    LazyConv2d,
    LazyLinear,
    UninitializedBuffer,
    UninitializedParameter,
)
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
    TripletMarginLoss,
)
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, InstanceNorm1d, InstanceNorm2d, LayerNorm
from .parallel import DataParallel
from .parameter import Parameter
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .upsampling import Upsample

# torch.nn.parameter's names for the tensors of lazy modules (defined in lazy.py)
for _name in (
    "UninitializedBuffer",
    "UninitializedParameter",
    "UninitializedTensorMixin",
    "is_lazy",
):
    setattr(parameter, _name, getattr(lazy, _name))
del _name

__all__ = [
    "AdaptiveAvgPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "BCELoss",
    "BCEWithLogitsLoss",
    "BatchNorm1d",
    "BatchNorm2d",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "Conv1d",
    "Conv2d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "CosineSimilarity",
    "CrossEntropyLoss",
    "DataParallel",
    "Dropout",
    "Dropout2d",
    "ELU",
    "Embedding",
    "Flatten",
    "GELU",
    "GRU",
    "GRUCell",
    "Hardtanh",
    "HuberLoss",
    "Identity",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "KLDivLoss",
    "L1Loss",
    "LSTM",
    "LSTMCell",
    "LayerNorm",
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyLinear",
    "LeakyReLU",
    "Linear",
    "LogSoftmax",
    "MSELoss",
    "MaxPool1d",
    "MaxPool2d",
    "Module",
    "ModuleDict",
    "ModuleList",
    "NLLLoss",
    "PairwiseDistance",
    "Parameter",
    "RNN",
    "RNNBase",
    "RNNCell",
    "RNNCellBase",
    "ReLU",
    "ReLU6",
    "SELU",
    "Sequential",
    "SiLU",
    "Sigmoid",
    "SmoothL1Loss",
    "Softmax",
    "Softplus",
    "Tanh",
    "TripletMarginLoss",
    "Upsample",
    "UninitializedBuffer",
    "UninitializedParameter",
    "functional",
    "init",
    "lazy",
    "modules",
    "parallel",
    "parameter",
    "utils",
]
