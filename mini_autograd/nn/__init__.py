"""Neural-network layers, as in torch.nn: Module, Parameter, Linear, RNN/LSTM cells and layers."""

from . import functional, utils
from .layers import LSTM, RNN, Linear, LSTMCell, RNNCell
from .module import Module
from .parameter import Parameter

__all__ = [
    "LSTM",
    "LSTMCell",
    "Linear",
    "Module",
    "Parameter",
    "RNN",
    "RNNCell",
    "functional",
    "utils",
]
