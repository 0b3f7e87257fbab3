"""The pickle layer of PyTorch's checkpoint format, without importing torch.

``torch.save`` writes ``data.pkl``: a protocol-2 pickle of the object tree in which every tensor is a
``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)`` call and every
storage a persistent id ``('storage', torch.FloatStorage, key, location, numel)`` naming the raw record
``data/<key>``. ``_TorchPickler`` writes those opcodes for minitorch objects (the ``torch`` names are
emitted as GLOBAL opcodes, never looked up). ``WeightsOnlyUnpickler`` reads them with PyTorch's
weights-only allow-list: a GLOBAL outside the list (and outside ``add_safe_globals``) is refused before
anything is called, so no code named by the file runs. serialization.py owns the zip archive around it.
"""

from __future__ import annotations

import _compat_pickle
import codecs
import collections
import contextlib
import importlib
import io
import pickle
from collections.abc import Callable, Iterator
from typing import Any

from . import _dtype
from ._device import device
from ._names import check_serializable
from .creation import tensor as _make_tensor
from .layout import strided
from .nn.parameter import Parameter
from .quantization.qtensor import (
    PerChannelQuantizer,
    PerTensorQuantizer,
    QTensor,
    per_channel_affine,
    per_channel_affine_float_qparams,
    per_channel_symmetric,
    per_tensor_affine,
    per_tensor_symmetric,
    qscheme,
)
from .storage import Storage, TypedStorage, UntypedStorage
from .tensor import Size, Tensor

STORAGE_TYPES = {
    _dtype.bool: "BoolStorage", _dtype.uint8: "ByteStorage", _dtype.int8: "CharStorage",
    _dtype.int16: "ShortStorage", _dtype.int32: "IntStorage", _dtype.int64: "LongStorage",
    _dtype.float16: "HalfStorage", _dtype.bfloat16: "BFloat16Storage", _dtype.float32: "FloatStorage",
    _dtype.float64: "DoubleStorage", _dtype.complex64: "ComplexFloatStorage", _dtype.complex128: "ComplexDoubleStorage",
}


# quantized tensors: their storage holds the integer representation, under its own storage type
QUANTIZED_STORAGE_TYPES = {_dtype.quint8: "QUInt8Storage", _dtype.qint8: "QInt8Storage", _dtype.qint32: "QInt32Storage"}
_QSCHEMES = (per_tensor_affine, per_tensor_symmetric, per_channel_affine, per_channel_symmetric,
             per_channel_affine_float_qparams)


class WeightsOnlyError(pickle.UnpicklingError):
    """What the weights-only unpickler refuses (serialization.py adds PyTorch's explanation around it)."""


# saving -------------------------------------------------------------------------------------------


