"""The numeric constants PyTorch exports (``torch.inf``, ``torch.pi``, ...): plain Python floats, as in PyTorch,
and ``newaxis`` (None, for indexing: ``x[:, torch.newaxis]``)."""

import math

e = math.e
inf = math.inf
nan = math.nan
pi = math.pi
newaxis = None

__all__ = ["e", "inf", "nan", "newaxis", "pi"]
