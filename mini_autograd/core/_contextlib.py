"""Context managers as decorators, as torch.utils._contextlib makes them: a generator function
runs inside a fresh context each time it resumes, not only while it is created."""

import functools
import inspect
import warnings

CLASS_DECORATED = (
    "Decorating classes is deprecated and will be disabled in future versions. You should only "
    "decorate functions or methods. To preserve the current behavior of class decoration, you can "
    "directly decorate the `__init__` method and nothing else."
)


def context_decorator(make_context, fn):
    """`fn` run inside `make_context()`: at each call, or at each resume of a generator."""
    if inspect.isclass(fn):  # PyTorch still allows it, with a warning: the class's constructor
        warnings.warn(CLASS_DECORATED, FutureWarning, stacklevel=3)
        fn = functools.partial(fn)
    if inspect.isgeneratorfunction(fn):
        return _wrap_generator(make_context, fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with make_context():
            return fn(*args, **kwargs)

    return wrapper


def _wrap_generator(make_context, fn):
    """`fn`, a generator function, run inside a fresh context each time it resumes (as torch)."""

    @functools.wraps(fn)
    def generator(*args, **kwargs):
        inner = fn(*args, **kwargs)
        try:
            with make_context():
                response = inner.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with make_context():
                        inner.close()
                    raise
                except BaseException as error:
                    with make_context():
                        response = inner.throw(error)
                else:
                    with make_context():
                        response = inner.send(request)
        except StopIteration as stop:
            return stop.value

    return generator
