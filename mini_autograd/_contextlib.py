"""Context managers as decorators, as torch.utils._contextlib makes them: a generator function
runs inside a fresh context each time it resumes, not only while it is created."""

import functools
import inspect


def context_decorator(make_context, fn):
    """`fn` run inside `make_context()`: at each call, or at each resume of a generator."""
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
