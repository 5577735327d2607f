"""``torch.func.functional_call`` and ``torch.func.stack_module_state`` (spec func.md
§9-§10).

``functional_call`` runs a module with some of its parameters/buffers replaced by given
tensors, addressed by their dotted ``named_parameters``/``named_buffers`` names. The
replacement is a plain store into the owning submodule's ``_parameters``/``_buffers``
slot (or a plain attribute for a name the module does not have), so the swapped-in
values are not wrapped as ``Parameter``s and autograd sees exactly the given tensors
(which is what lets ``grad`` differentiate with respect to them). The originals are put
back in a ``finally``, also when the forward raises.
"""

from collections.abc import Sequence

from .. import _C
from ..autograd.grad_mode import no_grad

# Marks "the module had no attribute of this name" in the list of originals.
_MISSING = object()


def functional_call(
    module,
    parameter_and_buffer_dicts,
    args=None,
    kwargs=None,
    *,
    tie_weights=True,
    strict=False,
):
    values = _merge_dicts(parameter_and_buffer_dicts)
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    swap_in = _untie(module, values) if tie_weights else values
    if strict:
        _check_keys(module, swap_in)
    slots = _Slots(module)
    originals = slots.swap_all(swap_in)
    try:
        return module(*args, **kwargs)
    finally:
        # Whatever sits in the slots now (a forward may have reassigned a buffer) goes
        # back into the caller's dict, as torch does.
        final = slots.swap_all(originals)
        for name in values:
            if name in final:
                values[name] = final[name]


def _merge_dicts(dicts):
    if isinstance(dicts, dict):
        return dicts
    if not isinstance(dicts, Sequence):
        raise ValueError(
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, "
            f"but got {type(dicts)}"
        )
    if not all(isinstance(d, dict) for d in dicts):
        raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
    counts = {}
    for d in dicts:
        for key in d:
            counts[key] = counts.get(key, 0) + 1
    repeated = [key for key, n in counts.items() if n > 1]
    if repeated:
        raise ValueError(
            f"{repeated} appeared in multiple dictionaries; behavior of functional call "
            "is ambiguous"
        )
    return {key: value for d in dicts for key, value in d.items()}


def _all_named_tensors(module):
    # Every name a parameter or buffer is reachable under, tied names included.
    yield from module.named_parameters(remove_duplicate=False)
    yield from module.named_buffers(remove_duplicate=False)


def _untie(module, values):
    """Extend ``values`` so every name tied to a given name gets the same value.

    A tensor the module reaches under several names (``b.weight = a.weight``) must stay
    one tensor during the call. Different values for two names of one tied tensor are
    an error; the same value under several of them is fine.
    """
    names_of = {}
    for name, tensor in _all_named_tensors(module):
        names_of.setdefault(id(tensor), []).append(name)
    group_of = {}
    for names in names_of.values():
        if len(names) > 1:
            for name in names:
                group_of[name] = names
    untied = dict(values)
    for given in values:
        group = group_of.get(given)
        if group is None:
            continue
        distinct = {id(values[name]) for name in group if name in values}
        if len(distinct) > 1:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(group)}, which are "
                "tied. Consider using tie_weights=False"
            )
        for name in group:
            untied[name] = values[given]
    return untied


def _check_keys(module, values):
    valid = {name for name, _ in _all_named_tensors(module)}
    given = set(values)
    messages = []
    unexpected = sorted(given - valid)
    missing = sorted(valid - given)
    if unexpected:
        messages.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        messages.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if messages:
        raise RuntimeError(
            f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(messages)
        )


class _Slots:
    """Reads and replaces the tensors of one module tree by dotted name."""

    def __init__(self, root):
        self.root = root
        self.submodules = {"": root}

    def submodule(self, path):
        # Resolved one dot at a time (no recursion); prefixes are cached.
        from ..nn.modules.module import Module

        if path in self.submodules:
            return self.submodules[path]
        parts = path.split(".")
        module = self.root
        for i, attr in enumerate(parts):
            prefix = ".".join(parts[: i + 1])
            cached = self.submodules.get(prefix)
            if cached is not None:
                module = cached
                continue
            try:
                child = getattr(module, attr)
            except AttributeError as ex:
                raise AttributeError(f"{module._get_name()} has no attribute `{attr}`") from ex
            if not isinstance(child, Module):
                raise TypeError(
                    f"submodule `{prefix}`: {child} is not an instance of torch.nn.Module"
                )
            self.submodules[prefix] = module = child
        return module

    def swap(self, name, value):
        """Put ``value`` (a tensor, None, or _MISSING to remove) under ``name``; return
        what was there (_MISSING when nothing was)."""
        if value is not _MISSING and value is not None and not isinstance(value, _C.Tensor):
            raise TypeError(f"{value} is not an instance of torch.Tensor")
        prefix, _, attr = name.rpartition(".")
        owner = self.submodule(prefix)
        for store in (owner._parameters, owner._buffers):
            if attr in store:
                old = store[attr]
                if value is _MISSING:
                    del store[attr]
                else:
                    store[attr] = value
                return old
        old = getattr(owner, attr, _MISSING)
        if old is not _MISSING and old is not None and not isinstance(old, _C.Tensor):
            raise TypeError(f"attribute `{attr}`: {old} is not an instance of torch.Tensor")
        if value is not _MISSING:
            setattr(owner, attr, value)
        elif old is not _MISSING:
            delattr(owner, attr)
        return old

    def swap_all(self, values):
        """Swap every entry in; on a failure put back what was swapped and re-raise."""
        previous = {}
        try:
            for name, value in values.items():
                previous[name] = self.swap(name, value)
        except BaseException:
            for name, old in previous.items():
                self.swap(name, old)
            raise
        return previous


def stack_module_state(models):
    """Stack the parameters and buffers of same-class modules along a new dim 0.

    Returns ``(params, buffers)`` dicts keyed by ``named_parameters``/``named_buffers``
    names. Each stacked tensor is a new leaf, requiring grad when the stacked tensors
    did (so it can be handed to an optimizer), for ``vmap`` ensembling.
    """
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({bool(m.training) for m in models}) > 1:
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    cls = type(models[0])
    if any(type(m) is not cls for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = _stack_named([dict(m.named_parameters()) for m in models])
    buffers = _stack_named([dict(m.named_buffers()) for m in models])
    return params, buffers


def _stack_named(per_model):
    return {name: _stacked_leaf([d[name] for d in per_model], name) for name in per_model[0]}


def _stacked_leaf(tensors, name):
    flags = {t.requires_grad for t in tensors}
    if len(flags) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    first = tensors[0]
    for i, t in enumerate(tensors):
        if t.shape != first.shape:
            raise RuntimeError(
                "stack expects each tensor to be equal size, but got "
                f"{list(first.shape)} at entry 0 and {list(t.shape)} at entry {i}"
            )
    dtype = first.dtype
    for t in tensors[1:]:
        dtype = _C.promote_types(dtype, t.dtype)
    # ferrograd has no stack op yet: fill a fresh tensor slice by slice. The result has
    # no history either way (torch detaches it too), so no_grad loses nothing.
    with no_grad():
        result = _C.zeros((len(tensors), *first.shape), dtype=dtype)
        for i, t in enumerate(tensors):
            result.select(0, i).copy_(t)
    if flags == {True}:
        result.requires_grad_()
    return result
