"""Differential tests of the layout of a leaf's ``.grad`` (PyTorch's gradient layout contract): the first gradient
is kept as it is only when nothing else holds it and it is laid out as the leaf; otherwise it is copied into the
leaf's strides (a dense leaf) or row-major (a leaf with gaps). Strides, values, memory sharing with the seed and
the grad_fn under ``create_graph`` must match PyTorch's."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minitorch  # noqa: E402

DATA = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7


# (name, leaf from the data, the function of the leaf whose sum is differentiated)
CASES = [
    ("transposed use", lambda t, d: t.tensor(d[0]), lambda x: x.t() * 2),
    ("transposed leaf", lambda t, d: t.tensor(d[0].T.copy()).t(), lambda x: x * 2),
    ("transposed leaf, row-major gradient", lambda t, d: t.tensor(d[0].T.copy()).t(), lambda x: x.contiguous() * 2),
    ("permuted use", lambda t, d: t.tensor(d), lambda x: x.permute(2, 0, 1).exp()),
    ("permuted leaf", lambda t, d: t.tensor(d).permute(1, 2, 0), lambda x: x.sin()),
    ("leaf with gaps", lambda t, d: t.tensor(d[0])[:, ::2], lambda x: x * 2),
    ("leaf with gaps, transposed use", lambda t, d: t.tensor(d[0])[:, ::2], lambda x: x.t() * 3),
    ("size-1 dim", lambda t, d: t.tensor(d[:1, :1]), lambda x: x.expand(3, 1, 4) * 1),
    ("broadcast sum", lambda t, d: t.tensor(d[0]), lambda x: x),
    ("matmul", lambda t, d: t.tensor(d[0]), lambda x: x.t() @ x),
]


def _leaf(t, make):
    return make(t, DATA).detach().requires_grad_()


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name,make,fn", CASES, ids=[c[0] for c in CASES])
def test_first_grad_layout_matches_pytorch(name, make, fn, create_graph):
    results = []
    for t in (torch, minitorch):
        x = _leaf(t, make)
        fn(x).sum().backward(create_graph=create_graph)
        grad_fn = x.grad.grad_fn.name() if x.grad.grad_fn is not None else None
        # (a size-1 dim's stride says nothing about the layout; PyTorch keeps whatever its kernel gave)
        stride = tuple(s if n != 1 else None for n, s in zip(x.grad.shape, x.grad.stride()))
        results.append((x.grad.shape, stride, x.grad.detach().numpy().copy(), grad_fn))
        x.grad = None
    (shape, stride, values, grad_fn), (m_shape, m_stride, m_values, m_grad_fn) = results
    assert tuple(m_shape) == tuple(shape)
    assert m_stride == stride, name
    np.testing.assert_allclose(m_values, values, rtol=1e-6)
    assert m_grad_fn == grad_fn


@pytest.mark.parametrize("seed_layout", ["row-major", "transposed"])
def test_seed_is_copied_into_the_leafs_layout(seed_layout):
    results = []
    for t in (torch, minitorch):
        x = t.tensor(DATA[0]).requires_grad_()
        seed = t.ones(3, 4) if seed_layout == "row-major" else t.ones(4, 3).t()
        (x * 1).backward(seed)
        results.append((x.grad.stride(), x.grad.data_ptr() == seed.data_ptr()))
    assert results[0] == results[1] == ((4, 1), False)


def test_later_gradients_accumulate_in_the_first_ones_layout():
    results = []
    for t in (torch, minitorch):
        x = t.tensor(DATA[0].T.copy()).t().detach().requires_grad_()
        (x * 2).sum().backward()
        first = x.grad
        (x.contiguous() * 3).sum().backward()
        results.append((x.grad.stride(), x.grad is first, x.grad.numpy().copy()))
    assert results[0][:2] == results[1][:2]
    np.testing.assert_array_equal(results[0][2], results[1][2])


@pytest.mark.parametrize("size,stride", [((2, 3), (1, 2)), ((2, 3), (0, 1)), ((0, 3), (3, 1)), ((3,), (2,)), ((), ())])
def test_empty_strided_matches_pytorch(size, stride):
    a, b = torch.empty_strided(size, stride), minitorch.empty_strided(size, stride)
    assert (tuple(b.shape), b.stride()) == (tuple(a.shape), a.stride())
    assert b.untyped_storage().nbytes() == a.untyped_storage().nbytes()
    assert b.dtype is minitorch.float32
    c = minitorch.ones(1, dtype=minitorch.float64).new_empty_strided(size, stride)
    assert c.dtype is minitorch.float64 and c.stride() == a.stride()


@pytest.mark.parametrize("size,stride", [((2, 3), (1,)), ((2, 3), (-1, 1))])
def test_empty_strided_errors_match_pytorch(size, stride):
    with pytest.raises(RuntimeError) as expected:
        torch.empty_strided(size, stride)
    with pytest.raises(RuntimeError) as got:
        minitorch.empty_strided(size, stride)
    assert str(got.value) == str(expected.value)


def _odd_view(t, shape, rng):
    """A row-major tensor of ``shape`` whose dims of size 1 carry arbitrary strides (an as_strided view)."""
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc if n != 1 else int(rng.integers(1, 3)))
        acc *= n
    base = t.arange(float(max(acc, 1) + 8))
    return base.as_strided(shape, tuple(reversed(strides)))


def test_broadcast_output_layout_follows_tensor_iterator():
    """An elementwise op's output dims are ordered as PyTorch's TensorIterator orders them, which reads the
    strides of size-1 dims when operands broadcast (fuzzer seed 432184); compared on dims of size > 1."""
    rng = np.random.default_rng(0)
    checked = 0
    cases = [((1, 1, 4), (2, 1))]  # the fuzzer's
    for _ in range(299):
        shape = tuple(int(n) for n in rng.choice([1, 2, 4], size=int(rng.integers(2, 5))))
        other = tuple(int(n) for n in rng.choice([1, 2, 4], size=int(rng.integers(1, len(shape) + 1))))
        cases.append((shape, other))
    for shape, other in cases:
        if any(m != n and 1 not in (m, n) for m, n in zip(shape[::-1], other[::-1])):
            continue
        seed = int(rng.integers(1 << 30))
        strides = []
        for t in (torch, minitorch):
            r = np.random.default_rng(seed)
            a, b = _odd_view(t, shape, r), _odd_view(t, other, r)
            for out in (a + b, b * a, a + 2, t.maximum(a, b)):
                strides.append(tuple(s for s, n in zip(out.stride(), out.shape) if n > 1))
        half = len(strides) // 2
        assert strides[half:] == strides[:half], (shape, other)
        checked += 1
    assert checked > 100
