"""Grad-mode context managers: ``no_grad``, ``enable_grad``, ``set_grad_enabled``,
``inference_mode`` and ``set_multithreading_enabled`` (spec autograd.md §7).

Every flag lives in thread-local state on the Rust side (``ferrograd._C``); the classes
here only save the previous value on entry and put it back on exit, also when an
exception propagates. Each class works as a context manager and as a decorator; the
decorator form wraps generator functions so that the mode is applied each time the
generator resumes and the caller's mode is restored at each ``yield``.
"""

import functools
import inspect
import sys
import threading
import warnings

from .. import _C

__all__ = [
    "enable_grad",
    "inference_mode",
    "no_grad",
    "set_grad_enabled",
    "set_multithreading_enabled",
]

_CLASS_DECORATION_WARNING = (
    "Decorating classes is deprecated and will be disabled in future versions. "
    "You should only decorate functions or methods. To preserve the current behavior "
    "of class decoration, you can directly decorate the `__init__` method and nothing "
    "else."
)


def _wrap_generator(make_ctx, gen_func):
    """Decorate a generator function: run every resumption of the generator (first
    ``next``, ``send``, ``throw`` and ``close``) inside a fresh context from
    ``make_ctx()``, so the mode never leaks into the consumer between yields."""

    @functools.wraps(gen_func)
    def generator_context(*args, **kwargs):
        gen = gen_func(*args, **kwargs)
        try:
            with make_ctx():
                value = gen.send(None)
            while True:
                try:
                    sent = yield value
                except GeneratorExit:
                    with make_ctx():
                        gen.close()
                    raise
                except BaseException:  # noqa: BLE001 - forwarded into the generator
                    with make_ctx():
                        value = gen.throw(*sys.exc_info())
                else:
                    with make_ctx():
                        value = gen.send(sent)
        except StopIteration as stop:
            return stop.value

    return generator_context


def _context_decorator(make_ctx, func):
    """Wrap ``func`` so that each call runs inside a new context from ``make_ctx()``."""
    if inspect.isgeneratorfunction(func):
        return _wrap_generator(make_ctx, func)

    @functools.wraps(func)
    def decorate_context(*args, **kwargs):
        with make_ctx():
            return func(*args, **kwargs)

    return decorate_context


class _DecoratorContextManager:
    """Base class: a context manager that can also decorate functions.

    As a decorator, every call of the wrapped function uses a fresh copy made by
    ``clone()``, so one decorator instance is safe for recursion and threads.
    """

    def __call__(self, orig_func):
        if inspect.isclass(orig_func):
            warnings.warn(_CLASS_DECORATION_WARNING, FutureWarning, stacklevel=2)
            cls = orig_func

            def func(*args, **kwargs):
                return cls(*args, **kwargs)

        else:
            func = orig_func
        return _context_decorator(self.clone, func)

    def __enter__(self):
        raise NotImplementedError

    def __exit__(self, exc_type, exc_value, traceback):
        raise NotImplementedError

    def clone(self):
        """Return a fresh, equivalent context manager (subclasses taking
        constructor arguments override this)."""
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """A ``_DecoratorContextManager`` that can decorate without parentheses:
    ``@no_grad`` is the same as ``@no_grad()``."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Context manager / decorator that disables gradient recording.

    Results computed inside do not require grad, even when their inputs do; factory
    functions called with ``requires_grad=True`` are not affected. Thread-local.
    Forward-mode AD is not affected either.
    """

    def __init__(self, orig_func=None):
        self.prev = False

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, exc_type, exc_value, traceback):
        _C._set_grad_enabled(self.prev)


