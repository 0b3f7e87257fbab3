"""``save`` / ``load``: checkpoints in PyTorch's zip format, read safely; minitorch's older JSON format.

``save`` writes what ``torch.save`` writes (a zip of ``data.pkl``, a pickle of the object tree, and one
raw little-endian record per storage), so PyTorch loads it. ``load`` reads those files with PyTorch's
weights-only rules by default (serialization_torch.py: only allow-listed globals are resolved, so nothing
the file names runs), and also minitorch's earlier format (a JSON manifest plus raw storages, never
pickled). Every size, stride and offset is validated against its record; members are stored, never
inflated, and none may claim more bytes than the file has. See docs/serialization.md.
"""

from __future__ import annotations

import io
import json
import math
import os
import pickle
import reprlib
import secrets
import stat
import struct
import warnings
import zipfile
import zlib
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from . import _dtype, cuda, nn
from ._backends import backend_for
from ._device import CPU, device
from ._names import check_serializable
from .layout import strided
from .serialization_torch import (
    Rebuilder,
    WeightsOnlyError,
    add_safe_globals,
    clear_safe_globals,
    dumps,
    get_safe_globals,
    load_stream,
    loads,
    safe_globals,
)
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
    """A file that is not a valid checkpoint (corrupt, truncated, foreign, or malicious)."""


class UnpicklingError(SerializationError, pickle.UnpicklingError):
    """What the weights-only loader refuses: PyTorch raises ``pickle.UnpicklingError`` here."""


LEGACY_MAGIC = 0x1950A86A20F9469CFC6C  # the first pickle of a legacy-format file
LEGACY_PROTOCOL = 1001
TORCH_ARCHIVE = "archive"  # the record prefix torch.save uses for file objects
TORCH_VERSION = b"3"
_ALIGNMENT = 64  # torch.save aligns each storage record's data to 64 bytes (for mmap)
_UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from `False` "
    "to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can result "
    "in arbitrary code execution. Do it only if you got the file from a trusted source."
)


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
        check_serializable(t)
        if t.layout is not _strided():
            raise TypeError(f"minitorch.save: tensors of layout {t.layout} are not supported by the JSON format")
        if t.is_quantized:
            raise TypeError(f"minitorch.save: quantized tensors ({t.dtype}) are not supported by the JSON format")
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
    """Write ``obj`` to a path or a binary file object in PyTorch's zip format: ``torch.load`` reads it
    (with ``weights_only=True`` when ``obj`` holds only tensors, containers and scalars; a whole
    ``nn.Module`` needs ``weights_only=False``, in minitorch as in PyTorch).

    Saving to a path is atomic: the file is written beside it under a temporary name, synced to disk
    and renamed over ``f``, so an interrupted save never leaves a truncated checkpoint in place of a
    good one."""
    if pickle_module is not None and pickle_module is not pickle:
        raise ValueError("minitorch.save: pickle_module must be None or the pickle module")
    if not (isinstance(pickle_protocol, int) and 2 <= pickle_protocol <= pickle.HIGHEST_PROTOCOL):
        raise ValueError(f"minitorch.save: unsupported pickle_protocol {pickle_protocol!r}")
    legacy = not _use_new_zipfile_serialization
    # before touching any file: an unpicklable object raises here
    data, storages = dumps(obj, pickle_protocol, legacy=legacy)
    if legacy:
        def write(handle):
            _write_legacy(handle, data, storages, pickle_protocol)
    else:
        def write(handle):
            _write_zip(handle, data, storages)
    if isinstance(f, (str, os.PathLike)):
        _atomic_write(os.fspath(f), write)
    else:
        write(f)


def _save_minitorch_format(obj: Any, f) -> None:
    """minitorch's earlier format (a JSON manifest and raw storages; ``load`` still reads it)."""
    writer = _Writer()
    root = writer.encode(obj)
    storages = []
    for storage in writer.storages:
        storages.append({"dtype": storage.dtype.name, "numel": len(storage), "device": str(storage.device)})
    manifest = {"format": FORMAT, "version": VERSION, "byteorder": "little", "storages": storages, "object": root}
    if isinstance(f, (str, os.PathLike)):
        _atomic_write(os.fspath(f), lambda handle: _write_json_zip(handle, manifest, writer.storages))
    else:
        _write_json_zip(f, manifest, writer.storages)


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


