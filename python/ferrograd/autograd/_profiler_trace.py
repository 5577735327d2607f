"""Chrome trace and collapsed-stack export of profiler events.

The trace is the JSON object layout that torch writes through Kineto and that
chrome://tracing and Perfetto load:

    {"schemaVersion": 1, "deviceProperties": [], "trace_id": ..., "host_name": ...,
     "displayTimeUnit": "ms", "baseTimeNanoseconds": B, "traceEvents": [...],
     "traceName": path}

``ts`` values are microseconds since ``baseTimeNanoseconds`` (a Unix time in ns: the
session's start rounded down to a whole second), so ``B + ts * 1000`` is the wall-clock
time of an event. Events: ``M`` metadata (process and thread names), one ``X`` per
range (``cat`` ``cpu_op`` or ``user_annotation``; ``args`` with the external id, the
sequence number and forward thread of autograd ops, and input dims/types/strides when
shapes were recorded), ``s``/``f`` flow pairs (``cat`` ``fwdbwd``) from each forward op
to the backward node it created, ``i`` instants for allocations and frees, and the
profiler's own ``Trace`` span.
"""

import json
import os
import socket

from .profiler_util import SCOPE_BACKWARD_FUNCTION, FunctionEvent


class TraceContext:
    """What a trace needs besides the events: when the session ran (``unix_start_ns``,
    ``duration_us``), its trace id, and the allocations (``(time_us, thread, bytes)``,
    times relative to the session start like the events')."""

    def __init__(self, unix_start_ns=0, duration_us=None, trace_id="", memory=(), metadata=None):
        self.unix_start_ns = unix_start_ns
        self.duration_us = duration_us
        self.trace_id = trace_id
        self.memory = list(memory)
        self.metadata = dict(metadata or {})


def _rounded(us):
    # Nanosecond resolution, as torch's traces: three decimals of a microsecond.
    return round(us, 3)


def _flow_links(events):
    """Pairs (forward op, backward node) sharing a sequence number: the forward op is the
    outermost non-backward range on the forward thread with that number, the backward
    node carries the number and the forward thread's id."""
    forward = {}
    for evt in events:
        if evt.scope != SCOPE_BACKWARD_FUNCTION and evt.sequence_nr >= 0:
            if not evt.name.startswith("autograd::engine::evaluate_function: "):
                forward.setdefault((evt.sequence_nr, evt.thread), evt)
    links = []
    for evt in events:
        if evt.scope == SCOPE_BACKWARD_FUNCTION and evt.sequence_nr >= 0:
            fwd = forward.get((evt.sequence_nr, evt.fwd_thread))
            if fwd is not None:
                links.append((fwd, evt))
    return links


def _op_args(evt, index):
    args = {"External id": evt.id, "Record function id": 0}
    if evt.sequence_nr >= 0:
        args["Sequence number"] = evt.sequence_nr
        args["Fwd thread id"] = evt.fwd_thread or 0
    if evt.concrete_inputs:
        args["Concrete Inputs"] = list(evt.concrete_inputs)
    if evt.input_dtypes:
        args["Input type"] = list(evt.input_dtypes)
    if evt.structured_input_strides:
        args["Input Strides"] = evt.structured_input_strides
    dims = evt.structured_input_shapes or evt.input_shapes
    if dims:
        args["Input Dims"] = dims
    args["Ev Idx"] = index
    return args


def _meta(name, ts, pid, tid, args):
    return {"ph": "M", "name": name, "ts": ts, "pid": pid, "tid": tid, "args": args}


def _flow(phase, flow_id, pid, tid, ts):
    evt = {"ph": phase, "id": flow_id, "pid": pid, "tid": tid, "ts": ts}
    evt.update(cat="fwdbwd", name="fwdbwd")
    if phase == "f":
        evt["bp"] = "e"  # bind to the enclosing slice: the backward node itself
    return evt


