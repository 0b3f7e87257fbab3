"""The CPU generator without PyTorch installed: known PyTorch values (recorded from torch 2.13), determinism,
state round trips, statistics and PyTorch's exceptions. The full comparison is tests/oracle/test_random.py."""

from __future__ import annotations

import copy
import pickle
import struct

import numpy as np
import pytest

import minitorch as torch


def bits(t, kind):
    return t.numpy().view(kind).tolist()


def test_known_pytorch_values_after_manual_seed_0():
    torch.manual_seed(0)
    assert bits(torch.randn(4), np.uint32) == [1069891420, 3197516880, 3221975369, 1058112694]  # 1.5410, ...
    assert bits(torch.randn(20), np.uint32)[-3:] == [1061871004, 3197390675, 1029116439]  # the 16-wide path
    assert bits(torch.rand(3, dtype=torch.float64), np.uint64) == [
        4592571679497001192, 4602892758704393363, 4597311256304387740]
    assert torch.randint(0, 10, (8,)).tolist() == [0, 9, 3, 1, 1, 0, 3, 6]
    assert torch.randperm(8).tolist() == [4, 3, 1, 0, 7, 5, 2, 6]
    assert torch.multinomial(torch.tensor([0.1, 0.2, 0.7]), 6, True).tolist() == [2] * 6
    assert torch.multinomial(torch.tensor([0.1, 0.2, 0.3, 0.4]), 3).tolist() == [3, 2, 1]
    assert torch.empty(10).bernoulli_(0.5).tolist() == [1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    assert bits(torch.empty(3).uniform_(-1, 1), np.uint32) == [3163766400, 3208693880, 3209000866]
    # seed 0, left = 517 (108 words drawn), seeded, next = 108
    assert torch.get_rng_state()[:24].tolist() == [0] * 8 + [5, 2, 0, 0, 1, 0, 0, 0, 108] + [0] * 7
    torch.manual_seed(0)
    assert bits(torch.nn.Linear(2, 2).weight.detach(), np.uint32) == [[3148708130, 1052915356],
                                                                       [3205823665, 3204790301]]


def test_element_by_element_samplers_leave_pytorchs_stream():
    """Gamma, Poisson and Binomial draw their uniforms ahead in blocks; the values and the draws after them
    are PyTorch's (recorded from torch 2.13), the Gamma's cached normal included."""
    torch.manual_seed(0)
    gamma = torch.distributions.Gamma(torch.tensor([0.5, 2.0, 7.0]), 1.0).sample()
    assert bits(gamma, np.uint32) == [978250990, 1059171493, 1088609378]
    assert bits(torch.randn(2, dtype=torch.float64), np.uint64) == [13827009683078951455, 13828025752724808247]
    assert torch.poisson(torch.tensor([3.0, 40.0, 0.0])).tolist() == [2.0, 42.0, 0.0]
    assert bits(torch.rand(2, dtype=torch.float64), np.uint64) == [4601612375770869544, 4601008552504076192]
    counts, probs = torch.tensor([5.0, 100.0, 1000.0, 0.0]), torch.tensor([0.3, 0.5, 0.9, 0.5])
    assert torch.binomial(counts, probs).tolist() == [1.0, 55.0, 895.0, 0.0]
    assert bits(torch.rand(2, dtype=torch.float64), np.uint64) == [4602892758704393363, 4597311256304387740]


def test_drawn_ahead_uniforms_rewind_to_the_draws_used():
    """``DoubleDraws`` over several blocks: the doubles are random64()'s, and after ``close`` the Mersenne
    Twister stands where drawing exactly the used ones would leave it."""
    from minitorch._backends.torch_samplers import DoubleDraws

    for expected, used in ((300, 0), (300, 1), (300, 299), (300, 300), (300, 70000), (300, 200001), (10, 0),
                           (10, 37)):  # below 256 expected draws: one by one
        ahead, plain = np.random.MT19937(0), np.random.MT19937(0)
        ahead._legacy_seeding(5)
        plain._legacy_seeding(5)
        draws = DoubleDraws(ahead, expected)
        got = [draws.next() for _ in range(used)]
        assert draws.close() == used
        words = plain.random_raw(2 * used)
        expected = (((words[0::2] & np.uint64(2**21 - 1)) << np.uint64(32)) | words[1::2]) * 2.0**-53
        assert got == expected.tolist()
        assert ahead.state["state"]["pos"] == plain.state["state"]["pos"]
        assert ahead.random_raw(3).tolist() == plain.random_raw(3).tolist()


@pytest.mark.parametrize("single", [True, False])
@pytest.mark.parametrize("count, prob", [(10.0, 0.3), (400.0, 0.6), (6.0, 0.5), (2.0**24 + 5, 0.2), (1e9, 1e-8)])
def test_vectorised_binomial_is_the_element_loop(count, prob, single):
    """One (count, prob) for all elements runs vectorised: the same samples and the same generator state as
    PyTorch's element-by-element loop (run here in Python)."""
    from minitorch._backends import torch_samplers
    from minitorch._backends.torch_mt import TorchGenerator

    n = 3000
    looped, vectorised = TorchGenerator(4), TorchGenerator(4)
    with looped._doubles(n) as draws:
        expected = torch_samplers.binomial(np.full(n, count), np.full(n, prob), single, draws.next)
    got = vectorised.binomial(np.full(n, count), np.full(n, prob), single)
    assert got.tolist() == expected
    assert looped.get_state() == vectorised.get_state()


@pytest.mark.parametrize("rate", [10.0, 40.0, 1e12])
def test_vectorised_poisson_is_the_element_loop(rate):
    from minitorch._backends import torch_samplers
    from minitorch._backends.torch_mt import TorchGenerator

    looped, vectorised = TorchGenerator(6), TorchGenerator(6)
    with looped._doubles(3000) as draws:
        expected = torch_samplers.poisson(np.full(3000, rate), draws.next)
    assert vectorised.poisson(np.full(3000, rate)).tolist() == expected
    assert looped.get_state() == vectorised.get_state()


def test_samplers_state_round_trip_and_generators():
    g = torch.Generator().manual_seed(11)
    state = g.get_state()
    counts, probs, rates = torch.tensor([7.0, 300.0] * 50), torch.tensor([0.4, 0.7] * 50), torch.rand(100) * 40
    first = [torch.binomial(counts, probs, generator=g), torch.poisson(rates, generator=g), torch.rand(3, generator=g)]
    g.set_state(state)
    again = [torch.binomial(counts, probs, generator=g), torch.poisson(rates, generator=g), torch.rand(3, generator=g)]
    assert [t.tolist() for t in first] == [t.tolist() for t in again]
    samples = torch.binomial(torch.full((20000,), 50.0), torch.full((20000,), 0.3))  # BTRS
    assert abs(samples.mean().item() - 15.0) < 0.1 and abs(samples.var().item() - 10.5) < 0.4
    samples = torch.binomial(torch.full((20000,), 10.0), torch.full((20000,), 0.9))  # mirrored inversion
    assert abs(samples.mean().item() - 9.0) < 0.02 and samples.max().item() == 10.0


def test_seeds_wrap_to_their_low_32_bits_but_initial_seed_keeps_all_64():
    a = torch.rand(5, generator=torch.Generator().manual_seed(7))
    g = torch.Generator().manual_seed(7 + 2**32)
    assert torch.rand(5, generator=g).tolist() == a.tolist() and g.initial_seed() == 7 + 2**32
    assert torch.Generator().manual_seed(-1).initial_seed() == 2**64 - 1
    with pytest.raises(ValueError, match="Overflow"):
        torch.manual_seed(2**64)


def test_state_round_trip_includes_the_cached_normal():
    g = torch.Generator().manual_seed(3)
    torch.randn(3, generator=g)  # an odd count of serial normals leaves one cached
    state = g.get_state()
    assert state.dtype is torch.uint8 and state.shape == (5056,)
    assert struct.unpack_from("<i", state.numpy().tobytes(), 16 + 8 + 624 * 8 + 24)[0] == 1  # normal_is_valid
    first = [torch.randn(5, generator=g).tolist(), torch.rand(17, generator=g).tolist()]
    g.set_state(state)
    assert [torch.randn(5, generator=g).tolist(), torch.rand(17, generator=g).tolist()] == first
    torch.manual_seed(3)
    assert torch.randn(3).tolist() == torch.randn(3, generator=torch.Generator().manual_seed(3)).tolist()


def test_pickle_deepcopy_and_clone_state_keep_the_position():
    g = torch.Generator().manual_seed(3)
    torch.randn(3, generator=g)
    copies = [pickle.loads(pickle.dumps(g)), copy.deepcopy(g), g.clone_state()]
    expected = torch.randn(5, generator=g).tolist()
    for other in copies:
        assert other.initial_seed() == 3 and torch.randn(5, generator=other).tolist() == expected


def test_fork_rng_and_global_state():
    torch.manual_seed(1)
    with torch.random.fork_rng():
        inside = torch.rand(3).tolist()
    assert torch.rand(3).tolist() == inside
    with torch.random.fork_rng(enabled=False):
        torch.rand(1)
    assert torch.rand(3).tolist() != inside


def test_statistics():
    g = torch.Generator().manual_seed(11)
    for dtype in (torch.float32, torch.float64):
        u = torch.rand(200_000, generator=g, dtype=dtype).numpy()
        assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.005
        z = torch.randn(200_000, generator=g, dtype=dtype).numpy()
        assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    e = torch.empty(100_000).exponential_(2.0, generator=g).numpy()
    assert abs(e.mean() - 0.5) < 0.01
    r = torch.randint(-3, 4, (70_000,), generator=g).numpy()
    assert set(np.unique(r)) == set(range(-3, 4)) and abs(np.bincount(r + 3).min() - 10_000) < 500
    assert sorted(torch.randperm(100_003, generator=g).tolist()) == list(range(100_003))
    w = torch.tensor([1.0, 0.0, 3.0])
    counts = np.bincount(torch.multinomial(w, 40_000, True, generator=g).numpy(), minlength=3)
    assert counts[1] == 0 and abs(counts[2] / counts[0] - 3) < 0.2
    assert abs(torch.poisson(torch.full((20_000,), 15.0), generator=g).numpy().mean() - 15) < 0.15


@pytest.mark.parametrize("call, error, message", [
    (lambda: torch.randint(5, 5, (2,)), RuntimeError, "expects 'from' to be less than 'to'"),
    (lambda: torch.randint(0, 300, (2,), dtype=torch.uint8), RuntimeError, "to - 1 is out of bounds for unsigned char"),
    (lambda: torch.empty(3).uniform_(1, 0), RuntimeError, r"\[from, to\) range"),
    (lambda: torch.empty(3).normal_(0, -1), RuntimeError, "normal expects std >= 0.0"),
    (lambda: torch.empty(3, dtype=torch.int64).normal_(), NotImplementedError, "normal_kernel_cpu"),
    (lambda: torch.empty(3).exponential_(0), RuntimeError, "lambda > 0.0"),
    (lambda: torch.empty(3).geometric_(1.0), RuntimeError, r"p to be in \(0, 1\)"),
    (lambda: torch.randperm(-1), RuntimeError, "negative dimension"),
    (lambda: torch.multinomial(torch.tensor([1.0, -1.0]), 2, True), RuntimeError, "probability entry < 0"),
    (lambda: torch.multinomial(torch.tensor([1.0, float("inf")]), 1), RuntimeError, "`inf`, `nan` or element < 0"),
    (lambda: torch.multinomial(torch.ones(3), 4), RuntimeError, "without replacement"),
    (lambda: torch.multinomial(torch.ones(3, dtype=torch.int64), 1), RuntimeError, "floating-point dtypes"),
    (lambda: torch.poisson(torch.tensor([-1.0])), RuntimeError, "non-negative"),
    (lambda: torch.Generator().set_state(torch.zeros(3)), TypeError, "ByteTensor"),
    (lambda: torch.Generator().set_state(torch.zeros(5056, dtype=torch.uint8)), RuntimeError, "Invalid mt19937"),
])
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_in_place_samplers_respect_autograd_and_views():
    w = torch.zeros(3, 4, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        w.uniform_()
    base = torch.zeros(4, 6)
    view = base[:, ::2]
    view.normal_(generator=torch.Generator().manual_seed(0))
    assert (base[:, 1::2] == 0).all() and (base[:, ::2] != 0).all()
    assert torch.zeros(0).uniform_().shape == (0,)


def test_array_stream_the_cuda_backend_uses_runs_every_draw():
    """CuPy's stream wrapper, run here over numpy's Generator API (the same calls CuPy answers)."""
    from minitorch._backends.array_stream import ArrayStream

    stream = ArrayStream(lambda seed: np.random.Generator(np.random.PCG64(seed)), np, 5)
    f32 = np.dtype(np.float32)
    u = stream.uniform(1000, f32, -1.0, 1.0)
    assert u.dtype == f32 and -1 <= u.min() and u.max() < 1
    assert stream.normal(10, f32, 1.0, 2.0).dtype == f32
    assert set(stream.random_from_to(200, 2, 5).tolist()) == {2, 3, 4}
    assert stream.random_bits(50, np.dtype(np.bool_)).dtype == np.bool_
    assert stream.random_bits(50, np.dtype(np.uint8)).max() <= 255
    assert stream.random_bits(50, f32).max() <= 2**24
    assert sorted(stream.randperm(9).tolist()) == list(range(9))
    assert stream.bernoulli_scalar(5, 1.0).all() and not stream.bernoulli_tensor(np.zeros(4)).any()
    assert (stream.exponential(20, f32, 2.0) >= 0).all() and (stream.geometric(20, 0.5) >= 1).all()
    assert (stream.log_normal(5, 0.0, 1.0) > 0).all() and stream.cauchy(5, 0.0, 1.0).shape == (5,)
    assert stream.poisson(np.array([0.0, 3.0])).shape == (2,)
    counts = np.array([0.0, 5.0, -2.0, 7.0, np.inf, 10.5, 4.0, 1e6])
    probs = np.array([0.5, 0.0, 0.5, 1.0, 0.5, 1.0, np.nan, 0.25])
    drawn = stream.binomial(counts, probs, True)  # PyTorch's edges: 0, 0, 0, count, NaN, count, NaN
    assert drawn[:7].tolist()[:4] == [0.0, 0.0, 0.0, 7.0] and drawn[5] == 10.5 and np.isnan(drawn[[4, 6]]).all()
    assert abs(drawn[7] - 250000) < 3000
    weights = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 0.0]])
    assert stream.multinomial(weights, 2, False).shape == (2, 2)
    drawn = stream.multinomial(weights, 50, True)
    assert drawn.shape == (2, 50) and 0 not in drawn[0] and set(drawn[1].tolist()) == {0}
    state = stream.get_state()  # the seed only: set_state restarts the stream from it
    stream.set_state(state)
    first = stream.uniform(3, f32).tolist()
    stream.set_state(state)
    assert stream.uniform(3, f32).tolist() == first
    with pytest.raises(ValueError, match="wrong size"):
        stream.set_state(b"123")


def test_meta_generator_draws_shapes():
    g = torch.Generator("meta")
    assert torch.randn(2, 3, device="meta", generator=g).shape == (2, 3)
    assert torch.randperm(4, device="meta").device.type == "meta"
    assert torch.empty(5, device="meta").uniform_().shape == (5,)
    assert torch.multinomial(torch.ones(2, 3, device="meta"), 2).shape == (2, 2)
    drawn = torch.binomial(torch.ones(2, 1, device="meta"), torch.ones(3, device="meta"))
    assert drawn.shape == (2, 3) and drawn.device.type == "meta" and drawn.dtype is torch.float32
