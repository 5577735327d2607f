"""The profiler's result types and their text formats, on hand-built events.

Every event list here is built with torch's ``FunctionEvent`` keywords, so the same file
runs against torch (``/root/torchvenv/bin/python tests/run_profiler_on_torch.py``); the
expected tables in profiler_expected_tables.txt were printed by torch's own ``table``
for these lists (``run_profiler_on_torch.py --write-goldens``) and are compared
character for character. Times are fixed numbers, so the texts are deterministic.
"""

import inspect
import re
from pathlib import Path

import pytest

from ferrograd.autograd import profiler_util
from ferrograd.autograd.profiler_util import EventList, FunctionEvent, FunctionEventAvg

GOLDEN_FILE = "profiler_expected_tables.txt"
GOLDEN_MARKER = "#### case: "


def _ev(id, name, start, end, thread=1, **kw):
    # torch's own defaults (stack None, flops None) break its table and key_averages on
    # hand-built events, so give what recorded events have.
    kw.setdefault("stack", [])
    kw.setdefault("input_shapes", [])
    kw.setdefault("flops", 0)
    kw.setdefault("overload_name", "")
    return FunctionEvent(id=id, name=name, thread=thread, start_us=start, end_us=end, **kw)


def _built(events, **kw):
    result = EventList(events, **kw)
    result._build_tree()
    return result


LONG_LABEL = "a_very_long_user_label_that_does_not_fit_in_the_name_column_at_all"


def training_step(profile_memory=False, with_flops=False):
    """A forward (mm, mul, a user block with add/empty), a backward on the same thread
    (engine wrapper > node > op) and one on an engine thread; times cover us/ms/s."""
    return _built(
        [
            _ev(1, "aten::mm", 0.0, 1500.5, input_shapes=[[20, 30], [30, 40]],
                cpu_memory_usage=3200, flops=48000, sequence_nr=0, fwd_thread=0),
            _ev(2, "aten::resolve_conj", 10.0, 12.25, input_shapes=[[20, 30]]),
            _ev(3, "aten::mul", 1600.0, 1650.125, input_shapes=[[20, 40], []],
                cpu_memory_usage=3200, flops=1600, sequence_nr=1, fwd_thread=0),
            _ev(4, "my_block", 1700.0, 2_500_000.0, is_user_annotation=True, scope=7,
                cpu_memory_usage=-4096),
            _ev(5, "aten::add", 1800.0, 1850.0, input_shapes=[[20, 40], [20, 40], []],
                cpu_memory_usage=3200, flops=1600),
            _ev(6, "aten::empty", 1900.0, 1901.0, input_shapes=[[], [], []],
                cpu_memory_usage=2 * 1024 * 1024),
            _ev(7, "autograd::engine::evaluate_function: MulBackward0", 2_600_000.0,
                2_600_300.0, sequence_nr=1, fwd_thread=1),
            _ev(8, "MulBackward0", 2_600_010.0, 2_600_290.0, sequence_nr=1, fwd_thread=1,
                scope=1, input_shapes=[[20, 40]]),
            _ev(9, "aten::mul", 2_600_020.0, 2_600_280.0, input_shapes=[[20, 40], []],
                cpu_memory_usage=3200, flops=1600),
            _ev(10, "torch::autograd::AccumulateGrad", 2_600_100.0, 2_600_150.0, thread=2,
                fwd_thread=0, scope=1),
            _ev(11, LONG_LABEL, 2_700_000.0, 2_700_001.5, is_user_annotation=True, scope=7),
        ],
        profile_memory=profile_memory,
        with_flops=with_flops,
    )  # fmt: skip


def with_stacks():
    return _built(
        [
            _ev(1, "aten::mul", 0.0, 10.0,
                stack=["train.py(12): forward", "train.py(40): main", "train.py(99): <module>"]),
            _ev(2, "aten::add", 20.0, 25.0, stack=["a/rather/long/path/to/the/model.py(7): f"]),
            _ev(3, "aten::sum", 30.0, 31.0),
        ]
    )  # fmt: skip


def with_overloads():
    return _built(
        [
            _ev(1, "aten::add", 0.0, 10.0, overload_name="Tensor"),
            _ev(2, "aten::add", 20.0, 22.0, overload_name="out"),
            _ev(3, "aten::add", 30.0, 33.0, overload_name="Tensor"),
        ]
    )


