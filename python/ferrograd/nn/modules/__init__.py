"""The module classes of ``ferrograd.nn``."""

from .activation import ReLU, Tanh
from .container import Sequential
from .linear import Linear
from .module import Module

__all__ = ["Module", "Linear", "Sequential", "ReLU", "Tanh"]
