"""``EventList.table``: torch's text table of profiler events, column for column.

Layout: every column is right-aligned in a fixed width (12, or sized to the names,
shapes or stack frames) and followed by two spaces; a dashed rule frames the header and
the rows; the last line is ``Self CPU time total: ...`` (and the device total when there
is device time). Optional columns appear only when some event has data for them.

One deliberate difference from torch 2.13-2.15: when both stacks and FLOPs are shown,
torch writes the FLOPs value under "Source Location" and the source under "Total
FLOPs"; here every value stays under its own header.
"""

import math

from .profiler_util import (
    DeviceType,
    EventList,
    _format_memory,
    _format_time,
    _format_time_share,
)

_DEFAULT_WIDTH = 12
_SPACING = 2
_FLOP_UNITS = ("FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs")
_UNIT_DIVISORS = {"s": (1e6, "s"), "ms": (1e3, "ms"), "us": (1.0, "us")}
# Device types whose self time counts toward the "Self <DEVICE> time total" line.
_DEVICE_TOTAL_TYPES = (DeviceType.CUDA, DeviceType.PrivateUse1, DeviceType.MTIA, DeviceType.XPU)


def _time_text(time_us, time_unit):
    unit = _UNIT_DIVISORS.get(time_unit)
    if unit is None:
        return _format_time(time_us)
    divisor, suffix = unit
    return f"{time_us / divisor:.3f}{suffix}"


def _flops_unit(smallest):
    """Scale factor and header unit for the FLOPs column, from its smallest value."""
    step = max(0, min(int(math.log10(smallest) / 3), len(_FLOP_UNITS) - 1))
    return 10.0 ** (-3 * step), _FLOP_UNITS[step]


def _clip(text, limit):
    """torch's name clipping: at ``limit - 3`` characters or more, keep that many and
    add ``...`` (``limit`` is the maximum column width, not the computed one)."""
    if limit is not None and len(text) >= limit - 3:
        return text[: limit - 3] + "..."
    return text


def _trim_path(path, width):
    """Keep the end of a long source location, marking the cut with ``...``."""
    if len(path) > width:
        path = path[len(path) - width :]
        if len(path) > 3:
            path = "..." + path[3:]
    return path


def _sized(width, cap):
    return width if cap is None else min(width, cap)


class _Columns:
    """Column titles, widths and alignments, and the row/rule text they make."""

    def __init__(self):
        self.titles = []
        self.specs = []

    def add(self, title, width, align=">"):
        self.titles.append(title)
        self.specs.append((width, align))

    def row(self, cells):
        return "".join(
            f"{str(cell):{align}{width}}" + " " * _SPACING
            for cell, (width, align) in zip(cells, self.specs)
        )

    def rule(self):
        return "".join("-" * width + " " * _SPACING for width, _ in self.specs)

    def line_length(self):
        return sum(width + _SPACING for width, _ in self.specs) - _SPACING


