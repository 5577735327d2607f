"""``ferrograd.utils``: activation checkpointing (``ferrograd.utils.checkpoint``)."""

from . import checkpoint

__all__ = ["checkpoint"]
