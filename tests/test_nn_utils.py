"""nn.utils: clip_grad_norm_ / clip_grad_value_ against numpy, and parameters <-> vector."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch as torch
from minitorch import nn
from minitorch.nn.utils import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    get_total_norm,
    parameters_to_vector,
    vector_to_parameters,
)
from minitorch.testing.strategies import shapes


def params_with_grads(grads, device, dtype=torch.float64):
    params = []
    for g in grads:
        p = nn.Parameter(torch.zeros(g.shape, dtype=dtype, device=device))
        p.grad = torch.tensor(g, dtype=dtype, device=device)
        params.append(p)
    return params


def numpy_total_norm(grads, norm_type):
    flat = np.concatenate([g.ravel() for g in grads])
    if norm_type == math.inf:
        return np.abs(flat).max()
    return (np.abs(flat) ** norm_type).sum() ** (1 / norm_type)


@given(
    grad_shapes=st.lists(shapes(min_dims=0, max_dims=3, min_side=1, max_side=4), min_size=1, max_size=3),
    norm_type=st.sampled_from([1.0, 2.0, 3.0, math.inf]),
    max_norm=st.floats(0.1, 10.0),
    seed=st.integers(0, 2**16),
)
def test_clip_grad_norm_matches_numpy(grad_shapes, norm_type, max_norm, seed):
    rng = np.random.default_rng(seed)
    grads = [rng.normal(size=s) * 3 for s in grad_shapes]
    params = params_with_grads(grads, "cpu")
    params.append(nn.Parameter(torch.zeros(2, dtype=torch.float64)))  # no grad: skipped
    total = clip_grad_norm_(params, max_norm, norm_type)
    expected_total = numpy_total_norm(grads, norm_type)
    assert isinstance(total, torch.Tensor) and total.dim() == 0
    np.testing.assert_allclose(total.item(), expected_total, rtol=1e-10)
    coef = min(max_norm / (expected_total + 1e-6), 1.0)
    for p, g in zip(params, grads):
        np.testing.assert_allclose(p.grad.numpy(), g * coef, rtol=1e-10)
    assert params[-1].grad is None


def test_clip_grad_norm_device_and_generators(device):
    grads = [np.array([3.0, 0.0]), np.array([[4.0]])]
    params = params_with_grads(grads, device, torch.float32)
    total = clip_grad_norm_((p for p in params), max_norm=1.0)
    assert total.dtype is torch.float32 and total.item() == pytest.approx(5.0)
    assert params[0].grad.tolist() == pytest.approx([0.6, 0.0], rel=1e-5)
    assert params[1].grad.tolist()[0] == pytest.approx([0.8], rel=1e-5)
    # a single tensor is accepted; a norm below max_norm leaves the gradient alone
    single = params_with_grads([np.array([0.3, 0.4])], device)[0]
    assert clip_grad_norm_(single, 2.0).item() == pytest.approx(0.5)
    assert single.grad.tolist() == pytest.approx([0.3, 0.4])
    assert clip_grad_norm_([], 1.0).item() == 0.0


def test_clip_grad_norm_nonfinite():
    params = params_with_grads([np.array([1.0, math.inf])], "cpu")
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is non-finite"):
        clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
    assert params[0].grad.tolist() == [1.0, math.inf]  # unchanged by the failed call
    assert math.isinf(clip_grad_norm_(params, 1.0).item())
    nan_params = params_with_grads([np.array([math.nan])], "cpu")
    with pytest.raises(RuntimeError, match="non-finite"):
        clip_grad_norm_(nan_params, 1.0, norm_type=math.inf, error_if_nonfinite=True)


def test_clip_grad_norm_deprecated_alias_and_total_norm():
    params = params_with_grads([np.array([6.0, 8.0])], "cpu")
    with pytest.warns(FutureWarning, match="deprecated in favor of `torch.nn.utils.clip_grad_norm_`"):
        assert clip_grad_norm(params, 5.0).item() == pytest.approx(10.0)
    assert params[0].grad.tolist() == pytest.approx([3.0, 4.0], rel=1e-6)
    assert get_total_norm([torch.tensor([1.0, -2.0]), torch.tensor([2.0])], norm_type=1).item() == 5.0


@given(
    grad_shapes=st.lists(shapes(min_dims=1, max_dims=2, min_side=1, max_side=4), min_size=1, max_size=3),
    clip=st.floats(0.01, 3.0),
    seed=st.integers(0, 2**16),
)
def test_clip_grad_value_matches_numpy(grad_shapes, clip, seed):
    rng = np.random.default_rng(seed)
    grads = [rng.normal(size=s) * 2 for s in grad_shapes]
    params = params_with_grads(grads, "cpu")
    held = [p.grad for p in params]
    assert clip_grad_value_(params, clip) is None
    for p, g, h in zip(params, grads, held):
        assert p.grad is h  # clipped in place
        np.testing.assert_array_equal(p.grad.numpy(), np.clip(g, -clip, clip))


def test_clip_grad_value_on_module(device):
    model = nn.Module()
    model.w = nn.Parameter(torch.tensor([1.0, -2.0, 0.5], device=device))
    (model.w * torch.tensor([10.0, 10.0, -0.1], device=device)).sum().backward()
    clip_grad_value_(model.parameters(), 1.0)
    assert model.w.grad.tolist() == pytest.approx([1.0, 1.0, -0.1])


def test_parameters_to_vector_and_back(device):
    a = nn.Parameter(torch.arange(6.0, device=device).reshape(2, 3))
    b = nn.Parameter(torch.tensor([10.0, 11.0], device=device))
    vec = parameters_to_vector([a, b])
    assert vec.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 11.0]
    # differentiable: a loss of the vector reaches the parameters
    (vec * torch.arange(8.0, device=device)).sum().backward()
    assert a.grad.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and b.grad.tolist() == [6.0, 7.0]
    new = torch.arange(8.0, device=device) * -1
    vector_to_parameters(new, [a, b])
    assert isinstance(a, nn.Parameter) and a.shape == (2, 3) and a.requires_grad
    assert a.tolist() == [[-0.0, -1.0, -2.0], [-3.0, -4.0, -5.0]] and b.tolist() == [-6.0, -7.0]
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        vector_to_parameters([1.0], [a])


def test_parameters_to_vector_of_a_module_round_trip():
    model = nn.Sequential(nn.Module(), nn.Module())
    model[0].w = nn.Parameter(torch.randn(3, 2))
    model[1].w = nn.Parameter(torch.randn(4))
    vec = parameters_to_vector(model.parameters()).detach().clone()
    assert vec.shape == (10,)
    vector_to_parameters(vec * 2, model.parameters())
    np.testing.assert_allclose(parameters_to_vector(model.parameters()).detach().numpy(), vec.numpy() * 2)
