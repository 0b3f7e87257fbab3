"""The meta device: tensors with shape, dtype and strides but no memory; ops infer shapes only."""

from __future__ import annotations

import time

import numpy as np
import pytest

import minitorch as torch
from minitorch._backends.meta_backend import MetaArray


def meta(*shape, dtype=None):
    return torch.ones(*shape, dtype=dtype, device="meta")


def test_creation_allocates_nothing():
    start = time.perf_counter()
    big = torch.empty(100_000, 100_000, device="meta")  # 40 GB if it were real
    assert big.shape == (100_000, 100_000) and big.dtype is torch.float32 and big.is_meta
    assert big.stride() == (100_000, 1) and big.element_size() == 4
    assert big.untyped_storage().nbytes() == 4 * 10**10 and big.data_ptr() == 0
    for make in (torch.zeros, torch.ones, torch.rand, torch.randn):
        assert make(100_000, 100_000, device="meta").shape == (100_000, 100_000)
    assert torch.full((100_000, 100_000), 2, device="meta").dtype is torch.int64
    assert isinstance(big._array, MetaArray)
    assert time.perf_counter() - start < 2.0


def test_factories_on_meta_keep_shapes_and_dtypes():
    assert torch.arange(10, device="meta").shape == (10,) and torch.arange(10, device="meta").dtype is torch.int64
    assert torch.arange(0, 1, 0.25, device="meta").shape == (4,)
    assert torch.linspace(0, 1, 7, device="meta").shape == (7,)
    assert torch.eye(3, 5, device="meta").shape == (3, 5)
    assert torch.tensor([[1, 2]], device="meta").shape == (1, 2)
    assert torch.randint(0, 5, (3, 2), device="meta").dtype is torch.int64
    assert torch.randperm(7, device="meta").shape == (7,)
    assert torch.empty_like(meta(2, 3)).is_meta
    assert torch.normal(meta(4), 1.0).shape == (4,)
    assert torch.bernoulli(meta(2, 2)).shape == (2, 2)
    assert torch.multinomial(meta(3, 5), 2).shape == (3, 2)


def test_elementwise_ops_infer_shapes_and_dtypes():
    big = meta(100_000, 100_000)
    start = time.perf_counter()
    assert (big * 2).shape == big.shape and (big * 2).dtype is torch.float32
    assert (big + meta(100_000)).shape == big.shape
    assert (big > 0).dtype is torch.bool
    assert big.exp().shape == big.shape
    assert (meta(3, dtype=torch.int64) + meta(3, dtype=torch.int32)).dtype is torch.int64
    assert (meta(3, dtype=torch.int64) * 1.5).dtype is torch.float32
    assert (meta(3, dtype=torch.float64) + meta(3)).dtype is torch.float64
    assert (meta(3, dtype=torch.int64) / 2).dtype is torch.float32
    assert time.perf_counter() - start < 2.0
    with pytest.raises(RuntimeError):
        meta(2, 3) + meta(4, 3)


def test_reductions_are_shape_only_even_when_huge():
    big = meta(100_000, 100_000)
    start = time.perf_counter()
    assert big.sum().shape == () and big.sum(0).shape == (100_000,)
    assert big.mean(1, keepdim=True).shape == (100_000, 1)
    assert big.sum((0, 1)).shape == ()
    assert meta(2, 3, 4).sum(-1).shape == (2, 3)
    assert meta(3, dtype=torch.int32).sum().dtype is torch.int64
    assert meta(3, dtype=torch.bool).sum().dtype is torch.int64
    assert (big > 0).all().dtype is torch.bool and big.any(1).shape == (100_000,)
    assert time.perf_counter() - start < 1.0


def test_matmul_is_shape_only():
    start = time.perf_counter()
    big = meta(100_000, 100_000)
    assert (big @ big).shape == (100_000, 100_000)
    assert (meta(3, 1000, 1000) @ meta(1000, 5)).shape == (3, 1000, 5)
    assert (meta(4) @ meta(4, 2)).shape == (2,) and (meta(2, 4) @ meta(4)).shape == (2,)
    assert (meta(4) @ meta(4)).shape == ()
    assert time.perf_counter() - start < 1.0
    with pytest.raises(RuntimeError):
        meta(2, 3) @ meta(4, 5)


