"""From the raw events the Rust recorder returns to torch's FunctionEvents.

A raw event is the tuple
``(id, name, kind, thread, start_ns, end_ns, sequence_nr, fwd_thread, input_shapes,
input_dtypes, input_strides, mem_bytes, stack, args)`` with ``kind`` one of
``cpu_op``, ``backward`` (node applications and the engine's
``autograd::engine::evaluate_function:`` wrappers), ``user_annotation`` and ``memory``
(an allocation, +bytes, or a free, -bytes, at one instant).

Memory is charged as torch charges it: an event's ``cpu_memory_usage`` is the sum of the
allocations and frees inside its time range (inclusive of both ends, so children's are
included and ``self_cpu_memory_usage`` subtracts them). Unlike torch, only allocations
on the event's own thread count: engine threads run concurrently, and another thread's
allocation says nothing about this range. Allocations that no range covers become
``[memory]`` events of their own.
"""

import bisect
import logging
import time
from itertools import accumulate

from .profiler_util import (
    MEMORY_EVENT_NAME,
    SCOPE_BACKWARD_FUNCTION,
    SCOPE_FUNCTION,
    SCOPE_USER,
    EventList,
    FunctionEvent,
)

log = logging.getLogger(__name__)

ENGINE_WRAPPER_PREFIX = "autograd::engine::evaluate_function: "

# Utility ranges torch leaves out of its results.
_HIDDEN_NAMES = frozenset(
    {
        MEMORY_EVENT_NAME,
        "[OutOfMemory]",
        "profiler::_record_function_enter",
        "profiler::_record_function_enter_new",
        "profiler::_record_function_exit",
        "aten::is_leaf",
        "aten::output_nr",
        "aten::_version",
    }
)

# How often (in events) parsing looks at the clock when a timeout is set.
_TIMEOUT_CHECK_EVERY = 256


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _matmul_flops(a, b):
    """2·m·k·n for ``[m, k] @ [k, n]``; 2·b·m·k·n for batched ``[b, m, k] @ [b, k, n]``."""
    if len(a) not in (2, 3) or len(b) != len(a):
        return 0
    return 2 * _numel(a) * b[-1]


def compute_flops(name, shapes):
    """torch's FLOP estimate from an op's name and input shapes (0 when the op is not
    one it counts or the shapes do not fit): matrix products count a multiply and an
    add per term; elementwise ``mul``/``add`` count one per element of the first input.
    Composite ops (``aten::matmul``) count 0: the product inside them is counted."""
    try:
        if name in ("aten::mm", "aten::bmm"):
            return _matmul_flops(shapes[0], shapes[1])
        if name in ("aten::addmm", "aten::baddbmm"):
            return _matmul_flops(shapes[1], shapes[2])
        if name in ("aten::mul", "aten::add"):
            return _numel(shapes[0])
    except (IndexError, TypeError):
        pass
    return 0


def _scope(kind, name):
    if kind == "user_annotation":
        return SCOPE_USER
    if kind == "backward" and not name.startswith(ENGINE_WRAPPER_PREFIX):
        return SCOPE_BACKWARD_FUNCTION
    return SCOPE_FUNCTION


def _display_name(name):
    # Numbered profiler steps are grouped under one name in tables (not in traces).
    return "ProfilerStep*" if name.startswith("ProfilerStep#") else name


class _ThreadMemory:
    """One thread's allocations in time order, with prefix sums so the bytes inside any
    range are two bisections away, and a coverage count to find the uncovered ones."""

    def __init__(self, records):
        records.sort(key=lambda r: r[0])
        self.records = records
        self.times = [r[0] for r in records]
        self.prefix = [0, *accumulate(r[1] for r in records)]
        self.cover = [0] * (len(records) + 1)

    def charge(self, start_ns, end_ns):
        lo = bisect.bisect_left(self.times, start_ns)
        hi = bisect.bisect_right(self.times, end_ns)
        if lo < hi:
            self.cover[lo] += 1
            self.cover[hi] -= 1
        return self.prefix[hi] - self.prefix[lo]

    def uncovered(self):
        depth = 0
        for record, delta in zip(self.records, self.cover):
            depth += delta
            if depth == 0:
                yield record


def events_from_raw(
    raw_events,
    start_ns,
    use_device=None,
    profile_memory=False,
    with_flops=False,
    timeout_s=None,
):
    """Build the session's EventList (tree built, sorted by start time) and the list of
    allocations ``(time_us, thread, bytes)`` for traces."""
    deadline = None if timeout_s is None else time.perf_counter() + timeout_s
    timed_out = False

    ranges = []
    per_thread = {}
    for raw in raw_events:
        if raw[2] == "memory":
            per_thread.setdefault(raw[3], []).append((raw[4], raw[11]))
        elif raw[1] not in _HIDDEN_NAMES:
            ranges.append(raw)
    # Equal (start, end) pairs keep the order events started in: parents first.
    ranges.sort(key=lambda r: r[0])
    memory = {tid: _ThreadMemory(recs) for tid, recs in per_thread.items()}

    def to_us(ns):
        return (ns - start_ns) / 1000.0

    events = []
    max_id = 0
    for i, raw in enumerate(ranges):
        if (
            deadline is not None
            and i % _TIMEOUT_CHECK_EVERY == 0
            and time.perf_counter() > deadline
        ):
            timed_out = True
            break
        (eid, name, kind, thread, t0, t1, seq, fwd_thread, shapes, dtypes, strides) = raw[:11]
        stack, args = raw[12], raw[13]
        mem = memory.get(thread)
        shapes = shapes if shapes is not None else []
        events.append(
            FunctionEvent(
                id=eid,
                name=_display_name(name),
                overload_name="",
                trace_name=name,
                thread=thread,
                start_us=to_us(t0),
                end_us=to_us(t1),
                fwd_thread=fwd_thread,
                input_shapes=shapes,
                structured_input_shapes=shapes,
                structured_input_strides=strides if strides is not None else [],
                input_dtypes=dtypes if dtypes is not None else [],
                concrete_inputs=[args] if args is not None else [],
                kwinputs={},
                stack=list(stack) if stack is not None else [],
                scope=_scope(kind, name),
                use_device=use_device,
                cpu_memory_usage=mem.charge(t0, t1) if mem is not None else 0,
                sequence_nr=seq,
                flops=compute_flops(name, shapes) if with_flops else 0,
                is_user_annotation=kind == "user_annotation",
            )
        )
        max_id = max(max_id, eid)

    for thread, mem in memory.items():
        if timed_out:
            break
        for t, nbytes in mem.uncovered():
            max_id += 1
            events.append(
                FunctionEvent(
                    id=max_id,
                    name=MEMORY_EVENT_NAME,
                    overload_name="",
                    thread=thread,
                    start_us=to_us(t),
                    end_us=to_us(t),
                    fwd_thread=thread,
                    input_shapes=[],
                    stack=[],
                    use_device=use_device,
                    cpu_memory_usage=nbytes,
                )
            )
    if timed_out:
        log.warning(
            "Profiler post-processing timed out after %.3f seconds, returning partial "
            "results with %d events",
            timeout_s,
            len(events),
        )

    events.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
    result = EventList(
        events, use_device=use_device, profile_memory=profile_memory, with_flops=with_flops
    )
    result._build_tree()
    allocations = [
        (to_us(t), tid, nbytes) for tid, mem in memory.items() for t, nbytes in mem.records
    ]
    return result, allocations
