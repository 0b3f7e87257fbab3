"""Quantized tensors: PyTorch's values bit for bit (SEMANTICS QT-1..QT-13), views, printing, errors, and
straight-through gradients (docs/quantization.md)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch as torch
from minitorch._dtype import QUANTIZED_RANGES, qint8, qint32, quint8
from minitorch.autograd import gradcheck, gradgradcheck
from minitorch.quantization import (
    _fake_quantize_learnable_per_channel_affine,
    _fake_quantize_learnable_per_tensor_affine,
    dequantize,
    fake_quantize_per_channel_affine,
    fake_quantize_per_tensor_affine,
    per_channel_affine,
    per_tensor_affine,
    quantize_per_channel,
    quantize_per_tensor,
)
from minitorch.testing.strategies import shapes, tensors

STORAGE = {qint8: np.int8, quint8: np.uint8, qint32: np.int32}


def reference_per_tensor(x: np.ndarray, scale: float, zero_point: int, dtype):
    """PyTorch x86 (FBGEMM): float32, multiply by the float32 inverse, zero point before rint, clamp."""
    qmin, qmax = QUANTIZED_RANGES[dtype]
    inv = np.float32(1.0) / np.float32(scale)
    shifted = np.rint(np.float32(zero_point) + x.astype(np.float32) * inv)
    return np.clip(shifted.astype(np.float64), qmin, qmax).astype(STORAGE[dtype]), (shifted >= qmin) & (shifted <= qmax)


def reference_per_channel(x: np.ndarray, scales, zero_points, axis: int, dtype):
    qmin, qmax = QUANTIZED_RANGES[dtype]
    shape = [1] * x.ndim
    shape[axis] = -1
    inv = np.float32(1.0) / np.asarray(scales, dtype=np.float32).reshape(shape)
    shifted = np.rint(np.asarray(zero_points, dtype=np.float32).reshape(shape) + x.astype(np.float32) * inv)
    return np.clip(shifted.astype(np.float64), qmin, qmax).astype(STORAGE[dtype]), (shifted >= qmin) & (shifted <= qmax)


# QT-1 .. QT-7: quantize / dequantize ---------------------------------------------------------------


def test_qt1_accessors_and_round_trip(device):
    q = quantize_per_tensor(torch.tensor([-1.0, 0.0, 1.0, 2.0], device=device), 0.1, 10, quint8)
    assert q.int_repr().tolist() == [0, 10, 20, 30]
    assert q.int_repr().dtype is torch.uint8
    assert q.dequantize().tolist() == pytest.approx([-1, 0, 1, 2], abs=1e-6)
    assert q.q_scale() == 0.1 and q.q_zero_point() == 10
    assert q.dtype is quint8 and q.is_quantized and q.qscheme() is per_tensor_affine
    assert q.element_size() == 1 and q.shape == (4,)


def test_qt2_ties_and_saturation(device):
    x = torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 300, -300, 127.4, 127.6, -128.6], device=device)
    assert quantize_per_tensor(x, 1.0, 0, qint8).int_repr().tolist() == [0, 2, 2, 0, -2, -2, 127, -128, 127, 127, -128]
    assert quantize_per_tensor(x, 1.0, 0, quint8).int_repr().tolist() == [0, 2, 2, 0, 0, 0, 255, 0, 127, 128, 0]
    assert quantize_per_tensor(x, 1.0, 128, quint8).int_repr().tolist() == [
        128, 130, 130, 128, 126, 126, 255, 0, 255, 255, 0]


def test_qt3_float32_multiply_by_inverse(device):
    q = quantize_per_tensor(torch.tensor([0.15, 0.25, 0.35, 0.45], device=device), 0.1, 0, qint8)
    assert q.int_repr().tolist() == [2, 2, 4, 4]
    assert quantize_per_tensor(torch.tensor([0.3], device=device), 0.1, 0, qint8).int_repr().tolist() == [3]


def test_qt4_qint32_saturates(device):
    q = quantize_per_tensor(torch.tensor([1e10, -1e10, 5.0], device=device), 1.0, 0, qint32)
    assert q.int_repr().tolist() == [2147483647, -2147483648, 5]


def test_fbgemm_zero_point_before_rounding(device):
    # x = 2.5, zp = 1: rint(3.5) = 4 (the generic formula would give rint(2.5) + 1 = 3)
    assert quantize_per_tensor(torch.tensor([2.5], device=device), 1.0, 1, qint8).int_repr().tolist() == [4]


TIES = [-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5]


def test_per_channel_adds_the_zero_point_before_rounding_as_per_tensor(device):
    """x = 1.5, scale 1, zero point 1: rint(2.5) = 2 (minitorch gave rint(1.5) + 1 = 3 per channel).
    Expected values from PyTorch 2.13 (x86)."""
    x = torch.tensor(TIES, device=device)
    assert quantize_per_tensor(x, 1.0, 1, qint8).int_repr().tolist() == [-2, -2, 0, 0, 2, 2, 4, 4]
    q = quantize_per_channel(torch.stack([x, x]), torch.tensor([1.0, 0.5], dtype=torch.float64),
                             torch.tensor([1, 0]), 0, qint8)
    assert q.int_repr().tolist() == [[-2, -2, 0, 0, 2, 2, 4, 4], [-7, -5, -3, -1, 1, 3, 5, 7]]
    q = quantize_per_channel(torch.stack([x, x]).t().contiguous(), torch.tensor([1.0, 1.0], dtype=torch.float64),
                             torch.tensor([3, 7]), 1, quint8)
    assert q.int_repr().tolist() == [[0, 4], [0, 4], [2, 6], [2, 6], [4, 8], [4, 8], [6, 10], [6, 10]]
    one = quantize_per_channel(torch.tensor([1.5], device=device), torch.tensor([1.0], dtype=torch.float64),
                               torch.tensor([1]), 0, qint8)
    assert one.int_repr().tolist() == [2]


def test_fake_quantize_rounds_before_the_zero_point_at_ties():
    """fake_quantize_* forward (and the learnable forward) add the zero point after rounding, unlike
    quantize_per_*; the mask is taken on that value. Expected values from PyTorch 2.13."""
    x = torch.tensor(TIES, requires_grad=True)
    y = fake_quantize_per_tensor_affine(x, 1.0, 1, -2, 3)
    y.sum().backward()
    assert y.tolist() == [-3.0, -2.0, -2.0, 0.0, 0.0, 2.0, 2.0, 2.0]
    assert x.grad.tolist() == [0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0]
    xs = torch.tensor([TIES, TIES]).t().contiguous().requires_grad_()
    y = fake_quantize_per_channel_affine(xs, torch.tensor([1.0, 0.5]), torch.tensor([1, 0], dtype=torch.int32), 1, -2, 3)
    y.sum().backward()
    assert y.tolist() == [[-3.0, -1.0], [-2.0, -1.0], [-2.0, -1.0], [0.0, -0.5], [0.0, 0.5], [2.0, 1.5], [2.0, 1.5],
                          [2.0, 1.5]]
    assert xs.grad.tolist() == [[0.0, 0.0], [1.0, 0.0], [1.0, 0.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 0.0],
                                [0.0, 0.0]]


def test_learnable_fake_quantize_backward_at_ties():
    """The backward adds the zero point before rounding; per channel that zero point is rint(zp) (as the
    forward's), per tensor trunc(zp + 0.5). Expected values from PyTorch 2.13."""
    x = torch.tensor([TIES, TIES]).t().contiguous().requires_grad_()
    scale = torch.tensor([1.0, 1.0], requires_grad=True)
    zero_point = torch.tensor([0.5, -1.0], requires_grad=True)
    y = _fake_quantize_learnable_per_channel_affine(x, scale, zero_point, 1, -1, 2)
    y.sum().backward()
    assert y.tolist() == [[-1.0, 0.0], [-1.0, 0.0], [-1.0, 0.0], [0.0, 0.0], [0.0, 0.0], [2.0, 2.0], [2.0, 2.0],
                          [2.0, 3.0]]
    assert x.grad.tolist() == [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0],
                               [0.0, 1.0]]
    assert scale.grad.tolist() == [-1.0, 0.0] and zero_point.grad.tolist() == [-4.0, -4.0]
    x = torch.tensor(TIES, requires_grad=True)
    scale, zero_point = torch.tensor([1.0], requires_grad=True), torch.tensor([0.5], requires_grad=True)
    y = _fake_quantize_learnable_per_tensor_affine(x, scale, zero_point, -1, 2)
    y.sum().backward()
    assert y.tolist() == [-1.0, -1.0, -1.0, 0.0, 0.0, 2.0, 2.0, 2.0]
    assert x.grad.tolist() == [0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0]
    assert scale.grad.tolist() == [-2.0] and zero_point.grad.tolist() == [-4.0]


