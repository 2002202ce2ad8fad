# ruff: noqa
# fmt: off
# "Autograd mechanics" (PyTorch docs, notes): the runnable code snippets, concatenated.
# Source: pytorch/pytorch, docs/source/notes/autograd.md (formerly autograd.rst)
# Commit: 3b5cdd4f472f28ef44038ccee2007539f7624abf
# URL: https://github.com/pytorch/pytorch/blob/main/docs/source/notes/autograd.md
# Licence: BSD-3-Clause (pytorch/pytorch)
# Changes:
# - The python code blocks are concatenated in order. Left out: the MaskedTensor example
#   (torch.masked prototype API), and the "Example what NOT to do" DataParallel block (it
#   calls `net(input)` with an undefined `input`).
# - Imports the snippets assume are added at the top: `import torch`, `import torch.nn as
#   nn`, `import os`, `import tempfile`, `import threading`, `import uuid`; and
#   `tmp_dir = tempfile.mkdtemp()` for the SelfDeletingTempFile example.
# - torch.manual_seed(0) added (the snippets draw torch.randn).
# - Lines marked "added" print values the text states, or exercise the defined hooks:
#   print(x.grad) after the mask-before-division example, the registered saved-tensor hooks
#   are used by a backward, the DataParallel-wrapped Model is called once, identities of
#   the saved tensors under the detach hooks are printed, and the undefined `fn` of the last
#   example is defined as a hook that prints the gradient it receives.

import os  # added
import tempfile  # added
import threading  # added
import uuid  # added

import torch  # added
import torch.nn as nn  # added
torch.manual_seed(0)  # added

# Saved tensors
x = torch.randn(5, requires_grad=True)
y = x.pow(2)
print(x.equal(y.grad_fn._saved_self))  # True
print(x is y.grad_fn._saved_self)  # True

x = torch.randn(5, requires_grad=True)
y = x.exp()
print(y.equal(y.grad_fn._saved_result))  # True
print(y is y.grad_fn._saved_result)  # False

# Division by Zero in Autograd
x = torch.tensor([1., 1.], requires_grad=True)
div = torch.tensor([0., 1.])

y = x / div          # Results in [inf, 1]
mask = div != 0      # [False, True]
loss = y[mask].sum()
loss.backward()
print(x.grad)        # [nan, 1], not [0, 1]

x = torch.tensor([1., 1.], requires_grad=True)
div = torch.tensor([0., 1.])

mask = div != 0
safe = torch.zeros_like(x)
safe[mask] = x[mask] / div[mask]
loss = safe.sum()
loss.backward()      # Produces safe gradients [0, 1]
print(x.grad)  # added

# Multithreaded Autograd
# Define a train function to be used in different threads
def train_fn():
    x = torch.ones(5, 5, requires_grad=True)
    # forward
    y = (x + 3) * (x + 4) * 0.5
    # backward
    y.sum().backward()
    # potential optimizer update


# User write their own threading code to drive the train_fn
threads = []
for _ in range(10):
    p = threading.Thread(target=train_fn, args=())
    p.start()
    threads.append(p)

for p in threads:
    p.join()

# Hooks for saved tensors
tmp_dir = tempfile.mkdtemp()  # added

class SelfDeletingTempFile():
    def __init__(self):
        self.name = os.path.join(tmp_dir, str(uuid.uuid4()))

    def __del__(self):
        os.remove(self.name)

def pack_hook(tensor):
    temp_file = SelfDeletingTempFile()
    torch.save(tensor, temp_file.name)
    return temp_file

def unpack_hook(temp_file):
    return torch.load(temp_file.name)

# Registering hooks for a saved tensor
x = torch.randn(5, requires_grad=True)
y = x.pow(2)
y.grad_fn._raw_saved_self.register_hooks(pack_hook, unpack_hook)
print(y.grad_fn._saved_self.equal(x))  # added
y.sum().backward()  # added
print(x.grad.equal(2 * x))  # added

# Registering default hooks for saved tensors
# Only save on disk tensors that have size >= 1000
SAVE_ON_DISK_THRESHOLD = 1000

def pack_hook(x):
    if x.numel() < SAVE_ON_DISK_THRESHOLD:
        return x.detach()
    temp_file = SelfDeletingTempFile()
    torch.save(tensor, temp_file.name)
    return temp_file

def unpack_hook(tensor_or_sctf):
    if isinstance(tensor_or_sctf, torch.Tensor):
        return tensor_or_sctf
    return torch.load(tensor_or_sctf.name)

class Model(nn.Module):
    def forward(self, x):
        with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
          # ... compute output
          output = x
        return output

model = Model()
net = nn.DataParallel(model)
print(net(torch.ones(3)))  # added

with torch.autograd.graph.saved_tensors_hooks(lambda x: x.detach(), lambda x: x):
    x = torch.randn(5, requires_grad=True)
    y = x * x
print(y.grad_fn._saved_self is x, y.grad_fn._saved_other is x)  # added
print(y.grad_fn._saved_self.equal(x))  # added

# Behavior of Tensor hooks when Tensor is modified in-place
def fn(grad):  # added
    print("hook got", grad)  # added

t = torch.tensor(1., requires_grad=True).sin()
t.cos_()
t.register_hook(fn)
t.backward()
