"""Dirichlet(concentration): distributions over the probability simplex."""

from __future__ import annotations

from .. import _dtype
from .._finfo import finfo
from ..nn.functional import one_hot
from ..tensor import Size, Tensor
from . import constraints
from ._standard_gamma import standard_gamma
from .exp_family import ExponentialFamily
from .utils import finfo_tiny

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """Density ``prod(x_i ** (a_i - 1)) / B(a)`` on the simplex (the event is the last dim of
    ``concentration``). ``rsample`` normalizes independent standard Gamma draws, each with its implicit
    reparameterization gradient (PyTorch differentiates the normalized sample with its own
    ``_dirichlet_grad``: both are unbiased, the per-sample gradients differ, see differences.md)."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(tuple(batch_shape) + tuple(self.event_shape))
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()) -> Tensor:
        """PyTorch's ``_sample_dirichlet``: Gamma draws made in float64 whatever the dtype, normalized in float64,
        then cast and clamped to [tiny, the float below 1] (so the samples are PyTorch's numbers)."""
        shape = self._extended_shape(sample_shape)
        concentration = self.concentration.expand(shape)
        gammas = standard_gamma(concentration.to(_dtype.float64))
        x = (gammas / gammas.sum(-1, keepdim=True)).to(concentration.dtype)
        below_one = 1.0 - finfo(x.dtype).eps / 2  # the float just below 1
        x.detach().clamp_(min=finfo_tiny(x.dtype), max=below_one)  # in place, outside autograd, as the sampler
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((self.concentration - 1.0).xlogy(value).sum(-1) + self.concentration.sum(-1).lgamma()
                - self.concentration.lgamma().sum(-1))

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> Tensor:
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        mask = (self.concentration < 1).all(dim=-1)
        mode[mask] = one_hot(mode[mask].argmax(dim=-1), concentrationm1.shape[-1]).to(mode)
        return mode

    @property
    def variance(self) -> Tensor:
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (self.concentration.lgamma().sum(-1) - a0.lgamma() - (k - a0) * a0.digamma()
                - ((self.concentration - 1.0) * self.concentration.digamma()).sum(-1))

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()