def _write_zip(handle, data: bytes, storages: list) -> None:
    """PyTorch's layout: ``archive/data.pkl``, format records, ``archive/data/<i>`` per storage (its data
    64-byte aligned, padded with an ``FB`` extra field as torch.save does), ``archive/version``."""
    start = handle.tell()
    with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        records = [("data.pkl", data), (".format_version", b"1"), (".storage_alignment", str(_ALIGNMENT).encode()),
                   ("byteorder", b"little")]
        records += [(f"data/{i}", storage) for i, storage in enumerate(storages)]
        records.append(("version", TORCH_VERSION))
        for name, payload in records:
            if isinstance(payload, bytes):
                archive.writestr(_stored(f"{TORCH_ARCHIVE}/{name}"), payload)
                continue
            body = _storage_bytes(payload)
            info = _stored(f"{TORCH_ARCHIVE}/{name}")
            info.file_size = len(body) if isinstance(body, bytes) else body.nbytes
            zip64 = info.file_size > zipfile.ZIP64_LIMIT
            header = handle.tell() - start + 30 + len(info.filename.encode()) + (20 if zip64 else 0) + 4
            info.extra = b"FB" + struct.pack("<H", -header % _ALIGNMENT) + b"Z" * (-header % _ALIGNMENT)
            with archive.open(info, "w", force_zip64=zip64) as member:
                member.write(body)


def _write_legacy(handle, data: bytes, storages: list, protocol: int) -> None:
    """PyTorch's legacy format (``_use_new_zipfile_serialization=False``): four pickles back to back (the magic
    number, the protocol version, sys_info, the object tree), the sorted storage keys as a fifth, then per key
    its element count (int64, little-endian) and raw little-endian bytes."""
    sys_info = {"protocol_version": LEGACY_PROTOCOL, "little_endian": True,
                "type_sizes": {"short": 2, "int": 4, "long": 4}}
    for header in (LEGACY_MAGIC, LEGACY_PROTOCOL, sys_info):
        handle.write(pickle.dumps(header, protocol=protocol))
    handle.write(data)
    keys = sorted(str(i) for i in range(len(storages)))
    handle.write(pickle.dumps(keys, protocol=protocol))
    for key in keys:
        storage = storages[int(key)]
        handle.write(struct.pack("<q", len(storage)))
        handle.write(_storage_bytes(storage))


