"""Differential test: after the same seed, minitorch's CPU random numbers are PyTorch's, bit for bit.

Every comparison checks the values' bytes, the dtype, and the generator state afterwards (so a draw that
consumed a different number of words fails even when its values agree).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minitorch  # noqa: E402

SEEDS = [0, 1, 42, -5, 2**32 + 17, 2**64 - 1]
SIZES = [1, 15, 16, 17, 1000, 100003]


def assert_same(ours, theirs, what=""):
    a, b = ours.detach().numpy(), theirs.detach().numpy()
    assert str(ours.dtype) == str(theirs.dtype), what
    assert a.shape == b.shape, what
    if a.dtype.kind == "f":
        a, b = a.view(f"u{a.dtype.itemsize}"), b.view(f"u{b.dtype.itemsize}")
    mismatched = np.flatnonzero(a != b)
    assert mismatched.size == 0, f"{what}: {mismatched.size} of {a.size} differ, first at {mismatched[:5]}"


def assert_same_state(ours=None, theirs=None):
    ours = minitorch.get_rng_state() if ours is None else ours
    theirs = torch.get_rng_state() if theirs is None else theirs
    assert ours.numpy().tobytes() == theirs.numpy().tobytes()


def both(seed):
    torch.manual_seed(seed)
    minitorch.manual_seed(seed)


FACTORIES = {
    "rand": lambda lib, n: lib.rand(n),
    "rand64": lambda lib, n: lib.rand(n, dtype=lib.float64),
    "randn": lambda lib, n: lib.randn(n),
    "randn64": lambda lib, n: lib.randn(n, dtype=lib.float64),
    "randint": lambda lib, n: lib.randint(-3, 10, (n,)),
    "randint_wide": lambda lib, n: lib.randint(0, 2**40, (n,)),
    "randperm": lambda lib, n: lib.randperm(n),
    "uniform_": lambda lib, n: lib.empty(n).uniform_(-0.3, 0.7),
    "uniform_64": lambda lib, n: lib.empty(n, dtype=lib.float64).uniform_(-2.5, 1.25),
    "normal_": lambda lib, n: lib.empty(n).normal_(0.5, 0.02),
    "normal_64": lambda lib, n: lib.empty(n, dtype=lib.float64).normal_(-1.0, 3.0),
    "bernoulli_": lambda lib, n: lib.empty(n).bernoulli_(0.3),
    "exponential_": lambda lib, n: lib.empty(n).exponential_(1.5),
}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_factories_match_pytorch_for_every_size(name, seed):
    make = FACTORIES[name]
    sizes = SIZES if seed in (0, -5) else SIZES[:-1]  # the largest size for two seeds keeps CI short
    both(seed)
    for n in sizes:
        assert_same(make(minitorch, n), make(torch, n), f"{name}({n})")
    assert_same_state()


def test_seed_wraps_and_initial_seed_is_kept():
    for seed in (-5, 2**32 + 17, 2**64 - 1, 7.9):
        both(seed)
        assert minitorch.initial_seed() == torch.initial_seed()
        assert_same_state()
    for bad in (2**64, -(2**63) - 1):
        with pytest.raises(ValueError):
            torch.manual_seed(bad)
        with pytest.raises(ValueError):
            minitorch.manual_seed(bad)


def test_a_chain_of_mixed_calls_shares_the_cached_normal():
    both(3)
    for i, n in enumerate([1, 3, 15, 2, 16, 5, 17, 1, 40, 7]):
        for name in ("randn", "normal_64", "rand", "randint", "randn64", "bernoulli_", "randperm"):
            assert_same(FACTORIES[name](minitorch, n), FACTORIES[name](torch, n), f"step {i}: {name}({n})")
        assert_same_state()


def test_generator_objects_and_state_round_trips():
    ours, theirs = minitorch.Generator().manual_seed(11), torch.Generator().manual_seed(11)
    assert_same(minitorch.randn(5, generator=ours), torch.randn(5, generator=theirs))  # caches a normal
    assert_same_state(ours.get_state(), theirs.get_state())
    state = theirs.get_state()
    ours.set_state(minitorch.tensor(state.numpy()))  # PyTorch's bytes restore minitorch's generator
    assert_same(minitorch.randn(3, generator=ours), torch.randn(3, generator=theirs))
    assert_same(minitorch.rand(20, generator=ours), torch.rand(20, generator=theirs))
    fresh = minitorch.Generator()
    assert fresh.initial_seed() == torch.Generator().initial_seed() == 67280421310721
    assert_same_state(fresh.get_state(), torch.Generator().get_state())
    assert_same(minitorch.randn(20, generator=fresh), torch.randn(20, generator=torch.Generator()))
    minitorch.manual_seed(0)
    torch.set_rng_state(torch.tensor(minitorch.get_rng_state().numpy()))  # and minitorch's restore PyTorch's
    assert_same(minitorch.randn(7), torch.randn(7))


def test_fork_rng_restores_the_default_state():
    both(8)
    with minitorch.random.fork_rng(), torch.random.fork_rng():
        minitorch.rand(5), torch.rand(5)
    assert_same(minitorch.rand(4), torch.rand(4))


@pytest.mark.parametrize("seed", [0, 5])
def test_dtypes(seed):
    both(seed)
    for lib_dtype in ("float16", "float32", "float64"):
        for n in (4, 17, 1000):
            for make in (lambda lib, d: lib.rand(n, dtype=d), lambda lib, d: lib.randn(n, dtype=d),
                         lambda lib, d: lib.empty(n, dtype=d).uniform_(-2, 3),
                         lambda lib, d: lib.empty(n, dtype=d).normal_(0.2, 2.0)):
                assert_same(make(minitorch, getattr(minitorch, lib_dtype)), make(torch, getattr(torch, lib_dtype)),
                            f"{lib_dtype} {n}")
    for name in ("int64", "int32", "int16", "int8", "uint8", "float16", "float32", "float64", "bool"):
        assert_same(minitorch.empty(50, dtype=getattr(minitorch, name)).random_(),
                    torch.empty(50, dtype=getattr(torch, name)).random_(), f"random_ {name}")
    for name in ("int32", "int16", "float32", "float64"):
        assert_same(minitorch.randint(0, 100, (50,), dtype=getattr(minitorch, name)),
                    torch.randint(0, 100, (50,), dtype=getattr(torch, name)), f"randint {name}")
    for span in (2**28 - 1, 2**28, 2**32, 2**62):  # 32-bit draws below 2**28, 64-bit from there
        assert_same(minitorch.randint(-5, span - 5, (30,)), torch.randint(-5, span - 5, (30,)), f"span {span}")
    assert_same(minitorch.empty(30, dtype=minitorch.int64).random_(7),
                torch.empty(30, dtype=torch.int64).random_(7))
    assert_same(minitorch.empty(30).random_(-4, 9), torch.empty(30).random_(-4, 9))
    assert_same(minitorch.empty(30, dtype=minitorch.int16).random_(5, None),
                torch.empty(30, dtype=torch.int16).random_(5, None))
    assert_same(minitorch.empty(30).random_(2, to=9), torch.empty(30).random_(2, to=9))
    assert_same(minitorch.empty(30).random_(to=9), torch.empty(30).random_(to=9))
    assert_same_state()


def test_distributions_and_probability_tensors():
    both(21)
    p32, p64 = torch.rand(300), torch.rand(300, dtype=torch.float64)
    mp32, mp64 = minitorch.tensor(p32.numpy()), minitorch.tensor(p64.numpy())
    minitorch.set_rng_state(minitorch.tensor(torch.get_rng_state().numpy()))
    assert_same(minitorch.bernoulli(mp32), torch.bernoulli(p32))
    assert_same(minitorch.bernoulli(mp64), torch.bernoulli(p64))
    assert_same(minitorch.bernoulli(mp32, 0.25), torch.bernoulli(p32, 0.25))
    assert_same(minitorch.bernoulli(mp64.reshape(20, 15).t()), torch.bernoulli(p64.reshape(20, 15).t()))
    assert_same(minitorch.zeros(2, 300).bernoulli_(mp64), torch.zeros(2, 300).bernoulli_(p64))
    assert_same(minitorch.empty(40).cauchy_(1.0, 2.0), torch.empty(40).cauchy_(1.0, 2.0))
    assert_same(minitorch.empty(40, dtype=minitorch.float64).log_normal_(0.5, 0.3),
                torch.empty(40, dtype=torch.float64).log_normal_(0.5, 0.3))
    assert_same(minitorch.empty(40).geometric_(0.3), torch.empty(40).geometric_(0.3))
    rates = torch.tensor([0.0, 0.5, 3.0, 9.9, 10.0, 25.0, 300.0] * 4)
    assert_same(minitorch.poisson(minitorch.tensor(rates.numpy())), torch.poisson(rates))
    assert_same_state()


def _binomial_parameters(rng):
    """Counts and probabilities over both samplers and every edge: count 0, prob 0/1, the prob > 0.5 mirror,
    count * prob just below and at 10, fractional and huge counts."""
    counts = np.concatenate([rng.integers(0, 40, 400), rng.integers(20, 5000, 400), 10 ** (rng.random(200) * 17),
                             rng.random(100) * 60, [0, 0, 7, 7, 20, 20, 20, 25, 1e6, 2**24 + 1, 1e30, -3]])
    probs = np.concatenate([rng.random(1100), [0.3, 0, 0, 1, 0.5, 0.49999, 0.50001, 0.4, 1e-9, 0.5, 0.25, 0.5]])
    return counts, probs


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binomial_is_pytorchs_sampler(dtype):
    """torch.binomial and Binomial.sample: PyTorch's sample_binomial (BTRS, inversion, the mirror) draw for
    draw, values and generator state."""
    both(8)
    counts, probs = _binomial_parameters(np.random.default_rng(2))
    tdtype, mdtype = getattr(torch, dtype), getattr(minitorch, dtype)
    for _ in range(2):  # the second call starts where the first left the stream
        assert_same(minitorch.binomial(minitorch.tensor(counts, dtype=mdtype), minitorch.tensor(probs, dtype=mdtype)),
                    torch.binomial(torch.tensor(counts, dtype=tdtype), torch.tensor(probs, dtype=tdtype)))
        assert_same_state()
    total, p = torch.tensor([[3.0], [40.0], [800.0]], dtype=tdtype), torch.tensor([0.1, 0.6, 0.97], dtype=tdtype)
    mtotal, mp = minitorch.tensor(total.numpy()), minitorch.tensor(p.numpy())
    assert_same(minitorch.distributions.Binomial(mtotal, probs=mp).sample((5,)),
                torch.distributions.Binomial(total, probs=p).sample((5,)))
    assert_same(minitorch.binomial(mtotal, mp), torch.binomial(total, p))  # broadcast to (3, 3)
    assert_same(minitorch.rand(5, dtype=mdtype), torch.rand(5, dtype=tdtype))
    assert_same_state()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binomial_with_one_parameter_pair_is_pytorchs(dtype):
    """One (count, prob) for every element runs vectorised (BTRS pairs, inversion by cumulative sums of the
    geometric gaps); values and state are still PyTorch's, over several blocks of uniforms."""
    both(12)
    tdtype, mdtype = getattr(torch, dtype), getattr(minitorch, dtype)
    for count, prob, n in ((10.0, 0.3, 40000), (150.0, 0.3, 70000), (5000.0, 0.9, 300), (7.0, 0.5, 60000),
                           (3e7 + 1, 0.999, 200), (1e9, 1e-8, 500), (33.0, 0.0, 100), (1.0, 0.9999, 64)):
        assert_same(minitorch.binomial(minitorch.full((n,), count, dtype=mdtype), minitorch.full((n,), prob, dtype=mdtype)),
                    torch.binomial(torch.full((n,), count, dtype=tdtype), torch.full((n,), prob, dtype=tdtype)),
                    f"{count} {prob}")
        assert_same_state()
    assert_same(minitorch.distributions.Binomial(20, probs=minitorch.tensor(0.4, dtype=mdtype)).sample((5000,)),
                torch.distributions.Binomial(20, probs=torch.tensor(0.4, dtype=tdtype)).sample((5000,)))
    for rate in (10.0, 37.5, 1e12):  # Poisson's PTRS with one rate: vectorised the same way
        assert_same(minitorch.poisson(minitorch.full((30000,), rate, dtype=mdtype)),
                    torch.poisson(torch.full((30000,), rate, dtype=tdtype)), f"poisson {rate}")
        assert_same_state()
    assert_same(minitorch.rand(3), torch.rand(3))
    assert_same_state()


