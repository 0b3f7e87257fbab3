"""``minitorch.utils.benchmark``: PyTorch's Timer and Measurement for timing minitorch code.

``Timer(stmt, setup, globals=...).timeit(100)`` returns a ``Measurement`` that prints like PyTorch's
(the seeds' vectorization lesson); ``blocked_autorange`` picks the number of runs per block itself.
"""

from .utils.common import Measurement, TaskSpec, select_unit
from .utils.timer import Language, Timer

__all__ = ["Timer", "Measurement", "TaskSpec", "Language", "select_unit"]
