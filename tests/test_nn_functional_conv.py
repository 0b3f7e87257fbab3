"""F.conv1d/2d/3d, F.conv_transpose1d/2d, F.unfold/fold: values against direct numpy loops,
gradients by gradcheck/gradgradcheck in float64 on drawn geometries and layouts, and PyTorch's errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch as torch
import minitorch.nn.functional as F
from minitorch.autograd import gradcheck, gradgradcheck
from minitorch.testing.strategies import tensors

# direct loop references ---------------------------------------------------------------------------


def ref_conv(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Cross-correlation by explicit loops over output positions and kernel taps (any spatial rank)."""
    d = x.ndim - 2
    stride, padding, dilation = (np.broadcast_to(v, (d,)) for v in (stride, padding, dilation))
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    n, c = x.shape[:2]
    o, cg = w.shape[:2]
    kernel = w.shape[2:]
    out = [(xp.shape[2 + i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1 for i in range(d)]
    y = np.zeros((n, o, *out))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for pos in itertools.product(*(range(m) for m in out)):
            total = np.zeros(n)
            for k in itertools.product(*(range(m) for m in kernel)):
                idx = tuple(pos[i] * stride[i] + k[i] * dilation[i] for i in range(d))
                total += xp[(slice(None), slice(g * cg, (g + 1) * cg), *idx)] @ w[(oc, slice(None), *k)]
            y[(slice(None), oc, *pos)] = total + (0 if b is None else b[oc])
    return y


def ref_conv_transpose(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed convolution by scattering each input element times the kernel (any spatial rank)."""
    d = x.ndim - 2
    stride, padding, output_padding, dilation = (
        np.broadcast_to(v, (d,)) for v in (stride, padding, output_padding, dilation)
    )
    n, cin = x.shape[:2]
    cog = w.shape[1]
    kernel = w.shape[2:]
    full = [(x.shape[2 + i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1 + output_padding[i] for i in range(d)]
    y = np.zeros((n, cog * groups, *full))
    cig = cin // groups
    for ci in range(cin):
        g = ci // cig
        for pos in itertools.product(*(range(m) for m in x.shape[2:])):
            for k in itertools.product(*(range(m) for m in kernel)):
                idx = tuple(pos[i] * stride[i] + k[i] * dilation[i] for i in range(d))
                y[(slice(None), slice(g * cog, (g + 1) * cog), *idx)] += (
                    x[(slice(None), ci, *pos)][:, None] * w[(ci, slice(None), *k)]
                )
    y = y[(Ellipsis, *(slice(p, m - p) for p, m in zip(padding, full)))]
    return y if b is None else y + b.reshape((-1,) + (1,) * d)


def ref_unfold(x, kernel, dilation, padding, stride):
    n, c = x.shape[:2]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    out = [(xp.shape[2 + i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1 for i in range(2)]
    cols = np.zeros((n, c, kernel[0], kernel[1], out[0], out[1]))
    for i, j, a, b in itertools.product(range(out[0]), range(out[1]), range(kernel[0]), range(kernel[1])):
        cols[:, :, a, b, i, j] = xp[:, :, i * stride[0] + a * dilation[0], j * stride[1] + b * dilation[1]]
    return cols.reshape(n, c * kernel[0] * kernel[1], out[0] * out[1])


def rand(rng, *shape):
    return rng.standard_normal(shape)


def t(array, device, requires_grad=False):
    return torch.tensor(array, dtype=torch.float64, device=device, requires_grad=requires_grad)


# values ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "stride, padding, dilation, groups, bias",
    [(1, 0, 1, 1, True), (2, 1, 1, 1, False), ((2, 1), (1, 2), (1, 2), 2, True), (3, 2, 2, 3, True)],
)
def test_conv2d_matches_loops(device, stride, padding, dilation, groups, bias):
    rng = np.random.default_rng(0)
    x, w, b = rand(rng, 2, 6, 7, 6), rand(rng, 6, 6 // groups, 3, 2), rand(rng, 6)
    got = F.conv2d(t(x, device), t(w, device), t(b, device) if bias else None, stride, padding, dilation, groups)
    expected = ref_conv(x, w, b if bias else None, stride, padding, dilation, groups)
    np.testing.assert_allclose(got.cpu().numpy(), expected, rtol=1e-10, atol=1e-10)


def test_conv1d_and_conv3d_match_loops(device):
    rng = np.random.default_rng(1)
    x, w, b = rand(rng, 2, 4, 9), rand(rng, 4, 2, 3), rand(rng, 4)
    got = F.conv1d(t(x, device), t(w, device), t(b, device), stride=2, padding=1, dilation=2, groups=2)
    np.testing.assert_allclose(got.cpu().numpy(), ref_conv(x, w, b, 2, 1, 2, 2), atol=1e-10)
    x3, w3 = rand(rng, 1, 2, 4, 3, 4), rand(rng, 2, 2, 2, 2, 3)
    got3 = F.conv3d(t(x3, device), t(w3, device), padding=(1, 0, 1))
    np.testing.assert_allclose(got3.cpu().numpy(), ref_conv(x3, w3, padding=np.array([1, 0, 1])), atol=1e-10)


@pytest.mark.parametrize("kernel, dilation", [(3, 1), (4, 1), (2, 3), ((2, 3), (2, 1))])
def test_conv2d_same_and_valid_padding(device, kernel, dilation):
    rng = np.random.default_rng(2)
    kernel2 = kernel if isinstance(kernel, tuple) else (kernel, kernel)
    dil2 = dilation if isinstance(dilation, tuple) else (dilation, dilation)
    x, w = rand(rng, 1, 2, 6, 5), rand(rng, 3, 2, *kernel2)
    same = F.conv2d(t(x, device), t(w, device), padding="same", dilation=dilation)
    assert same.shape == (1, 3, 6, 5)
    total = [d * (k - 1) for k, d in zip(kernel2, dil2)]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(s // 2, s - s // 2) for s in total])  # PyTorch: the extra pad on the right
    np.testing.assert_allclose(same.cpu().numpy(), ref_conv(xp, w, dilation=np.array(dil2)), atol=1e-10)
    valid = F.conv2d(t(x, device), t(w, device), padding="valid", dilation=dilation)
    np.testing.assert_allclose(valid.cpu().numpy(), ref_conv(x, w, dilation=np.array(dil2)), atol=1e-10)


def test_conv_unbatched_input(device):
    rng = np.random.default_rng(3)
    x, w = rand(rng, 2, 5, 5), rand(rng, 4, 2, 3, 3)
    got = F.conv2d(t(x, device), t(w, device), padding=1)
    assert got.shape == (4, 5, 5)
    np.testing.assert_allclose(got.cpu().numpy(), ref_conv(x[None], w, padding=1)[0], atol=1e-10)
    got1 = F.conv1d(t(x[:, 0], device), t(w[:, :, 0], device))
    assert got1.shape == (4, 3)


@pytest.mark.parametrize(
    "stride, padding, output_padding, groups, dilation",
    [(1, 0, 0, 1, 1), (2, 1, 1, 1, 1), ((2, 3), (0, 1), (1, 2), 2, (1, 2)), (1, 1, 1, 2, 2)],
)
def test_conv_transpose2d_matches_loops(device, stride, padding, output_padding, groups, dilation):
    rng = np.random.default_rng(4)
    x, w, b = rand(rng, 2, 4, 3, 4), rand(rng, 4, 3, 3, 2), rand(rng, 3 * groups)
    got = F.conv_transpose2d(t(x, device), t(w, device), t(b, device), stride, padding, output_padding, groups,
                             dilation)
    expected = ref_conv_transpose(x, w, b, stride, padding, output_padding, groups, dilation)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got.cpu().numpy(), expected, atol=1e-10)


def test_conv_transpose1d_matches_loops(device):
    rng = np.random.default_rng(5)
    x, w = rand(rng, 2, 2, 5), rand(rng, 2, 3, 3)
    got = F.conv_transpose1d(t(x, device), t(w, device), stride=2, padding=1, output_padding=1, dilation=1)
    np.testing.assert_allclose(got.cpu().numpy(), ref_conv_transpose(x, w, None, 2, 1, 1), atol=1e-10)


@given(data=st.data())
def test_conv_transpose_is_the_adjoint_of_conv(data):
    """<conv(x, w), y> == <x, conv_transpose(y, w)> for every geometry with matching sizes."""
    stride, padding, dilation, groups = (data.draw(st.integers(1, 2)) for _ in range(4))
    size = data.draw(st.integers(dilation * 2 + 1, 6))
    rng = np.random.default_rng(data.draw(st.integers(0, 100)))
    x, w = rand(rng, 2, 2 * groups, size, size + 1), rand(rng, 2 * groups, 2, 3, 2)
    y = F.conv2d(t(x, "cpu"), t(w, "cpu"), None, stride, padding, dilation, groups)
    v = rand(rng, *y.shape)
    out_h = (y.shape[2] - 1) * stride - 2 * padding + dilation * 2 + 1
    out_w = (y.shape[3] - 1) * stride - 2 * padding + dilation * 1 + 1
    output_padding = (size - out_h, size + 1 - out_w)
    back = F.conv_transpose2d(t(v, "cpu"), t(w, "cpu"), None, stride, padding, output_padding, groups, dilation)
    assert back.shape == x.shape
    assert np.isclose((y.numpy() * v).sum(), (x * back.numpy()).sum())


# gradients ------------------------------------------------------------------------------------------


@st.composite
def conv_cases(draw, d: int = 2):
    groups = draw(st.integers(1, 2))
    cin, cout = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(d))
    stride = tuple(draw(st.integers(1, 2)) for _ in range(d))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(d))
    padding = tuple(draw(st.integers(0, 1)) for _ in range(d))
    spatial = tuple(
        draw(st.integers(lo, max(lo, 4)))
        for lo in (max(1, dl * (k - 1) + 1 - 2 * p) for k, dl, p in zip(kernel, dilation, padding))
    )
    x = draw(tensors(shape=(draw(st.integers(1, 2)), cin) + spatial, requires_grad=True))
    w = draw(tensors(shape=(cout, cin // groups) + kernel, requires_grad=True))
    b = draw(st.one_of(st.none(), tensors(shape=(cout,), requires_grad=True)))
    return x, w, b, stride, padding, dilation, groups


@given(conv_cases())
def test_conv2d_gradcheck(case):
    x, w, b, stride, padding, dilation, groups = case
    inputs = (x, w) if b is None else (x, w, b)
    assert gradcheck(lambda *a: F.conv2d(*a, stride=stride, padding=padding, dilation=dilation, groups=groups),
                     inputs)


@settings(max_examples=6)
@given(conv_cases())
def test_conv2d_gradgradcheck(case):
    x, w, b, stride, padding, dilation, groups = case
    inputs = (x, w) if b is None else (x, w, b)
    assert gradgradcheck(lambda *a: F.conv2d(*a, stride=stride, padding=padding, dilation=dilation, groups=groups),
                         inputs)


@settings(max_examples=8)
@given(conv_cases(d=1))
def test_conv1d_gradcheck_and_gradgradcheck(case):
    x, w, b, stride, padding, dilation, groups = case
    inputs = (x, w) if b is None else (x, w, b)

    def fn(*a):
        return F.conv1d(*a, stride=stride, padding=padding, dilation=dilation, groups=groups)

    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


@settings(max_examples=10)
@given(data=st.data())
def test_conv_transpose2d_gradcheck_and_gradgradcheck(data):
    groups = data.draw(st.integers(1, 2))
    stride = data.draw(st.integers(1, 2))
    dilation = data.draw(st.integers(1, 2))
    padding = data.draw(st.integers(0, 1))
    output_padding = data.draw(st.integers(0, max(stride, dilation) - 1))
    x = data.draw(tensors(shape=(1, 2 * groups, 2, data.draw(st.integers(2, 3))), requires_grad=True))
    w = data.draw(tensors(shape=(2 * groups, data.draw(st.integers(1, 2)), 2, 2), requires_grad=True))
    b = data.draw(tensors(shape=(w.shape[1] * groups,), requires_grad=True))

    def fn(*a):
        return F.conv_transpose2d(*a, stride=stride, padding=padding, output_padding=output_padding, groups=groups,
                                  dilation=dilation)

    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


def test_conv_gradients_match_loops(device):
    """The first-order gradients against loop references: grad_w by correlation, grad_x by transposed conv."""
    rng = np.random.default_rng(6)
    x, w, g = rand(rng, 2, 4, 5, 6), rand(rng, 4, 2, 2, 3), None
    xt, wt, bt = t(x, device, True), t(w, device, True), t(np.zeros(4), device, True)
    y = F.conv2d(xt, wt, bt, stride=(1, 2), padding=1, dilation=(2, 1), groups=2)
    g = rand(rng, *y.shape)
    y.backward(t(g, device))
    eps = 1e-6
    numeric_w = np.zeros_like(w)
    for idx in itertools.product(*(range(n) for n in w.shape)):
        dw = np.zeros_like(w)
        dw[idx] = eps
        plus = ref_conv(x, w + dw, None, (1, 2), 1, (2, 1), 2)
        minus = ref_conv(x, w - dw, None, (1, 2), 1, (2, 1), 2)
        numeric_w[idx] = ((plus - minus) * g).sum() / (2 * eps)
    np.testing.assert_allclose(wt.grad.cpu().numpy(), numeric_w, atol=1e-6)
    np.testing.assert_allclose(bt.grad.cpu().numpy(), g.sum(axis=(0, 2, 3)), atol=1e-10)
    expected_x = ref_conv_transpose(g, w, None, (1, 2), 1, (1, 1), 2, (2, 1))
    np.testing.assert_allclose(xt.grad.cpu().numpy(), expected_x[..., : x.shape[2], : x.shape[3]], atol=1e-10)


def test_only_weight_requires_grad(device):
    rng = np.random.default_rng(7)
    x, w = t(rand(rng, 2, 1, 5, 5), device), t(rand(rng, 3, 1, 3, 3), device, True)
    F.conv2d(x, w).relu().mean().backward()
    assert x.grad is None and w.grad.shape == (3, 1, 3, 3)


def test_conv_float32_keeps_dtype(device):
    x = torch.randn(2, 3, 6, 6, device=device)
    w = torch.randn(4, 3, 3, 3, device=device, requires_grad=True)
    b = torch.randn(4, device=device, requires_grad=True)
    y = F.conv2d(x, w, b, padding=1)
    assert y.dtype == torch.float32
    y.sum().backward()
    assert w.grad.dtype == torch.float32 and b.grad.dtype == torch.float32


def test_conv_on_meta_device():
    x = torch.empty(2, 3, 8, 8, device="meta", requires_grad=True)
    w = torch.empty(4, 3, 3, 3, device="meta")
    y = F.conv2d(x, w, padding=1, stride=2)
    assert y.shape == (2, 4, 4, 4) and y.device.type == "meta"
    y.sum().backward()
    assert x.grad.shape == x.shape
    assert F.conv_transpose2d(y, w, stride=2, padding=1, output_padding=1).shape == (2, 3, 8, 8)


# unfold / fold --------------------------------------------------------------------------------------


@pytest.mark.parametrize("kernel, dilation, padding, stride", [((2, 2), (1, 1), (0, 0), (1, 1)),
                                                               ((2, 3), (1, 2), (1, 0), (2, 1))])
def test_unfold_matches_loops_and_fold_is_its_adjoint(device, kernel, dilation, padding, stride):
    rng = np.random.default_rng(8)
    x = rand(rng, 2, 3, 5, 6)
    cols = F.unfold(t(x, device), kernel, dilation, padding, stride)
    expected = ref_unfold(x, kernel, dilation, padding, stride)
    np.testing.assert_allclose(cols.cpu().numpy(), expected, atol=1e-12)
    v = rand(rng, *cols.shape)
    folded = F.fold(t(v, device), (5, 6), kernel, dilation, padding, stride)
    assert folded.shape == x.shape
    assert np.isclose((expected * v).sum(), (x * folded.cpu().numpy()).sum())


@settings(max_examples=8)
@given(x=tensors(shape=(1, 2, 3, 4), requires_grad=True), stride=st.integers(1, 2), padding=st.integers(0, 1))
def test_unfold_fold_gradcheck(x, stride, padding):
    assert gradcheck(lambda a: F.unfold(a, 2, 1, padding, stride), (x,))
    assert gradgradcheck(lambda a: F.unfold(a, 2, 1, padding, stride), (x,))
    cols = F.unfold(x.detach(), 2, 1, padding, stride).requires_grad_()
    assert gradcheck(lambda c: F.fold(c, (3, 4), 2, 1, padding, stride), (cols,))


# errors ---------------------------------------------------------------------------------------------


def test_conv_errors(device):
    x = torch.randn(1, 2, 5, 5, device=device)
    w = torch.randn(16, 3, 3, 3, device=device)
    with pytest.raises(RuntimeError, match=r"Given groups=1, weight of size \[16, 3, 3, 3\], expected input\[1, 2, "
                                           r"5, 5\] to have 3 channels, but got 2 channels instead"):
        F.conv2d(x, w)
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, but got "
                                           r"input of size: \[5, 5\]"):
        F.conv2d(x[0, 0], w)
    with pytest.raises(RuntimeError, match=r"Expected 3-dimensional input for 3-dimensional weight \[16, 3, 3\]"):
        F.conv2d(x, w[:, :, 0])
    with pytest.raises(RuntimeError, match=r"expected weight to be divisible by 3 at dimension 0"):
        F.conv2d(torch.randn(1, 6, 5, 5, device=device), torch.randn(4, 2, 3, 3, device=device), groups=3)
    w2 = torch.randn(4, 2, 3, 3, device=device)
    with pytest.raises(RuntimeError, match=r"expected bias to be 1-dimensional with 4 elements, but got bias of "
                                           r"size \[3\] instead"):
        F.conv2d(x, w2, torch.randn(3, device=device))
    with pytest.raises(RuntimeError, match=r"Calculated padded input size per channel: \(2 x 2\). Kernel size: "
                                           r"\(3 x 3\). Kernel size can't be greater than actual input size"):
        F.conv2d(x[:, :, :2, :2], w2)
    with pytest.raises(RuntimeError, match="padding='same' is not supported for strided convolutions"):
        F.conv2d(x, w2, padding="same", stride=2)
    with pytest.raises(RuntimeError, match="Invalid padding string: 'full'"):
        F.conv2d(x, w2, padding="full")
    with pytest.raises(RuntimeError, match="non-positive stride is not supported"):
        F.conv2d(x, w2, stride=0)
    with pytest.raises(RuntimeError, match="negative padding is not supported"):
        F.conv2d(x, w2, padding=-1)
    with pytest.raises(RuntimeError, match="expected stride to be a single integer value or a list of 2 values"):
        F.conv2d(x, w2, stride=(1, 1, 1))
    with pytest.raises(RuntimeError, match=r"Input type \(torch.FloatTensor\) and weight type \(torch.DoubleTensor\)"):
        F.conv2d(x.cpu(), w2.cpu().double())
    with pytest.raises(RuntimeError, match="output padding must be smaller than either stride or dilation"):
        F.conv_transpose2d(torch.randn(1, 4, 3, 3, device=device), w2, output_padding=1)
    with pytest.raises(RuntimeError, match=r"Given transposed=1, weight of size \[4, 2, 3, 3\], expected input"
                                           r"\[1, 2, 5, 5\] to have 4 channels, but got 2 channels instead"):
        F.conv_transpose2d(x, w2)
    with pytest.raises(RuntimeError, match="calculated number of sliding blocks 2 \\* 4 = 8, but got input.size"):
        F.fold(torch.randn(1, 12, 6, device=device), (4, 5), 2, stride=(2, 1))
    with pytest.raises(RuntimeError, match="divisible by the product of kernel_size"):
        F.fold(torch.randn(1, 5, 16, device=device), (5, 5), 2)


def test_failed_conv_leaves_inputs_unchanged(device):
    x = torch.randn(1, 2, 5, 5, device=device, requires_grad=True)
    before = x.detach().clone()
    with pytest.raises(RuntimeError):
        F.conv2d(x, torch.randn(4, 3, 3, 3, device=device))
    assert torch.equal(x.detach(), before) and x.grad is None
