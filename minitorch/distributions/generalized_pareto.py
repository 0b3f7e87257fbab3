"""GeneralizedPareto(loc, scale, concentration): the peaks-over-threshold distribution."""

from __future__ import annotations

import math

from ..creation import ones_like, zeros_like
from ..ops.comparison import isclose, where
from ..random import rand
from ..tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, is_number

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """Survival function ``(1 + c z) ** (-1 / c)`` with ``z = (x - loc) / scale`` (``exp(-z)`` at ``c = 0``);
    ``rsample`` inverts the CDF at a uniform draw."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if is_number(loc) and is_number(scale) and is_number(concentration):
            batch_shape = Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        super(GeneralizedPareto, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def _safe_concentration(self):
        """(``concentration == 0`` mask, the concentration with zeros replaced by 1)."""
        eq_zero = isclose(self.concentration, zeros_like(self.concentration))
        return eq_zero, where(eq_zero, ones_like(self.concentration), self.concentration)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        y = 1 / safe_conc + ones_like(z)
        where_nonzero = where(y == 0, y, y * (safe_conc * z).log1p())
        return -self.scale.log() - where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        where_nonzero = -(safe_conc * z).log1p() / safe_conc
        return where(eq_zero, -z, where_nonzero)

    def log_cdf(self, value):
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        eq_zero, safe_conc = self._safe_concentration()
        logu = (-value).log1p()
        where_nonzero = self.loc + self.scale / safe_conc * (-safe_conc * logu).expm1()
        where_zero = self.loc - self.scale * logu
        return where(eq_zero, where_zero, where_nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self) -> Tensor:
        valid = self.concentration < 1
        safe_conc = where(valid, self.concentration, 0.5)
        result = self.loc + self.scale / (1 - safe_conc)
        return where(valid, result, math.nan)

    @property
    def variance(self) -> Tensor:
        valid = self.concentration < 0.5
        safe_conc = where(valid, self.concentration, 0.25)
        result = self.scale**2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return where(valid, result, math.nan)

    def entropy(self):
        ans = self.scale.log() + self.concentration + 1
        return ans.expand(self._batch_shape)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = where(self.concentration < 0, lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)
