"""``save`` / ``load``: tensors and containers in a safe, documented file format.

PyTorch pickles, so loading an untrusted checkpoint can run code. minitorch never pickles: a file is
a zip archive holding a JSON manifest (the object tree, one record per tensor and per storage) and
one raw little-endian buffer per storage. Loading parses JSON and copies bytes, validates every
size, stride and offset against its buffer, and never imports or calls anything the file names.
Views of one storage are saved once and load as views of one storage. See docs/serialization.md.
"""

from __future__ import annotations

import io
import json
import math
import os
import reprlib
import secrets
import stat
import struct
import zipfile
import zlib
from collections import OrderedDict
from typing import Any

from . import _dtype, cuda, nn
from ._backends import backend_for
from ._device import CPU, device
from .layout import strided
from .storage import TypedStorage, UntypedStorage
from .tensor import Size, Tensor, from_array

FORMAT = "minitorch.save"
VERSION = 1
MANIFEST = "minitorch.json"
MAX_DEPTH = 100  # nesting of containers; state dicts need a handful
MAX_MANIFEST_BYTES = 256 * 2**20
MAX_DIMS = 64
MAX_BYTES = 2**63 - 1  # int64, PyTorch's and numpy's limit on sizes, strides and offsets in bytes
_MANIFEST_KEYS = {"format", "version", "byteorder", "storages", "object"}
_STORAGE_KEYS = {"dtype", "numel", "device"}
_TENSOR_KEYS = {"storage", "size", "stride", "storage_offset", "requires_grad"}


class SerializationError(RuntimeError):
    """A file that is not a valid minitorch save file (corrupt, truncated, foreign, or malicious)."""


# saving ----------------------------------------------------------------------------------------


class _Writer:
    """Collects the storages the object tree refers to, each once."""

    def __init__(self):
        self.storage_ids: dict[int, int] = {}
        self.storages: list = []
        self.active: set[int] = set()

    def encode(self, obj, depth: int = 0):
        if obj is None or isinstance(obj, (bool, int, str)):
            return obj
        if isinstance(obj, float):
            return obj if math.isfinite(obj) else {"$float": repr(obj)}
        if isinstance(obj, Tensor):
            return {"$tensor": self.tensor(obj)}
        if isinstance(obj, _dtype.dtype):
            return {"$dtype": obj.name}
        if isinstance(obj, device):
            return {"$device": str(obj)}
        if depth >= MAX_DEPTH:
            raise ValueError(f"minitorch.save: containers nested deeper than {MAX_DEPTH} levels")
        if not isinstance(obj, (list, tuple, dict)):
            raise TypeError(
                f"minitorch.save: cannot save an object of type {type(obj).__module__}.{type(obj).__qualname__}. "
                "The safe format holds tensors, dtypes, devices and (nested) dict/OrderedDict/list/tuple of "
                "str/int/float/bool/None; save model.state_dict() rather than the model."
            )
        if id(obj) in self.active:
            raise ValueError("minitorch.save: the object contains itself (a reference cycle)")
        self.active.add(id(obj))
        try:
            if isinstance(obj, Size):
                return {"$size": list(obj)}
            if isinstance(obj, list):
                return [self.encode(x, depth + 1) for x in obj]
            if isinstance(obj, tuple):
                return {"$tuple": [self.encode(x, depth + 1) for x in obj]}
            tag = "$odict" if isinstance(obj, OrderedDict) else "$dict"
            return {tag: [[self.encode(k, depth + 1), self.encode(v, depth + 1)] for k, v in obj.items()]}
        finally:
            self.active.discard(id(obj))

    def tensor(self, t: Tensor) -> dict:
        if t.layout is not _strided() or t.is_quantized:
            raise TypeError(f"minitorch.save: tensors of layout {t.layout} are not supported by the safe format")
        storage = t._storage
        index = self.storage_ids.get(id(storage))
        if index is None:
            index = self.storage_ids[id(storage)] = len(self.storages)
            self.storages.append(storage)
        record = {
            "storage": index,
            "size": list(t.shape),
            "stride": list(t.stride()),
            "storage_offset": t.storage_offset(),
            "requires_grad": t.requires_grad,
        }
        if type(t).__name__ == "Parameter":
            record["parameter"] = True
        return record


