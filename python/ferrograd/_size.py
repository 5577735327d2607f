"""``ferrograd.Size``: the shape type, a tuple subclass printed like torch.Size."""

import math


class Size(tuple):
    __slots__ = ()

    def __repr__(self):
        return f"ferrograd.Size({list(self)})"

    __str__ = __repr__

    def __getitem__(self, key):
        item = super().__getitem__(key)
        return Size(item) if isinstance(key, slice) else item

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(other) + tuple(self))

    def numel(self):
        """Number of elements a tensor of this shape holds."""
        return math.prod(self)

    def __reduce__(self):
        return (Size, (tuple(self),))
