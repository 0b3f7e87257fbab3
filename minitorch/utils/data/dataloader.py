"""DataLoader: batches of samples from a dataset, in sampler order, merged by ``collate_fn``.

PyTorch's signature, defaults and argument checks. Two deliberate differences:

- Loading always happens in the main process. ``num_workers > 0`` is accepted (so PyTorch scripts
  run unchanged) and loads exactly as ``num_workers=0``: no worker processes, ``worker_init_fn`` is
  not called and ``get_worker_info()`` returns ``None``.

``pin_memory=True`` is PyTorch's: with a GPU each batch's tensors are copied into page-locked memory
(``Tensor.pin_memory``); without one each pass warns, as CPU-only PyTorch does, and batches stay as they are.
- Fast path: when the dataset is a ``TensorDataset`` (possibly inside ``Subset``s, as ``random_split``
  makes) and ``collate_fn`` is ``default_collate``, a batch is fetched with one gather per tensor,
  ``[t.index_select(0, indices) for t in tensors]``, instead of indexing every sample and stacking
  them. The result is the same batch (same values, shapes and dtypes, a fresh contiguous copy,
  gradients flow back to the dataset's tensors the same way) at a fraction of the per-batch cost
  (about 20x less for 64 rows of 20 features). A subclass that overrides ``__getitem__`` (to
  augment samples, say) takes the generic path.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Generic, TypeVar

from ... import _dtype, cuda
from ...creation import tensor
from ...tensor import Tensor
from ._collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset, Subset, TensorDataset, _is_plain
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, draw_seed

T_co = TypeVar("T_co", covariant=True)


class _DatasetKind:
    Map = 0
    Iterable = 1


class _InfiniteConstantSampler(Sampler):
    """The "sampler" of an IterableDataset: the dataset decides what comes next."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


def get_worker_info() -> None:
    """Information about the current loader worker; always ``None``, since minitorch loads in the
    main process (PyTorch also returns ``None`` there)."""
    return None


_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


class DataLoader(Generic[T_co]):
    """Iterate over ``dataset`` in batches: ``for x, y in DataLoader(ds, batch_size=32, shuffle=True)``.

    ``shuffle=True`` draws a new order every epoch from ``generator`` (default: the default CPU
    generator, so ``minitorch.manual_seed`` makes runs reproducible). ``batch_size=None`` turns
    batching off: samples come one at a time through ``collate_fn`` (default: ``default_convert``).
    """

    dataset: Dataset
    batch_size: int | None
    drop_last: bool
    sampler: Sampler | Iterable
    batch_sampler: Sampler | Iterable | None
    __initialized = False

    def __init__(
        self,
        dataset: Dataset[T_co],
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler | Iterable | None = None,
        batch_sampler: Sampler | Iterable | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[list], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to enable "
                "multiprocessing, otherwise set prefetch_factor to None."
            )
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        if isinstance(dataset, IterableDataset):
            kind = _DatasetKind.Iterable
            if shuffle not in {False, None}:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified sampler option, but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler option, but got "
                    f"batch_sampler={batch_sampler}"
                )
        else:
            kind = _DatasetKind.Map
            shuffle = bool(shuffle)

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"
            )

        if sampler is None:
            if kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset = dataset
        self._dataset_kind = kind
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True

    def __setattr__(self, name: str, value) -> None:
        if self.__initialized and name in _FROZEN:
            raise ValueError(f"{name} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(name, value)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> _DataLoaderIter:
        return _DataLoaderIter(self)

    def __len__(self) -> int:
        if self._dataset_kind == _DatasetKind.Iterable:
            length = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)


class _DataLoaderIter:
    """One pass (epoch) over a DataLoader, in the main process."""

    def __init__(self, loader: DataLoader) -> None:
        self._loader = loader
        # PyTorch's order: the sampler's iterator first, then a seed for its workers, drawn on every pass
        indices = iter(loader._index_sampler) if loader._dataset_kind != _DatasetKind.Iterable else None
        self._base_seed = draw_seed(loader.generator)
        if indices is None:
            self._batches = self._iterable_batches(loader)
        else:
            self._batches = self._map_batches(loader, indices)
        if loader.pin_memory:
            if cuda.is_available():
                self._batches = map(_pinned, self._batches)
            else:
                warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device "
                              "pinned memory won't be used.", UserWarning, stacklevel=3)

    def __iter__(self) -> _DataLoaderIter:
        return self

    def __next__(self):
        return next(self._batches)

    def __len__(self) -> int:
        return len(self._loader)

    @staticmethod
    def _iterable_batches(loader: DataLoader) -> Iterator:
        samples = iter(loader.dataset)
        collate = loader.collate_fn
        if not loader._auto_collation:
            for sample in samples:
                yield collate(sample)
            return
        while batch := list(itertools.islice(samples, loader.batch_size)):
            if loader.drop_last and len(batch) < loader.batch_size:
                return
            yield collate(batch)

    @staticmethod
    def _map_batches(loader: DataLoader, sampled: Iterator) -> Iterator:
        dataset, collate = loader.dataset, loader.collate_fn
        if not loader._auto_collation:
            for index in sampled:
                yield collate(dataset[index])
            return
        source = _tensor_source(dataset) if collate is default_collate else None
        if source is not None:
            tensors, index_maps = source
            for indices in sampled:
                yield _gather(tensors, index_maps, indices)
            return
        getitems = getattr(dataset, "__getitems__", None)
        for indices in sampled:
            samples = getitems(indices) if getitems else [dataset[i] for i in indices]
            yield collate(samples)


def _pinned(batch):
    """``batch`` with every tensor in it (nested in mappings, tuples, lists) in page-locked memory."""
    if isinstance(batch, Tensor):
        return batch.pin_memory()
    if isinstance(batch, Mapping):
        return type(batch)({k: _pinned(v) for k, v in batch.items()})
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):  # a namedtuple
        return type(batch)(*(_pinned(v) for v in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(_pinned(v) for v in batch)
    return batch


def _tensor_source(dataset) -> tuple[tuple, list] | None:
    """For a plain TensorDataset, possibly inside plain Subsets: its tensors and the Subsets' index
    lists (outermost first); ``None`` when the fast path does not apply."""
    index_maps = []
    while _is_plain(dataset, Subset):
        if not isinstance(dataset.indices, (list, tuple, range)):
            return None
        index_maps.append(dataset.indices)
        dataset = dataset.dataset
    if not _is_plain(dataset, TensorDataset) or not dataset.tensors:
        return None
    return dataset.tensors, index_maps


def _gather(tensors: tuple, index_maps: list, indices) -> list:
    """The default_collate batch of ``tensors`` at ``indices``: one gather per tensor."""
    for index_map in index_maps:
        indices = [index_map[i] for i in indices]
    if min(indices) < 0:  # t[-1] is the last sample, as indexing one sample would read it
        length = tensors[0].size(0)
        indices = [i + length if i < 0 else i for i in indices]
    index = tensor(indices, dtype=_dtype.int64)
    on_device = {}
    batch = []
    for t in tensors:
        device = t.device
        if device not in on_device:
            on_device[device] = index if device.type == "cpu" else index.to(device)
        batch.append(t.index_select(0, on_device[device]))
    return batch


__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]
