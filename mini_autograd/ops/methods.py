"""The Tensor methods and operators, mapped to the ops modules that implement them."""

from . import arithmetic as ar
from . import compare, inplace, linalg, shape, softmax
from . import elementwise as el
from . import reductions as red


def install(Tensor):
    """Give Tensor its operators and methods; each lives in the ops module that explains it."""

    methods = {
        "__add__": ar.add,
        "__radd__": ar.add,
        "add": ar.add,
        "__sub__": ar.sub,
        "__rsub__": ar.rsub,
        "sub": ar.sub,
        "__mul__": ar.mul,
        "__rmul__": ar.mul,
        "mul": ar.mul,
        "__truediv__": ar.div,
        "__rtruediv__": ar.rdiv,
        "div": ar.div,
        "__pow__": ar.pow,
        "__rpow__": ar.rpow,
        "pow": ar.pow,
        "__neg__": ar.neg,
        "neg": ar.neg,
        "reciprocal": ar.reciprocal,
        "__matmul__": linalg.matmul,
        "matmul": linalg.matmul,
        "mm": linalg.mm,
        "mv": linalg.mv,
        "dot": linalg.dot,
        "bmm": linalg.bmm,
        "exp": el.exp,
        "log": el.log,
        "tanh": el.tanh,
        "sigmoid": el.sigmoid,
        "relu": el.relu,
        "sqrt": el.sqrt,
        "abs": el.abs,
        "__abs__": el.abs,
        "clone": el.clone,
        "contiguous": el.contiguous,
        "is_contiguous": el.is_contiguous,
        "sum": red.sum,
        "mean": red.mean,
        "max": red.max,
        "norm": red.norm,
        "reshape": shape.reshape,
        "view": shape.view,
        "flatten": shape.flatten,
        "transpose": shape.transpose,
        "t": shape.t,
        "permute": shape.permute,
        "unsqueeze": shape.unsqueeze,
        "squeeze": shape.squeeze,
        "expand": shape.expand,
        "chunk": shape.chunk,
        "__getitem__": shape.getitem,
        "softmax": softmax.softmax,
        "log_softmax": softmax.log_softmax,
        "add_": inplace.add_,
        "sub_": inplace.sub_,
        "mul_": inplace.mul_,
        "div_": inplace.div_,
        "__iadd__": inplace.add_,
        "__isub__": inplace.sub_,
        "__imul__": inplace.mul_,
        "zero_": inplace.zero_,
        "fill_": inplace.fill_,
        "copy_": inplace.copy_,
        "__eq__": compare.eq,
        "__ne__": compare.ne,
        "__lt__": compare.lt,
        "__le__": compare.le,
        "__gt__": compare.gt,
        "__ge__": compare.ge,
    }
    for name, fn in methods.items():
        setattr(Tensor, name, fn)
    Tensor.T = property(shape.T, doc="All dimensions reversed (a view).")
    Tensor.mT = property(
        lambda self: shape.transpose(self, -2, -1), doc="The last two dims swapped."
    )
