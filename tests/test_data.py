"""utils.data: datasets, samplers, DataLoader batching and collation, random_split, the TensorDataset
fast path, and the progress-bar helper."""

from __future__ import annotations

import io
import itertools
import sys
import types
from collections import Counter, namedtuple

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch as torch
from minitorch.utils import progress as progress_module
from minitorch.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    get_worker_info,
    random_split,
)
from minitorch.utils.data.dataloader import _tensor_source
from minitorch.utils.progress import progress


def numbered(n: int, features: int = 2) -> TensorDataset:
    """Row i of x is [i, i + 0.5, ...]; y[i] = i, so a batch shows which samples it holds."""
    x = torch.arange(n, dtype=torch.float64).reshape(n, 1) + torch.arange(features, dtype=torch.float64) * 0.5
    return TensorDataset(x, torch.arange(n))


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return i * i

    def __len__(self):
        return self.n


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def labels(loader) -> list:
    return [b[1].tolist() for b in loader]


# datasets ---------------------------------------------------------------------------------------


def test_tensor_dataset_indexes_rows_and_checks_sizes():
    ds = numbered(5)
    x, y = ds[3]
    assert len(ds) == 5 and x.tolist() == [3.0, 3.5] and y.item() == 3
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(torch.zeros(3, 2), torch.zeros(4))


def test_subset_concat_chain_and_stack_datasets():
    squares = Squares(5)
    sub = Subset(squares, [4, 0, 2])
    assert len(sub) == 3 and [sub[i] for i in range(3)] == [16, 0, 4] and sub.__getitems__([0, 2]) == [16, 4]
    both = squares + Squares(3)
    assert isinstance(both, ConcatDataset) and len(both) == 8 and both.cumulative_sizes == [5, 8]
    assert [both[i] for i in range(8)] == [0, 1, 4, 9, 16, 0, 1, 4] and both[-1] == 4
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
        both[-9]
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        ConcatDataset([squares, Stream(2)])
    chained = Stream(2) + Stream(3)
    assert isinstance(chained, ChainDataset) and list(chained) == [0, 1, 0, 1, 2] and len(chained) == 5
    assert StackDataset(squares, Squares(5))[2] == (4, 4)
    assert StackDataset(a=squares, b=Squares(5))[3] == {"a": 9, "b": 9}
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(squares, Squares(4))


