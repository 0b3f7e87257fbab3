"""Gumbel(loc, scale): the type-I extreme value distribution."""

from __future__ import annotations

import math

from ..creation import full_like, ones_like
from ..tensor import Tensor
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant, finfo_eps, finfo_tiny, is_number

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    """``loc - scale * log(-log(U))`` with ``U`` uniform on ``[tiny, 1 - eps)``: PyTorch's chain of transforms
    of a Uniform."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        tiny, eps = finfo_tiny(self.loc.dtype), finfo_eps(self.loc.dtype)
        if is_number(loc) and is_number(scale):
            base_dist = Uniform(tiny, 1 - eps, validate_args=validate_args)
        else:
            base_dist = Uniform(full_like(self.loc, tiny), full_like(self.loc, 1 - eps), validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-ones_like(self.scale)), ExpTransform().inv,
                      AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    # Explicitly defining the log probability function for Gumbel due to precision issues
    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * euler_constant

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + euler_constant)