def with_device_time(profile_memory=False):
    """Legacy-style events carrying device kernels (what use_device="cuda" gives torch's
    fallback profiler): the device columns and total line."""
    mm = _ev(
        1,
        "aten::mm",
        0.0,
        100.0,
        use_device="cuda",
        is_legacy=True,
        device_memory_usage=2048,
        cpu_memory_usage=512,
    )
    add = _ev(2, "aten::add", 200.0, 210.0, use_device="cuda", is_legacy=True)
    mm.append_kernel("gemm", 0, 80.0)
    add.append_kernel("add_kernel", 0, 5.5)
    return _built([mm, add], use_device="cuda", profile_memory=profile_memory)  # fmt: skip


TABLE_CASES = {
    "events": lambda: training_step().table(),
    "events_memory": lambda: training_step(profile_memory=True).table(),
    "averages": lambda: training_step().key_averages().table(),
    "averages_sorted": lambda: training_step().key_averages().table(sort_by="self_cpu_time_total"),
    "averages_by_shape": lambda: (
        training_step().key_averages(group_by_input_shapes=True).table(sort_by="count")
    ),
    "averages_memory_sorted": lambda: (
        training_step(profile_memory=True).key_averages().table(sort_by="self_cpu_memory_usage")
    ),
    "row_limit_header": lambda: training_step().key_averages().table(row_limit=3, header="HDR"),
    "top_level_ms": lambda: training_step().table(top_level_events_only=True, time_unit="ms"),
    "time_unit_s": lambda: training_step().key_averages().table(time_unit="s"),
    "time_unit_us": lambda: training_step().key_averages().table(time_unit="us"),
    "narrow_columns": lambda: training_step().table(
        max_name_column_width=20, max_shapes_column_width=12
    ),
    "flops": lambda: training_step(with_flops=True).key_averages().table(),
    "flops_events": lambda: training_step(with_flops=True).table(row_limit=4),
    "stacks": lambda: with_stacks().table(max_src_column_width=25),
    "overloads": lambda: with_overloads().table(),
    "overloads_grouped": lambda: with_overloads().key_averages(group_by_overload_name=True).table(),
    "device": lambda: with_device_time().table(),
    "device_memory_averages": lambda: with_device_time(True).key_averages().table(),
    "empty": lambda: _built([]).table(),
}


def _goldens():
    text = (Path(__file__).resolve().parent / GOLDEN_FILE).read_text()
    cases = {}
    for chunk in text.split(GOLDEN_MARKER)[1:]:
        name, _, table = chunk.partition("\n")
        cases[name] = table
    return cases


@pytest.mark.parametrize("case", sorted(TABLE_CASES))
def test_table_matches_torch(case):
    # C391-C396: torch's exact layout (columns, widths, alignment, units, clipping,
    # optional columns, header / top-level / row-limit forms).
    assert TABLE_CASES[case]() == _goldens()[case]


def test_golden_cases_cover_every_table_case():
    assert sorted(_goldens()) == sorted(TABLE_CASES)


def _rows(table):
    return table.splitlines()


def test_table_header_columns_and_total_line():
    # C391
    lines = _rows(training_step().key_averages().table())
    titles = re.split(r"\s{2,}", lines[1].strip())
    assert titles == [
        "Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"
    ]  # fmt: skip
    assert set(lines[0]) == {"-", " "} and lines[0] == lines[2] == lines[-2]
    assert re.fullmatch(r"Self CPU time total: \d+\.\d{3}(us|ms|s)", lines[-1])


def test_table_row_limit_one_has_six_lines():
    # C392
    table = training_step().key_averages().table(row_limit=1)
    assert len(table.splitlines()) == 6
    assert table.endswith("\n")


def test_table_sort_by_and_unknown_key():
    # C393
    avgs = training_step().key_averages()
    table = avgs.table(sort_by="self_cpu_time_total")
    names = [re.split(r"\s{2,}", r.strip())[0] for r in _rows(table)[3:-2]]
    expected = sorted(avgs, key=lambda e: e.self_cpu_time_total, reverse=True)
    assert names == [e.key[:52] + "..." if len(e.key) >= 52 else e.key for e in expected]
    with pytest.raises(AttributeError, match="'FunctionEventAvg' object has no attribute 'bogus'"):
        avgs.table(sort_by="bogus")


def test_cuda_sort_keys_read_as_device():
    # C393: `cuda_time_total` etc. sort by the device_* attributes (no warning).
    avgs = training_step().key_averages()
    assert avgs.table(sort_by="cuda_time_total") == avgs.table(sort_by="device_time_total")
    assert avgs.table(sort_by="self_xpu_time_total") == avgs.table(sort_by="self_device_time_total")


@pytest.mark.parametrize(
    "us, text",
    [(123.456, "123.456us"), (0.0, "0.000us"), (1207.0, "1.207ms"), (999.9994, "999.999us"),
     (1_000_000.0, "1.000s"), (2_500_000.0, "2.500s")],
)  # fmt: skip
def test_time_format(us, text):
    # C394
    assert profiler_util._format_time(us) == text