def _stored(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    return info


def _write_json_zip(handle, manifest: dict, storages: list) -> None:
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


def load(f, map_location=None, pickle_module=None, *, weights_only: bool | None = None, mmap: bool | None = None,
         **pickle_load_args) -> Any:
    """Read a checkpoint written by ``torch.save`` or ``minitorch.save`` (or minitorch's earlier format).

    ``weights_only=True`` (the default, as in PyTorch) resolves only PyTorch's allow-list of globals plus
    those added with ``serialization.add_safe_globals``; anything else raises ``pickle.UnpicklingError``
    naming the global. ``weights_only=False`` unpickles fully: only for files you trust. ``map_location``
    (a device, a string, a ``{saved: target}`` dict, or ``fn(storage, location)``) moves storages.
    ``mmap=True`` is accepted for a path and reads the file normally (minitorch copies every record)."""
    if pickle_module is not None and pickle_module is not pickle:
        raise ValueError("minitorch.load: pickle_module must be None or the pickle module")
    if weights_only is None:  # PyTorch: an explicit pickle_module means full unpickling unless told otherwise
        weights_only = pickle_module is None
    elif weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
        pickle_load_args = {}
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    options = (map_location, bool(weights_only), pickle_load_args)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as handle:
            if mmap and handle.read(2) != b"PK":
                raise RuntimeError(f"mmap can only be used with files saved with `torch.save({os.fspath(f)}, "
                                   "_use_new_zipfile_serialization=True), please torch.save your checkpoint with "
                                   "this option in order to use mmap.")
            handle.seek(0)
            return _load(handle, options, repr(os.fspath(f)))
    if not hasattr(f, "read"):
        raise TypeError(f"minitorch.load: expected a path or a binary file object, got {type(f).__name__}")
    if isinstance(f, io.TextIOBase):
        raise TypeError("minitorch.load: the file must be opened in binary mode ('rb')")
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    return _load(f, options, "the file object")


def _load(handle, options, name: str):
    start = handle.tell()
    head = handle.read(4)
    if not isinstance(head, bytes):
        raise TypeError("minitorch.load: the file must be opened in binary mode ('rb')")
    handle.seek(0, io.SEEK_END)
    length = handle.tell() - start
    handle.seek(start)
    if head[:2] != b"PK":
        if head.startswith(_PICKLE_PREFIXES):  # PyTorch's legacy format (_use_new_zipfile_serialization=False)
            return _load_legacy(handle, options, name, length)
        raise SerializationError(f"minitorch.load: {name} is not a checkpoint (not a zip archive)")
    try:
        archive = zipfile.ZipFile(handle)
    except _ZIP_ERRORS as exc:
        raise SerializationError(f"minitorch.load: {name} is a corrupt or truncated archive ({exc})") from None
    with archive:
        _check_members(archive, name, length)
        return _read_archive(archive, options, name)


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


def _read_archive(archive: zipfile.ZipFile, options, name: str):
    names = set(archive.namelist())
    if MANIFEST not in names:
        return _read_torch_archive(archive, names, options, name)
    map_location = options[0]
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


# PyTorch's format ---------------------------------------------------------------------------------

_MAX_PICKLE_BYTES = MAX_MANIFEST_BYTES


def _read_torch_archive(archive: zipfile.ZipFile, names: set, options, name: str):
    """A ``torch.save`` archive: every member under one ``<prefix>/`` folder, ``<prefix>/data.pkl`` the
    object tree, ``<prefix>/data/<key>`` the storages (read on first reference, each once)."""
    map_location, weights_only, pickle_load_args = options
    prefixes = {n.split("/", 1)[0] for n in names}
    if len(prefixes) != 1 or not all("/" in n for n in names):
        raise SerializationError(f"minitorch.load: {name} is not a minitorch save file nor a PyTorch checkpoint "
                                 f"(no {MANIFEST}, and its members are not in one folder)")
    prefix = prefixes.pop()
    if f"{prefix}/constants.pkl" in names or any(n.startswith(f"{prefix}/code/") for n in names):
        raise SerializationError(f"minitorch.load: {name} is a TorchScript archive (torch.jit.save); minitorch "
                                 "cannot run TorchScript")
    if f"{prefix}/data.pkl" not in names:
        raise SerializationError(f"minitorch.load: {name} is not a minitorch save file nor a PyTorch checkpoint "
                                 f"(no {MANIFEST} or data.pkl)")
    for record in (f"{prefix}/.data/version", f"{prefix}/version"):
        if record in names:
            text = _small_record(archive, record, name)
            _check(text.strip().isdigit() and 1 <= int(text) <= 100, f"{name} has an unknown format version {text!r}")
            break
    byteorder = "little"
    if f"{prefix}/byteorder" in names:
        raw = _small_record(archive, f"{prefix}/byteorder", name)
        _check(raw in (b"little", b"big"), f"unknown byte order {raw!r} in {name}")
        byteorder = raw.decode()
    _check(archive.getinfo(f"{prefix}/data.pkl").file_size <= _MAX_PICKLE_BYTES,
           f"the data.pkl of {name} is implausibly large")
    data = _read_member(archive, f"{prefix}/data.pkl", name)
    reader = _TorchReader(archive, prefix, names, byteorder, map_location)
    rebuild = Rebuilder(reader.view, reader.meta)
    return _guarded(lambda: loads(data, rebuild, reader.load_storage, weights_only, **pickle_load_args),
                    weights_only, f"the data.pkl of {name}")


def _guarded(unpickle: Callable, weights_only: bool, what: str):
    """Run ``unpickle``: map_location's own errors pass unchanged; with ``weights_only`` a refused global is
    PyTorch's ``UnpicklingError`` and anything else that goes wrong on bad data a ``SerializationError``."""
    if not weights_only:
        try:
            return unpickle()
        except _MapLocationError as exc:
            raise exc.error from None
    try:
        return unpickle()
    except SerializationError:
        raise
    except _MapLocationError as exc:
        raise exc.error from None
    except WeightsOnlyError as exc:
        raise UnpicklingError(_weights_only_message(str(exc))) from None
    except (Exception, RecursionError) as exc:  # whatever an allowed callable or the unpickler raised on bad data
        raise SerializationError(f"minitorch.load: {what} is malformed "
                                 f"({type(exc).__name__}: {reprlib.repr(str(exc))})") from None


class _MapLocationError(Exception):
    """Carries an error of ``map_location`` (not of the file) out of the unpickler unchanged."""

    def __init__(self, error: Exception):
        super().__init__(str(error))
        self.error = error


def _small_record(archive: zipfile.ZipFile, member: str, name: str) -> bytes:
    """A record of a few bytes (version, byte order); a longer one is malformed, and is not read."""
    return _read_member(archive, member, name) if archive.getinfo(member).file_size <= 16 else b"(too long)"


def _weights_only_message(message: str) -> str:
    """PyTorch's explanation around a weights-only refusal."""
    if "was not an allowed global by default" in message:
        return ("Weights only load failed. This file can still be loaded, to do so you have two options, do those "
                f"steps only if you trust the source of the checkpoint. \n\t(1) {_UNSAFE_MESSAGE}\n\t(2) "
                "Alternatively, to load with `weights_only=True` please check the recommended steps in the "
                "following error message.\n\tWeightsUnpickler error: " + message)
    return f"Weights only load failed. {_UNSAFE_MESSAGE}\n\n{message}"


class _TorchReader(_Reader):
    """Storages of a torch.save archive, keyed by record name; views are checked against their storage."""

    def __init__(self, archive, prefix: str, names: set, byteorder: str, map_location):
        super().__init__(archive, {}, map_location)
        self.prefix, self.names, self.byteorder = prefix, names, byteorder
        self.by_storage: dict[int, Tensor] = {}  # id(Storage) -> its 1-D base tensor

    def load_storage(self, dtype, key: str, location: str, numel: int) -> TypedStorage:
        record = self.records.get(key)
        if record is None:
            member = f"{self.prefix}/data/{key}"
            _check(member in self.names, f"the record data/{reprlib.repr(key)} of a storage is missing")
            _check(numel <= MAX_BYTES // dtype.itemsize, f"storage {key!r} has a bad element count {numel}")
            size = self.archive.getinfo(member).file_size
            _check(size == numel * dtype.itemsize,
                   f"storage {key!r} should hold {numel * dtype.itemsize} bytes ({numel} x {dtype}) but holds {size}")
            self.records[key] = record = (dtype, numel, self.device(location))
        return self.typed_storage(key, record, dtype, numel)

    def typed_storage(self, key: str, record: tuple, dtype, numel: int) -> TypedStorage:
        """The storage ``key`` for a reference that names ``dtype`` and ``numel`` (checked against its record)."""
        _check(record[0] is dtype and record[1] == numel, f"storage {key!r} is referenced with two types or sizes")
        try:
            base = self.storage(key)
        except SerializationError:
            raise
        except (ValueError, RuntimeError) as exc:  # map_location's errors are the caller's, not the file's
            raise _MapLocationError(exc) from None
        self.by_storage[id(base._storage)] = base
        return TypedStorage(base._storage)

    def read_array(self, key, dtype, numel: int):
        raw = _read_member(self.archive, f"{self.prefix}/data/{key}", "the file")
        _check(len(raw) == numel * dtype.itemsize, f"storage {key!r} is truncated")
        cpu = backend_for(CPU)
        if dtype is _dtype.bool:
            return cpu.xp.frombuffer(raw, dtype=cpu.array_dtype(_dtype.uint8)) != 0
        native = cpu.array_dtype(dtype)
        order = "<" if self.byteorder == "little" else ">"
        if dtype is _dtype.bfloat16 and order == ">":  # numpy cannot byte-swap bfloat16: swap its 2-byte words
            swapped = cpu.xp.frombuffer(raw, dtype=">u2").astype("<u2")
            return swapped.view(native).copy()
        return cpu.xp.frombuffer(raw, dtype=native.newbyteorder(order)).astype(native, copy=True)

    def view(self, storage: TypedStorage, size: tuple, stride: tuple, offset: int) -> Tensor:
        base = self.by_storage.get(id(storage._storage))
        _check(base is not None, "a tensor refers to a storage that is not a record of the file")
        _check_geometry(list(size), list(stride), offset, storage.dtype.itemsize, len(storage))
        return base._view(size, stride, offset)

    def meta(self, dtype, size: tuple, stride: tuple) -> Tensor:
        numel = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
        _check_geometry(list(size), list(stride), 0, dtype.itemsize, max(numel, 0))
        target = device("meta")
        backend = backend_for(target)
        return from_array(backend.empty((numel,), dtype), backend, target)._view(size, stride, 0)


# PyTorch's legacy format -----------------------------------------------------------------------------


def _load_legacy(handle, options, name: str, length: int):
    """A ``torch.save(..., _use_new_zipfile_serialization=False)`` file: three header pickles (magic number,
    protocol version, sys_info), the object tree, the list of storage keys, then each storage's element count
    and bytes. As in PyTorch, a storage is allocated (and ``map_location`` applied) when the object tree names
    it and filled when its bytes come; unlike PyTorch, the bytes every storage named so far claims must fit in
    what is left of the file before it is allocated, so a forged count allocates nothing."""
    map_location, weights_only, pickle_load_args = options
    # in memory: a real file's read(n) allocates n bytes up front, and a forged string length names any n
    handle = io.BytesIO(handle.read(length))
    reader = _LegacyReader(handle, length, map_location)
    rebuild = Rebuilder(reader.view, reader.meta)

    def header():  # plain values: read with the weights-only rules whatever the caller asked
        try:
            return load_stream(handle, rebuild, reader.refuse_storage, True)
        except WeightsOnlyError as exc:  # a bare pickle naming code (never PyTorch's header): not a checkpoint
            raise SerializationError(f"minitorch.load: {name} is not a checkpoint: a pickle that is not PyTorch's "
                                     f"legacy header ({exc})") from None

    def unpickle():
        magic = header()
        _check(_is_int(magic) and magic == LEGACY_MAGIC,
               f"{name} is not a checkpoint: Invalid magic number; corrupt file?")
        version = header()
        _check(_is_int(version) and version == LEGACY_PROTOCOL, f"Invalid protocol version: {version!r}")
        sys_info = header()
        _check(isinstance(sys_info, dict) and isinstance(sys_info.get("little_endian", True), bool),
               f"{name} has a malformed sys_info record")
        reader.byteorder = "little" if sys_info.get("little_endian", True) else "big"
        result = load_stream(handle, rebuild, reader.load_storage, weights_only, legacy=True, **pickle_load_args)
        keys = header()
        reader.fill(keys)
        return result

    return _guarded(unpickle, weights_only, f"{name} (PyTorch's legacy format)")


class _LegacyReader(_TorchReader):
    """Storages of a legacy-format file, keyed as the file keys them; filled in place once their bytes come."""

    def __init__(self, handle, end: int, map_location):
        super().__init__(None, "", set(), "little", map_location)
        self.handle, self.end = handle, end
        self.claimed = 0  # bytes the storages named so far need after the pickles (count + data each)

    def refuse_storage(self, *args):
        raise SerializationError("minitorch.load: a storage inside a legacy header record")

    def load_storage(self, dtype, key: str, location: str, numel: int) -> TypedStorage:
        if key not in self.records:
            _check(numel <= MAX_BYTES // dtype.itemsize, f"storage {key!r} has a bad element count {numel}")
            self.claimed += 8 + numel * dtype.itemsize
            left = self.end - self.handle.tell()
            _check(self.claimed <= left, f"storage {key!r} claims {numel} x {dtype} but the file has only {left} "
                                         "bytes left for every storage's data")
            self.records[key] = (dtype, numel, self.device(location))
        return self.typed_storage(key, self.records[key], dtype, numel)

    def read_array(self, key, dtype, numel: int):
        """Zeros for now (the file's bytes for it come after the object tree; see ``fill``)."""
        cpu = backend_for(CPU)
        return cpu.xp.zeros(numel, dtype=cpu.array_dtype(dtype))

    def fill(self, keys) -> None:
        """Read each storage's bytes, in the order of ``keys``, into the storage the object tree made."""
        _check(isinstance(keys, list) and all(isinstance(k, str) for k in keys) and len(set(keys)) == len(keys),
               "the storage key list is malformed")
        _check(set(keys) == set(self.records), "the storage key list does not match the storages of the object tree")
        for key in keys:
            dtype, numel, _ = self.records[key]
            head = self.handle.read(8)
            _check(len(head) == 8, f"the data of storage {key!r} is missing (truncated file)")
            count = int.from_bytes(head, self.byteorder, signed=True)
            _check(count == numel, f"storage {key!r} holds {count} elements, its record says {numel}")
            raw = self.handle.read(numel * dtype.itemsize)
            _check(len(raw) == numel * dtype.itemsize, f"the data of storage {key!r} is truncated")
            base = self.bases[key]
            if base.device.type == "meta":
                continue
            array = self.decode(raw, dtype)
            backend = base._storage.backend
            base._storage.data[...] = array if backend is backend_for(CPU) else backend.from_numpy(array)

    def decode(self, raw: bytes, dtype):
        cpu = backend_for(CPU)
        if dtype is _dtype.bool:
            return cpu.xp.frombuffer(raw, dtype=cpu.array_dtype(_dtype.uint8)) != 0
        native = cpu.array_dtype(dtype)
        if dtype is _dtype.bfloat16 and self.byteorder == "big":
            return cpu.xp.frombuffer(raw, dtype=">u2").astype("<u2").view(native)
        order = "<" if self.byteorder == "little" else ">"
        return cpu.xp.frombuffer(raw, dtype=native.newbyteorder(order)).astype(native)


# torch.serialization's allow-list API (module attributes, as in PyTorch; not exported at the top level)
_SAFE_GLOBALS_API = (add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals)

__all__ = ["save", "load"]
