"""The profiler's result types: ``FunctionEvent`` (one recorded range), ``FunctionEventAvg``
(a group of them added up) and ``EventList`` (a list of either, with torch's analyses:
``key_averages``, ``table``, ``export_chrome_trace``, ``export_stacks``, and ferrograd's
``export_flamegraph``).

Times are microseconds (floats) relative to the start of the profiling session, as in
torch. The formatting, trace and flame-graph writers live in ``_profiler_table``,
``_profiler_trace`` and ``_profiler_flamegraph``; this file holds the data and the
tree (CPU parent/children) that everything else reads.
"""

import enum
import warnings
from collections import namedtuple

__all__ = [
    "DeviceType",
    "EventList",
    "FormattedTimesMixin",
    "Interval",
    "Kernel",
    "FunctionEvent",
    "FunctionEventAvg",
]

MEMORY_EVENT_NAME = "[memory]"
OUT_OF_MEMORY_EVENT_NAME = "[OutOfMemory]"

# Scopes of torch's RecordFunction that the analyses look at.
SCOPE_FUNCTION = 0
SCOPE_BACKWARD_FUNCTION = 1
SCOPE_USER = 7


class DeviceType(enum.Enum):
    """The device an event ran on (torch's ``c10::DeviceType`` values); every event
    ferrograd records is ``CPU``. ``str()`` gives ``DeviceType.CPU`` as in torch, which
    ``key_averages`` uses in its grouping key."""

    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    MTIA = 19
    PrivateUse1 = 20


# Device types whose events carry device (kernel) time rather than CPU time.
_DEVICE_TIME_TYPES = (
    DeviceType.CUDA,
    DeviceType.PrivateUse1,
    DeviceType.MTIA,
    DeviceType.HPU,
    DeviceType.XPU,
)

_US_PER_MS = 1000.0
_US_PER_S = 1000.0 * 1000.0


def _format_time(time_us):
    """``265.628us`` below a millisecond, ``1.207ms`` below a second, else ``1.000s``."""
    if time_us >= _US_PER_S:
        return f"{time_us / _US_PER_S:.3f}s"
    if time_us >= _US_PER_MS:
        return f"{time_us / _US_PER_MS:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_time_us):
    """A share of the total as ``56.21%``; ``NaN`` when nothing was measured at all."""
    if total_time_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_time_us:.2f}%"


