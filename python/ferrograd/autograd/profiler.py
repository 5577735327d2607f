"""``ferrograd.autograd.profiler``: torch's autograd profiler.

``profile`` starts the Rust recorder on entry (every op, backward node, engine step,
``record_function`` range and, with ``profile_memory``, allocation lands in a per-thread
buffer without touching Python) and stops it on exit. The raw events are turned into
``FunctionEvent``s only when results are first asked for (``function_events``,
``table``, ``key_averages``, ...), as in torch. ``record_function`` labels a block,
``emit_itt``/``emit_nvtx`` keep torch's API for external profilers, and
``load_nvprof`` reads an nvprof database back.
"""

import copy
import threading
import time
import uuid
import warnings

from .. import _C
from . import kineto_available
from ._profiler_events import events_from_raw
from ._profiler_nvprof import EnforceUnique, parse_nvprof_trace
from ._profiler_trace import TraceContext, write_chrome_trace
from .profiler_util import EventList, FunctionEvent

__all__ = [
    "profile",
    "record_function",
    "emit_itt",
    "emit_nvtx",
    "load_nvprof",
    "EnforceUnique",
    "parse_nvprof_trace",
    "EventList",
    "FunctionEvent",
    "kineto_available",
]

# Number of `profile` sessions running in this process. While it is 0, record_function
# skips the call into the recorder altogether (the no-op path stays a few attribute
# reads); sessions must therefore be started through `profile`, not `_C` directly.
_sessions = 0
_sessions_lock = threading.Lock()


def _session_started():
    global _sessions
    with _sessions_lock:
        _sessions += 1


def _session_stopped():
    global _sessions
    with _sessions_lock:
        _sessions -= 1


class _ExperimentalConfig:
    """Stand-in for torch's ``torch._C._profiler._ExperimentalConfig``: backend options
    with no compatibility promise. ferrograd reads only ``trace_only`` (skip building
    events; only ``export_chrome_trace`` works); other options are kept as attributes."""

    def __init__(self, *, trace_only=False, **options):
        self.trace_only = trace_only
        for name, value in options.items():
            setattr(self, name, value)


_TRACE_ONLY_ERROR = (
    "events() is not available when trace_only=True in ExperimentalConfig. "
    "Use export_chrome_trace() instead."
)

# Device options torch accepts, as its warnings spell them (availability is asked of the
# ferrograd module of the same name).
_DEVICE_MODULES = {"cuda": "CUDA", "xpu": "XPU", "hpu": "HPU", "mtia": "MTIA"}


def _device_available(name):
    import ferrograd

    module = getattr(ferrograd, name, None)
    return module is not None and module.is_available()


