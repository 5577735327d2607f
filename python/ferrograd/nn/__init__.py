"""A minimal ``ferrograd.nn``: ``Parameter``, ``Module``, ``Linear``, ``Sequential``,
``ReLU``, ``Tanh`` and ``functional``.

``import ferrograd`` imports this package, so only ``Parameter`` loads eagerly; the
module classes and ``functional`` load on first attribute access (keeps import time flat).
"""

from .parameter import Parameter

_LAZY = {
    "Module": "modules",
    "Linear": "modules",
    "Sequential": "modules",
    "ReLU": "modules",
    "Tanh": "modules",
    "modules": None,
    "functional": None,
}

__all__ = ["Parameter", "Module", "Linear", "Sequential", "ReLU", "Tanh", "functional"]


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    submodule = _LAZY[name]
    if submodule is None:
        return importlib.import_module(f".{name}", __name__)
    return getattr(importlib.import_module(f".{submodule}", __name__), name)


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
