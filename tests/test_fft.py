"""torch.fft: values against the definition of the DFT (written out with Python's cmath) and gradients
against finite differences (gradcheck, which for complex inputs perturbs real and imaginary parts)."""

import cmath
import math

import pytest

import minitorch as torch
from minitorch.autograd import gradcheck


def _dft(values, inverse=False):
    n = len(values)
    sign = 1 if inverse else -1
    return [sum(v * cmath.exp(sign * 2j * math.pi * j * k / n) for j, v in enumerate(values)) for k in range(n)]


SIGNAL = [1 + 0.5j, -2 + 0j, 0.25 - 1j, 3 + 2j, -1 - 1j]
REAL = [0.5, -1.25, 2.0, 0.75, -0.5, 1.5]


@pytest.mark.parametrize("norm, scale_forward, scale_inverse", [
    (None, 1.0, 1 / 5), ("backward", 1.0, 1 / 5), ("forward", 1 / 5, 1.0), ("ortho", 5 ** -0.5, 5 ** -0.5),
])
def test_fft_and_ifft_follow_the_definition(norm, scale_forward, scale_inverse):
    z = torch.tensor(SIGNAL, dtype=torch.complex128)
    assert torch.fft.fft(z, norm=norm).tolist() == pytest.approx([scale_forward * v for v in _dft(SIGNAL)])
    assert torch.fft.ifft(z, norm=norm).tolist() == pytest.approx([scale_inverse * v for v in _dft(SIGNAL, True)])
    assert torch.fft.ifft(torch.fft.fft(z, norm=norm), norm=norm).tolist() == pytest.approx(SIGNAL)


def test_real_transforms():
    x = torch.tensor(REAL, dtype=torch.float64)
    spectrum = torch.fft.rfft(x)
    assert spectrum.dtype is torch.complex128 and spectrum.shape == (4,)
    assert spectrum.tolist() == pytest.approx(_dft(REAL)[:4])
    assert torch.fft.irfft(spectrum).tolist() == pytest.approx(REAL)
    assert torch.fft.irfft(torch.fft.rfft(x, n=7), n=7).tolist() == pytest.approx(REAL + [0.0])
    assert torch.fft.fft(x, n=4).tolist() == pytest.approx(_dft(REAL[:4]))  # trimmed
    assert torch.fft.fft(x, n=8).tolist() == pytest.approx(_dft(REAL + [0.0, 0.0]))  # zero-padded
    assert torch.fft.hfft(torch.fft.ihfft(x), n=6).tolist() == pytest.approx(REAL)
    assert torch.fft.rfft(torch.ones(4)).dtype is torch.complex64
    assert torch.fft.fft(torch.arange(4)).dtype is torch.complex64  # integers: the default float dtype


def test_multidimensional_transforms_compose():
    m = torch.tensor([REAL[:3], REAL[3:]], dtype=torch.float64)
    rows_then_columns = torch.fft.fft(torch.fft.fft(m, dim=1), dim=0)
    assert torch.allclose(torch.fft.fft2(m), rows_then_columns)
    assert torch.allclose(torch.fft.fftn(m), rows_then_columns)
    assert torch.allclose(torch.fft.rfft2(m), rows_then_columns[:, :2])
    assert torch.allclose(torch.fft.irfft2(torch.fft.rfft2(m), s=(2, 3)), m)
    assert torch.allclose(torch.fft.ifftn(torch.fft.fftn(m, s=(3, 4)), s=(3, 4)).real[:2, :3], m)
    assert torch.fft.fftn(m, s=(4,)).shape == (2, 4)  # s alone: the last len(s) dims


