"""TestAutograd, tenth part: tests first left out, ported since (a retains_grad cycle, checkpoint
over many inputs).

test_retain_grad_cycle was left out for torch._C._WeakTensorRef: as in test_custom_function_cycle,
it is weakref.ref here. The three checkpointing tests are @slowTest upstream (skipped in its
default runs); they checkpoint 200 inputs here instead of 2,000 (run time: torch took 8-20 s
each at upstream's count).
"""

import importlib
import weakref
from copy import deepcopy

import pytest

from .harness import Harness


def checkpoint(torch):
    return importlib.import_module(f"{torch.__name__}.utils.checkpoint").checkpoint


class TestAutograd(Harness):
    def test_retain_grad_cycle(self, torch):
        x = torch.ones(5, 5, requires_grad=True)

        def run_test():
            y = x * 2
            y.retain_grad()
            return y / 2, weakref.ref(y)  # upstream: torch._C._WeakTensorRef(y)

        z, ref = run_test()
        self.assertIsNone(ref())  # upstream: ref.expired()
        z.sum().backward()

    def test_checkpointing(self, torch):
        nn = torch.nn
        num_inp = 200  # upstream: 2000
        nz_inp = 10
        nz_bottleneck = 1000

        # a small proxy network for some reasoning done per input
        module = nn.Sequential(
            nn.Linear(nz_inp, nz_bottleneck),
            nn.ReLU(),
            nn.Linear(nz_bottleneck, nz_inp),
        )

        feat_combined = []
        for _ in range(num_inp):
            data_r = torch.empty(1, nz_inp)
            data_r.uniform_()
            data_r.requires_grad = True
            feat_r = checkpoint(torch)(module, data_r, use_reentrant=True)
            feat_combined.append(feat_r)

        # the mean as a proxy for some joint reasoning
        mean_combined = torch.stack(feat_combined).mean()
        mean_combined.backward()

    @pytest.mark.parametrize("input_requires_grad", [True, False])
    def test_checkpointing_without_reentrant(self, torch, input_requires_grad):
        nn = torch.nn
        num_inp = 200  # upstream: 2000
        nz_inp = 10
        nz_bottleneck = 1000

        module = nn.Sequential(
            nn.Linear(nz_inp, nz_bottleneck),
            nn.ReLU(),
            nn.Linear(nz_bottleneck, nz_inp),
        )

        # a module holder: checkpoint without reentrant autograd passes keyword arguments on
        class MyModule(nn.Module):
            def __init__(self, mod):
                super().__init__()
                self.module = mod

            def forward(self, data):
                return self.module(data)

        module = MyModule(mod=module)

        # with and without checkpointing the gradients are equal, whether the inputs require
        # grad or not
        module_copy = deepcopy(module)

        feat_combined = []
        feat_combined_no_checkpoint = []
        for _ in range(num_inp):
            data_r = torch.empty(1, nz_inp)
            data_r.uniform_()
            data_r.requires_grad = input_requires_grad
            data_r_copy = data_r.clone()  # noqa: F841 (upstream's, unused)
            feat_r = checkpoint(torch)(module, data=data_r, use_reentrant=False)
            feat_combined.append(feat_r)
            feat_r_no_checkpoint = module_copy(data_r)
            feat_combined_no_checkpoint.append(feat_r_no_checkpoint)

        mean_combined = torch.stack(feat_combined).mean()
        mean_combined.backward()
        mean_combined_no_checkpoint = torch.stack(feat_combined_no_checkpoint).mean()
        mean_combined_no_checkpoint.backward()

        for checkpoint_param, param in zip(module.parameters(), module_copy.parameters()):
            self.assertEqual(checkpoint_param.grad, param.grad)
