"""DLPack for the one dtype numpy's DLPack cannot name: bfloat16.

numpy exports and imports DLPack capsules for its own dtypes only, and ml_dtypes' bfloat16 is not one of them.
A DLPack capsule is a C struct whose ``dtype`` field is ``(code, bits, lanes)``: bfloat16 is ``(kDLBfloat=4,
16, 1)``, uint16 ``(kDLUInt=1, 16, 1)``. So a bfloat16 array is exported as a uint16 view whose capsule's
code is rewritten to kDLBfloat before anyone consumes it, and a bfloat16 capsule (PyTorch's) is rewritten to
uint16 before numpy consumes it, then viewed as bfloat16. Memory is shared either way; no element is copied.
"""

from __future__ import annotations

import ctypes

import numpy as np

from .dtypes import BFLOAT16

_K_DL_UINT, _K_DL_BFLOAT = 1, 4
# where DLTensor.dtype.code sits in each capsule's struct: DLManagedTensor starts with its DLTensor;
# DLManagedTensorVersioned puts version (8 bytes), manager_ctx, deleter and flags (8 each) first
_CODE_OFFSET = {b"dltensor": 20, b"dltensor_versioned": 32 + 20}

_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype, _get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype, _get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]


def _retype(capsule, old: int, new: int) -> bool:
    """Rewrite a fresh capsule's 16-bit dtype code ``old`` to ``new``; False if it holds another dtype."""
    name = _get_name(capsule)
    offset = _CODE_OFFSET.get(name)
    if offset is None:  # a consumed ("used_dltensor") or foreign capsule: leave it to the consumer to refuse
        return False
    address = _get_pointer(capsule, name) + offset
    code, bits = ctypes.c_uint8.from_address(address), ctypes.c_uint8.from_address(address + 1)
    if code.value != old or bits.value != 16:
        return False
    code.value = new
    return True


def export(array, kwargs: dict):
    """``array.__dlpack__(**kwargs)``, bfloat16 included."""
    if array.dtype != BFLOAT16:
        return array.__dlpack__(**kwargs)
    capsule = array.view(np.uint16).__dlpack__(**kwargs)
    _retype(capsule, _K_DL_UINT, _K_DL_BFLOAT)
    return capsule


class _Bfloat16AsUint16:
    """A producer whose bfloat16 capsules numpy reads as uint16 (``retyped`` says whether one was)."""

    def __init__(self, producer):
        self.producer = producer
        self.retyped = False

    def __dlpack_device__(self):
        return self.producer.__dlpack_device__()

    def __dlpack__(self, **kwargs):
        capsule = self.producer.__dlpack__(**kwargs)
        self.retyped = _retype(capsule, _K_DL_BFLOAT, _K_DL_UINT)
        return capsule


class _Capsule:
    """A bare capsule as a producer: numpy's ``from_dlpack`` takes only objects with ``__dlpack__``."""

    def __init__(self, capsule):
        name = _get_name(capsule) if type(capsule).__name__ == "PyCapsule" else None
        if name not in _CODE_OFFSET:
            raise TypeError(f"from_dlpack: expected a DLPack producer or an unused DLPack capsule, got "
                            f"{type(capsule).__name__}")
        # DLTensor.device (int32 type, int32 id) follows its 8-byte data pointer
        device = _get_pointer(capsule, name) + _CODE_OFFSET[name] - 20 + 8
        if ctypes.c_int32.from_address(device).value != 1:
            raise BufferError("from_dlpack: a bare DLPack capsule must hold CPU memory; pass the tensor instead")
        self.capsule = capsule

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, **kwargs):
        return self.capsule


def import_capsule(capsule):
    """A bare capsule's array (CPU only), bfloat16 included."""
    return import_(_Capsule(capsule))


def import_(producer):
    """``np.from_dlpack(producer)``, bfloat16 included (a view of the producer's memory)."""
    if not hasattr(producer, "__dlpack__"):
        return np.from_dlpack(producer)
    wrapped = _Bfloat16AsUint16(producer)
    array = np.from_dlpack(wrapped)
    return array.view(BFLOAT16) if wrapped.retyped else array
