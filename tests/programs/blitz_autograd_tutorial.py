# ruff: noqa
# fmt: off
# "A Gentle Introduction to torch.autograd" (Deep Learning with PyTorch: A 60 Minute Blitz).
# Source: pytorch/tutorials, beginner_source/blitz/autograd_tutorial.py
# Commit: not known (the current published text, read from a stored copy whose commit
#   was not reported; the older stored revision 56d1da96ef0e5acf5187d89c27d6ca6178170bc5
#   is the Variable-era text)
# URL: https://github.com/pytorch/tutorials/blob/main/beginner_source/blitz/autograd_tutorial.py
# Licence: BSD-3-Clause (pytorch/tutorials)
# Changes:
# - The torchvision resnet18 parts are removed: `from torchvision.models import resnet18,
#   ResNet18_Weights`, the pretrained-model training step (model, data, labels, prediction,
#   loss.backward(), SGD step) and the fine-tuning example (freeze, model.fc = nn.Linear(512,
#   10), optimizer). They need torchvision and a weights download. The
#   `from torch import nn, optim` line of the fine-tuning example is kept.
# - torch.manual_seed(0) added after the first `import torch` (the program draws torch.rand).
# - The sphinx-gallery prose blocks are left out; the other code lines are as published.

import torch
torch.manual_seed(0)  # added

import torch

a = torch.tensor([2., 3.], requires_grad=True)
b = torch.tensor([6., 4.], requires_grad=True)

Q = 3*a**3 - b**2

external_grad = torch.tensor([1., 1.])
Q.backward(gradient=external_grad)

# check if collected gradients are correct
print(9*a**2 == a.grad)
print(-2*b == b.grad)

x = torch.rand(5, 5)
y = torch.rand(5, 5)
z = torch.rand((5, 5), requires_grad=True)

a = x + y
print(f"Does `a` require gradients? : {a.requires_grad}")
b = x + z
print(f"Does `b` require gradients?: {b.requires_grad}")

from torch import nn, optim
