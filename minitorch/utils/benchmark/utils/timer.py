"""``Timer``: PyTorch's benchmark timer over Python's ``timeit``.

Unlike bare ``timeit`` it pins the thread count (one thread by default, so numbers compare across
machines), waits for the GPU before reading the clock when CUDA is in use, and returns a
``Measurement`` that summarizes and prints the result.
"""

from __future__ import annotations

import enum
import timeit
from collections.abc import Callable

from .... import cuda
from .common import Measurement, TaskSpec, set_torch_threads


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def _default_timer() -> Callable[[], float]:
    """``perf_counter``, synchronizing CUDA first when a GPU is available (kernels run asynchronously)."""
    if cuda.is_available():
        def timer() -> float:
            cuda.synchronize()
            return timeit.default_timer()

        return timer
    return timeit.default_timer


class Timer:
    """Time ``stmt`` (after running ``setup``) with the names in ``globals`` in scope."""

    def __init__(
        self,
        stmt: str = "pass",
        setup: str = "pass",
        global_setup: str = "",
        timer: Callable[[], float] | None = None,
        globals: dict | None = None,  # noqa: A002 - PyTorch's name
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
        env: str | None = None,
        num_threads: int = 1,
        language: Language | str = Language.PYTHON,
    ):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"minitorch's Timer runs Python statements only, got language={language!r}")
        self._globals = dict(globals or {})
        if global_setup:
            exec(global_setup, self._globals)  # noqa: S102 - the caller's own setup code, as in timeit
        self._timer = timeit.Timer(
            stmt=stmt, setup=setup or "pass", timer=timer or _default_timer(), globals=self._globals
        )
        self._task_spec = TaskSpec(
            stmt=stmt, setup=setup, global_setup=global_setup, label=label, sub_label=sub_label,
            description=description, env=env, num_threads=num_threads,
        )

    def _timeit(self, number: int) -> float:
        # Even a zero-length run takes some time; never report exactly zero.
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> Measurement:
        """Run ``stmt`` ``number`` times (after a short warmup) and report the time per run."""
        with set_torch_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))  # warmup
            return Measurement(number_per_run=number, raw_times=[self._timeit(number=number)],
                               task_spec=self._task_spec)

    def _estimate_block_size(self, min_run_time: float) -> int:
        """Runs per block so that timer overhead is negligible (this also warms up)."""
        with set_torch_threads(self._task_spec.num_threads):
            overheads = sorted(self._timeit(0) for _ in range(5))
            overhead = overheads[2]
            number = 1
            while True:
                time_taken = self._timeit(number)
                if overhead / time_taken <= 1e-4 and time_taken >= min_run_time / 1000:
                    break
                if time_taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def _measurement_loop(self, number: int, stop: Callable[[list[float]], bool], min_run_time: float,
                          max_run_time: float | None, callback) -> list[float]:
        total_time = 0.0
        times: list[float] = []
        with set_torch_threads(self._task_spec.num_threads):
            while total_time < min_run_time or not stop(times):
                time_spent = self._timeit(number)
                times.append(time_spent)
                total_time += time_spent
                if callback:
                    callback(number, time_spent)
                if max_run_time and total_time > max_run_time:
                    break
        return times

    def blocked_autorange(self, callback: Callable[[int, float], None] | None = None,
                          min_run_time: float = 0.2) -> Measurement:
        """Blocks of ``number`` runs (chosen so timer overhead is negligible) until ``min_run_time`` passed."""
        number = self._estimate_block_size(min_run_time)
        times = self._measurement_loop(number, lambda times: True, min_run_time, None, callback)
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01, max_run_time: float = 10.0,
                           callback: Callable[[int, float], None] | None = None) -> Measurement:
        """Like ``blocked_autorange`` but keeps measuring until the IQR is below ``threshold`` of the median."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop(times: list[float]) -> bool:
            if len(times) <= 3:
                return False
            return Measurement(number, times, self._task_spec).meets_confidence(threshold)

        times = self._measurement_loop(number, stop, min_run_time, max_run_time, callback)
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)
