"""What a timing run produced (``Measurement``) and what it timed (``TaskSpec``), as in PyTorch."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import textwrap
from collections.abc import Iterator

from ...._runtime import get_num_threads, set_num_threads

_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """The statement and labels of a benchmark (what ``Measurement`` prints above the times)."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label when there is one, else the statement."""
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        if not self.setup or self.setup == "pass":
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join(f"{s}\n" if "\n" in s else s for s in sections if s)


def select_unit(t: float) -> tuple[str, float]:
    """The unit that makes ``t`` seconds an O(1) number: ``('ms', 1e-3)`` for 2.3e-3."""
    exponent = int(math.log10(t) // 3) if t > 0 else 0
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(exponent, "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


def _quantile(sorted_values: tuple, q: float) -> float:
    """Linear interpolation between closest ranks (torch.quantile's default)."""
    position = (len(sorted_values) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


class Measurement:
    """The times of ``number_per_run`` executions, repeated ``len(raw_times)`` times.

    ``times`` are per execution; ``median``, ``mean`` and ``iqr`` summarize them. It prints like
    PyTorch's Measurement, so the numbers of a PyTorch tutorial and of minitorch read the same way."""

    def __init__(self, number_per_run: int, raw_times: list[float], task_spec: TaskSpec, metadata: dict | None = None):
        if not raw_times:
            raise ValueError("Measurement needs at least one timing")
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.metadata = metadata
        self._sorted_times = tuple(sorted(self.times))
        self._median = _quantile(self._sorted_times, 0.5)
        self._mean = sum(self._sorted_times) / len(self._sorted_times)
        self._p25 = _quantile(self._sorted_times, 0.25)
        self._p75 = _quantile(self._sorted_times, 0.75)
        self._warnings: tuple[str, ...] = ()
        if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
            self._add_warning("This suggests significant environmental influence.")
        elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
            self._add_warning("This could indicate system fluctuation.")

    def _add_warning(self, message: str) -> None:
        relative_iqr = self.iqr / self.median * 100
        self._warnings += (
            f"  WARNING: Interquartile range is {relative_iqr:.1f}% of the median measurement.\n           {message}",
        )

    # the TaskSpec's fields, read through
    def __getattr__(self, name: str):
        if name in ("stmt", "setup", "global_setup", "label", "sub_label", "description", "env", "num_threads",
                    "title"):
            return getattr(self.__dict__["task_spec"], name)
        raise AttributeError(f"'Measurement' object has no attribute {name!r}")

    @property
    def times(self) -> list[float]:
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        return self._median

    @property
    def mean(self) -> float:
        return self._mean

    @property
    def iqr(self) -> float:
        return self._p75 - self._p25

    @property
    def has_warnings(self) -> bool:
        return bool(self._warnings)

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        return self.iqr / self.median < threshold

    @property
    def significant_figures(self) -> int:
        """How many leading digits of the median the spread of the runs supports (at most 4)."""
        n = len(self._sorted_times)
        if n < 2 or self.iqr == 0:
            return 4
        # half-width of an approximate 90% confidence interval on the median, relative to it
        interval = 1.645 * 1.2533 * (self.iqr / 1.349) / math.sqrt(n)
        relative = interval / self.median
        return max(1, min(4, int(-math.floor(math.log10(relative))) if relative > 0 else 4))

    def __repr__(self) -> str:
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [
            object.__repr__(self),
            self.task_spec.summarize(),
            f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}",
        ]
        if n >= 4:
            lines.append(
                f"  IQR:    {self.iqr / scale:.2f} {unit} ({self._p25 / scale:.2f} to {self._p75 / scale:.2f})"
            )
        lines.append(
            f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
            f"{'per measurement,' if n > 1 else ','} {self.num_threads} thread{'s' if self.num_threads > 1 else ''}"
        )
        lines.extend(self._warnings)
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements) -> list[Measurement]:
        """Pool the times of measurements of the same task (PyTorch's ``Measurement.merge``)."""
        grouped: dict[TaskSpec, list[Measurement]] = {}
        for m in measurements:
            grouped.setdefault(m.task_spec, []).append(m)
        merged = []
        for spec, group in grouped.items():
            times = [t for m in group for t in m.times]
            merged.append(Measurement(number_per_run=1, raw_times=times, task_spec=spec))
        return merged


@contextlib.contextmanager
def set_torch_threads(n: int) -> Iterator[None]:
    """Run the block with ``minitorch.set_num_threads(n)``, then restore the previous count."""
    previous = get_num_threads()
    set_num_threads(n)
    try:
        yield
    finally:
        set_num_threads(previous)