class profile:
    """Context manager that records the ops run inside it and holds the results.

    ``enabled=False`` makes it a no-op. ``record_shapes`` records input shapes, dtypes
    and strides; ``with_flops`` estimates FLOPs of matrix products and elementwise
    ``mul``/``add`` (implies ``record_shapes``); ``profile_memory`` records allocations
    and frees; ``with_stack`` records the Python stack of each op. ``use_device`` names
    a device to time as well (none is available in this build: it warns and profiles
    the CPU). ``acc_events`` keeps the events of earlier sessions of this object.
    ``post_processing_timeout_s`` bounds the time spent building events (partial
    results after it). ``use_kineto``, ``with_modules`` and ``activity_filters`` are
    accepted for compatibility. The object is not reentrant and profilers must not be
    nested.
    """

    def __init__(
        self,
        enabled=True,
        *,
        use_cuda=False,
        use_device=None,
        record_shapes=False,
        with_flops=False,
        profile_memory=False,
        with_stack=False,
        with_modules=False,
        use_kineto=False,
        use_cpu=True,
        experimental_config=None,
        acc_events=False,
        custom_trace_id_callback=None,
        post_processing_timeout_s=None,
        activity_filters=None,
    ):
        self.enabled = enabled
        self._function_events = None
        self._needs_processing = False
        if not enabled:
            return
        if use_cuda:
            warnings.warn(
                "The attribute `use_cuda` will be deprecated soon, please use "
                "``use_device = 'cuda'`` instead.",
                FutureWarning,
                stacklevel=2,
            )
            use_device = "cuda"
        self.use_device = use_device
        self._old_function_events = None
        self._session_events = None
        self._raw = None
        self._stop_unix_ns = 0
        self.entered = False
        self.record_shapes = record_shapes or with_flops
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.use_kineto = use_kineto
        self.use_cpu = use_cpu
        self.acc_events = acc_events
        if experimental_config is None:
            experimental_config = _ExperimentalConfig()
        if getattr(experimental_config, "trace_only", False) and with_stack:
            warnings.warn(
                "trace_only=True is incompatible with with_stack=True (stack traces require "
                "event post-processing). Disabling trace_only.",
                stacklevel=2,
            )
            experimental_config = copy.copy(experimental_config)
            experimental_config.trace_only = False
        self.experimental_config = experimental_config
        self.custom_trace_id_callback = custom_trace_id_callback
        self.post_processing_timeout_s = post_processing_timeout_s
        self.activity_filters = activity_filters or {}
        self.trace_id = ""
        self.profiling_start_time_ns = 0
        self.profiling_end_time_ns = 0
        if not use_cpu and not use_kineto:
            raise AssertionError("Device-only events supported only with Kineto (use_kineto=True)")
        self._check_device()
        if not use_cpu:
            # Without Kineto there is no device activity to record instead.
            raise AssertionError("No activities specified for the profiler")
        if post_processing_timeout_s is not None and post_processing_timeout_s < 0:
            raise ValueError("post_processing_timeout_s must be non-negative")

    def _check_device(self):
        device = self.use_device
        if device is None:
            return
        if device not in _DEVICE_MODULES:
            warnings.warn(f"The {device} is not a valid device option.", stacklevel=3)
            self.use_device = None
            return
        upper = _DEVICE_MODULES[device]
        if device == "mtia":
            # torch profiles MTIA only through Kineto's MTIA activity, which no build
            # of ferrograd has.
            raise AssertionError(
                "Legacy MTIA profiling is not supported. Requires use_kineto=True on MTIA devices."
            )
        if not _device_available(device):
            warnings.warn(f"{upper} is not available, disabling {upper} profiling", stacklevel=3)
            self.use_device = None

    def default_trace_id(self):
        return f"{uuid.uuid4().int:032X}"

    def create_trace_id(self):
        if self.custom_trace_id_callback:
            return self.custom_trace_id_callback()
        return self.default_trace_id()

    # ---- lifecycle ----------------------------------------------------------------

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self._prepare_trace()
        self._start_trace()
        return self

    def _prepare_trace(self):
        self.entered = True
        self.trace_id = self.create_trace_id()

    def _start_trace(self):
        self.entered = True
        _C._profiler_start(self.record_shapes, self.profile_memory, self.with_stack)
        _session_started()
        self.profiling_start_time_ns = time.perf_counter_ns()

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return None
        self._synchronize_device()
        if self._function_events and self.acc_events:
            self._old_function_events = self._function_events
        self._function_events = None
        self._needs_processing = True
        self.profiling_end_time_ns = time.perf_counter_ns()
        try:
            self._raw = _C._profiler_stop()
        finally:
            _session_stopped()
        self._stop_unix_ns = time.time_ns()
        if self.acc_events and not self._trace_only():
            self._ensure_function_events()
        return False

    def _synchronize_device(self):
        if not self.use_device:
            return
        import ferrograd

        sync = getattr(getattr(ferrograd, self.use_device, None), "synchronize", None)
        if sync is not None:
            sync()

    def _trace_only(self):
        return bool(getattr(self.experimental_config, "trace_only", False))

    def _describe(self, text):
        if self._needs_processing:
            self._ensure_function_events()
        if self._function_events is None:
            return "<unfinished torch.autograd.profile>"
        return text(self._function_events)

    def __repr__(self):
        return self._describe(repr)

    def __str__(self):
        return self._describe(str)

    # ---- results ------------------------------------------------------------------

    def _parse(self):
        """This session's events (tree built) with the context traces need."""
        if self._raw is None:
            events = EventList(
                [],
                use_device=self.use_device,
                profile_memory=self.profile_memory,
                with_flops=self.with_flops,
            )
            events._build_tree()
            events._trace_context = TraceContext(trace_id=self.trace_id)
            return events
        raw_events, start_ns, unix_start_ns = self._raw
        events, allocations = events_from_raw(
            raw_events,
            start_ns,
            use_device=self.use_device,
            profile_memory=self.profile_memory,
            with_flops=self.with_flops,
            timeout_s=self.post_processing_timeout_s,
        )
        duration_us = max(0.0, (self._stop_unix_ns - unix_start_ns) / 1000.0)
        events._trace_context = TraceContext(
            unix_start_ns=unix_start_ns,
            duration_us=duration_us,
            trace_id=self.trace_id,
            memory=allocations,
        )
        return events

    def _ensure_function_events(self):
        """Build the events on first use (post-processing is lazy, as in torch)."""
        if self._trace_only():
            raise RuntimeError(_TRACE_ONLY_ERROR)
        if self._function_events is not None:
            return
        self._needs_processing = False
        events = self._parse()
        self._session_events = events
        if self._old_function_events and self.acc_events:
            events = EventList(
                events,
                use_device=self.use_device,
                profile_memory=self.profile_memory,
                with_flops=self.with_flops,
            )
            events.extend(self._old_function_events)
            events._tree_built = True
            events._trace_context = self._session_events._trace_context
            self._old_function_events = None
        self._function_events = events

    def _results(self):
        self._ensure_function_events()
        if self._function_events is None:
            raise AssertionError("Expected profiling results")
        return self._function_events

    @property
    def function_events(self):
        if self._function_events is None or self._needs_processing:
            self._ensure_function_events()
        return self._function_events

    def table(
        self,
        sort_by=None,
        row_limit=100,
        max_src_column_width=75,
        max_name_column_width=55,
        max_shapes_column_width=80,
        header=None,
        top_level_events_only=False,
    ):
        return self._results().table(
            sort_by=sort_by,
            row_limit=row_limit,
            max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width,
            header=header,
            top_level_events_only=top_level_events_only,
        )

    table.__doc__ = EventList.table.__doc__

    def export_chrome_trace(self, path, metadata=None, use_python_export=False):
        """Write the last session as a Chrome/Perfetto JSON trace (object layout with
        ``traceEvents``); ``metadata`` entries are added to the top-level object."""
        if self._trace_only():
            events = self._parse()
        else:
            self._ensure_function_events()
            events = self._session_events
        write_chrome_trace(path, events, events._trace_context, metadata)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        events = self._results()
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        return events.export_stacks(path, metric)

    def export_flamegraph(self, path):
        """Write an SVG flame graph of the profile (ferrograd's addition; see
        ``EventList.export_flamegraph``)."""
        self._results().export_flamegraph(path)

    def key_averages(
        self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False
    ):
        return self._results().key_averages(
            group_by_input_shape, group_by_stack_n, group_by_overload_name
        )

    key_averages.__doc__ = EventList.key_averages.__doc__

    def total_average(self):
        return self._results().total_average()

    total_average.__doc__ = EventList.total_average.__doc__

    @property
    def self_cpu_time_total(self):
        """The sum of every event's self CPU time (µs)."""
        return self._results().self_cpu_time_total