def _format_memory(nbytes):
    """Bytes in 1024-based units with two decimals (``3.91 KB``); plain ``B`` below
    1 KB. Negative sizes (net frees) keep their sign."""
    size = abs(nbytes)
    for unit, scale in (("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if size >= scale:
            return f"{nbytes / scale:.2f} {unit}"
    return f"{nbytes} B"


def _time_property(attr):
    return property(lambda self: _format_time(getattr(self, attr)))


class FormattedTimesMixin:
    """Averages and ``*_str`` forms shared by FunctionEvent and FunctionEventAvg (the
    class provides ``count`` and the ``*_time_total`` values)."""

    cpu_time_str = _time_property("cpu_time")
    device_time_str = _time_property("device_time")
    cpu_time_total_str = _time_property("cpu_time_total")
    device_time_total_str = _time_property("device_time_total")
    self_cpu_time_total_str = _time_property("self_cpu_time_total")
    self_device_time_total_str = _time_property("self_device_time_total")

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self):
        return 0.0 if self.count == 0 else self.device_time_total / self.count

    @property
    def cuda_time(self):
        warnings.warn(
            "`cuda_time` is deprecated, please use `device_time` instead.",
            FutureWarning,
            stacklevel=2,
        )
        return self.device_time


class Interval:
    """A ``[start, end]`` range in microseconds."""

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start


Kernel = namedtuple("Kernel", ["name", "device", "duration"])


class FunctionEvent(FormattedTimesMixin):
    """One recorded range: an op, a backward node, an engine step, a ``record_function``
    block, or an allocation nobody's range covered (``[memory]``).

    The constructor takes torch's keywords, so events built by hand (or read from an
    nvprof file) behave like recorded ones. ``cpu_parent``/``cpu_children`` are filled
    in by ``EventList._build_tree``.
    """

    def __init__(
        self,
        id,
        name,
        thread,
        start_us,
        end_us,
        overload_name=None,
        fwd_thread=None,
        input_shapes=None,
        stack=None,
        scope=0,
        use_device=None,
        cpu_memory_usage=0,
        device_memory_usage=0,
        is_async=False,
        is_remote=False,
        sequence_nr=-1,
        node_id=-1,
        device_type=DeviceType.CPU,
        device_index=0,
        device_resource_id=None,
        is_legacy=False,
        flops=None,
        trace_name=None,
        concrete_inputs=None,
        kwinputs=None,
        is_user_annotation=False,
        is_python_function=False,
        structured_input_shapes=None,
        structured_input_strides=None,
        input_dtypes=None,
    ):
        self.id = id
        self.node_id = node_id
        self.name = name
        self.overload_name = overload_name
        self.trace_name = trace_name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = fwd_thread
        self.kernels = []
        self.count = 1
        self.cpu_children = []
        self.cpu_parent = None
        self.input_shapes = input_shapes
        self.concrete_inputs = concrete_inputs
        self.kwinputs = kwinputs
        self.stack = stack
        self.scope = scope
        self.use_device = use_device
        self.cpu_memory_usage = cpu_memory_usage
        self.device_memory_usage = device_memory_usage
        self.is_async = is_async
        self.is_remote = is_remote
        self.sequence_nr = sequence_nr
        self.device_type = device_type
        self.device_index = device_index
        self.device_resource_id = thread if device_resource_id is None else device_resource_id
        self.is_legacy = is_legacy
        self.flops = flops
        self.is_user_annotation = is_user_annotation
        self.is_python_function = is_python_function
        # Filled in by table() (torch exposes the last formatted shares here).
        self.self_cpu_percent = -1
        self.total_cpu_percent = -1
        self.total_device_percent = -1
        self.structured_input_shapes = structured_input_shapes
        self.structured_input_strides = structured_input_strides
        self.input_dtypes = input_dtypes

    def append_kernel(self, name, device, duration):
        if self.device_type != DeviceType.CPU:
            raise AssertionError("Expected device_type to be CPU")
        self.kernels.append(Kernel(name, device, duration))

    def append_cpu_child(self, child):
        """Add a direct child (only direct ones: self times subtract the children)."""
        if self.device_type != DeviceType.CPU:
            raise AssertionError("Expected device_type to be CPU")
        if not isinstance(child, FunctionEvent):
            raise AssertionError("Expected child to be a FunctionEvent")
        if child.device_type != DeviceType.CPU:
            raise AssertionError("Expected child device_type to be CPU")
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        """Set the innermost range that contains this one (one parent per event)."""
        if self.device_type != DeviceType.CPU:
            raise AssertionError("Expected device_type to be CPU")
        if not isinstance(parent, FunctionEvent):
            raise AssertionError("Expected parent to be a FunctionEvent")
        if parent.device_type != DeviceType.CPU:
            raise AssertionError("Expected parent device_type to be CPU")
        self.cpu_parent = parent

    # Async events have no children and take no part in other events' self values.
    def _is_sync_cpu(self):
        return not self.is_async and self.device_type == DeviceType.CPU

    @property
    def self_cpu_memory_usage(self):
        if not self._is_sync_cpu():
            return 0
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def self_device_memory_usage(self):
        if not self._is_sync_cpu():
            return 0
        return self.device_memory_usage - sum(c.device_memory_usage for c in self.cpu_children)

    @property
    def self_cuda_memory_usage(self):
        warnings.warn(
            "`self_cuda_memory_usage` is deprecated. Use `self_device_memory_usage` instead.",
            FutureWarning,
            stacklevel=2,
        )
        return self.self_device_memory_usage

    @property
    def cpu_time_total(self):
        if self.device_type != DeviceType.CPU:
            return 0
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        if not self._is_sync_cpu():
            return 0
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def device_time_total(self):
        if self.is_async or not self.use_device:
            return 0
        if self.device_type == DeviceType.CPU:
            own = sum(k.duration for k in self.kernels)
            if self.is_legacy:
                # A legacy CPU event carries one kernel standing for all of its device time.
                return own
            return own + sum(c.device_time_total for c in self.cpu_children)
        self._check_device_type()
        return self.time_range.elapsed_us()

    @property
    def cuda_time_total(self):
        warnings.warn(
            "`cuda_time_total` is deprecated. Use `device_time_total` instead.",
            FutureWarning,
            stacklevel=2,
        )
        return self.device_time_total

    @property
    def self_device_time_total(self):
        if self.is_async or not self.use_device:
            return 0
        if self.device_type == DeviceType.CPU:
            return self.device_time_total - sum(c.device_time_total for c in self.cpu_children)
        self._check_device_type()
        return self.device_time_total

    @property
    def self_cuda_time_total(self):
        warnings.warn(
            "`self_cuda_time_total` is deprecated. Use `self_device_time_total` instead.",
            FutureWarning,
            stacklevel=2,
        )
        return self.self_device_time_total

    def _check_device_type(self):
        if self.device_type not in _DEVICE_TIME_TYPES:
            raise AssertionError(
                "Expected device_type to be CUDA, PrivateUse1, MTIA, HPU or XPU, but got "
                f"{self.device_type}"
            )

    @property
    def key(self):
        return self.name

    def __repr__(self):
        dev = self.use_device
        return (
            f"<FunctionEvent id={self.id} name={self.name} "
            f"overload_name={self.overload_name} device_type={self.device_type} "
            f"node_id={self.node_id} cpu_time={self.cpu_time_str} "
            f"start_us={self.time_range.start} end_us={self.time_range.end} "
            f"cpu_children={[c.id for c in self.cpu_children]} "
            f"{dev}_time={self.device_time_str} name={self.name} thread={self.thread} "
            f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage} "
            f"{dev}_memory_usage={self.device_memory_usage} is_async={self.is_async} "
            f"is_remote={self.is_remote} seq_nr={self.sequence_nr} "
            f"is_legacy={self.is_legacy}>"
        )


