"""minitorch.distributions without PyTorch: shapes, validation, sample moments (fixed seed, bounds of several
standard errors), goodness of fit of the Gamma and Binomial samplers, and gradchecks of log_prob, entropy,
cdf, kl_divergence and rsample in float64. tests/oracle/test_distributions.py compares values with PyTorch."""

import math

import pytest

import minitorch
from minitorch import distributions as D
from minitorch.autograd import gradcheck, gradgradcheck
from minitorch.distributions._gammainc import gammainc
from minitorch.distributions._standard_gamma import standard_gamma, standard_gamma_grad
from minitorch.distributions.kl import _kl_expfamily_expfamily

F64 = minitorch.float64


def t(values, grad=False):
    return minitorch.tensor(values, dtype=F64, requires_grad=grad)


# name: a distribution with a (2,)-shaped batch (event shapes vary), its parameters made by ``t``
DISTRIBUTIONS = {
    "Normal": lambda t: D.Normal(t([0.0, 1.0]), t([1.0, 2.0])),
    "Uniform": lambda t: D.Uniform(t([0.0, -1.0]), t([1.0, 3.0])),
    "Bernoulli": lambda t: D.Bernoulli(probs=t([0.3, 0.8])),
    "Categorical": lambda t: D.Categorical(probs=t([[0.2, 0.8, 0.0], [0.3, 0.3, 0.4]])),
    "OneHotCategorical": lambda t: D.OneHotCategorical(logits=t([[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]])),
    "Exponential": lambda t: D.Exponential(t([0.5, 3.0])),
    "Laplace": lambda t: D.Laplace(t([0.0, 2.0]), t([1.0, 0.5])),
    "Gamma": lambda t: D.Gamma(t([0.3, 4.0]), t([1.0, 2.0])),
    "Beta": lambda t: D.Beta(t([0.5, 2.0]), t([0.7, 5.0])),
    "Dirichlet": lambda t: D.Dirichlet(t([[0.5, 1.0, 2.0], [3.0, 3.0, 0.2]])),
    "Poisson": lambda t: D.Poisson(t([0.5, 12.0])),
    "Binomial": lambda t: D.Binomial(t([10.0, 1000.0]), probs=t([0.3, 0.02])),
    "Multinomial": lambda t: D.Multinomial(20, probs=t([[0.2, 0.3, 0.5], [0.9, 0.05, 0.05]])),
    "MultivariateNormal": lambda t: D.MultivariateNormal(t([[0.0, 1.0], [2.0, 0.0]]),
                                                       t([[2.0, 0.6], [0.6, 1.0]])),
    "LogNormal": lambda t: D.LogNormal(t([0.0, 0.5]), t([0.25, 0.5])),
    "Independent": lambda t: D.Independent(D.Normal(t([[0.0, 1.0], [2.0, 3.0]]), t([[1.0, 1.0], [0.5, 2.0]])), 1),
    "Chi2": lambda t: D.Chi2(t([0.7, 5.0])),
    "HalfNormal": lambda t: D.HalfNormal(t([0.5, 2.0])),
    "Gumbel": lambda t: D.Gumbel(t([0.0, -1.0]), t([1.0, 0.3])),
    "Geometric": lambda t: D.Geometric(probs=t([0.1, 0.8])),
    "Pareto": lambda t: D.Pareto(t([1.0, 0.5]), t([5.0, 9.0])),
    "StudentT": lambda t: D.StudentT(t([5.0, 9.0]), t([0.0, 1.0]), t([1.0, 2.0])),
    "Weibull": lambda t: D.Weibull(t([1.0, 2.0]), t([0.8, 3.0])),
    "InverseGamma": lambda t: D.InverseGamma(t([5.0, 7.0]), t([1.0, 2.0])),
    "Kumaraswamy": lambda t: D.Kumaraswamy(t([0.5, 2.0]), t([1.5, 3.0])),
    "NegativeBinomial": lambda t: D.NegativeBinomial(t([0.7, 10.0]), probs=t([0.3, 0.6])),
    "FisherSnedecor": lambda t: D.FisherSnedecor(t([3.0, 10.0]), t([12.0, 20.0])),
    "ContinuousBernoulli": lambda t: D.ContinuousBernoulli(probs=t([0.2, 0.4999])),
    "GeneralizedPareto": lambda t: D.GeneralizedPareto(t([0.0, 1.0]), t([1.0, 0.5]), t([0.1, -0.2])),
    "Wishart": lambda t: D.Wishart(t([4.0, 6.5]), covariance_matrix=t([[1.0, 0.3], [0.3, 0.5]])),
    "LowRankMultivariateNormal": lambda t: D.LowRankMultivariateNormal(
        t([[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]]), t([[1.0], [0.5], [-1.0]]), t([0.5, 1.0, 2.0])),
    "MixtureSameFamily": lambda t: D.MixtureSameFamily(
        D.Categorical(probs=t([[0.3, 0.7], [0.5, 0.5]])), D.Normal(t([[-2.0, 1.0], [0.0, 5.0]]), t([[0.5, 1.0],
                                                                                                     [1.0, 0.2]]))),
}