class record_function:
    """Context manager and decorator that records a labelled range (``name``, with an
    optional ``args`` string) around a block or each call of a function. The range
    appears as a ``user_annotation`` event with the ops inside it as children; outside
    a profiler it costs almost nothing."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        # False once _call_end_callbacks_on_future has taken over closing the range.
        self.run_callbacks_on_exit = True
        self.record = None

    def __enter__(self):
        self.record = _C._record_function_enter(self.name, self.args) if _sessions else 0
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if not self.run_callbacks_on_exit:
            return
        if self.record is None:
            raise AssertionError("Expected record to be set")
        if self.record:
            _C._record_function_exit(self.record)

    def __call__(self, func):
        import functools

        name, args = self.name, self.args

        # Each call gets its own range handle, so recursive and concurrent calls of the
        # decorated function do not share one.
        @functools.wraps(func)
        def wrapped(*a, **kw):
            handle = _C._record_function_enter(name, args) if _sessions else 0
            try:
                return func(*a, **kw)
            finally:
                if handle:
                    _C._record_function_exit(handle)

        return wrapped

    def _call_end_callbacks_on_future(self, fut):
        """Keep the range open until ``fut`` completes; returns a future that completes
        with ``fut``'s value once the range is closed. May be called once. Accepts a
        future with ``then`` (torch-style) or ``add_done_callback`` (concurrent.futures,
        asyncio)."""
        if not self.run_callbacks_on_exit:
            raise RuntimeError("_call_end_callbacks_on_future can only be called once.")
        self.run_callbacks_on_exit = False
        handle = self.record
        if handle is None:
            raise AssertionError("Expected record to be set")

        def close():
            if handle:
                _C._record_function_exit(handle)

        if hasattr(fut, "then"):

            def on_value(done):
                close()
                return done.value()

            return fut.then(on_value)
        return _chain_done_callback(fut, close)


def _chain_done_callback(fut, close):
    import asyncio
    import concurrent.futures

    if asyncio.isfuture(fut):
        out = fut.get_loop().create_future()
    else:
        out = concurrent.futures.Future()

    def on_done(done):
        close()
        if done.cancelled():
            out.cancel()
        elif done.exception() is not None:
            out.set_exception(done.exception())
        else:
            out.set_result(done.result())

    fut.add_done_callback(on_done)
    return out


class _RangeEmitter:
    """Shared shape of emit_itt / emit_nvtx: a one-shot, non-reentrant context manager
    that does nothing when disabled."""

    _tool = ""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError(f"{self._tool} annotation context manager is not reentrant")
        self.entered = True
        self._synchronize()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return None
        self._synchronize()
        return False

    def _synchronize(self):
        pass


class emit_itt(_RangeEmitter):
    """Make every op emit an ITT range for Intel VTune (``vtune <flags> <command>``);
    with ``record_shapes`` each range name gets the ops' input shapes.

    ferrograd is built without the ITT collector library, so the ranges go nowhere:
    entering and leaving work as in torch (not reentrant, ``enabled=False`` is a
    no-op) and programs written for VTune run unchanged."""

    _tool = "ITT"


class emit_nvtx(_RangeEmitter):
    """Make every op emit an NVTX range for nvprof / Nsight, with ``seq=<N>`` on forward
    ranges and ``stashed seq=<N>`` on backward nodes to pair them (see the spec).

    It synchronizes the CUDA device on entry and exit; this build has no CUDA, so
    entering raises ``AssertionError: Torch not compiled with CUDA enabled``, as torch
    does in a CPU-only build."""

    _tool = "NVTX"

    def _synchronize(self):
        from .. import cuda

        cuda.synchronize()


def load_nvprof(path):
    """Open an nvprof trace file and return its NVTX ranges as an EventList."""
    return EventList(parse_nvprof_trace(path))
