"""Tensor ``repr`` in torch's format (default print options: precision 4, threshold
1000, edgeitems 3, linewidth 80).

Only plain Python values are used: ``t.tolist()``, ``t.dtype``, ``t.shape``, ``t.dim()``,
``t.numel()``, ``t.requires_grad`` and ``t.grad_fn`` (with ``.name()``); so the same code
prints real tensors and the nested-list Jacobians that gradcheck reports.
"""

import contextlib
import dataclasses
import math
import sys

__all__ = ["get_printoptions", "printoptions", "set_printoptions", "tensor_repr"]


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: object = None


PRINT_OPTS = _PrinterOptions()


def set_printoptions(
    precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None
):
    """Set print options as ``torch.set_printoptions`` does (``profile`` is one of
    ``"default"``, ``"short"``, ``"full"``; explicit arguments override it)."""
    if profile is not None:
        presets = {
            "default": (4, 1000, 3, 80),
            "short": (2, 1000, 2, 80),
            "full": (4, math.inf, 3, 80),
        }
        if profile in presets:
            p, t, e, w = presets[profile]
            PRINT_OPTS.precision, PRINT_OPTS.threshold = p, t
            PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = e, w
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """Current print options as a dict usable as ``set_printoptions(**opts)``."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Temporarily change print options (same arguments as ``set_printoptions``)."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# ----------------------------------------------------------------------------- dtypes


def _dtype_name(dtype):
    """``ferrograd.float64`` -> ``float64``."""
    return str(dtype).rsplit(".", 1)[-1]


def _is_complex_name(name):
    return name.startswith("complex") or name in ("cfloat", "cdouble", "chalf")


def _is_float_name(name):
    return name.startswith(("float", "bfloat")) or name in ("half", "double")


def _default_float_name():
    """Name of the current default floating dtype (``float32`` unless the package
    offers ``get_default_dtype`` and it says otherwise)."""
    pkg = sys.modules.get("ferrograd")
    getter = getattr(pkg, "get_default_dtype", None)
    if not callable(getter):
        return "float32"
    try:
        return _dtype_name(getter())
    except Exception:  # noqa: BLE001 - printing must not fail on this
        return "float32"


# -------------------------------------------------------------------------- formatting


class _Formatter:
    """Chooses one format (integer-valued, fixed or scientific) and one width for all
    elements, as torch does, from the (possibly summarised) values."""

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if not floating:
            for v in values:
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        finite = [v for v in values if v != 0 and math.isfinite(v)]
        if not finite:
            return
        absolute = [abs(v) for v in finite]
        lo, hi = min(absolute), max(absolute)
        self.int_mode = all(v == math.ceil(v) for v in finite)
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = bool(PRINT_OPTS.sci_mode)
        prec = PRINT_OPTS.precision
        for v in finite:
            if self.sci_mode:
                width = len(f"{v:.{prec}e}")
            elif self.int_mode:
                width = len(f"{v:.0f}") + 1  # room for the trailing "."
            else:
                width = len(f"{v:.{prec}f}")
            self.max_width = max(self.max_width, width)

    def width(self):
        return self.max_width

    def format(self, value):
        if self.floating:
            prec = PRINT_OPTS.precision
            if self.sci_mode:
                text = f"{value:{self.max_width}.{prec}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if math.isfinite(value):
                    text += "."
            else:
                text = f"{value:.{prec}f}"
        else:
            text = f"{value}"
        return (self.max_width - len(text)) * " " + text


def _summarized_values(data, dim):
    """Flat list of the values that stay visible after summarisation."""
    if dim == 0:
        return [data]
    edge = PRINT_OPTS.edgeitems
    if dim == 1:
        return data[:edge] + data[-edge:] if len(data) > 2 * edge else list(data)
    if not edge:
        return []
    rows = data[:edge] + data[-edge:] if len(data) > 2 * edge else data
    out = []
    for row in rows:
        out.extend(_summarized_values(row, dim - 1))
    return out


def _flatten(data, dim):
    if dim == 0:
        return [data]
    if dim == 1:
        return list(data)
    out = []
    for row in data:
        out.extend(_flatten(row, dim - 1))
    return out


class _ElementFormatter:
    """Formats one element: real values with one formatter, complex values with one
    formatter for the real parts and one for the imaginary parts."""

    def __init__(self, values, kind):
        self.kind = kind
        if kind == "complex":
            self.real = _Formatter([complex(v).real for v in values], True)
            self.imag = _Formatter([complex(v).imag for v in values], True)
        else:
            self.real = _Formatter(values, kind == "float")
            self.imag = None

    def element_width(self):
        width = self.real.width() + 2
        if self.imag is not None:
            width += self.imag.width() + 1
        return width

    def format(self, value):
        if self.imag is None:
            return self.real.format(value)
        value = complex(value)
        real_text = self.real.format(value.real)
        imag_text = (self.imag.format(value.imag) + "j").lstrip()
        if imag_text[0] in "+-":
            return real_text + imag_text
        return real_text + "+" + imag_text


def _vector_str(data, indent, summarize, fmt):
    edge = PRINT_OPTS.edgeitems
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / fmt.element_width()))
    if summarize and not edge:
        items = ["..."]
    elif summarize and len(data) > 2 * edge:
        items = (
            [fmt.format(v) for v in data[:edge]] + [" ..."] + [fmt.format(v) for v in data[-edge:]]
        )
    else:
        items = [fmt.format(v) for v in data]
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(data, dim, indent, summarize, fmt):
    if dim == 0:
        return fmt.format(data)
    if dim == 1:
        return _vector_str(data, indent, summarize, fmt)
    edge = PRINT_OPTS.edgeitems
    if summarize and len(data) > 2 * edge:
        parts = (
            [_nested_str(row, dim - 1, indent + 1, summarize, fmt) for row in data[:edge]]
            + ["..."]
            + [_nested_str(row, dim - 1, indent + 1, summarize, fmt) for row in data[-edge:]]
        )
    else:
        parts = [_nested_str(row, dim - 1, indent + 1, summarize, fmt) for row in data]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(parts) + "]"


def _data_str(data, dim, numel, kind, indent):
    """The bracketed body for ``numel > 0`` data given as nested lists (``tolist()``)."""
    summarize = numel > PRINT_OPTS.threshold
    visible = _summarized_values(data, dim) if summarize else _flatten(data, dim)
    fmt = _ElementFormatter(visible, kind)
    return _nested_str(data, dim, indent, summarize, fmt)


def _add_suffixes(text, suffixes, indent):
    pieces = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            pieces.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            pieces.append(", " + suffix)
            last_line_len += len(suffix) + 2
    pieces.append(")")
    return "".join(pieces)


def _device_suffix(t):
    device = getattr(t, "device", None)
    if device is None:
        return None
    kind = getattr(device, "type", None) or str(device).split(":", 1)[0]
    if kind == "cpu":
        return None
    return f"device='{device}'"


def _tangent_suffix(t):
    """``tangent=...`` for a dual tensor at the current forward-AD level, else None."""
    forward_ad = sys.modules.get("ferrograd.autograd.forward_ad")
    unpack = getattr(forward_ad, "unpack_dual", None)
    if unpack is None:
        return None
    try:
        tangent = unpack(t)[1]
    except Exception:  # noqa: BLE001 - printing must not fail on this
        return None
    return None if tangent is None else f"tangent={tangent!r}"


def tensor_repr(t, *, tensor_contents=None):
    """``repr(t)`` in torch's format, e.g. ``tensor([1., 2.], requires_grad=True)``.

    ``tensor_contents`` replaces the bracketed body (as torch's ``_str`` allows)."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    device = _device_suffix(t)
    if device is not None:
        suffixes.append(device)

    name = _dtype_name(t.dtype)
    if _is_complex_name(name):
        kind = "complex"
    elif _is_float_name(name):
        kind = "float"
    else:
        kind = "int"  # integers and bool print their Python text
    default_float = _default_float_name()
    default_complex = "complex128" if default_float == "float64" else "complex64"
    has_default_dtype = name in (default_float, default_complex, "int64", "bool")

    numel = t.numel()
    if numel == 0:
        # Explicit shape unless it is (0,); dtype unless it is the default float dtype.
        if t.dim() != 1:
            suffixes.append("size=" + str(tuple(t.shape)))
        if name != default_float:
            suffixes.append("dtype=" + str(t.dtype))
        body = "[]"
    else:
        if not has_default_dtype:
            suffixes.append("dtype=" + str(t.dtype))
        body = _data_str(t.tolist(), t.dim(), numel, kind, indent)
    if tensor_contents is not None:
        body = tensor_contents

    grad_fn = getattr(t, "grad_fn", None)
    if grad_fn is not None:
        node_name = grad_fn.name().rsplit("::", 1)[-1]
        suffixes.append(f"grad_fn=<{node_name}>")
    elif getattr(t, "requires_grad", False):
        suffixes.append("requires_grad=True")
    tangent = _tangent_suffix(t)
    if tangent is not None:
        suffixes.append(tangent)

    return _add_suffixes(prefix + body, suffixes, indent)