def test_binomial_edges_and_errors_are_pytorchs():
    both(0)
    count = torch.tensor([float("inf"), float("inf"), 5.0, -float("inf"), 0.0])
    prob = torch.tensor([0.5, 0.9, float("inf"), 0.2, float("nan")])
    assert_same(minitorch.binomial(minitorch.tensor(count.numpy()), minitorch.tensor(prob.numpy())),
                torch.binomial(count, prob))
    assert_same_state()
    for count, prob in ((minitorch.tensor([3, 4]), minitorch.tensor([0.5, 0.5])),
                        (minitorch.tensor([3.0]), minitorch.tensor([1]))):
        with pytest.raises(ValueError, match="binomial only supports floating-point dtypes"):
            minitorch.binomial(count, prob)
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        minitorch.binomial(minitorch.tensor([3.0]), minitorch.tensor([0.5], dtype=minitorch.float64))
    with pytest.raises(NotImplementedError, match="binomial_cpu"):
        minitorch.binomial(minitorch.tensor([3.0]).half(), minitorch.tensor([0.5]).half())
    with pytest.raises(TypeError):
        minitorch.binomial(3.0, minitorch.tensor([0.5]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gamma_edges_are_pytorchs(dtype):
    """alpha NaN (the squeeze accepts a NaN, which std::max turns into the smallest normal), inf and 0."""
    both(2)
    alphas = [float("nan"), 2.0, float("inf"), 0.0, 1e-30, 0.5] * 3
    tdtype, mdtype = getattr(torch, dtype), getattr(minitorch, dtype)
    assert_same(minitorch.distributions.Gamma(minitorch.tensor(alphas, dtype=mdtype), 1.0, validate_args=False).sample(),
                torch.distributions.Gamma(torch.tensor(alphas, dtype=tdtype), 1.0, validate_args=False).sample())
    assert_same_state()


def test_poisson_edges_are_pytorchs():
    """An infinite or huge rate: the C++ casts ``floor(...)`` to int64_t, out of range it is INT64_MIN; a NaN
    rate is refused."""
    both(1)
    for rates in ([float("inf"), 3.0, 0.0, 1e25], [float("inf")] * 300, [1e25] * 300):
        assert_same(minitorch.poisson(minitorch.tensor(rates, dtype=minitorch.float64)),
                    torch.poisson(torch.tensor(rates, dtype=torch.float64)))
        assert_same_state()
    with pytest.raises(RuntimeError, match="invalid Poisson rate"):
        torch.poisson(torch.tensor([float("nan")]))
    with pytest.raises(RuntimeError, match="invalid Poisson rate"):
        minitorch.poisson(minitorch.tensor([float("nan")]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gamma_and_poisson_over_many_draws(dtype):
    """Many elements (several blocks of drawn-ahead uniforms), tiny to huge parameters: rates up to 1e16
    show whether ``k * log(rate) - rate`` is fused (it is not)."""
    both(9)
    rng = np.random.default_rng(3)
    alphas = np.concatenate([rng.random(20000) * 3, rng.random(5000) * 1e-3, 10 ** (rng.random(15000) * 14 - 2)])
    rates = np.concatenate([rng.random(20000) * 30, 10 ** (rng.random(20000) * 16)])
    tdtype, mdtype = getattr(torch, dtype), getattr(minitorch, dtype)
    ta, tr = torch.tensor(alphas, dtype=tdtype), torch.tensor(rates, dtype=tdtype)
    ma, mr = minitorch.tensor(ta.numpy()), minitorch.tensor(tr.numpy())
    assert_same(minitorch.distributions.Gamma(ma, 1.0).sample(), torch.distributions.Gamma(ta, 1.0).sample())
    assert_same_state()
    assert_same(minitorch.poisson(mr), torch.poisson(tr))
    assert_same_state()
    assert_same(minitorch.randn(3, dtype=mdtype), torch.randn(3, dtype=tdtype))  # the cached normal carries on
    assert_same_state()


def test_normal_overloads():
    both(4)
    mean, std = torch.rand(3, 40), torch.rand(40, dtype=torch.float64)
    mmean, mstd = minitorch.tensor(mean.numpy()), minitorch.tensor(std.numpy())
    minitorch.set_rng_state(minitorch.tensor(torch.get_rng_state().numpy()))
    assert_same(minitorch.normal(mmean, mstd), torch.normal(mean, std))
    assert_same(minitorch.normal(mmean, 0.5), torch.normal(mean, 0.5))
    assert_same(minitorch.normal(-1.0, mstd), torch.normal(-1.0, std))
    assert_same(minitorch.normal(2.0, 3.0, (5, 7)), torch.normal(2.0, 3.0, (5, 7)))
    assert_same(minitorch.normal(2.0, 3.0, (2,)), torch.normal(2.0, 3.0, (2,)))
    assert_same_state()


def test_non_contiguous_tensors_draw_in_memory_order():
    both(6)
    for shape in ((8, 5), (2, 3, 4)):
        for name in ("uniform_", "normal_", "bernoulli_", "exponential_"):
            ours, theirs = minitorch.zeros(shape).transpose(0, -1), torch.zeros(shape).transpose(0, -1)
            args = {"uniform_": (-1, 1), "normal_": (0.0, 2.0), "bernoulli_": (0.4,), "exponential_": (2.0,)}[name]
            getattr(ours, name)(*args)
            getattr(theirs, name)(*args)
            assert_same(ours, theirs, f"{name} {shape}")
        assert_same(minitorch.rand_like(minitorch.zeros(shape).transpose(0, 1)),
                    torch.rand_like(torch.zeros(shape).transpose(0, 1)))
        assert_same(minitorch.randn_like(minitorch.zeros(shape)), torch.randn_like(torch.zeros(shape)))
        assert_same(minitorch.randint_like(minitorch.zeros(shape), 3, 9), torch.randint_like(torch.zeros(shape), 3, 9))
    assert_same_state()


@pytest.mark.parametrize("replacement", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multinomial(replacement, dtype):
    both(13)
    weights = torch.rand(4, 60, dtype=getattr(torch, dtype)) + 0.01
    weights[1, 7] = 0
    ours = minitorch.tensor(weights.numpy())
    minitorch.set_rng_state(minitorch.tensor(torch.get_rng_state().numpy()))
    for n in (1, 3, 60) if not replacement else (1, 2, 500):
        assert_same(minitorch.multinomial(ours, n, replacement), torch.multinomial(weights, n, replacement), n)
        assert_same(minitorch.multinomial(ours[0], n, replacement), torch.multinomial(weights[0], n, replacement), n)
    assert_same_state()


def test_dropout_masks():
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5, 6)).astype(np.float32)
    for p in (0.1, 0.5, 0.37):
        for name, shape in (("dropout", x.shape), ("alpha_dropout", x.shape), ("feature_alpha_dropout", x.shape),
                            ("dropout1d", x.shape[2:]), ("dropout2d", x.shape[1:]), ("dropout3d", x.shape)):
            both(p * 100)
            data = x.reshape(-1)[: math.prod(shape)].reshape(shape)
            assert_same(getattr(minitorch.nn.functional, name)(minitorch.tensor(data), p, training=True),
                        getattr(torch.nn.functional, name)(torch.tensor(data), p, training=True), f"{name} p={p}")
    both(3)  # a transposed input: PyTorch's mask is empty_like(input), filled in memory order
    assert_same(minitorch.nn.functional.dropout(minitorch.tensor(x[0, 0, 0]).t(), 0.3),
                torch.nn.functional.dropout(torch.tensor(x[0, 0, 0]).t(), 0.3))
    both(2)
    assert_same(minitorch.nn.Dropout(0.2)(minitorch.ones(100, dtype=minitorch.float64)),
                torch.nn.Dropout(0.2)(torch.ones(100, dtype=torch.float64)))
    for dtype in ("float32", "float64"):
        data = x.astype(dtype)
        assert_same(minitorch.nn.functional.rrelu(minitorch.tensor(data), 0.1, 0.4, training=True),
                    torch.nn.functional.rrelu(torch.tensor(data), 0.1, 0.4, training=True), f"rrelu {dtype}")
    assert_same_state()


INITS = {
    "uniform_": lambda lib, t: lib.nn.init.uniform_(t, -0.2, 0.9),
    "normal_": lambda lib, t: lib.nn.init.normal_(t, 0.1, 0.5),
    "kaiming_uniform_": lambda lib, t: lib.nn.init.kaiming_uniform_(t, a=math.sqrt(5)),
    "kaiming_uniform_fan_out": lambda lib, t: lib.nn.init.kaiming_uniform_(t, mode="fan_out", nonlinearity="relu"),
    "kaiming_normal_": lambda lib, t: lib.nn.init.kaiming_normal_(t),
    "xavier_uniform_": lambda lib, t: lib.nn.init.xavier_uniform_(t, gain=1.5),
    "xavier_normal_": lambda lib, t: lib.nn.init.xavier_normal_(t),
    "trunc_normal_": lambda lib, t: lib.nn.init.trunc_normal_(t, 0.0, 0.02),
    "sparse_": lambda lib, t: lib.nn.init.sparse_(t, 0.3),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(INITS))
@pytest.mark.parametrize("shape", [(3, 5), (16, 8, 3, 3), (7, 200)])
def test_init_functions(name, shape, dtype):
    if name == "sparse_" and len(shape) != 2:
        return
    both(17)
    assert_same(INITS[name](minitorch, minitorch.empty(shape, dtype=getattr(minitorch, dtype))),
                INITS[name](torch, torch.empty(shape, dtype=getattr(torch, dtype))), name)
    assert_same_state()


def test_orthogonal_init_matches_to_rounding():
    both(2)
    ours = minitorch.nn.init.orthogonal_(minitorch.empty(6, 10), gain=2.0)
    theirs = torch.nn.init.orthogonal_(torch.empty(6, 10), gain=2.0)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-5)  # LAPACK's QR differs in the last bits
    assert_same_state()


MODULES = {
    "Linear": lambda nn: nn.Linear(20, 7),
    "Bilinear": lambda nn: nn.Bilinear(4, 5, 3),
    "Conv1d": lambda nn: nn.Conv1d(3, 6, 5),
    "Conv2d": lambda nn: nn.Conv2d(3, 8, 3, groups=1),
    "ConvTranspose2d": lambda nn: nn.ConvTranspose2d(4, 6, 3),
    "Embedding": lambda nn: nn.Embedding(50, 16, padding_idx=2),
    "RNN": lambda nn: nn.RNN(8, 12, num_layers=2),
    "LSTM": lambda nn: nn.LSTM(8, 12, bidirectional=True),
    "GRU": lambda nn: nn.GRU(8, 12),
    "LayerNorm": lambda nn: nn.LayerNorm(10),
    "MultiheadAttention": lambda nn: nn.MultiheadAttention(16, 4),
    "TransformerEncoderLayer": lambda nn: nn.TransformerEncoderLayer(16, 4, dim_feedforward=32),
    "Transformer": lambda nn: nn.Transformer(16, 4, 1, 1, 32, batch_first=True),
    "Conv3d": lambda nn: nn.Conv3d(2, 4, 3),
    "LSTM_proj": lambda nn: nn.LSTM(4, 6, proj_size=3, num_layers=2),
    "MultiheadAttention_kdim": lambda nn: nn.MultiheadAttention(8, 2, kdim=5, vdim=6, add_bias_kv=True),
    "cells": lambda nn: nn.ModuleList([nn.LSTMCell(4, 6), nn.GRUCell(4, 6), nn.RNNCell(4, 6)]),
    "norms": lambda nn: nn.ModuleList([nn.BatchNorm2d(5), nn.GroupNorm(2, 4), nn.PReLU(3), nn.EmbeddingBag(10, 3)]),
    "Sequential": lambda nn: nn.Sequential(nn.Linear(5, 9), nn.ReLU(), nn.Linear(9, 2), nn.Embedding(4, 3)),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_initialisation_matches_pytorch(name):
    both(123)
    ours, theirs = MODULES[name](minitorch.nn), MODULES[name](torch.nn)
    our_state, their_state = ours.state_dict(), theirs.state_dict()
    assert list(our_state) == list(their_state)
    for key in their_state:
        assert_same(our_state[key], their_state[key], key)
    assert_same_state()


@pytest.mark.parametrize("make", [
    lambda lib: lib.randint(5, 5, (2,)),
    lambda lib: lib.randint(0, 300, (2,), dtype=lib.uint8),
    lambda lib: lib.empty(3).uniform_(1, 0),
    lambda lib: lib.empty(3).normal_(0, -1),
    lambda lib: lib.randperm(-1),
    lambda lib: lib.empty(3).exponential_(-1),
    lambda lib: lib.empty(3).geometric_(0),
    lambda lib: lib.empty(3).bernoulli_(1.5),
    lambda lib: lib.bernoulli(lib.tensor([2.0])),
    lambda lib: lib.empty(3, dtype=lib.int64).normal_(),
    lambda lib: lib.multinomial(lib.tensor([1.0, -1.0]), 2, True),
    lambda lib: lib.multinomial(lib.tensor([1.0, -1.0]), 1),
    lambda lib: lib.multinomial(lib.tensor([0.0, 0.0]), 1),
    lambda lib: lib.multinomial(lib.ones(3), 4),
    lambda lib: lib.multinomial(lib.ones(3), 0),
    lambda lib: lib.multinomial(lib.ones(2, 2, 2), 1),
    lambda lib: lib.Generator().set_state(lib.zeros(3, dtype=lib.uint8)),
    lambda lib: lib.Generator().set_state(lib.zeros(5056, dtype=lib.uint8)),
    lambda lib: lib.Generator().set_state(lib.zeros(3)),
])
def test_errors_have_pytorch_types(make):
    with pytest.raises(Exception) as theirs:
        make(torch)
    with pytest.raises(type(theirs.value)):
        make(minitorch)


@pytest.mark.parametrize("dtype", ["float16", "float64"])
def test_samplers_in_other_dtypes(dtype):
    both(1)
    for name, args in [("exponential_", (0.7,)), ("cauchy_", (0.0, 1e-3)), ("log_normal_", (0.0, 0.5)),
                       ("geometric_", (0.01,)), ("bernoulli_", (0.3,)), ("random_", (0, 100)),
                       ("normal_", (0.0, 3.0)), ("uniform_", (-3.0, 5.0))]:
        for n in (5, 5000):
            assert_same(getattr(minitorch.empty(n, dtype=getattr(minitorch, dtype)), name)(*args),
                        getattr(torch.empty(n, dtype=getattr(torch, dtype)), name)(*args), f"{name} {n}")
    weights = torch.rand(3, 20, dtype=getattr(torch, dtype))
    minitorch.set_rng_state(minitorch.tensor(torch.get_rng_state().numpy()))
    for k, replacement in ((1, False), (5, False), (30, True)):
        assert_same(minitorch.multinomial(minitorch.tensor(weights.numpy()), k, replacement),
                    torch.multinomial(weights, k, replacement))
    assert_same_state()


def test_data_loading_shuffles_like_pytorch():
    data = np.arange(50, dtype=np.float32).reshape(25, 2)

    class EagerSampler:  # draws in __iter__ itself, before the loader's per-pass seed
        def __init__(self, lib):
            self.lib = lib

        def __iter__(self):
            return iter(self.lib.randperm(25).tolist())

        def __len__(self):
            return 25

    def batches(lib):
        utils = lib.utils.data
        dataset = utils.TensorDataset(lib.tensor(data))
        loaders = [utils.DataLoader(dataset, batch_size=4, shuffle=True),
                   utils.DataLoader(dataset, batch_size=3, sampler=EagerSampler(lib)),
                   utils.DataLoader(dataset, batch_size=5, sampler=utils.WeightedRandomSampler(np.linspace(0.1, 1, 25), 33))]
        drawn = [b[0].numpy().tolist() for loader in loaders for _ in range(2) for b in loader]
        parts = utils.random_split(dataset, [0.6, 0.4])
        return drawn, [list(part.indices) for part in parts]

    both(0)
    assert batches(minitorch) == batches(torch)
    assert_same_state()
