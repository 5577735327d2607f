"""ferrograd's profiler from raw events: how the Rust recorder's tuples become torch's
FunctionEvents (memory attribution, scopes, FLOPs, tree), the Chrome trace and flame
graph written from them, and the ``profile`` / ``record_function`` lifecycle, driven by
a stand-in for the recorder so every number is deterministic.

(The same behaviour against the real recorder is in test_profiler.py.)
"""

import json
import logging
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from ferrograd.autograd import profiler
from ferrograd.autograd._profiler_events import compute_flops, events_from_raw

SVG = "{http://www.w3.org/2000/svg}"


def raw(id, name, kind, start, end, thread=1, seq=-1, fwd=0, shapes=None, dtypes=None,
        strides=None, mem=0, stack=None, args=None):  # fmt: skip
    return (id, name, kind, thread, start, end, seq, fwd, shapes, dtypes, strides, mem, stack,
            args)  # fmt: skip


def alloc(id, t, nbytes, thread=1):
    return raw(id, "[memory]", "memory", t, t, thread=thread, mem=nbytes)


# y = x * w; with record_function("block"): z = y + 1; backward of the mul, on an engine
# thread (2) for AccumulateGrad. Times in ns since the session start (1_000).
STEP = [
    raw(1, "aten::mul", "cpu_op", 2_000, 6_000, seq=4, shapes=[[3], [3]],
        dtypes=["float", "float"], strides=[[1], [1]], stack=["m.py(3): f", "m.py(9): <module>"]),
    alloc(2, 3_000, 12),
    raw(3, "block", "user_annotation", 7_000, 12_000, args="epoch=1"),
    raw(4, "aten::add", "cpu_op", 8_000, 11_000, shapes=[[3], []], dtypes=["float", "long int"],
        strides=[[1], []]),
    alloc(5, 9_000, 12),
    alloc(6, 11_000, -12),
    alloc(7, 12_500, -12),
    raw(8, "autograd::engine::evaluate_function: MulBackward0", "backward", 20_000, 30_000,
        seq=4, fwd=1),
    raw(9, "MulBackward0", "backward", 20_500, 29_000, seq=4, fwd=1, shapes=[[3]],
        dtypes=["float"], strides=[[1]]),
    raw(10, "aten::mul", "cpu_op", 21_000, 28_000, shapes=[[3], [3]],
        dtypes=["float", "float"], strides=[[1], [1]]),
    alloc(11, 22_000, 12),
    raw(12, "torch::autograd::AccumulateGrad", "backward", 25_000, 26_000, thread=2, fwd=1),
    alloc(13, 25_500, 12, thread=2),
]  # fmt: skip


def parsed(events=STEP, **kw):
    return events_from_raw(events, 1_000, **kw)


def by_id(events):
    return {e.id: e for e in events}


def test_times_names_and_fields():
    events, _ = parsed()
    e = by_id(events)
    assert e[1].time_range.start == 1.0 and e[1].time_range.end == 5.0
    assert e[1].name == e[1].trace_name == "aten::mul"
    assert (e[1].sequence_nr, e[1].fwd_thread, e[1].thread) == (4, 0, 1)
    assert e[1].input_shapes == [[3], [3]] and e[1].input_dtypes == ["float", "float"]
    assert e[1].structured_input_strides == [[1], [1]]
    assert e[1].stack == ["m.py(3): f", "m.py(9): <module>"]
    assert e[9].fwd_thread == 1 and e[9].sequence_nr == 4
    assert [x.time_range.start for x in events] == sorted(x.time_range.start for x in events)


def test_scopes_and_user_annotations():
    e = by_id(parsed()[0])
    assert e[9].scope == 1  # a backward node's application
    assert e[12].scope == 1
    assert e[8].scope == 0  # the engine's wrapper is an ordinary range, as in torch
    assert e[3].scope == 7 and e[3].is_user_annotation
    assert not e[1].is_user_annotation
    assert e[3].concrete_inputs == ["epoch=1"]