def _trace_events(events, ctx, base_ns, pid):
    offset_us = (ctx.unix_start_ns - base_ns) / 1000.0
    ranges = [e for e in events if isinstance(e, FunctionEvent) and e.trace_name is not None]
    threads = sorted({e.thread for e in ranges} | {m[1] for m in ctx.memory})
    start_ts = _rounded(offset_us)

    out = [
        _meta("process_name", start_ts, pid, 0, {"name": "python"}),
        _meta("process_labels", start_ts, pid, 0, {"labels": "CPU"}),
        _meta("process_sort_index", start_ts, pid, 0, {"sort_index": pid}),
    ]
    for tid in threads:
        out.append(_meta("thread_name", start_ts, pid, tid, {"name": f"thread {tid} (python)"}))
        out.append(_meta("thread_sort_index", start_ts, pid, tid, {"sort_index": tid}))

    flows_from, flows_to = {}, {}
    for flow_id, (fwd, bwd) in enumerate(_flow_links(ranges), start=1):
        flows_from.setdefault(id(fwd), []).append(flow_id)
        flows_to.setdefault(id(bwd), []).append(flow_id)

    index = 0
    for evt in ranges:
        ts = _rounded(offset_us + evt.time_range.start)
        cat = "user_annotation" if evt.is_user_annotation else "cpu_op"
        if evt.is_python_function:
            cat = "python_function"
        out.append(
            {
                "ph": "X",
                "cat": cat,
                "name": evt.trace_name,
                "pid": pid,
                "tid": evt.thread,
                "ts": ts,
                "dur": _rounded(evt.time_range.elapsed_us()),
                "args": _op_args(evt, index),
            }
        )
        index += 1
        for flow_id in flows_from.get(id(evt), ()):
            out.append(_flow("s", flow_id, pid, evt.thread, ts))
        for flow_id in flows_to.get(id(evt), ()):
            out.append(_flow("f", flow_id, pid, evt.thread, ts))

    allocated = 0
    for time_us, tid, nbytes in sorted(ctx.memory, key=lambda m: m[0]):
        allocated += nbytes
        args = {"Total Reserved": 0, "Total Allocated": allocated, "Bytes": nbytes}
        args.update({"Device Id": -1, "Device Type": 0, "Ev Idx": index})
        out.append(
            {
                "ph": "i",
                "cat": "cpu_instant_event",
                "s": "t",
                "name": "[memory]",
                "pid": pid,
                "tid": tid,
                "ts": _rounded(offset_us + time_us),
                "args": args,
            }
        )
        index += 1

    duration = ctx.duration_us
    if duration is None:
        duration = max((e.time_range.end for e in ranges), default=0.0)
    span = {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans"}
    span.update(tid="PyTorch Profiler", ts=start_ts, dur=_rounded(duration))
    span["args"] = {"Op count": 0}
    out.append(span)
    out.append(
        {
            "ph": "i",
            "s": "g",
            "name": "Iteration Start: PyTorch Profiler",
            "pid": "Traces",
            "tid": "Trace PyTorch Profiler",
            "ts": start_ts,
        }
    )
    return out


def write_chrome_trace(path, events, ctx=None, metadata=None):
    ctx = ctx or TraceContext()
    base_ns = ctx.unix_start_ns - ctx.unix_start_ns % 1_000_000_000
    head = {
        "schemaVersion": 1,
        "deviceProperties": [],
        "trace_id": ctx.trace_id,
        "host_name": socket.gethostname(),
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": base_ns,
    }
    head.update(ctx.metadata)
    head.update(metadata or {})
    trace_events = _trace_events(events, ctx, base_ns, os.getpid())
    # One event per line: big traces stay greppable and are written without building
    # one huge string.
    with open(path, "w") as f:
        f.write("{\n")
        for key, value in head.items():
            f.write(f"  {json.dumps(key)}: {json.dumps(value)},\n")
        f.write('  "traceEvents": [\n')
        for i, evt in enumerate(trace_events):
            f.write(("    " if i == 0 else ",\n    ") + json.dumps(evt))
        f.write("\n  ],\n")
        f.write(f'  "traceName": {json.dumps(str(path))}\n}}\n')


_FRAME_SEPARATORS = str.maketrans(" ;\t\n", "____")


def write_stacks(path, events, metric):
    """Collapsed stacks: outermost frame first, frames joined by ``;`` (separators
    inside a frame become ``_``), then the metric as an integer; zero values skipped."""
    attr = metric.replace("cuda", "device").replace("xpu", "device")
    attr = attr.replace("privateuse1", "device")
    with open(path, "w") as f:
        for evt in events:
            if not evt.stack:
                continue
            value = int(getattr(evt, attr))
            if value > 0:
                frames = ";".join(fr.translate(_FRAME_SEPARATORS) for fr in reversed(evt.stack))
                f.write(f"{frames} {value}\n")
