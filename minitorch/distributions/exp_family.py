"""ExponentialFamily: distributions whose density is ``exp(<t(x), theta> - F(theta) + k(x))``."""

from __future__ import annotations

from ..autograd import grad
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Subclasses give the natural parameters ``theta`` (``_natural_params``), the log normalizer ``F``
    (``_log_normalizer``) and the carrier measure's mean ``E[k(x)]``. Then the entropy is
    ``F(theta) - <theta, grad F(theta)> - E[k(x)]`` and the KL divergence between two members is the Bregman
    divergence of ``F`` (both computed with autograd)."""

    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError

    def entropy(self):
        """The entropy through the Bregman divergence of the log normalizer."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for np, g in zip(nparams, gradients):
            result = result - (np * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