@pytest.fixture(autouse=True)
def _seed():
    minitorch.manual_seed(1234)


def _on(device):
    return lambda values, grad=False: minitorch.tensor(values, dtype=F64, device=device, requires_grad=grad)


@pytest.mark.parametrize("name", sorted(DISTRIBUTIONS))
def test_shapes(name, device):
    dist = DISTRIBUTIONS[name](_on(device))
    assert dist.batch_shape == (2,)
    event = tuple(dist.event_shape)
    assert tuple(dist.sample().shape) == (2,) + event
    assert tuple(dist.sample((5, 3)).shape) == (5, 3, 2) + event
    assert dist.log_prob(dist.sample((4,))).shape == (4, 2)
    expanded = dist.expand((3, 2))
    assert expanded.batch_shape == (3, 2) and expanded.event_shape == dist.event_shape
    assert tuple(expanded.sample((4,)).shape) == (4, 3, 2) + event
    if dist.has_rsample:
        assert tuple(dist.rsample((6,)).shape) == (6, 2) + event
    assert not dist.sample((2,)).requires_grad
    assert dist.sample().device.type == device.split(":")[0]


@pytest.mark.parametrize("name", sorted(DISTRIBUTIONS))
def test_sample_moments(name, device):
    """The sample mean (and variance) of 20,000 draws lie within 6 standard errors of the exact ones."""
    dist = DISTRIBUTIONS[name](_on(device))
    n = 20000
    samples = dist.sample((n,)).to(F64)
    mean, var = dist.mean, dist.variance
    finite = ~mean.isnan()
    sample_mean = samples.mean(0)
    tolerance = 6 * (var / n).sqrt()
    assert bool(((sample_mean - mean).abs() <= tolerance)[finite].all()), (sample_mean, mean)
    # the variance of a sample variance is (m4 - var**2) / n: bound it with the sample's own fourth moment
    centered = samples - sample_mean
    m4 = (centered**4).mean(0)
    sample_var = (centered**2).mean(0)
    var_tolerance = 6 * ((m4 - sample_var**2).clamp(min=0) / n).sqrt() + 1e-12
    assert bool(((sample_var - var).abs() <= var_tolerance)[finite].all()), (sample_var, var)


def test_samples_lie_in_the_support():
    for name, make in DISTRIBUTIONS.items():
        dist = make(t)
        assert bool(dist.support.check(dist.sample((500,))).all()), name


def _ks_statistic(samples, cdf):
    """The Kolmogorov-Smirnov distance between the empirical CDF of 1-D ``samples`` and ``cdf``."""
    x = samples.sort().values
    n = x.shape[0]
    f = cdf(x)
    upper = (minitorch.arange(1, n + 1, dtype=F64) / n - f).max()
    lower = (f - minitorch.arange(0, n, dtype=F64) / n).max()
    return float(minitorch.maximum(upper, lower))


@pytest.mark.parametrize("alpha", [0.05, 0.3, 1.0, 2.5, 40.0])
def test_gamma_sampler_fits_the_gamma_cdf(alpha):
    """Marsaglia-Tsang (with the alpha < 1 boost): the KS distance of 20,000 draws stays below the 0.1%
    critical value 1.95 / sqrt(n)."""
    n = 20000
    dist = D.Gamma(t(alpha), t(2.0))
    samples = dist.sample((n,))
    assert _ks_statistic(samples, dist.cdf) < 1.95 / math.sqrt(n)


@pytest.mark.parametrize("total,p", [(5, 0.5), (40, 0.3), (1000, 0.7), (100000, 0.001), (7, 1.0), (0, 0.4)])
def test_binomial_sampler_fits_the_binomial_pmf(total, p):
    """Knuth's Beta recursion: the empirical frequencies match exp(log_prob) (chi-square, 0.1% level)."""
    n = 20000
    dist = D.Binomial(t(float(total)), probs=t(p))
    samples = dist.sample((n,))
    assert bool(((samples >= 0) & (samples <= total) & (samples == samples.floor())).all())
    mean, var = total * p, total * p * (1 - p)
    assert abs(float(samples.mean()) - mean) <= 6 * math.sqrt(var / n) + 1e-12
    if 0 < p < 1 and total <= 1000:
        values = minitorch.arange(total + 1, dtype=F64)
        expected = dist.log_prob(values).exp() * n
        observed = (samples.unsqueeze(-1) == values).sum(0).to(F64)
        keep = expected >= 5
        chi2 = float((((observed - expected) ** 2 / expected)[keep]).sum())
        dof = int(keep.sum()) - 1
        assert chi2 < dof + 4.5 * math.sqrt(2 * dof) + 10, (chi2, dof)


def test_categorical_sample_frequencies():
    probs = t([0.1, 0.0, 0.6, 0.3])
    samples = D.Categorical(probs=probs).sample((20000,))
    freq = (samples.unsqueeze(-1) == minitorch.arange(4)).to(F64).mean(0)
    assert float(freq[1]) == 0.0
    assert bool(((freq - probs).abs() <= 6 * (probs * (1 - probs) / 20000).sqrt() + 1e-12).all())


