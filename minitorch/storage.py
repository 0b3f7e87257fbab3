"""Storage: the 1-D typed buffer behind every tensor.

All views of a tensor share one Storage object, and with it one version counter: every in-place
write bumps ``version``, and autograd compares it with the version a saved tensor had.
"""

from __future__ import annotations

from ._device import device


class Storage:
    """One device buffer (a 1-D backend array), its dtype, and the shared version counter."""

    __slots__ = ("data", "backend", "device", "dtype", "version", "__weakref__")

    def __init__(self, data, backend, device: device, dtype):
        self.data = data
        self.backend = backend
        self.device = device
        self.dtype = dtype
        self.version = 0

    def __len__(self) -> int:
        return self.data.shape[0]

    def nbytes(self) -> int:
        return self.data.shape[0] * self.dtype.itemsize

    def data_ptr(self) -> int:
        return self.backend.data_ptr(self.data)


class ReinterpretedStorage(Storage):
    """A storage's memory seen as another dtype (``view_as_real`` sees complex64 as float32 pairs): the same bytes,
    and the version counter of the storage it reinterprets, so writes through either are seen by autograd."""

    __slots__ = ("source",)

    def __init__(self, source: Storage, data, dtype):  # (not Storage.__init__: it would reset the version)
        self.source = source
        self.data = data
        self.backend = source.backend
        self.device = source.device
        self.dtype = dtype

    @property
    def version(self) -> int:
        return self.source.version

    @version.setter
    def version(self, value: int) -> None:
        self.source.version = value


class UntypedStorage:
    """``tensor.untyped_storage()``: the bytes of a Storage (what ``data_ptr``/``nbytes`` report)."""

    __slots__ = ("_storage",)

    def __init__(self, storage: Storage):
        self._storage = storage

    def data_ptr(self) -> int:
        return self._storage.data_ptr()

    def nbytes(self) -> int:
        return self._storage.nbytes()

    def size(self) -> int:
        return self.nbytes()

    def __len__(self) -> int:
        return self.nbytes()

    @property
    def device(self) -> device:
        return self._storage.device

    def __eq__(self, other) -> bool:
        return isinstance(other, UntypedStorage) and other._storage is self._storage

    def __hash__(self) -> int:
        return id(self._storage)

    def __repr__(self) -> str:
        return f"<minitorch.UntypedStorage of {self.nbytes()} bytes on {self.device}>"


class TypedStorage:
    """``tensor.storage()``: the elements of a Storage, indexable and writable like PyTorch's."""

    __slots__ = ("_storage",)

    def __init__(self, storage: Storage):
        self._storage = storage

    @property
    def dtype(self):
        return self._storage.dtype

    @property
    def device(self) -> device:
        return self._storage.device

    def __len__(self) -> int:
        return len(self._storage)

    def size(self) -> int:
        return len(self._storage)

    def element_size(self) -> int:
        return self._storage.dtype.itemsize

    def nbytes(self) -> int:
        return self._storage.nbytes()

    def data_ptr(self) -> int:
        return self._storage.data_ptr()

    def untyped(self) -> UntypedStorage:
        return UntypedStorage(self._storage)

    def tolist(self) -> list:
        return self._storage.data.tolist()

    def __getitem__(self, index):
        value = self._storage.data[index]
        return value.tolist() if hasattr(value, "tolist") else value

    def __setitem__(self, index, value) -> None:
        self._storage.data[index] = value
        self._storage.version += 1

    def __iter__(self):
        return iter(self.tolist())

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self.tolist())
        return f"{body}\n[minitorch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size {len(self)}]"
