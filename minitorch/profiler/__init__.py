"""``minitorch.profiler``: PyTorch's profiler API over minitorch's CPU timing of each op.

``with profile(activities=[ProfilerActivity.CPU]) as prof:`` times every op the block runs (forward and
backward) and every ``record_function`` range; ``prof.key_averages().table(sort_by="cpu_time_total")``
prints them as PyTorch does, ``prof.export_chrome_trace(path)`` writes a trace for chrome://tracing, and a
``schedule`` with ``prof.step()`` records only the steps it selects, handing each finished cycle to
``on_trace_ready``. Op names are minitorch's (``minitorch::Matmul``), not ATen's (``aten::mm``). There is no
GPU kernel timing: with ``ProfilerActivity.CUDA`` the CPU side of each op is what is measured.
"""

from __future__ import annotations

import enum
import functools
import gzip
import os
import shutil
import socket
import time
import warnings

from .. import cuda
from . import events
from .events import EventList, FunctionEvent, FunctionEventAvg

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "ProfilerAction", "ProfilerActivity", "profile",
           "record_function", "schedule", "supported_activities", "tensorboard_trace_handler"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 2
    XPU = 3
    MTIA = 4
    HPU = 5
    PrivateUse1 = 6


def supported_activities() -> set:
    """What can be profiled here: the CPU (and CUDA's CPU side where a GPU is present)."""
    return {ProfilerActivity.CPU, ProfilerActivity.CUDA} if cuda.is_available() else {ProfilerActivity.CPU}


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0):
    """PyTorch's cycle: skip ``skip_first`` steps, then repeat (``wait`` idle, ``warmup``, ``active`` recorded)
    ``repeat`` times (0: forever); returns ``step -> ProfilerAction``."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} (need >= 0), "
            f"active={active} (need > 0), repeat={repeat} (need >= 0), skip_first={skip_first} (need >= 0)."
        )
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:  # start the first cycle without its wait
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        position = step % cycle
        if position < wait:
            return ProfilerAction.NONE
        if position < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if position < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _always_record(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


class record_function:
    """A named range in the profile (``with record_function("attention"):``, or as a decorator)."""

    def __init__(self, name: str, args: str | None = None) -> None:
        if not isinstance(name, str):
            raise TypeError(f"record_function(): name must be a str, got {type(name).__name__}")
        self.name, self.args = name, args
        self._opened: list = []

    def __enter__(self) -> record_function:
        self._opened = events.begin_range(self.name)
        return self

    def __exit__(self, *exc) -> None:
        events.end_range(self._opened)
        self._opened = []

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapped


class profile:
    """Record op timings in a ``with`` block (optionally only the steps a ``schedule`` selects).

    ``record_shapes`` records each op's input shapes (``key_averages(group_by_input_shape=True)``);
    ``profile_memory``, ``with_stack``, ``with_flops`` and ``with_modules`` are accepted for PyTorch's signature
    and record nothing more (docs/differences.md).
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config=None, execution_trace_observer=None,
                 acc_events: bool = False, use_cuda: bool | None = None, custom_trace_id_callback=None) -> None:
        self.activities = set(activities) if activities is not None else supported_activities()
        for activity in self.activities:
            if not isinstance(activity, ProfilerActivity):
                raise TypeError(f"profile(): activities must be ProfilerActivity values, got {activity!r}")
        self.schedule = schedule if schedule is not None else _always_record
        self.record_steps = schedule is not None  # ProfilerStep#N ranges, as PyTorch, only under a schedule
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.step_num = 0
        self.recorder: events.Recorder | None = None
        self._finished = events.EventList()
        self._step_range: list = []

    # recording follows the schedule's action for the current step
    def _action(self) -> ProfilerAction:
        return self.schedule(self.step_num)

    def _start_recording(self) -> None:
        if self.recorder is None:
            self.recorder = events.Recorder(self.record_shapes)
            events.start(self.recorder)
        self._begin_step()

    def _begin_step(self) -> None:
        if self.record_steps and self.recorder is not None:
            self._step_range = [(self.recorder, self.recorder.begin(f"ProfilerStep#{self.step_num}"))]

    def _stop_recording(self, save: bool) -> None:
        if self.recorder is None:
            return
        events.end_range(self._step_range)
        self._step_range = []
        events.stop(self.recorder)
        self._finished = self.recorder.events
        self.recorder = None
        if save and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def start(self) -> None:
        if self._action() in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            self._start_recording()

    def stop(self) -> None:
        self._stop_recording(save=True)

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def step(self) -> None:
        """Mark the end of a training step; recording starts and stops as the schedule says."""
        previous = self._action()
        self.step_num += 1
        current = self._action()
        recording = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if previous is ProfilerAction.RECORD_AND_SAVE:
            self._stop_recording(save=True)
        elif previous in recording and self.recorder is not None:
            events.end_range(self._step_range)
            self._step_range = []
        if current in recording:
            if self.recorder is None:
                self._start_recording()
            else:
                self._begin_step()

    # results
    def events(self) -> EventList:
        return self.recorder.events if self.recorder is not None else self._finished

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0, **kwargs) -> EventList:
        return self.events().key_averages(group_by_input_shape)

    def export_chrome_trace(self, path: str) -> None:
        events.chrome_trace(self.events(), path)


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None, use_gzip: bool = False):
    """An ``on_trace_ready`` that writes each cycle's trace to ``dir_name/<worker>.<ms>.pt.trace.json``."""

    def handler(prof: profile) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        path = os.path.join(dir_name, f"{worker}.{time.time_ns() // 1_000_000}.pt.trace.json")
        prof.export_chrome_trace(path)
        if use_gzip:
            with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.remove(path)

    return handler
