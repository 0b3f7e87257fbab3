"""The recorder behind ``minitorch.profiler``: timed ranges (ops and ``record_function`` blocks) and their table.

While a profiler records, every built-in op (each ``Op.apply``: forward kernels, and the ops backward runs) is
timed on the CPU clock under the name ``minitorch::<Op>``; ``record_function("name")`` adds a named range
around any block. ``key_averages()`` groups the ranges by name, with each range's self time (its total minus
the ranges inside it), as PyTorch's table shows them.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field

from .. import _dispatch_modes
from ..ops.op import Op
from ..tensor import Tensor


@dataclass
class FunctionEvent:
    """One timed range: times in microseconds since the profiler started, as PyTorch reports them."""

    name: str
    start_us: float
    end_us: float = 0.0
    thread: int = 0
    input_shapes: list = field(default_factory=list)
    children: list = field(default_factory=list)
    id: int = 0

    @property
    def cpu_time_total(self) -> float:
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(child.cpu_time_total for child in self.children)

    @property
    def count(self) -> int:
        return 1


@dataclass
class FunctionEventAvg:
    """The ranges of one name (and input shapes, if grouped by them), summed."""

    key: str
    count: int = 0
    cpu_time_total: float = 0.0
    self_cpu_time_total: float = 0.0
    input_shapes: list = field(default_factory=list)

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0

    def add(self, event: FunctionEvent) -> None:
        self.count += 1
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total


def _format_us(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class EventList(list):
    """A list of events (or of averages) that prints as PyTorch's profiler table."""

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        groups: dict = {}
        for event in self:
            key = (event.name, str(event.input_shapes)) if group_by_input_shape else event.name
            if key not in groups:
                groups[key] = FunctionEventAvg(event.name, input_shapes=event.input_shapes)
            groups[key].add(event)
        return EventList(groups.values())

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_name_column_width: int = 55,
              header: str | None = None, top_level_events_only: bool = False, **kwargs) -> str:
        rows = list(self)
        if sort_by is not None:
            attr = {"cpu_time_total": "cpu_time_total", "self_cpu_time_total": "self_cpu_time_total",
                    "cpu_time": "cpu_time", "count": "count"}.get(sort_by)
            if attr is None:
                raise ValueError(f"table: cannot sort by {sort_by!r} (minitorch times CPU only: cpu_time_total, "
                                 "self_cpu_time_total, cpu_time, count)")
            rows.sort(key=lambda e: getattr(e, attr), reverse=True)
        if row_limit is not None and row_limit > 0:
            rows = rows[:row_limit]
        total_self = sum(e.self_cpu_time_total for e in self) or 1.0
        width = min(max_name_column_width, max([len(e.key if hasattr(e, "key") else e.name) for e in rows] + [4]))
        columns = ("Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls")
        line = "-" * (width + 2 + 15 * len(columns))
        out = [header] if header else []
        out += [line, f"{'Name':<{width}}  " + "".join(f"{c:>15}" for c in columns), line]
        for e in rows:
            name = e.key if hasattr(e, "key") else e.name
            average = e.cpu_time_total / max(e.count, 1)
            values = (f"{100 * e.self_cpu_time_total / total_self:.2f}%", _format_us(e.self_cpu_time_total),
                      f"{100 * e.cpu_time_total / total_self:.2f}%", _format_us(e.cpu_time_total),
                      _format_us(average), str(e.count))
            out.append(f"{name[:width]:<{width}}  " + "".join(f"{v:>15}" for v in values))
        out += [line, f"Self CPU time total: {_format_us(total_self if self else 0.0)}"]
        return "\n".join(out) + "\n"

    def __str__(self) -> str:
        return self.table()


class Recorder:
    """The ranges of one profiling session, kept per thread as a stack so nesting gives self times."""

    def __init__(self, record_shapes: bool = False) -> None:
        self.record_shapes = record_shapes
        self.events = EventList()
        self.origin = time.perf_counter()
        self._local = threading.local()
        self._next_id = 0

    def _stack(self) -> list:
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def begin(self, name: str, args: tuple = ()) -> FunctionEvent:
        shapes = [list(a.shape) if isinstance(a, Tensor) else [] for a in args] if self.record_shapes else []
        self._next_id += 1
        event = FunctionEvent(name, (time.perf_counter() - self.origin) * 1e6, thread=threading.get_ident(),
                              input_shapes=shapes, id=self._next_id)
        stack = self._stack()
        if stack:
            stack[-1].children.append(event)
        stack.append(event)
        return event

    def end(self, event: FunctionEvent) -> None:
        event.end_us = (time.perf_counter() - self.origin) * 1e6
        stack = self._stack()
        if stack and stack[-1] is event:
            stack.pop()
        self.events.append(event)


# which recorders are live, and the timed Op.apply while any is -------------------------------------------------

_active: list[Recorder] = []
_untimed_apply = Op.__dict__["apply"]


def _timed_apply(cls, *args, **params):
    recorders = list(_active)
    events = [r.begin(f"minitorch::{cls.__name__}", args) for r in recorders]
    try:
        return _untimed_apply.__func__(cls, *args, **params)
    finally:
        for recorder, event in zip(recorders, events):
            recorder.end(event)


def start(recorder: Recorder) -> None:
    """Make ``recorder`` live: while any is, ``Op.apply`` times each op (otherwise it runs untouched)."""
    if not _active:
        _dispatch_modes.hold(True)  # every op through Op.apply, to be timed
    _active.append(recorder)
    Op.apply = classmethod(_timed_apply)


def stop(recorder: Recorder) -> None:
    if recorder in _active:
        _active.remove(recorder)
        if not _active:
            _dispatch_modes.hold(False)
    if not _active:
        Op.apply = _untimed_apply


def begin_range(name: str) -> list:
    """Open a ``record_function`` range in every live recorder."""
    return [(r, r.begin(name)) for r in _active]


def end_range(opened: list) -> None:
    for recorder, event in reversed(opened):
        recorder.end(event)


def chrome_trace(events: list, path: str) -> None:
    """Write ``events`` as a Chrome trace (chrome://tracing, Perfetto): one complete event per range."""
    pid = os.getpid()
    trace = [{"name": e.name, "ph": "X", "cat": "cpu_op", "ts": e.start_us, "dur": e.cpu_time_total,
              "pid": pid, "tid": e.thread, "args": {"Input Dims": e.input_shapes} if e.input_shapes else {}}
             for e in events]
    with open(path, "w") as f:
        json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)