def test_multivariate_normal_sample_covariance():
    cov = t([[2.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]])
    dist = D.MultivariateNormal(t([1.0, 0.0, -1.0]), precision_matrix=minitorch.linalg.inv(cov))
    x = dist.sample((40000,))
    centered = x - x.mean(0)
    sample_cov = centered.T @ centered / 40000
    assert bool(((sample_cov - cov).abs() < 0.05).all()), sample_cov
    assert bool(((dist.covariance_matrix - cov).abs() < 1e-12).all())


# gradchecks -------------------------------------------------------------------------------------------


def _positive(grad=True, shape=(3,)):
    return (minitorch.rand(shape, dtype=F64) + 0.5).requires_grad_(grad)


def _real(grad=True, shape=(3,)):
    return minitorch.randn(shape, dtype=F64).requires_grad_(grad)


# name: (function of parameter tensors, parameter factories): each function returns log_prob + entropy (+ cdf)
GRADCHECKS = {
    "Normal": (lambda loc, scale: D.Normal(loc, scale).log_prob(t([0.3, -1.0, 2.0]))
               + D.Normal(loc, scale).entropy() + D.Normal(loc, scale).cdf(t([0.3, -1.0, 2.0])), (_real, _positive)),
    "Normal.icdf": (lambda loc, scale: D.Normal(loc, scale).icdf(t([0.1, 0.5, 0.9])), (_real, _positive)),
    "Uniform": (lambda low, width: D.Uniform(low, low + width + 3).log_prob(low + 0.5)
                + D.Uniform(low, low + width + 3).cdf(low + 1.0), (_real, _positive)),
    "Bernoulli": (lambda logits: D.Bernoulli(logits=logits).log_prob(t([0.0, 1.0, 1.0]))
                  + D.Bernoulli(logits=logits).entropy(), (_real,)),
    "Categorical": (lambda logits: D.Categorical(logits=logits).log_prob(minitorch.tensor([2, 0]))
                    + D.Categorical(logits=logits).entropy(), (lambda: _real(shape=(2, 3)),)),
    "Categorical-probs": (lambda probs: D.Categorical(probs=probs).log_prob(minitorch.tensor([2, 0]))
                          + D.Categorical(probs=probs).entropy(), (lambda: _positive(shape=(2, 3)),)),
    "Exponential": (lambda rate: D.Exponential(rate).log_prob(t([0.5, 1.0, 3.0])) + D.Exponential(rate).entropy()
                    + D.Exponential(rate).cdf(t([0.5, 1.0, 3.0])), (_positive,)),
    "Laplace": (lambda loc, scale: D.Laplace(loc, scale).log_prob(t([0.5, 1.0, 3.0]))
                + D.Laplace(loc, scale).entropy() + D.Laplace(loc, scale).cdf(t([0.5, 1.0, 3.0])),
                (_real, _positive)),
    "Gamma": (lambda a, b: D.Gamma(a, b).log_prob(t([0.5, 1.0, 3.0])) + D.Gamma(a, b).entropy(),
              (_positive, _positive)),
    "Gamma.cdf": (lambda b, x: D.Gamma(t([0.5, 2.0, 30.0]), b).cdf(x * 3), (_positive, _positive)),
    "Beta": (lambda a, b: D.Beta(a, b).log_prob(t([0.2, 0.5, 0.9])) + D.Beta(a, b).entropy(),
             (_positive, _positive)),
    "Dirichlet": (lambda c: D.Dirichlet(c).log_prob(t([0.2, 0.5, 0.3])) + D.Dirichlet(c).entropy(),
                  (lambda: _positive(shape=(2, 3)),)),
    "Poisson": (lambda rate: D.Poisson(rate).log_prob(t([0.0, 1.0, 4.0])), (_positive,)),
    "Binomial": (lambda logits: D.Binomial(6, logits=logits).log_prob(t([0.0, 2.0, 6.0]))
                 + D.Binomial(6, logits=logits).entropy(), (_real,)),
    "Multinomial": (lambda logits: D.Multinomial(4, logits=logits).log_prob(t([1.0, 0.0, 3.0]))
                    + D.Multinomial(4, logits=logits).entropy(), (_real,)),
    "MultivariateNormal": (lambda loc, a: D.MultivariateNormal(loc, a @ a.mT + 2 * minitorch.eye(3, dtype=F64))
                           .log_prob(t([[0.1, 0.2, 0.3], [1.0, -1.0, 0.0]]))
                           + D.MultivariateNormal(loc, a @ a.mT + 2 * minitorch.eye(3, dtype=F64)).entropy(),
                           (_real, lambda: _real(shape=(3, 3)))),
    "MultivariateNormal-precision": (
        lambda loc, a: D.MultivariateNormal(loc, precision_matrix=a @ a.mT + 2 * minitorch.eye(3, dtype=F64))
        .log_prob(t([0.1, 0.2, 0.3])), (_real, lambda: _real(shape=(3, 3)))),
    "LogNormal": (lambda loc, scale: D.LogNormal(loc, scale).log_prob(t([0.5, 1.0, 3.0]))
                  + D.LogNormal(loc, scale).entropy(), (_real, _positive)),
    "RelaxedBernoulli": (lambda temp, logits: D.RelaxedBernoulli(temp, logits=logits).log_prob(t([0.2, 0.5, 0.9])),
                         (lambda: _positive(shape=()), _real)),
    "RelaxedOneHotCategorical": (lambda temp, logits: D.RelaxedOneHotCategorical(temp, logits=logits)
                                 .log_prob(t([0.2, 0.5, 0.3])), (lambda: _positive(shape=()), _real)),
    "kl Normal-Normal": (lambda a, s: D.kl_divergence(D.Normal(a, s), D.Normal(a * 2, s + 1)), (_real, _positive)),
    "kl Beta-Beta": (lambda a, b: D.kl_divergence(D.Beta(a, b), D.Beta(b, a + 1)), (_positive, _positive)),
    "kl Dirichlet-Dirichlet": (lambda a, b: D.kl_divergence(D.Dirichlet(a), D.Dirichlet(b)), (_positive, _positive)),
    "kl Gamma-Gamma": (lambda a, b: D.kl_divergence(D.Gamma(a, b), D.Gamma(b, a)), (_positive, _positive)),
    "kl Categorical": (lambda a, b: D.kl_divergence(D.Categorical(logits=a), D.Categorical(logits=b)),
                       (_real, _real)),
    "kl MVN-MVN": (lambda a, b: D.kl_divergence(D.MultivariateNormal(a[0], scale_tril=b.tril(-1) + 2 * minitorch.eye(3, dtype=F64)),
                                                D.MultivariateNormal(a[1], minitorch.eye(3, dtype=F64) * 2)),
                   (lambda: _real(shape=(2, 3)), lambda: _real(shape=(3, 3)))),
    "StudentT": (lambda df, loc: D.StudentT(df + 1, loc, df).log_prob(t([0.3, -1.0, 2.0]))
                 + D.StudentT(df + 1, loc, df).entropy(), (_positive, _real)),
    "Gumbel": (lambda loc, scale: D.Gumbel(loc, scale).log_prob(t([0.3, -1.0, 2.0])) + D.Gumbel(loc, scale).entropy()
               + D.Gumbel(loc, scale).cdf(t([0.3, -1.0, 2.0])), (_real, _positive)),
    "Geometric": (lambda logits: D.Geometric(logits=logits).log_prob(t([0.0, 2.0, 5.0]))
                  + D.Geometric(logits=logits).entropy(), (_real,)),
    "Pareto": (lambda scale, alpha: D.Pareto(scale, alpha).log_prob(t([2.0, 3.0, 4.0]))
               + D.Pareto(scale, alpha).entropy(), (_positive, _positive)),
    "Weibull": (lambda scale, k: D.Weibull(scale, k).log_prob(t([0.3, 1.0, 2.0])) + D.Weibull(scale, k).entropy(),
                (_positive, _positive)),
    "Kumaraswamy": (lambda a, b: D.Kumaraswamy(a, b).log_prob(t([0.3, 0.5, 0.9])) + D.Kumaraswamy(a, b).entropy(),
                    (_positive, _positive)),
    "NegativeBinomial": (lambda n, logits: D.NegativeBinomial(n, logits=logits).log_prob(t([0.0, 2.0, 5.0])),
                         (_positive, _real)),
    "FisherSnedecor": (lambda a, b: D.FisherSnedecor(a, b).log_prob(t([0.3, 1.0, 2.0])), (_positive, _positive)),
    "Cauchy": (lambda loc, scale: D.Cauchy(loc, scale).log_prob(t([0.3, -1.0, 2.0])) + D.Cauchy(loc, scale).entropy()
               + D.Cauchy(loc, scale).icdf(t([0.1, 0.5, 0.7])), (_real, _positive)),
    "LowRankMultivariateNormal": (lambda loc, w, d: D.LowRankMultivariateNormal(loc, w, d).log_prob(t([0.3, 0.1, 2.0]))
                                  + D.LowRankMultivariateNormal(loc, w, d).entropy(),
                                  (_real, lambda: _real(shape=(3, 2)), _positive)),
    "MixtureSameFamily": (lambda w, loc, scale: D.MixtureSameFamily(D.Categorical(logits=w), D.Normal(loc, scale))
                          .log_prob(t([0.3, -1.0])), (_real, _real, _positive)),
    "kl LowRank-MVN": (lambda loc, w, d: D.kl_divergence(D.LowRankMultivariateNormal(loc, w, d),
                                                         D.MultivariateNormal(loc * 0, minitorch.eye(3, dtype=F64))),
                       (_real, lambda: _real(shape=(3, 2)), _positive)),
    "ContinuousBernoulli": (lambda p: D.ContinuousBernoulli(probs=p).log_prob(t([0.2, 0.5, 0.9]))
                            + D.ContinuousBernoulli(probs=p).entropy() + D.ContinuousBernoulli(probs=p).cdf(
                                t([0.2, 0.5, 0.9])), (lambda: (minitorch.rand(3, dtype=F64) * 0.8 + 0.1)
                                                      .requires_grad_(),)),
    "GeneralizedPareto": (lambda loc, scale: D.GeneralizedPareto(loc, scale, t([0.3, 0.0, -0.1]))
                          .log_prob(loc + 0.5) + D.GeneralizedPareto(loc, scale, t([0.3, 0.0, -0.1])).cdf(loc + 0.3),
                          (_real, _positive)),
    "VonMises": (lambda loc, k: D.VonMises(loc, k * 5).log_prob(t([0.3, -1.0, 2.0])), (_real, _positive)),
    "LKJCholesky": (lambda c: D.LKJCholesky(3, c).log_prob(t([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.6, 0.8]])),
                    (lambda: _positive(shape=(2,)),)),
    "Wishart": (lambda df, a: D.Wishart(df + 3, covariance_matrix=a @ a.mT + minitorch.eye(3, dtype=F64))
                .log_prob(t([[2.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 3.0]]))
                + D.Wishart(df + 3, covariance_matrix=a @ a.mT + minitorch.eye(3, dtype=F64)).entropy(),
                (lambda: _positive(shape=()), lambda: _real(shape=(3, 3)))),
    "kl Gumbel-Gumbel": (lambda a, s: D.kl_divergence(D.Gumbel(a, s), D.Gumbel(a * 2, s + 1)), (_real, _positive)),
    # the Bregman form differentiates q only: p's natural parameters are detached (in PyTorch too)
    "kl Bernoulli (Bregman, ExponentialFamily)": (
        lambda b: _kl_expfamily_expfamily(D.Bernoulli(logits=t([0.3, -1.0, 2.0])), D.Bernoulli(logits=b)),
        (_real,)),
}


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_gradcheck(name):
    fn, factories = GRADCHECKS[name]
    inputs = tuple(factory() for factory in factories)
    assert gradcheck(fn, inputs)


