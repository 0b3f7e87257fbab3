"""Sparse gradients in nn and optim: Embedding/EmbeddingBag(sparse=True), gradient accumulation rules
(SEMANTICS 3.2), and the optimizer matrix of SEMANTICS 3.3 (SP-7, SP-8, SP-9)."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch as torch
import minitorch.nn.functional as F
from minitorch import nn, optim


def dense(x):
    return np.asarray((x.to_dense() if x.is_sparse else x).detach().cpu())


def test_sp7_embedding_sparse_grad(device):
    emb = nn.Embedding(5, 2, sparse=True, device=device)
    emb(torch.tensor([1, 1, 3], device=device)).sum().backward()
    grad = emb.weight.grad
    assert grad.is_sparse and not grad.is_coalesced()
    assert grad._indices().tolist() == [[1, 1, 3]] and grad._values().tolist() == [[1, 1]] * 3
    assert dense(grad).tolist() == [[0, 0], [2, 2], [0, 0], [1, 1], [0, 0]]
    padded = nn.Embedding(5, 2, padding_idx=1, sparse=True, device=device)
    padded(torch.tensor([1, 1, 3], device=device)).sum().backward()
    assert padded.weight.grad._indices().tolist() == [[3]]
    padded.weight.grad = None
    padded(torch.tensor([1, 1], device=device)).sum().backward()
    assert padded.weight.grad._nnz() == 0
    twice = nn.Embedding(5, 2, sparse=True, device=device)
    twice(torch.tensor([1], device=device)).sum().backward()
    twice(torch.tensor([1, 2], device=device)).sum().backward()
    assert twice.weight.grad._indices().tolist() == [[1, 1, 2]] and not twice.weight.grad.is_coalesced()


def test_embedding_sparse_errors_and_matches_dense(device):
    weight = torch.randn(6, 3, dtype=torch.float64, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="embedding_backward: scale_grad_by_freq not supported with sparse"):
        F.embedding(torch.tensor([1], device=device), weight, scale_grad_by_freq=True, sparse=True)
    index = torch.tensor([[0, 2, 2], [5, 0, 1]], device=device)
    upstream = torch.randn(2, 3, 3, dtype=torch.float64, device=device)
    (F.embedding(index, weight, padding_idx=2, sparse=True) * upstream).sum().backward()
    sparse_grad = dense(weight.grad)
    weight.grad = None
    (F.embedding(index, weight, padding_idx=2) * upstream).sum().backward()
    np.testing.assert_allclose(sparse_grad, dense(weight.grad))
    assert torch.autograd.gradcheck(lambda w: F.embedding(index, w, sparse=True), (weight,))


def test_sp8_sparse_then_dense_accumulation(device):
    for order in ("sparse first", "dense first"):
        emb = nn.Embedding(5, 2, sparse=True, device=device)
        steps = [lambda: emb(torch.tensor([1], device=device)).sum().backward(),
                 lambda: emb.weight.sum().backward()]
        for step in steps if order == "sparse first" else steps[::-1]:
            step()
        assert not emb.weight.grad.is_sparse, order
        assert emb.weight.grad.tolist() == [[1, 1], [2, 2], [1, 1], [1, 1], [1, 1]], order


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_matches_dense_lookups(device, mode):
    weight = torch.randn(7, 3, dtype=torch.float64, device=device, requires_grad=True)
    flat = torch.tensor([1, 2, 4, 4, 3, 0, 6], device=device)
    offsets = torch.tensor([0, 2, 2, 5], device=device)  # the second bag is empty
    sparse = mode != "max"
    out = F.embedding_bag(flat, weight, offsets, mode=mode, sparse=sparse, padding_idx=0)
    w = dense(weight)
    bags = [[1, 2], [], [4, 4, 3], [6]]  # index 0 is padding: left out
    reduce = {"sum": np.sum, "mean": np.mean, "max": np.max}[mode]
    expected = np.stack([reduce(w[b], axis=0) if b else np.zeros(3) for b in bags])
    np.testing.assert_allclose(dense(out), expected)
    out.sum().backward()
    assert weight.grad.is_sparse == sparse
    assert dense(weight.grad)[0].tolist() == [0, 0, 0]
    assert torch.autograd.gradcheck(lambda w: F.embedding_bag(flat, w, offsets, mode=mode, sparse=sparse), (weight,))
    bag = nn.EmbeddingBag(7, 3, mode=mode, sparse=sparse, device=device)
    assert bag(torch.tensor([[1, 2], [3, 3]], device=device)).shape == (2, 3)


def test_embedding_bag_per_sample_weights(device):
    weight = torch.randn(5, 2, dtype=torch.float64, device=device, requires_grad=True)
    psw = torch.tensor([0.5, 2.0, -1.0], dtype=torch.float64, device=device, requires_grad=True)
    inp, off = torch.tensor([1, 3, 3], device=device), torch.tensor([0, 1], device=device)
    out = F.embedding_bag(inp, weight, off, mode="sum", per_sample_weights=psw, sparse=True)
    w = dense(weight)
    np.testing.assert_allclose(dense(out), [0.5 * w[1], 2 * w[3] - w[3]])
    assert torch.autograd.gradcheck(
        lambda w, p: F.embedding_bag(inp, w, off, mode="sum", per_sample_weights=p, sparse=True), (weight, psw))
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for mode='sum'"):
        F.embedding_bag(inp, weight, off, mode="mean", per_sample_weights=psw)


def _sparse_step(device, make, steps=3, lookups=([1, 1, 3], [0, 3], [4])):
    torch.manual_seed(0)
    emb = nn.Embedding(6, 2, sparse=True, device=device)
    opt = make(emb.parameters())
    for lookup in lookups[:steps]:
        opt.zero_grad()
        (emb(torch.tensor(lookup, device=device)) ** 2).sum().backward()
        opt.step()
    return emb.weight.detach()


@pytest.mark.parametrize("make_sparse, make_dense", [
    (lambda p: optim.SGD(p, lr=0.1), lambda p: optim.SGD(p, lr=0.1)),
    (lambda p: optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True), lambda p: optim.SGD(p, lr=0.1, momentum=0.9,
                                                                                        nesterov=True)),
    (lambda p: optim.SGD(p, lr=0.1, momentum=0.5, dampening=0.1, maximize=True),
     lambda p: optim.SGD(p, lr=0.1, momentum=0.5, dampening=0.1, maximize=True)),
    (lambda p: optim.Adagrad(p, lr=0.1, lr_decay=0.01), lambda p: optim.Adagrad(p, lr=0.1, lr_decay=0.01)),
])
def test_sparse_optimizers_match_dense(device, make_sparse, make_dense):
    sparse_result = _sparse_step(device, make_sparse)

    class Densify:  # the same optimizer fed the dense equivalent of each gradient
        def __init__(self, params):
            self.params = list(params)
            self.inner = make_dense(self.params)

        def zero_grad(self, set_to_none=True):
            self.inner.zero_grad()

        def step(self):
            for p in self.params:
                p.grad = p.grad.to_dense()
            self.inner.step()

    dense_result = _sparse_step(device, Densify)
    np.testing.assert_allclose(dense(sparse_result), dense(dense_result), rtol=1e-6)


def test_sparse_adam_updates_only_present_rows(device):
    torch.manual_seed(0)
    emb = nn.Embedding(6, 2, sparse=True, device=device)
    start = dense(emb.weight).copy()
    opt = optim.SparseAdam(emb.parameters(), lr=0.1, betas=(0.8, 0.9), eps=1e-6)
    m, v = np.zeros_like(start), np.zeros_like(start)
    expected = start.copy()
    for step, lookup in enumerate(([1, 1, 3], [3, 4]), start=1):
        opt.zero_grad()
        (emb(torch.tensor(lookup, device=device)) ** 2).sum().backward()
        grad = np.zeros_like(start)
        np.add.at(grad, lookup, 2 * expected[lookup])
        rows = sorted(set(lookup))
        m[rows] = 0.8 * m[rows] + 0.2 * grad[rows]
        v[rows] = 0.9 * v[rows] + 0.1 * grad[rows] ** 2
        size = 0.1 * np.sqrt(1 - 0.9**step) / (1 - 0.8**step)
        expected[rows] -= size * m[rows] / (np.sqrt(v[rows]) + 1e-6)
        opt.step()
    np.testing.assert_allclose(dense(emb.weight), expected, rtol=1e-5)
    assert dense(emb.weight)[[0, 2, 5]].tolist() == start[[0, 2, 5]].tolist()


def test_sp9_optimizer_errors(device):
    def failing(make, message, error=RuntimeError):
        emb = nn.Embedding(5, 2, sparse=True, device=device)
        opt = make(emb.parameters())
        emb(torch.tensor([1, 1, 3], device=device)).sum().backward()
        with pytest.raises(error, match=message):
            opt.step()

    failing(lambda p: optim.SGD(p, lr=0.1, weight_decay=0.1),
            r"add\(sparse, dense\) is not supported. Use add\(dense, sparse\) instead.")
    failing(lambda p: optim.Adam(p), "Adam does not support sparse gradients, please consider SparseAdam instead")
    failing(lambda p: optim.AdamW(p), "Adam does not support sparse gradients, please consider SparseAdam instead")
    failing(lambda p: optim.RMSprop(p), "RMSprop does not support sparse gradients")
    weight = nn.Parameter(torch.randn(3, 2, device=device))
    weight.sum().backward()
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, please consider Adam"):
        optim.SparseAdam([weight]).step()
    sparse_param = torch.tensor([[1.0, 2]], device=device).to_sparse()
    with pytest.raises(ValueError, match=r"Sparse params at indices \[\[0, 0\]\]: SparseAdam requires dense"):
        optim.SparseAdam([sparse_param])


def test_example_sparse_embeddings_smoke(capsys, tmp_path, monkeypatch):
    """examples/sparse_embeddings.py trains with sparse gradients; they use far less memory than dense."""
    import importlib
    import pathlib
    import sys

    monkeypatch.syspath_prepend(str(pathlib.Path(__file__).resolve().parents[1] / "examples"))
    sys.modules.pop("sparse_embeddings", None)
    module = importlib.import_module("sparse_embeddings")
    results = module.main(["--steps", "12", "--batch-size", "32", "--no-progress", "--out-dir", str(tmp_path)])
    sparse, dense = results["sparse"], results["dense"]
    assert sparse["losses"][-1] < sparse["losses"][0]
    assert sparse["grad_bytes"] * 10 < dense["grad_bytes"]
    printed = capsys.readouterr().out
    assert "less memory" in printed and "points of test accuracy" in printed