def test_tree_is_per_thread():
    e = by_id(parsed()[0])
    assert e[4].cpu_parent is e[3]
    assert e[9].cpu_parent is e[8] and e[10].cpu_parent is e[9]
    # AccumulateGrad ran on thread 2 during MulBackward0's time: not its child.
    assert e[12].cpu_parent is None
    assert [c.id for c in e[8].cpu_children] == [9]


def test_memory_is_charged_to_enclosing_ranges_of_its_thread():
    events, allocations = parsed(profile_memory=True)
    e = by_id(events)
    assert e[1].cpu_memory_usage == 12
    # Inclusive at both ends: the free at 11_000 is the add's end.
    assert e[4].cpu_memory_usage == 0 and e[3].cpu_memory_usage == 0
    assert e[8].cpu_memory_usage == e[9].cpu_memory_usage == e[10].cpu_memory_usage == 12
    assert e[9].self_cpu_memory_usage == 0 and e[10].self_cpu_memory_usage == 12
    assert e[12].cpu_memory_usage == 12  # its own thread's allocation only
    # The free at 12_500 lies in no range: a [memory] event of its own.
    loose = [x for x in events if x.name == "[memory]"]
    assert [(x.id, x.thread, x.fwd_thread, x.cpu_memory_usage) for x in loose] == [(13, 1, 1, -12)]
    assert loose[0].time_range.start == loose[0].time_range.end == 11.5
    assert loose[0].trace_name is None
    assert len(allocations) == 6 and (24.5, 2, 12) in allocations


def test_unrecorded_shapes_are_empty_lists():
    events, _ = parsed([raw(1, "aten::mul", "cpu_op", 0, 10)])
    (e,) = events
    assert e.input_shapes == [] and e.input_dtypes == [] and e.structured_input_strides == []
    assert e.stack == [] and e.concrete_inputs == [] and e.flops == 0


def test_hidden_and_renamed_events():
    events, _ = parsed(
        [
            raw(1, "aten::_version", "cpu_op", 0, 10),
            raw(2, "ProfilerStep#3", "user_annotation", 20, 30),
        ]
    )
    assert [(e.name, e.trace_name) for e in events] == [("ProfilerStep*", "ProfilerStep#3")]


def test_equal_ranges_nest_in_start_order():
    # Two ranges with the same times (a coarse clock): the one that started first is
    # the parent, whatever order the recorder returned them in.
    events, _ = parsed(
        [raw(2, "aten::empty", "cpu_op", 5, 9), raw(1, "aten::zeros", "cpu_op", 5, 9)]
    )
    assert [e.name for e in events] == ["aten::zeros", "aten::empty"]
    assert events[1].cpu_parent is events[0]


@pytest.mark.parametrize(
    "name, shapes, flops",
    [
        ("aten::mm", [[20, 30], [30, 40]], 48000),  # C384
        ("aten::addmm", [[40], [20, 30], [30, 40]], 48000),
        ("aten::bmm", [[2, 3, 4], [2, 4, 5]], 240),
        ("aten::baddbmm", [[2, 3, 5], [2, 3, 4], [2, 4, 5]], 240),
        ("aten::mul", [[3], [2, 3]], 3),  # first input's elements, as torch
        ("aten::add", [[2, 3], [3]], 6),
        ("aten::mul_", [[3], [3]], 0),
        ("aten::matmul", [[20, 30], [30, 40]], 0),
        ("aten::mm", [[20, 30]], 0),
        ("aten::mm", [[20], [20]], 0),
    ],
)
def test_flops_as_torch_counts_them(name, shapes, flops):
    assert compute_flops(name, shapes) == flops


def test_flops_only_with_flops():
    mm = [raw(1, "aten::mm", "cpu_op", 0, 10, shapes=[[20, 30], [30, 40]])]
    assert parsed(mm)[0][0].flops == 0
    assert parsed(mm, with_flops=True)[0][0].flops == 48000


def test_timeout_returns_partial_results(caplog):
    with caplog.at_level(logging.WARNING):
        events, _ = parsed(timeout_s=0)
    assert len(events) == 0
    assert "timed out" in caplog.text