def test_qt5_zero_point_bounds():
    x = torch.tensor([1.0])
    with pytest.raises(RuntimeError, match="quantize_tensor_per_tensor_affine zero_point 300 is above upper bound."):
        quantize_per_tensor(x, 0.1, 300, quint8)
    with pytest.raises(RuntimeError, match="quantize_tensor_per_tensor_affine zero_point -1 is below lower bound."):
        quantize_per_tensor(x, 0.1, -1, quint8)
    with pytest.raises(RuntimeError, match="zero_point 300 is above upper bound"):
        quantize_per_channel(torch.ones(2, 2), torch.tensor([1.0, 1.0]), torch.tensor([0, 300]), 0, quint8)


def test_scale_must_be_positive_and_dtype_quantized():
    x = torch.tensor([1.0])
    for bad in (0.0, -0.1, float("nan")):
        with pytest.raises(RuntimeError, match="scale must be a positive"):
            quantize_per_tensor(x, bad, 0, quint8)
    with pytest.raises(RuntimeError, match="scale must be a positive"):
        fake_quantize_per_tensor_affine(x, 0.0, 0, 0, 255)
    with pytest.raises(RuntimeError, match="expected a quantized dtype"):
        quantize_per_tensor(x, 0.1, 0, torch.int8)
    with pytest.raises(RuntimeError, match="floating point input"):
        quantize_per_tensor(torch.tensor([1, 2]), 0.1, 0, quint8)


