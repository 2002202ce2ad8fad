# ruff: noqa
# fmt: off
# micrograd's reference computations in PyTorch: the torch halves of test/test_engine.py
# (test_sanity_check, test_more_ops), whose results the tests compare micrograd against,
# printed the way the README's example prints micrograd's results.
# Source: karpathy/micrograd, test/test_engine.py (and the README "Example usage")
# Commit: c911406e5ace8742e5841a7e0df113ecb5d54685
# URL: https://github.com/karpathy/micrograd/blob/master/test/test_engine.py
# Licence: MIT (Copyright (c) 2020 Andrej Karpathy)
# Changes:
# - Only the torch halves are kept; the micrograd halves (`from micrograd.engine import
#   Value`, Value(...)) and the asserts comparing the two are removed.
# - Each half's results, which the asserts compare, are printed instead: the forward
#   values and gradients with .item(), and, for test_more_ops (the README's example), also
#   with the README's f'{...:.4f}' formatting (README: 24.7041, 138.8338, 645.5773).
# - The code is at module level instead of inside the two test functions.
# - No random numbers are drawn, so no seed is needed.

import torch

# test_sanity_check: torch half
x = torch.Tensor([-4.0]).double()
x.requires_grad = True
z = 2 * x + 2 + x
q = z.relu() + z * x
h = (z * z).relu()
y = h + q + q * x
y.backward()
xpt, ypt = x, y

print(ypt.data.item())  # added: forward pass (assert ymg.data == ypt.data.item())
print(xpt.grad.item())  # added: backward pass (assert xmg.grad == xpt.grad.item())

# test_more_ops: torch half
a = torch.Tensor([-4.0]).double()
b = torch.Tensor([2.0]).double()
a.requires_grad = True
b.requires_grad = True
c = a + b
d = a * b + b**3
c = c + c + 1
c = c + 1 + c + (-a)
d = d + d * 2 + (b + a).relu()
d = d + 3 * d + (b - a).relu()
e = c - d
f = e**2
g = f / 2.0
g = g + 10.0 / f
g.backward()
apt, bpt, gpt = a, b, g

print(gpt.data.item(), apt.grad.item(), bpt.grad.item())  # added
print(f'{gpt.data.item():.4f}') # added: README prints 24.7041, the outcome of this forward pass
print(f'{apt.grad.item():.4f}') # added: README prints 138.8338, i.e. the numerical value of dg/da
print(f'{bpt.grad.item():.4f}') # added: README prints 645.5773, i.e. the numerical value of dg/db