def test_views_keep_geometry():
    x = meta(4, 6)
    assert x.t().shape == (6, 4) and x.t().stride() == (1, 6)
    assert x.view(24).shape == (24,) and x.view(-1, 3).shape == (8, 3)
    assert x.reshape(2, 12).shape == (2, 12)
    assert x[1].shape == (6,) and x[1].storage_offset() == 6
    assert x[:, ::2].stride() == (6, 2) and x[1:, 2:].storage_offset() == 8
    assert x.unsqueeze(0).shape == (1, 4, 6) and x.permute(1, 0).stride() == (1, 6)
    assert x.expand(3, 4, 6).stride() == (0, 6, 1)
    assert x.t().contiguous().stride() == (4, 1) and x.t().contiguous().is_meta
    assert meta(100_000, 100_000).view(-1).shape == (10**10,)


def test_autograd_runs_shape_only():
    w = torch.ones(3, 4, device="meta", requires_grad=True)
    loss = (w * 2).sum()
    loss.backward()
    assert w.grad.is_meta and w.grad.shape == (3, 4)


def test_to_meta_and_back():
    x = torch.arange(6.0).view(2, 3)
    m = x.to("meta")
    assert m.is_meta and m.shape == (2, 3) and m.dtype is torch.float32
    assert x.to(device="meta", dtype=torch.float64).dtype is torch.float64
    assert torch.empty_like(m, device="cpu").shape == (2, 3)
    with pytest.raises(RuntimeError, match="Cannot copy out of meta tensor; no data!"):
        m.to("cpu")
    with pytest.raises(RuntimeError, match="Cannot copy out of meta tensor; no data!"):
        m.cpu()


def test_data_access_on_meta_raises_clear_errors():
    one = meta(1)
    with pytest.raises(RuntimeError, match=r"Tensor.item\(\) cannot be called on meta tensors"):
        one.item()
    with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
        one.numpy()
    with pytest.raises(RuntimeError, match="Cannot copy out of meta tensor"):
        one.tolist()
    with pytest.raises(RuntimeError):
        np.asarray(one)
    with pytest.raises(RuntimeError):
        float(one)


def test_mixing_meta_and_cpu_is_an_error_naming_both():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device.*cpu and meta"):
        torch.ones(2) + meta(2)
    with pytest.raises(RuntimeError, match="meta and cpu"):
        meta(2) * torch.ones(2)


def test_meta_array_rules_directly():
    a = MetaArray((2, 3, 4), np.float32)
    assert np.sum(a, axis=(0, 2), keepdims=True).shape == (1, 3, 1)
    assert np.argmax(a).shape == () and np.argmax(a, axis=1).shape == (2, 4)
    assert np.argmax(a).dtype == np.int64
    assert np.mean(MetaArray((3,), np.int32)).dtype == np.float64
    assert np.cumsum(a, axis=1).shape == (2, 3, 4) and np.cumsum(a).shape == (24,)
    assert np.add.reduce(a, axis=1).shape == (2, 4)
    assert np.add.accumulate(a, axis=0).shape == (2, 3, 4)
    assert np.where(MetaArray((3, 1), np.bool_), a, 0.0).shape == (2, 3, 4)
    assert np.concatenate([a, a], axis=1).shape == (2, 6, 4)
    assert np.concatenate([a, a], axis=None).shape == (48,)
    assert np.stack([a, a], axis=-1).shape == (2, 3, 4, 2)
    assert np.matmul(a, MetaArray((4, 5), np.float64)).dtype == np.float64
    assert a.reshape(6, -1).shape == (6, 4)
    with pytest.raises(ValueError):
        a.reshape(5, -1)
    with pytest.raises(ValueError):
        np.concatenate([a, MetaArray((2, 2, 5), np.float32)], axis=1)
    divmod_out = np.divmod(a, 2)
    assert len(divmod_out) == 2 and divmod_out[0].shape == a.shape