def test_qt6_per_channel(device):
    x = torch.tensor([[-1.0, 0.0], [1.0, 2.0]], device=device)
    scales = torch.tensor([0.1, 0.01], dtype=torch.float64, device=device)
    q = quantize_per_channel(x, scales, torch.tensor([10, 0], device=device), 0, quint8)
    assert q.int_repr().tolist() == [[0, 10], [100, 200]]
    assert q.qscheme() is per_channel_affine and q.q_per_channel_axis() == 0
    assert q.q_per_channel_scales().dtype is torch.float64 and q.q_per_channel_scales().tolist() == [0.1, 0.01]
    assert q.q_per_channel_zero_points().dtype is torch.int64 and q.q_per_channel_zero_points().tolist() == [10, 0]
    assert np.allclose(q.dequantize().tolist(), [[-1, 0], [1, 2]])
    with pytest.raises(RuntimeError, match="kPerTensorAffine"):
        q.q_scale()
    with pytest.raises(RuntimeError, match="kPerChannelAffine"):
        quantize_per_tensor(x, 0.1, 0, quint8).q_per_channel_scales()


def test_qt7_dequantize(device):
    q = quantize_per_tensor(torch.tensor([1.0, 2.0, 3.0], device=device), 0.5, 2, qint8)
    assert q.dequantize().tolist() == [1.0, 2.0, 3.0]
    assert ((q.int_repr().float() - 2) * 0.5).tolist() == [1.0, 2.0, 3.0]
    assert dequantize(q).dtype is torch.float32
    plain = torch.tensor([1.5])
    assert plain.dequantize() is plain
    assert [t.tolist() for t in dequantize([q, q])] == [[1.0, 2.0, 3.0]] * 2


