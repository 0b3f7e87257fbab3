"""Sparse COO tensors: SEMANTICS.md 3 (SP-1..SP-6, SP-10), gradchecks through the sparse ops, and random
sparse tensors (duplicates, empty, hybrid) against their dense equivalents."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import minitorch as torch
import minitorch.sparse as sparse
from minitorch.autograd import gradcheck, gradgradcheck

coo = sparse.sparse_coo_tensor


def t(data, device, **kw):
    return torch.tensor(data, device=device, **kw)


def as_np(x):
    return np.asarray((x.to_dense() if x.is_sparse else x).detach().cpu())


# SEMANTICS 3 acceptance checks --------------------------------------------------------------------------
def test_sp1_to_dense_masked_and_unmasked(device):
    weights = t([[1.0, 2, 3], [4, 5, 6]], device)
    s = coo(t([[0, 1, 1], [2, 0, 2]], device), t([3.0, 4, 5], device), (2, 3), requires_grad=True)
    (s.to_dense() * weights).sum().backward()
    assert s.grad.is_sparse and s.grad.layout is torch.sparse_coo
    assert s.grad._indices().tolist() == [[0, 1, 1], [2, 0, 2]]
    assert s.grad._values().tolist() == [3, 4, 6]
    s.grad = None
    (s.to_dense(masked_grad=False) * weights).sum().backward()
    assert as_np(s.grad).tolist() == [[1, 2, 3], [4, 5, 6]]


def test_sp2_uncoalesced_leaf_and_values_leaf(device):
    s = coo(t([[1, 1]], device), t([3.0, 4], device), (3,), requires_grad=True)
    d = s.to_dense()
    assert d.tolist() == [0, 7, 0]
    (d * t([10.0, 20, 30], device)).sum().backward()
    assert s.grad.is_coalesced() and s.grad.indices().tolist() == [[1]] and s.grad.values().tolist() == [20]
    v = t([3.0, 4], device, requires_grad=True)
    (coo(t([[1, 1]], device), v, (3,)).to_dense() * t([10.0, 20, 30], device)).sum().backward()
    assert v.grad.tolist() == [20, 20]
    v.grad = None
    sparse.sum(coo(t([[1, 1]], device), v, (3,))).backward()
    assert v.grad.tolist() == [1, 1]


def test_sp3_sparse_mm_and_matmul(device):
    a = t([[1.0, 0, 2], [0, 3, 0]], device).to_sparse().requires_grad_()
    b = t([[0.0, 1], [2, 0], [0, 0]], device, requires_grad=True)
    y = sparse.mm(a, b)
    assert y.tolist() == [[0, 1], [6, 0]]
    y.sum().backward()
    assert a.grad.is_sparse
    assert a.grad._indices().tolist() == [[0, 0, 1], [0, 2, 1]] and a.grad._values().tolist() == [1, 0, 2]
    assert b.grad.tolist() == [[1, 1], [3, 3], [2, 2]]
    a.grad = b.grad = None
    (a @ b).sum().backward()
    assert not a.grad.is_sparse and a.grad.tolist() == [[1, 2, 0], [1, 2, 0]]
    assert b.grad.tolist() == [[1, 1], [3, 3], [2, 2]]
    a.grad = None
    torch.mm(a, b).sum().backward()
    assert not a.grad.is_sparse


def test_sp4_sparse_sum(device):
    s = coo(t([[0, 1, 1], [2, 0, 2]], device), t([3.0, 4, 5], device), (2, 3), requires_grad=True)
    r = sparse.sum(s, dim=1)
    assert r.is_sparse and r.to_dense().tolist() == [3, 9]
    (r.to_dense() * t([10.0, 20], device)).sum().backward()
    assert s.grad._values().tolist() == [10, 20, 20]
    s.grad = None
    total = sparse.sum(s)
    assert not total.is_sparse and total.item() == 12.0
    total.backward()
    assert s.grad._values().tolist() == [1, 1, 1]


def test_sp5_coalesce(device):
    c = coo(t([[1, 0, 1], [2, 0, 2]], device), t([3, 4, 5], device)).coalesce()
    assert c.is_coalesced() and c.indices().tolist() == [[0, 1], [0, 2]] and c.values().tolist() == [4, 8]
    assert c.coalesce() is c


def test_sp6_sparse_add_concatenates(device):
    r = coo(t([[1, 1]], device), t([5, 6], device), (2,)) + coo(t([[0, 0]], device), t([7, 8], device), (2,))
    assert not r.is_coalesced()
    assert r._indices().tolist() == [[0, 0, 1, 1]] and r._values().tolist() == [7, 8, 5, 6]


def test_sp10_dense_duplicate_index_grad(device):
    x = t([1.0, 2, 3], device, requires_grad=True)
    x[[0, 0, 1]].sum().backward()
    assert x.grad.tolist() == [2, 1, 0]


# errors and metadata -----------------------------------------------------------------------------------
def test_pytorch_errors(device):
    s = coo(t([[0, 0]], device), t([1.0, 2], device), (3,))
    with pytest.raises(RuntimeError, match="Cannot get indices on an uncoalesced tensor, please call .coalesce"):
        s.indices()
    with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported. Use add\(dense, sparse\)"):
        s + torch.ones(3, device=device)
    with pytest.raises(RuntimeError, match="size is inconsistent with indices: for dim 0, size is 3 but found index 3"):
        coo(t([[3]], device), t([1.0], device), (3,))
    with pytest.raises(RuntimeError, match="indices and values must have same nnz"):
        coo(t([[0, 1]], device), t([1.0], device), (3,))
    with pytest.raises(RuntimeError, match="Sparse tensors do not have strides"):
        s.stride()
    assert (torch.ones(3, device=device) + s).tolist() == [4, 1, 1]


def test_metadata(device):
    s = coo(t([[0, 2], [1, 0]], device), t([[1.0, 2], [3, 4]], device), (3, 2, 2))
    assert s.is_sparse and s.layout is torch.sparse_coo and s.shape == (3, 2, 2)
    assert (s.sparse_dim(), s.dense_dim(), s._nnz()) == (2, 1, 2)
    assert s.dtype is torch.float32 and s.device.type == torch.device(device).type
    dense = torch.zeros(2, device=device)
    assert not dense.is_sparse and dense.layout is torch.strided and dense.to_dense() is dense
    assert "layout=torch.sparse_coo" in repr(s)
    inferred = coo(t([[0, 4]], device), t([1.0, 1], device))
    assert inferred.shape == (5,)


# gradchecks in float64 --------------------------------------------------------------------------------
IDX = [[0, 1, 1, 2, 0], [2, 0, 2, 1, 2]]  # (0, 2) twice: an uncoalesced pattern


def _values(device, n=5, *dense):
    return torch.randn(n, *dense, dtype=torch.float64, device=device, requires_grad=True)


def test_gradcheck_to_dense_coalesce_values(device):
    v = _values(device)
    idx = t(IDX, device)
    assert gradcheck(lambda v: coo(idx, v, (3, 3)).to_dense(), (v,))
    assert gradcheck(lambda v: coo(idx, v, (3, 3)).to_dense(masked_grad=False), (v,))
    assert gradcheck(lambda v: coo(idx, v, (3, 3)).coalesce().values(), (v,))
    assert gradcheck(lambda v: coo(idx, v, (3, 3)).coalesce().to_dense() * 2, (v,))
    assert gradgradcheck(lambda v: (coo(idx, v, (3, 3)).to_dense() ** 2), (v,))


def test_gradcheck_sparse_mm_and_addmm(device):
    v = _values(device)
    idx = t(IDX, device)
    d = torch.randn(3, 4, dtype=torch.float64, device=device, requires_grad=True)
    m = torch.randn(3, 4, dtype=torch.float64, device=device, requires_grad=True)
    assert gradcheck(lambda v, d: sparse.mm(coo(idx, v, (3, 3)), d), (v, d))
    assert gradcheck(lambda v, d: sparse.mm(coo(idx, v, (3, 3)), d.t().t()[:, ::1]), (v, d))
    assert gradcheck(lambda v, d: coo(idx, v, (3, 3)) @ d, (v, d))
    assert gradcheck(lambda m, v, d: sparse.addmm(m, coo(idx, v, (3, 3)), d, beta=0.5, alpha=2), (m, v, d))
    assert gradgradcheck(lambda v, d: sparse.mm(coo(idx, v, (3, 3)), d), (v, d))
    dt = torch.randn(4, 3, dtype=torch.float64, device=device, requires_grad=True)
    assert gradcheck(lambda v, d: sparse.mm(d, coo(idx, v, (3, 3))), (v, dt))


def test_gradcheck_sparse_sum_softmax(device):
    idx = t(IDX, device)
    v = _values(device)
    h = _values(device, 5, 2)
    assert gradcheck(lambda v: sparse.sum(coo(idx, v, (3, 3))), (v,))
    assert gradcheck(lambda v: sparse.sum(coo(idx, v, (3, 3)), 0).to_dense(), (v,))
    assert gradcheck(lambda h: sparse.sum(coo(idx, h, (3, 3, 2)), (1, 2)).to_dense(), (h,))
    assert gradcheck(lambda h: sparse.sum(coo(idx, h, (3, 3, 2)), 2).to_dense(), (h,))
    assert gradcheck(lambda v: sparse.softmax(coo(idx, v, (3, 3)), 1).to_dense(), (v,))
    assert gradcheck(lambda v: sparse.log_softmax(coo(idx, v, (3, 3)), 0).to_dense(), (v,))
    assert gradcheck(lambda h: sparse.softmax(coo(idx, h, (3, 3, 2)), 2).to_dense(), (h,))
    assert gradgradcheck(lambda v: sparse.softmax(coo(idx, v, (3, 3)), 1).to_dense(), (v,))


def test_gradcheck_arithmetic_transpose_mask(device):
    idx = t(IDX, device)
    v, w = _values(device), _values(device)
    d = torch.randn(3, 3, dtype=torch.float64, device=device, requires_grad=True)
    assert gradcheck(lambda v, w: (coo(idx, v, (3, 3)) + coo(idx, w, (3, 3)) * 3).to_dense(), (v, w))
    assert gradcheck(lambda v, d: (coo(idx, v, (3, 3)) * d).to_dense(), (v, d))
    assert gradcheck(lambda v, d: d.t() + coo(idx, v, (3, 3)), (v, d))
    assert gradcheck(lambda v, d: d - coo(idx, v, (3, 3)), (v, d))
    assert gradcheck(lambda v: (-coo(idx, v, (3, 3))).t().to_dense(), (v,))
    assert gradcheck(lambda d: d.sparse_mask(coo(idx, v.detach(), (3, 3))).to_dense(), (d,))
    assert gradcheck(lambda d: d[::2].to_sparse().to_dense(), (d,))


# random sparse tensors vs their dense equivalents ---------------------------------------------------------
@st.composite
def sparse_parts(draw):
    """(indices, values, size) with duplicates, possibly empty, possibly hybrid."""
    sparse_dim = draw(st.integers(1, 2))
    dense_dim = draw(st.integers(0, 1))
    size = tuple(draw(st.lists(st.integers(1, 4), min_size=sparse_dim + dense_dim, max_size=sparse_dim + dense_dim)))
    nnz = draw(st.integers(0, 6))
    cols = [[draw(st.integers(0, size[d] - 1)) for d in range(sparse_dim)] for _ in range(nnz)]
    indices = np.array(cols, dtype=np.int64).reshape(nnz, sparse_dim).T
    values = np.array(draw(st.lists(st.floats(-3, 3), min_size=nnz * int(np.prod(size[sparse_dim:])),
                                    max_size=nnz * int(np.prod(size[sparse_dim:])))))
    return indices, values.reshape((nnz,) + size[sparse_dim:]), size


def dense_of(indices, values, size):
    out = np.zeros(size)
    np.add.at(out, tuple(indices), values)
    return out


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=sparse_parts(), other=st.floats(-2, 2))
@example(parts=(np.zeros((1, 0), np.int64), np.zeros(0), (1,)), other=0.0)
def test_random_sparse_matches_dense(device, parts, other):
    indices, values, size = parts
    expected = dense_of(indices, values, size)
    v = torch.tensor(values, dtype=torch.float64, device=device, requires_grad=True)
    s = coo(torch.tensor(indices, device=device), v, size)
    np.testing.assert_allclose(as_np(s), expected)
    np.testing.assert_allclose(as_np(s.coalesce()), expected)
    np.testing.assert_allclose(as_np(s * other + s), expected * other + expected, atol=1e-9)
    np.testing.assert_allclose(as_np(s.transpose(0, 1) if s.sparse_dim() == 2 else s), expected.swapaxes(0, 1)
                               if s.sparse_dim() == 2 else expected)
    np.testing.assert_allclose(sparse.sum(s).item(), expected.sum())
    np.testing.assert_allclose(as_np(sparse.sum(s, 0)), expected.sum(0))
    back = torch.tensor(expected, device=device).to_sparse(s.sparse_dim())
    np.testing.assert_allclose(as_np(back), expected)
    weights = np.arange(expected.size, dtype=np.float64).reshape(size)
    (s.to_dense() * torch.tensor(weights, device=device)).sum().backward()
    np.testing.assert_allclose(as_np(v.grad), weights[tuple(indices)].reshape(values.shape))


@st.composite
def sparse_matrices(draw):
    """(indices, values, (n, m)) of a 2-D COO matrix with possible duplicates, possibly empty."""
    n, m, nnz = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(0, 6))
    rows = draw(st.lists(st.integers(0, n - 1), min_size=nnz, max_size=nnz))
    cols = draw(st.lists(st.integers(0, m - 1), min_size=nnz, max_size=nnz))
    values = draw(st.lists(st.floats(-3, 3), min_size=nnz, max_size=nnz))
    return np.array([rows, cols], dtype=np.int64).reshape(2, nnz), np.array(values, dtype=np.float64), (n, m)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=sparse_matrices(), k=st.integers(1, 3))
def test_random_sparse_mm_matches_dense(device, parts, k):
    indices, values, size = parts
    expected = dense_of(indices, values, size)
    rhs = np.random.default_rng(0).standard_normal((size[1], k))
    weights = np.random.default_rng(1).standard_normal((size[0], k))
    v = torch.tensor(values, dtype=torch.float64, device=device, requires_grad=True)
    d = torch.tensor(rhs, device=device, requires_grad=True)
    s = coo(torch.tensor(indices, device=device), v, size).requires_grad_()
    s.retain_grad()
    out = sparse.mm(s, d)
    np.testing.assert_allclose(as_np(out), expected @ rhs, atol=1e-12)
    (out * torch.tensor(weights, device=device)).sum().backward()
    np.testing.assert_allclose(as_np(d.grad), expected.T @ weights, atol=1e-12)
    np.testing.assert_allclose(as_np(v.grad), (weights @ rhs.T)[tuple(indices)], atol=1e-12)
    mask = dense_of(indices, np.ones_like(values), size) > 0
    np.testing.assert_allclose(as_np(s.grad), np.where(mask, weights @ rhs.T, 0), atol=1e-12)