def test_gradgradcheck_normal_and_gamma_log_prob():
    assert gradgradcheck(lambda loc, scale: D.Normal(loc, scale).log_prob(t([0.3, 1.0, 2.0])), (_real(), _positive()))
    assert gradgradcheck(lambda a, b: D.Gamma(a, b).log_prob(t([0.3, 1.0, 2.0])), (_positive(), _positive()))


def _seeded(fn, seed=7):
    """``fn`` with the default generator reseeded before each call, so rsample is a function of the parameters."""
    def wrapped(*args):
        minitorch.manual_seed(seed)
        return fn(*args)
    return wrapped


RSAMPLES = {
    "Normal": (lambda loc, scale: D.Normal(loc, scale).rsample((4,)), (_real, _positive)),
    "Uniform": (lambda low, width: D.Uniform(low, low + width).rsample((4,)), (_real, _positive)),
    "Exponential": (lambda rate: D.Exponential(rate).rsample((4,)), (_positive,)),
    "Laplace": (lambda loc, scale: D.Laplace(loc, scale).rsample((4,)), (_real, _positive)),
    "MultivariateNormal": (lambda loc, a: D.MultivariateNormal(loc, scale_tril=a.tril(-1) + 2 * minitorch.eye(3, dtype=F64))
                           .rsample((4,)), (_real, lambda: _real(shape=(3, 3)))),
    "LogNormal": (lambda loc, scale: D.LogNormal(loc, scale).rsample((4,)), (_real, _positive)),
    "Transformed": (lambda loc, scale: D.TransformedDistribution(
        D.Normal(loc, scale), [D.AffineTransform(1.0, 2.0), D.SigmoidTransform()]).rsample((4,)), (_real, _positive)),
    "Independent": (lambda loc, scale: D.Independent(D.Normal(loc, scale), 1).rsample((4,)), (_real, _positive)),
    "RelaxedBernoulli": (lambda logits: D.RelaxedBernoulli(t(0.5), logits=logits).rsample((4,)), (_real,)),
    "RelaxedOneHotCategorical": (lambda logits: D.RelaxedOneHotCategorical(t(0.5), logits=logits).rsample((4,)),
                                 (_real,)),
    "Gamma (rate)": (lambda rate: D.Gamma(t([0.5, 2.0, 9.0]), rate).rsample((4,)), (_positive,)),
    "Cauchy": (lambda loc, scale: D.Cauchy(loc, scale).rsample((4,)), (_real, _positive)),
    "Gumbel": (lambda loc, scale: D.Gumbel(loc, scale).rsample((4,)), (_real, _positive)),
    "HalfNormal": (lambda scale: D.HalfNormal(scale).rsample((4,)), (_positive,)),
    "Weibull": (lambda scale, k: D.Weibull(scale, k).rsample((4,)), (_positive, _positive)),
    "Kumaraswamy": (lambda a, b: D.Kumaraswamy(a, b).rsample((4,)), (_positive, _positive)),
    "StudentT (loc, scale)": (lambda loc, scale: D.StudentT(t([3.0, 5.0, 9.0]), loc, scale).rsample((4,)),
                              (_real, _positive)),
    "LogisticNormal": (lambda loc, scale: D.LogisticNormal(loc, scale).rsample((4,)), (_real, _positive)),
    "ContinuousBernoulli": (lambda logits: D.ContinuousBernoulli(logits=logits).rsample((4,)), (_real,)),
    "GeneralizedPareto": (lambda loc, scale: D.GeneralizedPareto(loc, scale, t([0.3, 0.0, -0.1])).rsample((4,)),
                          (_real, _positive)),
}