def test_tensor_scale_and_list_forms():
    x = torch.tensor([0.5, 1.0])
    q = quantize_per_tensor(x, torch.tensor(0.5), torch.tensor(1), quint8)
    assert q.int_repr().tolist() == [2, 3] and q.q_scale() == 0.5
    qs = quantize_per_tensor([x, x], torch.tensor([0.5, 0.25]), torch.tensor([0, 0]), quint8)
    assert [t.int_repr().tolist() for t in qs] == [[1, 2], [2, 4]]


# hypothesis against the reference formulas ------------------------------------------------------


@given(
    x=tensors(dtype=torch.float32, min_value=-300.0, max_value=300.0),
    scale=st.floats(1e-3, 10.0),
    dtype=st.sampled_from([qint8, quint8, qint32]),
    data=st.data(),
)
def test_per_tensor_matches_reference(x, scale, dtype, data):
    qmin, qmax = QUANTIZED_RANGES[dtype]
    zero_point = data.draw(st.integers(max(qmin, -300), min(qmax, 300)))
    q = quantize_per_tensor(x, scale, zero_point, dtype)
    expected, _ = reference_per_tensor(x.numpy(), scale, zero_point, dtype)
    np.testing.assert_array_equal(q.int_repr().numpy(), expected)
    dequantized = np.float32(scale) * (expected.astype(np.int64) - zero_point).astype(np.float32)
    np.testing.assert_array_equal(q.dequantize().numpy(), dequantized)


@given(x=tensors(shape=shapes(1, 3), dtype=torch.float32, min_value=-50.0, max_value=50.0), data=st.data())
def test_per_channel_matches_reference(x, data):
    axis = data.draw(st.integers(0, x.dim() - 1))
    n = x.shape[axis]
    dtype = data.draw(st.sampled_from([qint8, quint8]))
    qmin, qmax = QUANTIZED_RANGES[dtype]
    scales = data.draw(st.lists(st.floats(1e-2, 2.0), min_size=n, max_size=n))
    zero_points = data.draw(st.lists(st.integers(qmin, qmax), min_size=n, max_size=n))
    q = quantize_per_channel(x, torch.tensor(scales, dtype=torch.float64), torch.tensor(zero_points), axis, dtype)
    expected, _ = reference_per_channel(x.numpy(), scales, zero_points, axis, dtype)
    np.testing.assert_array_equal(q.int_repr().numpy(), expected)
    shape = [1] * x.dim()
    shape[axis] = -1
    dequantized = ((expected.astype(np.int64) - np.array(zero_points).reshape(shape))
                   * np.array(scales).reshape(shape)).astype(np.float32)
    np.testing.assert_array_equal(q.dequantize().numpy(), dequantized)


# gradients: the straight-through estimator --------------------------------------------------------


def test_qt13_quantized_tensors_take_part_in_backward(device):
    x = torch.tensor([-1.0, 0.0, 1.0, 2.0, 30.0], device=device, requires_grad=True)
    q = quantize_per_tensor(x, 0.1, 10, quint8)
    assert q.requires_grad and q.grad_fn is not None
    y = q.dequantize()
    (y * torch.arange(5.0, device=device)).sum().backward()
    # 30.0 -> rint(10 + 300) = 310 > 255: outside, no gradient
    assert x.grad.tolist() == [0.0, 1.0, 2.0, 3.0, 0.0]
    leaf = quantize_per_tensor(torch.tensor([1.0, 2.0]), 0.5, 0, qint8).requires_grad_()
    leaf.dequantize().sum().backward()
    assert leaf.grad.dtype is torch.float32 and leaf.grad.tolist() == [1.0, 1.0]


