"""nn.functional linear, dropout, normalization, embedding and one_hot."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch as torch
import minitorch.nn.functional as F
from minitorch.autograd import gradcheck, gradgradcheck
from minitorch.testing.strategies import shapes, tensors

RNG = np.random.default_rng(7)


def t(a, device="cpu", **kwargs):
    return torch.tensor(a, device=device, **kwargs)


# linear ---------------------------------------------------------------------------------------


def test_linear_values(device):
    x, w, b = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((5, 4)), RNG.standard_normal(5)
    out = F.linear(t(x, device), t(w, device), t(b, device))
    assert out.shape == (2, 3, 5)
    np.testing.assert_allclose(out.cpu().numpy(), x @ w.T + b, rtol=1e-12)
    np.testing.assert_allclose(F.linear(t(x[0, 0], device), t(w, device)).cpu().numpy(), w @ x[0, 0], rtol=1e-12)
    np.testing.assert_allclose(F.linear(t(x, device), t(w[0], device)).cpu().numpy(), x @ w[0], rtol=1e-12)


def test_linear_errors(device):
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(6x4 and 3x5\)"):
        F.linear(torch.zeros(2, 3, 4, device=device), torch.zeros(5, 3, device=device))
    with pytest.raises(RuntimeError, match="mat1 and mat2 must have the same dtype, but got Float and Double"):
        F.linear(torch.zeros(2, 4, device=device), torch.zeros(5, 4, dtype=torch.float64, device=device))


@given(data=st.data())
@settings(max_examples=10)
def test_linear_gradcheck(data):
    lead = data.draw(shapes(0, 2, 1, 3))
    n_in, n_out = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    x = data.draw(tensors(lead + (n_in,), requires_grad=True))
    w = data.draw(tensors((n_out, n_in), requires_grad=True))
    b = data.draw(tensors((n_out,), requires_grad=True))
    assert gradcheck(F.linear, (x, w, b))
    assert gradgradcheck(F.linear, (x, w, b))
    assert gradcheck(F.linear, (x, w))


def test_linear_weight_grad_only(device):
    x = t(RNG.standard_normal((3, 2)), device)
    w = t(RNG.standard_normal((4, 2)), device, requires_grad=True)
    F.linear(x, w).sum().backward()
    np.testing.assert_allclose(w.grad.cpu().numpy(), np.ones((4, 3)) @ x.cpu().numpy(), rtol=1e-12)


def test_bilinear(device):
    x1, x2 = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 4))
    w, b = RNG.standard_normal((5, 3, 4)), RNG.standard_normal(5)
    out = F.bilinear(t(x1, device), t(x2, device), t(w, device), t(b, device))
    np.testing.assert_allclose(out.cpu().numpy(), np.einsum("ni,kij,nj->nk", x1, w, x2) + b, rtol=1e-12)
    args = [t(a, requires_grad=True) for a in (x1, x2, w, b)]
    assert gradcheck(F.bilinear, args)
    with pytest.raises(RuntimeError, match="bilinear\\(\\): input1 size does not match weight size: got 3 but expected 2"):
        F.bilinear(t(x1), t(x2), torch.zeros(5, 2, 4, dtype=torch.float64))


# dropout --------------------------------------------------------------------------------------


def test_dropout_statistics_and_scaling(device):
    torch.manual_seed(0)
    x = torch.ones(20000, device=device, requires_grad=True)
    out = F.dropout(x, p=0.3)
    values = out.detach().cpu().numpy()
    kept = values != 0
    assert abs(kept.mean() - 0.7) < 0.02
    np.testing.assert_allclose(values[kept], 1 / 0.7, rtol=1e-6)
    out.backward(torch.full((20000,), 2.0, device=device))
    np.testing.assert_allclose(x.grad.cpu().numpy(), np.where(kept, 2 / 0.7, 0), rtol=1e-6)


def test_dropout_is_reproducible_with_a_seed(device):
    x = torch.ones(50, device=device)
    torch.manual_seed(3)
    a = F.dropout(x, 0.5).tolist()
    torch.manual_seed(3)
    assert F.dropout(x, 0.5).tolist() == a
    assert F.dropout(x, 0.5).tolist() != a


def test_dropout_edge_cases(device):
    x = t([1.0, 2.0, 3.0], device, requires_grad=True)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    zeros = F.dropout(x, 1.0)
    assert zeros.tolist() == [0.0, 0.0, 0.0]
    zeros.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        F.dropout(x, 1.5)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got -0.1"):
        F.dropout2d(x.reshape(1, 1, 1, 3), -0.1)


def test_channel_dropout_rank_warnings():
    with pytest.warns(UserWarning, match=r"dropout2d: Received a 5-D input to dropout2d, .* with 2 spatial dimensions, "
                                         r"a channel dimension, and an optional batch dimension \(i.e. 3D or 4D inputs\)"):
        F.dropout2d(torch.ones(1, 1, 1, 1, 1), 0.5)
    with pytest.warns(UserWarning, match=r"dropout3d: Received a 3-D input to dropout3d, .* with 3 spatial dimensions, "
                                         r"a channel dimension, and an optional batch dimension \(i.e. 4D or 5D inputs\)"):
        F.dropout3d(torch.ones(1, 1, 1), 0.5)
    with pytest.warns(UserWarning, match="dropout2d: Received a 3D input to dropout2d and assuming"):
        F.dropout2d(torch.ones(2, 3, 4), 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.dropout2d(torch.ones(2, 3, 4, 4), 0.5)
        F.dropout3d(torch.ones(3, 2, 2, 2), 0.5)


def test_dropout_gradcheck_with_fixed_mask():
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)

    def fn(a):
        torch.manual_seed(5)  # same mask on every evaluation
        return F.dropout(a, 0.4)

    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_channel_dropout_zeroes_whole_channels(device):
    torch.manual_seed(1)
    out = F.dropout2d(torch.ones(8, 6, 3, 3, device=device), 0.5).cpu().numpy()
    per_channel = out.reshape(8, 6, 9)
    assert ((per_channel == 0).all(-1) | (per_channel == 2).all(-1)).all()
    assert 0 < (per_channel == 0).all(-1).sum() < 48
    out = F.dropout1d(torch.ones(6, 5, device=device), 0.5).cpu().numpy()  # unbatched (C, L)
    assert ((out == 0).all(-1) | (out == 2).all(-1)).all()
    assert F.dropout3d(torch.ones(2, 3, 2, 2, 2, device=device), 0.5).shape == (2, 3, 2, 2, 2)
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"):
        F.dropout1d(torch.ones(1, 2, 3, 4, device=device))


def test_alpha_dropout_keeps_mean_and_variance(device):
    torch.manual_seed(2)
    x = torch.randn(200000, device=device)
    assert F.alpha_dropout(x, 0.2) is x  # training=False by default
    out = F.alpha_dropout(x, 0.2, training=True).cpu().numpy()
    assert abs(out.mean()) < 0.02 and abs(out.std() - 1) < 0.02


# normalization --------------------------------------------------------------------------------


def np_normalize(a, axes, eps=1e-5):
    return (a - a.mean(axes, keepdims=True)) / np.sqrt(a.var(axes, keepdims=True) + eps)


def test_layer_norm_values(device):
    a, w, b = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    out = F.layer_norm(t(a, device), (3, 4), t(w, device), t(b, device))
    np.testing.assert_allclose(out.cpu().numpy(), np_normalize(a, (1, 2)) * w + b, rtol=1e-10)
    out = F.layer_norm(t(a, device), 4, eps=0.1)
    np.testing.assert_allclose(out.cpu().numpy(), np_normalize(a, (2,), 0.1), rtol=1e-10)
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[3\], expected input with shape \[\*, 3\], but got "
                                           r"input of size\[2, 3, 4\]"):
        F.layer_norm(t(a, device), [3])


@given(data=st.data())
@settings(max_examples=8)
def test_layer_norm_gradients(data):
    shape = data.draw(shapes(1, 3, 2, 4))
    k = data.draw(st.integers(1, len(shape)))
    x = data.draw(tensors(shape, requires_grad=True))
    w = data.draw(tensors(shape[-k:], requires_grad=True))
    b = data.draw(tensors(shape[-k:], requires_grad=True))
    assert gradcheck(lambda *a: F.layer_norm(a[0], shape[-k:], a[1], a[2]), (x, w, b))
    assert gradgradcheck(lambda a: F.layer_norm(a, shape[-k:]), (x,))


def test_batch_norm_training_updates_running_stats(device):
    a = RNG.standard_normal((4, 3, 2))
    w, b = RNG.standard_normal(3), RNG.standard_normal(3)
    running_mean, running_var = torch.zeros(3, dtype=torch.float64, device=device), torch.ones(3, dtype=torch.float64,
                                                                                                device=device)
    version = running_mean._version
    out = F.batch_norm(t(a, device), running_mean, running_var, t(w, device), t(b, device), training=True,
                       momentum=0.2)
    expected = np_normalize(a, (0, 2)) * w[None, :, None] + b[None, :, None]
    np.testing.assert_allclose(out.cpu().numpy(), expected, rtol=1e-10)
    np.testing.assert_allclose(running_mean.cpu().numpy(), 0.2 * a.mean((0, 2)), rtol=1e-12)
    np.testing.assert_allclose(running_var.cpu().numpy(), 0.8 + 0.2 * a.var((0, 2), ddof=1), rtol=1e-12)
    assert running_mean._version > version
    evaluated = F.batch_norm(t(a, device), running_mean, running_var, training=False)
    rm, rv = running_mean.cpu().numpy(), running_var.cpu().numpy()
    np.testing.assert_allclose(evaluated.cpu().numpy(), (a - rm[:, None]) / np.sqrt(rv[:, None] + 1e-5), rtol=1e-10)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F.batch_norm(torch.zeros(1, 3, device=device), None, None, training=True)
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 2"):
        F.batch_norm(t(a, device), torch.zeros(2, device=device), torch.ones(3, device=device))


def test_batch_group_instance_norm_gradients():
    x = torch.randn(2, 4, 3, dtype=torch.float64).permute(2, 1, 0).requires_grad_()  # non-contiguous leaf
    w = torch.randn(4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, dtype=torch.float64, requires_grad=True)
    rm, rv = torch.zeros(4, dtype=torch.float64), torch.ones(4, dtype=torch.float64)
    assert gradcheck(lambda *a: F.batch_norm(a[0], None, None, a[1], a[2], training=True), (x, w, b))
    assert gradgradcheck(lambda a: F.batch_norm(a, None, None, training=True), (x,))
    assert gradcheck(lambda *a: F.batch_norm(a[0], rm, rv, a[1], a[2]), (x, w, b))
    assert gradcheck(lambda *a: F.group_norm(a[0], 2, a[1], a[2]), (x, w, b))
    assert gradgradcheck(lambda a: F.group_norm(a, 2), (x,))
    assert gradcheck(lambda *a: F.instance_norm(a[0], weight=a[1], bias=a[2]), (x, w, b))


def test_group_and_instance_norm_values(device):
    a = RNG.standard_normal((2, 4, 3))
    out = F.group_norm(t(a, device), 2)
    expected = np_normalize(a.reshape(2, 2, 6), (2,)).reshape(2, 4, 3)
    np.testing.assert_allclose(out.cpu().numpy(), expected, rtol=1e-10)
    with pytest.raises(RuntimeError, match="Expected number of channels in input to be divisible by num_groups"):
        F.group_norm(t(a, device), 3)
    running_mean, running_var = torch.zeros(4, dtype=torch.float64, device=device), torch.ones(4, dtype=torch.float64,
                                                                                                device=device)
    out = F.instance_norm(t(a, device), running_mean, running_var)
    np.testing.assert_allclose(out.cpu().numpy(), np_normalize(a, (2,)), rtol=1e-10)
    np.testing.assert_allclose(running_mean.cpu().numpy(), 0.1 * a.mean(2).mean(0), rtol=1e-12)
    np.testing.assert_allclose(running_var.cpu().numpy(), 0.9 + 0.1 * a.var(2, ddof=1).mean(0), rtol=1e-12)


def test_batch_and_instance_norm_errors():
    x = torch.zeros(2, 3, 4)
    with pytest.raises(RuntimeError, match="batch_norm: running_mean and running_var must be defined in evaluation"):
        F.batch_norm(x, None, None, training=False)
    with pytest.raises(RuntimeError, match="Expected running_mean and running_var to be defined when use_input_stats"):
        F.instance_norm(x, use_input_stats=False)
    with pytest.raises(ValueError, match="Expected more than 1 spatial element when training"):
        F.instance_norm(torch.zeros(2, 3, 1))
    with pytest.raises(RuntimeError, match="weight should contain 3 elements not 2"):
        F.instance_norm(x, weight=torch.ones(2))


def test_normalize_rms_norm_local_response_norm(device):
    a = RNG.standard_normal((2, 5, 3))
    out = F.normalize(t(a, device), dim=1)
    np.testing.assert_allclose(out.cpu().numpy(), a / np.linalg.norm(a, axis=1, keepdims=True), rtol=1e-12)
    out = F.normalize(t(a, device), p=1.0, dim=-1)
    np.testing.assert_allclose(out.cpu().numpy(), a / np.abs(a).sum(-1, keepdims=True), rtol=1e-12)
    assert F.normalize(torch.zeros(2, 3, device=device)).tolist() == [[0.0] * 3] * 2
    out = F.rms_norm(t(a, device), [3], eps=1e-6)
    np.testing.assert_allclose(out.cpu().numpy(), a / np.sqrt((a * a).mean(-1, keepdims=True) + 1e-6), rtol=1e-12)
    out = F.local_response_norm(t(a, device), 3, alpha=0.5, beta=0.75, k=2.0)
    padded = np.pad(a * a, ((0, 0), (1, 1), (0, 0)))
    window = padded[:, :-2] + padded[:, 1:-1] + padded[:, 2:]
    np.testing.assert_allclose(out.cpu().numpy(), a / (2.0 + 0.5 * window / 3) ** 0.75, rtol=1e-12)
    x = t(a, requires_grad=True)
    assert gradcheck(lambda v: F.normalize(v, dim=1), (x,))
    assert gradcheck(lambda v: F.rms_norm(v, (5, 3)), (x,))
    assert gradcheck(lambda v: F.local_response_norm(v, 2), (x,))


# embedding / one_hot --------------------------------------------------------------------------


def test_embedding_values_and_padding_grad(device):
    w = RNG.standard_normal((6, 3))
    index = np.array([[0, 2, 2], [5, 1, 2]])
    weight = t(w, device, requires_grad=True)
    out = F.embedding(t(index, device), weight, padding_idx=2)
    np.testing.assert_allclose(out.detach().cpu().numpy(), w[index], rtol=1e-12)
    out.backward(torch.ones(2, 3, 3, dtype=torch.float64, device=device))
    expected = np.zeros((6, 3))
    for i in index.reshape(-1):
        expected[i] += 1
    expected[2] = 0
    np.testing.assert_allclose(weight.grad.cpu().numpy(), expected)
    weight.grad = None
    F.embedding(t(index, device), weight, scale_grad_by_freq=True).sum().backward()
    referenced = np.isin(np.arange(6), index)[:, None]
    np.testing.assert_allclose(weight.grad.cpu().numpy(), np.broadcast_to(referenced, (6, 3)).astype(float))


@given(data=st.data())
@settings(max_examples=8)
def test_embedding_gradcheck(data):
    weight = data.draw(tensors((5, 3), requires_grad=True))
    index = t(data.draw(st.lists(st.integers(0, 4), min_size=1, max_size=6)))
    assert gradcheck(lambda w: F.embedding(index, w), (weight,))
    assert gradgradcheck(lambda w: F.embedding(index, w, scale_grad_by_freq=True), (weight,))


def test_embedding_max_norm_and_errors(device):
    weight = t(RNG.standard_normal((4, 3)) * 5, device)
    F.embedding(t([0, 2], device), weight, max_norm=1.0)
    norms = np.linalg.norm(weight.cpu().numpy(), axis=1)
    assert norms[0] == pytest.approx(1.0, rel=1e-5) and norms[2] == pytest.approx(1.0, rel=1e-5)
    assert norms[1] > 1.0 and norms[3] > 1.0
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(t([4], device), weight)
    with pytest.raises(RuntimeError, match="'indices' to have one of the following scalar types: Long, Int"):
        F.embedding(t([0.0], device), weight)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(t([0], device), weight, padding_idx=4)


def test_one_hot(device):
    out = F.one_hot(t([[0, 3], [1, 1]], device))
    assert out.dtype is torch.int64 and out.shape == (2, 2, 4)
    np.testing.assert_array_equal(out.cpu().numpy(), np.eye(4, dtype=np.int64)[[[0, 3], [1, 1]]])
    assert F.one_hot(t([1], device), 5).tolist() == [[0, 1, 0, 0, 0]]
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        F.one_hot(t([3], device), 3)
    with pytest.raises(RuntimeError, match="Class values must be non-negative."):
        F.one_hot(t([-1], device), 3)
    with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor"):
        F.one_hot(t([1.0], device))
    with pytest.raises(RuntimeError, match="Can not infer total number of classes from empty tensor."):
        F.one_hot(torch.zeros(0, dtype=torch.int64, device=device))


def test_meta_device_shapes():
    x = torch.empty(4, 3, 2, device="meta", requires_grad=True)
    w = torch.empty(5, 2, device="meta")
    assert F.linear(x, w).shape == (4, 3, 5)
    assert F.dropout(x, 0.5).shape == (4, 3, 2)
    assert F.layer_norm(x, [2]).is_meta and F.batch_norm(x, None, None, training=True).shape == (4, 3, 2)
    assert F.embedding(torch.zeros(2, 3, dtype=torch.int64, device="meta"), w).shape == (2, 3, 2)


def test_norms_have_finite_gradients_at_zero_vectors(device):
    x = torch.tensor([[0.0, 0.0], [3.0, 4.0]], dtype=torch.float64, device=device, requires_grad=True)
    for p in (2.0, 3.0):
        (grad,) = torch.autograd.grad(F.normalize(x, p=p, dim=1).sum(), [x])
        assert np.isfinite(grad.cpu().numpy()).all()
    (grad,) = torch.autograd.grad(F.cosine_similarity(x, x + 1, dim=1).sum(), [x])
    assert np.isfinite(grad.cpu().numpy()).all()


def test_normalize_is_composed_of_norm_and_clamp_min_as_in_pytorch():
    # PyTorch 2.13: input / input.norm(p, dim, keepdim=True).clamp_min(eps): at a zero row the gradient is 1 / eps
    # and the second derivative nan (the 2-norm has none at 0)
    x = torch.tensor([[0.0, 0.0], [1.0, -2.0]], dtype=torch.float64, requires_grad=True)
    weights = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
    (grad,) = torch.autograd.grad((F.normalize(x, dim=1) * weights).sum(), x, create_graph=True)
    np.testing.assert_allclose(np.array(grad.tolist()), [[1e12, 2e12], [1.7888543819998317, 0.894427190999916]])
    second = np.array(torch.autograd.grad(grad.sum(), x)[0].tolist())
    np.testing.assert_allclose(second, [[math.nan, math.nan], [0.35777087639996624, 1.5205262246998568]])