@pytest.mark.parametrize("name", sorted(RSAMPLES))
def test_rsample_gradcheck(name):
    """Reparameterized samples are differentiable functions of the parameters (given the random draws)."""
    fn, factories = RSAMPLES[name]
    inputs = tuple(factory() for factory in factories)
    assert gradcheck(_seeded(fn), inputs)


def test_standard_gamma_grad_is_the_implicit_derivative():
    """dx/dalpha = -(dF/dalpha)(x; alpha) / f(x; alpha): compare with central differences of the CDF."""
    alpha = t([0.2, 0.7, 1.5, 3.0, 7.9, 12.0, 60.0])
    x = standard_gamma(alpha).detach()
    h = 1e-6
    dF = (gammainc(alpha + h, x) - gammainc(alpha - h, x)) / (2 * h)
    density = (-x + (alpha - 1) * x.log() - alpha.lgamma()).exp()
    expected = -dF / density
    got = standard_gamma_grad(alpha, x)
    assert bool(((got - expected).abs() <= 2e-3 * expected.abs() + 1e-6).all()), (got, expected)


@pytest.mark.parametrize("dist_name", ["Gamma", "Beta", "Dirichlet"])
def test_implicit_rsample_gradients_are_unbiased(dist_name):
    """The mean of d(sample)/d(parameter) over many draws is d E[sample] / d(parameter)."""
    n = 40000
    if dist_name == "Gamma":
        a = t([0.4, 3.0], grad=True)
        D.Gamma(a, t([2.0, 2.0])).rsample((n,)).sum().backward()
        expected = t([0.5, 0.5])  # E = a / rate
    elif dist_name == "Beta":
        a = t([0.6, 3.0], grad=True)
        b = t([1.5, 2.0])
        D.Beta(a, b).rsample((n,)).sum().backward()
        expected = b / (a.detach() + b) ** 2  # E = a / (a + b)
    else:
        a = t([0.5, 2.0, 1.0], grad=True)
        weights = t([1.0, 0.0, 0.0])
        (D.Dirichlet(a).rsample((n,)) * weights).sum().backward()
        total = a.detach().sum()
        expected = (weights * total - a.detach()[0]) / total**2  # d(a_0 / sum a) / d a_j
    got = a.grad / n
    assert bool(((got - expected).abs() < 0.03 * expected.abs().max() + 0.01).all()), (got, expected)


