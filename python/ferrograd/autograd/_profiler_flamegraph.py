"""``export_flamegraph``: a self-contained SVG flame graph of profiler events.

One block per recording thread (forward ops on the calling thread; backward nodes on
whichever thread the engine ran them). In a block, the bottom bar is everything that
thread recorded; each frame sits on the frame of its CPU parent, and its width is its
share of the thread's recorded time. Calls with the same name under the same parent
frame are merged (as in Brendan Gregg's flame graphs), and siblings are ordered by
first appearance, so forward reads before backward. Every frame carries a ``<title>``
tooltip with its total and self time, share and call count. Colours tell forward ops
(warm), backward nodes and the engine's steps (blue), ops run by backward (purple) and
``record_function`` ranges (green) apart.

The merge and the layout walk the event tree with explicit stacks: deeply nested
ranges do not reach Python's recursion limit.
"""

import re
import zlib
from xml.sax.saxutils import escape

from .profiler_util import (
    MEMORY_EVENT_NAME,
    SCOPE_BACKWARD_FUNCTION,
    FunctionEvent,
    _format_time,
)

_WIDTH = 1200
_PAD = 10
_FRAME_H = 17
_TITLE_H = 36
_THREAD_TITLE_H = 22
_GAP = 14
_CHAR_W = 6.6  # average advance of the 11px monospace font
_MIN_WIDTH = 0.1  # frames narrower than this (px) are left out
_ENGINE_PREFIX = "autograd::engine::evaluate_function: "
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")


class _Frame:
    __slots__ = ("name", "kind", "total", "calls", "children")

    def __init__(self, name, kind):
        self.name = name
        self.kind = kind
        self.total = 0.0
        self.calls = 0
        self.children = {}  # name -> _Frame, in order of first appearance

    def child(self, name, kind):
        frame = self.children.get(name)
        if frame is None:
            frame = self.children[name] = _Frame(name, kind)
        return frame


def _kind(evt):
    if evt.is_user_annotation:
        return "user"
    if evt.scope == SCOPE_BACKWARD_FUNCTION or evt.name.startswith(_ENGINE_PREFIX):
        return "backward"
    return "forward"


def _merge(events):
    """Per thread, a root frame whose subtree merges the events' CPU-parent tree."""
    ranges = [
        e
        for e in events
        if isinstance(e, FunctionEvent) and e.name != MEMORY_EVENT_NAME and not e.is_async
    ]
    ranges.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
    roots = {}
    frame_of = {}
    for evt in ranges:
        parent = frame_of.get(id(evt.cpu_parent)) if evt.cpu_parent is not None else None
        if parent is None:
            parent = roots.get(evt.thread)
            if parent is None:
                parent = roots[evt.thread] = _Frame(f"thread {evt.thread}", "root")
            parent.total += evt.time_range.elapsed_us()
        kind = _kind(evt)
        if kind == "forward" and parent.kind in ("backward", "backward_op"):
            kind = "backward_op"
        frame = parent.child(evt.name, kind)
        frame.total += evt.time_range.elapsed_us()
        frame.calls += 1
        frame_of[id(evt)] = frame
    return [roots[t] for t in sorted(roots)]


def _depth(root):
    deepest = 0
    todo = [(root, 0)]
    while todo:
        frame, depth = todo.pop()
        deepest = max(deepest, depth)
        todo.extend((c, depth + 1) for c in frame.children.values())
    return deepest


def _colour(frame):
    h = zlib.crc32(frame.name.encode("utf-8", "replace"))
    a, b = h & 0xFF, (h >> 8) & 0xFF
    if frame.kind == "root":
        return "rgb(200,200,200)"
    if frame.kind == "backward":
        return f"rgb({80 + a % 60},{130 + b % 60},{220 + a % 35})"
    if frame.kind == "backward_op":
        return f"rgb({150 + a % 50},{110 + b % 50},{210 + a % 40})"
    if frame.kind == "user":
        return f"rgb({90 + a % 50},{190 + b % 50},{90 + a % 40})"
    return f"rgb({225 + a % 30},{90 + b % 110},{40 + a % 50})"


def _text(s):
    return escape(_XML_INVALID.sub("?", s))


def _label(frame, width):
    fits = int((width - 6) / _CHAR_W)
    if fits < 3:
        return ""
    full = f"{frame.name} ({_format_time(frame.total)})"
    if len(full) <= fits:
        return full
    if len(frame.name) <= fits:
        return frame.name
    return frame.name[: fits - 2] + ".."


def _tooltip(frame, thread_total):
    own = frame.total - sum(c.total for c in frame.children.values())
    share = 100.0 * frame.total / thread_total if thread_total > 0 else 0.0
    calls = "" if frame.kind == "root" else f", {frame.calls} call{'s' * (frame.calls != 1)}"
    return (
        f"{frame.name}: {_format_time(frame.total)} ({share:.2f}%), self {_format_time(own)}{calls}"
    )


def _frame_svg(frame, x, y, width, thread_total):
    label = _label(frame, width)
    parts = [
        "<g>",
        f"<title>{_text(_tooltip(frame, thread_total))}</title>",
        f'<rect x="{x:.2f}" y="{y}" width="{width:.2f}" height="{_FRAME_H - 1}" '
        f'rx="2" fill="{_colour(frame)}"/>',
    ]
    if label:
        parts.append(f'<text x="{x + 3:.2f}" y="{y + _FRAME_H - 5}">{_text(label)}</text>')
    parts.append("</g>")
    return "".join(parts)


def _thread_svg(root, top, out):
    """Draw one thread's block with its top edge at ``top``; returns its height."""
    depth = _depth(root)
    out.append(
        f'<text x="{_PAD}" y="{top + 15}" font-weight="bold">{_text(root.name)} '
        f"({_format_time(root.total)} recorded)</text>"
    )
    bottom = top + _THREAD_TITLE_H + (depth + 1) * _FRAME_H
    span = _WIDTH - 2 * _PAD
    scale = span / root.total if root.total > 0 else 0.0
    todo = [(root, float(_PAD), 0)]
    while todo:
        frame, x, level = todo.pop()
        width = span if frame is root else frame.total * scale
        if width < _MIN_WIDTH:
            continue
        y = bottom - (level + 1) * _FRAME_H
        out.append(_frame_svg(frame, x, y, width, root.total))
        child_x = x
        for child in frame.children.values():
            todo.append((child, child_x, level + 1))
            child_x += child.total * scale
    return bottom - top


def write_flamegraph(path, events):
    roots = _merge(events)
    body = []
    top = _TITLE_H
    for root in roots:
        top += _thread_svg(root, top, body) + _GAP
    height = max(top, _TITLE_H + _GAP)
    head = (
        '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n'
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{_WIDTH}" '
        f'height="{height}" viewBox="0 0 {_WIDTH} {height}" font-family="monospace" '
        'font-size="11">\n'
        f'<rect x="0" y="0" width="{_WIDTH}" height="{height}" fill="rgb(250,250,245)"/>\n'
        f'<text x="{_WIDTH / 2}" y="20" text-anchor="middle" font-size="15">'
        "Flame graph (ferrograd profiler)</text>\n"
        f'<text x="{_WIDTH / 2}" y="32" text-anchor="middle" fill="rgb(90,90,90)">'
        "width: share of the thread's recorded time; warm: forward ops, blue: backward "
        "nodes, purple: ops run by backward, green: record_function; hover for details"
        "</text>\n"
    )
    with open(path, "w", encoding="utf-8") as f:
        f.write(head)
        for part in body:
            f.write(part + "\n")
        f.write("</svg>\n")
