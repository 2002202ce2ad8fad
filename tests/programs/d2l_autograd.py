# ruff: noqa
# fmt: off
# Dive into Deep Learning, 2.5 "Automatic Differentiation": the PyTorch tab, concatenated.
# Source: d2l-ai/d2l-en, chapter_preliminaries/autograd.md (the `%%tab pytorch` cells)
# Commit: 23d7a5aecceee57d1292c56e90cce307f183bb0a
# URL: https://github.com/d2l-ai/d2l-en/blob/master/chapter_preliminaries/autograd.md
# Licence: MIT-0 for the sample code (d2l-en LICENSE-SAMPLECODE: "Permission is hereby
#   granted, free of charge ... to deal in the Software without restriction"; the book
#   text is CC BY-SA 4.0 and is not copied)
# Changes:
# - The pytorch cells are concatenated in order; the `%%tab pytorch` cell magics and the
#   d2lbook tab-selection cell are dropped.
# - Each cell's last bare expression, which the notebook displays, is wrapped in print(...)
#   (marked "print added").
# - torch.manual_seed(0) added after `import torch` (a cell draws torch.randn).

import torch
torch.manual_seed(0)  # added

x = torch.arange(4.0)
print(x)  # print added

# Can also create x = torch.arange(4.0, requires_grad=True)
x.requires_grad_(True)
print(x.grad)  # The gradient is None by default  # print added

y = 2 * torch.dot(x, x)
print(y)  # print added

y.backward()
print(x.grad)  # print added

print(x.grad == 4 * x)  # print added

x.grad.zero_()  # Reset the gradient
y = x.sum()
y.backward()
print(x.grad)  # print added

x.grad.zero_()
y = x * x
y.backward(gradient=torch.ones(len(y)))  # Faster: y.sum().backward()
print(x.grad)  # print added

x.grad.zero_()
y = x * x
u = y.detach()
z = u * x

z.sum().backward()
print(x.grad == u)  # print added

x.grad.zero_()
y.sum().backward()
print(x.grad == 2 * x)  # print added

def f(a):
    b = a * 2
    while b.norm() < 1000:
        b = b * 2
    if b.sum() > 0:
        c = b
    else:
        c = 100 * b
    return c

a = torch.randn(size=(), requires_grad=True)
d = f(a)
d.backward()

print(a.grad == d / a)  # print added