def test_reparameterized_loss_trains():
    """A VAE-style reparameterized objective: fitting Normal(mu, softplus(rho)) to minimize E[(x - 3)^2] +
    the KL to N(0, 1) drives mu to the analytic optimum 3 * 2 / (2 + 1) = 2 and sigma**2 to 1/3."""
    mu = minitorch.zeros(1, dtype=F64, requires_grad=True)
    rho = minitorch.zeros(1, dtype=F64, requires_grad=True)
    optimizer = minitorch.optim.Adam([mu, rho], lr=0.05)
    prior = D.Normal(t([0.0]), t([1.0]))
    for _ in range(600):
        q = D.Normal(mu, minitorch.nn.functional.softplus(rho))
        z = q.rsample((64,))
        loss = ((z - 3) ** 2).mean() + D.kl_divergence(q, prior).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert abs(float(mu.detach()) - 2.0) < 0.1
    assert abs(float(minitorch.nn.functional.softplus(rho.detach())) ** 2 - 1 / 3) < 0.05


def test_validation_errors():
    with pytest.raises(ValueError, match="Expected parameter scale"):
        D.Normal(t([0.0]), t([-1.0]))
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Categorical()
    with pytest.raises(ValueError, match="The right-most size of value must match event_shape"):
        D.Dirichlet(t([1.0, 1.0])).log_prob(t([0.5, 0.2, 0.3]))
    with pytest.raises(ValueError, match="to be within the support"):
        D.Exponential(t([1.0])).log_prob(t([-1.0]))
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix"):
        D.MultivariateNormal(t([0.0, 0.0]))
    assert D.Normal(t([0.0]), t([-1.0]), validate_args=False).scale.item() == -1.0


def test_set_default_validate_args():
    try:
        D.Distribution.set_default_validate_args(False)
        D.Normal(t([0.0]), t([-1.0]))  # not checked
        with pytest.raises(ValueError):
            D.Normal(t([0.0]), t([-1.0]), validate_args=True)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(t([0.0]), t([-1.0]))
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")