def build_table(
    events,
    sort_by=None,
    header=None,
    row_limit=100,
    max_src_column_width=75,
    max_name_column_width=55,
    max_shapes_column_width=80,
    with_flops=False,
    profile_memory=False,
    top_level_events_only=False,
    time_unit=None,
):
    if len(events) == 0:
        return ""

    use_device = events[0].use_device
    has_device_time = any(e.self_device_time_total > 0 for e in events)
    has_device_mem = any(e.self_device_memory_usage > 0 for e in events)
    if not use_device and has_device_time:
        raise RuntimeError("use_device is None, but there is device performance data.")
    has_shapes = any(e.input_shapes is not None and len(e.input_shapes) > 0 for e in events)
    has_overloads = any(e.overload_name is not None and len(e.overload_name) > 0 for e in events)
    stacks = [e.stack for e in events if e.stack]
    has_stack = bool(stacks)
    flops_values = [e.flops for e in events if (e.flops or 0) > 0]
    with_flops = with_flops and bool(flops_values)

    if sort_by is not None:
        attr = sort_by.replace("cuda", "device").replace("xpu", "device")
        attr = attr.replace("privateuse1", "device")
        events = EventList(
            sorted(events, key=lambda e: getattr(e, attr), reverse=True),
            use_device=use_device,
            profile_memory=profile_memory,
            with_flops=with_flops,
        )

    name_width = _sized(max(len(e.key) for e in events) + 4, max_name_column_width)
    device_name = use_device.upper() if use_device is not None else "None"
    cols = _Columns()
    cols.add("Name", name_width)
    if has_overloads:
        cols.add("Overload Name", name_width)
    for title in ("Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"):
        cols.add(title, _DEFAULT_WIDTH)
    if has_device_time:
        for title in (
            f"Self {device_name}",
            f"Self {device_name} %",
            f"{device_name} total",
            f"{device_name} time avg",
        ):
            cols.add(title, _DEFAULT_WIDTH)
    show_device_mem = profile_memory and bool(use_device) and has_device_mem
    if profile_memory:
        cols.add("CPU Mem", _DEFAULT_WIDTH)
        cols.add("Self CPU Mem", _DEFAULT_WIDTH)
        if show_device_mem:
            cols.add(f"{device_name} Mem", _DEFAULT_WIDTH)
            cols.add(f"Self {device_name} Mem", _DEFAULT_WIDTH)
    cols.add("# of Calls", _DEFAULT_WIDTH)
    show_node_id = any(e.node_id != -1 for e in events)
    if show_node_id:
        cols.add("Node ID", _DEFAULT_WIDTH)
    if has_shapes:
        shapes_width = _sized(
            max(len(str(e.input_shapes)) for e in events) + 4, max_shapes_column_width
        )
        cols.add("Input Shapes", shapes_width)
    if has_stack:
        src_width = _sized(max(len(f) for s in stacks for f in s) + 4, max_src_column_width)
        src_col = len(cols.titles)
        cols.add("Source Location", src_width, "<")
    if with_flops:
        flops_scale, flops_unit = _flops_unit(min(flops_values))
        cols.add(f"Total {flops_unit}", _DEFAULT_WIDTH)

    total_self_cpu = 0
    total_self_device = 0
    for e in events:
        total_self_cpu += e.self_cpu_time_total
        counts_device = (e.device_type == DeviceType.CPU and e.is_legacy) or (
            e.device_type in _DEVICE_TOTAL_TYPES and not e.is_user_annotation
        )
        if counts_device:
            total_self_device += e.self_device_time_total

    lines = []
    if header is not None:
        lines += ["=" * cols.line_length(), header]
    if top_level_events_only:
        lines += ["=" * cols.line_length(), "This report only display top-level ops statistics"]
    lines += [cols.rule(), cols.row(cols.titles), cols.rule()]

    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        e.self_cpu_percent = _format_time_share(e.self_cpu_time_total, total_self_cpu)
        e.total_cpu_percent = (
            0 if e.is_async else _format_time_share(e.cpu_time_total, total_self_cpu)
        )
        cells = [_clip(e.key, max_name_column_width)]
        if has_overloads:
            cells.append(_clip(e.overload_name, max_name_column_width))
        cells += [
            e.self_cpu_percent,
            _time_text(e.self_cpu_time_total, time_unit),
            e.total_cpu_percent,
            _time_text(e.cpu_time_total, time_unit),
            _time_text(e.cpu_time, time_unit),
        ]
        if has_device_time:
            e.total_device_percent = _format_time_share(e.self_device_time_total, total_self_device)
            cells += [
                _time_text(e.self_device_time_total, time_unit),
                e.total_device_percent,
                _time_text(e.device_time_total, time_unit),
                _time_text(e.device_time, time_unit),
            ]
        if profile_memory:
            cells += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
            if show_device_mem:
                cells += [
                    _format_memory(e.device_memory_usage),
                    _format_memory(e.self_device_memory_usage),
                ]
        cells.append(e.count)
        if show_node_id:
            cells.append(e.node_id)
        if has_shapes:
            cells.append(str(e.input_shapes)[:shapes_width])
        frames = e.stack or []
        if has_stack:
            cells.append(_trim_path(frames[0], src_width) if frames else "")
        if with_flops:
            flops = e.flops or 0
            cells.append("--" if flops <= 0 else f"{flops * flops_scale:8.3f}")
        lines.append(cols.row(cells))
        if has_stack:
            # The other frames go on lines of their own, then one blank line.
            blank = [""] * len(cols.titles)
            for frame in frames[1:]:
                cont = list(blank)
                cont[src_col] = _trim_path(frame, src_width)
                lines.append(cols.row(cont))
            lines.append(cols.row(blank))

    lines.append(cols.rule())
    lines.append(f"Self CPU time total: {_time_text(total_self_cpu, time_unit)}")
    if has_device_time:
        lines.append(f"Self {device_name} time total: {_time_text(total_self_device, time_unit)}")
    return "".join(line + "\n" for line in lines)