def test_deep_nesting_stays_iterative(tmp_path):
    depth = sys.getrecursionlimit() + 500
    deep = [raw(i + 1, f"level{i % 7}", "cpu_op", i, 10 * depth - i) for i in range(depth)]
    deep.append(alloc(depth + 1, depth, 8))
    events, _ = parsed(deep, profile_memory=True)
    assert len(events) == depth
    assert events[-1].cpu_parent is events[-2]
    assert events[0].cpu_memory_usage == 8 and events[-1].self_cpu_memory_usage == 8
    assert len(events.key_averages()) == 7
    assert events.table(row_limit=3).count("\n") == 8
    events.export_flamegraph(str(tmp_path / "deep.svg"))
    ET.parse(tmp_path / "deep.svg")
    events.export_chrome_trace(str(tmp_path / "deep.json"))
    assert len(json.loads((tmp_path / "deep.json").read_text())["traceEvents"]) > depth


# ---- Chrome trace -------------------------------------------------------------------


def _trace(tmp_path, events=STEP, **kw):
    evts, allocations = parsed(events, **kw)
    from ferrograd.autograd._profiler_trace import TraceContext

    evts._trace_context = TraceContext(
        unix_start_ns=1_700_000_000_123_456_789,
        duration_us=40.0,
        trace_id="ABC",
        memory=allocations,
    )
    path = tmp_path / "trace.json"
    evts.export_chrome_trace(str(path))
    return json.loads(path.read_text()), str(path)


def test_trace_top_level(tmp_path):
    # C401
    trace, path = _trace(tmp_path)
    assert list(trace) == [
        "schemaVersion", "deviceProperties", "trace_id", "host_name", "displayTimeUnit",
        "baseTimeNanoseconds", "traceEvents", "traceName",
    ]  # fmt: skip
    assert trace["schemaVersion"] == 1 and trace["displayTimeUnit"] == "ms"
    assert trace["traceName"] == path and trace["trace_id"] == "ABC"
    assert trace["baseTimeNanoseconds"] == 1_700_000_000_000_000_000


