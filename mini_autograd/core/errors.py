"""PyTorch's own texts for the errors and warnings of the core, word for word.

They are gathered here so that the core's code stays short, and so that each has its parity
test (tests/test_error_texts.py): the same mistake, made with torch and with mini_autograd,
gives the same text. A text with `{}` fields is a template for str.format.
"""

import inspect
import warnings

from .dtypes import TENSOR_TYPE_NAMES

# --- backward through a freed graph, and tensors changed after they were saved ---------------
FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)
MODIFIED_INPLACE = (
    "one of the variables needed for gradient computation has been modified by an inplace "
    "operation: {tensor} is at version {version}; expected version {expected} instead. Hint: "
    "enable anomaly detection to find the operation that failed to compute its gradient, with "
    "torch.autograd.set_detect_anomaly(True, check_nan=False)."
)


def version_error(tensor, saved_version, producer_name):
    """PyTorch's error for a saved tensor that was modified in place after it was saved."""
    described = (
        f"[torch.{TENSOR_TYPE_NAMES.get(tensor._data.dtype.name, 'Tensor')} {list(tensor.shape)}]"
    )
    if producer_name is not None:
        op = producer_name.replace("Backward0", "").replace("Backward", "")  # as PyTorch names it
        described += f", which is output 0 of {op},"
    return RuntimeError(
        MODIFIED_INPLACE.format(tensor=described, version=tensor._version, expected=saved_version)
    )


SAVED_HOOKS_TWICE = (
    "Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only one "
    "pair of hooks is allowed at a time."
)
PACK_HOOK_MODIFIED_INPUT = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack "
    "hook cannot be modified by in-place operations as this can lead to unexpected side-effects. "
    "Please open an issue if you need to perform in-place operations on the input to a pack hook."
)
UNPACK_HOOK_NOT_A_TENSOR = (
    "Output of saved tensor unpack_hook expected to be a Tensor but got result of type {type}"
)
SAVED_DETACHED_IN_PLACE = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is "
    "not supported, please use out-of-place `.detach()` instead"
)
INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a clone "
    "to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`."
)


NODE_CALL_ARGUMENTS = "expected {expected} arguments, got {got} instead"


def node_call_error(node, grads):
    """A TypeError with NODE_CALL_ARGUMENTS when `node` is called with another number of
    gradients than its apply takes (one per output of its operation; any for apply(*grads))."""
    code = type(node).apply.__code__
    expected = code.co_argcount - 1
    if code.co_flags & inspect.CO_VARARGS or len(grads) == expected:
        return None
    return TypeError(NODE_CALL_ARGUMENTS.format(expected=expected, got=len(grads)))


def register_hooks_arguments(saved, hooks):
    """PyTorch's (pybind11's) TypeError for register_hooks called without two callables."""
    invoked = ", ".join(repr(x) for x in (saved, *hooks))
    return (
        "register_hooks(): incompatible function arguments. The following argument types are "
        "supported:\n    1. (self: mini_autograd.autograd.SavedTensor, arg0: "
        "collections.abc.Callable, arg1: collections.abc.Callable) -> None\n\n"
        f"Invoked with: {invoked}"
    )


SAVED_HOOKS_AFTER_FREE = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values "
    "of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you need to "
    "access saved variables after calling backward."
)

# --- requires_grad, .grad, leaves ------------------------------------------------------------
ONLY_FLOAT_CAN_REQUIRE_GRAD = (
    "Only Tensors of floating point and complex dtype can require gradients"
)
ONLY_FLOAT_REQUIRES_GRAD_ = "only Tensors of floating point dtype can require gradients"
NON_LEAF_REQUIRES_GRAD_ = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
)
NON_LEAF_GRAD_ACCESSED = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information."
)
ONLY_FLOAT_REQUIRES_GRAD_SET = (
    "only Tensors of floating point and complex dtype can require gradients"
)
NON_LEAF_FLAG = "you can only change requires_grad flags of leaf variables."
DATA_NOT_FLOAT = (
    "data set to a tensor that requires gradients must be floating point or complex dtype"
)
GRAD_IS_ITSELF = "can't assign Variable as its own grad"
# PyTorch's names of the element types: its C++ type names, and its ScalarType names.
CPP_TYPE_NAMES = {"float16": "c10::Half", "float32": "float", "float64": "double",
                    "int8": "signed char", "int16": "short int", "int32": "int",
                    "int64": "long int", "uint8": "unsigned char", "bool": "bool"}  # fmt: skip
SCALAR_TYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "int8": "Char",
                      "int16": "Short", "int32": "Int", "int64": "Long", "uint8": "Byte",
                      "bool": "Bool"}  # fmt: skip


def scalar_type_name(tensor):
    """PyTorch's name for the tensor's dtype ('Float', 'Long'...), as its errors print it."""
    return SCALAR_TYPE_NAMES[tensor._data.dtype.name]


def grad_wrong_dtype(grad_dtype, tensor_dtype):
    """PyTorch's error for a .grad of another dtype than the tensor's (numpy dtypes given)."""
    grad, tensor = CPP_TYPE_NAMES[grad_dtype.name], SCALAR_TYPE_NAMES[tensor_dtype.name]
    return (
        f"attempting to assign a gradient with dtype '{grad}' to a tensor with grad_dtype "
        f"'{tensor}'. The gradient must match the tensor's grad_dtype (defaults to the tensor's "
        "dtype). You can set the tensor's grad_dtype attribute with a specific dtype, or None to "
        "allow any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and its "
        "gradient may break downstream systems that assume they match."
    )


