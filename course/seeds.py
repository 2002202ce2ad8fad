"""The seeds' three programs, from the blog post the course starts from, written once for either
library (`lib`: torch or mini_autograd) and any device.

Each fails as the post shows, with "Trying to backward through the graph a second time" at its
second backward; `fix` names one of its mended forms (FIXES lists them). The LSTM's `fix` may
also be "retain_graph", the blind one, which fails with the in-place version error instead. Random numbers come from
`lib.manual_seed(0)`, which gives both libraries the same numbers on the CPU. The chapters write
the programs out where they teach them; `make cuda-check` and the tests run them from here.
"""

from __future__ import annotations

import math

FIXES = {
    "two_losses": ("sum the losses", "retain_graph on the first"),
    "target_from_input": ("input without grad", "target under no_grad"),
    "lstm_carried": ("detach", "re-initialise"),
}


def two_losses(lib, fix=None, device="cpu") -> list:
    """Seed 1: two losses on one graph, each with its own backward; returns x.grad as a list."""
    lib.manual_seed(0)
    x = lib.randn(1, 4, device=device, requires_grad=True)
    z = x**2 * 4
    loss1, loss2 = z.mean(), z.sum()
    if fix == "sum the losses":
        (loss1 + loss2).backward()
    else:
        loss1.backward(retain_graph=fix == "retain_graph on the first")
        loss2.backward()
    return x.grad.tolist()


def target_from_input(lib, fix=None, device="cpu", epochs=3) -> list:
    """Seed 2: the target is computed, before the loop, from an input that requires grad, and
    the loop trains a line on it; returns the loss of each epoch."""
    lib.manual_seed(0)
    x = lib.randn(100, 1, device=device, requires_grad=fix != "input without grad")
    noise = lib.randn(100, 1, device=device)
    with lib.set_grad_enabled(fix != "target under no_grad"):
        y = 1 + 2 * x + 0.3 * noise
    return fit_line(lib, lib.nn.Linear(1, 1).to(device), x[:70], y[:70], epochs)


def fit_line(lib, model, x_train, y_train, epochs, lr=0.1) -> list:
    """The regression seed's training loop: mse_loss, zero_grad, backward and an SGD step per
    epoch; returns the loss of each epoch."""
    optimizer = lib.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(epochs):
        loss = lib.nn.functional.mse_loss(model(x_train), y_train)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def make_lstmpred(lib):
    """The seed's model class on `lib`: it keeps its LSTM state in self.hidden, from one call
    to the next."""

    class LSTMpred(lib.nn.Module):
        def __init__(self, input_size, hidden_dim, device="cpu"):
            super().__init__()
            self.hidden_dim, self.device = hidden_dim, device
            self.lstm = lib.nn.LSTM(input_size, hidden_dim).to(device)
            self.hidden2out = lib.nn.Linear(hidden_dim, 1).to(device)
            self.hidden = self.init_hidden()

        def init_hidden(self):
            """Zeros for (h, c), as the seed makes them (requires_grad=True is not the bug)."""
            shape = (1, 1, self.hidden_dim)
            return tuple(lib.zeros(shape, device=self.device, requires_grad=True) for _ in "hc")

        def forward(self, seq):
            lstm_out, self.hidden = self.lstm(seq.view(len(seq), 1, -1), self.hidden)
            return self.hidden2out(lstm_out.view(len(seq), -1))

    return LSTMpred


def lstm_carried(lib, fix=None, device="cpu", epochs=3) -> list:
    """Seed 3: LSTMpred learns a sine wave with its hidden state carried from one epoch to the
    next; returns the loss of each epoch."""
    lib.manual_seed(0)
    model = make_lstmpred(lib)(1, 4, device)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
    series = lib.sin(lib.linspace(0, 4 * math.pi, 11, device=device))
    seq, target = series[:10], series[1:, None]
    losses = []
    for _ in range(epochs):
        if fix == "re-initialise":
            model.hidden = model.init_hidden()
        elif fix == "detach":
            model.hidden = tuple(h.detach() for h in model.hidden)
        optimizer.zero_grad()
        loss = lib.nn.functional.mse_loss(model(seq), target)
        loss.backward(retain_graph=fix == "retain_graph")
        optimizer.step()
        losses.append(loss.item())
    return losses