def test_share_and_memory_formats():
    # C394
    assert profiler_util._format_time_share(56.21, 100.0) == "56.21%"
    assert profiler_util._format_time_share(0, 0) == "NaN"
    assert profiler_util._format_memory(4000) == "3.91 KB"
    assert profiler_util._format_memory(512) == "512 B"
    assert profiler_util._format_memory(-4096) == "-4.00 KB"
    assert profiler_util._format_memory(3 * 1024**2) == "3.00 MB"
    assert profiler_util._format_memory(5 * 1024**3) == "5.00 GB"


def test_device_data_without_use_device():
    # §1.4: device time in a list whose first event names no device.
    plain = _ev(1, "aten::ones", 0.0, 1.0)
    timed = _ev(2, "aten::mm", 5.0, 9.0, use_device="cuda", is_legacy=True)
    timed.append_kernel("gemm", 0, 2.0)
    with pytest.raises(RuntimeError, match="^use_device is None, but there is device performance"):
        _built([plain, timed]).table()


def test_optional_columns():
    # C395
    plain = _rows(training_step().key_averages().table())[1]
    assert "Input Shapes" not in plain and "CPU Mem" not in plain and "FLOPs" not in plain
    shapes = _rows(training_step().table())[1]
    assert "Input Shapes" in shapes
    mem = _rows(training_step(profile_memory=True).key_averages().table())[1]
    assert "  CPU Mem  Self CPU Mem  " in mem
    flops = _rows(training_step(with_flops=True).key_averages().table())
    assert flops[1].rstrip().endswith("Total KFLOPs")
    resolve = next(r for r in flops if "aten::resolve_conj" in r)
    assert resolve.rstrip().endswith("--")
    mm = next(r for r in flops if "aten::mm" in r)
    assert mm.rstrip().endswith("48.000")


def test_long_names_are_cut():
    # C396
    table = training_step().key_averages().table(max_name_column_width=30)
    assert LONG_LABEL[:27] + "..." in table
    assert LONG_LABEL not in table
    # A name of exactly width-3 characters is cut too (torch cuts at >= width - 3).
    assert "torch::autograd::AccumulateGrad"[:27] + "..." in table


def test_total_average_and_self_cpu_time_total():
    # C397
    events = training_step()
    total = events.total_average()
    assert isinstance(total, FunctionEventAvg)
    assert total.key == "Total"
    assert total.count == len(events)
    assert total.self_cpu_time_total == pytest.approx(events.self_cpu_time_total)
    assert isinstance(events.self_cpu_time_total, float)


def test_key_averages_counts_and_grouping():
    # C389 / C390 on hand-built events: one row per name, or per (name, shapes).
    avgs = training_step().key_averages()
    counts = {a.key: a.count for a in avgs}
    assert counts["aten::mul"] == 2 and counts["aten::mm"] == 1
    assert all(a.input_shapes == "" for a in avgs)
    by_shape = training_step().key_averages(group_by_input_shapes=True)
    muls = [a for a in by_shape if a.key == "aten::mul"]
    assert [(m.input_shapes, m.count) for m in muls] == [([[20, 40], []], 2)]
    adds = {str(a.input_shapes) for a in by_shape if a.key == "aten::add"}
    assert adds == {"[[20, 40], [20, 40], []]"}


def test_key_averages_by_stack_and_overload():
    events = with_stacks()
    by_stack = events.key_averages(group_by_stack_n=1)
    assert [a.stack for a in by_stack] == [
        ["train.py(12): forward"], ["a/rather/long/path/to/the/model.py(7): f"], []
    ]  # fmt: skip
    grouped = with_overloads().key_averages(group_by_overload_name=True)
    assert [(a.key, a.overload_name, a.count) for a in grouped] == [
        ("aten::add", "Tensor", 2),
        ("aten::add", "out", 1),
    ]
    merged = with_overloads().key_averages()
    assert [(a.overload_name, a.count) for a in merged] == [("", 3)]


def test_tree_self_times_and_memory():
    events = training_step(profile_memory=True)
    by_id = {e.id: e for e in events}
    assert [c.id for c in by_id[1].cpu_children] == [2]
    assert by_id[2].cpu_parent is by_id[1]
    assert [c.id for c in by_id[4].cpu_children] == [5, 6]
    assert by_id[4].self_cpu_time_total == pytest.approx(by_id[4].cpu_time_total - 50.0 - 1.0)
    assert by_id[4].self_cpu_memory_usage == -4096 - 3200 - 2 * 1024 * 1024
    # The engine thread's event nests in nothing on thread 1.
    assert by_id[10].cpu_parent is None


