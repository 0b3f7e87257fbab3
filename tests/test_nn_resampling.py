"""F.interpolate / Upsample, padding layers, pixel and channel shuffle, Fold/Unfold and distance modules:
values against hand-worked numpy, gradients by gradcheck (float64, including non-contiguous inputs),
PyTorch's errors and reprs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitorch as torch
import minitorch.nn as nn
import minitorch.nn.functional as F
from minitorch.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(3)


def rand(*shape, requires_grad=True):
    return torch.tensor(RNG.standard_normal(shape), dtype=torch.float64, requires_grad=requires_grad)


# interpolate ---------------------------------------------------------------------------------------------


def test_interpolate_nearest_repeats_pixels():
    x = torch.arange(4.0).reshape(1, 1, 2, 2)
    out = F.interpolate(x, scale_factor=2)
    expected = np.repeat(np.repeat(np.arange(4.0).reshape(2, 2), 2, 0), 2, 1)
    np.testing.assert_array_equal(out.numpy()[0, 0], expected)
    # legacy nearest floors i * in / out; nearest-exact rounds to the closest centre
    x = torch.arange(3.0).reshape(1, 1, 3)
    assert F.interpolate(x, size=5).reshape(-1).tolist() == [0, 0, 1, 1, 2]
    assert F.interpolate(x, size=5, mode="nearest-exact").reshape(-1).tolist() == [0, 0, 1, 2, 2]


def test_interpolate_linear_values():
    x = torch.tensor([[[0.0, 1.0, 3.0]]])
    # align_corners=False: source = (i + 0.5) * 3/6 - 0.5, clamped at 0
    np.testing.assert_allclose(F.interpolate(x, size=6, mode="linear").reshape(-1).numpy(),
                               [0, 0.25, 0.75, 1.5, 2.5, 3], rtol=1e-6)
    # align_corners=True: the end points meet
    np.testing.assert_allclose(F.interpolate(x, size=5, mode="linear", align_corners=True).reshape(-1).numpy(),
                               [0, 0.5, 1, 2, 3], rtol=1e-6)


def test_interpolate_bilinear_is_separable_linear():
    x = rand(2, 3, 4, 5, requires_grad=False)
    both = F.interpolate(x, size=(7, 3), mode="bilinear")
    rows = F.interpolate(x.permute(0, 1, 3, 2).reshape(2, 15, 4), size=7, mode="linear")
    rows = rows.reshape(2, 3, 5, 7).permute(0, 1, 3, 2)
    cols = F.interpolate(rows.reshape(2, 21, 5), size=3, mode="linear").reshape(2, 3, 7, 3)
    np.testing.assert_allclose(both.numpy(), cols.numpy(), rtol=1e-12)


def test_interpolate_bicubic_keeps_constants_and_linear_ramps():
    x = torch.full((1, 1, 4, 4), 2.5, dtype=torch.float64)
    np.testing.assert_allclose(F.interpolate(x, scale_factor=2, mode="bicubic").numpy(), 2.5, rtol=1e-12)
    ramp = torch.arange(6.0, dtype=torch.float64).reshape(1, 1, 1, 6).expand(1, 1, 3, 6)
    out = F.interpolate(ramp, size=(3, 11), mode="bicubic", align_corners=True)
    # away from the edges (where the taps are clamped) a cubic reproduces a ramp exactly
    np.testing.assert_allclose(out.numpy()[0, 0, 1, 2:9], np.linspace(0, 5, 11)[2:9], atol=1e-12)


def test_interpolate_area_is_adaptive_average():
    x = rand(1, 2, 6, 4, requires_grad=False)
    np.testing.assert_allclose(F.interpolate(x, size=(3, 2), mode="area").numpy(),
                               x.numpy().reshape(1, 2, 3, 2, 2, 2).mean((3, 5)), rtol=1e-12)


@pytest.mark.parametrize(("mode", "dims", "kwargs"), [
    ("nearest", 1, {"size": 5}), ("nearest", 2, {"scale_factor": 1.5}), ("nearest-exact", 3, {"size": (3, 2, 4)}),
    ("linear", 1, {"size": 7}), ("linear", 1, {"scale_factor": 0.6, "align_corners": True}),
    ("bilinear", 2, {"size": (5, 2)}), ("bicubic", 2, {"size": (4, 5), "align_corners": True}),
    ("bicubic", 2, {"scale_factor": 1.7}), ("trilinear", 3, {"size": (2, 4, 3)}), ("area", 2, {"size": (2, 2)}),
])
def test_interpolate_gradcheck(mode, dims, kwargs):
    x = rand(2, 3, *([3] * dims))
    assert gradcheck(lambda t: F.interpolate(t, mode=mode, **kwargs), (x,))
    noncontiguous = rand(3, 2, *([3] * dims)).transpose(0, 1)
    assert gradcheck(lambda t: F.interpolate(t, mode=mode, **kwargs), (noncontiguous,))
    if mode in ("bilinear", "bicubic"):
        assert gradgradcheck(lambda t: F.interpolate(t, mode=mode, **kwargs), (x,))


def test_interpolate_errors():
    x = torch.zeros(1, 1, 4, 4)
    with pytest.raises(ValueError, match="only one of size or scale_factor should be defined"):
        F.interpolate(x, size=2, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor should be defined"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="align_corners option can only be set with the interpolating modes"):
        F.interpolate(x, size=2, align_corners=True)
    with pytest.raises(ValueError, match="Input and output must have the same number of spatial dimensions"):
        F.interpolate(x, size=(2, 2, 2))
    with pytest.raises(NotImplementedError, match="Got 4D input, but linear mode needs 3D input"):
        F.interpolate(x, size=2, mode="linear")
    with pytest.raises(NotImplementedError, match=r"Only 3D, 4D and 5D input Tensors supported \(got 2D\)"):
        F.interpolate(torch.zeros(2, 2), size=2)
    with pytest.raises(ValueError, match="recompute_scale_factor is not meaningful with an explicit size"):
        F.interpolate(x, size=2, recompute_scale_factor=True)
    with pytest.raises(RuntimeError, match="upsample_bilinear2d_out_frame\" not implemented for 'Long'"):
        F.interpolate(torch.zeros(1, 1, 2, 2, dtype=torch.int64), size=3, mode="bilinear")
    with pytest.raises(TypeError, match="expected size to be one of int or Tuple"):
        F.interpolate(x, size=(2.0, 2))
    assert F.interpolate(torch.zeros(1, 1, 2, 2, dtype=torch.int64), size=3).dtype == torch.int64


def test_upsample_modules():
    up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
    assert repr(up) == "Upsample(scale_factor=2.0, mode='bilinear')"
    assert repr(nn.Upsample(size=(3, 4))) == "Upsample(size=(3, 4), mode='nearest')"
    x = rand(1, 2, 3, 3, requires_grad=False)
    np.testing.assert_allclose(up(x).numpy(), F.interpolate(x, scale_factor=2.0, mode="bilinear",
                                                            align_corners=True).numpy())
    np.testing.assert_allclose(nn.UpsamplingBilinear2d(scale_factor=2)(x).numpy(), up(x).numpy())
    assert nn.UpsamplingNearest2d(size=5)(x).shape == (1, 2, 5, 5)
    with pytest.warns(UserWarning, match="nn.functional.upsample is deprecated"):
        assert F.upsample(x, size=4).shape == (1, 2, 4, 4)


# padding layers ------------------------------------------------------------------------------------------


def test_padding_modules_values_and_repr():
    x = torch.arange(6.0).reshape(1, 2, 3)
    assert nn.ZeroPad1d(2)(x).shape == (1, 2, 7)
    assert nn.ConstantPad1d((1, 0), 9.0)(x)[0, 0].tolist() == [9, 0, 1, 2]
    assert nn.ReflectionPad1d(2)(x)[0, 0].tolist() == [2, 1, 0, 1, 2, 1, 0]
    assert nn.ReplicationPad1d((1, 2))(x)[0, 0].tolist() == [0, 0, 1, 2, 2, 2]
    assert nn.CircularPad1d(1)(x)[0, 0].tolist() == [2, 0, 1, 2, 0]
    assert nn.ZeroPad2d((1, 0, 0, 2))(x).shape == (1, 4, 4)
    assert nn.ReplicationPad3d(1)(torch.zeros(1, 1, 2, 2, 2)).shape == (1, 1, 4, 4, 4)
    assert repr(nn.ZeroPad2d(1)) == "ZeroPad2d((1, 1, 1, 1))"
    assert repr(nn.ConstantPad3d(1, 3.5)) == "ConstantPad3d(padding=(1, 1, 1, 1, 1, 1), value=3.5)"
    assert repr(nn.ReflectionPad2d((1, 2, 3, 4))) == "ReflectionPad2d((1, 2, 3, 4))"
    assert nn.ZeroPad2d(-1)(torch.ones(1, 3, 3)).shape == (1, 1, 1)  # negative padding crops
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        nn.CircularPad2d(1)(torch.zeros(3, 3))
    with pytest.raises(RuntimeError, match="Padding size should be less than the corresponding input dimension"):
        nn.ReflectionPad1d(3)(x)


@pytest.mark.parametrize("layer", [nn.ZeroPad2d((1, 2, 0, 1)), nn.ConstantPad1d(2, -1.0), nn.ReflectionPad2d(1),
                                   nn.ReplicationPad1d((2, 1)), nn.CircularPad2d((1, 0, 2, 1))])
def test_padding_modules_gradcheck(layer):
    assert gradcheck(layer, (rand(2, 3, 4),))


# pixel / channel shuffle ---------------------------------------------------------------------------------


def test_pixel_shuffle_round_trip_and_layout():
    x = torch.arange(16.0).reshape(1, 4, 2, 2)
    out = F.pixel_shuffle(x, 2)
    assert out.shape == (1, 1, 4, 4)
    # channel c*r*r + i*r + j lands at (h*r + i, w*r + j)
    assert out[0, 0, 0].tolist() == [0, 4, 1, 5]
    assert F.pixel_unshuffle(out, 2).tolist() == x.tolist()
    batched = rand(2, 3, 8, 2, 3, requires_grad=False)
    assert F.pixel_shuffle(batched, 2).shape == (2, 3, 2, 4, 6)
    assert repr(nn.PixelShuffle(3)) == "PixelShuffle(upscale_factor=3)"
    assert repr(nn.PixelUnshuffle(2)) == "PixelUnshuffle(downscale_factor=2)"


def test_channel_shuffle_interleaves_groups():
    x = torch.arange(6.0).reshape(1, 6, 1)
    assert F.channel_shuffle(x, 2).reshape(-1).tolist() == [0, 3, 1, 4, 2, 5]
    assert nn.ChannelShuffle(3)(x).reshape(-1).tolist() == [0, 2, 4, 1, 3, 5]
    assert repr(nn.ChannelShuffle(2)) == "ChannelShuffle(groups=2)"


def test_shuffle_gradcheck_and_errors():
    assert gradcheck(lambda t: F.pixel_shuffle(t, 2), (rand(2, 8, 2, 3),))
    assert gradcheck(lambda t: F.pixel_unshuffle(t, 2), (rand(2, 4, 2).transpose(1, 2),))  # non-contiguous
    assert gradcheck(lambda t: F.channel_shuffle(t, 2), (rand(2, 4, 3),))
    with pytest.raises(RuntimeError, match="pixel_shuffle expects input to have at least 3 dimensions"):
        F.pixel_shuffle(torch.zeros(2, 3), 2)
    with pytest.raises(RuntimeError, match=r"input.size\(-3\)=5 is not divisible by 4"):
        F.pixel_shuffle(torch.zeros(1, 5, 2, 2), 2)
    with pytest.raises(RuntimeError, match=r"pixel_unshuffle expects height to be divisible by downscale_factor"):
        F.pixel_unshuffle(torch.zeros(1, 1, 3, 4), 2)
    with pytest.raises(RuntimeError, match="pixel_shuffle expects a positive upscale_factor, but got 0"):
        F.pixel_shuffle(torch.zeros(1, 4, 2, 2), 0)
    with pytest.raises(TypeError, match="argument 'upscale_factor' \\(position 2\\) must be int, not float"):
        F.pixel_shuffle(torch.zeros(1, 4, 2, 2), 2.0)
    with pytest.raises(RuntimeError, match="Number of channels must be divisible by groups. Got 5 channels and 2"):
        F.channel_shuffle(torch.zeros(1, 5, 2), 2)


# fold / distance -----------------------------------------------------------------------------------------


def test_fold_unfold_modules():
    unfold = nn.Unfold(kernel_size=2, stride=1)
    fold = nn.Fold(output_size=(3, 3), kernel_size=2)
    assert repr(unfold) == "Unfold(kernel_size=2, dilation=1, padding=0, stride=1)"
    assert repr(fold) == "Fold(output_size=(3, 3), kernel_size=2, dilation=1, padding=0, stride=1)"
    x = rand(1, 2, 3, 3)
    cols = unfold(x)
    assert cols.shape == (1, 8, 4)
    # fold(unfold(x)) counts each pixel once per block that covers it
    counts = fold(unfold(torch.ones(1, 2, 3, 3, dtype=torch.float64)))
    np.testing.assert_allclose(fold(cols).detach().numpy(), (x * counts).detach().numpy(), rtol=1e-12)
    assert gradcheck(lambda t: fold(unfold(t)), (x,))


def test_distance_modules():
    a, b = rand(4, 3), rand(4, 3)
    np.testing.assert_allclose(nn.PairwiseDistance()(a, b).detach().numpy(),
                               np.linalg.norm(a.detach().numpy() - b.detach().numpy() + 1e-6, axis=1), rtol=1e-12)
    cos = nn.CosineSimilarity(dim=1)(a, b).detach().numpy()
    an, bn = a.detach().numpy(), b.detach().numpy()
    np.testing.assert_allclose(cos, (an * bn).sum(1) / np.linalg.norm(an, axis=1) / np.linalg.norm(bn, axis=1))
    assert repr(nn.PairwiseDistance()) == "PairwiseDistance()"
    assert nn.PairwiseDistance(p=1, keepdim=True)(a, b).shape == (4, 1)
    assert gradcheck(nn.CosineSimilarity(dim=0), (a, b))


def test_pad_sequence():
    from minitorch.nn.utils.rnn import pad_sequence, unpad_sequence

    a, b = rand(2, 3), rand(4, 3)
    out = pad_sequence([a, b])
    assert out.shape == (4, 2, 3)
    assert out[2:, 0].abs().sum().item() == 0
    left = pad_sequence([a, b], batch_first=True, padding_value=-1.0, padding_side="left")
    assert left.shape == (2, 4, 3) and left[0, :2].tolist() == [[-1.0] * 3] * 2
    back = unpad_sequence(out, torch.tensor([2, 4]))
    assert [t.shape for t in back] == [(2, 3), (4, 3)]
    assert gradcheck(lambda x, y: pad_sequence([x, y], batch_first=True), (a, b))
    with pytest.raises(RuntimeError, match="received an empty list of sequences"):
        pad_sequence([])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pad_sequence(torch.ones(2, 3)).shape == (3, 2)


# max unpooling -------------------------------------------------------------------------------------------


def test_max_unpool_puts_maxima_back():
    x = rand(2, 3, 4, 4, requires_grad=False)
    pooled, indices = F.max_pool2d(x, 2, return_indices=True)
    restored = nn.MaxUnpool2d(2)(pooled, indices)
    assert restored.shape == (2, 3, 4, 4)
    xs, rs = x.numpy(), restored.numpy()
    kept = rs != 0
    np.testing.assert_array_equal(rs[kept], xs[kept])
    assert kept.reshape(2, 3, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(2, 3, 2, 2, 4).sum(-1).max() == 1
    assert F.max_unpool2d(pooled, indices, 2, output_size=(5, 5)).shape == (2, 3, 5, 5)
    assert repr(nn.MaxUnpool1d(3, stride=2, padding=1)) == "MaxUnpool1d(kernel_size=(3,), stride=(2,), padding=(1,))"
    values = rand(2, 3, 2, 2)
    assert gradcheck(lambda v: F.max_unpool2d(v, indices, 2), (values,))


def test_max_unpool_errors():
    pooled, indices = F.max_pool2d(torch.arange(16.0).reshape(1, 1, 4, 4), 2, return_indices=True)
    with pytest.raises(ValueError, match=r"invalid output_size \"\(7, 7\)\" \(dim 0 must be between 2 and 6\)"):
        F.max_unpool2d(pooled, indices, 2, output_size=(7, 7))
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: 1[01][0-9] \(output volumes are of size 4x4\)"):
        F.max_unpool2d(pooled, indices + 100, 2)
    with pytest.raises(RuntimeError, match="elements in indices should be type int64 but got: Float"):
        F.max_unpool2d(pooled, indices.float(), 2)


def test_pdist():
    x = rand(4, 3)
    out = F.pdist(x)
    xs = x.detach().numpy()
    expected = [np.linalg.norm(xs[i] - xs[j]) for i in range(4) for j in range(i + 1, 4)]
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12)
    assert gradcheck(lambda t: F.pdist(t, 3), (x,))
    assert F.pdist(rand(1, 3)).shape == (0,)
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 1D"):
        F.pdist(rand(4))
    with pytest.raises(RuntimeError, match="pdist only supports non-negative p values"):
        F.pdist(x, p=-1)


def test_interpolate_keeps_non_finite_values_local():
    x = torch.zeros(1, 1, 4, 4, dtype=torch.float64)
    x[0, 0, 0, 0] = float("inf")
    out = F.interpolate(x, size=(8, 8), mode="bilinear").numpy()[0, 0]
    assert np.isinf(out[:2, :2]).all() and np.isfinite(out[3:, :]).all() and np.isfinite(out[:, 3:]).all()
    ramp = torch.arange(16.0, dtype=torch.float64).reshape(1, 1, 4, 4)
    ramp[0, 0, 3, 3] = float("nan")
    with_nan = F.interpolate(ramp, size=(6, 6), mode="bicubic", align_corners=True).numpy()[0, 0]
    clean = F.interpolate(torch.arange(16.0, dtype=torch.float64).reshape(1, 1, 4, 4), size=(6, 6), mode="bicubic",
                          align_corners=True).numpy()[0, 0]
    np.testing.assert_allclose(with_nan[:2, :2], clean[:2, :2], rtol=1e-12)  # far from the nan: unaffected


def test_lp_pool3d_and_adaptive_max_pool3d():
    x = rand(1, 2, 4, 4, 4)
    out = nn.LPPool3d(2, 2)(x)
    windows = x.detach().numpy().reshape(1, 2, 2, 2, 2, 2, 2, 2).transpose(0, 1, 2, 4, 6, 3, 5, 7)
    np.testing.assert_allclose(out.detach().numpy(), np.sqrt((windows**2).sum((-3, -2, -1))), rtol=1e-12)
    np.testing.assert_allclose(F.lp_pool3d(x, float("inf"), 2).detach().numpy(), np.abs(windows).max((-3, -2, -1)))
    positive = (x.detach().abs() + 0.1).requires_grad_()  # an odd power's negative average has no real root
    assert gradcheck(lambda t: F.lp_pool3d(t, 3, 2, stride=1), (positive,))
    pooled = nn.AdaptiveMaxPool3d(2)(x)
    np.testing.assert_allclose(pooled.detach().numpy(), windows.max((-3, -2, -1)))
    assert gradcheck(nn.AdaptiveMaxPool3d((1, 2, 3)), (x,))
