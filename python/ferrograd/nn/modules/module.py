"""``nn.Module``: the container that owns parameters, buffers and submodules.

Attribute assignment routes values into three dicts (``_parameters``, ``_buffers``,
``_modules``), as torch does, so that ``named_parameters``/``state_dict`` can find them
by name and ``torch.func.functional_call`` can swap them.

Note: no recursion over the module tree. Module trees are user-sized (a generated
``Sequential`` nested a few thousand deep is legal), so every walk below uses an explicit
stack. The visiting orders are torch's: pre-order for ``named_modules``/``state_dict``
and ``__repr__``'s lines, post-order for ``apply``.
"""

from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ... import _C
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter


def _typename(obj):
    # torch.typename: a tensor names its tensor type, anything else its class.
    if isinstance(obj, _C.Tensor):
        return obj.type()
    cls = type(obj)
    module = cls.__module__
    if module in ("builtins", "__builtin__", None):
        return cls.__qualname__
    return f"{module}.{cls.__qualname__}"


def _add_indent(text, spaces):
    # Indent every line but the first (the first follows "(name): " on its parent's line).
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    pad = " " * spaces
    return lines[0] + "\n" + "\n".join(pad + line for line in lines[1:])


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _post_order(root, children_of):
    """Yield ``root``'s subtree children-first, each node after all of ``children_of(node)``.

    A module reachable from itself (a cycle) raises instead of looping forever.
    """
    stack = [(root, iter(children_of(root)))]
    on_path = {id(root)}
    while stack:
        node, pending = stack[-1]
        child = next(pending, None)
        if child is None:
            stack.pop()
            on_path.discard(id(node))
            yield node
            continue
        if id(child) in on_path:
            raise RecursionError(f"module {child._get_name()} contains itself")
        on_path.add(id(child))
        stack.append((child, iter(children_of(child))))


