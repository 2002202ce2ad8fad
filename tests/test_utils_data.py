"""torch.utils.data's datasets and DataLoader: the same batches, in the same shuffled order."""

import numpy as np
import pytest
import torch
import torch.utils.data

import mini_autograd as ma
import mini_autograd.utils.data


def _batches(lib, make_loader, epochs=2):
    lib.manual_seed(3)
    x = lib.arange(10.0).reshape(10, 1) * 2
    y = lib.arange(10)
    loader = make_loader(lib, lib.utils.data, x, y)
    out = []
    for _ in range(epochs):
        for batch in loader:
            items = batch if isinstance(batch, (tuple, list)) else (batch,)
            out.append(
                (type(batch).__name__, [(b.tolist(), str(b.dtype).split(".")[-1]) for b in items])
            )
    return out, len(loader)


LOADERS = {
    "in order": lambda lib, data, x, y: data.DataLoader(data.TensorDataset(x, y), batch_size=4),
    "shuffled": lambda lib, data, x, y: data.DataLoader(
        data.TensorDataset(x, y), batch_size=3, shuffle=True
    ),
    "drop_last": lambda lib, data, x, y: data.DataLoader(
        data.TensorDataset(x, y), batch_size=4, shuffle=True, drop_last=True
    ),
    "a generator": lambda lib, data, x, y: data.DataLoader(
        data.TensorDataset(x), batch_size=5, shuffle=True, generator=lib.Generator().manual_seed(7)
    ),
    "a list of numbers": lambda lib, data, x, y: data.DataLoader(list(range(7)), batch_size=3),
    "a list of floats and pairs": lambda lib, data, x, y: data.DataLoader(
        [(0.5 * i, i) for i in range(5)], batch_size=2
    ),
    "with replacement": lambda lib, data, x, y: data.DataLoader(
        data.TensorDataset(y), batch_size=4, sampler=data.RandomSampler(y, replacement=True)
    ),
    "random_split": lambda lib, data, x, y: data.DataLoader(
        data.random_split(data.TensorDataset(y), [0.7, 0.3])[0], batch_size=10
    ),
}


@pytest.mark.parametrize("name", list(LOADERS))
def test_the_loader_gives_torchs_batches(name):
    assert _batches(ma, LOADERS[name]) == _batches(torch, LOADERS[name])


def test_a_custom_dataset_works():
    class Squares(ma.utils.data.Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return ma.tensor([float(i)]), ma.tensor(float(i * i))

    xb, yb = next(iter(ma.utils.data.DataLoader(Squares(), batch_size=5)))
    assert xb.shape == (5, 1) and yb.tolist() == [0.0, 1.0, 4.0, 9.0, 16.0]


def test_mismatched_tensors_are_refused():
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        ma.utils.data.TensorDataset(ma.zeros(3), ma.zeros(4))
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        torch.utils.data.TensorDataset(torch.zeros(3), torch.zeros(4))


def test_gradients_flow_through_batches():
    w = ma.tensor([1.0], requires_grad=True)
    data = ma.utils.data.TensorDataset(ma.tensor(np.arange(4.0).reshape(4, 1)))
    for (xb,) in ma.utils.data.DataLoader(data, batch_size=2):
        (xb * w).sum().backward()
    assert w.grad.tolist() == [6.0]
