"""Optimizers, as in torch.optim: they update parameters in place (bumping their versions).

Each one follows torch's single-tensor loop (foreach=False, torch's default on the CPU)
operation by operation; `lr_scheduler` changes their learning rates from epoch to epoch.
"""

from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = [
    "SGD",
    "Adadelta",
    "Adagrad",
    "Adam",
    "AdamW",
    "LBFGS",
    "NAdam",
    "Optimizer",
    "RMSprop",
    "lr_scheduler",
]