def _strided():
    return strided


def _storage_bytes(storage):
    """The storage's elements as little-endian bytes (a zero-copy view when they already are)."""
    array = storage.backend.to_numpy(storage.data)
    little = array.dtype.newbyteorder("<")
    if array.dtype != little:
        array = array.astype(little)
    if array.flags.c_contiguous:  # (bytes first: a buffer cannot export bfloat16, a dtype numpy lacks)
        return memoryview(array.reshape(-1).view("u1"))
    return array.tobytes()


def save(obj: Any, f, pickle_module=None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True) -> None:
    """Write ``obj`` (tensors inside nested dict/OrderedDict/list/tuple of Python scalars) to a path
    or a binary file object. ``pickle_module``/``pickle_protocol`` exist for PyTorch compatibility:
    minitorch never pickles.

    Saving to a path is atomic: the file is written beside it under a temporary name, synced to disk
    and renamed over ``f``, so an interrupted save never leaves a truncated checkpoint in place of a
    good one."""
    if pickle_module is not None:
        raise ValueError("minitorch.save never pickles (its format is safe to load); pickle_module must be None")
    writer = _Writer()
    root = writer.encode(obj)
    storages = []
    for storage in writer.storages:
        storages.append({"dtype": storage.dtype.name, "numel": len(storage), "device": str(storage.device)})
    manifest = {"format": FORMAT, "version": VERSION, "byteorder": "little", "storages": storages, "object": root}
    if isinstance(f, (str, os.PathLike)):
        _atomic_write(os.fspath(f), lambda handle: _write_zip(handle, manifest, writer.storages))
    else:
        _write_zip(f, manifest, writer.storages)


def _atomic_write(path, write) -> None:
    """Run ``write(handle)`` on a new temporary file beside ``path``, flush and fsync it, then rename it
    onto ``path``. A crash or an error mid-save leaves the old file (if any) untouched, never a
    truncated one; on an error the temporary file is removed."""
    target = os.path.realpath(path)  # save through a symlink like open(path, "wb") does
    directory = os.path.dirname(target)
    if not os.path.isdir(directory):
        raise RuntimeError(f"Parent directory {os.path.dirname(os.path.abspath(path))} does not exist.")
    if os.path.isdir(target):
        raise IsADirectoryError(f"minitorch.save: {os.fspath(path)!r} is a directory")
    temporary, handle = _create_temporary(directory, os.path.basename(target))
    try:
        with handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        if os.path.exists(target):
            _copy_mode(target, temporary)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    _fsync_directory(directory)


def _create_temporary(directory, name: str):
    """A new file ``.<name>.<random>.tmp`` in ``directory``, created with the permissions a plain
    ``open(path, "wb")`` would give (0o666 minus the umask), opened for binary writing."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        temporary = os.path.join(directory, f".{name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(temporary, flags, 0o666)
        except FileExistsError:
            continue
        return temporary, os.fdopen(fd, "wb")
    raise FileExistsError(f"minitorch.save: could not create a temporary file in {directory!r}")


def _copy_mode(source, destination) -> None:
    """Overwriting a file keeps its permission bits, as writing into it would."""
    try:
        os.chmod(destination, stat.S_IMODE(os.stat(source).st_mode))
    except OSError:
        pass  # e.g. a file system without POSIX permissions: the default mode is fine


def _fsync_directory(directory) -> None:
    """Make the rename itself durable (POSIX); not possible, nor needed, everywhere."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_zip(handle, manifest: dict, storages: list) -> None:
    with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        archive.comment = f"{FORMAT} v{VERSION}".encode()
        archive.writestr(MANIFEST, json.dumps(manifest, allow_nan=False))
        for index, storage in enumerate(storages):
            if storage.device.type == "meta":
                continue  # shape only: nothing to write
            with archive.open(f"storages/{index}", "w", force_zip64=True) as member:
                member.write(_storage_bytes(storage))