def test_lazy_probs_and_logits():
    dist = D.Categorical(logits=t([0.0, math.log(3.0)]))
    assert "probs" not in dist.__dict__
    assert abs(float(dist.probs[1]) - 0.75) < 1e-12
    assert "probs" in dist.__dict__
    bern = D.Bernoulli(probs=t([0.25]))
    assert abs(float(bern.logits[0]) - math.log(1 / 3)) < 1e-12


def test_transform_cache_and_inverse():
    exp = D.ExpTransform(cache_size=1)
    x = t([0.5, -1.0])
    y = exp(x)
    assert exp.inv(y) is x  # the cached pair, no recomputation
    compose = D.ComposeTransform([D.AffineTransform(1.0, 2.0), D.TanhTransform()])
    z = t([0.1, -0.2])
    assert bool(((compose.inv(compose(z)) - z).abs() < 1e-12).all())
    assert compose.inv.inv is compose
    stick = D.StickBreakingTransform()
    y = stick(t([0.3, -0.1, 2.0]))
    assert abs(float(y.sum()) - 1.0) < 1e-12 and tuple(y.shape) == (4,)
    assert bool(((stick.inv(y) - t([0.3, -0.1, 2.0])).abs() < 1e-10).all())


def test_biject_to_maps_reals_into_the_constraint():
    for constraint, x in [(D.constraints.positive, _real()), (D.constraints.unit_interval, _real()),
                          (D.constraints.simplex, _real()), (D.constraints.interval(-2.0, 5.0), _real()),
                          (D.constraints.greater_than(1.0), _real()), (D.constraints.less_than(-1.0), _real()),
                          (D.constraints.corr_cholesky, _real()), (D.constraints.real_vector, _real())]:
        y = D.biject_to(constraint)(x.detach())
        assert bool(constraint.check(y).all()), constraint
    with pytest.raises(NotImplementedError):
        D.biject_to(D.constraints.lower_cholesky)
    assert bool(D.constraints.positive_definite.check(
        D.transform_to(D.constraints.positive_definite)(_real(False, (3, 3)))).all())


def test_module_paths():
    from minitorch.distributions.binomial import Binomial
    from minitorch.distributions.categorical import Categorical
    from minitorch.distributions.kl import kl_divergence
    from minitorch.distributions.normal import Normal

    assert minitorch.distributions.Normal is Normal and Categorical is D.Categorical
    assert kl_divergence is D.kl_divergence and Binomial is D.Binomial


