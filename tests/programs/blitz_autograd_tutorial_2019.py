# ruff: noqa
# fmt: off
# "Autograd: automatic differentiation" (the 60 Minute Blitz autograd part as published
# from PyTorch 0.4 until the 2020 rewrite).
# Source: pytorch/tutorials, beginner_source/blitz/autograd_tutorial.py
# Commit: 05f04cb4463d507cc90f891db82d8c2685e14b53
# URL: https://github.com/pytorch/tutorials/blob/05f04cb4463d507cc90f891db82d8c2685e14b53/beginner_source/blitz/autograd_tutorial.py
# Licence: BSD-3-Clause (pytorch/tutorials)
# Changes:
# - torch.manual_seed(0) added after `import torch` (the program draws torch.randn).
# - The module docstring and sphinx-gallery prose blocks are left out; every code line is
#   as published (the tab-indented line included).

import torch
torch.manual_seed(0)  # added

###############################################################
# Create a tensor and set requires_grad=True to track computation with it
x = torch.ones(2, 2, requires_grad=True)
print(x)

###############################################################
# Do an operation of tensor:
y = x + 2
print(y)

###############################################################
# ``y`` was created as a result of an operation, so it has a ``grad_fn``.
print(y.grad_fn)

###############################################################
# Do more operations on y
z = y * y * 3
out = z.mean()

print(z, out)

################################################################
# ``.requires_grad_( ... )`` changes an existing Tensor's ``requires_grad``
# flag in-place. The input flag defaults to ``True`` if not given.
a = torch.randn(2, 2)
a = ((a * 3) / (a - 1))
print(a.requires_grad)
a.requires_grad_(True)
print(a.requires_grad)
b = (a * a).sum()
print(b.grad_fn)

out.backward()

###############################################################
# print gradients d(out)/dx
#

print(x.grad)

x = torch.randn(3, requires_grad=True)

y = x * 2
while y.data.norm() < 1000:
    y = y * 2

print(y)

gradients = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
y.backward(gradients)

print(x.grad)

print(x.requires_grad)
print((x ** 2).requires_grad)

with torch.no_grad():
	print((x ** 2).requires_grad)