def test_frequencies_and_shifts():
    assert torch.fft.fftfreq(5).tolist() == pytest.approx([0.0, 0.2, 0.4, -0.4, -0.2])
    assert torch.fft.fftfreq(4, d=0.5).tolist() == pytest.approx([0.0, 0.5, -1.0, -0.5])
    assert torch.fft.rfftfreq(5, d=0.5).tolist() == pytest.approx([0.0, 0.4, 0.8])
    x = torch.arange(6).reshape(2, 3)
    assert torch.fft.fftshift(x).tolist() == [[5, 3, 4], [2, 0, 1]]
    assert torch.fft.ifftshift(torch.fft.fftshift(x)).tolist() == x.tolist()
    assert torch.fft.fftshift(torch.fft.fftfreq(4)).tolist() == pytest.approx([-0.5, -0.25, 0.0, 0.25])


@pytest.mark.parametrize("norm", [None, "forward", "ortho"])
@pytest.mark.parametrize("name, fn, kind", [
    ("fft", lambda t, norm: torch.fft.fft(t, norm=norm), "complex"),
    ("fft_n", lambda t, norm: torch.fft.fft(t, n=7, norm=norm), "complex"),
    ("ifft", lambda t, norm: torch.fft.ifft(t, n=3, norm=norm), "complex"),
    ("fft_real", lambda t, norm: torch.fft.fft(t, norm=norm), "real"),
    ("rfft", lambda t, norm: torch.fft.rfft(t, norm=norm), "real"),
    ("rfft_n", lambda t, norm: torch.fft.rfft(t, n=5, norm=norm), "real"),
    ("irfft", lambda t, norm: torch.fft.irfft(t, norm=norm), "complex"),
    ("irfft_odd", lambda t, norm: torch.fft.irfft(t, n=7, norm=norm), "complex"),
    ("hfft", lambda t, norm: torch.fft.hfft(t, n=6, norm=norm), "complex"),
    ("ihfft", lambda t, norm: torch.fft.ihfft(t, norm=norm), "real"),
    ("fft2", lambda t, norm: torch.fft.fft2(t.reshape(2, -1), norm=norm), "complex"),
    ("rfft2", lambda t, norm: torch.fft.rfft2(t.reshape(2, -1), norm=norm), "real"),
    ("irfftn", lambda t, norm: torch.fft.irfftn(t.reshape(2, -1), s=(3, 4), norm=norm), "complex"),
    ("shift", lambda t, norm: torch.fft.fftshift(torch.fft.fft(t, norm=norm)), "complex"),
])
def test_gradcheck(name, fn, kind, norm):
    if kind == "complex":
        x = torch.tensor([SIGNAL[:3] + [2j], SIGNAL[2:] + [0.5]], dtype=torch.complex128).reshape(-1)
    else:
        x = torch.tensor(REAL + [0.1, -0.3], dtype=torch.float64)
    assert gradcheck(lambda t: fn(t, norm), (x.requires_grad_(),))


def test_gradcheck_noncontiguous_and_zero_dim_batches():
    x = torch.tensor([[0.5, 1.0, -2.0], [0.25, 3.0, 1.5]], dtype=torch.float64).t().requires_grad_()
    assert not x.is_contiguous()
    assert gradcheck(lambda t: torch.fft.rfft(t, dim=0), (x,))
    empty_batch = torch.zeros(0, 4, dtype=torch.complex128, requires_grad=True)
    assert torch.fft.fft(empty_batch).shape == (0, 4)
    assert gradcheck(lambda t: torch.fft.fft(t), (empty_batch,))


def test_errors():
    with pytest.raises(RuntimeError, match='Invalid normalization mode: "bad"'):
        torch.fft.fft(torch.ones(4), norm="bad")
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        torch.fft.fft(torch.ones(4), n=0)
    with pytest.raises(RuntimeError, match="rfft expects a real input tensor"):
        torch.fft.rfft(torch.ones(4, dtype=torch.complex64))
    with pytest.raises(RuntimeError, match="Unsupported dtype Half"):
        torch.fft.fft(torch.ones(4, dtype=torch.float16))
    with pytest.raises(IndexError):
        torch.fft.fft(torch.ones(4), dim=3)
    with pytest.raises(RuntimeError, match="FFT dims must be unique"):
        torch.fft.fftn(torch.ones(2, 3), dim=(0, 0))