class FunctionEventAvg(FormattedTimesMixin):
    """The sums over a group of events (``key_averages``, ``total_average``): times,
    memory and flops add up, ``count`` counts the events, and the descriptive fields
    (key, shapes, stack, parent, ...) come from the first event added."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device = None
        self.cpu_time_total = 0
        self.device_time_total = 0
        self.self_cpu_time_total = 0
        self.self_device_time_total = 0
        self.input_shapes = None
        self.overload_name = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.is_legacy = False
        self.flops = 0
        self.is_user_annotation = False

    _DESCRIPTIVE = (
        "key",
        "node_id",
        "is_async",
        "is_remote",
        "cpu_parent",
        "cpu_children",
        "overload_name",
        "input_shapes",
        "stack",
        "scope",
        "device_type",
        "is_legacy",
        "use_device",
        "is_user_annotation",
    )
    _SUMMED = (
        "cpu_time_total",
        "device_time_total",
        "self_cpu_time_total",
        "self_device_time_total",
        "cpu_memory_usage",
        "device_memory_usage",
        "self_cpu_memory_usage",
        "self_device_memory_usage",
        "count",
    )

    def add(self, other):
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise AssertionError("Expected other to be a FunctionEvent or FunctionEventAvg")
        if self.key is None:
            for attr in self._DESCRIPTIVE:
                setattr(self, attr, getattr(other, attr))
        if other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {other.key} vs {self.key}")
        for attr in self._SUMMED:
            setattr(self, attr, getattr(self, attr) + getattr(other, attr))
        if self.flops is None:
            self.flops = other.flops
        elif other.flops is not None:
            self.flops += other.flops
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self):
        dev = self.use_device or "cuda"
        return (
            f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
            f"cpu_time={self.cpu_time_str}  self_{dev}_time={self.self_device_time_total_str} "
            f"{dev}_time={self.device_time_str} input_shapes={self.input_shapes} "
            f"cpu_memory_usage={self.cpu_memory_usage} "
            f"{dev}_memory_usage={self.device_memory_usage}>"
        )


class EventList(list):
    """A list of FunctionEvents (or FunctionEventAvgs) with the profiler's analyses.

    ``use_device``, ``profile_memory`` and ``with_flops`` say which optional table
    columns apply. The profiler also attaches what a trace needs beyond the events
    (session start, trace id, allocations) as ``_trace_context``.
    """

    def __init__(self, *args, **kwargs):
        use_device = kwargs.pop("use_device", None)
        profile_memory = kwargs.pop("profile_memory", False)
        with_flops = kwargs.pop("with_flops", False)
        super().__init__(*args, **kwargs)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops
        self._tree_built = False
        self._trace_context = None

    def __str__(self):
        return self.table()

    # ---- the CPU tree -------------------------------------------------------------

    def _build_tree(self):
        self._populate_cpu_children()
        self._remove_dup_nodes()
        self._set_backward_stacktraces()
        self._tree_built = True

    def _populate_cpu_children(self):
        """Link each synchronous CPU event to the innermost event of its thread (and
        node) whose range contains it. Ranges on a thread nest, so a sweep in start
        order with one stack of open ranges per thread finds every parent in
        O(n log n); a range that only overlaps another is not its child."""
        ordered = sorted(
            (e for e in self if not e.is_async and e.device_type == DeviceType.CPU),
            key=lambda e: (e.time_range.start, -e.time_range.end),
        )
        open_ranges = {}
        for evt in ordered:
            stack = open_ranges.setdefault((evt.thread, evt.node_id), [])
            start, end = evt.time_range.start, evt.time_range.end
            while stack and (start >= stack[-1].time_range.end or end > stack[-1].time_range.end):
                stack.pop()
            if stack:
                parent = stack[-1]
                if evt.cpu_parent is not None:
                    raise AssertionError(f"There is already a CPU parent event for {evt.key}")
                parent.append_cpu_child(evt)
                evt.set_cpu_parent(parent)
            stack.append(evt)

    def _remove_dup_nodes(self):
        """Fold an event into its parent when the parent has the same name and no other
        child (a function recorded at two levels for one call, as torch folds it)."""
        while True:
            folded = set()
            for evt in self:
                parent = evt.cpu_parent
                if parent is None or parent.name != evt.name or len(parent.cpu_children) != 1:
                    continue
                parent.cpu_children = evt.cpu_children
                parent.kernels = evt.kernels
                for child in evt.cpu_children:
                    child.cpu_parent = parent
                folded.add(id(evt))
            if not folded:
                return
            self[:] = [e for e in self if id(e) not in folded]

    def _set_backward_stacktraces(self):
        """Everything run under a backward node gets the Python stack of the forward op
        that created the node (matched by sequence number and forward thread), so
        ``export_stacks`` charges backward time to the user's forward line."""
        owners = {}  # id(event) -> enclosing backward-node event, or None

        def backward_owner(evt):
            path = []
            cur = evt
            while cur is not None and id(cur) not in owners:
                if cur.scope == SCOPE_BACKWARD_FUNCTION:
                    owners[id(cur)] = cur
                    break
                path.append(cur)
                cur = cur.cpu_parent
            found = None if cur is None else owners[id(cur)]
            for e in path:
                owners[id(e)] = found
            return found

        forward_stacks = {}
        for evt in self:
            if backward_owner(evt) is None and evt.stack is not None:
                forward_stacks.setdefault((evt.sequence_nr, evt.thread), evt.stack)
        for evt in self:
            node = backward_owner(evt)
            if node is None:
                continue
            if node.fwd_thread is None:
                raise AssertionError("Expected fwd_thread to be set for backward parent")
            # A node without a sequence number (AccumulateGrad) has no forward op; torch
            # finds none for it either (its forward thread is 0, which records nothing).
            key = (node.sequence_nr, node.fwd_thread)
            evt.stack = forward_stacks.get(key, []) if node.sequence_nr >= 0 else []

    # ---- analyses -----------------------------------------------------------------

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(
        self, group_by_input_shapes=False, group_by_stack_n=0, group_by_overload_name=False
    ):
        """One FunctionEventAvg per key (plus node, device, legacy and annotation flags),
        optionally split further by input shapes, the top ``group_by_stack_n`` stack
        frames, and the overload name; rows keep the order of first appearance."""
        if not self._tree_built:
            raise AssertionError("Expected tree to be built before calling key_averages")
        groups = {}
        for evt in self:
            key = [
                str(evt.key),
                str(evt.node_id),
                str(evt.device_type),
                str(evt.is_legacy),
                str(evt.is_user_annotation),
            ]
            if group_by_overload_name:
                key.append(evt.overload_name)
            if group_by_input_shapes:
                key.append(str(evt.input_shapes))
            if group_by_stack_n > 0:
                key += evt.stack[:group_by_stack_n]
            key = tuple(key)
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg()
            avg.add(evt)
        result = EventList(
            groups.values(),
            use_device=self._use_device,
            profile_memory=self._profile_memory,
            with_flops=self._with_flops,
        )
        for avg in result:
            avg.stack = avg.stack[:group_by_stack_n]
            if not group_by_input_shapes:
                avg.input_shapes = ""
            if not group_by_overload_name:
                avg.overload_name = ""
        return result

    def total_average(self):
        """All events added into one FunctionEventAvg with key ``Total``."""
        total = FunctionEventAvg()
        for evt in self:
            # Each event is added as its own group: the sums are over all keys.
            total.key = None
            total.add(evt)
        total.key = "Total"
        return total

    # ---- output -------------------------------------------------------------------

    def table(
        self,
        sort_by=None,
        row_limit=100,
        max_src_column_width=75,
        max_name_column_width=55,
        max_shapes_column_width=80,
        header=None,
        top_level_events_only=False,
        time_unit=None,
    ):
        """The events as torch's text table. ``sort_by`` names any event attribute
        (``cpu_time_total``, ``self_cpu_memory_usage``, ``count``, ...; ``cuda``/``xpu``
        read as ``device``), sorted descending; ``time_unit`` (``s``, ``ms``, ``us``)
        forces one unit for every time."""
        from ._profiler_table import build_table

        return build_table(
            self,
            sort_by=sort_by,
            row_limit=row_limit,
            max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width,
            header=header,
            profile_memory=self._profile_memory,
            with_flops=self._with_flops,
            top_level_events_only=top_level_events_only,
            time_unit=time_unit,
        )

    def export_chrome_trace(self, path):
        """Write the events as a Chrome/Perfetto trace (JSON object form, see
        ``_profiler_trace``)."""
        from ._profiler_trace import write_chrome_trace

        write_chrome_trace(path, self, self._trace_context)

    def supported_export_stacks_metrics(self):
        return [
            "self_cpu_time_total",
            "self_cuda_time_total",
            "self_xpu_time_total",
            "self_privateuse1_time_total",
        ]

    def export_stacks(self, path, metric):
        """Write collapsed stacks (``outer;...;inner <value>``, one line per event with
        a stack and a nonzero value) for flame-graph tools."""
        from ._profiler_trace import write_stacks

        if metric not in self.supported_export_stacks_metrics():
            raise ValueError(
                "metric should be one of: " + str(self.supported_export_stacks_metrics())
            )
        write_stacks(path, self, metric)

    def export_flamegraph(self, path):
        """Write a self-contained SVG flame graph of the events (ferrograd's addition):
        one block per thread, frames stacked by nesting, widths by time share."""
        from ._profiler_flamegraph import write_flamegraph

        write_flamegraph(path, self)
