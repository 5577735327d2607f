"""``graph.allow_mutation_on_saved_tensors``: in-place writes to tensors that were saved
for backward, with backward still seeing the values from before the write.

Inside the context every saved tensor is packed (through saved-tensor hooks) into a
handle that remembers it, and an observer the core calls just before each in-place write
copies the saved tensors that share the written storage. Unpacking gives the copy if
one was made, else the tensor itself.
"""

import contextlib
import threading
import weakref

from .. import _C
from .grad_mode import no_grad

_OUTSIDE = (
    "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
    "in which the graph was originally recorded."  # torch's text, missing space included
)

# Process-global, as in torch: only one such context may be open at a time.
_lock = threading.Lock()
_enabled = False


def _storage_key(t):
    """The address of the storage a tensor views (shared by all its views)."""
    return t.data_ptr() - t.storage_offset() * t.element_size()


class _Handle:
    """What one saved tensor is packed into: a key into the context's tables, alive
    exactly as long as the graph that saved it."""

    __slots__ = ("__weakref__",)


class _AllowMutationOnSavedContext:
    """The state of one ``allow_mutation_on_saved_tensors`` block (cleared on exit)."""

    def __init__(self):
        self.original = weakref.WeakKeyDictionary()  # handle -> the saved tensor
        self.cloned = weakref.WeakKeyDictionary()  # handle -> copy made before a write
        self.uncloned_by_storage = {}  # storage key -> WeakSet of handles not yet copied

    def pack(self, tensor):
        handle = _Handle()
        self.original[handle] = tensor
        key = _storage_key(tensor)
        self.uncloned_by_storage.setdefault(key, weakref.WeakSet()).add(handle)
        return handle

    def unpack(self, handle):
        if not _enabled:
            raise AssertionError(_OUTSIDE)
        if handle in self.cloned:
            return self.cloned[handle]
        if handle not in self.original:
            raise AssertionError(_OUTSIDE)
        return self.original[handle]

    def before_write(self, target):
        handles = self.uncloned_by_storage.pop(_storage_key(target), ())
        copies = {}  # one copy per saved tensor, however often it was saved
        with no_grad():
            for handle in list(handles):
                saved = self.original.pop(handle)
                if id(saved) not in copies:
                    copies[id(saved)] = saved.clone()
                self.cloned[handle] = copies[id(saved)]

    def clear(self):
        self.original.clear()
        self.cloned.clear()
        self.uncloned_by_storage.clear()


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Allow in-place writes to tensors saved for backward inside this block: the write
    first copies the saved value, which backward then uses. Forward and backward must
    both run inside the block; blocks cannot be nested."""
    global _enabled
    with _lock:
        if _enabled:
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        _enabled = True
    ctx = _AllowMutationOnSavedContext()
    try:
        _C._push_saved_tensors_hooks(ctx.pack, ctx.unpack)
        _C._set_inplace_observer(ctx.before_write)
        try:
            yield ctx
        finally:
            _C._set_inplace_observer(None)
            _C._pop_saved_tensors_hooks()
    finally:
        ctx.clear()
        _enabled = False