def test_trace_events(tmp_path):
    # C399 / C400: every event has name/ph/ts/pid/tid; X events dur and cat; shapes.
    trace, _ = _trace(tmp_path)
    events = trace["traceEvents"]
    for evt in events:
        assert {"name", "ph", "ts", "pid", "tid"} <= set(evt)
    ops = {e["args"]["External id"]: e for e in events if e["ph"] == "X" and e["cat"] != "Trace"}
    assert sorted(ops) == [1, 3, 4, 8, 9, 10, 12]
    assert ops[3]["cat"] == "user_annotation" and ops[3]["name"] == "block"
    assert ops[3]["args"]["Concrete Inputs"] == ["epoch=1"]
    assert all(ops[i]["cat"] == "cpu_op" for i in (1, 4, 8, 9, 10, 12))
    mul = ops[1]
    # ts is in us from baseTimeNanoseconds: 0.123456789 s after it, plus 1 us.
    assert mul["ts"] == pytest.approx(123456.789 + 1.0)
    assert mul["dur"] == 4.0
    assert mul["args"]["Input Dims"] == [[3], [3]]
    assert mul["args"]["Input type"] == ["float", "float"]
    assert mul["args"]["Input Strides"] == [[1], [1]]
    assert mul["args"]["Sequence number"] == 4 and mul["args"]["Fwd thread id"] == 0
    assert ops[9]["args"]["Fwd thread id"] == 1
    assert "Sequence number" not in ops[4]["args"]
    assert ops[12]["tid"] == 2
    threads = {e["tid"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert threads == {1, 2}
    span = next(e for e in events if e.get("cat") == "Trace")
    assert span["dur"] == 40.0


def test_trace_without_shapes_has_no_input_args(tmp_path):
    # C400: the shape keys come only with record_shapes.
    trace, _ = _trace(tmp_path, [raw(1, "aten::mul", "cpu_op", 2_000, 6_000)])
    (op,) = [e for e in trace["traceEvents"] if e.get("cat") == "cpu_op"]
    assert not {"Input Dims", "Input type", "Input Strides"} & set(op["args"])


def test_trace_forward_backward_flows(tmp_path):
    # C402: one s/f pair per (forward op, backward node) with the same id.
    trace, _ = _trace(tmp_path)
    events = trace["traceEvents"]
    flows = [e for e in events if e.get("cat") == "fwdbwd"]
    assert [f["ph"] for f in flows] == ["s", "f"]
    start, finish = flows
    assert start["id"] == finish["id"] and finish["bp"] == "e"
    ops = {e["args"]["External id"]: e for e in events if e.get("cat") == "cpu_op"}
    assert start["ts"] == ops[1]["ts"] and start["tid"] == ops[1]["tid"]
    assert finish["ts"] == ops[9]["ts"]  # the node itself, not the engine's wrapper


def test_trace_memory_instants(tmp_path):
    trace, _ = _trace(tmp_path, profile_memory=True)
    mem = [e for e in trace["traceEvents"] if e["name"] == "[memory]"]
    assert [e["ph"] for e in mem] == ["i"] * 6
    assert [e["args"]["Bytes"] for e in mem] == [12, 12, -12, -12, 12, 12]
    assert [e["args"]["Total Allocated"] for e in mem] == [12, 24, 12, 0, 12, 24]


# ---- flame graph --------------------------------------------------------------------


def _svg_frames(path):
    root = ET.parse(path).getroot()
    assert root.tag == SVG + "svg"
    frames = []
    for g in root.iter(SVG + "g"):
        title = g.find(SVG + "title").text
        rect = g.find(SVG + "rect")
        frames.append((title, float(rect.get("x")), float(rect.get("width"))))
    return frames


def test_flamegraph_names_ops_forward_and_backward(tmp_path):
    events, _ = parsed()
    path = tmp_path / "flame.svg"
    events.export_flamegraph(str(path))
    frames = _svg_frames(path)
    names = {t.split(":")[0] if not t.startswith("autograd") else t for t, _, _ in frames}
    titles = " ".join(t for t, _, _ in frames)
    for op in (
        "aten::mul",
        "aten::add",
        "block",
        "MulBackward0",
        "AccumulateGrad",
        "autograd::engine::evaluate_function: MulBackward0",
        "thread 1",
        "thread 2",
    ):
        assert op in titles, op  # fmt: skip
    assert names
    widths = {t.split(":")[0]: w for t, _, w in frames}
    # thread 1 recorded 4 + 5 + 10 us; the engine wrapper (10 us) is half of it.
    assert widths["thread 1"] == pytest.approx(1180)
    backward = next(w for t, _, w in frames if t.startswith("autograd::engine"))
    assert backward == pytest.approx(1180 * 10 / 19, abs=0.01)
    muls = sorted(t for t, _, _ in frames if t.startswith("aten::mul"))
    assert muls == [
        "aten::mul: 4.000us (21.05%), self 4.000us, 1 call",  # forward, at the bottom
        "aten::mul: 7.000us (36.84%), self 7.000us, 1 call",  # under MulBackward0
    ]


def test_flamegraph_merges_repeated_calls_and_escapes(tmp_path):
    events, _ = parsed(
        [
            raw(1, "step<A&B>", "user_annotation", 0, 10_000),
            raw(2, "aten::mul", "cpu_op", 1_000, 2_000),
            raw(3, "aten::mul", "cpu_op", 3_000, 5_000),
        ]
    )
    path = tmp_path / "flame.svg"
    events.export_flamegraph(str(path))
    titles = [t for t, _, _ in _svg_frames(path)]
    assert any(t.startswith("step<A&B>: 10.000us") for t in titles)
    muls = [t for t in titles if t.startswith("aten::mul")]
    assert muls == ["aten::mul: 3.000us (30.00%), self 3.000us, 2 calls"]


def test_flamegraph_of_nothing_is_valid(tmp_path):
    events, _ = parsed([])
    events.export_flamegraph(str(tmp_path / "empty.svg"))
    assert _svg_frames(tmp_path / "empty.svg") == []


# ---- profile / record_function lifecycle on a stand-in recorder ---------------------


class FakeRecorder:
    """Records what profile / record_function ask of ferrograd._C and answers with
    canned raw events."""

    def __init__(self, events=STEP):
        self.events = list(events)
        self.calls = []
        self.active = False
        self.next_handle = 100

    def _profiler_start(self, record_shapes, profile_memory, with_stack):
        if self.active:
            raise RuntimeError("profiler already running")
        self.calls.append(("start", record_shapes, profile_memory, with_stack))
        self.active = True

    def _profiler_stop(self):
        self.calls.append(("stop",))
        self.active = False
        return list(self.events), 1_000, 1_700_000_000_000_000_000

    def _profiler_active(self):
        return self.active

    def _record_function_enter(self, name, args=None):
        self.next_handle += 1
        self.calls.append(("enter", name, args, self.next_handle))
        return self.next_handle if self.active else 0

    def _record_function_exit(self, handle):
        self.calls.append(("exit", handle))


@pytest.fixture
def fake(monkeypatch):
    recorder = FakeRecorder()
    monkeypatch.setattr(profiler, "_C", recorder)
    return recorder


def test_profile_starts_with_its_options(fake):
    with profiler.profile(with_flops=True, profile_memory=True, with_stack=True) as prof:
        assert fake.active
    assert fake.calls == [("start", True, True, True), ("stop",)]
    assert prof.record_shapes


def test_processing_is_lazy(fake, monkeypatch):
    with profiler.profile() as prof:
        assert repr(prof) == str(prof) == "<unfinished torch.autograd.profile>"
    assert prof._function_events is None
    events = prof.function_events
    assert prof.function_events is events
    assert [e.name for e in events][:2] == ["aten::mul", "block"]
    assert repr(prof) == repr(events)


def test_exception_in_body_still_stops(fake):
    with pytest.raises(ValueError):
        with profiler.profile():
            raise ValueError("boom")
    assert fake.calls[-1] == ("stop",) and not fake.active
    assert profiler._sessions == 0


def test_acc_events_keeps_earlier_sessions(fake):
    prof = profiler.profile(acc_events=True)
    prof.__enter__()
    prof.__exit__(None, None, None)
    assert len(prof._function_events) == 8  # processed on exit
    prof._start_trace()
    prof.__exit__(None, None, None)
    assert len(prof.function_events) == 16
    assert [c[0] for c in fake.calls] == ["start", "stop", "start", "stop"]


def test_trace_only(fake, tmp_path):
    config = profiler._ExperimentalConfig(trace_only=True)
    with profiler.profile(experimental_config=config) as prof:
        pass
    message = re.escape(profiler._TRACE_ONLY_ERROR)
    for use in (lambda: prof.function_events, prof.key_averages, prof.table, lambda: repr(prof)):
        with pytest.raises(RuntimeError, match=message):
            use()
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    assert json.loads((tmp_path / "t.json").read_text())["traceEvents"]


def test_trace_only_with_stack_warns():
    config = profiler._ExperimentalConfig(trace_only=True)
    with pytest.warns(UserWarning, match="trace_only=True is incompatible with with_stack=True"):
        prof = profiler.profile(experimental_config=config, with_stack=True)
    assert not prof.experimental_config.trace_only and config.trace_only


def test_trace_ids(fake, tmp_path):
    with profiler.profile() as prof:
        pass
    assert re.fullmatch("[0-9A-F]{32}", prof.trace_id)
    with profiler.profile(custom_trace_id_callback=lambda: "my-trace") as prof:
        pass
    prof.export_chrome_trace(str(tmp_path / "t.json"), metadata={"run": "7"})
    trace = json.loads((tmp_path / "t.json").read_text())
    assert trace["trace_id"] == "my-trace" and trace["run"] == "7"
    assert trace["baseTimeNanoseconds"] == 1_700_000_000_000_000_000
    assert sum(e["name"] == "[memory]" for e in trace["traceEvents"]) == 6


def test_accumulate_grad_gets_no_forward_stack():
    # Its sequence number is -1: it must not take the stack of some -1 forward event.
    events, _ = parsed(
        [
            raw(1, "aten::ones", "cpu_op", 0, 10, stack=["m.py(2): make"]),
            raw(2, "torch::autograd::AccumulateGrad", "backward", 20, 30, fwd=1),
        ]
    )
    assert [e.stack for e in events] == [["m.py(2): make"], []]


def test_export_stacks_and_flamegraph_from_profile(fake, tmp_path):
    with profiler.profile() as prof:
        pass
    with pytest.raises(AssertionError, match=r"export_stacks\(\) requires with_stack=True"):
        prof.export_stacks(str(tmp_path / "s.txt"))
    with profiler.profile(with_stack=True) as prof:
        pass
    prof.export_stacks(str(tmp_path / "s.txt"))
    lines = (tmp_path / "s.txt").read_text().splitlines()
    # The forward mul (4 us) and, through the backward node's sequence number, the
    # backward work under MulBackward0 (1.5 + 7 us) are charged to the forward line.
    assert lines == ["m.py(9):_<module>;m.py(3):_f 4", "m.py(9):_<module>;m.py(3):_f 1",
                     "m.py(9):_<module>;m.py(3):_f 7"]  # fmt: skip
    prof.export_flamegraph(str(tmp_path / "f.svg"))
    assert "MulBackward0" in (tmp_path / "f.svg").read_text()


def test_empty_session(fake):
    fake.events = []
    with profiler.profile() as prof:
        pass
    assert len(prof.function_events) == 0
    assert prof.table() == ""
    assert prof.self_cpu_time_total == 0


def test_record_function_handles(fake):
    with profiler.profile():
        with profiler.record_function("outer", "a=1") as rf:
            assert rf.record == 101
    assert ("enter", "outer", "a=1", 101) in fake.calls and ("exit", 101) in fake.calls


def test_record_function_outside_profiling_skips_the_recorder(fake):
    with profiler.record_function("idle") as rf:
        pass
    assert rf.record == 0 and fake.calls == []


def test_record_function_decorator_gets_a_handle_per_call(fake):
    @profiler.record_function("fib")
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    with profiler.profile():
        assert fib(4) == 3
    enters = [c[3] for c in fake.calls if c[0] == "enter"]
    exits = [c[1] for c in fake.calls if c[0] == "exit"]
    assert len(enters) == 9 and sorted(exits) == sorted(enters)
    assert fib.__name__ == "fib"


def test_end_callbacks_on_future(fake):
    import concurrent.futures

    with profiler.profile():
        fut = concurrent.futures.Future()
        with profiler.record_function("rpc") as rf:
            out = rf._call_end_callbacks_on_future(fut)
        handle = rf.record
        assert ("exit", handle) not in fake.calls  # still open after the block
        with pytest.raises(
            RuntimeError, match=r"_call_end_callbacks_on_future can only be called once\."
        ):
            rf._call_end_callbacks_on_future(fut)
        fut.set_result(5)
        assert ("exit", handle) in fake.calls
        assert out.result(timeout=1) == 5


def test_end_callbacks_on_then_future(fake):
    class ThenFuture:
        def __init__(self):
            self.callbacks = []

        def then(self, cb):
            self.callbacks.append(cb)
            return "chained"

        def value(self):
            return 9

    fut = ThenFuture()
    with profiler.profile():
        with profiler.record_function("rpc") as rf:
            assert rf._call_end_callbacks_on_future(fut) == "chained"
        assert fut.callbacks[0](fut) == 9
    assert ("exit", rf.record) in fake.calls


def test_profile_repr_when_disabled():
    assert repr(profiler.profile(enabled=False)) == "<unfinished torch.autograd.profile>"


def test_import_ferrograd_leaves_the_profiler_for_later():
    # The profiler costs tens of ms to import; `import ferrograd` must not pay it, and
    # `ferrograd.autograd.profiler` still works as an attribute, as in torch.
    code = (
        "import sys, ferrograd\n"
        "assert not [m for m in sys.modules if 'profiler' in m], sys.modules\n"
        "p = ferrograd.autograd.profiler\n"
        "assert p.profile and ferrograd.autograd.profiler_util.EventList\n"
        "assert ferrograd.autograd.kineto_available() is False\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
