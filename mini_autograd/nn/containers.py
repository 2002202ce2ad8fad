"""Containers, as in torch.nn: Sequential, ModuleList, ModuleDict."""

import operator
from collections import OrderedDict

from .module import Module, _addindent


class _ModulesInOrder(Module):
    """What Sequential and ModuleList share: modules kept in order and reached by position."""

    def _key(self, index):
        """The name of the module at position `index` (negative counts from the end)."""
        size = len(self)
        index = operator.index(index)
        if not -size <= index < size:
            raise IndexError(f"index {index} is out of range")
        return list(self._modules)[index % size]

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self._of_items(list(self._modules.items())[index])
        return self._modules[self._key(index)]

    def __setitem__(self, index, module):
        setattr(self, self._key(index), module)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        """Add a module at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self


class Sequential(_ModulesInOrder):
    """Modules applied one after another: Sequential(a, b, c)(x) = c(b(a(x)))."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for index, module in enumerate(args):
                self.add_module(str(index), module)

    def _of_items(self, items):
        return type(self)(OrderedDict(items))

    def forward(self, input):
        """Each module's output is the next one's input."""
        for module in self:
            input = module(input)
        return input


class ModuleList(_ModulesInOrder):
    """A list of modules whose parameters are registered (for layers built in a loop)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _of_items(self, items):
        return type(self)([module for _, module in items])

    def extend(self, modules):
        """Add modules at the end; returns self."""
        for module in modules:
            self.append(module)
        return self

    def __repr__(self):
        # PyTorch prints a run of identical modules once: "(0-2): 3 x Linear(...)".
        runs = []  # [first index, last index, repr]
        for index, module in enumerate(self):
            text = repr(module)
            if runs and runs[-1][2] == text:
                runs[-1][1] = index
            else:
                runs.append([index, index, text])
        if not runs:
            return f"{self._get_name()}()"
        lines = [
            _addindent(f"({a}): {text}" if a == b else f"({a}-{b}): {b - a + 1} x {text}", 2)
            for a, b, text in runs
        ]
        return f"{self._get_name()}(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of modules whose parameters are registered, in insertion order."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        """The names."""
        return self._modules.keys()

    def items(self):
        """(name, module) pairs."""
        return self._modules.items()

    def values(self):
        """The modules."""
        return self._modules.values()

    def update(self, modules):
        """Add (name, module) pairs from a dict or an iterable of pairs."""
        for name, module in modules.items() if hasattr(modules, "items") else modules:
            self[name] = module