class _Global:
    """A ``module.name`` reference written as a GLOBAL opcode (the object itself need not exist here)."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle's save_reduce requires a callable; only the name is ever written
        raise TypeError(f"{self.module}.{self.name} is a reference written into checkpoints, not a function")


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_REBUILD_META = _Global("torch._utils", "_rebuild_meta_tensor_no_storage")
_REBUILD_QTENSOR = _Global("torch._utils", "_rebuild_qtensor")
_TORCH_SIZE = _Global("torch", "Size")
_TORCH_DEVICE = _Global("torch", "device")
_STORAGE_GLOBALS = {dtype: _Global("torch", name) for dtype, name in STORAGE_TYPES.items()}
_STORAGE_GLOBALS.update({dtype: _Global("torch", name) for dtype, name in QUANTIZED_STORAGE_TYPES.items()})
_DTYPE_GLOBALS = {dtype: _Global("torch", dtype.name) for dtype in _dtype.ALL_DTYPES + _dtype.QUANTIZED_DTYPES}


class _StorageRef:
    """Stands for one storage in the pickle; its persistent id names the record holding its bytes."""

    __slots__ = ("key", "storage", "dtype")

    def __init__(self, key: str, storage: Storage, dtype: _dtype.dtype):
        self.key, self.storage, self.dtype = key, storage, dtype  # dtype: quint8... for a quantized tensor's


class _TorchPickler(pickle._Pickler):
    """The pure-Python pickler (its dispatch table can be extended) writing minitorch objects as torch's."""

    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file, protocol: int, legacy: bool = False):
        super().__init__(file, protocol)
        self.legacy = legacy  # the legacy format's storage ids carry a sixth field, view_metadata (None)
        self.refs: dict[int, _StorageRef] = {}  # id(Storage) -> its record
        self.storages: list[Storage] = []  # keep the storages alive (ids stay unique) while pickling

    def save_torch_global(self, obj: _Global) -> None:
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        self.memoize(obj)

    def save_dtype(self, obj: _dtype.dtype) -> None:  # a dtype is the bare GLOBAL ``torch.float32``
        reference = _DTYPE_GLOBALS[obj]
        self.write(pickle.GLOBAL + f"{reference.module}\n{reference.name}\n".encode())
        self.memoize(obj)

    def save_qscheme(self, obj: qscheme) -> None:  # ``torch.per_tensor_affine``, a bare GLOBAL like a dtype
        self.write(pickle.GLOBAL + f"torch\n{obj.name}\n".encode())
        self.memoize(obj)

    dispatch[_Global] = save_torch_global
    dispatch[_dtype.dtype] = save_dtype
    dispatch[qscheme] = save_qscheme

    def persistent_id(self, obj):
        if type(obj) is not _StorageRef:
            return None
        storage = obj.storage
        location = "cpu" if storage.device.type == "cpu" else str(storage.device)
        record = ("storage", _STORAGE_GLOBALS[obj.dtype], obj.key, location, len(storage))
        return record + (None,) if self.legacy else record

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return self.reduce_tensor(obj)
        if type(obj) is Size:
            return _TORCH_SIZE, (tuple(obj),)
        if type(obj) is device:
            return _TORCH_DEVICE, ((obj.type,) if obj.index is None else (obj.type, obj.index))
        if isinstance(obj, (Storage, TypedStorage, UntypedStorage)):
            raise pickle.PicklingError("minitorch.save: save tensors, not bare storages")
        return NotImplemented

    def reduce_tensor(self, t: Tensor):
        check_serializable(t)
        if t.layout is not strided:
            raise pickle.PicklingError(f"minitorch.save: tensors of layout {t.layout} cannot be saved")
        if isinstance(t, QTensor):
            return self.reduce_qtensor(t)
        if type(t) is not Tensor and not isinstance(t, Parameter):
            raise pickle.PicklingError(f"minitorch.save: cannot save the Tensor subclass {type(t).__qualname__}")
        if isinstance(t, Parameter):
            data = t.detach()
            return _REBUILD_PARAMETER, (data, t.requires_grad, collections.OrderedDict())
        size, stride = tuple(t.shape), tuple(t.stride())
        if t.device.type == "meta":
            return _REBUILD_META, (t.dtype, size, stride, t.requires_grad)
        ref = self.ref(t._storage, t.dtype)
        return _REBUILD_TENSOR, (ref, t.storage_offset(), size, stride, t.requires_grad, collections.OrderedDict())

    def ref(self, storage: Storage, dtype: _dtype.dtype) -> _StorageRef:
        ref = self.refs.get(id(storage))
        if ref is None:
            ref = self.refs[id(storage)] = _StorageRef(str(len(self.storages)), storage, dtype)
            self.storages.append(storage)
        return ref

    def reduce_qtensor(self, t: QTensor):
        """PyTorch's ``_rebuild_qtensor(storage, offset, size, stride, quantizer_params, requires_grad,
        hooks)``; the storage (the integers) is written under ``torch.QUInt8Storage`` & co."""
        if t.device.type == "meta":
            raise pickle.PicklingError("minitorch.save: quantized meta tensors cannot be saved")
        quantizer = t._quantizer
        if isinstance(quantizer, PerTensorQuantizer):
            params = (per_tensor_affine, quantizer.scale, quantizer.zero_point)
        else:
            params = (per_channel_affine, quantizer.scales.detach(), quantizer.zero_points.detach(), quantizer.axis)
        ref = self.ref(t._storage, t.dtype)
        return _REBUILD_QTENSOR, (ref, t.storage_offset(), tuple(t.shape), tuple(t.stride()), params,
                                  t.requires_grad, collections.OrderedDict())


def dumps(obj: Any, protocol: int = 2, legacy: bool = False) -> tuple[bytes, list[Storage]]:
    """``data.pkl`` for ``obj`` and the storages it refers to (storage ``i`` goes to record ``data/i``; in the
    legacy format, to key ``str(i)``)."""
    buffer = io.BytesIO()
    pickler = _TorchPickler(buffer, protocol, legacy)
    pickler.dump(obj)
    return buffer.getvalue(), pickler.storages


# safe globals -------------------------------------------------------------------------------------

_user_globals: dict[str, Any] = {}


def _qualified(obj) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"


def add_safe_globals(safe_globals: list) -> None:
    """Allow the weights-only loader to use these globals (objects, or ``(object, "module.name")`` pairs)."""
    for item in safe_globals:
        if isinstance(item, tuple):
            if len(item) != 2 or not isinstance(item[1], str):
                raise ValueError(f"add_safe_globals: expected (object, 'module.name'), got {item!r}")
            _user_globals[item[1]] = item[0]
        else:
            _user_globals[_qualified(item)] = item


def get_safe_globals() -> list:
    """The globals added with ``add_safe_globals``."""
    return list(_user_globals.values())


def clear_safe_globals() -> None:
    """Forget every global added with ``add_safe_globals``."""
    _user_globals.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: list) -> Iterator[None]:
    """``add_safe_globals`` for the duration of a ``with`` block."""
    saved = dict(_user_globals)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _user_globals.clear()
        _user_globals.update(saved)


# loading ------------------------------------------------------------------------------------------


class _Marker:
    """A torch class a checkpoint may name but must not instantiate directly (``torch.Tensor``, storage types)."""

    __slots__ = ("name", "dtype", "quantized")

    def __init__(self, name: str, dtype=None, quantized=None):
        self.name, self.dtype, self.quantized = name, dtype, quantized  # quantized: quint8... for QUInt8Storage

    def __repr__(self) -> str:
        return f"<{self.name}>"


_TENSOR_MARKER = _Marker("torch.Tensor")
_PARAMETER_MARKER = _Marker("torch.nn.parameter.Parameter")
_UNTYPED = _Marker("torch.storage.UntypedStorage", _dtype.uint8)


def _encode(text, encoding="utf-8", errors="strict"):
    """``_codecs.encode``: how protocol 2 pickles ``bytes`` (only str -> bytes conversions)."""
    if not (isinstance(text, str) and isinstance(encoding, str) and isinstance(errors, str)):
        raise WeightsOnlyError("_codecs.encode: expected (str, encoding)")
    return codecs.encode(text, encoding, errors)


def _bytearray(source=b"", *args):
    """``builtins.bytearray`` without ``bytearray(n)``, which would allocate n bytes the file never held."""
    if isinstance(source, int):
        raise WeightsOnlyError("bytearray(n) is refused: a checkpoint holds its bytes")
    return bytearray(source, *args)


def _check_ints(values, what: str) -> tuple:
    if not (isinstance(values, tuple) and len(values) <= 64
            and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in values)):
        raise WeightsOnlyError(f"_rebuild_tensor_v2: {what} must be a tuple of non-negative ints")
    return values


class Rebuilder:
    """The functions a checkpoint may call, bound to one load: ``storage_view(storage, size, stride,
    offset)`` validates and makes the view, ``meta(dtype, size, stride)`` a meta tensor."""

    def __init__(self, storage_view: Callable, meta: Callable):
        self.storage_view = storage_view
        self.meta = meta

    def tensor_v2(self, storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                  metadata=None):
        if not isinstance(storage, TypedStorage):
            raise WeightsOnlyError("_rebuild_tensor_v2: the storage must be a persistent storage record")
        if not (isinstance(storage_offset, int) and not isinstance(storage_offset, bool) and storage_offset >= 0):
            raise WeightsOnlyError("_rebuild_tensor_v2: storage_offset must be a non-negative int")
        size, stride = _check_ints(size, "size"), _check_ints(stride, "stride")
        if len(size) != len(stride):
            raise WeightsOnlyError("_rebuild_tensor_v2: size and stride differ in length")
        t = self.storage_view(storage, size, stride, storage_offset)
        return self.finish(t, requires_grad)

    def tensor_v3(self, storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
        """PyTorch's rebuild for dtypes without a typed storage class (uint16, float8...): the storage is
        untyped bytes. minitorch has none of those dtypes; a file naming one of its own is read directly."""
        if not isinstance(storage, TypedStorage) or storage.dtype is not dtype:
            raise WeightsOnlyError(f"_rebuild_tensor_v3: a {dtype} tensor over untyped bytes is not supported")
        return self.tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata)

    def finish(self, t: Tensor, requires_grad) -> Tensor:
        if not isinstance(requires_grad, bool):
            raise WeightsOnlyError("_rebuild_tensor_v2: requires_grad must be a bool")
        if requires_grad:
            if not (t.dtype.is_floating_point or t.dtype.is_complex):
                raise WeightsOnlyError(f"_rebuild_tensor_v2: a {t.dtype} tensor cannot require grad")
            t.requires_grad_(True)
        return t

    def qtensor(self, storage, storage_offset, size, stride, quantizer_params, requires_grad, backward_hooks=None):
        """PyTorch's ``_rebuild_qtensor``: a view of an integer storage (``torch.QUInt8Storage`` & co.)
        carrying a per-tensor or per-channel quantizer, each parameter checked."""
        if not isinstance(storage, _QuantizedStorage):
            raise WeightsOnlyError("_rebuild_qtensor: the storage must be a quantized storage record")
        dtype = storage.quantized
        ints = self.tensor_v2(storage, storage_offset, size, stride)
        if not (isinstance(quantizer_params, tuple) and quantizer_params and quantizer_params[0] in _QSCHEMES):
            raise WeightsOnlyError("_rebuild_qtensor: quantizer_params must start with a qscheme")
        scheme = quantizer_params[0]
        if scheme is per_tensor_affine and len(quantizer_params) == 3:
            _, scale, zero_point = quantizer_params
            if not (isinstance(scale, float) and isinstance(zero_point, int) and not isinstance(zero_point, bool)):
                raise WeightsOnlyError("_rebuild_qtensor: per_tensor_affine needs (scheme, scale, zero_point)")
            quantizer = PerTensorQuantizer(dtype, scale, zero_point)
        elif scheme in (per_channel_affine, per_channel_affine_float_qparams) and len(quantizer_params) == 4:
            _, scales, zero_points, axis = quantizer_params
            if not (isinstance(axis, int) and not isinstance(axis, bool) and 0 <= axis < len(size)):
                raise WeightsOnlyError(f"_rebuild_qtensor: per_channel axis {axis!r} out of range for size {size}")
            if isinstance(scales, list) and isinstance(zero_points, list):
                scales, zero_points = _tensor_of(scales, _dtype.float64), _tensor_of(zero_points, _dtype.int64)
            if not (type(scales) is Tensor and type(zero_points) is Tensor and scales.dim() == zero_points.dim() == 1
                    and scales.numel() == zero_points.numel() == size[axis]):
                raise WeightsOnlyError(f"_rebuild_qtensor: per_channel scales/zero_points must be 1-D tensors of "
                                       f"size[axis]={size[axis]} elements")
            if scheme is not per_channel_affine:
                raise WeightsOnlyError(f"_rebuild_qtensor: minitorch has no {scheme!r} quantized tensors")
            quantizer = PerChannelQuantizer(dtype, scales.to(_dtype.float64), zero_points.to(_dtype.int64), axis)
        else:
            raise WeightsOnlyError(f"Can't deserialize quantized tensor with qscheme {scheme!r}")
        q = QTensor._make(ints._array, ints._storage, ints.storage_offset())  # a view of the loaded storage
        q._quantizer = quantizer
        if not isinstance(requires_grad, bool):
            raise WeightsOnlyError("_rebuild_qtensor: requires_grad must be a bool")
        return q.requires_grad_(requires_grad) if requires_grad else q

    def meta_tensor(self, dtype, size, stride, requires_grad=False, *extra):
        if not isinstance(dtype, _dtype.dtype):
            raise WeightsOnlyError("_rebuild_meta_tensor_no_storage: bad dtype")
        size, stride = _check_ints(size, "size"), _check_ints(stride, "stride")
        return self.finish(self.meta(dtype, size, stride), requires_grad)

    def parameter(self, data, requires_grad, backward_hooks=None, state=None):
        if not isinstance(data, Tensor) or not isinstance(requires_grad, bool):
            raise WeightsOnlyError("_rebuild_parameter: expected (Tensor, bool, hooks)")
        if requires_grad and not (data.dtype.is_floating_point or data.dtype.is_complex):
            raise WeightsOnlyError(f"_rebuild_parameter: a {data.dtype} parameter cannot require grad")
        parameter = Parameter(data, requires_grad=requires_grad)
        if state:
            if not isinstance(state, dict) or not all(isinstance(k, str) and not k.startswith("__") for k in state):
                raise WeightsOnlyError("_rebuild_parameter_with_state: the state must map attribute names to values")
            for key, value in state.items():
                setattr(parameter, key, value)
        return parameter

    def from_type_v2(self, func, new_type, args, state):
        rebuilders = (self.tensor_v2, self.tensor_v3, self.parameter, self.meta_tensor)
        if func not in rebuilders or not isinstance(args, tuple):
            raise WeightsOnlyError(f"_rebuild_from_type_v2: cannot rebuild with {func!r}")
        result = func(*args)
        if new_type is _PARAMETER_MARKER and not isinstance(result, Parameter):
            result = Parameter(result, requires_grad=result.requires_grad)
        elif new_type not in (_TENSOR_MARKER, _PARAMETER_MARKER):
            raise WeightsOnlyError(f"_rebuild_from_type_v2: cannot rebuild a {new_type!r}")
        if state:
            raise WeightsOnlyError("_rebuild_from_type_v2: tensors with extra attributes are not supported")
        return result


def _tensor_of(values: list, dtype: _dtype.dtype) -> Tensor:
    if len(values) > 2**24 or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        raise WeightsOnlyError("_rebuild_qtensor: per_channel parameters must be numbers")
    return _make_tensor(values, dtype=dtype)


class _QuantizedStorage(TypedStorage):
    """A storage record named ``torch.QUInt8Storage`` (& co.): the integers of a quantized tensor."""

    __slots__ = ("quantized",)

    def __init__(self, storage: Storage, quantized: _dtype.dtype):
        super().__init__(storage)
        self.quantized = quantized


def _allowed(rebuild: Rebuilder) -> dict[str, Any]:
    """PyTorch's weights-only allow-list (torch/_weights_only_unpickler.py), as minitorch objects."""
    table: dict[str, Any] = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        "torch.nn.parameter.Parameter": _PARAMETER_MARKER,
        "torch.Size": Size,
        "torch.Tensor": _TENSOR_MARKER,
        "torch.device": device,
        "_codecs.encode": _encode,
        "builtins.bytearray": _bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
        "torch._utils._rebuild_tensor_v2": rebuild.tensor_v2,
        "torch._utils._rebuild_tensor_v3": rebuild.tensor_v3,
        "torch._utils._rebuild_parameter": rebuild.parameter,
        "torch._utils._rebuild_parameter_with_state": rebuild.parameter,
        "torch._utils._rebuild_meta_tensor_no_storage": rebuild.meta_tensor,
        "torch._utils._rebuild_qtensor": rebuild.qtensor,
        "torch._tensor._rebuild_from_type_v2": rebuild.from_type_v2,
        "torch.storage.UntypedStorage": _UNTYPED,
        "torch.UntypedStorage": _UNTYPED,
    }
    for dtype in _dtype.ALL_DTYPES + _dtype.QUANTIZED_DTYPES:  # dtypes are values too (a quantized Linear's state)
        table[f"torch.{dtype.name}"] = dtype
    for dtype, name in STORAGE_TYPES.items():
        table[f"torch.{name}"] = _Marker(f"torch.{name}", dtype)
    for dtype, name in QUANTIZED_STORAGE_TYPES.items():  # the integers, read as int8/uint8/int32
        table[f"torch.{name}"] = _Marker(f"torch.{name}", _dtype.QUANTIZED_STORAGE_DTYPES[dtype], dtype)
    for scheme in _QSCHEMES:
        table[f"torch.{scheme.name}"] = scheme
    return table


# PyTorch dtypes (and their storage types) that minitorch lacks: named in a clearer refusal
_MISSING_DTYPES = {"uint16", "uint32", "uint64", "complex32", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                   "float8_e5m2fnuz", "float8_e8m0fnu", "quint4x2", "quint2x4", "QUInt4x2Storage",
                   "QUInt2x4Storage", "ComplexHalfStorage"}


def _python3_name(module: str, name: str) -> tuple[str, str]:
    """Protocol 2 writes Python 2's names (``__builtin__.set``): map them as pickle and PyTorch do."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def _builtin_name(full: str) -> str:
    """PyTorch names ``builtins.eval`` as ``eval`` in its message."""
    return full[len("builtins."):] if full.startswith("builtins.") else full


class WeightsOnlyUnpickler(pickle._Unpickler):
    """Resolves only allow-listed globals; ``persistent_load`` maps ``('storage', type, key, location,
    numel)`` through ``load_storage(dtype, key, location, numel)``.

    The pure-Python unpickler, not the C one: the C one sizes its memo by the largest index a file names,
    so a 2 KB pickle with ``LONG_BINPUT 0x7fffffff`` allocates gigabytes; this one keeps a dict."""

    dispatch = pickle._Unpickler.dispatch.copy()

    def __init__(self, file, rebuild: Rebuilder, load_storage: Callable, encoding: str = "utf-8",
                 legacy: bool = False, **kwargs):
        super().__init__(file, encoding=encoding, **kwargs)
        self.table = _allowed(rebuild)
        self.load_storage = load_storage
        self.legacy = legacy  # storage ids of the legacy format: a sixth field, view_metadata

    def find_class(self, module: str, name: str):
        module, name = _python3_name(module, name)
        full = f"{module}.{name}"
        if full in self.table:
            return self.table[full]
        if full in _user_globals:
            return _user_globals[full]
        if module == "torch" and name in _MISSING_DTYPES:
            raise WeightsOnlyError(f"the checkpoint uses torch.{name}, a dtype minitorch does not have")
        shown = _builtin_name(full)
        raise WeightsOnlyError(
            f"Unsupported global: GLOBAL {shown} was not an allowed global by default. Please use "
            f"`torch.serialization.add_safe_globals([{shown}])` or the `torch.serialization.safe_globals([{shown}])` "
            "context manager to allowlist this global if you trust this class/function."
        )

    def load_build(self) -> None:
        """BUILD sets attributes: only on dicts (a state_dict's ``_metadata``) and allowed user classes."""
        inst = self.stack[-2]
        if not (type(inst) in (collections.OrderedDict, collections.Counter) or type(inst) in self.user_types()):
            raise WeightsOnlyError(f"Trying to set the state of a {type(inst).__qualname__} (BUILD) is not allowed")
        super().load_build()

    dispatch[pickle.BUILD[0]] = load_build

    @staticmethod
    def user_types() -> set:
        return {g for g in _user_globals.values() if isinstance(g, type)}

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 + self.legacy and pid[0] in ("storage", b"storage")):
            raise WeightsOnlyError(f"Only persistent_load of storage is allowed, but got {str(pid)[:80]}")
        if self.legacy and pid[5] is not None:  # storage views: written by PyTorch before 1.0 only
            raise WeightsOnlyError("a legacy storage view (view_metadata) is not supported")
        _, storage_type, key, location, numel = pid[:5]
        if not isinstance(storage_type, _Marker) or storage_type.dtype is None:
            raise WeightsOnlyError(f"persistent storage of unknown type {storage_type!r}")
        if not (isinstance(key, str) and isinstance(location, str)
                and isinstance(numel, int) and not isinstance(numel, bool) and numel >= 0):
            raise WeightsOnlyError("malformed persistent storage record")
        storage = self.load_storage(storage_type.dtype, key, location, numel)
        if storage_type.quantized is not None:  # a fresh wrapper: the same record may also be read unquantized
            storage = _QuantizedStorage(storage._storage, storage_type.quantized)
        return storage


class FullUnpickler(WeightsOnlyUnpickler):
    """``weights_only=False``: any global, as ``pickle`` would (it runs whatever the file names); the torch
    names of the allow-list resolve to minitorch's, and other ``torch.x`` names to ``minitorch.x``."""

    dispatch = pickle._Unpickler.dispatch.copy()  # BUILD unrestricted

    def find_class(self, module: str, name: str):
        module, name = _python3_name(module, name)
        full = f"{module}.{name}"
        if full in self.table:
            return self.table[full]
        if module == "torch" or module.startswith("torch."):
            module = "minitorch" + module[len("torch"):]
            importlib.import_module(module)
        return super(WeightsOnlyUnpickler, self).find_class(module, name)

    def persistent_load(self, pid):
        """The legacy format also names each saved module's class as ``('module', cls, file, source)``."""
        if self.legacy and isinstance(pid, tuple) and len(pid) == 4 and pid[0] in ("module", b"module"):
            return pid[1]
        return super().persistent_load(pid)


def loads(data: bytes, rebuild: Rebuilder, load_storage: Callable, weights_only: bool, **pickle_load_args) -> Any:
    """Unpickle ``data.pkl`` (``pickle_load_args``, e.g. ``encoding``, only without ``weights_only``)."""
    return load_stream(io.BytesIO(data), rebuild, load_storage, weights_only, **pickle_load_args)


def load_stream(file, rebuild: Rebuilder, load_storage: Callable, weights_only: bool, legacy: bool = False,
                **pickle_load_args) -> Any:
    """Unpickle one pickle from ``file``, leaving it positioned just after the pickle's STOP."""
    if weights_only:
        return WeightsOnlyUnpickler(file, rebuild, load_storage, legacy=legacy).load()
    return FullUnpickler(file, rebuild, load_storage, legacy=legacy, **pickle_load_args).load()


__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals"]
