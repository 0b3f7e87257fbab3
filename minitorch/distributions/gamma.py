"""Gamma(concentration, rate)."""

from __future__ import annotations

from ..tensor import Size, Tensor
from . import constraints
from ._gammainc import gammainc
from ._standard_gamma import standard_gamma
from .exp_family import ExponentialFamily
from .utils import broadcast_all, finfo_tiny, is_number

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """Density ``rate**a x**(a-1) exp(-rate x) / Gamma(a)`` with ``a = concentration``. ``rsample`` is
    differentiable in both parameters: with respect to ``concentration`` through the implicit
    reparameterization gradient of the standard Gamma draw."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration, rate, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        batch_shape = Size() if is_number(concentration) and is_number(rate) else self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Gamma, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=finfo_tiny(value.dtype))  # in place, outside autograd (as PyTorch)
        return value

    def log_prob(self, value):
        if not isinstance(value, Tensor):
            value = self.rate.new_tensor(value)
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration.xlogy(self.rate) + (self.concentration - 1).xlogy(value)
                - self.rate * value - self.concentration.lgamma())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return gammainc(self.concentration, self.rate * value)

    def entropy(self):
        return (self.concentration - self.rate.log() + self.concentration.lgamma()
                + (1.0 - self.concentration) * self.concentration.digamma())

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()