def test_ste_mask_at_range_ends():
    # quint8, scale 1, zp 0: values that round to 0 or 255 keep their gradient, -0.6 and 255.6 do not
    x = torch.tensor([-0.6, -0.5, -0.4, 0.0, 254.6, 255.0, 255.4, 255.5, 255.6], requires_grad=True)
    quantize_per_tensor(x, 1.0, 0, quint8).dequantize().sum().backward()
    assert x.grad.tolist() == [0, 1, 1, 1, 1, 1, 1, 0, 0]  # rint(-0.5) = -0, rint(255.5) = 256
    x = torch.tensor([[-2.6, 2.4], [-1.4, 1.6]], requires_grad=True)  # qint8 scale 0.02 -> range [-2.56, 2.54]
    quantize_per_channel(x, torch.tensor([0.02, 1.0]), torch.tensor([0, 0]), 0, qint8).dequantize().sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0], [1.0, 1.0]]


@given(x=tensors(dtype=torch.float64, min_value=-3.0, max_value=3.0, requires_grad=True), data=st.data())
def test_ste_gradient_is_fake_quantize_mask(x, data):
    scale = data.draw(st.sampled_from([0.01, 0.02, 0.05]))
    zero_point = data.draw(st.integers(-20, 20))
    q = quantize_per_tensor(x, scale, zero_point, qint8)
    weight = torch.rand(x.shape, dtype=torch.float32)
    (q.dequantize() * weight).sum().backward()
    _, mask = reference_per_tensor(x.detach().numpy(), scale, zero_point, qint8)
    np.testing.assert_allclose(x.grad.numpy(), np.where(mask, weight.numpy(), 0.0))
    assert x.grad.dtype is torch.float64


@given(x=tensors(dtype=torch.float64, min_value=-1.0, max_value=1.0), data=st.data())
def test_gradcheck_chains_through_quantized_values(x, data):
    """dequantize(quantize(x)) is a constant w.r.t. the float parts of a chain away from rounding
    boundaries: gradcheck and gradgradcheck of the surrounding ops pass (in float64)."""
    x = ((x.detach() * 64).round() / 64).requires_grad_()  # on the grid of scale 1/64: 1/128 from any boundary
    w = torch.randn(x.shape, dtype=torch.float64, requires_grad=True)

    def chain(x, w):
        x_hat = quantize_per_tensor(x, 1 / 64, 0, qint8).dequantize().double()
        return (x_hat * w).sin() + w * w

    assert gradcheck(lambda w: chain(x.detach(), w), (w,))
    assert gradgradcheck(lambda w: chain(x.detach(), w), (w,))
    # the gradient w.r.t. x is the STE: d/dx_hat of the float part, unmasked (all in range)
    out = chain(x, w.detach()).sum()
    (grad_x,) = torch.autograd.grad(out, x)
    x_hat = x.detach()  # exact: grid points quantize without error
    np.testing.assert_allclose(grad_x.numpy(), ((x_hat * w.detach()).cos() * w.detach()).numpy(), rtol=1e-6)


def test_gradcheck_through_views_of_quantized_tensors():
    x = torch.tensor([[0.25, -0.75, 1.25], [0.5, 1.5, -1.0]], requires_grad=True)
    w = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
    q = quantize_per_tensor(x, 0.25, 0, qint8)

    def chain(w):
        return q.t()[1:].reshape(4).dequantize().double().view(2, 2) @ w[:2] + 1

    assert gradcheck(chain, (w,)) and gradgradcheck(chain, (w,))
    (q.t()[1:].dequantize() * torch.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 3.0], [0.0, 2.0, 4.0]]


# fake quantization (QT-8 .. QT-12) -----------------------------------------------------------------


def _fake_quant(values, scale, zero_point, qmin, qmax):
    x = torch.tensor(values, requires_grad=True)
    y = fake_quantize_per_tensor_affine(x, scale, zero_point, qmin, qmax)
    y.sum().backward()
    return y.tolist(), x.grad.tolist()