def test_backward_events_take_the_forward_stack():
    # torch charges work under a backward node to the forward op's Python line.
    events = _built(
        [
            _ev(1, "aten::mul", 0.0, 10.0, sequence_nr=3, fwd_thread=0, stack=["m.py(5): f"]),
            _ev(2, "MulBackward0", 20.0, 30.0, sequence_nr=3, fwd_thread=1, scope=1),
            _ev(3, "aten::mul", 21.0, 29.0, stack=["other"]),
        ]
    )
    assert [e.stack for e in events] == [["m.py(5): f"]] * 3


def test_duplicate_nested_names_are_folded():
    events = _built(
        [
            _ev(1, "aten::sum", 0.0, 10.0),
            _ev(2, "aten::sum", 1.0, 9.0),
            _ev(3, "aten::fill_", 2.0, 3.0),
        ]
    )
    assert [e.id for e in events] == [1, 3]
    assert events[1].cpu_parent is events[0]


def test_export_stacks_format(tmp_path):
    # C403 (format): outermost frame first, separators in frames replaced, int values.
    events = _built(
        [
            _ev(1, "aten::mul", 0.0, 10.7, stack=["m.py(5): inner", "m.py(9): outer fn"]),
            _ev(2, "aten::add", 20.0, 20.5, stack=["m.py(6): g"]),
            _ev(3, "aten::sum", 30.0, 33.0),
        ]
    )
    path = tmp_path / "stacks.txt"
    events.export_stacks(str(path), "self_cpu_time_total")
    assert path.read_text() == "m.py(9):_outer_fn;m.py(5):_inner 10\n"
    with pytest.raises(ValueError, match=r"metric should be one of: \['self_cpu_time_total'"):
        events.export_stacks(str(path), "cpu_time_total")


def test_function_event_attributes():
    # §1.3: the attributes every event has.
    evt = training_step()[0]
    for attr in (
        "id", "name", "key", "thread", "fwd_thread", "time_range", "count", "cpu_children",
        "cpu_parent", "input_shapes", "stack", "scope", "sequence_nr", "node_id",
        "device_type", "device_index", "is_async", "is_remote", "is_legacy",
        "is_user_annotation", "flops", "kernels", "trace_name", "overload_name",
        "cpu_memory_usage", "device_memory_usage", "cpu_time_total", "self_cpu_time_total",
        "device_time_total", "self_device_time_total", "cpu_time", "self_cpu_memory_usage",
        "cpu_time_str", "cpu_time_total_str", "self_cpu_time_total_str",
        "device_time_str", "device_time_total_str", "self_device_time_total_str",
    ):  # fmt: skip
        assert hasattr(evt, attr), attr
    assert evt.count == 1 and evt.node_id == -1
    assert evt.time_range.elapsed_us() == 1500.5
    assert evt.cpu_time == evt.cpu_time_total == 1500.5
    assert str(evt.device_type) == "DeviceType.CPU"
    assert repr(evt).startswith("<FunctionEvent id=1 name=aten::mm ")


def test_function_event_avg_attributes():
    # §1.4
    avg = training_step().key_averages()[0]
    for attr in (
        "key", "count", "node_id", "is_async", "is_remote", "use_device", "cpu_time_total",
        "device_time_total", "self_cpu_time_total", "self_device_time_total", "input_shapes",
        "overload_name", "stack", "scope", "cpu_memory_usage", "device_memory_usage",
        "self_cpu_memory_usage", "self_device_memory_usage", "cpu_children", "cpu_parent",
        "device_type", "is_legacy", "flops", "is_user_annotation", "cpu_time",
        "device_time", "cpu_time_str", "self_cpu_time_total_str",
    ):  # fmt: skip
        assert hasattr(avg, attr), attr
    assert repr(avg).startswith("<FunctionEventAvg key=aten::mm self_cpu_time=")


def test_interval_and_public_names():
    # §5
    for name in ("EventList", "FunctionEvent", "FunctionEventAvg", "Interval"):
        assert hasattr(profiler_util, name)
    assert profiler_util.Interval(2.0, 5.5).elapsed_us() == 3.5


def test_key_averages_signature():
    # C408
    params = inspect.signature(EventList.key_averages).parameters
    assert [(p, params[p].default) for p in list(params)[1:4]] == [
        ("group_by_input_shapes", False),
        ("group_by_stack_n", 0),
        ("group_by_overload_name", False),
    ]
    table = inspect.signature(EventList.table).parameters
    assert table["row_limit"].default == 100
    assert table["max_name_column_width"].default == 55
    assert table["max_src_column_width"].default == 75
    assert table["max_shapes_column_width"].default == 80
    assert table["time_unit"].default is None
