"""Neural-network layers, as in torch.nn: Module and its containers, Parameter, layers, losses,
activations, `functional`, `init` and `utils`."""

from . import functional, init, utils
from .activation import LeakyReLU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .containers import ModuleDict, ModuleList, Sequential
from .embedding import Embedding
from .layers import LSTM, RNN, Dropout, Flatten, Identity, Linear, LSTMCell, RNNCell
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .module import Module
from .parameter import Parameter

__all__ = [
    "BCELoss",
    "BCEWithLogitsLoss",
    "CrossEntropyLoss",
    "Dropout",
    "Embedding",
    "Flatten",
    "Identity",
    "L1Loss",
    "LSTM",
    "LeakyReLU",
    "LSTMCell",
    "Linear",
    "LogSoftmax",
    "MSELoss",
    "Module",
    "ModuleDict",
    "ModuleList",
    "NLLLoss",
    "Parameter",
    "RNN",
    "RNNCell",
    "ReLU",
    "Sequential",
    "Sigmoid",
    "Softmax",
    "Tanh",
    "functional",
    "init",
    "utils",
]