def test_qt8_fake_quant_ste_mask():
    y, grad = _fake_quant([-0.6, -0.4, 0, 0.5, 1.5, 2.5, 254.6, 255.4, 255.6, 300], 1.0, 0, 0, 255)
    assert y == [0, 0, 0, 0, 2, 2, 255, 255, 255, 255]
    assert grad == [0, 1, 1, 1, 1, 1, 1, 1, 0, 0]


def test_qt9_qt10_fake_quant_doc_and_signed():
    y, grad = _fake_quant([0.0552, 0.9730, 0.3973, -1.0780], 0.1, 0, 0, 255)
    assert y == pytest.approx([0.1, 1.0, 0.4, 0.0], abs=1e-6) and grad == [1, 1, 1, 0]
    y, grad = _fake_quant([-1.3, -0.2, 0.26, 1.2, 12.7, 12.8], 0.1, 3, -128, 127)
    assert y == pytest.approx([-1.3, -0.2, 0.3, 1.2, 12.4, 12.4], abs=1e-5) and grad == [1, 1, 1, 1, 0, 0]


def test_qt11_fake_quant_per_channel():
    x = torch.tensor([[-0.25, 0.5], [1.0, 3.0]], requires_grad=True)
    y = fake_quantize_per_channel_affine(x, torch.tensor([0.5, 0.25]), torch.tensor([0, 0]), 1, -2, 2)
    y.sum().backward()
    assert y.tolist() == [[0, 0.5], [1.0, 0.5]] and x.grad.tolist() == [[1, 1], [1, 0]]


def test_qt12_learnable_fake_quant():
    def run(values, zero_point):
        x = torch.tensor(values, requires_grad=True)
        scale = torch.tensor([1.0], requires_grad=True)
        zp = torch.tensor([zero_point], requires_grad=True)
        y = _fake_quantize_learnable_per_tensor_affine(x, scale, zp, 0, 255, 1.0)
        y.sum().backward()
        return y.tolist(), x.grad.tolist(), scale.grad.item(), zp.grad.item()

    y, dx, dscale, dzp = run([0.3, 1.2], 0.0)
    assert y == [0, 1] and dx == [1, 1] and dscale == pytest.approx(-0.5) and dzp == 0
    y, dx, dscale, dzp = run([-2.0, 300.0, 1.2], 10.0)
    assert y == [-2, 245, 1] and dx == [1, 0, 1] and dscale == pytest.approx(244.8) and dzp == -1


def test_learnable_per_channel_and_grad_factor():
    x = torch.tensor([[0.3, -2.0], [1.2, 300.0]], requires_grad=True)
    scale = torch.tensor([1.0, 1.0], requires_grad=True)
    zp = torch.tensor([0.0, 10.0], requires_grad=True)
    y = _fake_quantize_learnable_per_channel_affine(x, scale, zp, 1, 0, 255, 0.5)
    y.sum().backward()
    assert y.tolist() == [[0, -2], [1, 245]]
    assert x.grad.tolist() == [[1, 1], [1, 0]]
    assert scale.grad.tolist() == pytest.approx([-0.25, 122.5]) and zp.grad.tolist() == [0.0, -0.5]


def test_fake_quant_checks():
    x = torch.tensor([1.0])
    with pytest.raises(RuntimeError, match="`quant_min` should be less than or equal to `quant_max`."):
        fake_quantize_per_tensor_affine(x, 0.1, 0, 10, 0)
    with pytest.raises(RuntimeError, match="`zero_point` must be between `quant_min` and `quant_max`."):
        fake_quantize_per_tensor_affine(x, 0.1, 300, 0, 255)
    with pytest.raises(RuntimeError, match="not consistent with input tensor"):
        fake_quantize_per_channel_affine(torch.ones(2, 3), torch.ones(2), torch.zeros(2, dtype=torch.int64), 1, 0, 255)


