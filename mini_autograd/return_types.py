"""The tuples with named fields that some operations return, as `torch.return_types`:
`x.max(dim)` gives `max(values, indices)`, printed the way PyTorch prints it."""

from collections import namedtuple


def _result_type(name, fields):
    """A tuple type with named `fields` that prints as torch.return_types.`name` does."""

    def __repr__(self):
        items = ",\n".join(f"{field}={value!r}" for field, value in zip(self._fields, self))
        return f"mini_autograd.return_types.{name}(\n{items})"

    attributes = {"__slots__": (), "__repr__": __repr__, "__module__": __name__}
    return type(name, (namedtuple(name, fields),), attributes)


max = _result_type("max", ["values", "indices"])
min = _result_type("min", ["values", "indices"])
sort = _result_type("sort", ["values", "indices"])
topk = _result_type("topk", ["values", "indices"])
kthvalue = _result_type("kthvalue", ["values", "indices"])
median = _result_type("median", ["values", "indices"])
nanmedian = _result_type("nanmedian", ["values", "indices"])
histogram = _result_type("histogram", ["hist", "bin_edges"])
