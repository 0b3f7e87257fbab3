"""``torch.distributions``: parameterized probability distributions and sampling functions.

PyTorch's API and semantics (adapted from PyTorch's ``torch/distributions``, BSD-licensed): batch and event
shapes, ``sample``/``rsample``, ``log_prob``, ``entropy``, ``cdf``/``icdf``, argument validation with
PyTorch's ``ValueError`` messages, ``kl_divergence``/``register_kl``, transforms and ``biject_to``/
``transform_to``. Everything is written in minitorch tensor ops, so ``log_prob``, ``entropy``,
``kl_divergence`` and ``rsample`` are differentiable with respect to the parameters.

A policy-gradient step::

    dist = Categorical(logits=policy(state))
    action = dist.sample()
    loss = -dist.log_prob(action) * reward
"""

from . import constraints, transforms  # noqa: F401 - torch.distributions.constraints
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .constraint_registry import biject_to, transform_to
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F403
from .uniform import Uniform

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Dirichlet", "Distribution", "Exponential", "ExponentialFamily",
    "Gamma", "Independent", "Laplace", "LogNormal", "Multinomial", "MultivariateNormal", "Normal",
    "OneHotCategorical", "OneHotCategoricalStraightThrough", "Poisson", "RelaxedBernoulli",
    "RelaxedOneHotCategorical", "Uniform", "TransformedDistribution", "biject_to", "kl_divergence", "register_kl",
    "transform_to",
]
__all__.extend(transforms.__all__)
