"""A minimal ``ferrograd.nn``: only ``Parameter`` for now."""

from .parameter import Parameter

__all__ = ["Parameter"]
