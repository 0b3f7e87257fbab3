"""``minitorch.autograd.profiler``: PyTorch's older profiler API (``profile``, ``record_function``), over the same
recorder as ``minitorch.profiler`` (CPU time of each op and each named range)."""

from __future__ import annotations

from ..profiler import EventList, FunctionEvent, FunctionEventAvg, events, record_function

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "profile", "record_function"]


class profile:
    """``with minitorch.autograd.profiler.profile() as prof:`` then ``prof.key_averages().table()``."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device=None, record_shapes: bool = False,
                 with_flops: bool = False, profile_memory: bool = False, with_stack: bool = False,
                 with_modules: bool = False, use_kineto: bool = False, use_cpu: bool = True,
                 experimental_config=None, acc_events: bool = False, custom_trace_id_callback=None) -> None:
        self.enabled = enabled
        self.recorder = events.Recorder(record_shapes)
        self.function_events: EventList | None = None

    def __enter__(self) -> profile:
        if self.enabled:
            events.start(self.recorder)
        return self

    def __exit__(self, *exc) -> None:
        if self.enabled:
            events.stop(self.recorder)
            self.function_events = self.recorder.events

    def _events(self) -> EventList:
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> EventList:
        return self._events().key_averages(group_by_input_shape)

    def table(self, **kwargs) -> str:
        return self._events().table(**kwargs)

    @property
    def self_cpu_time_total(self) -> float:
        return self._events().self_cpu_time_total

    def export_chrome_trace(self, path: str) -> None:
        events.chrome_trace(self._events(), path)

    def __str__(self) -> str:
        return self.table()
