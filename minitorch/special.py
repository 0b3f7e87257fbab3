"""``torch.special``: the special functions under their SciPy-style names (the same ops as ``torch.*``)."""

from __future__ import annotations

from .ops import pointwise as _pointwise
from .ops.pointwise import digamma, erf, erfc, erfinv, i0, logit, polygamma, sinc, xlogy
from .ops.reduction import logsumexp

i1 = _pointwise._i1
psi = digamma
gammaln = _pointwise.lgamma
expit = _pointwise.sigmoid

__all__ = ["digamma", "erf", "erfc", "erfinv", "expit", "gammaln", "i0", "i1", "logit", "logsumexp", "polygamma",
           "psi", "sinc", "xlogy"]