def test_random_split_lengths_fractions_and_determinism():
    ds = Squares(10)
    parts = random_split(ds, [3, 7], generator=torch.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    again = random_split(ds, [3, 7], generator=torch.Generator().manual_seed(0))
    assert [p.indices for p in again] == [p.indices for p in parts]
    torch.manual_seed(5)
    first = [p.indices for p in random_split(ds, [5, 5])]
    torch.manual_seed(5)
    assert [p.indices for p in random_split(ds, [5, 5])] == first
    # fractions: floor(10 * f) = 3, 3, 3, then the remainder 1 goes round-robin from the first split
    assert [len(p) for p in random_split(ds, [0.33, 0.33, 0.34])] == [4, 3, 3]
    assert [len(p) for p in random_split(Squares(11), [0.25, 0.25, 0.5])] == [3, 3, 5]
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        random_split(Squares(3), [1.0, 0.0])
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset"):
        random_split(ds, [3, 4])


# samplers ---------------------------------------------------------------------------------------


def test_sequential_and_random_samplers():
    ds = Squares(6)
    assert list(SequentialSampler(ds)) == list(range(6))
    g = torch.Generator().manual_seed(1)
    order = list(RandomSampler(ds, generator=g))
    assert sorted(order) == list(range(6))
    assert list(RandomSampler(ds, generator=torch.Generator().manual_seed(1))) == order
    with_replacement = list(RandomSampler(ds, replacement=True, num_samples=50, generator=g))
    assert len(with_replacement) == 50 and set(with_replacement) <= set(range(6))
    # without replacement and more samples than the dataset: whole permutations, then a cut-short one
    long = list(RandomSampler(ds, num_samples=15, generator=g))
    assert len(long) == 15 and sorted(long[:6]) == sorted(long[6:12]) == list(range(6))
    assert len(set(long[12:])) == 3
    with pytest.raises(TypeError, match="replacement should be a boolean value, but got replacement=1"):
        RandomSampler(ds, replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
        RandomSampler(ds, num_samples=0)


@pytest.mark.parametrize("make, draw_fn", [
    (lambda n: RandomSampler(range(10), replacement=True, num_samples=n), "randint"),
    (lambda n: WeightedRandomSampler([1.0, 2.0, 3.0], n), "multinomial"),
])
def test_samplers_with_replacement_draw_lazily_in_chunks(make, draw_fn, monkeypatch):
    """num_samples=10**10 once built every index up front (74 GiB); PyTorch's RandomSampler draws 32 at a time."""
    real, sizes = getattr(torch.random, draw_fn), []

    def spy(first, size, *args, **kwargs):  # randint(n, (k,), ...) or multinomial(weights, k, ...)
        k = size[0] if isinstance(size, tuple) else size
        sizes.append(k)  # and never allocate k draws, even before the fix
        return real(first, (min(k, 32),) if isinstance(size, tuple) else min(k, 32), *args, **kwargs)

    monkeypatch.setattr(torch.random, draw_fn, spy)
    sampler = make(10**10)
    first = list(itertools.islice(iter(sampler), 40))
    assert len(first) == 40 and max(sizes) == 32
    assert len(sampler) == 10**10
    batches = BatchSampler(sampler, 8, drop_last=True)
    assert len(next(iter(batches))) == 8 and len(batches) == 10**10 // 8
    assert len(list(make(70))) == 70 and sizes[-1] == 70 % 32  # two chunks of 32, then the rest


def test_subset_random_weighted_and_batch_samplers():
    g = torch.Generator().manual_seed(0)
    picked = list(SubsetRandomSampler([10, 20, 30], generator=g))
    assert sorted(picked) == [10, 20, 30]
    draws = list(WeightedRandomSampler([0.0, 1.0, 3.0], 400, generator=g))
    counts = Counter(draws)
    assert counts[0] == 0 and 2 * counts[1] < counts[2]
    assert sorted(WeightedRandomSampler([1, 1, 1, 1], 4, replacement=False, generator=g)) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="weights should be a 1d sequence but given weights have shape"):
        WeightedRandomSampler([[1.0, 2.0]], 2)
    assert list(BatchSampler(range(7), 3, drop_last=False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(range(7), 3, drop_last=True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(BatchSampler(range(7), 3, False)) == 3 and len(BatchSampler(range(7), 3, True)) == 2
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        BatchSampler(range(7), 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value"):
        BatchSampler(range(7), 2, "no")


# DataLoader -------------------------------------------------------------------------------------


def test_dataloader_batches_in_order_with_and_without_drop_last():
    ds = numbered(10)
    loader = DataLoader(ds, batch_size=4)
    batches = list(loader)
    assert len(loader) == 3 and len(batches) == 3
    x, y = batches[0]
    assert isinstance(batches[0], list) and x.shape == (4, 2) and x.dtype == torch.float64 and y.dtype == torch.int64
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert labels(DataLoader(ds, batch_size=4, drop_last=True)) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert len(DataLoader(ds, batch_size=4, drop_last=True)) == 2
    assert [b.tolist() for b in DataLoader(Squares(5), batch_size=2)] == [[0, 1], [4, 9], [16]]


def test_shuffle_is_reproducible_and_new_each_epoch():
    ds = numbered(20)
    torch.manual_seed(0)
    loader = DataLoader(ds, batch_size=5, shuffle=True)
    epoch1, epoch2 = labels(loader), labels(loader)
    assert sorted(sum(epoch1, [])) == list(range(20)) and epoch1 != epoch2
    torch.manual_seed(0)
    assert labels(loader) == epoch1 and labels(loader) == epoch2
    g = torch.Generator().manual_seed(3)
    seeded = labels(DataLoader(ds, batch_size=5, shuffle=True, generator=g))
    torch.manual_seed(123)  # the explicit generator ignores the global seed
    assert labels(DataLoader(ds, batch_size=5, shuffle=True, generator=torch.Generator().manual_seed(3))) == seeded


def test_dataloader_with_samplers():
    ds = numbered(6)
    assert labels(DataLoader(ds, batch_size=2, sampler=[5, 3, 1])) == [[5, 3], [1]]
    assert labels(DataLoader(ds, batch_sampler=[[0, 5], [2]])) == [[0, 5], [2]]
    assert len(DataLoader(ds, batch_sampler=[[0, 5], [2]])) == 2
    weighted = DataLoader(ds, batch_size=4, sampler=WeightedRandomSampler([0, 0, 1, 0, 0, 0], 8))
    assert labels(weighted) == [[2, 2, 2, 2], [2, 2, 2, 2]]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"shuffle": True, "sampler": [0, 1]}, "sampler option is mutually exclusive with shuffle"),
        ({"batch_sampler": [[0]], "batch_size": 2}, "batch_sampler option is mutually exclusive with batch_size"),
        ({"batch_sampler": [[0]], "drop_last": True}, "batch_sampler option is mutually exclusive"),
        ({"batch_sampler": [[0]], "shuffle": True}, "batch_sampler option is mutually exclusive"),
        ({"batch_size": None, "drop_last": True}, "batch_size=None option disables auto-batching"),
        ({"num_workers": -1}, "num_workers option should be non-negative"),
        ({"prefetch_factor": 2}, "prefetch_factor option could only be specified in multiprocessing"),
        ({"persistent_workers": True}, "persistent_workers option needs num_workers > 0"),
        ({"timeout": -1}, "timeout option should be non-negative"),
    ],
)
def test_dataloader_argument_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        DataLoader(numbered(4), **kwargs)


def test_attributes_are_frozen_after_init():
    loader = DataLoader(numbered(4), batch_size=2)
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader is initialized"):
        loader.batch_size = 3
    loader.collate_fn = default_collate  # others can change


def test_batch_size_none_yields_converted_samples():
    class Arrays(Dataset):
        def __getitem__(self, i):
            return {"x": np.full(2, i, dtype=np.float32), "name": f"s{i}"}

        def __len__(self):
            return 3

    samples = list(DataLoader(Arrays(), batch_size=None))
    assert len(samples) == 3 and samples[2]["name"] == "s2"
    assert isinstance(samples[2]["x"], torch.Tensor) and samples[2]["x"].dtype == torch.float32
    assert samples[2]["x"].tolist() == [2.0, 2.0]


def test_iterable_dataset_batching():
    assert [b.tolist() for b in DataLoader(Stream(7), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [b.tolist() for b in DataLoader(Stream(7), batch_size=3, drop_last=True)] == [[0, 1, 2], [3, 4, 5]]
    assert len(DataLoader(Stream(7), batch_size=3)) == 3 and len(DataLoader(Stream(7), batch_size=3, drop_last=True)) == 2
    assert list(DataLoader(Stream(3), batch_size=None)) == [0, 1, 2]  # default_convert keeps Python ints
    with pytest.raises(ValueError, match="DataLoader with IterableDataset: expected unspecified shuffle option"):
        DataLoader(Stream(3), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        DataLoader(Stream(3), sampler=[0])


def test_num_workers_and_pin_memory_load_in_the_main_process():
    ds = numbered(9)
    plain = labels(DataLoader(ds, batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(2)))
    workers = DataLoader(ds, batch_size=4, shuffle=True, num_workers=2, pin_memory=True, prefetch_factor=2,
                         persistent_workers=True, generator=torch.Generator().manual_seed(2))
    if torch.cuda.is_available():
        assert labels(workers) == plain and all(x.is_pinned() for x, _ in workers)
    else:  # CPU-only PyTorch's warning, once per pass; the batches are the same
        with pytest.warns(UserWarning, match="no accelerator is found"):
            assert labels(workers) == plain
    assert get_worker_info() is None


def test_getitems_is_used_for_batches():
    class Batched(Squares):
        calls = 0

        def __getitems__(self, indices):
            Batched.calls += 1
            return [i * i for i in indices]

    assert [b.tolist() for b in DataLoader(Batched(5), batch_size=2)] == [[0, 1], [4, 9], [16]]
    assert Batched.calls == 3


# collate ----------------------------------------------------------------------------------------

Point = namedtuple("Point", ["x", "y"])


def test_default_collate_types():
    floats = default_collate([1.5, 2.0])
    assert floats.dtype == torch.float64 and floats.tolist() == [1.5, 2.0]
    assert default_collate([1, 2]).dtype == torch.int64 and default_collate([True, False]).dtype == torch.bool
    assert default_collate(["a", "b"]) == ["a", "b"]
    stacked = default_collate([torch.ones(2, 3), torch.zeros(2, 3)])
    assert stacked.shape == (2, 2, 3) and stacked[0].tolist() == [[1.0] * 3] * 2
    arrays = default_collate([np.arange(3, dtype=np.int32), np.arange(3, dtype=np.int32)])
    assert arrays.dtype == torch.int32 and arrays.shape == (2, 3)
    scalars = default_collate([np.float32(1.0), np.float32(2.0)])
    assert scalars.dtype == torch.float32 and scalars.tolist() == [1.0, 2.0]
    pairs = default_collate([(torch.ones(2), 0), (torch.zeros(2), 1)])
    assert isinstance(pairs, list) and pairs[0].shape == (2, 2) and pairs[1].tolist() == [0, 1]
    dicts = default_collate([{"a": 1.0, "b": [1, "u"]}, {"a": 2.0, "b": [2, "v"]}])
    assert dicts["a"].tolist() == [1.0, 2.0] and dicts["b"][0].tolist() == [1, 2] and dicts["b"][1] == ["u", "v"]
    points = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert isinstance(points, Point) and points.x.tolist() == [1, 3] and points.y.dtype == torch.float64


def test_default_collate_errors():
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        default_collate([torch.zeros(3), torch.zeros(2)])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        default_collate([np.zeros(3), np.zeros(2)])
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors, numpy arrays, numbers"):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors"):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_default_convert_keeps_containers():
    converted = default_convert({"a": np.arange(2), "b": (np.float64(1.5), "s"), "c": 3, "p": Point(np.ones(1), 2)})
    assert isinstance(converted["a"], torch.Tensor) and converted["a"].tolist() == [0, 1]
    assert isinstance(converted["b"], list) and converted["b"][0].dtype == torch.float64 and converted["b"][1] == "s"
    assert converted["c"] == 3 and isinstance(converted["p"], Point) and converted["p"].x.tolist() == [1.0]
    strings = np.array(["x"])
    assert default_convert(strings) is strings


# the TensorDataset fast path --------------------------------------------------------------------


@given(
    n=st.integers(1, 12),
    batch_size=st.integers(1, 5),
    drop_last=st.booleans(),
    seed=st.integers(0, 2**16),
    split=st.booleans(),
)
def test_tensor_dataset_fast_path_matches_generic_collation(n, batch_size, drop_last, seed, split):
    x = torch.randn(n, 3, 2, dtype=torch.float32)
    ds = TensorDataset(x.transpose(1, 2), torch.arange(n), torch.rand(n) > 0.5)  # a non-contiguous member
    if split and n > 1:
        ds = random_split(ds, [n // 2, n - n // 2], generator=torch.Generator().manual_seed(seed))[1]
    assert _tensor_source(ds) is not None

    def loader(collate_fn):
        return DataLoader(ds, batch_size=batch_size, shuffle=True, drop_last=drop_last, collate_fn=collate_fn,
                          generator=torch.Generator().manual_seed(seed))

    fast, generic = list(loader(None)), list(loader(lambda samples: default_collate(samples)))
    assert len(fast) == len(generic) == len(loader(None))
    for a, b in zip(fast, generic):
        assert isinstance(a, list) and len(a) == 3
        for ta, tb in zip(a, b):
            assert ta.shape == tb.shape and ta.dtype == tb.dtype and ta.tolist() == tb.tolist()
            assert ta.is_contiguous()


def test_fast_path_gathers_instead_of_indexing_samples(monkeypatch):
    ds = numbered(7)

    def per_sample(self, index):
        raise AssertionError("the fast path must not index samples one by one")

    monkeypatch.setattr(TensorDataset, "__getitem__", per_sample)
    assert labels(DataLoader(Subset(ds, [6, 0, 3]), batch_size=2)) == [[6, 0], [3]]
    assert labels(DataLoader(ds, batch_size=2, sampler=[-1, 0])) == [[6, 0]]  # negative indices count from the end


def test_fast_path_is_skipped_when_it_would_change_behaviour():
    class Augmented(TensorDataset):
        def __getitem__(self, i):
            x, y = super().__getitem__(i)
            return x * 0, y

    assert _tensor_source(Augmented(torch.ones(3, 2), torch.arange(3))) is None
    assert [b[0].tolist() for b in DataLoader(Augmented(torch.ones(3, 2), torch.arange(3)), batch_size=3)] == [
        [[0.0, 0.0]] * 3
    ]
    summed = DataLoader(numbered(4), batch_size=2, collate_fn=lambda samples: sum(int(s[1]) for s in samples))
    assert list(summed) == [1, 5]


def test_fast_path_on_device_keeps_autograd(device):
    x = torch.randn(4, 2, dtype=torch.float64, device=device, requires_grad=True)
    labels_ = torch.arange(4, device=device)
    batch, batch_labels = next(iter(DataLoader(TensorDataset(x, labels_), batch_size=4, sampler=[3, 1, 1, 0])))
    assert batch.device == x.device and batch_labels.tolist() == [3, 1, 1, 0]
    batch.sum().backward()
    assert x.grad.tolist() == [[1.0, 1.0], [2.0, 2.0], [0.0, 0.0], [1.0, 1.0]]


# progress ---------------------------------------------------------------------------------------


def test_progress_disabled_passes_through(monkeypatch):
    monkeypatch.setenv("MINITORCH_PROGRESS", "0")
    bar = progress([1, 2, 3], desc="x")
    assert not bar.enabled and list(bar) == [1, 2, 3] and len(bar) == 3
    bar.set_postfix(loss=torch.tensor(0.5))
    bar.set_description("y")
    bar.update()
    bar.close()
    monkeypatch.delenv("MINITORCH_PROGRESS")
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # not a terminal: off
    assert not progress(range(2)).enabled
    assert not progress(range(2), disable=True).enabled


class _FakeTqdm:
    """Records what progress() asks of tqdm."""

    made: list = []

    def __init__(self, iterable, **kwargs):
        self.iterable, self.kwargs, self.postfix = iterable, kwargs, None
        _FakeTqdm.made.append(self)

    def __iter__(self):
        return iter(self.iterable)

    def set_postfix(self, values, refresh=True):
        self.postfix = values

    def close(self):
        self.closed = True


def test_progress_enabled_uses_tqdm_and_shows_plain_numbers(monkeypatch):
    fake = types.ModuleType("tqdm.auto")
    fake.tqdm = _FakeTqdm
    monkeypatch.setitem(sys.modules, "tqdm", types.ModuleType("tqdm"))
    monkeypatch.setitem(sys.modules, "tqdm.auto", fake)
    monkeypatch.setenv("MINITORCH_PROGRESS", "1")
    with progress(range(3), desc="epoch 1", total=3) as bar:
        assert bar.enabled and list(bar) == [0, 1, 2]
        bar.set_postfix(loss=torch.tensor(0.25), step=2)
    made = _FakeTqdm.made[-1]
    assert made.kwargs["desc"] == "epoch 1" and made.kwargs["total"] == 3
    assert made.postfix == {"loss": 0.25, "step": 2} and made.closed
    assert not progress(range(3), disable=True).enabled  # an explicit disable wins over the variable
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # tqdm not installed: no bar, no error
    assert not progress_module.progress(range(3)).enabled
