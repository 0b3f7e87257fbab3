"""nn layer modules: PyTorch's default initialisation, reprs, forward == functional form (and numpy),
train/eval behaviour, buffers and state_dict keys, factory kwargs, and gradcheck through modules."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch as torch
import minitorch.nn as nn
import minitorch.nn.functional as F
from minitorch.autograd import gradcheck, gradgradcheck
from minitorch.testing.strategies import shapes, tensors

RNG = np.random.default_rng(11)


def arr(t):
    return t.detach().cpu().numpy()


def t64(a, device="cpu", **kwargs):
    return torch.tensor(np.asarray(a, dtype=np.float64), device=device, **kwargs)


def check_uniform(values, bound):
    """Values lie in [-bound, bound] and look uniform: mean ~ 0, std ~ bound / sqrt(3)."""
    values = np.asarray(values, dtype=np.float64).ravel()
    assert np.abs(values).max() <= bound + 1e-7
    std = bound / math.sqrt(3)
    assert abs(values.mean()) < 4 * std / math.sqrt(values.size)
    assert abs(values.std() / std - 1) < 0.1


# Linear / Bilinear / Identity ------------------------------------------------------------------


def test_linear_default_init_and_shapes(device):
    m = nn.Linear(64, 128, device=device)
    assert m.weight.shape == (128, 64) and m.bias.shape == (128,)
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad and m.bias.requires_grad
    assert m.weight.device.type == torch.device(device).type and m.weight.dtype is torch.float32
    check_uniform(arr(m.weight), 1 / 8)  # kaiming_uniform_(a=sqrt(5)) = U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    assert np.abs(arr(m.bias)).max() <= 1 / 8
    assert arr(m.bias).std() > 0.02  # drawn, not left at zero
    assert [name for name, _ in m.named_parameters()] == ["weight", "bias"]


def test_linear_repr_bias_false_and_factory_kwargs(device):
    assert repr(nn.Linear(3, 2)) == "Linear(in_features=3, out_features=2, bias=True)"
    m = nn.Linear(3, 2, bias=False, device=device, dtype=torch.float64)
    assert repr(m) == "Linear(in_features=3, out_features=2, bias=False)"
    assert m.bias is None and list(m.state_dict()) == ["weight"]
    assert m.weight.dtype is torch.float64
    out = m(torch.ones(4, 3, dtype=torch.float64, device=device))
    np.testing.assert_allclose(arr(out), np.ones((4, 3)) @ arr(m.weight).T, rtol=1e-12)


def test_linear_init_follows_the_seed():
    torch.manual_seed(3)
    a = nn.Linear(4, 3)
    torch.manual_seed(3)
    b = nn.Linear(4, 3)
    np.testing.assert_array_equal(arr(a.weight), arr(b.weight))
    np.testing.assert_array_equal(arr(a.bias), arr(b.bias))
    a.reset_parameters()
    assert not np.array_equal(arr(a.weight), arr(b.weight))


@given(x=tensors(shape=shapes(1, 3, 1, 4).map(lambda s: s[:-1] + (3,))))
def test_linear_forward_matches_numpy(x):
    m = nn.Linear(3, 2).double()
    out = m(x)
    np.testing.assert_allclose(arr(out), arr(x) @ arr(m.weight).T + arr(m.bias), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(arr(out), arr(F.linear(x, m.weight, m.bias)))


def test_linear_gradcheck_input_and_parameters(device):
    m = nn.Linear(3, 2, device=device).double()
    assert m.weight.dtype is torch.float64 and isinstance(m.weight, nn.Parameter)
    x = t64(RNG.standard_normal((3, 4)), device).t().requires_grad_()  # non-contiguous (4, 3)
    assert not x.is_contiguous()
    assert gradcheck(lambda x, w, b: m(x), (x, m.weight, m.bias))
    assert gradgradcheck(lambda x, w, b: m(x), (x, m.weight, m.bias))


def test_linear_backward_fills_parameter_grads(device):
    m = nn.Linear(3, 2, device=device)
    x = torch.randn(5, 3, device=device)
    m(x).sum().backward()
    np.testing.assert_allclose(arr(m.weight.grad), np.tile(arr(x).sum(0), (2, 1)), rtol=1e-5)
    np.testing.assert_allclose(arr(m.bias.grad), [5.0, 5.0])


def test_bilinear(device):
    m = nn.Bilinear(20, 3, 4, device=device)
    assert repr(m) == "Bilinear(in1_features=20, in2_features=3, out_features=4, bias=True)"
    assert m.weight.shape == (4, 20, 3) and m.bias.shape == (4,)
    check_uniform(arr(m.weight), 1 / math.sqrt(20))
    assert np.abs(arr(m.bias)).max() <= 1 / math.sqrt(20)
    m = m.double()
    x1 = t64(RNG.standard_normal((2, 20)), device)
    x2 = t64(RNG.standard_normal((2, 3)), device)
    expected = np.einsum("ni,kij,nj->nk", arr(x1), arr(m.weight), arr(x2)) + arr(m.bias)
    np.testing.assert_allclose(arr(m(x1, x2)), expected, rtol=1e-10)
    small = nn.Bilinear(2, 3, 2, bias=False, device=device).double()
    assert small.bias is None
    a = t64(RNG.standard_normal((2, 2)), device, requires_grad=True)
    b = t64(RNG.standard_normal((2, 3)), device, requires_grad=True)
    assert gradcheck(lambda a, b, w: small(a, b), (a, b, small.weight))


def test_identity_ignores_arguments(device):
    m = nn.Identity(54, unused="x")
    x = torch.randn(2, 3, device=device)
    assert m(x) is x and repr(m) == "Identity()" and list(m.parameters()) == []


# convolutions ------------------------------------------------------------------------------------


def test_conv2d_default_init_shapes_and_repr(device):
    m = nn.Conv2d(4, 32, 3, device=device)
    assert repr(nn.Conv2d(1, 16, 3)) == "Conv2d(1, 16, kernel_size=(3, 3), stride=(1, 1))"
    assert m.weight.shape == (32, 4, 3, 3) and m.bias.shape == (32,)
    assert m.kernel_size == (3, 3) and m.stride == (1, 1) and m.padding == (0, 0) and m.dilation == (1, 1)
    check_uniform(arr(m.weight), 1 / 6)  # fan_in = 4 * 3 * 3
    assert np.abs(arr(m.bias)).max() <= 1 / 6


def test_conv_reprs():
    assert repr(nn.Conv2d(2, 4, (3, 5), stride=2, padding=1, dilation=2, groups=2, bias=False,
                          padding_mode="circular")) == (
        "Conv2d(2, 4, kernel_size=(3, 5), stride=(2, 2), padding=(1, 1), dilation=(2, 2), groups=2, bias=False, "
        "padding_mode=circular)"
    )
    assert repr(nn.Conv1d(2, 3, 3, padding="same")) == "Conv1d(2, 3, kernel_size=(3,), stride=(1,), padding=same)"
    assert repr(nn.ConvTranspose2d(2, 3, 3, stride=2, output_padding=1)) == (
        "ConvTranspose2d(2, 3, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1))"
    )


def np_conv1d(x, w, b):
    """Plain cross-correlation of (N, C, L) with (O, C, K), stride 1, no padding."""
    k = w.shape[-1]
    length = x.shape[-1] - k + 1
    out = np.stack([np.einsum("ncK,ocK->no", x[..., i:i + k], w) for i in range(length)], -1)
    return out + b[None, :, None]


def test_conv1d_forward_matches_numpy(device):
    m = nn.Conv1d(2, 3, 3, device=device, dtype=torch.float64)
    x = RNG.standard_normal((2, 2, 6))
    np.testing.assert_allclose(arr(m(t64(x, device))), np_conv1d(x, arr(m.weight), arr(m.bias)), rtol=1e-10)
    # unbatched input
    np.testing.assert_allclose(arr(m(t64(x[0], device))), np_conv1d(x[:1], arr(m.weight), arr(m.bias))[0],
                               rtol=1e-10)


@pytest.mark.parametrize("mode,np_mode", [("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")])
def test_conv2d_padding_modes(device, mode, np_mode):
    m = nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode=mode, device=device, dtype=torch.float64)
    x = RNG.standard_normal((2, 2, 4, 5))
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (2, 2)), mode=np_mode)
    expected = F.conv2d(t64(padded, device), m.weight, m.bias)
    out = m(t64(x, device))
    assert out.shape == (2, 3, 4, 7)
    np.testing.assert_allclose(arr(out), arr(expected), rtol=1e-12)


def test_conv2d_same_padding_and_zeros_match_functional(device):
    x = torch.randn(1, 2, 5, 6, device=device)
    m = nn.Conv2d(2, 4, (3, 4), padding="same", device=device)
    assert m(x).shape == (1, 4, 5, 6)
    np.testing.assert_allclose(arr(m(x)), arr(F.conv2d(x, m.weight, m.bias, padding="same")), rtol=1e-6)
    reflect = nn.Conv2d(2, 4, (3, 4), padding="same", padding_mode="reflect", device=device)
    # even kernel: 'same' puts the extra padding element on the right (PyTorch's split)
    assert reflect._reversed_padding_repeated_twice == (1, 2, 1, 1)
    assert reflect(x).shape == (1, 4, 5, 6)
    strided = nn.Conv2d(2, 4, 3, stride=2, padding=1, dilation=1, groups=2, device=device)
    expected = F.conv2d(x, strided.weight, strided.bias, stride=2, padding=1, groups=2)
    np.testing.assert_allclose(arr(strided(x)), arr(expected), rtol=1e-6)


def test_conv_constructor_errors():
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="out_channels must be divisible by groups"):
        nn.Conv2d(4, 3, 3, groups=2)
    with pytest.raises(ValueError, match="groups must be a positive integer"):
        nn.Conv2d(4, 4, 3, groups=0)
    with pytest.raises(ValueError, match="Invalid padding string 'full'"):
        nn.Conv2d(1, 1, 3, padding="full")
    with pytest.raises(ValueError, match="padding='same' is not supported for strided convolutions"):
        nn.Conv2d(1, 1, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(1, 1, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose2d'):
        nn.ConvTranspose2d(1, 1, 3, padding_mode="reflect")


def test_conv2d_gradcheck_reflect(device):
    m = nn.Conv2d(2, 2, 2, padding=1, padding_mode="reflect", device=device).double()
    x = t64(RNG.standard_normal((1, 2, 3, 3)), device, requires_grad=True)
    assert gradcheck(lambda x, w, b: m(x), (x, m.weight, m.bias))


def test_conv_transpose2d(device):
    m = nn.ConvTranspose2d(2, 4, 3, stride=2, groups=2, device=device, dtype=torch.float64)
    assert m.weight.shape == (2, 2, 3, 3) and m.bias.shape == (4,)
    assert np.abs(arr(m.weight)).max() <= 1 / math.sqrt(18)  # PyTorch's fan_in: weight.shape[1] * 3 * 3
    x = t64(RNG.standard_normal((1, 2, 4, 4)), device)
    expected = F.conv_transpose2d(x, m.weight, m.bias, stride=2, groups=2)
    np.testing.assert_allclose(arr(m(x)), arr(expected), rtol=1e-12)
    assert m(x).shape == (1, 4, 9, 9)
    assert m(x, output_size=(10, 10)).shape == (1, 4, 10, 10)
    assert m(x, output_size=[1, 4, 10, 10]).shape == (1, 4, 10, 10)
    np.testing.assert_allclose(arr(m(x, output_size=(10, 10))),
                               arr(F.conv_transpose2d(x, m.weight, m.bias, stride=2, output_padding=1, groups=2)))
    with pytest.raises(ValueError, match="requested an output size of"):
        m(x, output_size=(11, 11))
    with pytest.raises(ValueError, match="output_size must have 2 or 4 elements"):
        m(x, output_size=(10,))


def test_conv_transpose1d_gradcheck(device):
    m = nn.ConvTranspose1d(2, 1, 2, stride=2, device=device).double()
    x = t64(RNG.standard_normal((1, 2, 3)), device, requires_grad=True)
    assert gradcheck(lambda x, w: m(x), (x, m.weight))


# pooling ------------------------------------------------------------------------------------------


def test_pool_reprs():
    assert repr(nn.MaxPool2d(2)) == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.MaxPool1d(3, 1, 1)) == "MaxPool1d(kernel_size=3, stride=1, padding=1, dilation=1, ceil_mode=False)"
    assert repr(nn.AvgPool2d(2)) == "AvgPool2d(kernel_size=2, stride=2, padding=0)"
    assert repr(nn.AvgPool1d(3, 2)) == "AvgPool1d(kernel_size=(3,), stride=(2,), padding=(0,))"
    assert repr(nn.AdaptiveAvgPool2d((1, None))) == "AdaptiveAvgPool2d(output_size=(1, None))"
    assert repr(nn.AdaptiveAvgPool1d(4)) == "AdaptiveAvgPool1d(output_size=4)"


def test_max_pool_modules(device):
    x = t64(RNG.standard_normal((2, 3, 4, 6)), device)
    out = nn.MaxPool2d(2)(x)
    np.testing.assert_array_equal(arr(out), arr(x).reshape(2, 3, 2, 2, 3, 2).max(axis=(3, 5)))
    values, indices = nn.MaxPool2d((2, 3), stride=1, return_indices=True)(x)
    ref_values, ref_indices = F.max_pool2d(x, (2, 3), 1, return_indices=True)
    np.testing.assert_array_equal(arr(values), arr(ref_values))
    np.testing.assert_array_equal(arr(indices), arr(ref_indices))
    x1 = t64(RNG.standard_normal((2, 3, 7)), device)
    np.testing.assert_array_equal(arr(nn.MaxPool1d(3, 2, 1, ceil_mode=True)(x1)),
                                  arr(F.max_pool1d(x1, 3, 2, 1, ceil_mode=True)))


def test_avg_pool_modules(device):
    x = t64(RNG.standard_normal((2, 3, 4, 6)), device)
    np.testing.assert_allclose(arr(nn.AvgPool2d(2)(x)), arr(x).reshape(2, 3, 2, 2, 3, 2).mean(axis=(3, 5)),
                               rtol=1e-12)
    np.testing.assert_allclose(arr(nn.AvgPool2d(3, 1, 1, count_include_pad=False)(x)),
                               arr(F.avg_pool2d(x, 3, 1, 1, count_include_pad=False)), rtol=1e-12)
    np.testing.assert_allclose(arr(nn.AvgPool2d(2, divisor_override=1)(x)),
                               arr(x).reshape(2, 3, 2, 2, 3, 2).sum(axis=(3, 5)), rtol=1e-12)
    x1 = t64(RNG.standard_normal((2, 3, 6)), device)
    np.testing.assert_allclose(arr(nn.AvgPool1d(2)(x1)), arr(x1).reshape(2, 3, 3, 2).mean(-1), rtol=1e-12)


def test_adaptive_avg_pool_modules(device):
    x = t64(RNG.standard_normal((2, 3, 4, 6)), device)
    np.testing.assert_allclose(arr(nn.AdaptiveAvgPool2d(1)(x)), arr(x).mean(axis=(2, 3), keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(arr(nn.AdaptiveAvgPool2d((2, 3))(x)),
                               arr(x).reshape(2, 3, 2, 2, 3, 2).mean(axis=(3, 5)), rtol=1e-12)
    assert nn.AdaptiveAvgPool2d((None, 2))(x).shape == (2, 3, 4, 2)
    x1 = t64(RNG.standard_normal((3, 5)), device)  # unbatched (C, L)
    # L=5 into 2 windows: [0, 3) and [2, 5)
    expected = np.stack([arr(x1)[:, 0:3].mean(-1), arr(x1)[:, 2:5].mean(-1)], -1)
    np.testing.assert_allclose(arr(nn.AdaptiveAvgPool1d(2)(x1)), expected, rtol=1e-12)


def test_pooling_gradcheck(device):
    x = t64(RNG.standard_normal((1, 2, 4, 4)), device, requires_grad=True)
    assert gradcheck(nn.AvgPool2d(2, stride=1, padding=1), (x,))
    assert gradcheck(nn.AdaptiveAvgPool2d((3, 2)), (x,))


# normalization ------------------------------------------------------------------------------------


def test_batchnorm_init_buffers_repr_and_state_dict(device):
    m = nn.BatchNorm2d(16, device=device)
    assert repr(m) == "BatchNorm2d(16, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"
    np.testing.assert_array_equal(arr(m.weight), np.ones(16))
    np.testing.assert_array_equal(arr(m.bias), np.zeros(16))
    np.testing.assert_array_equal(arr(m.running_mean), np.zeros(16))
    np.testing.assert_array_equal(arr(m.running_var), np.ones(16))
    assert m.num_batches_tracked.dtype is torch.int64 and m.num_batches_tracked.shape == ()
    assert not m.running_mean.requires_grad and not isinstance(m.running_mean, nn.Parameter)
    assert list(m.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    plain = nn.BatchNorm1d(3, affine=False, track_running_stats=False)
    assert repr(plain) == "BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)"
    assert plain.weight is None and plain.running_mean is None and plain.num_batches_tracked is None
    assert list(plain.state_dict()) == []
    m64 = nn.BatchNorm1d(3, dtype=torch.float64)
    assert m64.running_mean.dtype is torch.float64 and m64.num_batches_tracked.dtype is torch.int64


def np_batch_norm(x, axes, eps=1e-5):
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def test_batchnorm2d_train_updates_running_stats(device):
    m = nn.BatchNorm2d(3, device=device, dtype=torch.float64)
    with torch.no_grad():
        m.weight.copy_(t64([1.0, 2.0, 3.0], device))
        m.bias.copy_(t64([0.5, 0.0, -0.5], device))
    x = RNG.standard_normal((4, 3, 2, 3)) * 2 + 1
    out = m(t64(x, device))
    expected = np_batch_norm(x, (0, 2, 3)) * np.array([1, 2, 3.0])[:, None, None] + np.array([0.5, 0, -0.5])[:, None,
                                                                                                            None]
    np.testing.assert_allclose(arr(out), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(arr(m.running_mean), 0.1 * x.mean(axis=(0, 2, 3)), rtol=1e-10)
    np.testing.assert_allclose(arr(m.running_var), 0.9 + 0.1 * x.var(axis=(0, 2, 3), ddof=1), rtol=1e-10)
    assert int(m.num_batches_tracked) == 1
    m(t64(x, device))
    assert int(m.num_batches_tracked) == 2
    np.testing.assert_allclose(arr(m.running_mean), 0.19 * x.mean(axis=(0, 2, 3)), rtol=1e-10)


def test_batchnorm_eval_uses_running_stats_and_leaves_them(device):
    m = nn.BatchNorm1d(3, device=device, dtype=torch.float64)
    m(t64(RNG.standard_normal((5, 3)) + 3, device))
    mean, var = arr(m.running_mean).copy(), arr(m.running_var).copy()
    m.eval()
    assert not m.training
    x = RNG.standard_normal((4, 3, 2))
    out = m(t64(x, device))
    np.testing.assert_allclose(arr(out), (x - mean[:, None]) / np.sqrt(var[:, None] + 1e-5), rtol=1e-10)
    np.testing.assert_array_equal(arr(m.running_mean), mean)
    np.testing.assert_array_equal(arr(m.running_var), var)
    assert int(m.num_batches_tracked) == 1
    m.train()
    m(t64(x, device))
    assert int(m.num_batches_tracked) == 2
    assert not np.array_equal(arr(m.running_mean), mean)


def test_batchnorm_momentum_none_is_cumulative_average(device):
    m = nn.BatchNorm1d(2, momentum=None, device=device, dtype=torch.float64)
    assert "momentum=None" in repr(m)
    batches = [RNG.standard_normal((6, 2)) + i for i in range(3)]
    for b in batches:
        m(t64(b, device))
    np.testing.assert_allclose(arr(m.running_mean), np.mean([b.mean(0) for b in batches], axis=0), rtol=1e-10)
    np.testing.assert_allclose(arr(m.running_var), np.mean([b.var(0, ddof=1) for b in batches], axis=0), rtol=1e-10)


def test_batchnorm_without_running_stats_uses_batch_stats_in_eval(device):
    m = nn.BatchNorm1d(2, track_running_stats=False, device=device, dtype=torch.float64).eval()
    x = RNG.standard_normal((5, 2))
    np.testing.assert_allclose(arr(m(t64(x, device))), np_batch_norm(x, (0,)), rtol=1e-10, atol=1e-12)


def test_batchnorm_input_checks(device):
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        nn.BatchNorm2d(3, device=device)(torch.zeros(2, 3, 4, device=device))
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(3, device=device)(torch.zeros(2, 3, 4, 4, device=device))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        nn.BatchNorm1d(3, device=device)(torch.zeros(1, 3, device=device))


def test_batchnorm_load_state_dict(device):
    src = nn.BatchNorm1d(2, device=device)
    src(torch.randn(4, 2, device=device))
    dst = nn.BatchNorm1d(2, device=device)
    dst.load_state_dict(src.state_dict())
    np.testing.assert_array_equal(arr(dst.running_mean), arr(src.running_mean))
    assert int(dst.num_batches_tracked) == 1
    # a checkpoint from before num_batches_tracked existed (no version metadata) still loads strictly
    legacy = {k: v for k, v in src.state_dict().items() if k != "num_batches_tracked"}
    fresh = nn.BatchNorm1d(2, device=device)
    fresh.load_state_dict(legacy)
    np.testing.assert_array_equal(arr(fresh.running_var), arr(src.running_var))
    assert int(fresh.num_batches_tracked) == 0


def test_batchnorm_double_gradcheck(device):
    m = nn.BatchNorm1d(2, device=device).double()
    assert m.running_mean.dtype is torch.float64 and m.num_batches_tracked.dtype is torch.int64
    x = t64(RNG.standard_normal((2, 3)), device).t().requires_grad_()  # non-contiguous (3, 2)
    assert gradcheck(lambda x, w, b: m(x), (x, m.weight, m.bias))
    m.eval()
    assert gradcheck(lambda x, w, b: m(x), (x, m.weight, m.bias))


def test_layer_norm(device):
    m = nn.LayerNorm(4, device=device)
    assert repr(m) == "LayerNorm((4,), eps=1e-05, elementwise_affine=True)"
    assert m.normalized_shape == (4,)
    np.testing.assert_array_equal(arr(m.weight), np.ones(4))
    np.testing.assert_array_equal(arr(m.bias), np.zeros(4))
    m2 = nn.LayerNorm([2, 3], elementwise_affine=True, bias=False, device=device, dtype=torch.float64)
    assert m2.bias is None and m2.weight.shape == (2, 3) and list(m2.state_dict()) == ["weight"]
    x = RNG.standard_normal((3, 2, 3))
    np.testing.assert_allclose(arr(m2(t64(x, device))), np_batch_norm(x, (1, 2)), rtol=1e-10, atol=1e-12)
    assert repr(nn.LayerNorm((2, 3), elementwise_affine=False)) == (
        "LayerNorm((2, 3), eps=1e-05, elementwise_affine=False)"
    )
    m3 = nn.LayerNorm(3, device=device).double()
    xg = t64(RNG.standard_normal((2, 3)), device, requires_grad=True)
    assert gradcheck(lambda x, w, b: m3(x), (xg, m3.weight, m3.bias))
    assert gradgradcheck(lambda x, w, b: m3(x), (xg, m3.weight, m3.bias))


def test_group_norm(device):
    m = nn.GroupNorm(2, 4, device=device, dtype=torch.float64)
    assert repr(m) == "GroupNorm(2, 4, eps=1e-05, affine=True)"
    with torch.no_grad():
        m.weight.copy_(t64([1.0, 2.0, 3.0, 4.0], device))
    x = RNG.standard_normal((2, 4, 3))
    grouped = np_batch_norm(x.reshape(2, 2, 6), (2,)).reshape(2, 4, 3)
    np.testing.assert_allclose(arr(m(t64(x, device))), grouped * np.arange(1, 5.0)[:, None], rtol=1e-10)
    with pytest.raises(ValueError, match="num_channels must be divisible by num_groups"):
        nn.GroupNorm(3, 4)
    assert nn.GroupNorm(1, 2, affine=False).weight is None


def test_instance_norm_and_rms_norm(device):
    m = nn.InstanceNorm1d(3, device=device)
    assert repr(m) == "InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)"
    x = RNG.standard_normal((2, 3, 5))
    np.testing.assert_allclose(arr(m(t64(x, device))), np_batch_norm(x, (2,)), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(arr(m(t64(x[0], device))), np_batch_norm(x[0], (1,)), rtol=1e-10, atol=1e-12)
    rms = nn.RMSNorm(5, eps=1e-6, device=device, dtype=torch.float64)
    assert repr(rms) == "RMSNorm((5,), eps=1e-06, elementwise_affine=True)"
    np.testing.assert_allclose(arr(rms(t64(x, device))), x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6),
                               rtol=1e-10)


# dropout ------------------------------------------------------------------------------------------


def test_dropout_train_and_eval(device):
    m = nn.Dropout(0.25)
    assert repr(m) == "Dropout(p=0.25, inplace=False)" and repr(nn.Dropout()) == "Dropout(p=0.5, inplace=False)"
    x = torch.ones(400, 50, device=device)
    out = arr(m(x))
    kept = out != 0
    np.testing.assert_allclose(out[kept], 1 / 0.75, rtol=1e-6)
    assert abs(1 - kept.mean() - 0.25) < 0.02
    m.eval()
    np.testing.assert_array_equal(arr(m(x)), arr(x))
    m.train()
    assert (arr(m(x)) == 0).any()


def test_dropout_errors_and_channel_dropout(device):
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got -0.1"):
        nn.Dropout2d(-0.1)
    m = nn.Dropout2d(0.5)
    out = arr(m(torch.ones(8, 16, 3, 3, device=device)))
    per_channel = out.reshape(8, 16, 9)
    assert ((per_channel == 0).all(-1) | (per_channel == 2).all(-1)).all()
    assert (per_channel == 0).any() and (per_channel == 2).any()
    x = torch.randn(2, 3, 4, 4, device=device)
    m.eval()
    np.testing.assert_array_equal(arr(m(x)), arr(x))


def test_dropout_gradient_uses_the_mask(device):
    x = torch.ones(50, 4, device=device, requires_grad=True)
    out = nn.Dropout(0.5)(x)
    out.sum().backward()
    np.testing.assert_array_equal(arr(x.grad), arr(out))


# embedding ---------------------------------------------------------------------------------------


def test_embedding_init_repr_and_padding(device):
    m = nn.Embedding(1000, 16, device=device)
    assert repr(m) == "Embedding(1000, 16)"
    w = arr(m.weight)
    assert abs(w.mean()) < 0.02 and abs(w.std() - 1) < 0.02  # normal_(0, 1)
    p = nn.Embedding(5, 3, padding_idx=-2, device=device)
    assert p.padding_idx == 3
    assert repr(p) == "Embedding(5, 3, padding_idx=3)"
    np.testing.assert_array_equal(arr(p.weight)[3], np.zeros(3))
    assert (arr(p.weight)[[0, 1, 2, 4]] != 0).all()
    assert repr(nn.Embedding(5, 3, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True, sparse=True)) == (
        "Embedding(5, 3, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True, sparse=True)"
    )
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(5, 3, padding_idx=5)


def test_embedding_bag_padding_idx_and_shared_table(device):
    bag = nn.EmbeddingBag(5, 3, padding_idx=-2, max_norm=1.0, mode="sum", device=device)
    assert bag.padding_idx == 3 and (arr(bag.weight)[3] == 0).all() and bag.weight.requires_grad
    assert repr(bag) == "EmbeddingBag(5, 3, max_norm=1.0, mode='sum', padding_idx=3)"
    with pytest.raises(AssertionError, match="^padding_idx must be within num_embeddings"):
        nn.EmbeddingBag(5, 3, padding_idx=5)
    with pytest.raises(AssertionError, match="Shape of weight does not match num_embeddings and embedding_dim"):
        nn.EmbeddingBag(5, 3, _weight=torch.zeros(5, 2))
    frozen = nn.Embedding(4, 2, _weight=torch.ones(4, 2), _freeze=True)
    assert not frozen.weight.requires_grad and arr(frozen.weight).tolist() == [[1.0, 1.0]] * 4


def test_zero_fan_in_bias_init():
    """Linear draws an empty-fan bias from U(0, 0); the conv layers leave it untouched, as PyTorch does."""
    with pytest.warns(UserWarning, match="zero-element"):
        linear = nn.Linear(0, 3)
    assert arr(linear.bias).tolist() == [0.0, 0.0, 0.0]
    with pytest.warns(UserWarning, match="zero-element"):
        conv = nn.Conv1d(0, 2, 3)
    conv.bias.data.fill_(7.0)
    with pytest.warns(UserWarning, match="zero-element"):
        conv.reset_parameters()
    assert arr(conv.bias).tolist() == [7.0, 7.0]


def test_embedding_forward_and_grad(device):
    m = nn.Embedding(6, 2, padding_idx=0, sparse=True, device=device)
    idx = torch.tensor([[1, 0, 3], [3, 5, 1]], device=device)
    out = m(idx)
    assert out.shape == (2, 3, 2)
    np.testing.assert_array_equal(arr(out), arr(m.weight)[arr(idx)])
    out.sum().backward()
    expected = np.zeros((6, 2))
    np.add.at(expected, arr(idx).ravel(), 1.0)
    expected[0] = 0  # padding_idx gets no gradient
    np.testing.assert_array_equal(arr(m.weight.grad.to_dense()), expected)  # sparse=True: a sparse COO gradient
    np.testing.assert_array_equal(arr(m(idx)), arr(F.embedding(idx, m.weight, padding_idx=0)))


def test_embedding_from_pretrained(device):
    table = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], device=device)
    m = nn.Embedding.from_pretrained(table)
    assert not m.weight.requires_grad and m.num_embeddings == 3 and m.embedding_dim == 2
    assert repr(m) == "Embedding(3, 2)"
    np.testing.assert_array_equal(arr(m(torch.tensor([2, 0], device=device))), [[5.0, 6.0], [1.0, 2.0]])
    trainable = nn.Embedding.from_pretrained(table, freeze=False, padding_idx=1)
    assert trainable.weight.requires_grad
    np.testing.assert_array_equal(arr(trainable.weight)[1], [3.0, 4.0])  # not zeroed, as in PyTorch
    with pytest.raises(AssertionError, match="Embeddings parameter is expected to be 2-dimensional"):
        nn.Embedding.from_pretrained(torch.zeros(3, device=device))


# flatten -----------------------------------------------------------------------------------------


def test_flatten_unflatten(device):
    x = torch.randn(2, 3, 4, 5, device=device)
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 2)(x).shape == (24, 5)
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"
    u = nn.Unflatten(1, (3, 4))
    assert u(torch.randn(2, 12, device=device)).shape == (2, 3, 4)
    assert nn.Unflatten(-2, [2, -1])(x).shape == (2, 3, 2, 2, 5)
    assert repr(u) == "Unflatten(dim=1, unflattened_size=(3, 4))"
    np.testing.assert_array_equal(arr(nn.Unflatten(1, (3, 20))(nn.Flatten()(x))), arr(x).reshape(2, 3, 20))
    with pytest.raises(TypeError, match="unflattened_size must be tuple of ints, but found element of type float"):
        nn.Unflatten(1, (2, 3.0))
    with pytest.raises(TypeError, match="unflattened_size must be a tuple of ints, but found type int"):
        nn.Unflatten(1, 6)


# activations -------------------------------------------------------------------------------------


ACTIVATION_CASES = [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.Tanh(), np.tanh),
    (nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    (nn.SiLU(), lambda x: x / (1 + np.exp(-x))),
    (nn.GELU(), lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))),
    (nn.GELU("tanh"), lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))),
    (nn.LeakyReLU(0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    (nn.ELU(0.5), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x))),
    (nn.Softplus(2.0), lambda x: np.logaddexp(0, 2 * x) / 2),
    (nn.Mish(), lambda x: x * np.tanh(np.logaddexp(0, x))),
    (nn.Hardtanh(-0.5, 1.5), lambda x: np.clip(x, -0.5, 1.5)),
    (nn.ReLU6(), lambda x: np.clip(x, 0, 6)),
    (nn.Softmax(dim=1), lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True)),
    (nn.LogSoftmax(dim=-1), lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))),
    (nn.Softmin(dim=0), lambda x: np.exp(-x) / np.exp(-x).sum(0, keepdims=True)),
    (nn.LogSigmoid(), lambda x: -np.logaddexp(0, -x)),
    (nn.Threshold(0.5, -1.0), lambda x: np.where(x > 0.5, x, -1.0)),
    (nn.Hardshrink(0.5), lambda x: np.where(np.abs(x) > 0.5, x, 0)),
    (nn.Softshrink(0.5), lambda x: np.sign(x) * np.maximum(np.abs(x) - 0.5, 0)),
    (nn.CELU(2.0), lambda x: np.where(x > 0, x, 2.0 * np.expm1(x / 2.0))),
    (nn.Softsign(), lambda x: x / (1 + np.abs(x))),
    (nn.Tanhshrink(), lambda x: x - np.tanh(x)),
    (nn.Hardsigmoid(), lambda x: np.clip(x / 6 + 0.5, 0, 1)),
    (nn.Hardswish(), lambda x: x * np.clip(x + 3, 0, 6) / 6),
    (nn.GLU(dim=1), lambda x: x[:, :2] / (1 + np.exp(-x[:, 2:]))),
]


@pytest.mark.parametrize("module,reference", ACTIVATION_CASES, ids=lambda v: repr(v) if isinstance(v, nn.Module)
                         else "")
def test_activation_values(device, module, reference):
    x = RNG.standard_normal((3, 4)) * 3
    np.testing.assert_allclose(arr(module(t64(x, device))), reference(x), rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("module,text", [
    (nn.ReLU(), "ReLU()"), (nn.ReLU(inplace=True), "ReLU(inplace=True)"),
    (nn.GELU(), "GELU(approximate='none')"), (nn.GELU(approximate="tanh"), "GELU(approximate='tanh')"),
    (nn.SiLU(), "SiLU()"), (nn.Tanh(), "Tanh()"), (nn.Sigmoid(), "Sigmoid()"),
    (nn.Softmax(dim=-1), "Softmax(dim=-1)"), (nn.LogSoftmax(dim=1), "LogSoftmax(dim=1)"),
    (nn.LeakyReLU(), "LeakyReLU(negative_slope=0.01)"),
    (nn.LeakyReLU(0.1, inplace=True), "LeakyReLU(negative_slope=0.1, inplace=True)"),
    (nn.ELU(), "ELU(alpha=1.0)"), (nn.Softplus(), "Softplus(beta=1.0, threshold=20.0)"), (nn.Mish(), "Mish()"),
    (nn.Hardtanh(), "Hardtanh(min_val=-1.0, max_val=1.0)"), (nn.ReLU6(), "ReLU6()"),
    (nn.ReLU6(inplace=True), "ReLU6(inplace=True)"), (nn.Hardshrink(), "Hardshrink(0.5)"),
    (nn.Threshold(0.1, 20), "Threshold(threshold=0.1, value=20)"), (nn.PReLU(), "PReLU(num_parameters=1)"),
    (nn.GLU(), "GLU(dim=-1)"), (nn.SELU(), "SELU()"),
])
def test_activation_reprs(module, text):
    assert repr(module) == text


def test_activation_module_options(device):
    with pytest.raises(AssertionError):
        nn.Hardtanh(1.0, -1.0)
    with pytest.warns(FutureWarning, match="min_value"):
        assert nn.Hardtanh(min_value=-2.0).min_val == -2.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.Softmax(dim=0)(torch.randn(3, device=device))  # explicit dim: no deprecation warning
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        nn.Softmax()(torch.randn(2, 3, device=device))
    p = nn.PReLU(3, init=0.1, device=device)
    assert p.weight.shape == (3,) and np.allclose(arr(p.weight), 0.1)
    x = torch.tensor([[-1.0, 2.0, -3.0]], device=device)
    np.testing.assert_allclose(arr(p(x)), [[-0.1, 2.0, -0.3]], rtol=1e-6)
    assert list(nn.ReLU().parameters()) == [] and list(p.state_dict()) == ["weight"]


@given(x=tensors(shape=(2, 3), requires_grad=True))
@settings(max_examples=5)
def test_activation_gradcheck(x):
    for module in (nn.GELU("tanh"), nn.Softplus(beta=2.0), nn.LogSoftmax(dim=0), nn.SiLU()):
        assert gradcheck(module, (x,)), module
    assert gradgradcheck(nn.GELU(), (x,))
    away_from_kink = t64([[-1.5, -0.2, 0.3], [2.0, -0.7, 0.1]], requires_grad=True)
    assert gradcheck(nn.ELU(0.7), (away_from_kink,))
    prelu = nn.PReLU(3).double()
    assert gradcheck(lambda x, w: prelu(x), (away_from_kink, prelu.weight))


# modules together ---------------------------------------------------------------------------------


@given(batch=st.integers(2, 4))
@settings(max_examples=3)
def test_small_cnn_trains_one_step(batch):
    torch.manual_seed(0)
    layers = [nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
              nn.Dropout(0.1), nn.Linear(16, 3)]
    x, y = torch.randn(batch, 1, 4, 4), torch.randint(0, 3, (batch,))
    h = x
    for layer in layers:
        h = layer(h)
    loss = F.cross_entropy(h, y)
    loss.backward()
    for layer in layers:
        for name, p in layer.named_parameters():
            assert p.grad is not None and p.grad.shape == p.shape, (layer, name)


# non-Tensor inputs: PyTorch's TypeError naming the function and the argument, at the functional entry point ---


@pytest.mark.parametrize("call, message", [
    (lambda: nn.Linear(3, 2)(np.ones((2, 3), dtype=np.float32)),
     r"linear\(\): argument 'input' \(position 1\) must be Tensor, not numpy.ndarray"),
    (lambda: nn.Conv2d(1, 1, 1)(np.ones((1, 1, 2, 2), dtype=np.float32)),
     r"conv2d\(\): argument 'input' \(position 1\) must be Tensor, not numpy.ndarray"),
    (lambda: nn.ReLU()([1.0, -1.0]), r"relu\(\): argument 'input' \(position 1\) must be Tensor, not list"),
    (lambda: nn.MSELoss()(torch.ones(2), np.ones(2)),
     r"mse_loss\(\): argument 'target' \(position 2\) must be Tensor, not numpy.ndarray"),
    (lambda: F.softmax(np.ones(3), 0), r"softmax\(\): argument 'input' \(position 1\) must be Tensor"),
    (lambda: F.linear(torch.ones(2, 3), torch.ones(2, 3), bias=[1.0, 2.0]),
     r"linear\(\): argument 'bias' \(position 3\) must be Tensor, not list"),
    (lambda: F.cross_entropy(torch.ones(2, 3), target=[0, 1]),
     r"cross_entropy\(\): argument 'target' \(position 2\) must be Tensor, not list"),
    (lambda: torch.relu([1.0]), r"relu\(\): argument 'input' \(position 1\) must be Tensor, not list"),
    (lambda: torch.sum(np.ones(2)), r"sum\(\): argument 'input' \(position 1\) must be Tensor, not numpy.ndarray"),
    (lambda: torch.matmul(np.ones((2, 2)), torch.ones(2, 2)), r"matmul\(\): argument 'input' \(position 1\)"),
    (lambda: torch.add(np.ones(2), torch.ones(2)), r"add\(\): argument 'input' \(position 1\) must be Tensor"),
    (lambda: torch.less_equal(1.0, torch.ones(2)), r"less_equal\(\): argument 'input' \(position 1\)"),
    (lambda: torch.exp(2.0), r"exp\(\): argument 'input' \(position 1\) must be Tensor, not float"),
])
def test_non_tensor_inputs_raise_type_error(call, message):
    with pytest.raises(TypeError, match=message):
        call()


def test_optional_tensor_arguments_and_numbers_where_pytorch_takes_them():
    x = torch.ones(2, 3)
    assert F.linear(x, torch.ones(4, 3), None).shape == (2, 4)  # Tensor | None
    assert F.batch_norm(x, None, None, training=True).shape == (2, 3)
    assert torch.add(2, x).tolist() == [[3.0] * 3] * 2 and torch.pow(2, x).tolist() == [[2.0] * 3] * 2
    assert F.relu.__name__ == "relu" and "max(0, x)" in F.relu.__doc__  # the checked form keeps name and docs


def test_warnings_point_at_the_callers_line():
    """The checked entry points add a frame; warnings still name the user's line, called directly, through a
    module or through a Tensor method."""
    x = torch.ones(2, 3)
    calls = [lambda: F.softmax(x), lambda: nn.Softmax()(x), lambda: F.kl_div(x, x),
             lambda: torch.var(torch.ones(1)), lambda: torch.ones(1).var(), lambda: F.mse_loss(x, torch.ones(3))]
    for call in calls:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        assert len(caught) == 1 and caught[0].filename == __file__, (caught[0].filename, str(caught[0].message))


def test_tensor_inputs_reads_string_and_evaluated_annotations():
    from minitorch.ops.arguments import tensor_inputs

    def evaluated(input: torch.Tensor, weight: torch.Tensor | None = None, *, other: torch.Tensor | None = None):
        return input

    def strings(input: "Tensor", weight: "Tensor | None" = None, *, other: "Tensor"):  # noqa: F821
        return input

    x = torch.ones(1)
    for function in (tensor_inputs(evaluated), tensor_inputs(strings, "alias")):
        with pytest.raises(TypeError, match=r"\(\): argument 'input' \(position 1\) must be Tensor, not list"):
            function([1.0], other=x)
        with pytest.raises(TypeError, match=r"argument 'weight' \(position 2\) must be Tensor, not int"):
            function(x, 3, other=x)
        assert function(x, None, other=x) is x
    with pytest.raises(TypeError, match=r"alias\(\): argument 'other' must be Tensor, not float"):
        tensor_inputs(strings, "alias")(x, other=1.0)
    plain = tensor_inputs(lambda a, b=1: a)  # nothing to check: the function itself
    assert plain(5) == 5 and plain.__name__ == "<lambda>"