@given(x=tensors(dtype=torch.float32, min_value=-5.0, max_value=5.0, requires_grad=True), data=st.data())
def test_fake_quant_matches_reference(x, data):
    scale = data.draw(st.floats(0.01, 1.0))
    zero_point = data.draw(st.integers(-10, 10))
    y = fake_quantize_per_tensor_affine(x, scale, zero_point, -20, 20)
    y.sum().backward()
    xs = x.detach().numpy()
    q = np.rint(xs / np.float32(scale)) + zero_point
    expected = (np.clip(q, -20, 20) - zero_point) * np.float32(scale)
    np.testing.assert_array_equal(y.detach().numpy(), expected.astype(np.float32))
    np.testing.assert_array_equal(x.grad.numpy(), ((q >= -20) & (q <= 20)).astype(np.float32))


# views, copies, printing, unsupported ops ----------------------------------------------------------


def test_views_keep_quantization(device):
    q = quantize_per_tensor(torch.arange(6.0, device=device).reshape(2, 3), 0.5, 3, quint8)
    for view in (q[1], q[:, 1:], q.view(3, 2), q.reshape(6), q.t(), q.transpose(0, 1), q.unsqueeze(0), q.select(1, 2)):
        assert view.is_quantized and view.q_scale() == 0.5 and view.q_zero_point() == 3
        assert view.untyped_storage().data_ptr() == q.untyped_storage().data_ptr()
    assert q[1].int_repr().tolist() == [9, 11, 13]
    assert q.t().dequantize().tolist() == [[0, 3], [1, 4], [2, 5]]
    assert q.t().reshape(6).dequantize().tolist() == [0, 3, 1, 4, 2, 5]  # a copy: clone keeps the quantizer
    assert q.clone().int_repr().tolist() == q.int_repr().tolist() and q.detach().is_quantized


def test_per_channel_views_follow_the_channel_dim():
    q = quantize_per_channel(torch.tensor([[-1.0, 0.0], [1.0, 2.0]]), torch.tensor([0.1, 0.01]),
                             torch.tensor([10, 0]), 0, quint8)
    assert q.t().q_per_channel_axis() == 1
    np.testing.assert_allclose(q.t().dequantize().numpy(), [[-1, 1], [0, 2]], atol=1e-6)
    assert q[1].qscheme() is per_tensor_affine and q[1].q_zero_point() == 0
    assert q[:, 0].q_per_channel_scales().tolist() == pytest.approx([0.1, 0.01])
    with pytest.raises(RuntimeError, match="uniformly quantized"):
        q.as_strided((2,), (1,))


def test_repr_matches_pytorch():
    q = quantize_per_tensor(torch.tensor([-1.0, 0.0, 1.0, 2.0]), 0.1, 10, quint8)
    assert repr(q) == (
        "tensor([-1.,  0.,  1.,  2.], size=(4,), dtype=torch.quint8,\n"
        "       quantization_scheme=torch.per_tensor_affine, scale=0.1, zero_point=10)"
    )
    qc = quantize_per_channel(torch.tensor([[-1.0, 0.0], [1.0, 2.0]]), torch.tensor([0.1, 0.01], dtype=torch.float64),
                              torch.tensor([10, 0]), 0, quint8)
    assert repr(qc) == (
        "tensor([[-1.,  0.],\n        [ 1.,  2.]], size=(2, 2), dtype=torch.quint8,\n"
        "       quantization_scheme=torch.per_channel_affine,\n"
        "       scale=tensor([0.1000, 0.0100], dtype=torch.float64),\n"
        "       zero_point=tensor([10,  0]), axis=0)"
    )


def test_float_ops_on_quantized_tensors_raise():
    q = quantize_per_tensor(torch.tensor([1.0, 2.0]), 0.5, 0, quint8)
    with pytest.raises(NotImplementedError, match="add"):
        q + q
    with pytest.raises(NotImplementedError, match="quantized"):
        q.sum()
    with pytest.raises(TypeError, match="unsupported ScalarType"):
        q.numpy()
    with pytest.raises(RuntimeError, match="Promotion for quantized types"):
        torch.promote_types(qint8, torch.float32)
    assert q[0].item() == 1.0 and q.tolist() == [1.0, 2.0]
