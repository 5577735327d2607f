"""How many ``ferrograd.func`` transforms are running (process-wide counters).

``autograd.backward`` reads ``depth`` (through ``sys.modules``, so that it never imports
this package) to refuse ``backward()`` inside a transform. The reverse transforms read
the two others to decide whether their results must stay differentiable.
"""

depth = 0  # every transform (grad, vjp, jacrev, jvp, vmap...) running now
reverse_depth = 0  # grad / vjp / jacrev running now
forward_depth = 0  # jvp / jacfwd running now
# vmaps run for autograd's batched paths (torch's legacy vmap): counted in `depth` by the
# vmap they run on, but not torch.func transforms for custom Functions' checks.
legacy_depth = 0


def user_transforms():
    """How many torch.func transforms the user is inside (not autograd's own vmaps)."""
    return depth - legacy_depth


class legacy:
    """Marks autograd's own use of vmap (see ``legacy_depth``)."""

    def __enter__(self):
        global legacy_depth
        legacy_depth += 1
        return self

    def __exit__(self, *exc):
        global legacy_depth
        legacy_depth -= 1


class running:
    """Counts one transform (``reverse`` / ``forward`` for its kind) while inside."""

    __slots__ = ("kind",)

    def __init__(self, kind=None):
        self.kind = kind

    def __enter__(self):
        global depth, reverse_depth, forward_depth
        depth += 1
        if self.kind == "reverse":
            reverse_depth += 1
        elif self.kind == "forward":
            forward_depth += 1
        return self

    def __exit__(self, *exc):
        global depth, reverse_depth, forward_depth
        depth -= 1
        if self.kind == "reverse":
            reverse_depth -= 1
        elif self.kind == "forward":
            forward_depth -= 1


def keeps_graph(tensors):
    """Whether a transform's results must stay differentiable for its caller (decided
    when it starts): grad mode is on and something outside can differentiate them (an
    input requiring grad, or an enclosing transform)."""
    from .. import _C

    return _C.is_grad_enabled() and (
        reverse_depth > 0 or forward_depth > 0 or any(t.requires_grad for t in tensors)
    )
