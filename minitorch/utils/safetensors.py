"""``.safetensors`` files (the Hugging Face weights format) for minitorch tensors.

``save_file``/``load_file``/``save``/``load`` take and return ``{name: Tensor}`` dicts like
``safetensors.torch``'s, so ``model.load_state_dict(load_file("model.safetensors"))`` loads Hub weights.
The file is written and parsed by the ``safetensors`` package (an optional extra,
``pip install minitorch[safetensors]``): the format holds only named dense tensors and string metadata,
so loading runs no code. The package is imported on first use.
"""

from __future__ import annotations

import os
from typing import Any

from .. import _dtype
from .._backends import backend_for
from .._device import CPU
from ..tensor import Tensor, from_array

# safetensors' dtype codes (what a file's header says) and the names its serializer takes
_CODES = {
    _dtype.bool: "BOOL", _dtype.uint8: "U8", _dtype.int8: "I8", _dtype.int16: "I16", _dtype.int32: "I32",
    _dtype.int64: "I64", _dtype.float16: "F16", _dtype.bfloat16: "BF16", _dtype.float32: "F32",
    _dtype.float64: "F64", _dtype.complex64: "C64",
}
_DTYPE_OF_CODE = {code: dtype for dtype, code in _CODES.items()}


def _package():
    try:
        import safetensors  # optional dependency: imported on first use
    except ImportError:
        raise ImportError("minitorch.utils.safetensors needs the safetensors package: pip install safetensors "
                          "(or pip install minitorch[safetensors])") from None
    return safetensors


def _specs(tensors: dict[str, Tensor], keep_alive: list) -> dict[str, Any]:
    """What ``safetensors.serialize`` takes: per name, dtype, shape and the address of contiguous bytes."""
    if not isinstance(tensors, dict):
        raise TypeError(f"save_file: expected a dict of name -> Tensor, got {type(tensors).__name__}")
    storages: dict[int, list[str]] = {}
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"save_file: tensor names must be str, got {type(name).__name__}")
        if not isinstance(t, Tensor):
            raise TypeError(f"save_file: {name!r} is a {type(t).__name__}, not a Tensor")
        if t.dtype not in _CODES:
            raise TypeError(f"save_file: safetensors has no dtype for {t.dtype} ({name!r})")
        if t.numel() and t.device.type != "meta":
            storages.setdefault(id(t._storage), []).append(name)
    shared = [names for names in storages.values() if len(names) > 1]
    if shared:  # safetensors.torch's rule: saving views twice would duplicate them and lose the sharing
        raise RuntimeError(f"Some tensors share memory, this will lead to duplicate memory on disk and potential "
                           f"differences when loading them again: {shared}. Save clones (t.clone()) instead.")
    specs = {}
    for name, t in tensors.items():
        array = t.detach().to(CPU).contiguous().numpy()
        array = array.reshape(-1).view("u1")  # bytes (bfloat16 has no buffer format)
        keep_alive.append(array)
        specs[name] = _package().TensorSpec(dtype=t.dtype.name, shape=list(t.shape),  # numpy's dtype names
                                            data_ptr=array.ctypes.data, data_len=array.nbytes)
    return specs


def save(tensors: dict[str, Tensor], metadata: dict[str, str] | None = None) -> bytes:
    """The ``.safetensors`` bytes of ``{name: tensor}`` (each tensor's own storage; no views of another)."""
    keep_alive: list[Any] = []
    return bytes(_package().serialize(_specs(tensors, keep_alive), metadata=metadata))


def save_file(tensors: dict[str, Tensor], filename: str | os.PathLike, metadata: dict[str, str] | None = None) -> None:
    """Write ``{name: tensor}`` to ``filename`` in the safetensors format."""
    keep_alive: list[Any] = []
    _package().serialize_file(_specs(tensors, keep_alive), os.fspath(filename), metadata=metadata)


def load(data: bytes, device: Any = "cpu") -> dict[str, Tensor]:
    """``{name: tensor}`` from ``.safetensors`` bytes, on ``device``."""
    cpu = backend_for(CPU)
    result = {}
    for name, record in _package().deserialize(data):
        dtype = _DTYPE_OF_CODE.get(record["dtype"])
        if dtype is None:
            raise TypeError(f"safetensors: tensor {name!r} has dtype {record['dtype']}, which minitorch lacks")
        raw = bytes(record["data"])
        if dtype is _dtype.bool:
            array = cpu.xp.frombuffer(raw, dtype=cpu.array_dtype(_dtype.uint8)) != 0
        else:
            native = cpu.array_dtype(dtype)
            little = native if dtype is _dtype.bfloat16 else native.newbyteorder("<")
            array = cpu.xp.frombuffer(raw, dtype=little).astype(native, copy=True)
        t = from_array(array.reshape(record["shape"]), cpu, CPU)
        result[name] = t if str(device) == "cpu" else t.to(device)
    return result


def load_file(filename: str | os.PathLike, device: Any = "cpu") -> dict[str, Tensor]:
    """``{name: tensor}`` from a ``.safetensors`` file, on ``device`` (``safetensors.torch.load_file``'s call)."""
    with open(filename, "rb") as handle:
        return load(handle.read(), device=device)


__all__ = ["save", "save_file", "load", "load_file"]