# loading ---------------------------------------------------------------------------------------

_PICKLE_PREFIXES = (b"\x80", b"(", b"c", b"]", b"}", b"K", b"J", b"N", b"I", b"S", b"V", b"X")


def load(f, map_location=None, pickle_module=None, *, weights_only: bool = True, mmap: bool | None = None) -> Any:
    """Read what ``save`` wrote. ``map_location`` (a device, a string, a ``{saved: target}`` dict, or
    ``fn(storage, location)``) moves storages to another device. ``weights_only`` is accepted for
    PyTorch compatibility; loading is always weights-only safe (no code from the file runs)."""
    if pickle_module is not None:
        raise ValueError("minitorch.load never unpickles (it would run code from the file); pickle_module must be None")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as handle:
            return _load(handle, map_location, repr(os.fspath(f)))
    if not hasattr(f, "read"):
        raise TypeError(f"minitorch.load: expected a path or a binary file object, got {type(f).__name__}")
    if isinstance(f, io.TextIOBase):
        raise TypeError("minitorch.load: the file must be opened in binary mode ('rb')")
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    return _load(f, map_location, "the file object")


def _load(handle, map_location, name: str):
    start = handle.tell()
    head = handle.read(4)
    if not isinstance(head, bytes):
        raise TypeError("minitorch.load: the file must be opened in binary mode ('rb')")
    handle.seek(0, io.SEEK_END)
    length = handle.tell() - start
    handle.seek(start)
    if head[:2] != b"PK":
        if head.startswith(_PICKLE_PREFIXES):
            raise SerializationError(
                f"minitorch.load: {name} looks like a pickle file (e.g. a legacy torch.save checkpoint). minitorch "
                "never unpickles, because unpickling can execute arbitrary code from the file."
            )
        raise SerializationError(f"minitorch.load: {name} is not a minitorch save file (not a zip archive)")
    try:
        archive = zipfile.ZipFile(handle)
    except _ZIP_ERRORS as exc:
        raise SerializationError(f"minitorch.load: {name} is a corrupt or truncated archive ({exc})") from None
    with archive:
        _check_members(archive, name, length)
        return _read_archive(archive, map_location, name)


# What zipfile raises for damaged headers (bad CRC, cut-off data, flipped flag/method/version bits, offsets
# pointing before the start or past the end of the file, undecodable names).
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError, zlib.error, ValueError,
               OSError, OverflowError, struct.error)


def _check_members(archive: zipfile.ZipFile, name: str, length: int) -> None:
    """Refuse, from the central directory alone (before reading any member), what ``save`` never writes:
    compressed or encrypted members (a 1 MB deflate bomb inflates to gigabytes), duplicate names (two
    manifests: which one counts?), and members claiming more bytes than the whole file holds."""
    seen = set()
    for info in archive.infolist():
        member = info.filename
        _check(member not in seen, f"{name} holds two members named {member!r}")
        seen.add(member)
        _check(info.compress_type == zipfile.ZIP_STORED,
               f"member {member!r} of {name} is compressed (zip method {info.compress_type}); minitorch files "
               "store every member uncompressed")
        _check(not info.flag_bits & 0x1, f"member {member!r} of {name} is encrypted")
        _check(info.compress_size == info.file_size <= length,
               f"member {member!r} of {name} claims {info.file_size} bytes ({info.compress_size} stored) in a file "
               f"of {length} bytes")


def _read_member(archive: zipfile.ZipFile, member: str, name: str) -> bytes:
    try:
        return archive.read(member)
    except RuntimeError as exc:  # zipfile's "is encrypted, password required": a flipped flag bit
        raise SerializationError(f"minitorch.load: {member!r} in {name} is corrupt ({exc})") from None
    except _ZIP_ERRORS as exc:
        raise SerializationError(f"minitorch.load: {name} is a corrupt or truncated archive ({exc})") from None


