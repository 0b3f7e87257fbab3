"""Wishart(df, covariance_matrix | precision_matrix | scale_tril): distributions over positive-definite
matrices."""

from __future__ import annotations

import math
import warnings

from ..creation import arange, eye, tensor
from ..linalg import cholesky, slogdet, solve
from ..ops.blas import einsum
from ..ops.shape import broadcast_shapes
from ..random import randn
from ..tensor import Size, Tensor
from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .lkj_cholesky import _mvlgamma
from .multivariate_normal import _precision_to_scale_tril
from .utils import finfo_eps, is_number, lazy_property

__all__ = ["Wishart"]

_log_2 = math.log(2)


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    """The derivative of ``_mvlgamma(x, p)``: ``sum_j digamma(x - j / 2)``."""
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    offsets = arange(p, dtype=x.dtype, device=x.device) / 2
    return (x.unsqueeze(-1) - offsets.expand(tuple(x.shape) + (-1,))).digamma().sum(-1)


def _clamp_above_eps(x: Tensor) -> Tensor:
    # We assume positive input for this function
    return x.clamp(min=finfo_eps(x.dtype))


def _cholesky_solve(B: Tensor, L: Tensor) -> Tensor:
    """``(L L^T)^{-1} B`` for a lower Cholesky factor ``L`` (``torch.cholesky_solve``), by two solves. Like
    PyTorch's backward, the gradient treats ``L`` as a full matrix (its upper triangle gets a gradient)."""
    return solve(L.mT, solve(L, B))


def _tril_indices(p: int, device) -> tuple:
    """``torch.tril_indices(p, p, offset=-1)``: rows and columns below the diagonal, in row order."""
    pairs = [(i, j) for i in range(p) for j in range(i)]
    rows = tensor([i for i, _ in pairs], device=device).long()
    cols = tensor([j for _, j in pairs], device=device).long()
    return rows, cols


class Wishart(ExponentialFamily):
    """The distribution of ``X^T X`` for ``df`` rows ``X_i ~ N(0, covariance_matrix)`` (``df`` need not be an
    integer, only greater than ``p - 1``). ``rsample`` is Bartlett's decomposition (chi-squared diagonal,
    normal lower triangle), differentiable in ``df`` through the Gamma draws."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": constraints.greater_than(self.event_shape[-1] - 1),
        }

    def __init__(self, df, covariance_matrix: Tensor | None = None, precision_matrix: Tensor | None = None,
                 scale_tril: Tensor | None = None, validate_args: bool | None = None) -> None:
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                                 "specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if is_number(df):
            batch_shape = Size(param.shape[:-2])
            self.df = tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        if bool(self.df.le(event_shape[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {event_shape[-1] - 1}.")
        if scale_tril is not None:
            self.scale_tril = param.expand(tuple(batch_shape) + (-1, -1))
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(tuple(batch_shape) + (-1, -1))
        elif precision_matrix is not None:
            self.precision_matrix = param.expand(tuple(batch_shape) + (-1, -1))
        if bool(self.df.lt(event_shape[-1]).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df "
                          "< ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:  # precision_matrix is not None
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        # Chi2 distribution is needed for Bartlett decomposition sampling
        self._dist_chi2 = self._chi2(self.df, batch_shape)

    def _chi2(self, df: Tensor, batch_shape) -> Chi2:
        offsets = arange(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype,
                         device=self._unbroadcasted_scale_tril.device)
        return Chi2(df=df.unsqueeze(-1) - offsets.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        if "covariance_matrix" in self.__dict__:
            new.covariance_matrix = self.covariance_matrix.expand(cov_shape)
        if "scale_tril" in self.__dict__:
            new.scale_tril = self.scale_tril.expand(cov_shape)
        if "precision_matrix" in self.__dict__:
            new.precision_matrix = self.precision_matrix.expand(cov_shape)
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        # Chi2 distribution is needed for Bartlett decomposition sampling
        new._dist_chi2 = new._chi2(new.df, batch_shape)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple:
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        identity = eye(self._event_shape[-1], device=self._unbroadcasted_scale_tril.device,
                       dtype=self._unbroadcasted_scale_tril.dtype)
        return _cholesky_solve(identity, self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def mean(self) -> Tensor:
        return self.df.view(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor[factor <= 0] = math.nan
        return factor.view(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        V = self.covariance_matrix  # has shape (batch_shape x event_shape)
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self.df.view(tuple(self._batch_shape) + (1, 1)) * (V.pow(2) + einsum("...i,...j->...ij", diag_V, diag_V))

    def _bartlett_sampling(self, sample_shape=()) -> Tensor:
        p = self._event_shape[-1]  # has singleton shape
        # Implemented Sampling using Bartlett decomposition
        noise = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt()).diag_embed(dim1=-2, dim2=-1)
        i, j = _tril_indices(p, noise.device)
        noise[..., i, j] = randn(tuple(sample_shape) + tuple(self._batch_shape) + (int(p * (p - 1) / 2),),
                                 dtype=noise.dtype, device=noise.device)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def rsample(self, sample_shape=(), max_try_correction=None) -> Tensor:
        """A Bartlett draw; a draw that is numerically singular is redrawn (up to ``max_try_correction`` = 10
        times) with a warning."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        # Below part is to improve numerical stability temporally and should be removed in the future
        is_singular = ~self.support.check(sample)
        if self._batch_shape:
            is_singular = is_singular.amax(self._batch_dims)
        if bool(is_singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(is_singular[is_singular].shape)
                sample[is_singular] = sample_new
                is_singular_new = ~self.support.check(sample_new)
                if self._batch_shape:
                    is_singular_new = is_singular_new.amax(self._batch_dims)
                is_singular[is_singular.clone()] = is_singular_new
                if not bool(is_singular.any()):
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df  # has shape (batch_shape)
        p = self._event_shape[-1]  # has singleton shape
        return (
            -nu * (p * _log_2 / 2 + self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1))
            - _mvlgamma(nu / 2, p)
            + (nu - p - 1) / 2 * slogdet(value).logabsdet
            - _cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(dim1=-2, dim2=-1).sum(dim=-1) / 2
        )

    def entropy(self):
        nu = self.df  # has shape (batch_shape)
        p = self._event_shape[-1]  # has singleton shape
        return (
            (p + 1) * (p * _log_2 / 2 + self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1))
            + _mvlgamma(nu / 2, p)
            - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p)
            + nu * p / 2
        )

    @property
    def _natural_params(self) -> tuple:
        nu = self.df  # has shape (batch_shape)
        p = self._event_shape[-1]  # has singleton shape
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-slogdet(-2 * x).logabsdet + _log_2 * p) + _mvlgamma(y + (p + 1) / 2, p)
