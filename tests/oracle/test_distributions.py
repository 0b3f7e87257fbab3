"""minitorch.distributions against torch.distributions: the same parameters give the same shapes, moments,
log_prob / entropy / cdf / icdf / kl_divergence values and gradients (float64), the same transforms, and the
same exception types and validation messages. Sampling streams differ, so samples are compared only
through their moments (tests/test_distributions.py)."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minitorch  # noqa: E402
from minitorch.distributions._standard_gamma import standard_gamma_grad  # noqa: E402

RNG = np.random.default_rng(0)
POS = RNG.uniform(0.5, 2.0, size=(3,))
POS2 = RNG.uniform(0.5, 2.0, size=(3,))
REAL = RNG.normal(size=(3,))
REAL2 = RNG.normal(size=(3,))
PROBS = np.array([0.2, 0.5, 0.9])
SIMPLEX = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
LOGITS = RNG.normal(size=(2, 3))
CONC = RNG.uniform(0.5, 3.0, size=(2, 3))
A = RNG.normal(size=(3, 3))
COV = A @ A.T + 3 * np.eye(3)
TRIL = np.linalg.cholesky(COV)
UNIT = np.array([0.1, 0.45, 0.8])


def _tensor(mod, array, grad=False):
    return mod.tensor(np.asarray(array, dtype=np.float64), dtype=mod.float64, requires_grad=grad)


# name: (builder(distributions, params), params, value for log_prob/cdf, probabilities for icdf or None)
CASES = {
    "Normal": (lambda D, p: D.Normal(p["loc"], p["scale"]), {"loc": REAL, "scale": POS}, REAL2, UNIT),
    "Normal-scalar": (lambda D, p: D.Normal(0.5, 2.0), {}, REAL2, UNIT),
    "Uniform": (lambda D, p: D.Uniform(p["low"], p["low"] + p["width"]), {"low": REAL, "width": POS + 3},
                REAL + 1.0, UNIT),
    "Bernoulli-probs": (lambda D, p: D.Bernoulli(probs=p["probs"]), {"probs": PROBS}, [0.0, 1.0, 1.0], None),
    "Bernoulli-logits": (lambda D, p: D.Bernoulli(logits=p["logits"]), {"logits": REAL}, [1.0, 0.0, 1.0], None),
    "Categorical-probs": (lambda D, p: D.Categorical(probs=p["probs"]), {"probs": SIMPLEX}, [2.0, 0.0], None),
    "Categorical-logits": (lambda D, p: D.Categorical(logits=p["logits"]), {"logits": LOGITS}, [[1.0, 2.0]],
                           None),
    "OneHotCategorical": (lambda D, p: D.OneHotCategorical(logits=p["logits"]), {"logits": LOGITS},
                          [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], None),
    "Exponential": (lambda D, p: D.Exponential(p["rate"]), {"rate": POS}, POS2, UNIT),
    "Laplace": (lambda D, p: D.Laplace(p["loc"], p["scale"]), {"loc": REAL, "scale": POS}, REAL2, UNIT),
    "Gamma": (lambda D, p: D.Gamma(p["concentration"], p["rate"]), {"concentration": POS, "rate": POS2}, POS2,
              None),
    "Beta": (lambda D, p: D.Beta(p["a"], p["b"]), {"a": POS, "b": POS2}, UNIT, None),
    "Beta-scalar": (lambda D, p: D.Beta(2.0, 3.0), {}, UNIT, None),
    "Dirichlet": (lambda D, p: D.Dirichlet(p["concentration"]), {"concentration": CONC}, SIMPLEX, None),
    "Dirichlet-small": (lambda D, p: D.Dirichlet(p["concentration"]), {"concentration": CONC * 0.3}, SIMPLEX,
                        None),
    "Poisson": (lambda D, p: D.Poisson(p["rate"]), {"rate": POS * 3}, [0.0, 2.0, 5.0], None),
    "Binomial-probs": (lambda D, p: D.Binomial(10, probs=p["probs"]), {"probs": PROBS}, [0.0, 4.0, 10.0], None),
    "Binomial-logits": (lambda D, p: D.Binomial(p["n"].detach(), logits=p["logits"]),
                        {"n": [5.0, 7.0, 9.0], "logits": REAL}, [1.0, 7.0, 3.0], None),
    "Multinomial": (lambda D, p: D.Multinomial(6, probs=p["probs"]), {"probs": SIMPLEX},
                    [[1.0, 2.0, 3.0], [6.0, 0.0, 0.0]], None),
    "MultivariateNormal-cov": (lambda D, p: D.MultivariateNormal(p["loc"], covariance_matrix=p["cov"]),
                               {"loc": REAL, "cov": COV}, [REAL2, REAL], None),
    "MultivariateNormal-tril": (lambda D, p: D.MultivariateNormal(p["loc"], scale_tril=p["tril"]),
                                {"loc": REAL, "tril": TRIL}, REAL2, None),
    "MultivariateNormal-precision": (lambda D, p: D.MultivariateNormal(p["loc"], precision_matrix=p["prec"]),
                                     {"loc": REAL, "prec": COV}, REAL2, None),
    "LogNormal": (lambda D, p: D.LogNormal(p["loc"], p["scale"]), {"loc": REAL, "scale": POS}, POS2, UNIT),
    "Independent": (lambda D, p: D.Independent(D.Normal(p["loc"], p["scale"]), 1), {"loc": REAL, "scale": POS},
                    REAL2, None),
    "Transformed-affine-exp": (
        lambda D, p: D.TransformedDistribution(
            D.Normal(p["loc"], p["scale"]), [D.AffineTransform(0.5, 2.0), D.ExpTransform()]),
        {"loc": REAL, "scale": POS}, POS2, UNIT),
    "Transformed-sigmoid": (
        lambda D, p: D.TransformedDistribution(D.Normal(p["loc"], p["scale"]), D.SigmoidTransform()),
        {"loc": REAL, "scale": POS}, UNIT, UNIT),
    "Transformed-tanh-negative-affine": (
        lambda D, p: D.TransformedDistribution(
            D.Uniform(p["low"], p["low"] + 1.0), [D.TanhTransform(), D.AffineTransform(1.0, -3.0)]),
        {"low": [-0.5, 0.0, 0.2]}, [0.0, -0.5, -1.0], UNIT),
    "Transformed-stick-breaking": (
        lambda D, p: D.TransformedDistribution(D.Normal(p["loc"], p["scale"]), D.StickBreakingTransform()),
        {"loc": REAL, "scale": POS}, [0.1, 0.2, 0.3, 0.4], None),
    "Chi2": (lambda D, p: D.Chi2(p["df"]), {"df": POS * 3}, POS2, None),
    "HalfNormal": (lambda D, p: D.HalfNormal(p["scale"]), {"scale": POS}, POS2, UNIT),
    "Cauchy": (lambda D, p: D.Cauchy(p["loc"], p["scale"]), {"loc": REAL, "scale": POS}, REAL2, UNIT),
    "HalfCauchy": (lambda D, p: D.HalfCauchy(p["scale"]), {"scale": POS}, POS2, UNIT),
    "Gumbel": (lambda D, p: D.Gumbel(p["loc"], p["scale"]), {"loc": REAL, "scale": POS}, REAL2, UNIT),
    "Gumbel-scalar": (lambda D, p: D.Gumbel(0.5, 2.0), {}, REAL2, UNIT),
    "Geometric-probs": (lambda D, p: D.Geometric(probs=p["probs"]), {"probs": PROBS}, [0.0, 3.0, 1.0], None),
    "Geometric-logits": (lambda D, p: D.Geometric(logits=p["logits"]), {"logits": REAL}, [2.0, 0.0, 5.0], None),
    "Pareto": (lambda D, p: D.Pareto(p["scale"], p["alpha"]), {"scale": POS * 0.2, "alpha": POS2 * 3}, POS2 + 0.5,
               UNIT),
    "StudentT": (lambda D, p: D.StudentT(p["df"], p["loc"], p["scale"]),
                 {"df": [0.8, 1.5, 5.0], "loc": REAL, "scale": POS}, REAL2, None),
    "Weibull": (lambda D, p: D.Weibull(p["scale"], p["concentration"]), {"scale": POS, "concentration": POS2 + 0.5},
                POS2, UNIT),
    "InverseGamma": (lambda D, p: D.InverseGamma(p["concentration"], p["rate"]),
                     {"concentration": [0.5, 1.5, 3.0], "rate": POS2}, POS, None),
    "Kumaraswamy": (lambda D, p: D.Kumaraswamy(p["a"], p["b"]), {"a": POS + 0.5, "b": [0.7, 2.0, 3.0]}, UNIT, UNIT),
    "LogisticNormal": (lambda D, p: D.LogisticNormal(p["loc"], p["scale"]), {"loc": REAL, "scale": POS},
                       [0.1, 0.2, 0.3, 0.4], None),
    "NegativeBinomial": (lambda D, p: D.NegativeBinomial(p["n"], logits=p["logits"]),
                         {"n": [0.5, 2.0, 4.0], "logits": REAL}, [0.0, 3.0, 1.0], None),
    "NegativeBinomial-probs": (lambda D, p: D.NegativeBinomial(p["n"], probs=p["probs"]),
                               {"n": [0.0, 2.0, 4.0], "probs": [0.2, 0.5, 0.0]}, [0.0, 3.0, 1.0], None),
    "FisherSnedecor": (lambda D, p: D.FisherSnedecor(p["df1"], p["df2"]), {"df1": [1.5, 3.0, 6.0],
                                                                          "df2": [2.0, 5.0, 9.0]}, POS, None),
    "LowRankMultivariateNormal": (lambda D, p: D.LowRankMultivariateNormal(p["loc"], p["W"], p["d"]),
                                  {"loc": REAL, "W": A[:, :2], "d": POS}, [REAL2, REAL], None),
    "MixtureSameFamily-Normal": (
        lambda D, p: D.MixtureSameFamily(D.Categorical(logits=p["logits"]), D.Normal(p["loc"], p["scale"])),
        {"logits": LOGITS, "loc": LOGITS * 2, "scale": CONC}, [[0.5], [-1.0]], None),
    "MixtureSameFamily-MVN": (
        lambda D, p: D.MixtureSameFamily(D.Categorical(logits=p["logits"]),
                                         D.MultivariateNormal(p["loc"], scale_tril=p["tril"])),
        {"logits": REAL, "loc": A, "tril": TRIL}, [REAL2, REAL], None),
    "ContinuousBernoulli-probs": (lambda D, p: D.ContinuousBernoulli(probs=p["probs"]),
                                  {"probs": [0.2, 0.4995, 0.9]}, UNIT, UNIT),
    "ContinuousBernoulli-logits": (lambda D, p: D.ContinuousBernoulli(logits=p["logits"]), {"logits": REAL}, UNIT,
                                   UNIT),
    # float32: PyTorch's log_prob compares the concentration with a float32 zero (isclose), which raises
    # "Double did not match Float" for float64 parameters (minitorch accepts both)
    "GeneralizedPareto": (lambda D, p: D.GeneralizedPareto(p["loc"].float(), p["scale"].float(), p["c"].float()),
                          {"loc": [0.0, 0.5, -1.0], "scale": POS, "c": [0.3, 0.0, -0.2]}, [0.5, 1.0, 0.0], UNIT),
    "VonMises": (lambda D, p: D.VonMises(p["loc"], p["concentration"]),
                 {"loc": REAL, "concentration": [0.5, 3.0, 10.0]}, REAL2, None),
    "LKJCholesky": (lambda D, p: D.LKJCholesky(3, p["concentration"]), {"concentration": [0.5, 2.0]},
                    [[[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.6, 0.8]]], None),
    "Wishart-cov": (lambda D, p: D.Wishart(p["df"], covariance_matrix=p["cov"]), {"df": [4.5, 7.0], "cov": COV},
                    [COV * 2, COV + np.eye(3)], None),
    "Wishart-tril": (lambda D, p: D.Wishart(p["df"], scale_tril=p["tril"]), {"df": [2.5], "tril": TRIL}, COV, None),
    "Wishart-precision": (lambda D, p: D.Wishart(p["df"], precision_matrix=p["prec"]), {"df": [5.0], "prec": COV},
                          COV, None),
    "RelaxedBernoulli": (lambda D, p: D.RelaxedBernoulli(p["t"], probs=p["probs"]),
                         {"t": [0.7], "probs": PROBS}, UNIT, None),
    "RelaxedOneHotCategorical": (lambda D, p: D.RelaxedOneHotCategorical(p["t"], logits=p["logits"]),
                                 {"t": [0.5], "logits": LOGITS}, SIMPLEX, None),
}

PROPERTIES = ["mean", "variance", "stddev", "mode"]
METHODS = ["entropy", "perplexity"]


def _build(mod, name, grad):
    builder, params, value, probs = CASES[name]
    tensors = {k: _tensor(mod, v, grad) for k, v in params.items()}
    return builder(mod.distributions, tensors), tensors, _tensor(mod, value), (
        None if probs is None else _tensor(mod, probs))


def _outcome(fn):
    """(a string result, or (value as float64 numpy, dtype name), or None; then an exception type name or
    "float32" for a float32 result, else None)."""
    try:
        out = fn()
    except Exception as exc:  # noqa: BLE001 - the exception type is compared with PyTorch's
        return None, type(exc).__name__
    if isinstance(out, str):
        return out, None
    if hasattr(out, "detach"):
        out = out.detach()
        tight = out.dtype in (torch.float64, minitorch.float64, torch.int64, minitorch.int64)
        return (np.asarray(out.numpy(), dtype=np.float64), str(out.dtype).replace("minitorch", "torch")), (
            None if tight else "float32")
    return np.asarray(out, dtype=np.float64), None


def _evaluations(dist, value, probs):
    yield "batch_shape", lambda: np.asarray(tuple(dist.batch_shape))
    yield "event_shape", lambda: np.asarray(tuple(dist.event_shape))
    for prop in PROPERTIES:
        yield prop, lambda prop=prop: getattr(dist, prop)
    for method in METHODS:
        yield method, lambda method=method: getattr(dist, method)()
    yield "log_prob", lambda: dist.log_prob(value)
    yield "cdf", lambda: dist.cdf(value)
    if probs is not None:
        yield "icdf", lambda: dist.icdf(probs)
    if dist.has_enumerate_support:
        yield "enumerate_support", lambda: dist.enumerate_support()
        yield "enumerate_support(expand=False)", lambda: dist.enumerate_support(expand=False)
    yield "expand", lambda: dist.expand((2,) + tuple(dist.batch_shape)).log_prob(value)
    yield "sample shape", lambda: np.asarray(tuple(dist.sample((4, 1)).shape))
    yield "sample dtype", lambda: str(dist.sample().dtype).replace("minitorch", "torch")
    if dist.has_rsample:
        yield "rsample dtype", lambda: str(dist.rsample((2,)).dtype).replace("minitorch", "torch")


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_pytorch(name):
    theirs, _, t_value, t_probs = _build(torch, name, grad=False)
    mine, _, m_value, m_probs = _build(minitorch, name, grad=False)
    for (label, t_fn), (_, m_fn) in zip(_evaluations(theirs, t_value, t_probs), _evaluations(mine, m_value, m_probs)):
        expected, expected_error = _outcome(t_fn)
        got, got_error = _outcome(m_fn)
        rtol = 1e-5 if expected_error == "float32" else 1e-9
        assert got_error == expected_error, f"{name}.{label}: {got_error} vs PyTorch's {expected_error}"
        if isinstance(expected, str):
            assert got == expected, f"{name}.{label}: {got} vs PyTorch's {expected}"
        elif expected is not None:
            if isinstance(expected, tuple):
                assert got[1] == expected[1], f"{name}.{label}: dtype {got[1]} vs PyTorch's {expected[1]}"
                got, expected = got[0], expected[0]
            assert got.shape == expected.shape, f"{name}.{label}: shape {got.shape} vs {expected.shape}"
            np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * 1e-3, equal_nan=True,
                                       err_msg=f"{name}.{label}")


def _loss(dist, value, probs, with_cdf=True):
    """A scalar that reads every differentiable method PyTorch implements for ``dist``."""
    terms = [dist.log_prob(value).sum()]
    cdf = (lambda: dist.cdf(value)) if with_cdf else (lambda: None)
    for fn in (lambda: dist.entropy(), lambda: dist.mean, lambda: dist.variance, cdf,
               lambda: dist.icdf(probs) if probs is not None else None):
        try:
            out = fn()
        except NotImplementedError:
            continue
        if out is not None and out.requires_grad:
            terms.append(out.sum() if (out == out).all() else out.nan_to_num().sum())
    return sum(terms[1:], terms[0])


@pytest.mark.parametrize("name", sorted(n for n in CASES if CASES[n][1]))
def test_gradients_match_pytorch(name):
    theirs, t_params, t_value, t_probs = _build(torch, name, grad=True)
    mine, m_params, m_value, m_probs = _build(minitorch, name, grad=True)
    try:
        _loss(theirs, t_value, t_probs).backward()
    except NotImplementedError as exc:  # the cdf of a Gamma in its concentration (igamma)
        with pytest.raises(NotImplementedError, match=str(exc)):
            _loss(mine, m_value, m_probs).backward()
        theirs, t_params, t_value, t_probs = _build(torch, name, grad=True)
        mine, m_params, m_value, m_probs = _build(minitorch, name, grad=True)
        _loss(theirs, t_value, t_probs, with_cdf=False).backward()
        _loss(mine, m_value, m_probs, with_cdf=False).backward()
    else:
        _loss(mine, m_value, m_probs).backward()
    for key in t_params:
        t_grad, m_grad = t_params[key].grad, m_params[key].grad
        assert (t_grad is None) == (m_grad is None), f"{name}: grad of {key}"
        if t_grad is not None:
            np.testing.assert_allclose(m_grad.numpy(), t_grad.numpy(), rtol=1e-7, atol=1e-10,
                                       err_msg=f"{name}: d/d{key}")


# (p builder, q builder, params): each builder gets (distributions, params)
KL_CASES = {
    "Normal-Normal": (lambda D, p: D.Normal(p["a"], p["s"]), lambda D, p: D.Normal(p["b"], p["t"])),
    "Bernoulli-Bernoulli": (lambda D, p: D.Bernoulli(logits=p["a"]), lambda D, p: D.Bernoulli(logits=p["b"])),
    "Categorical-Categorical": (lambda D, p: D.Categorical(logits=p["la"]),
                                lambda D, p: D.Categorical(logits=p["lb"])),
    "OneHot-OneHot": (lambda D, p: D.OneHotCategorical(logits=p["la"]),
                      lambda D, p: D.OneHotCategorical(logits=p["lb"])),
    "Beta-Beta": (lambda D, p: D.Beta(p["s"], p["t"]), lambda D, p: D.Beta(p["t"], p["s"] + 1)),
    "Gamma-Gamma": (lambda D, p: D.Gamma(p["s"], p["t"]), lambda D, p: D.Gamma(p["t"], p["s"])),
    "Dirichlet-Dirichlet": (lambda D, p: D.Dirichlet(p["c"]), lambda D, p: D.Dirichlet(p["c"].flip(-1) + 0.5)),
    "MVN-MVN": (lambda D, p: D.MultivariateNormal(p["a"], covariance_matrix=p["cov"]),
                lambda D, p: D.MultivariateNormal(p["b"], scale_tril=p["tril"] * 0.5)),
    "Uniform-Uniform": (lambda D, p: D.Uniform(p["a"], p["a"] + p["s"]),
                        lambda D, p: D.Uniform(p["a"] - 1.0, p["a"] + p["s"] + p["t"])),
    "Uniform-Uniform-infinite": (lambda D, p: D.Uniform(p["a"], p["a"] + p["s"]),
                                 lambda D, p: D.Uniform(p["a"] + 0.1, p["a"] + p["s"] + p["t"])),
    "Exponential-Exponential": (lambda D, p: D.Exponential(p["s"]), lambda D, p: D.Exponential(p["t"])),
    "Laplace-Laplace": (lambda D, p: D.Laplace(p["a"], p["s"]), lambda D, p: D.Laplace(p["b"], p["t"])),
    "Poisson-Poisson": (lambda D, p: D.Poisson(p["s"]), lambda D, p: D.Poisson(p["t"])),
    "Binomial-Binomial": (lambda D, p: D.Binomial(5, logits=p["a"]), lambda D, p: D.Binomial(5, logits=p["b"])),
    "Independent-Independent": (lambda D, p: D.Independent(D.Normal(p["a"], p["s"]), 1),
                                lambda D, p: D.Independent(D.Normal(p["b"], p["t"]), 1)),
    "LogNormal-LogNormal": (lambda D, p: D.LogNormal(p["a"], p["s"]), lambda D, p: D.LogNormal(p["b"], p["t"])),
    "Normal-Laplace": (lambda D, p: D.Normal(p["a"], p["s"]), lambda D, p: D.Laplace(p["b"], p["t"])),
    "Laplace-Normal": (lambda D, p: D.Laplace(p["a"], p["s"]), lambda D, p: D.Normal(p["b"], p["t"])),
    "Exponential-Gamma": (lambda D, p: D.Exponential(p["s"]), lambda D, p: D.Gamma(p["t"], p["s"])),
    "Gamma-Normal": (lambda D, p: D.Gamma(p["s"], p["t"]), lambda D, p: D.Normal(p["a"], p["t"])),
    "Beta-Normal": (lambda D, p: D.Beta(p["s"], p["t"]), lambda D, p: D.Normal(p["a"], p["t"])),
    "Beta-Uniform": (lambda D, p: D.Beta(p["s"], p["t"]), lambda D, p: D.Uniform(p["a"] - 3.0, p["a"] + 3.0)),
    "Uniform-Normal": (lambda D, p: D.Uniform(p["a"], p["a"] + p["s"]), lambda D, p: D.Normal(p["b"], p["t"])),
    "Uniform-Gamma": (lambda D, p: D.Uniform(p["s"], p["s"] + p["t"]), lambda D, p: D.Gamma(p["t"], p["s"])),
    "Uniform-Beta": (lambda D, p: D.Uniform(p["u"] * 0.5, p["u"] * 0.5 + 0.4), lambda D, p: D.Beta(p["s"], p["t"])),
    "Normal-Gamma (infinite)": (lambda D, p: D.Normal(p["a"], p["s"]), lambda D, p: D.Gamma(p["s"], p["t"])),
    "Bernoulli-Poisson": (lambda D, p: D.Bernoulli(logits=p["a"]), lambda D, p: D.Poisson(p["s"])),
    "Gumbel-Gumbel": (lambda D, p: D.Gumbel(p["a"], p["s"]), lambda D, p: D.Gumbel(p["b"], p["t"])),
    "Geometric-Geometric": (lambda D, p: D.Geometric(probs=p["u"]), lambda D, p: D.Geometric(logits=p["a"])),
    "HalfNormal-HalfNormal": (lambda D, p: D.HalfNormal(p["s"]), lambda D, p: D.HalfNormal(p["t"])),
    "Pareto-Pareto": (lambda D, p: D.Pareto(p["s"], p["t"]), lambda D, p: D.Pareto(p["t"], p["s"])),
    "Cauchy-Cauchy": (lambda D, p: D.Cauchy(p["a"], p["s"]), lambda D, p: D.Cauchy(p["b"], p["t"])),
    "Chi2-Chi2 (Gamma)": (lambda D, p: D.Chi2(p["s"]), lambda D, p: D.Chi2(p["t"])),
    "Exponential-Gumbel": (lambda D, p: D.Exponential(p["s"]), lambda D, p: D.Gumbel(p["a"], p["t"])),
    "Gamma-Gumbel": (lambda D, p: D.Gamma(p["s"], p["t"]), lambda D, p: D.Gumbel(p["a"], p["t"])),
    "Gumbel-Normal": (lambda D, p: D.Gumbel(p["a"], p["s"]), lambda D, p: D.Normal(p["b"], p["t"])),
    "Normal-Gumbel": (lambda D, p: D.Normal(p["a"], p["s"]), lambda D, p: D.Gumbel(p["b"], p["t"])),
    "Uniform-Gumbel": (lambda D, p: D.Uniform(p["a"], p["a"] + p["s"]), lambda D, p: D.Gumbel(p["b"], p["t"])),
    "Pareto-Exponential": (lambda D, p: D.Pareto(p["s"], p["t"] * 2), lambda D, p: D.Exponential(p["s"])),
    "Pareto-Gamma": (lambda D, p: D.Pareto(p["s"], p["t"] * 2), lambda D, p: D.Gamma(p["s"], p["t"])),
    "Pareto-Normal": (lambda D, p: D.Pareto(p["s"], p["t"] * 2), lambda D, p: D.Normal(p["a"], p["t"])),
    "Uniform-Pareto": (lambda D, p: D.Uniform(p["s"] + 0.5, p["s"] + 1.5), lambda D, p: D.Pareto(p["u"], p["t"])),
    "LowRank-LowRank": (lambda D, p: D.LowRankMultivariateNormal(p["a"], p["cov"][:, :2], p["s"]),
                        lambda D, p: D.LowRankMultivariateNormal(p["b"], p["tril"][:, 1:], p["t"])),
    "MVN-LowRank": (lambda D, p: D.MultivariateNormal(p["a"], covariance_matrix=p["cov"]),
                    lambda D, p: D.LowRankMultivariateNormal(p["b"], p["tril"][:, 1:], p["t"])),
    "LowRank-MVN": (lambda D, p: D.LowRankMultivariateNormal(p["a"], p["cov"][:, :2], p["s"]),
                    lambda D, p: D.MultivariateNormal(p["b"], scale_tril=p["tril"])),
    "ContinuousBernoulli-ContinuousBernoulli": (lambda D, p: D.ContinuousBernoulli(probs=p["u"]),
                                                lambda D, p: D.ContinuousBernoulli(logits=p["a"])),
    "Beta-ContinuousBernoulli": (lambda D, p: D.Beta(p["s"], p["t"]), lambda D, p: D.ContinuousBernoulli(logits=p["a"])),
    "ContinuousBernoulli-Normal": (lambda D, p: D.ContinuousBernoulli(probs=p["u"]), lambda D, p: D.Normal(p["a"], p["s"])),
    "ContinuousBernoulli-Exponential": (lambda D, p: D.ContinuousBernoulli(probs=p["u"]),
                                        lambda D, p: D.Exponential(p["s"])),
    "ContinuousBernoulli-Uniform": (lambda D, p: D.ContinuousBernoulli(probs=p["u"]),
                                    lambda D, p: D.Uniform(p["a"] - 2, p["a"] + 2)),
    "Uniform-ContinuousBernoulli": (lambda D, p: D.Uniform(p["u"] * 0.5, p["u"] * 0.5 + 0.3),
                                    lambda D, p: D.ContinuousBernoulli(logits=p["a"])),
    "Gumbel-Uniform (infinite)": (lambda D, p: D.Gumbel(p["a"], p["s"]), lambda D, p: D.Uniform(p["a"], p["a"] + 1)),
}
KL_PARAMS = {"a": REAL, "b": REAL2, "s": POS, "t": POS2, "la": LOGITS, "lb": LOGITS[::-1] * 0.5, "c": CONC,
             "cov": COV, "tril": TRIL, "u": UNIT}


def _kl(mod, name):
    p_builder, q_builder = KL_CASES[name]
    params = {k: _tensor(mod, v, grad=True) for k, v in KL_PARAMS.items()}
    D = mod.distributions
    return D.kl_divergence(p_builder(D, params), q_builder(D, params)), params


@pytest.mark.parametrize("name", sorted(KL_CASES))
def test_kl_divergence_matches_pytorch(name):
    expected, t_params = _kl(torch, name)
    got, m_params = _kl(minitorch, name)
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-9, atol=1e-12)
    finite = torch.isfinite(expected)
    if not bool(finite.any()) or not expected.requires_grad:
        return
    expected[finite].sum().backward()
    got[minitorch.tensor(finite.numpy())].sum().backward()
    for key, t_param in t_params.items():
        m_grad = m_params[key].grad
        if t_param.grad is None:
            assert m_grad is None or not m_grad.numpy().any(), f"{name}: d/d{key}"
        else:
            np.testing.assert_allclose(m_grad.numpy(), t_param.grad.numpy(), rtol=1e-8, atol=1e-10,
                                       err_msg=f"{name}: d/d{key}")


def test_kl_not_implemented_and_register_kl():
    for mod in (torch, minitorch):
        D = mod.distributions
        with pytest.raises(NotImplementedError, match="No KL"):
            D.kl_divergence(D.Categorical(logits=mod.zeros(3)), D.Normal(0.0, 1.0))

    class MyNormal(minitorch.distributions.Normal):
        pass

    @minitorch.distributions.register_kl(MyNormal, minitorch.distributions.Normal)
    def _kl_mine(p, q):
        return p.loc * 0 + 42.0

    D = minitorch.distributions
    assert float(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0))) == 42.0
    assert float(D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(0.0, 1.0))) == 0.0


TRANSFORMS = {
    "Exp": (lambda D: D.ExpTransform(), REAL),
    "Affine": (lambda D: D.AffineTransform(0.5, -2.0), REAL),
    "Affine-event": (lambda D: D.AffineTransform(REAL_T(D), POS_T(D), event_dim=1), REAL),
    "Sigmoid": (lambda D: D.SigmoidTransform(), REAL),
    "Tanh": (lambda D: D.TanhTransform(), REAL),
    "Softplus": (lambda D: D.SoftplusTransform(), REAL),
    "Power": (lambda D: D.PowerTransform(POS_T(D)), POS),
    "StickBreaking": (lambda D: D.StickBreakingTransform(), REAL),
    "Softmax": (lambda D: D.SoftmaxTransform(), REAL),
    "LowerCholesky": (lambda D: D.LowerCholeskyTransform(), A),
    "CorrCholesky": (lambda D: D.CorrCholeskyTransform(), REAL),
    "Compose": (lambda D: D.ComposeTransform([D.AffineTransform(1.0, 2.0), D.ExpTransform()]), REAL),
    "Inverse-Exp": (lambda D: D.ExpTransform().inv, POS),
    "Reshape": (lambda D: D.ReshapeTransform((3,), (3, 1)), REAL),
    "Independent-Sigmoid": (lambda D: D.IndependentTransform(D.SigmoidTransform(), 1), REAL),
    "Cat": (lambda D: D.CatTransform([D.ExpTransform(), D.AffineTransform(0.0, 3.0)], 0, [1, 2]), REAL),
    "Stack": (lambda D: D.StackTransform([D.ExpTransform(), D.SigmoidTransform(), D.TanhTransform()], 0), REAL),
}


def REAL_T(D):  # noqa: N802 - a parameter tensor in the module that D belongs to
    mod = torch if D.__name__.startswith("torch") else minitorch
    return _tensor(mod, REAL2)


def POS_T(D):  # noqa: N802
    mod = torch if D.__name__.startswith("torch") else minitorch
    return _tensor(mod, POS2)


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transforms_match_pytorch(name):
    results = []
    for mod in (torch, minitorch):
        D = mod.distributions.transforms
        builder, x = TRANSFORMS[name]
        t = builder(D)
        x = _tensor(mod, x, grad=True)
        y = t(x)
        out = {"y": y, "x_back": t.inv(y)}
        try:
            out["ladj"] = t.log_abs_det_jacobian(x, y)
        except NotImplementedError:
            out["ladj"] = None
        total = y.sum() + (out["ladj"].sum() if out["ladj"] is not None else 0)
        total.backward()
        out["grad"] = x.grad
        out["domain"], out["codomain"] = repr(t.domain), repr(t.codomain)
        out["shape"] = tuple(t.forward_shape((2, 3))) if name not in ("LowerCholesky", "Reshape") else None
        out["bijective"] = t.bijective
        results.append(out)
    theirs, mine = results
    for key in theirs:
        if theirs[key] is None or isinstance(theirs[key], (str, tuple, bool)):
            assert mine[key] == theirs[key], f"{name}.{key}"
        else:
            np.testing.assert_allclose(mine[key].detach().numpy(), theirs[key].detach().numpy(), rtol=1e-9,
                                       atol=1e-12, err_msg=f"{name}.{key}")


CONSTRAINTS = ["real", "positive", "nonnegative", "unit_interval", "simplex", "lower_cholesky", "positive_definite",
               "corr_cholesky", "real_vector"]


@pytest.mark.parametrize("name", CONSTRAINTS)
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_constraint_registry_matches_pytorch(name, registry):
    outcomes = []
    for mod in (torch, minitorch):
        D = mod.distributions
        try:
            t = getattr(D, registry)(getattr(D.constraints, name))
        except NotImplementedError:
            outcomes.append("NotImplementedError")
            continue
        x = _tensor(mod, A if name in ("lower_cholesky", "positive_definite") else REAL)
        outcomes.append((type(t).__name__, np.round(t(x).numpy(), 10).tolist()))
    assert outcomes[1] == outcomes[0]


@pytest.mark.parametrize("constraint,value", [
    ("positive", [1.0, 0.0, -1.0]), ("unit_interval", [0.0, 1.0, 1.5]), ("simplex", [[0.2, 0.8], [0.5, 0.6]]),
    ("real", [1.0, math.nan]), ("boolean", [0.0, 1.0, 0.5]), ("nonnegative_integer", [0.0, 2.0, 1.5]),
    ("lower_cholesky", [[[1.0, 0.0], [2.0, 3.0]], [[1.0, 1.0], [0.0, 1.0]]]),
    ("positive_definite", [[[2.0, 0.5], [0.5, 1.0]], [[1.0, 2.0], [2.0, 1.0]]]),
    ("one_hot", [[0.0, 1.0], [1.0, 1.0]]), ("real_vector", [[1.0, math.nan], [1.0, 2.0]]),
])
def test_constraint_checks_match_pytorch(constraint, value):
    got = minitorch.distributions.constraints.__dict__[constraint].check(minitorch.tensor(value, dtype=minitorch.float64))
    expected = torch.distributions.constraints.__dict__[constraint].check(torch.tensor(value, dtype=torch.float64))
    assert got.tolist() == expected.tolist()
    assert repr(minitorch.distributions.constraints.__dict__[constraint]) == repr(
        torch.distributions.constraints.__dict__[constraint])


# (label, source): `D` is the distributions module, `t` the tensor module
ERRORS = [
    ("Normal: negative scale", "D.Normal(t.tensor([0.0]), t.tensor([-1.0]))"),
    ("Normal: NaN loc", "D.Normal(t.tensor([float('nan')]), t.tensor([1.0]))"),
    ("Normal: log_prob of a non-tensor", "D.Normal(0.0, 1.0).log_prob(0.5)"),
    ("Normal: log_prob event shape", "D.Normal(t.zeros(2), t.ones(2)).log_prob(t.zeros(3))"),
    ("Uniform: low >= high", "D.Uniform(t.tensor([1.0]), t.tensor([0.0]))"),
    ("Uniform: value outside the support", "D.Uniform(t.zeros(1), t.ones(1)).log_prob(t.tensor([2.0]))"),
    ("Bernoulli: both probs and logits", "D.Bernoulli(probs=t.tensor([0.5]), logits=t.tensor([0.0]))"),
    ("Bernoulli: neither", "D.Bernoulli()"),
    ("Bernoulli: probs above 1", "D.Bernoulli(probs=t.tensor([1.5]))"),
    ("Bernoulli: value 0.5", "D.Bernoulli(probs=t.tensor([0.5])).log_prob(t.tensor([0.5]))"),
    ("Categorical: 0-dim probs", "D.Categorical(probs=t.tensor(0.5))"),
    ("Categorical: 0-dim logits", "D.Categorical(logits=t.tensor(0.5))"),
    ("Categorical: negative probs", "D.Categorical(probs=t.tensor([-0.5, 1.5]))"),
    ("Categorical: value out of range", "D.Categorical(probs=t.tensor([0.5, 0.5])).log_prob(t.tensor([2]))"),
    ("Categorical: value not broadcastable",
     "D.Categorical(probs=t.ones(3, 2) / 2).log_prob(t.zeros(2, dtype=t.int64))"),
    ("Gamma: zero concentration", "D.Gamma(t.tensor([0.0]), t.tensor([1.0]))"),
    ("Dirichlet: 0-dim", "D.Dirichlet(t.tensor(1.0))"),
    ("Dirichlet: value off the simplex", "D.Dirichlet(t.ones(3)).log_prob(t.tensor([0.5, 0.5, 0.5]))"),
    ("Beta: negative", "D.Beta(t.tensor([-1.0]), t.tensor([1.0]))"),
    ("MVN: no matrix", "D.MultivariateNormal(t.zeros(2))"),
    ("MVN: two matrices", "D.MultivariateNormal(t.zeros(2), t.eye(2), scale_tril=t.eye(2))"),
    ("MVN: 0-dim loc", "D.MultivariateNormal(t.tensor(0.0), t.eye(2))"),
    ("MVN: 1-dim scale_tril", "D.MultivariateNormal(t.zeros(2), scale_tril=t.ones(2))"),
    ("MVN: covariance not positive definite", "D.MultivariateNormal(t.zeros(2), t.tensor([[1.0, 2.0], [2.0, 1.0]]))"),
    ("MVN: scale_tril not lower", "D.MultivariateNormal(t.zeros(2), scale_tril=t.tensor([[1.0, 1.0], [0.0, 1.0]]))"),
    ("Independent: too many dims", "D.Independent(D.Normal(t.zeros(2), t.ones(2)), 2)"),
    ("Multinomial: tensor total_count", "D.Multinomial(t.tensor(3), probs=t.ones(2))"),
    ("Binomial: negative total_count", "D.Binomial(t.tensor([-1.0]), probs=t.tensor([0.5]))"),
    ("Poisson: negative rate", "D.Poisson(t.tensor([-1.0]))"),
    ("Exponential: zero rate", "D.Exponential(t.tensor([0.0]))"),
    ("Laplace: zero scale", "D.Laplace(t.tensor([0.0]), t.tensor([0.0]))"),
    ("TransformedDistribution: not a transform", "D.TransformedDistribution(D.Normal(0.0, 1.0), 3)"),
    ("TransformedDistribution: list with a non-transform", "D.TransformedDistribution(D.Normal(0.0, 1.0), [3])"),
    ("broadcast_all: a string", "D.Normal('a', 1.0)"),
    ("set_default_validate_args: not a bool", "D.Distribution.set_default_validate_args(2)"),
    ("Transform: cache_size 2", "D.ExpTransform(cache_size=2)"),
    ("ReshapeTransform: sizes differ", "D.ReshapeTransform((2,), (3,))"),
    ("Binomial entropy: inhomogeneous total_count", "D.Binomial(t.tensor([2.0, 3.0]), probs=t.tensor([0.5, 0.5])).entropy()"),
    ("Independent: enumerate_support", "D.Independent(D.Bernoulli(t.ones(2) / 2), 1).enumerate_support()"),
    ("Categorical: zero samples", "D.Categorical(probs=t.ones(3)).sample((0,))"),
    ("Poisson: entropy is not implemented", "D.Poisson(t.ones(2)).entropy()"),
    ("Multinomial: mode", "D.Multinomial(3, probs=t.ones(2)).mode"),
    ("Binomial KL: larger q.total_count", "D.kl_divergence(D.Binomial(2, t.tensor([0.5])), D.Binomial(3, t.tensor([0.5])))"),
    ("MVN KL: event shapes differ",
     "D.kl_divergence(D.MultivariateNormal(t.zeros(2), t.eye(2)), D.MultivariateNormal(t.zeros(3), t.eye(3)))"),
    ("Transformed KL: different transforms",
     "D.kl_divergence(D.LogNormal(0.0, 1.0), D.TransformedDistribution(D.Normal(0.0, 1.0), D.SigmoidTransform()))"),
    ("Independent KL: different ndims",
     "D.kl_divergence(D.Independent(D.Normal(t.zeros(2, 2), 1.0), 1), D.Independent(D.Normal(t.zeros(2, 2), 1.0), 2))"),
    ("Bregman KL: different families", "D.kl_divergence(D.Poisson(t.ones(1)), D.Gamma(t.ones(1), t.ones(1)))"),
    ("vec_to_tril_matrix: not triangular", "D.utils.vec_to_tril_matrix(t.zeros(4))"),
    ("tril_matrix_to_vec: diag out of range", "D.utils.tril_matrix_to_vec(t.zeros(3, 3), diag=3)"),
    ("CorrCholeskyTransform: not a triangular number", "D.CorrCholeskyTransform().forward_shape((4,))"),
    ("constraints.independent: negative ndims", "D.constraints.independent(D.constraints.real, -1)"),
    ("biject_to: a dependent constraint", "D.biject_to(D.constraints.dependent)"),
    ("register_kl: not a type", "D.register_kl(3, D.Normal)"),
]


@pytest.mark.parametrize("label,source", ERRORS, ids=[label for label, _ in ERRORS])
def test_errors_match_pytorch(label, source):
    outcomes = []
    for mod in (torch, minitorch):
        try:
            eval(source, {"D": mod.distributions, "t": mod})
        except Exception as exc:  # noqa: BLE001 - the type and message are what is compared
            outcomes.append((type(exc).__name__, str(exc)))
        else:
            outcomes.append(None)
    expected, got = outcomes
    assert expected is not None, f"{label}: PyTorch raised nothing"
    assert got is not None, f"{label}: minitorch raised nothing, PyTorch raised {expected}"
    assert got[0] == expected[0], f"{label}: {got} vs PyTorch's {expected}"
    assert got[1].replace("minitorch", "torch") == expected[1], label


def test_gamma_cdf_gradient_in_value_only():
    """Gamma.cdf differentiates in the value (and the rate through it); in the concentration both raise."""
    for mod in (torch, minitorch):
        rate = _tensor(mod, POS2, grad=True)
        x = _tensor(mod, POS, grad=True)
        mod.distributions.Gamma(_tensor(mod, POS), rate).cdf(x).sum().backward()
        if mod is torch:
            expected = (rate.grad.numpy(), x.grad.numpy())
        else:
            np.testing.assert_allclose(rate.grad.numpy(), expected[0], rtol=1e-9)
            np.testing.assert_allclose(x.grad.numpy(), expected[1], rtol=1e-9)
        concentration = _tensor(mod, POS, grad=True)
        with pytest.raises(NotImplementedError, match="igamma: input"):
            mod.distributions.Gamma(concentration, 1.0).cdf(_tensor(mod, POS2)).sum().backward()


def test_validate_args_false_skips_checks():
    for mod in (torch, minitorch):
        D = mod.distributions
        dist = D.Normal(mod.tensor([0.0]), mod.tensor([-1.0]), validate_args=False)
        assert math.isnan(float(dist.log_prob(mod.tensor([0.0]))[0]))


def test_standard_gamma_grad_matches_pytorch():
    """The implicit reparameterization gradient: the same series, saddle-point and rational approximations as
    PyTorch's standard_gamma_grad_one, on every branch (x < 0.8, alpha > 8 near and far from the mode, the
    rational region), at the branch edges and in float32."""
    alpha = np.concatenate([RNG.uniform(0.01, 20, 400), [0.3, 10.0, 50.0, 9.0, 9.0, 100.0]])
    x = np.concatenate([RNG.gamma(alpha[:400]), [0.8, 0.8, 0.8, 8.1, 9.9, 80.0]])
    for dtype in ("float64", "float32"):
        got = standard_gamma_grad(minitorch.tensor(alpha, dtype=getattr(minitorch, dtype)),
                                  minitorch.tensor(x, dtype=getattr(minitorch, dtype)))
        expected = torch._standard_gamma_grad(torch.tensor(alpha, dtype=getattr(torch, dtype)),
                                              torch.tensor(x, dtype=getattr(torch, dtype)))
        assert str(got.dtype) == str(expected.dtype)
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12 if dtype == "float64" else 1e-5)


def test_module_paths_match_pytorch():
    import importlib

    for path, name in [("normal", "Normal"), ("categorical", "Categorical"), ("kl", "kl_divergence"),
                       ("binomial", "Binomial"), ("multinomial", "Multinomial"), ("poisson", "Poisson"),
                       ("multivariate_normal", "MultivariateNormal"), ("transforms", "ExpTransform"),
                       ("constraints", "positive"), ("distribution", "Distribution"), ("utils", "broadcast_all"),
                       ("transformed_distribution", "TransformedDistribution"), ("independent", "Independent"),
                       ("gamma", "Gamma"), ("beta", "Beta"), ("dirichlet", "Dirichlet"), ("uniform", "Uniform"),
                       ("bernoulli", "Bernoulli"), ("exponential", "Exponential"), ("laplace", "Laplace"),
                       ("log_normal", "LogNormal"), ("one_hot_categorical", "OneHotCategorical"),
                       ("relaxed_bernoulli", "RelaxedBernoulli"), ("relaxed_categorical", "RelaxedOneHotCategorical"),
                       ("exp_family", "ExponentialFamily"), ("constraint_registry", "biject_to"),
                       ("chi2", "Chi2"), ("half_normal", "HalfNormal"), ("cauchy", "Cauchy"),
                       ("half_cauchy", "HalfCauchy"), ("gumbel", "Gumbel"), ("geometric", "Geometric"),
                       ("pareto", "Pareto"), ("studentT", "StudentT"), ("weibull", "Weibull"),
                       ("inverse_gamma", "InverseGamma"), ("kumaraswamy", "Kumaraswamy"),
                       ("logistic_normal", "LogisticNormal"), ("negative_binomial", "NegativeBinomial"),
                       ("fishersnedecor", "FisherSnedecor"), ("mixture_same_family", "MixtureSameFamily"),
                       ("lowrank_multivariate_normal", "LowRankMultivariateNormal"),
                       ("continuous_bernoulli", "ContinuousBernoulli"), ("generalized_pareto", "GeneralizedPareto"),
                       ("von_mises", "VonMises"), ("lkj_cholesky", "LKJCholesky"), ("wishart", "Wishart")]:
        assert hasattr(importlib.import_module(f"torch.distributions.{path}"), name)
        assert hasattr(importlib.import_module(f"minitorch.distributions.{path}"), name), path
    mine = set(minitorch.distributions.__all__)
    missing = sorted(set(torch.distributions.__all__) - mine)
    assert missing == []


# samplers that are PyTorch's transformation of its basic streams (rand, randn, normal, bernoulli, multinomial,
# exponential_, cauchy_)
STREAM_SAMPLES = {
    "Normal.sample": lambda D, t: D.Normal(t.zeros(3, dtype=t.float64), t.ones(3, dtype=t.float64) * 2).sample((4,)),
    "Normal.rsample": lambda D, t: D.Normal(t.zeros(3), t.ones(3) * 2).rsample((4,)),
    "Uniform.rsample": lambda D, t: D.Uniform(t.zeros(3), t.ones(3) * 5).rsample((4,)),
    "Laplace.rsample": lambda D, t: D.Laplace(t.zeros(3), t.ones(3)).rsample((4,)),
    "Bernoulli.sample": lambda D, t: D.Bernoulli(probs=t.tensor([0.2, 0.5, 0.9])).sample((4,)),
    "Categorical.sample": lambda D, t: D.Categorical(probs=t.tensor([[0.2, 0.3, 0.5], [0.5, 0.5, 0.0]])).sample((6,)),
    "Multinomial.sample": lambda D, t: D.Multinomial(5, probs=t.tensor([0.2, 0.3, 0.5])).sample((3,)),
    "MultivariateNormal.rsample": lambda D, t: D.MultivariateNormal(t.zeros(2), t.eye(2) * 2).rsample((4,)),
    "RelaxedBernoulli.rsample": lambda D, t: D.RelaxedBernoulli(t.tensor(0.5), probs=t.tensor([0.3, 0.6])).rsample(),
    "Exponential.rsample": lambda D, t: D.Exponential(t.tensor([2.0, 0.5, 1.0])).rsample((4,)),
    "Cauchy.rsample": lambda D, t: D.Cauchy(t.zeros(3), t.ones(3) * 2).rsample((4,)),
    "HalfCauchy.rsample": lambda D, t: D.HalfCauchy(t.ones(3)).rsample((4,)),
    "Weibull.rsample": lambda D, t: D.Weibull(t.ones(3), t.ones(3) * 2).rsample((4,)),
    "Pareto.rsample": lambda D, t: D.Pareto(t.ones(3), t.ones(3) * 2).rsample((4,)),
    # PyTorch's sample_gamma (Marsaglia-Tsang on double uniforms and cached double normals), float32 and float64
    "Gamma.rsample": lambda D, t: D.Gamma(t.tensor([0.3, 0.9, 1.0, 2.5, 30.0]), t.ones(5)).rsample((40,)),
    "Gamma.rsample64": lambda D, t: D.Gamma(t.tensor([0.05, 1.5, 7.0], dtype=t.float64), 2.0).rsample((40,)),
    "Dirichlet.rsample": lambda D, t: D.Dirichlet(t.tensor([[0.5, 2.0, 3.0], [1.0, 1.0, 0.1]])).rsample((10,)),
    "Beta.rsample": lambda D, t: D.Beta(t.tensor([0.5, 2.0]), t.tensor([3.0, 0.7])).rsample((10,)),
    "StudentT.rsample": lambda D, t: D.StudentT(t.tensor([3.0, 10.0])).rsample((10,)),
    "Chi2.rsample": lambda D, t: D.Chi2(t.tensor([1.0, 4.0])).rsample((10,)),
    "Poisson.sample": lambda D, t: D.Poisson(t.tensor([0.5, 3.0, 12.0, 150.0])).sample((20,)),
    # PyTorch's sample_binomial (BTRS from count * prob >= 10, inversion below, mirrored above prob 0.5)
    "Binomial.sample": lambda D, t: D.Binomial(t.tensor([0.0, 5.0, 30.0, 400.0]), t.tensor([0.3, 0.8, 0.5, 0.02]))
    .sample((20,)),
    "Binomial.sample64": lambda D, t: D.Binomial(60, logits=t.tensor([-3.0, 0.0, 2.5], dtype=t.float64)).sample((20,)),
}


# the same draws, then float32 transcendental functions (Laplace's log1p, Weibull's and Pareto's exp and pow
# transforms): numpy's and PyTorch's vectorised kernels differ in the last bit on a few inputs
LAST_ULP = {"Laplace.rsample", "Weibull.rsample", "Pareto.rsample", "StudentT.rsample"}


@pytest.mark.parametrize("name", sorted(STREAM_SAMPLES))
def test_samples_match_pytorch(name):
    """Where PyTorch's sampler is a transformation of rand/randn/bernoulli/multinomial, minitorch applies the
    same transformation in the same order on the same (PyTorch's) streams: the samples are PyTorch's bit for
    bit (LAST_ULP: to the last bit of a float32 log1p)."""
    torch.manual_seed(3)
    expected = STREAM_SAMPLES[name](torch.distributions, torch)
    minitorch.manual_seed(3)
    got = STREAM_SAMPLES[name](minitorch.distributions, minitorch)
    if name in LAST_ULP:
        np.testing.assert_array_max_ulp(got.numpy(), expected.numpy(), maxulp=1)
    else:
        np.testing.assert_array_equal(got.numpy(), expected.numpy())


# name: (builder(distributions, positive params a, b, real params x), value(a, b, x) inside the support)
RANDOM_FAMILIES = {
    "Normal": (lambda D, a, b, x: D.Normal(x, a), lambda a, b, x: x + b - 1),
    "Gamma": (lambda D, a, b, x: D.Gamma(a, b), lambda a, b, x: a * b),
    "Beta": (lambda D, a, b, x: D.Beta(a, b), lambda a, b, x: a / (a + b)),
    "StudentT": (lambda D, a, b, x: D.StudentT(a, x, b), lambda a, b, x: x * 2),
    "Laplace": (lambda D, a, b, x: D.Laplace(x, a), lambda a, b, x: x - b),
    "Weibull": (lambda D, a, b, x: D.Weibull(a, b), lambda a, b, x: a + b),
    "Kumaraswamy": (lambda D, a, b, x: D.Kumaraswamy(a, b), lambda a, b, x: a / (a + b)),
    "Poisson": (lambda D, a, b, x: D.Poisson(a), lambda a, b, x: (a * 3).floor()),
    "VonMises": (lambda D, a, b, x: D.VonMises(x, a), lambda a, b, x: x - b),
    "Gumbel": (lambda D, a, b, x: D.Gumbel(x, a), lambda a, b, x: x * b),
}


def test_random_parameters_match_pytorch():
    """Hypothesis draws the family, the batch shape and the parameters; log_prob, entropy and their
    gradients must agree with PyTorch's."""
    from hypothesis import given
    from hypothesis import strategies as st

    shapes = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)

    @given(st.sampled_from(sorted(RANDOM_FAMILIES)), shapes, st.integers(0, 2**32 - 1))
    def check(name, shape, seed):
        rng = np.random.default_rng(seed)
        arrays = [rng.uniform(0.2, 6.0, size=shape), rng.uniform(0.2, 6.0, size=shape), rng.normal(size=shape)]
        results = []
        for mod in (torch, minitorch):
            a, b, x = (_tensor(mod, v, grad=True) for v in arrays)
            builder, value = RANDOM_FAMILIES[name]
            dist = builder(mod.distributions, a, b, x)
            log_prob = dist.log_prob(value(a, b, x).detach())
            try:
                entropy = dist.entropy()
            except NotImplementedError:
                entropy = log_prob * 0
            (log_prob.sum() + entropy.sum()).backward()
            results.append([log_prob.detach().numpy(), entropy.detach().numpy()]
                           + [g.numpy() if g is not None else None for g in (a.grad, b.grad, x.grad)])
        for expected, got in zip(*results):
            if expected is None or got is None:
                assert expected is None and (got is None or not got.any()), name
                continue
            np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-9, err_msg=name)

    check()
