"""Creation (tensor, factories, *_like, new_*) and random sampling with PyTorch's semantics."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch as torch
from minitorch.testing.strategies import shapes

# tensor(): dtype inference ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data, dtype",
    [
        ([1.0, 2.0], torch.float32),
        ([1, 2], torch.int64),
        ([True, False], torch.bool),
        ([1, 2.5], torch.float32),
        ([True, 1], torch.int64),
        (3, torch.int64),
        (2.5, torch.float32),
        (np.ones(2), torch.float64),
        (np.float64(1.5), torch.float64),
        (np.ones(2, dtype=np.int32), torch.int32),
        ([torch.tensor(1), torch.tensor(2)], torch.int64),
        ([torch.tensor(1.0, dtype=torch.float64), 2.0], torch.float64),
        ([torch.tensor(1, dtype=torch.int32), 2], torch.int64),
        ([[torch.tensor(1.0)], [2]], torch.float32),
        ([], torch.float32),
    ],
)
def test_tensor_infers_dtype_like_pytorch(data, dtype, device):
    assert torch.tensor(data, device=device).dtype is dtype


def test_tensor_values_and_shapes(device):
    t = torch.tensor([[1, 2], [3, 4]], device=device)
    assert t.shape == (2, 2) and t.tolist() == [[1, 2], [3, 4]]
    assert torch.tensor(5, device=device).dim() == 0
    assert torch.tensor([torch.tensor(1.5), 2.5], device=device).tolist() == [1.5, 2.5]
    assert torch.tensor([[1, 2]], dtype=torch.float64, device=device).dtype is torch.float64
    assert torch.tensor([], device=device).shape == (0,)


def test_tensor_respects_default_dtype():
    previous = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        assert torch.tensor([1.5]).dtype is torch.float64
        assert torch.zeros(2).dtype is torch.float64
        assert torch.arange(0.0, 1.0, 0.5).dtype is torch.float64
    finally:
        torch.set_default_dtype(previous)


@pytest.mark.parametrize(
    "data, message",
    [
        ([[1, 2], [3]], r"expected sequence of length 2 at dim 1 \(got 1\)"),
        ([[1, 2], 3], r"expected sequence of length 2 at dim 1 \(got int\)"),
        ([[[1], [2]], [[1], [2, 3]]], r"expected sequence of length 1 at dim 2 \(got 2\)"),
        ([1, [2]], "expected a number at dim 1"),
    ],
)
def test_ragged_lists_raise_value_error(data, message):
    with pytest.raises(ValueError, match=message):
        torch.tensor(data)


def test_tensor_rejects_bad_data():
    with pytest.raises(TypeError, match="invalid data type 'str'"):
        torch.tensor("a")
    with pytest.raises(TypeError, match="invalid data type 'str'"):
        torch.tensor([1, "a"])
    with pytest.raises(ValueError, match="too many dimensions 'str'"):  # PyTorch's error for a leading string
        torch.tensor(["a", "b"])
    with pytest.raises(ValueError, match="too many dimensions 'str'"):
        torch.as_tensor([["a"]])
    with pytest.raises(ValueError, match="only one element tensors"):
        torch.tensor([torch.tensor([1, 2]), torch.tensor([3, 4])])


def test_tensor_copies_and_warns_on_tensor_input():
    source = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="clone"):
        copy = torch.tensor(source)
    assert copy.data_ptr() != source.data_ptr() and not copy.requires_grad and copy.is_leaf


def test_requires_grad_on_factories(device):
    for t in (
        torch.tensor([1.0], requires_grad=True, device=device),
        torch.zeros(2, requires_grad=True, device=device),
        torch.ones(2, requires_grad=True, device=device),
        torch.empty(2, requires_grad=True, device=device),
        torch.full((2,), 3.0, requires_grad=True, device=device),
        torch.arange(3.0, requires_grad=True, device=device),
        torch.linspace(0, 1, 3, requires_grad=True, device=device),
        torch.eye(2, requires_grad=True, device=device),
        torch.rand(2, requires_grad=True, device=device),
        torch.randn(2, requires_grad=True, device=device),
        torch.zeros_like(torch.ones(2), requires_grad=True),
        torch.ones(2).new_zeros(3, requires_grad=True),
    ):
        assert t.requires_grad and t.is_leaf and t.grad_fn is None
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        torch.zeros(2, dtype=torch.int64, requires_grad=True)


# factories ----------------------------------------------------------------------------------------


def test_size_arguments(device):
    for args in [(2, 3), ((2, 3),), ([2, 3],), (torch.Size([2, 3]),)]:
        assert torch.zeros(*args, device=device).shape == (2, 3)
    assert torch.zeros(device=device).shape == ()
    assert torch.ones((), device=device).shape == ()
    assert torch.empty(0, 4, device=device).shape == (0, 4)
    with pytest.raises(TypeError, match="must be tuple of ints, but found element of type float"):
        torch.zeros(2.5)
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        torch.ones(2, -1)


# absurd sizes are refused before anything is allocated: RuntimeError, as PyTorch's allocator ---------


@pytest.mark.parametrize("make", [
    lambda size: torch.empty(size),
    lambda size: torch.zeros(size),
    lambda size: torch.ones(size),
    lambda size: torch.full((size,), 1.0),
    lambda size: torch.randn(size),
    lambda size: torch.rand(size),
    lambda size: torch.randint(3, (size,)),
    lambda size: torch.ones(1).new_zeros(size),
])
def test_factories_refuse_absurd_sizes(make):
    with pytest.raises(RuntimeError, match=r"Storage size calculation overflowed with sizes=\[4611686018427387904\]"):
        make(2**62)  # 2**62 elements of 4 or 8 bytes do not fit in int64 bytes
    with pytest.raises(RuntimeError, match=r"can't allocate memory: you tried to allocate \d+ bytes"):
        make(2**50)  # fits in int64, not in any machine's memory


def test_absurd_sizes_other_factories():
    with pytest.raises(RuntimeError, match=r"Storage size calculation overflowed with sizes=\[1099511627776, 1073741824\]"):
        torch.ones(2**40, 2**30)
    with pytest.raises(RuntimeError, match=r"Storage size calculation overflowed with sizes=\[2147483648, 2147483648\]"):
        torch.eye(2**31)
    with pytest.raises(RuntimeError, match=r"arange\(\): can't allocate memory"):
        torch.arange(2**50)
    for make in (lambda: torch.linspace(0, 1, 2**50), lambda: torch.randperm(2**50)):
        with pytest.raises(RuntimeError, match=r"can't allocate memory"):
            make()
    # the meta device holds no data: only the int64 overflow applies
    assert torch.empty(2**60, device="meta").shape == (2**60,)
    with pytest.raises(RuntimeError, match="Storage size calculation overflowed"):
        torch.empty(2**61, device="meta")


def test_zeros_ones_full_eye_values(device):
    assert torch.zeros(2, 2, device=device).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert torch.ones(3, dtype=torch.int32, device=device).tolist() == [1, 1, 1]
    assert torch.eye(3, device=device).tolist() == np.eye(3).tolist()
    assert torch.eye(2, 3, device=device).tolist() == np.eye(2, 3).tolist()
    assert torch.full((2,), 7, device=device).dtype is torch.int64
    assert torch.full((2,), True, device=device).dtype is torch.bool
    assert torch.full((2,), 1.5, device=device).dtype is torch.float32
    assert torch.full((2,), 1.5, dtype=torch.float64, device=device).dtype is torch.float64
    assert torch.full([2], torch.tensor(2.0), device=device).tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0, got -1"):
        torch.eye(-1)


@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((5,), {}),
        ((2, 10, 4), {}),
        ((10, 0, -3), {}),
        ((0, 1, 0.1), {}),
        ((1, 1.3, 0.1), {}),
        ((-1.5, 2.0, 0.5), {}),
        ((0, 5), {"dtype": torch.float64}),
        ((0.0, 5.0, 1.5), {"dtype": torch.int64}),
        ((3, 3), {}),
    ],
)
def test_arange_length_and_values_match_pytorch_rule(args, kwargs):
    t = torch.arange(*args, **kwargs)
    start, end, step = (0, args[0], 1) if len(args) == 1 else (args + (1,))[:3]
    count = max(0, math.ceil((end - start) / step))  # PyTorch computes the length in double
    assert t.shape == (count,)
    expected = [start + i * step for i in range(count)]
    np.testing.assert_allclose(t.tolist(), np.asarray(expected).astype(np.float64 if t.is_floating_point() else np.int64),
                               rtol=1e-6)


def test_arange_dtypes_and_errors(device):
    assert torch.arange(5, device=device).dtype is torch.int64
    assert torch.arange(5.0, device=device).dtype is torch.float32
    assert torch.arange(0, 5, 0.5, device=device).dtype is torch.float32
    assert torch.arange(torch.tensor(3), device=device).tolist() == [0, 1, 2]
    assert torch.arange(2, 10, 4, device=device).tolist() == [2, 6]
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        torch.arange(0, 5, 0)
    with pytest.raises(RuntimeError, match="upper bound and larger bound inconsistent with step sign"):
        torch.arange(0, 5, -1)


def test_linspace_and_logspace(device):
    np.testing.assert_allclose(torch.linspace(2, 10, 4, device=device).tolist(), [2.0, 14 / 3, 22 / 3, 10.0], rtol=1e-6)
    t = torch.linspace(-1, 1, 7, device=device)
    # exact ends; the middle is PyTorch's fused multiply-add -1 + 3 * float32(1/3), not 0
    assert t.tolist()[0] == -1.0 and t.tolist()[-1] == 1.0 and t.tolist()[3] == -2.9802322387695312e-08
    assert torch.linspace(0, 1, 1, device=device).tolist() == [0.0]
    assert torch.linspace(0, 1, 0, device=device).shape == (0,)
    assert torch.linspace(0, 10, 5, dtype=torch.int64, device=device).tolist() == [0, 2, 5, 7, 10]
    np.testing.assert_allclose(torch.logspace(2, 10, 4, device=device).tolist(), np.logspace(2, 10, 4), rtol=1e-6)
    np.testing.assert_allclose(torch.logspace(0, 3, 4, base=2, device=device).tolist(), [1, 2, 4, 8])
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        torch.linspace(0, 1, -1)


def test_like_factories_keep_dtype_device_and_dense_layout(device):
    x = torch.ones(2, 3, dtype=torch.float64, device=device)
    for like in (torch.empty_like, torch.zeros_like, torch.ones_like, torch.rand_like, torch.randn_like):
        y = like(x)
        assert y.shape == x.shape and y.dtype is torch.float64 and y.device == x.device
    assert torch.full_like(x, 7).tolist() == [[7.0] * 3] * 2
    assert torch.zeros_like(x, dtype=torch.int32).dtype is torch.int32
    assert torch.randint_like(x, 10).dtype is torch.float64
    assert torch.ones_like(x.t()).stride() == x.t().stride()  # preserve_format keeps a dense permutation
    assert torch.zeros_like(x[:, ::2]).is_contiguous()  # a gapped view gets a fresh contiguous layout


def test_new_methods_default_to_the_tensors_dtype_and_device(device):
    x = torch.ones(2, dtype=torch.int32, device=device)
    assert x.new_zeros(3).dtype is torch.int32 and x.new_zeros(3).shape == (3,)
    assert x.new_ones((2, 2)).tolist() == [[1, 1], [1, 1]]
    assert x.new_empty(4).shape == (4,)
    assert x.new_full((2,), 5).tolist() == [5, 5] and x.new_full((2,), 5).dtype is torch.int32
    assert x.new_tensor([1.7]).dtype is torch.int32
    assert x.new_zeros(2, dtype=torch.float64).dtype is torch.float64
    assert x.new_tensor([1, 2]).device == x.device


@given(shape=shapes(max_dims=3))
def test_factories_fill_any_shape(shape):
    assert torch.zeros(shape).tolist() == np.zeros(shape).tolist()
    assert torch.full(shape, 2.5).tolist() == np.full(shape, 2.5).tolist()
    assert torch.empty(shape).shape == shape


# random -------------------------------------------------------------------------------------------


def test_manual_seed_reproduces_draws(device):
    torch.manual_seed(0)
    first = [torch.rand(3, device=device).tolist(), torch.randn(2, device=device).tolist(),
             torch.randint(0, 10, (4,), device=device).tolist(), torch.randperm(5, device=device).tolist()]
    torch.manual_seed(0)
    second = [torch.rand(3, device=device).tolist(), torch.randn(2, device=device).tolist(),
              torch.randint(0, 10, (4,), device=device).tolist(), torch.randperm(5, device=device).tolist()]
    assert first == second
    assert torch.initial_seed() == 0
    assert torch.rand(3).tolist() != first[0]


def test_generator_state_round_trip():
    g = torch.Generator().manual_seed(1)
    state = g.get_state()
    assert state.dtype is torch.uint8 and state.dim() == 1
    a = torch.randn(4, generator=g)
    g.set_state(state)
    assert torch.randn(4, generator=g).tolist() == a.tolist()
    assert g.initial_seed() == 1
    other = torch.Generator().manual_seed(1)
    assert torch.randn(4, generator=other).tolist() == a.tolist()
    with pytest.raises(TypeError, match="ByteTensor"):
        g.set_state(torch.zeros(3))
    with pytest.raises(RuntimeError, match="Expected a CPUGeneratorImplState of size 5056"):
        g.set_state(torch.zeros(3, dtype=torch.uint8))


def _patched_state(offset: int, fmt: str, value) -> torch.Tensor:
    payload = bytearray(torch.Generator().manual_seed(9).get_state().numpy().tobytes())
    struct.pack_into(fmt, payload, offset, value)
    return torch.tensor(list(payload), dtype=torch.uint8)


@pytest.mark.parametrize("offset, fmt, value", [
    (8, "<i", 0),  # left: 1..624
    (8, "<i", 625),
    (12, "<i", 0),  # seeded
    (16, "<Q", 625),  # next: at most 624
], ids=["left=0", "left=625", "unseeded", "next=625"])
def test_invalid_mt19937_state_raises_runtime_error_and_changes_nothing(offset, fmt, value):
    g = torch.Generator().manual_seed(5)
    expected = torch.Generator().manual_seed(5)
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        g.set_state(_patched_state(offset, fmt, value))
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        torch.set_rng_state(_patched_state(offset, fmt, value))
    assert g.initial_seed() == 5
    assert torch.rand(3, generator=g).tolist() == torch.rand(3, generator=expected).tolist()


def test_rng_state_type_and_layout_errors_match_pytorch():
    g = torch.Generator()
    with pytest.raises(TypeError, match="expected a torch.ByteTensor, but got list"):
        g.set_state([1, 2])
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
        torch.set_rng_state(torch.zeros(3))
    with pytest.raises(RuntimeError, match="RNG state must be contiguous"):
        torch.set_rng_state(torch.cat([g.get_state(), g.get_state()])[::2])
    state = g.get_state()
    a = torch.rand(3, generator=g)
    g.set_state(state.reshape(1, -1))  # PyTorch accepts any contiguous shape
    assert torch.rand(3, generator=g).tolist() == a.tolist()


def test_global_rng_state_round_trip_and_seed():
    state = torch.get_rng_state()
    a = torch.rand(5)
    torch.set_rng_state(state)
    assert torch.rand(5).tolist() == a.tolist()
    s = torch.seed()
    assert torch.initial_seed() == s
    assert isinstance(torch.default_generator, torch.Generator)
    assert torch.manual_seed(3) is torch.default_generator
    assert torch.Generator().manual_seed(-1).initial_seed() == 2**64 - 1


def test_generator_device_must_match():
    g = torch.Generator()
    with pytest.raises(RuntimeError, match="Expected a 'meta' device type for generator but found 'cpu'"):
        torch.rand(2, device="meta", generator=g)


def test_rand_range_dtypes_and_shapes(device):
    x = torch.rand(2000, device=device)
    values = np.asarray(x.tolist())
    assert x.dtype is torch.float32 and values.min() >= 0 and values.max() < 1
    assert 0.4 < values.mean() < 0.6
    assert torch.rand(2, 3, dtype=torch.float64, device=device).dtype is torch.float64
    assert torch.rand((2, 3), device=device).shape == (2, 3)
    assert float(torch.rand(100, dtype=torch.float16, device=device).max()) < 1
    for draw in (torch.rand, torch.randn):  # PyTorch: no integer kernel, NotImplementedError
        with pytest.raises(NotImplementedError, match="expected a floating point dtype, got torch.int64"):
            draw(2, dtype=torch.int64)
    z = np.asarray(torch.randn(4000, device=device).tolist())
    assert abs(z.mean()) < 0.1 and 0.9 < z.std() < 1.1


def test_randint_forms_and_bounds(device):
    r = torch.randint(3, 7, (100,), device=device)
    assert r.dtype is torch.int64 and set(r.tolist()) <= {3, 4, 5, 6}
    assert set(torch.randint(5, (2, 2), device=device).flatten().tolist()) <= set(range(5))
    assert torch.randint(0, 2, (3,), dtype=torch.float32, device=device).dtype is torch.float32
    with pytest.raises(RuntimeError, match="expects 'from' to be less than 'to'"):
        torch.randint(5, 5, (2,))


def test_randperm_is_a_permutation(device):
    assert sorted(torch.randperm(10, device=device).tolist()) == list(range(10))
    assert torch.randperm(0, device=device).shape == (0,)
    assert torch.randperm(4, dtype=torch.int32, device=device).dtype is torch.int32
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        torch.randperm(-1)


def test_normal_overloads(device):
    torch.manual_seed(0)
    t = torch.normal(2.0, 3.0, size=(4000,), device=device)
    values = np.asarray(t.tolist())
    assert t.dtype is torch.float32 and abs(values.mean() - 2) < 0.3 and 2.7 < values.std() < 3.3
    mean = torch.arange(4.0, device=device)
    out = torch.normal(mean, 1e-6)
    np.testing.assert_allclose(out.tolist(), [0, 1, 2, 3], atol=1e-4)
    assert torch.normal(0.0, torch.ones(3, device=device)).shape == (3,)
    assert torch.normal(torch.zeros(3, device=device), torch.ones(2, 1, device=device)).shape == (2, 3)
    assert torch.normal(torch.zeros(2, dtype=torch.float64, device=device), 1.0).dtype is torch.float64
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
        torch.normal(0.0, -1.0, size=(2,))
    with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
        torch.normal(torch.zeros(2), torch.tensor([1.0, -1.0]))


def test_bernoulli(device):
    p = torch.tensor([0.0, 1.0, 0.0, 1.0], device=device)
    assert torch.bernoulli(p).tolist() == [0.0, 1.0, 0.0, 1.0]
    assert torch.bernoulli(torch.zeros(3, dtype=torch.float64, device=device), 1.0).tolist() == [1.0, 1.0, 1.0]
    g = torch.Generator().manual_seed(5)
    draws = torch.bernoulli(torch.full((4000,), 0.3), generator=g)
    assert 0.25 < float(draws.mean()) < 0.35 and set(draws.tolist()) <= {0.0, 1.0}
    g.manual_seed(5)
    assert torch.bernoulli(torch.full((4000,), 0.3), generator=g).tolist() == draws.tolist()
    assert p.bernoulli().shape == (4,)
    with pytest.raises(RuntimeError, match="p_in >= 0 && p_in <= 1"):
        torch.bernoulli(torch.tensor([1.5]))


def test_multinomial(device):
    w = torch.tensor([0.0, 10.0, 3.0, 0.0], device=device)
    draw = torch.multinomial(w, 2)
    assert draw.dtype is torch.int64 and sorted(draw.tolist()) == [1, 2]  # zero weights are never drawn
    with_replacement = torch.multinomial(w, 500, replacement=True)
    counts = np.bincount(with_replacement.tolist(), minlength=4)
    assert counts[0] == counts[3] == 0 and counts[1] > counts[2] > 0
    rows = torch.multinomial(torch.ones(3, 5, device=device), 5)
    assert rows.shape == (3, 5) and all(sorted(r) == list(range(5)) for r in rows.tolist())
    assert w.multinomial(1).shape == (1,)
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist.size\\(-1\\) samples without replacement"):
        torch.multinomial(w, 5)
    beyond = torch.multinomial(w, 3).tolist()  # PyTorch 2.13: zero weights fill up the draw, without an error
    assert {1, 2} <= set(beyond) and len(set(beyond)) == 3
    with pytest.raises(RuntimeError, match="probability tensor contains either `inf`, `nan` or element < 0"):
        torch.multinomial(torch.tensor([1.0, -1.0]), 1)
    with pytest.raises(RuntimeError, match="sum of probabilities <= 0"):
        torch.multinomial(torch.zeros(3), 1, replacement=True)
    with pytest.raises(RuntimeError, match="prob_dist must be 1 or 2 dim"):
        torch.multinomial(torch.ones(2, 2, 2), 1)


@given(n=st.integers(1, 6), k=st.integers(1, 6), seed=st.integers(0, 2**32))
def test_multinomial_without_replacement_draws_distinct_categories(n, k, seed):
    k = min(k, n)
    g = torch.Generator().manual_seed(seed)
    draw = torch.multinomial(torch.rand(n, generator=g) + 0.1, k, generator=g).tolist()
    assert len(set(draw)) == k and all(0 <= i < n for i in draw)


def test_poisson(device):
    rates = torch.full((3000,), 4.0, device=device)
    draws = torch.poisson(rates)
    assert draws.dtype is torch.float32 and 3.7 < float(draws.mean()) < 4.3



@pytest.mark.parametrize("data, kind", [(None, "NoneType"), ([1.0, None], "NoneType"), ({1: 2}, "dict"),
                                        ([[1], [object()]], "object")])
def test_tensor_of_non_numbers(data, kind):
    with pytest.raises(RuntimeError, match=f"Could not infer dtype of {kind}"):
        torch.tensor(data)



@pytest.mark.parametrize("like", [torch.zeros_like, torch.ones_like, torch.empty_like, torch.rand_like,
                                  torch.randn_like, lambda data: torch.full_like(data, 1.0)])
def test_like_factories_refuse_non_tensors(like):
    with pytest.raises(TypeError, match=r"_like\(\): argument 'input' \(position 1\) must be Tensor, not list"):
        like([1.0, 2.0])