def test_the_guide_examples_run():
    """Every python block of docs/distributions.md runs (the shapes it asserts, the VAE and policy steps)."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "distributions.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    assert len(blocks) == 4
    for block in blocks:
        exec(compile(block, "docs/distributions.md", "exec"), {})


@pytest.mark.parametrize("name", ["Normal", "Gamma", "Beta", "Binomial", "Poisson", "Bernoulli", "Laplace",
                                  "Exponential", "Uniform", "LogNormal"])
def test_zero_dim_and_empty_batches(name):
    """0-dim parameters give 0-dim draws; an empty batch gives empty draws and log_probs (not for Beta:
    validating its Dirichlet reshapes an empty batch with -1, which raises, in PyTorch too)."""
    make = {
        "Normal": lambda p: D.Normal(p, p + 1), "Gamma": lambda p: D.Gamma(p + 1, p + 2),
        "Beta": lambda p: D.Beta(p + 1, p + 2), "Binomial": lambda p: D.Binomial(p + 5, probs=p + 0.3),
        "Poisson": lambda p: D.Poisson(p + 2), "Bernoulli": lambda p: D.Bernoulli(probs=p + 0.5),
        "Laplace": lambda p: D.Laplace(p, p + 1), "Exponential": lambda p: D.Exponential(p + 1),
        "Uniform": lambda p: D.Uniform(p, p + 1), "LogNormal": lambda p: D.LogNormal(p, p + 1),
    }[name]
    scalar = make(t(0.0))
    draw = scalar.sample()
    assert draw.shape == () and scalar.log_prob(draw).shape == ()
    assert tuple(scalar.sample((3,)).shape) == (3,)
    if name == "Beta":
        return
    empty = make(minitorch.zeros(0, dtype=F64))
    assert tuple(empty.sample((3,)).shape) == (3, 0)
    assert tuple(empty.log_prob(empty.sample()).shape) == (0,)


def test_gradcheck_zero_dim_empty_and_non_contiguous_parameters():
    matrix = minitorch.rand(3, 2, dtype=F64) + 0.5
    scale = matrix.t().requires_grad_()  # non-contiguous
    assert not scale.is_contiguous()
    value = t([[0.2, 1.5, 2.0], [0.3, 0.1, 0.9]])
    for dist in (D.Normal, D.Laplace, D.Gamma):
        assert gradcheck(lambda s, dist=dist: dist(s, s + 1).log_prob(value) + dist(s, s + 1).entropy(), (scale,))
        assert gradcheck(lambda s, dist=dist: dist(s + 1, s + 2).log_prob(t(0.7)), (t(0.5, grad=True),))
        assert gradcheck(lambda s, dist=dist: dist(s + 1, s + 2).log_prob(s), (minitorch.zeros(0, dtype=F64,
                                                                                              requires_grad=True),))
    assert gradcheck(lambda x: gammainc(t([0.5, 3.0, 40.0]), x), (t([0.2, 4.0, 38.0], grad=True),))
    assert gradcheck(lambda x: gammainc(t(2.0), x), (t(1.5, grad=True),))
    assert gradcheck(lambda x: gammainc(t([[0.5], [3.0]]), x), (scale,))
    assert gradcheck(lambda x: gammainc(t(2.0), x), (minitorch.zeros(0, dtype=F64, requires_grad=True),))


def test_standard_gamma_backward_shapes():
    """The implicit gradient flows to 0-dim, empty and non-contiguous (expanded) concentrations."""
    for alpha in (t(2.0, grad=True), minitorch.zeros(0, dtype=F64, requires_grad=True),
                  t([1.0, 3.0], grad=True)):
        x = standard_gamma(alpha.expand((4,) + tuple(alpha.shape)))
        x.sum().backward()
        assert alpha.grad.shape == alpha.shape
        assert bool((alpha.grad > 0).all())  # a larger alpha gives larger draws for the same randomness


def test_samplers_are_the_documented_transformations_of_the_streams():
    """Normal, Uniform, Laplace, Bernoulli and Categorical draw exactly what PyTorch's transformation of the
    same basic draws gives (so they match PyTorch once the streams do)."""
    loc, scale = t([0.0, 1.0]), t([1.0, 3.0])
    cases = [
        (lambda: D.Normal(loc, scale).rsample((3,)),
         lambda: loc + minitorch.empty((3, 2), dtype=F64).normal_() * scale),
        (lambda: D.Normal(loc, scale).sample((3,)),
         lambda: minitorch.normal(loc.expand(3, 2), scale.expand(3, 2))),
        (lambda: D.Uniform(loc, loc + scale).rsample((3,)),
         lambda: loc + minitorch.rand((3, 2), dtype=F64) * scale),
        (lambda: D.Laplace(loc, scale).rsample((3,)),
         lambda: (lambda u: loc - scale * u.sign() * (-u.abs()).log1p())(
             minitorch.empty((3, 2), dtype=F64).uniform_(2.0**-52 - 1, 1))),
        (lambda: D.Bernoulli(probs=t([0.3, 0.6])).sample((5,)),
         lambda: minitorch.bernoulli(t([0.3, 0.6]).expand(5, 2))),
        (lambda: D.Categorical(probs=t([[0.2, 0.8], [0.5, 0.5]])).sample((4,)),
         lambda: minitorch.multinomial(t([[0.2, 0.8], [0.5, 0.5]]), 4, True).T),
    ]
    for draw, by_hand in cases:
        minitorch.manual_seed(11)
        got = draw()
        minitorch.manual_seed(11)
        assert bool((got == by_hand()).all())


def test_von_mises_circular_moments():
    """For VonMises, ``mean`` and ``variance`` are circular: the mean direction and ``1 - E[cos(x - loc)]``."""
    dist = D.VonMises(t([0.5, -2.0, 3.0]), t([0.3, 2.0, 20.0]))
    n = 40000
    x = dist.sample((n,))
    assert bool(((x >= -math.pi) & (x < math.pi)).all())
    direction = minitorch.atan2(x.sin().mean(0), x.cos().mean(0))
    assert bool((((direction - dist.mean + math.pi) % (2 * math.pi) - math.pi).abs() < 0.1).all()), direction
    circular_variance = 1 - (x - dist.loc).cos().mean(0)
    assert bool(((circular_variance - dist.variance).abs() < 0.02).all()), (circular_variance, dist.variance)


def test_lkj_cholesky_samples_are_correlation_factors():
    """Samples are lower Cholesky factors of correlation matrices whose off-diagonal entries average 0 and,
    for LKJ(eta) in 3 dimensions, have variance 1 / (2 eta + 2)."""
    for eta in (0.5, 1.0, 4.0):
        dist = D.LKJCholesky(3, t(eta))
        L = dist.sample((20000,))
        assert bool(D.constraints.corr_cholesky.check(L).all())
        corr = L @ L.mT
        off = corr[..., 1, 0]
        assert abs(float(off.mean())) < 0.03
        assert abs(float(off.var()) - 1 / (2 * eta + 2)) < 0.02, (eta, float(off.var()))


def test_wishart_rsample_warns_only_for_singular_draws():
    """A well-conditioned Wishart draws without the "Singular sample detected." warning (PyTorch 2.13 warns on
    every draw: it tests the support check's result the wrong way round)."""
    import warnings

    dist = D.Wishart(t(6.0), covariance_matrix=t([[1.0, 0.2], [0.2, 2.0]]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        draws = dist.rsample((100,))
    assert bool(D.constraints.positive_definite.check(draws).all())
