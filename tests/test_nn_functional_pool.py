"""F.max_pool*, F.avg_pool*, adaptive pools, lp_pool and F.pad: values against direct numpy loops,
gradients by gradcheck/gradgradcheck in float64 (non-contiguous inputs too), and PyTorch's errors."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch as torch
import minitorch.nn.functional as F
from minitorch.autograd import gradcheck, gradgradcheck
from minitorch.testing.strategies import tensors

# direct loop references ---------------------------------------------------------------------------


def out_size(n, k, s, p, d, ceil_mode):
    span = n + 2 * p - d * (k - 1) - 1
    o = (span + (s - 1 if ceil_mode else 0)) // s + 1
    return o - 1 if ceil_mode and (o - 1) * s >= n + p else o


def ref_max_pool2d(x, k, s, p, d, ceil_mode):
    """Values and flat indices; the first maximum in row-major window order wins, padding never does."""
    n, c, h, w = x.shape
    oh, ow = out_size(h, k[0], s[0], p[0], d[0], ceil_mode), out_size(w, k[1], s[1], p[1], d[1], ceil_mode)
    values, indices = np.zeros((n, c, oh, ow)), np.zeros((n, c, oh, ow), dtype=np.int64)
    for b, ch, i, j in itertools.product(range(n), range(c), range(oh), range(ow)):
        best, where = -np.inf, -1
        for a, e in itertools.product(range(k[0]), range(k[1])):
            r, q = i * s[0] - p[0] + a * d[0], j * s[1] - p[1] + e * d[1]
            if 0 <= r < h and 0 <= q < w and (x[b, ch, r, q] > best or where < 0):
                best, where = x[b, ch, r, q], r * w + q
        values[b, ch, i, j], indices[b, ch, i, j] = best, where
    return values, indices


def ref_avg_pool2d(x, k, s, p, ceil_mode, count_include_pad, divisor_override=None):
    n, c, h, w = x.shape
    oh, ow = out_size(h, k[0], s[0], p[0], 1, ceil_mode), out_size(w, k[1], s[1], p[1], 1, ceil_mode)
    y = np.zeros((n, c, oh, ow))
    for i, j in itertools.product(range(oh), range(ow)):
        h0, w0 = i * s[0] - p[0], j * s[1] - p[1]
        h1, w1 = min(h0 + k[0], h + p[0]), min(w0 + k[1], w + p[1])
        pool = (h1 - h0) * (w1 - w0)
        h0, w0, h1, w1 = max(h0, 0), max(w0, 0), min(h1, h), min(w1, w)
        total = x[:, :, h0:h1, w0:w1].sum(axis=(2, 3))
        divisor = divisor_override or (pool if count_include_pad else (h1 - h0) * (w1 - w0))
        y[:, :, i, j] = total / divisor
    return y


def ref_adaptive(x, out, reduce):
    spatial = x.shape[2:]
    y = np.zeros(x.shape[:2] + tuple(out))
    for pos in itertools.product(*(range(o) for o in out)):
        region = tuple(
            slice(math.floor(i * n / o), math.ceil((i + 1) * n / o)) for i, n, o in zip(pos, spatial, out)
        )
        y[(Ellipsis, *pos)] = reduce(x[(Ellipsis, *region)], axis=tuple(range(2, x.ndim)))
    return y


def t(array, device, requires_grad=False):
    return torch.tensor(array, dtype=torch.float64, device=device, requires_grad=requires_grad)


@st.composite
def distinct_tensors(draw, shape):
    """Well-separated distinct values (no ties, so max pooling is differentiable) in a drawn layout."""
    values = (np.array(draw(st.permutations(range(math.prod(shape))))) * 0.37 - 2.0).reshape(shape)
    layout = draw(st.sampled_from(["contiguous", "transposed", "strided"]))
    if layout == "transposed":
        x = torch.tensor(np.ascontiguousarray(values.swapaxes(-1, -2)), dtype=torch.float64).transpose(-1, -2)
    elif layout == "strided":
        doubled = np.repeat(values, 2, axis=-1)
        x = torch.tensor(doubled, dtype=torch.float64)[..., ::2]
    else:
        x = torch.tensor(values, dtype=torch.float64)
    return x.requires_grad_()


# max pooling ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "k, s, p, d, ceil_mode",
    [((2, 2), (2, 2), (0, 0), (1, 1), False), ((3, 3), (2, 2), (1, 1), (1, 1), True),
     ((2, 3), (1, 2), (1, 1), (2, 1), False), ((3, 2), (2, 3), (1, 0), (1, 2), True)],
)
def test_max_pool2d_matches_loops(device, k, s, p, d, ceil_mode):
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 6))
    values, indices = F.max_pool2d(t(x, device), k, s, p, d, ceil_mode, return_indices=True)
    ref_values, ref_indices = ref_max_pool2d(x, k, s, p, d, ceil_mode)
    np.testing.assert_array_equal(values.cpu().numpy(), ref_values)
    np.testing.assert_array_equal(indices.cpu().numpy(), ref_indices)
    assert indices.dtype == torch.int64


def test_max_pool_ties_pick_the_first_and_overlaps_accumulate(device):
    x = t([[[1.0, 5.0, 5.0, 0.0, 2.0]]], device, requires_grad=True)
    values, indices = F.max_pool1d(x, 2, stride=1, return_indices=True)
    assert values.tolist() == [[[5.0, 5.0, 5.0, 2.0]]]
    assert indices.tolist() == [[[1, 1, 2, 4]]]
    values.sum().backward()
    assert x.grad.tolist() == [[[0.0, 2.0, 1.0, 0.0, 1.0]]]


def test_max_pool_defaults_and_unbatched(device):
    x = np.random.default_rng(1).standard_normal((3, 6, 4))
    y = F.max_pool2d(t(x, device), 2)
    assert y.shape == (3, 3, 2)
    np.testing.assert_array_equal(y.cpu().numpy(), x.reshape(3, 3, 2, 2, 2).max(axis=(2, 4)))
    y1 = F.max_pool1d(t(x, device), 3, stride=None)
    np.testing.assert_array_equal(y1.cpu().numpy(), x[..., :3].max(axis=-1, keepdims=True))
    y3 = F.max_pool3d(t(x[None], device), 2)
    assert y3.shape == (1, 1, 3, 2)


def test_max_pool_windows_of_minus_inf_point_inside_the_input(device):
    x = t([[[-math.inf, -math.inf, 3.0, -math.inf]]], device, requires_grad=True)
    values, indices = F.max_pool1d(x, 3, stride=2, padding=1, ceil_mode=True, return_indices=True)
    assert values.tolist() == [[[-math.inf, 3.0, -math.inf]]]
    assert indices.tolist() == [[[0, 2, 3]]]
    values.sum().backward()
    assert x.grad.tolist() == [[[1.0, 0.0, 1.0, 1.0]]]


def test_max_pool_integer_input(device):
    x = torch.tensor([[[1, 5, 2, 7]]], device=device)
    assert F.max_pool1d(x, 2, padding=1).tolist() == [[[1, 5, 7]]]


@given(data=st.data())
def test_max_pool2d_gradcheck(data):
    k = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 2)))
    s = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 3)))
    p = tuple(data.draw(st.integers(0, ki // 2)) for ki in k)
    d = (data.draw(st.integers(1, 2)), 1)
    x = data.draw(distinct_tensors((data.draw(st.integers(1, 2)), 2, data.draw(st.integers(5, 6)), 4)))
    ceil_mode = data.draw(st.booleans())

    def fn(a):
        return F.max_pool2d(a, k, s, p, d, ceil_mode)

    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


# average pooling ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "k, s, p, ceil_mode, count_include_pad, divisor_override",
    [((2, 2), None, (0, 0), False, True, None), ((3, 3), (2, 2), (1, 1), True, True, None),
     ((3, 2), (2, 1), (1, 1), True, False, None), ((2, 3), (1, 2), (1, 0), False, True, 5)],
)
def test_avg_pool2d_matches_loops(device, k, s, p, ceil_mode, count_include_pad, divisor_override):
    x = np.random.default_rng(2).standard_normal((2, 3, 7, 6))
    got = F.avg_pool2d(t(x, device), k, s, p, ceil_mode, count_include_pad, divisor_override)
    expected = ref_avg_pool2d(x, k, s or k, p, ceil_mode, count_include_pad, divisor_override)
    np.testing.assert_allclose(got.cpu().numpy(), expected, atol=1e-12)


def test_avg_pool1d_and_float32(device):
    x = np.random.default_rng(3).standard_normal((2, 3, 7)).astype(np.float32)
    got = F.avg_pool1d(torch.tensor(x, device=device), 3, 2, 1, count_include_pad=False)
    assert got.dtype == torch.float32
    expected = ref_avg_pool2d(x[:, :, None, :].astype(np.float64), (1, 3), (1, 2), (0, 1), False, False)[:, :, 0]
    np.testing.assert_allclose(got.cpu().numpy(), expected, rtol=1e-6)


@given(data=st.data())
def test_avg_pool2d_gradcheck(data):
    k = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 2)))
    s = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 3)))
    p = tuple(data.draw(st.integers(0, ki // 2)) for ki in k)
    x = data.draw(tensors(shape=(data.draw(st.integers(1, 2)), 2, 4, 4), requires_grad=True))
    options = dict(ceil_mode=data.draw(st.booleans()), count_include_pad=data.draw(st.booleans()))

    def fn(a):
        return F.avg_pool2d(a, k, s, p, **options)

    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


# adaptive and lp pooling ----------------------------------------------------------------------------


@pytest.mark.parametrize("output_size", [1, 3, (2, None), (4, 5), (5, 2)])
def test_adaptive_pool2d_matches_loops(device, output_size):
    x = np.random.default_rng(4).standard_normal((2, 3, 5, 6))
    out = (output_size, output_size) if isinstance(output_size, int) else output_size
    out = tuple(n if o is None else o for n, o in zip(x.shape[2:], out))
    avg = F.adaptive_avg_pool2d(t(x, device), output_size)
    np.testing.assert_allclose(avg.cpu().numpy(), ref_adaptive(x, out, np.mean), atol=1e-12)
    mx = F.adaptive_max_pool2d(t(x, device), output_size)
    np.testing.assert_array_equal(mx.cpu().numpy(), ref_adaptive(x, out, np.max))


def test_adaptive_pool1d_and_unbatched(device):
    x = np.random.default_rng(5).standard_normal((3, 7))
    got = F.adaptive_avg_pool1d(t(x, device), 3)
    np.testing.assert_allclose(got.cpu().numpy(), ref_adaptive(x[None], (3,), np.mean)[0], atol=1e-12)
    values, indices = F.adaptive_max_pool1d(t(x, device), 4, return_indices=True)
    np.testing.assert_array_equal(values.cpu().numpy(), ref_adaptive(x[None], (4,), np.max)[0])
    np.testing.assert_array_equal(np.take_along_axis(x, indices.cpu().numpy(), 1), values.cpu().numpy())


@given(data=st.data())
def test_adaptive_pool_gradcheck(data):
    out = (data.draw(st.integers(1, 5)), data.draw(st.sampled_from([None, 1, 2, 3])))
    shape = (data.draw(st.integers(1, 2)), 2, 4, 3)
    x = data.draw(tensors(shape=shape, requires_grad=True))
    assert gradcheck(lambda a: F.adaptive_avg_pool2d(a, out), (x,))
    assert gradgradcheck(lambda a: F.adaptive_avg_pool2d(a, out), (x,))
    xd = data.draw(distinct_tensors(shape))
    assert gradcheck(lambda a: F.adaptive_max_pool2d(a, out), (xd,))


def test_lp_pool(device):
    x = np.abs(np.random.default_rng(6).standard_normal((1, 2, 4, 6))) + 0.1
    got = F.lp_pool2d(t(x, device), 3, (2, 3))
    expected = (x**3).reshape(1, 2, 2, 2, 2, 3).sum(axis=(3, 5)) ** (1 / 3)
    np.testing.assert_allclose(got.cpu().numpy(), expected, rtol=1e-12)
    got1 = F.lp_pool1d(t(x[0], device), 2, 3, stride=2)
    expected1 = np.sqrt(np.stack([(x[0, :, :, i:i + 3] ** 2).sum(-1) for i in (0, 2)], -1))
    np.testing.assert_allclose(got1.cpu().numpy(), expected1, rtol=1e-12)
    xt = t(x, "cpu", requires_grad=True)
    assert gradcheck(lambda a: F.lp_pool2d(a, 2, 2), (xt,))


def test_pooling_errors(device):
    x = torch.randn(1, 2, 4, 4, device=device)
    with pytest.raises(RuntimeError, match="pad should be smaller than or equal to half of kernel size"):
        F.max_pool2d(x, 2, padding=2)
    with pytest.raises(RuntimeError, match="stride should be greater than zero"):
        F.avg_pool2d(x, 2, stride=0)
    with pytest.raises(RuntimeError, match="kernel size should be greater than zero"):
        F.max_pool2d(x, 0)
    with pytest.raises(RuntimeError, match=r"Given input size: \(2x4x4\). Calculated output size: \(2x0x0\). Output "
                                           r"size is too small"):
        F.max_pool2d(x, 3, dilation=3)
    with pytest.raises(RuntimeError, match=r"Expected 3D or 4D \(batch mode\) tensor"):
        F.max_pool2d(x[0, 0], 2)
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        F.avg_pool2d(x, 2, divisor_override=0)
    with pytest.raises(RuntimeError, match=r"adaptive_avg_pool2d\(\): Expected 3D or 4D tensor"):
        F.adaptive_avg_pool2d(x[0, 0], 2)


def test_pooling_on_meta_device():
    x = torch.empty(2, 3, 8, 8, device="meta", requires_grad=True)
    assert F.max_pool2d(x, 3, 2, 1).shape == (2, 3, 4, 4)
    assert F.avg_pool2d(x, 3, 2, 1, ceil_mode=True).shape == (2, 3, 5, 5)
    assert F.adaptive_avg_pool2d(x, (3, None)).shape == (2, 3, 3, 8)
    F.max_pool2d(x, 2).sum().backward()
    assert x.grad.shape == x.shape


# padding --------------------------------------------------------------------------------------------

NUMPY_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def ref_pad(x, pad, mode, value=0.0):
    """np.pad with PyTorch's pad order (last dim first); negative amounts crop afterwards."""
    widths = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        widths[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    kwargs = {"constant_values": value} if mode == "constant" else {}
    # crops first for constant (PyTorch crops the input), pads of the original input otherwise
    if mode == "constant":
        x = x[tuple(slice(max(-lo, 0), n - max(-hi, 0)) for n, (lo, hi) in zip(x.shape, widths))]
        return np.pad(x, [(max(lo, 0), max(hi, 0)) for lo, hi in widths], NUMPY_MODES[mode], **kwargs)
    y = np.pad(x, [(max(lo, 0), max(hi, 0)) for lo, hi in widths], NUMPY_MODES[mode])
    return y[tuple(slice(max(-lo, 0), m - max(-hi, 0)) for m, (lo, hi) in zip(y.shape, widths))]


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("pad", [(1, 2), (2, 0, 1, 2), (1, -1, -2, 2), (0, 1, 1, 0, 1, 1)])
def test_pad_matches_numpy(device, mode, pad):
    x = np.random.default_rng(7).standard_normal((2, 3, 4))
    got = F.pad(t(x, device), pad, mode=mode, **({"value": 1.5} if mode == "constant" else {}))
    np.testing.assert_array_equal(got.cpu().numpy(), ref_pad(x, pad, mode, 1.5))


@given(data=st.data())
def test_pad_gradcheck(data):
    mode = data.draw(st.sampled_from(["constant", "reflect", "replicate", "circular"]))
    x = data.draw(tensors(shape=(2, data.draw(st.integers(3, 4)), data.draw(st.integers(3, 4))), requires_grad=True))
    pad = tuple(data.draw(st.integers(-1, 2)) for _ in range(data.draw(st.sampled_from([2, 4]))))

    def fn(a):
        return F.pad(a, pad, mode=mode)

    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_pad_errors(device):
    x = torch.randn(1, 2, 3, device=device)
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(x, (1,))
    with pytest.raises(RuntimeError, match="Padding length should be less than or equal to two times the input "
                                           "dimension but got padding length 8 and input of dimension 3"):
        F.pad(x, (1,) * 8)
    with pytest.raises(RuntimeError, match=r"Padding size should be less than the corresponding input dimension, but "
                                           r"got: padding \(3, 0\) at dimension 2 of input \[1, 2, 3\]"):
        F.pad(x, (3, 0), mode="reflect")
    with pytest.raises(RuntimeError, match="Padding value causes wrapping around more than once."):
        F.pad(x, (4, 0), mode="circular")
    with pytest.raises(RuntimeError, match='Padding mode "replicate" doesn\'t take in value argument'):
        F.pad(x, (1, 1), mode="replicate", value=2.0)
    with pytest.raises(RuntimeError, match="resulted in a negative output size"):
        F.pad(x, (-2, -2))
    with pytest.raises(RuntimeError, match="Unrecognised padding mode zeros"):
        F.pad(x, (1, 1), mode="zeros")


def test_pad_keeps_dtype(device):
    x = torch.tensor([[1, 2, 3]], device=device)
    y = F.pad(x, (1, 1), value=7)
    assert y.dtype == torch.int64 and y.tolist() == [[7, 1, 2, 3, 7]]
    assert F.pad(x, (2, 1), mode="reflect").tolist() == [[3, 2, 1, 2, 3, 2]]
