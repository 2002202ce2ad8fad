"""Events: how optional features (diagnosis mode, the doctor's checks) watch the core.

Each event is a list of observers. The core tests the list before it calls them, so with no
observer attached an event costs one truth test. Observers keep what they learn in weak
dictionaries keyed by the node or the call, so it lives and dies with the graph.

    node_created(node, output)        an operation recorded `node`, which made tensor `output`
    backward_started(call, roots)     a backward()/autograd.grad() call, and its root edges
    backward_finished(call)           that call returned or raised
    node_releasing(node, call)        `call` is about to free the saved tensors of `node`
    node_released(node, call)         `call` freed the saved tensors of `node`
    freed_tensor_read(node, saved)    a freed saved tensor was read: each observer returns
                                      text to add to PyTorch's error, or None
    tensor_modified(tensor)           an in-place operation (or out=) is about to change `tensor`
"""

node_created = []
backward_started = []
backward_finished = []
node_releasing = []
node_released = []
freed_tensor_read = []
tensor_modified = []


def attach(event, observer):
    """Add `observer` to `event` (one of the lists above), once."""
    if observer not in event:
        event.append(observer)


def detach(event, observer):
    """Take `observer` off `event` (no error if it is not there)."""
    if observer in event:
        event.remove(observer)
