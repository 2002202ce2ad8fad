"""The call-site scan (tools/call_sites): its stored table is current, and its scanner counts right."""

from collections import Counter

import pytest

from tools.call_sites import support


def test_stored_table_is_what_support_writes_today():
    # When mini_autograd gains or loses a name, rerun `python -m tools.call_sites.support`.
    assert support.DOC_PATH.read_text(encoding="utf-8") == support.render(*support.read_csv())


def test_names_resolve_on_mini_autograd_as_on_torch():
    assert support.mini_autograd_path("torch.nn.Linear") == "mini_autograd.nn.Linear"
    assert support.mini_autograd_path("Tensor.view") == "mini_autograd.Tensor.view"
    assert support.mini_autograd_path("Module.eval") == "mini_autograd.nn.Module.eval"
    assert support.is_supported("torch.nn.Linear")
    assert not support.is_supported("torch.nn.NoSuchLayer")


SAMPLE = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.utils.data import DataLoader
import numpy as np


class Net(nn.Module):
    def forward(self, x):
        return F.relu(self.fc(x)).view(-1)


net = Net()
opt = optim.SGD(net.parameters(), lr=0.1)
x = torch.randn(3, 4)
y = x.sum()
y.backward()
opt.zero_grad()
opt.step()
net.zero_grad()
env.step(0)
losses = []
losses.append(y.item())
words = "a b".split()
np.exp(1.0)
for batch in DataLoader([1, 2]):
    pass
"""


def test_scanner_counts_a_sample_with_aliases():
    pytest.importorskip("torch")
    from tools.call_sites import scan

    assert scan.count_source(SAMPLE) == Counter(
        {
            "torch.nn.Module": 1,  # a class base
            "torch.nn.functional.relu": 1,
            "Tensor.view": 1,
            "torch.optim.SGD": 1,
            "Module.parameters": 1,
            "torch.randn": 1,
            "Tensor.sum": 1,
            "Tensor.backward": 1,
            "Optimizer.zero_grad": 1,
            "Optimizer.step": 1,
            "Module.zero_grad": 1,
            "Tensor.item": 1,
            "torch.utils.data.DataLoader": 1,
        }
    )  # not counted: Net(), self.fc(x), env.step, .append, str.split, np.exp


def test_scanner_keeps_only_the_pytorch_tab_of_d2l():
    pytest.importorskip("torch")
    from tools.call_sites import scan

    chapter = "\n".join(
        [
            "```{.python .input}",
            "%%tab mxnet",
            "x = np.ones(3)",
            "```",
            "",
            "```{.python .input}",
            "%%tab pytorch",
            "import torch",
            "from d2l import torch as d2l",
            "```",
            "",
            "```{.python .input}",
            "%%tab all",
            "if tab.selected('pytorch'):",
            "    x = torch.ones(3)",
            "if tab.selected('mxnet'):",
            "    x = np.ones(3).asnumpy()",
            "d2l.zeros(2)",
            "```",
        ]
    )
    tally = scan.Tally()
    scan.scan_file(tally, "d2l", "chapter_x/a.md", chapter, {"d2l.torch.zeros": "torch.zeros"})
    counts = {name: sum(c.values()) for name, c in tally.sites.items()}
    assert counts == {"torch.ones": 1, "torch.zeros": 1}
    assert tally.units_parsed["d2l"] == 2  # the mxnet cell is not read