def _refuse_constant(text: str):
    raise ValueError(f"{text} is not JSON (non-finite floats are stored as $float entries)")


def _read_archive(archive: zipfile.ZipFile, map_location, name: str):
    names = set(archive.namelist())
    if MANIFEST not in names:
        if any(n.endswith("data.pkl") for n in names):
            raise SerializationError(
                f"minitorch.load: {name} is a PyTorch checkpoint (a pickle inside a zip). minitorch never "
                "unpickles, because unpickling can execute arbitrary code from the file."
            )
        raise SerializationError(f"minitorch.load: {name} is not a minitorch save file (no {MANIFEST})")
    if archive.getinfo(MANIFEST).file_size > MAX_MANIFEST_BYTES:
        raise SerializationError(f"minitorch.load: the manifest of {name} is implausibly large")
    try:
        manifest = json.loads(_read_member(archive, MANIFEST, name).decode("utf-8"), parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        raise SerializationError(f"minitorch.load: the manifest of {name} is not valid JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise SerializationError(f"minitorch.load: {name} is not a minitorch save file (wrong format tag)")
    version = manifest.get("version")
    if not _is_int(version) or version != VERSION:
        raise SerializationError(
            f"minitorch.load: {name} has format version {version!r}; this minitorch reads {VERSION}"
        )
    if manifest.get("byteorder") != "little":
        raise SerializationError(f"minitorch.load: unsupported byte order {manifest.get('byteorder')!r}")
    _check_keys(manifest, _MANIFEST_KEYS, set(), "the manifest")
    _check(isinstance(manifest["storages"], list), "the manifest has no storage table")
    records = [_storage_record(index, record) for index, record in enumerate(manifest["storages"])]
    _check_storage_members(archive, records, names)
    reader = _Reader(archive, records, map_location)
    try:
        return reader.decode(manifest["object"], 0)
    except RecursionError:
        raise SerializationError("minitorch.load: the object tree is nested too deeply") from None


def _check_keys(record: dict, required: set, optional: set, what: str) -> None:
    missing, extra = required - record.keys(), record.keys() - required - optional
    _check(not missing, f"{what} lacks {sorted(missing)}")
    _check(not extra, f"{what} has unknown keys {sorted(extra)[:5]}")


def _dtype_named(value, what: str) -> _dtype.dtype:
    if not (isinstance(value, str) and value in _dtype.DTYPES_BY_NAME):  # a list or dict is not hashable
        raise SerializationError(f"minitorch.load: {what} has unknown dtype {reprlib.repr(value)}")
    return _dtype.DTYPES_BY_NAME[value]


def _storage_record(index: int, record) -> tuple:
    """``(dtype, numel, device)`` of one storage-table entry, every field type-checked."""
    what = f"storage {index}"
    _check(isinstance(record, dict), f"{what} is malformed")
    _check_keys(record, _STORAGE_KEYS, set(), what)
    dtype = _dtype_named(record["dtype"], what)
    numel = record["numel"]
    _check(_is_int(numel) and 0 <= numel <= MAX_BYTES // dtype.itemsize,
           f"{what} has a bad element count {reprlib.repr(numel)}")
    return dtype, numel, _Reader.device(record["device"])


def _check_storage_members(archive: zipfile.ZipFile, records: list, names: set) -> None:
    """Every storage with data has its member, of exactly ``numel * itemsize`` bytes, and nothing else is
    in the archive: checked before any storage is read."""
    for index, (dtype, numel, location) in enumerate(records):
        if location.type == "meta":
            continue
        member = f"storages/{index}"
        _check(member in names, f"the data of storage {index} is missing")
        size, expected = archive.getinfo(member).file_size, numel * dtype.itemsize
        _check(size == expected, f"storage {index} should hold {expected} bytes ({numel} x {dtype}) but holds {size}")
    expected_names = {MANIFEST} | {f"storages/{i}" for i, r in enumerate(records) if r[2].type != "meta"}
    extra = names - expected_names
    _check(not extra, f"unexpected members {sorted(extra)[:5]} in the archive")


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise SerializationError(f"minitorch.load: {message}")


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


class _Reader:
    """Decodes the object tree; each storage is read (and validated) once, on first use."""

    def __init__(self, archive, records: list, map_location):
        self.archive = archive
        self.records = records
        self.map_location = map_location
        self.bases: dict[int, Tensor] = {}

    def decode(self, node, depth: int):
        _check(depth <= MAX_DEPTH, f"containers nested deeper than {MAX_DEPTH} levels")
        if node is None or isinstance(node, (bool, int, str)):
            return node
        if isinstance(node, float):
            return node
        if isinstance(node, list):
            return [self.decode(x, depth + 1) for x in node]
        if not (isinstance(node, dict) and len(node) == 1):  # the message only on failure: repr costs O(node)
            raise SerializationError(f"minitorch.load: malformed entry {reprlib.repr(node)}")
        (tag, value), = node.items()
        if tag == "$tensor":
            return self.tensor(value)
        if tag == "$tuple":
            _check(isinstance(value, list), "malformed tuple")
            return tuple(self.decode(x, depth + 1) for x in value)
        if tag in ("$dict", "$odict"):
            pairs_ok = isinstance(value, list) and all(isinstance(p, list) and len(p) == 2 for p in value)
            _check(pairs_ok, "malformed dict")
            result = OrderedDict() if tag == "$odict" else {}
            for key, item in value:
                key = self.decode(key, depth + 1)
                try:
                    hash(key)
                except TypeError:
                    raise SerializationError(f"minitorch.load: unhashable dict key {reprlib.repr(key)}") from None
                result[key] = self.decode(item, depth + 1)
            return result
        if tag == "$float":
            _check(value in ("nan", "inf", "-inf"), f"malformed float {reprlib.repr(value)}")
            return float(value)
        if tag == "$size":
            _check(isinstance(value, list) and all(_is_int(n) and 0 <= n <= MAX_BYTES for n in value), "malformed Size")
            return Size(value)
        if tag == "$dtype":
            return _dtype_named(value, "a $dtype entry")
        if tag == "$device":
            return self.device(value)
        raise SerializationError(f"minitorch.load: unknown entry type {tag!r}")

    @staticmethod
    def device(text) -> device:
        _check(isinstance(text, str), f"malformed device {reprlib.repr(text)}")
        try:
            return device(text)
        except (RuntimeError, ValueError, TypeError) as exc:
            raise SerializationError(f"minitorch.load: bad device {text!r} ({exc})") from None

    def tensor(self, record) -> Tensor:
        _check(isinstance(record, dict), "malformed tensor record")
        _check_keys(record, _TENSOR_KEYS, {"parameter"}, "a tensor record")
        index, size, stride = record["storage"], record["size"], record["stride"]
        offset, requires_grad = record["storage_offset"], record["requires_grad"]
        parameter = record.get("parameter", False)
        _check(_is_int(index) and 0 <= index < len(self.records),
               f"tensor refers to a missing storage {reprlib.repr(index)}")
        _check(isinstance(size, list) and isinstance(stride, list) and len(size) == len(stride) <= MAX_DIMS,
               "tensor size/stride are malformed")
        _check(all(_is_int(n) and n >= 0 for n in size + stride) and _is_int(offset) and offset >= 0,
               "tensor size, stride and storage_offset must be non-negative integers")
        _check(isinstance(requires_grad, bool), "requires_grad must be a bool")
        _check(isinstance(parameter, bool), "parameter must be a bool")
        dtype, numel, _ = self.records[index]
        _check_geometry(size, stride, offset, dtype.itemsize, numel)
        t = self.storage(index)._view(tuple(size), tuple(stride), offset)
        if requires_grad:
            _check(t.dtype.is_floating_point, f"a {t.dtype} tensor cannot require grad")
            t.requires_grad_(True)
        if parameter:
            t = _as_parameter(t, requires_grad)
        return t

    def storage(self, index: int) -> Tensor:
        """A 1-D tensor over storage ``index``'s data, on the device ``map_location`` picks."""
        base = self.bases.get(index)
        if base is not None:
            return base
        dtype, numel, location = self.records[index]
        cpu = backend_for(CPU)
        if location.type == "meta":
            target = self.target(None, location)
            _check(target.type == "meta", f"storage {index} was saved from a meta tensor and has no data; "
                                          "load it with map_location='meta'")
            meta = backend_for(target)
            base = from_array(meta.empty((numel,), dtype), meta, target)
        else:
            array = self.read_array(index, dtype, numel)
            target = self.target(from_array(array, cpu, CPU), location)
            if target.type == "cuda":
                _require_cuda()
            backend = backend_for(target)
            if backend is not cpu:
                array = backend.from_numpy(array) if target.type != "meta" else backend.empty((numel,), dtype)
            base = from_array(array, backend, backend.normalize(target))
        self.bases[index] = base
        return base

    def read_array(self, index: int, dtype, numel: int):
        """Storage ``index``'s bytes (their count was checked against the record before loading began)."""
        raw = _read_member(self.archive, f"storages/{index}", "the file")
        _check(len(raw) == numel * dtype.itemsize, f"storage {index} is truncated")
        cpu = backend_for(CPU)
        if dtype is _dtype.bool:  # any nonzero byte is True (never reinterpret arbitrary bytes as bool)
            return cpu.xp.frombuffer(raw, dtype=cpu.array_dtype(_dtype.uint8)) != 0
        native = cpu.array_dtype(dtype)
        return cpu.xp.frombuffer(raw, dtype=native.newbyteorder("<")).astype(native, copy=True)

    def target(self, cpu_base: Tensor | None, location: device) -> device:
        """Where ``map_location`` sends a storage saved at ``location``."""
        where = self.map_location
        if where is None:
            return location
        if isinstance(where, dict):
            where = where.get(str(location), location)
        elif callable(where) and not isinstance(where, (str, device)):
            result = where(TypedStorage(cpu_base._storage) if cpu_base is not None else None, str(location))
            if result is None:
                return location
            where = result.device if isinstance(result, (TypedStorage, UntypedStorage)) else result
        try:
            return where if isinstance(where, device) else device(where)
        except (RuntimeError, ValueError, TypeError) as exc:
            raise ValueError(f"minitorch.load: bad map_location {where!r} ({exc})") from None


def _check_geometry(size: list, stride: list, offset: int, itemsize: int, numel: int) -> None:
    """A view must stay inside its storage of ``numel`` elements, and its sizes and byte strides must fit
    in int64 (a stride-0 view may be far larger than its storage, but not larger than that)."""
    limit = MAX_BYTES // itemsize
    fits = all(n <= limit for n in size) and all(s <= limit for s in stride) and offset <= limit
    if not (fits and math.prod(n for n in size if n) <= limit):
        raise SerializationError(f"minitorch.load: tensor of size {reprlib.repr(size)}, stride "
                                 f"{reprlib.repr(stride)} and offset {offset} does not fit in 64-bit byte sizes")
    if 0 in size:
        _check(offset <= numel, f"storage_offset {offset} is past the end of a storage of {numel} elements")
        return
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    if last >= numel:
        raise SerializationError(f"minitorch.load: tensor of size {size}, stride {stride} and offset {offset} reads "
                                 f"past the end of its storage of {numel} elements")


def _require_cuda() -> None:
    if not cuda.is_available():
        raise RuntimeError(
            "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are "
            "running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map "
            "your storages to the CPU."
        )


def _as_parameter(t: Tensor, requires_grad: bool) -> Tensor:
    """Saved ``nn.Parameter``s come back as Parameters when minitorch.nn defines the class."""
    parameter = getattr(nn, "Parameter", None)
    return parameter(t, requires_grad=requires_grad) if parameter is not None else t


__all__ = ["save", "load"]
