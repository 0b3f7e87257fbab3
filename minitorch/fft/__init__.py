"""torch.fft: discrete Fourier transforms with gradients, on the backend's ``xp.fft``.

Three ops do the work, each on exactly-sized signals (``n``/``s`` padding and trimming are done before them with
the differentiable ``narrow``/``cat``): ``C2C`` (complex to complex, forward or inverse), ``R2C`` (real to the
one-sided half spectrum) and ``C2R`` (half spectrum to real). Every other function composes them, as PyTorch
does (``rfftn`` is ``C2C`` over the leading dims of ``R2C`` over the last one). A transform is linear, so its
gradient is its adjoint: the transform the other way with the dual normalization ("backward" <-> "forward",
"ortho" itself); ``C2R``'s adjoint doubles the bins that stand for two (PyTorch's fft_c2r_backward).
"""

from __future__ import annotations

from .. import _dtype
from ..creation import tensor, zeros
from ..ops.complex import real
from ..ops.op import Op
from ..ops.shape import cat, roll
from ..tensor import Tensor, wrap_dim

_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}
_TYPE_NAMES = {"float16": "Half", "bfloat16": "BFloat16", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


class C2C(Op):
    """``fftn`` (or ``ifftn`` when ``inverse``) of a complex tensor over ``dims``."""

    def forward(self, x, dims, norm, inverse):
        self.dims, self.norm, self.inverse = dims, norm, inverse
        transform = self.xp.fft.ifftn if inverse else self.xp.fft.fftn
        return transform(x, axes=dims, norm=norm).astype(x.dtype, copy=False)

    def backward(self, grad):
        return C2C.apply(grad, self.dims, _DUAL[self.norm], not self.inverse)


class R2C(Op):
    """The one-sided ``rfft`` of a real tensor along ``dim`` (n // 2 + 1 bins)."""

    def forward(self, x, dim, norm):
        self.dim, self.norm, self.n = dim, norm, x.shape[dim]
        complex_dtype = self.backend.array_dtype(self.backend.dtype_of(x).to_complex())
        return self.xp.fft.rfft(x, axis=dim, norm=norm).astype(complex_dtype, copy=False)

    def backward(self, grad):
        # the adjoint of "the first n // 2 + 1 rows of the DFT": the inverse transform of the zero-padded bins
        full = _resize(grad, (self.dim,), (self.n,))
        return real(C2C.apply(full, (self.dim,), _DUAL[self.norm], True))


class C2R(Op):
    """The real signal of length ``n`` whose one-sided spectrum (n // 2 + 1 bins) is the input, along ``dim``."""

    def forward(self, x, dim, n, norm):
        self.dim, self.norm, self.n = dim, norm, n
        real_dtype = self.backend.array_dtype(self.backend.dtype_of(x).to_real())
        return self.xp.fft.irfft(x, n=n, axis=dim, norm=norm).astype(real_dtype, copy=False)

    def backward(self, grad):
        spectrum = R2C.apply(grad, self.dim, _DUAL[self.norm])
        bins = spectrum.shape[self.dim]
        doubled = self.n - bins  # bins 1 .. n - bins stand for themselves and their mirror image
        if doubled <= 0:
            return spectrum
        shape = [1] * spectrum.dim()
        shape[self.dim] = bins
        weights = [1.0] + [2.0] * doubled + [1.0] * (bins - 1 - doubled)
        return spectrum * tensor(weights, dtype=spectrum.dtype.to_real(), device=spectrum.device).reshape(shape)


# argument handling ------------------------------------------------------------------------------


def _check_norm(norm) -> str:
    norm = "backward" if norm is None else norm
    if norm not in _DUAL:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _as_complex(x: Tensor, name: str) -> Tensor:
    """The input as a complex tensor (integers and bools through the default float dtype)."""
    if x.dtype.is_complex:
        return x
    return _as_real(x, name).to(x.dtype.to_complex() if x.dtype.is_floating_point else
                                _dtype.get_default_dtype().to_complex())


def _as_real(x: Tensor, name: str) -> Tensor:
    if x.dtype in (_dtype.float16, _dtype.bfloat16):
        raise RuntimeError(f"Unsupported dtype {_TYPE_NAMES[x.dtype.name]}")
    if x.dtype.is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got {_TYPE_NAMES[x.dtype.name]}")
    return x if x.dtype.is_floating_point else x.to(_dtype.get_default_dtype())


def _resize(x: Tensor, dims: tuple, sizes: tuple) -> Tensor:
    """``x`` trimmed or zero-padded (at the end) to ``sizes`` along ``dims``: differentiable."""
    for dim, n in zip(dims, sizes):
        have = x.shape[dim]
        if n < have:
            x = x.narrow(dim, 0, n)
        elif n > have:
            shape = list(x.shape)
            shape[dim] = n - have
            x = cat([x, zeros(shape, dtype=x.dtype, device=x.device)], dim)
    return x


def _dims_and_sizes(x: Tensor, s, dim, default_all: bool):
    """PyTorch's (s, dim) resolution: dims wrapped and unique; sizes default to the input's."""
    if dim is None:
        if s is None:
            dims = tuple(range(x.dim())) if default_all else ()
        else:
            dims = tuple(range(x.dim() - len(s), x.dim()))
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if x.dim() == 0 and dims:
            raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
        dims = tuple(wrap_dim(d, x.dim()) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    if s is None:
        sizes = tuple(x.shape[d] for d in dims)
    else:
        sizes = tuple(s)
        if len(sizes) != len(dims):
            raise RuntimeError(
                f"When given, dim and shape arguments must have the same length. Got {len(dims)} dims and "
                f"{len(sizes)} sizes"
            )
        sizes = tuple(x.shape[d] if n == -1 else n for d, n in zip(dims, sizes))
    for n in sizes:
        if n <= 0:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return dims, sizes


def _one_dim(x: Tensor, n, dim: int):
    if x.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _dims_and_sizes(x, None if n is None else (n,), (dim,), False)


# c2c -------------------------------------------------------------------------------------------------


def _c2c(input: Tensor, dims: tuple, sizes: tuple, norm, inverse: bool, name: str) -> Tensor:
    x = _resize(_as_complex(input, name), dims, sizes)
    return C2C.apply(x, dims, _check_norm(norm), inverse)


def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The one-dimensional discrete Fourier transform along ``dim`` (padded or trimmed to ``n``)."""
    return _c2c(input, *_one_dim(input, n, dim), norm, False, "fft")


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of ``fft``."""
    return _c2c(input, *_one_dim(input, n, dim), norm, True, "ifft")


def fftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-dimensional transform over ``dim`` (all dims by default; the last ``len(s)`` with ``s``)."""
    return _c2c(input, *_dims_and_sizes(input, s, dim, True), norm, False, "fftn")


def ifftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    return _c2c(input, *_dims_and_sizes(input, s, dim, True), norm, True, "ifftn")


def fft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    return fftn(input, s, dim, norm)


def ifft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    return ifftn(input, s, dim, norm)


# r2c / c2r ---------------------------------------------------------------------------------------------


def _rfftn(input: Tensor, dims: tuple, sizes: tuple, norm, name: str) -> Tensor:
    norm = _check_norm(norm)
    x = _resize(_as_real(input, name), dims, sizes)
    out = R2C.apply(x, dims[-1], norm)
    return C2C.apply(out, dims[:-1], norm, False) if len(dims) > 1 else out


def _irfftn(input: Tensor, dims: tuple, sizes: tuple, s_given: bool, norm, name: str) -> Tensor:
    norm = _check_norm(norm)
    x = _as_complex(input, name)
    last = sizes[-1] if s_given else 2 * (x.shape[dims[-1]] - 1)
    if last <= 0:
        raise RuntimeError(f"Invalid number of data points ({last}) specified")
    x = _resize(x, dims, sizes[:-1] + (last // 2 + 1,))
    if len(dims) > 1:
        x = C2C.apply(x, dims[:-1], norm, True)
    return C2R.apply(x, dims[-1], last, norm)


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The transform of a real signal: the n // 2 + 1 non-negative frequency bins."""
    return _rfftn(input, *_one_dim(input, n, dim), norm, "rfft")


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The real signal (of length ``n``, default 2 * (bins - 1)) of a one-sided spectrum."""
    dims, sizes = _one_dim(input, n, dim)
    return _irfftn(input, dims, sizes, n is not None, norm, "irfft")


def rfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    return _rfftn(input, *_dims_and_sizes(input, s, dim, True), norm, "rfftn")


def irfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    dims, sizes = _dims_and_sizes(input, s, dim, True)
    return _irfftn(input, dims, sizes, s is not None, norm, "irfftn")


def rfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    return rfftn(input, s, dim, norm)


def irfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    return irfftn(input, s, dim, norm)


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The real spectrum of a Hermitian-symmetric signal given by its first half: ``irfft`` of the conjugate
    with the dual normalization."""
    dims, sizes = _one_dim(input, n, dim)
    return _irfftn(_as_complex(input, "hfft").conj(), dims, sizes, n is not None, _DUAL[_check_norm(norm)], "hfft")


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of ``hfft``: the conjugate of ``rfft`` with the dual normalization."""
    return _rfftn(input, *_one_dim(input, n, dim), _DUAL[_check_norm(norm)], "ihfft").conj()


# helpers ---------------------------------------------------------------------------------------------


def fftfreq(n: int, d: float = 1.0, *, dtype=None, device=None, requires_grad: bool = False, layout=None,
            pin_memory: bool = False, out=None) -> Tensor:
    """The sample frequencies of an ``n``-point ``fft``: ``[0, 1, ..., -2, -1] / (d * n)``."""
    values = [k if k < (n + 1) // 2 else k - n for k in range(n)]
    result = tensor(values, dtype=dtype or _dtype.get_default_dtype(), device=device) * (1.0 / (n * d))
    return result.requires_grad_(requires_grad) if requires_grad else result


def rfftfreq(n: int, d: float = 1.0, *, dtype=None, device=None, requires_grad: bool = False, layout=None,
             pin_memory: bool = False, out=None) -> Tensor:
    """The sample frequencies of an ``n``-point ``rfft``: ``[0, 1, ..., n // 2] / (d * n)``."""
    values = list(range(n // 2 + 1))
    result = tensor(values, dtype=dtype or _dtype.get_default_dtype(), device=device) * (1.0 / (n * d))
    return result.requires_grad_(requires_grad) if requires_grad else result


def _shift_dims(input: Tensor, dim):
    if dim is None:
        return tuple(range(input.dim()))
    return (dim,) if isinstance(dim, int) else tuple(dim)


def fftshift(input: Tensor, dim=None) -> Tensor:
    """Move the zero-frequency bin to the centre (a roll by n // 2 along each dim)."""
    dims = _shift_dims(input, dim)
    return roll(input, tuple(input.shape[d] // 2 for d in dims), dims) if dims else input


def ifftshift(input: Tensor, dim=None) -> Tensor:
    """The inverse of ``fftshift`` (a roll by -(n // 2))."""
    dims = _shift_dims(input, dim)
    return roll(input, tuple(-(input.shape[d] // 2) for d in dims), dims) if dims else input


__all__ = [
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn", "hfft",
    "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]