class enable_grad(_NoParamDecoratorContextManager):
    """Context manager / decorator that enables gradient recording, also inside an
    enclosing ``no_grad`` or ``set_grad_enabled(False)``. Thread-local."""

    def __init__(self, orig_func=None):
        self.prev = False

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)

    def __exit__(self, exc_type, exc_value, traceback):
        _C._set_grad_enabled(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode to ``mode``.

    The mode is applied at construction, so ``set_grad_enabled(False)`` works as a plain
    function call. As a context manager it restores the previous mode on exit; as a
    decorator it restores the previous mode at decoration time and applies ``mode``
    only while the decorated function runs. Thread-local.
    """

    def __init__(self, mode):
        self.prev = _C.is_grad_enabled()
        self.mode = mode
        _C._set_grad_enabled(mode)

    def __call__(self, orig_func):
        _C._set_grad_enabled(self.prev)
        return super().__call__(orig_func)

    def __enter__(self):
        _C._set_grad_enabled(self.mode)

    def __exit__(self, exc_type, exc_value, traceback):
        _C._set_grad_enabled(self.prev)

    def __repr__(self):
        # Users compare against torch's text, so the module path is torch's.
        return f"ferrograd.autograd.grad_mode.set_grad_enabled(mode={self.mode})"

    def clone(self):
        """Return a fresh ``set_grad_enabled`` with the same mode."""
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Context manager / decorator for inference mode.

    ``inference_mode(True)`` turns inference mode on and grad mode off;
    ``inference_mode(False)`` turns inference mode off and grad mode on. Leaving the
    block restores both previous values. Usable as ``@inference_mode``,
    ``@inference_mode()`` and ``@inference_mode(mode=False)``. Thread-local.
    """

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        # Used bare as a decorator: ``mode`` is the function to wrap.
        return cls()(mode)

    def __init__(self, mode=True):
        self.mode = mode
        self._saved = []

    def __enter__(self):
        # A stack, so that re-entering the same instance (nested ``with``) works.
        self._saved.append((_C.is_inference_mode_enabled(), _C.is_grad_enabled()))
        _C._set_inference_mode(self.mode)
        _C._set_grad_enabled(not self.mode)

    def __exit__(self, exc_type, exc_value, traceback):
        prev_inference, prev_grad = self._saved.pop()
        _C._set_inference_mode(prev_inference)
        _C._set_grad_enabled(prev_grad)

    def clone(self):
        """Return a fresh ``inference_mode`` with the same mode."""
        return self.__class__(self.mode)


class set_multithreading_enabled(_DecoratorContextManager):
    """Turn multithreaded backward on or off.

    Like ``set_grad_enabled``, the mode is applied at construction (plain-call usage),
    the previous value is restored when a ``with`` block exits, and as a decorator it
    applies ``mode`` only while the decorated function runs. Thread-local.
    """

    def __init__(self, mode):
        self.prev = _C.is_multithreading_enabled()
        self.mode = mode
        _C._set_multithreading_enabled(mode)

    def __call__(self, orig_func):
        _C._set_multithreading_enabled(self.prev)
        return super().__call__(orig_func)

    def __enter__(self):
        _C._set_multithreading_enabled(self.mode)

    def __exit__(self, exc_type, exc_value, traceback):
        _C._set_multithreading_enabled(self.prev)

    def clone(self):
        """Return a fresh ``set_multithreading_enabled`` with the same mode."""
        return self.__class__(self.mode)


# View replay (regenerating a mutated view by replaying its chain of views) is not
# implemented: a view's grad_fn is always rebuilt the one way ferrograd knows. The flag
# is kept per thread, as torch keeps it, so code that sets and reads it behaves the same.
_view_replay = threading.local()


def _is_view_replay_enabled():
    return getattr(_view_replay, "enabled", False)


def _set_view_replay_enabled(mode):
    _view_replay.enabled = bool(mode)


# Where torch keeps them.
_C._is_view_replay_enabled = _is_view_replay_enabled
_C._set_view_replay_enabled = _set_view_replay_enabled


class _force_original_view_tracking(_DecoratorContextManager):  # noqa: N801 - torch's name
    """Set whether autograd always uses view replay (thread-local). Like
    ``set_grad_enabled``, the mode applies at construction, the previous value is back
    when a ``with`` block exits, and as a decorator it applies only during each call."""

    def __init__(self, mode):
        self.prev = _is_view_replay_enabled()
        self.mode = mode
        _set_view_replay_enabled(mode)

    def __call__(self, orig_func):
        _set_view_replay_enabled(self.prev)
        return super().__call__(orig_func)

    def __enter__(self):
        _set_view_replay_enabled(self.mode)

    def __exit__(self, exc_type, exc_value, traceback):
        _set_view_replay_enabled(self.prev)

    def clone(self):
        """Return a fresh ``_force_original_view_tracking`` with the same mode."""
        return self.__class__(self.mode)