class Module:
    """Base class for all neural network modules (``torch.nn.Module``)."""

    training: bool

    def __init__(self):
        # object.__setattr__: the routing in our __setattr__ needs these dicts first.
        set_ = object.__setattr__
        set_(self, "training", True)
        set_(self, "_parameters", {})
        set_(self, "_buffers", {})
        set_(self, "_non_persistent_buffers_set", set())
        set_(self, "_modules", {})

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def _get_name(self):
        return self.__class__.__name__

    # -- registration -------------------------------------------------------------------

    def _check_new_name(self, kind, name, existing):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in existing:
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_new_name("parameter", name, self._parameters)
        if param is not None:
            if not isinstance(param, Parameter):
                raise TypeError(
                    f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                    "(torch.nn.Parameter or None required)"
                )
            if param.grad_fn is not None:
                raise ValueError(
                    f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                    f"parameters must be created explicitly. To express '{name}' as a "
                    "function of another Tensor, compute the value in the forward() method."
                )
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_new_name("buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, _C.Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                "(torch Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        module = self
        if target == "":
            return module
        for item in target.split("."):
            if not hasattr(module, item):
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    # -- attribute routing --------------------------------------------------------------

    def __getattr__(self, name):
        # Only reached when normal lookup fails: the three dicts are searched here.
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            entries = d.get(store)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _forget(self, name, *stores):
        for store in stores:
            store.pop(name, None)
        self.__dict__.pop(name, None)

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, self._buffers, self._modules)
            self._non_persistent_buffers_set.discard(name)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, self._parameters, self._buffers)
            self._non_persistent_buffers_set.discard(name)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as child module '{name}' "
                    "(torch.nn.Module or None expected)"
                )
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, _C.Tensor):
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as buffer '{name}' "
                    "(torch.nn.Buffer, torch.Tensor or None expected)"
                )
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    # -- iteration ----------------------------------------------------------------------

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        # Pre-order: children pushed in reverse so the first child is visited first.
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if module in memo:
                continue
            if remove_duplicate:
                memo.add(module)
            yield name, module
            sep = "." if name else ""
            for child_name, child in reversed(module._modules.items()):
                if child is not None:
                    stack.append((name + sep + child_name, child))

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def _named_members(self, store, prefix, recurse, remove_duplicate):
        if recurse:
            owners = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
        else:
            owners = [(prefix, self)]
        seen = set()
        for owner_prefix, owner in owners:
            sep = "." if owner_prefix else ""
            for name, value in getattr(owner, store).items():
                if value is None or value in seen:
                    continue
                if remove_duplicate:
                    seen.add(value)
                yield owner_prefix + sep + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def _persistent_state(self):
        # A module's own entries as state_dict sees them: set parameters, then
        # persistent buffers.
        for name, param in self._parameters.items():
            if param is not None:
                yield name, param
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                yield name, buf

    # -- modes and gradients ------------------------------------------------------------

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        # Set directly on every submodule (not child.train(mode)): see the note on
        # recursion at the top of this file.
        for module in self.modules():
            module.training = mode
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for param in self.parameters():
            grad = param.grad
            if grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                if grad.grad_fn is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                grad.zero_()

    def apply(self, fn):
        for module in _post_order(self, lambda m: list(m.children())):
            fn(module)
        return self

    def to(self, *args, **kwargs):
        dtype = _parse_to_dtype(args, kwargs)
        if dtype is None:
            return self
        if not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got "
                f"desired dtype={dtype}"
            )

        def convert(t):
            return t.to(dtype) if t.is_floating_point() or t.is_complex() else t

        for module in self.modules():
            for param in module._parameters.values():
                if param is None:
                    continue
                # Parameters keep their identity (optimizers hold them): swap the data.
                with no_grad():
                    param.data = convert(param)
                    if param.grad is not None:
                        param.grad.data = convert(param.grad)
            for name, buf in module._buffers.items():
                if buf is not None:
                    module._buffers[name] = convert(buf)
        return self

    # -- state_dict ---------------------------------------------------------------------

    def state_dict(self, *, destination=None, prefix="", keep_vars=False):
        if destination is None:
            destination = OrderedDict()
        # No dedup: tied parameters and shared submodules appear under every name.
        for module_prefix, module in self.named_modules(prefix=prefix, remove_duplicate=False):
            key_prefix = module_prefix + "." if module_prefix else ""
            for name, value in module._persistent_state():
                destination[key_prefix + name] = value if keep_vars else value.detach()
        return destination

    def load_state_dict(self, state_dict, strict=True):
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        for module_prefix, module in self.named_modules(remove_duplicate=False):
            key_prefix = module_prefix + "." if module_prefix else ""
            local = dict(module._persistent_state())
            for name, target in local.items():
                key = key_prefix + name
                if key not in state_dict:
                    missing.append(key)
                    continue
                error = _copy_into(target, state_dict[key], key)
                if error is not None:
                    errors.append(error)
            for key in state_dict:
                if key.startswith(key_prefix):
                    head = key[len(key_prefix) :].split(".", 1)[0]
                    if head not in module._modules and head not in local:
                        unexpected.append(key)
        if strict:
            if unexpected:
                keys = ", ".join(f'"{k}"' for k in unexpected)
                errors.insert(0, f"Unexpected key(s) in state_dict: {keys}. ")
            if missing:
                keys = ", ".join(f'"{k}"' for k in missing)
                errors.insert(0, f"Missing key(s) in state_dict: {keys}. ")
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {self._get_name()}:\n\t" + "\n\t".join(errors)
            )
        return _IncompatibleKeys(missing, unexpected)

    # -- repr ---------------------------------------------------------------------------

    def extra_repr(self):
        return ""

    def __repr__(self):
        # Written line by line in one pre-order pass: a child's text is its parent's
        # shifted right by two spaces, so each line's indent is known when it is reached
        # (no per-level re-indenting of finished child strings, which is quadratic in
        # depth on top of the output's own size).
        out = []
        stack = [(self, "", 0)]
        while stack:
            item, prefix, indent = stack.pop()
            pad = " " * indent
            if not isinstance(item, Module):
                out.append(pad + prefix + (repr(item) if item is None else item))
                continue
            if type(item).__repr__ is not Module.__repr__:
                text = _add_indent(repr(item), indent)
                out.append(pad + prefix + text)
                continue
            extra = item.extra_repr()
            extra_lines = extra.split("\n") if extra else []
            head = pad + prefix + item._get_name() + "("
            if not item._modules and len(extra_lines) <= 1:
                out.append(head + "".join(extra_lines) + ")")
                continue
            out.append(head)
            # Pushed in reverse: extra lines, then children, then the closing parenthesis.
            stack.append((")", "", indent))
            for key, child in reversed(item._modules.items()):
                stack.append((child, f"({key}): ", indent + 2))
            for line in reversed(extra_lines):
                stack.append((line, "", indent + 2))
        return "\n".join(out)


def _parse_to_dtype(args, kwargs):
    # Module.to(dtype), .to(device), .to(device, dtype), .to(tensor), keywords alike.
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for arg in args:
        if isinstance(arg, _C.dtype):
            dtype = arg
        elif isinstance(arg, _C.Tensor):
            dtype = arg.dtype
            device = arg.device
        else:
            device = arg
    if device is not None and _C.device(device).type != "cpu":
        raise RuntimeError(f"ferrograd nn.Module.to supports only the cpu device, got {device}")
    return dtype


def _copy_into(target, value, key):
    """Copy a checkpoint value into a parameter/buffer in place; an error text or None."""
    if not isinstance(value, _C.Tensor):
        return (
            f'While copying the parameter named "{key}", expected torch.Tensor or '
            f"Tensor-like object from checkpoint but received {type(value)}"
        )
    if value.shape != target.shape:
        return (
            f"size mismatch for {key}: copying a param with shape {value.shape} from "
            f"checkpoint, the shape in current model is {target.shape}."
        )
    try:
        with no_grad():
            target.copy_(value)
    except Exception as ex:  # noqa: BLE001 - torch reports any copy failure as text
        return (
            f'While copying the parameter named "{key}", whose dimensions in the model are '
            f"{target.size()} and whose dimensions in the checkpoint are {value.size()}, "
            f"an exception occurred : {ex.args}."
        )
    return None
