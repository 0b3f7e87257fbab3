"""NegativeBinomial(total_count, probs | logits): failures before ``total_count`` successes."""

from __future__ import annotations

from ..autograd import no_grad
from ..nn.functional import logsigmoid
from ..random import poisson
from ..tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import (
    count_and_param,
    expand_count_and_param,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """The number of successes (each with probability ``probs``) before ``total_count`` failures; sampled as
    a Gamma-Poisson mixture, as in PyTorch."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args: bool | None = None) -> None:
        super().__init__(count_and_param(self, total_count, probs, logits), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = Size(batch_shape)
        expand_count_and_param(self, new, batch_shape)
        super(NegativeBinomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @lazy_property
    def _gamma(self) -> Gamma:
        # Note we avoid validating because self.total_count can be zero.
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(), validate_args=False)

    def sample(self, sample_shape=()) -> Tensor:
        with no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = self.total_count * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        log_normalization = (-(self.total_count + value).lgamma() + (1.0 + value).lgamma()
                             + self.total_count.lgamma())
        # The case self.total_count == 0 and value == 0 has probability 1 but
        # lgamma(0) is infinite. Handle this case separately using a function
        # that does not modify tensors in place to allow Jit compilation.
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization
