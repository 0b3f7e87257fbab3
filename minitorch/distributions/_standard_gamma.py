"""Standard Gamma(alpha, 1) samples with implicit reparameterization gradients.

PyTorch draws them with its own C++ sampler (Marsaglia and Tsang's method on its generator); minitorch's
generator runs the same sampler on the same streams (``random.standard_gamma_draws``), so seeded Gamma, Beta,
Dirichlet, Chi2 and StudentT samples are PyTorch's numbers.

The gradient of a sample ``x`` with respect to ``alpha`` is PyTorch's ``_standard_gamma_grad``:
``dx/dalpha = -(d/dalpha CDF(x; alpha)) / pdf(x; alpha)`` (Figurnov et al., "Implicit Reparameterization
Gradients"), evaluated with the same series, saddle-point and rational approximations as PyTorch's
``standard_gamma_grad_one``.
"""

from __future__ import annotations

from .. import _dtype
from ..autograd import Function, no_grad
from ..ops.comparison import where
from ..random import standard_gamma_draws
from ..tensor import Tensor
from .utils import finfo_tiny


def sample_standard_gamma(concentration: Tensor) -> Tensor:
    """Gamma(concentration, 1) draws (``torch._standard_gamma``) in ``concentration``'s dtype, each at least
    the dtype's smallest normal number, as PyTorch clamps them (``std::max``: a NaN draw, from a NaN alpha,
    becomes that minimum); ``alpha == 0`` gives that minimum too."""
    with no_grad():
        draws = standard_gamma_draws(concentration.detach()).to(concentration.dtype)
        tiny = finfo_tiny(concentration.dtype)
        return where(draws > tiny, draws, tiny)


# the C++ compares doubles with float literals (0.8f, ...): the same thresholds, as doubles
_F32_0_8, _F32_0_9, _F32_1_1 = 0.800000011920929, 0.8999999761581421, 1.100000023841858

# bivariate rational approximation of the gradient for x >= 0.8, alpha <= 8 (PyTorch's coef_uv)
_COEF_UV = (
    (0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084),
    (0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
    (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
     -1.5247877e-07),
)


def standard_gamma_grad(alpha: Tensor, x: Tensor) -> Tensor:
    """``torch._standard_gamma_grad(alpha, x)``: d x / d alpha for a Gamma(alpha, 1) sample ``x``, computed in
    float64 (PyTorch's accumulate type) and returned in ``x``'s dtype."""
    with no_grad():
        out_dtype = x.dtype
        alpha, x = alpha.to(_dtype.float64), x.to(_dtype.float64)
        small = _small_x(alpha, x)
        large = _large_alpha(alpha, x)
        rational = _rational(alpha, x)
        result = where(x < _F32_0_8, small, where(alpha > 8.0, large, rational))
        return result.to(out_dtype)


def _small_x(alpha: Tensor, x: Tensor) -> Tensor:
    """A Taylor series of the CDF for x < 0.8; NaN (0 * inf at x = 0) becomes 0, as in PyTorch."""
    numer = x.new_ones(x.shape)
    denom = alpha
    series1 = numer / denom
    series2 = numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = x.pow(alpha)
    gamma_pdf = x.pow(alpha - 1) * (-x).exp()
    gamma_cdf = pow_x_alpha * series1
    gamma_cdf_alpha = (x.log() - alpha.digamma()) * gamma_cdf - pow_x_alpha * series2
    result = -gamma_cdf_alpha / gamma_pdf
    return where(result.isnan(), 0.0, result)


def _large_alpha(alpha: Tensor, x: Tensor) -> Tensor:
    """Rice's saddle-point expansion for alpha > 8 (a polynomial near the mode, 0.9 alpha <= x <= 1.1 alpha)."""
    near = (_F32_0_9 * alpha <= x) & (x <= _F32_1_1 * alpha)
    numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
    numer_2 = 1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha + alpha * (107 + 3600 * x)
    polynomial = numer_1 * numer_2 / (1244160 * (alpha * alpha) * (alpha * alpha))
    denom = (8 * alpha).sqrt()
    term2 = denom / (alpha - x)
    term3 = (x - alpha - alpha * (x / alpha).log()).pow(-1.5)
    term23 = where(x < alpha, term2 - term3, term2 + term3)
    term1 = (x / alpha).log() * term23 - (2 / alpha).sqrt() * (alpha + x) / ((alpha - x) * (alpha - x))
    stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
    saddle = -stirling * (x * term1) / denom
    return where(near, polynomial, saddle)


def _rational(alpha: Tensor, x: Tensor) -> Tensor:
    u = (x / alpha).log()
    v = alpha.log()
    coef_v = [_COEF_UV[0][i] + u * (_COEF_UV[1][i] + u * _COEF_UV[2][i]) for i in range(8)]
    p = coef_v[0] + v * (coef_v[1] + v * (coef_v[2] + v * coef_v[3]))
    q = coef_v[4] + v * (coef_v[5] + v * (coef_v[6] + v * coef_v[7]))
    return (p / q).exp()


class StandardGamma(Function):
    """A Gamma(alpha, 1) sample whose backward is the implicit reparameterization gradient."""

    @staticmethod
    def forward(ctx, concentration):
        x = sample_standard_gamma(concentration)
        ctx.save_for_backward(concentration, x)
        ctx.save_for_forward(concentration, x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        concentration, x = ctx.saved_tensors
        return grad_output * standard_gamma_grad(concentration, x)

    @staticmethod
    def jvp(ctx, tangent):  # elementwise: the same derivative times the tangent
        concentration, x = ctx.saved_tensors
        return tangent * standard_gamma_grad(concentration, x)


def standard_gamma(concentration: Tensor) -> Tensor:
    """``torch._standard_gamma``: differentiable Gamma(concentration, 1) draws."""
    return StandardGamma.apply(concentration)


