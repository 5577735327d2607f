"""Reading the NVTX ranges of an nvprof trace (an SQLite database) back as events.

An nvprof file stores each range as two rows of ``CUPTI_ACTIVITY_KIND_MARKER`` with the
same id: the start row names it (an id into ``StringTable``), the end row has name 0.
Kernels are attached to the ranges that launched them: a runtime API call
(``CUPTI_ACTIVITY_KIND_RUNTIME``, callback 211 = cudaLaunchKernel) inside the range
shares its correlation id with a row of ``CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL``.
Kernel names are looked up in ``StringTable`` like range names; names are kept as
stored (torch demangles C++ names here; ferrograd has no demangler).
"""

import sqlite3

from .profiler_util import FunctionEvent

_RANGES = """
SELECT s.id AS marker_id, s.name AS name_id, s.timestamp AS t0, e.timestamp AS t1
FROM CUPTI_ACTIVITY_KIND_MARKER AS s
JOIN CUPTI_ACTIVITY_KIND_MARKER AS e ON s.id = e.id
WHERE s.name != 0 AND e.name = 0
"""

_KERNELS = """
SELECT s.id AS marker_id, r._id_ AS runtime_id, r.cbid AS cbid,
       k.start AS k0, k.end AS k1, k.name AS kernel_name
FROM CUPTI_ACTIVITY_KIND_MARKER AS s
JOIN CUPTI_ACTIVITY_KIND_MARKER AS e ON s.id = e.id
JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON s.timestamp < r.start AND r.end < e.timestamp
JOIN CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL AS k ON k.correlationId = r.correlationId
"""

# cudaLaunchKernel's runtime callback id (CUDA >= 9.2).
_LAUNCH_CBID = 211


class EnforceUnique:
    """Raises RuntimeError ``duplicate key: (...)`` when a key is seen a second time."""

    def __init__(self):
        self.seen = set()

    def see(self, *key):
        if key in self.seen:
            raise RuntimeError("duplicate key: " + str(key))
        self.seen.add(key)


def parse_nvprof_trace(path):
    """The FunctionEvents of an nvprof file, in start order, kernels attached."""
    conn = sqlite3.connect(path)
    try:
        conn.row_factory = sqlite3.Row
        strings = {
            row["id"]: row["value"]
            for row in conn.execute("SELECT _id_ AS id, value FROM StringTable")
        }
        events = {}
        unique = EnforceUnique()
        for row in conn.execute(_RANGES):
            unique.see(row["marker_id"])
            events[row["marker_id"]] = FunctionEvent(
                id=row["marker_id"],
                node_id=0,
                name=strings[row["name_id"]],
                start_us=row["t0"],
                end_us=row["t1"],
                thread=0,
            )
        unique = EnforceUnique()
        for row in conn.execute(_KERNELS):
            unique.see(row["marker_id"], row["runtime_id"])
            if row["cbid"] != _LAUNCH_CBID:
                raise AssertionError(f"Expected cbid to be 211, but got {row['cbid']}")
            name = strings.get(row["kernel_name"], row["kernel_name"])
            events[row["marker_id"]].append_kernel(name, 0, row["k1"] - row["k0"])
    finally:
        conn.close()
    return sorted(events.values(), key=lambda e: e.time_range.start)