GRAD_NOT_A_TENSOR = "assigned grad expected to be a Tensor or None but got grad of type {type}"
GRAD_WRONG_SIZE = (
    "attempting to assign a gradient of size '{grad}' to a tensor of size '{tensor}'. Please "
    "ensure that the gradient and the tensor are the same size"
)
DETACH_VIEW_INPLACE = (
    "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
    "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP "
    "buckets, and hence detach_() cannot be called on these gradients. To fix this error, please "
    "refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
)
RETAIN_GRAD_WITHOUT_GRAD = "can't retain_grad on Tensor that has requires_grad=False"
POST_ACCUMULATE_HOOK_RETURNED = "Tensor post accumulate grad hooks should return None."
POST_ACCUMULATE_ON_NON_LEAF = "post accumulate grad hooks cannot be registered on non-leaf tensors"
HOOK_WITHOUT_GRAD = "cannot register a hook on a tensor that doesn't require gradient"
HOOK_RESULT_COUNT = (
    "hook '{name}' has returned an incorrect number of values (got {got}, but expected {expected})"
)

# --- reading a tensor as Python values -------------------------------------------------------
NUMPY_OF_REQUIRES_GRAD = (
    "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
)
ITEM_OF_MANY = "a Tensor with {count} elements cannot be converted to Scalar"
BOOL_OF_MANY = "Boolean value of Tensor with more than one value is ambiguous"
LEN_OF_0D = "len() of a 0-d tensor"
ITERATE_0D = "iteration over a 0-d tensor"
DIM_OUT_OF_RANGE = (
    "Dimension out of range (expected to be in range of [{low}, {high}], but got {dim})"
)

# --- backward() and autograd.grad(): their arguments ------------------------------------------
OUTPUT_NOT_A_TENSOR = "Expected output to be a torch.Tensor"
GRADIENT_NOT_A_TENSOR = "gradients can be either Tensors or None, but got {type}"
GRADIENT_SHAPE = (
    "Mismatch in shape: grad_output[{i}] has a shape of torch.Size({grad}) and output[{i}] has a "
    "shape of torch.Size({output})."
)
IMPLICIT_GRAD_OF_NON_SCALAR = "grad can be implicitly created only for scalar outputs"
TENSORS_AND_GRADIENTS = "got {tensors} tensors and {gradients} gradients"
OUTPUT_WITHOUT_GRAD = "element {i} of tensors does not require grad and does not have a grad_fn"
INPUTS_NOT_A_DICT = (
    "`inputs` argument to `{api}()` must be a dict, not {type}. Other Mapping types are not "
    "supported."
)
INPUTS_EMPTY = "`inputs` argument to `{api}()` cannot be empty."
INPUT_NOT_A_TENSOR = "all inputs have to be Tensors or GradientEdges, but got {type}"
INPUT_WITHOUT_GRAD = "One of the differentiated Tensors does not require grad"
INPUT_UNUSED = (
    "The differentiated Tensor at index {i} appears to not have been used in the graph. Set "
    "allow_unused=True if this is the desired behavior."
)
MATERIALIZE_WITHOUT_ALLOW_UNUSED = (
    "Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
    "allow_unused=False."
)
MATERIALIZE_GRADIENT_EDGE = (
    "materialize_grads cannot be used when the given input is a GradientEdge"
)
SCALAR_OF_REQUIRES_GRAD = (
    "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
    "Consider using tensor.detach() first."
)
CREATE_GRAPH_WITH_BACKWARD = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter "
    "and its gradient which can cause a memory leak. We recommend using autograd.grad when "
    "creating the graph to avoid this. If you have to use this function, make sure to reset the "
    ".grad fields of your parameters to None after use to break the cycle and avoid the leak."
)
ONLY_INPUTS_DEPRECATED = (
    "only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
    "gradient for other parts of the graph, please use torch.autograd.backward."
)

# --- asking the engine about the backward call running now --------------------------------
NOT_IN_BACKWARD = "_get_should_execute_nodes should only be called during the backward pass"
LEAF_IN_AUTOGRAD_GRAD = (
    "A leaf node was passed to _will_engine_execute_node but we are currently running "
    "autograd.grad(). This is currently not supported."
)


# --- Warnings given once per process, as PyTorch's TORCH_WARN_ONCE ---

_warn_always = [False]
_warned = set()  # the keys of the once-per-process warnings already given


def set_warn_always(b):
    """Give the warnings PyTorch gives once per process (TORCH_WARN_ONCE) every time."""
    _warn_always[0] = bool(b)


def is_warn_always_enabled():
    """True after set_warn_always(True)."""
    return _warn_always[0]


def warn_once(message, stacklevel, key=None):
    """A UserWarning the first time (per `key`, default the message) in a process, as PyTorch's
    TORCH_WARN_ONCE, or every time after set_warn_always(True)."""
    key = message if key is None else key
    if key not in _warned or _warn_always[0]:
        _warned.add(key)
        warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)
