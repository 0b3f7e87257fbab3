"""The weights-only loader of PyTorch-format files, without PyTorch: the allow-list, add_safe_globals, and a
corpus of hand-built malformed and malicious files (each refused with SerializationError)."""

from __future__ import annotations

import io
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import minitorch as torch
from minitorch import serialization
from minitorch.serialization import SerializationError


def archive(pkl: bytes, records: dict | None = None, prefix: str = "archive", byteorder: bytes | None = b"little",
            version: bytes = b"3") -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr(f"{prefix}/data.pkl", pkl)
        if byteorder is not None:
            zf.writestr(f"{prefix}/byteorder", byteorder)
        for key, data in (records or {}).items():
            zf.writestr(f"{prefix}/data/{key}", data)
        zf.writestr(f"{prefix}/version", version)
    buffer.seek(0)
    return buffer


def tensor_pickle(numel=2, offset=0, size=(2,), stride=(1,), storage="FloatStorage", key="0", extra=b"") -> bytes:
    """``_rebuild_tensor_v2(('storage', torch.<storage>, key, 'cpu', numel), offset, size, stride, False,
    OrderedDict())`` in protocol 2, written by hand as torch.save writes it."""
    def ints(values):
        return b"(" + b"".join(long1(v) for v in values) + b"t"

    return (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n("
            + b"(X\x07\x00\x00\x00storagec" + b"torch\n" + storage.encode() + b"\n"
            + b"X" + len(key).to_bytes(4, "little") + key.encode() + b"X\x03\x00\x00\x00cpuJ"
            + numel.to_bytes(4, "little", signed=True) + b"tQ"
            + long1(offset) + ints(size) + ints(stride)
            + b"\x89ccollections\nOrderedDict\n)R" + extra + b"tR.")


def long1(value: int) -> bytes:
    raw = value.to_bytes(value.bit_length() // 8 + 1, "little", signed=True)
    return b"\x8a" + bytes([len(raw)]) + raw


FLOATS = np.array([1.0, 2.0], dtype="<f4").tobytes()


def test_hand_built_tensor_loads():
    assert torch.load(archive(tensor_pickle(), {"0": FLOATS})).tolist() == [1.0, 2.0]
    big = archive(tensor_pickle(), {"0": np.array([1.0, 2.0], dtype=">f4").tobytes()}, byteorder=b"big")
    assert torch.load(big).tolist() == [1.0, 2.0]
    assert torch.load(archive(tensor_pickle(), {"0": FLOATS}, prefix="my_model")).tolist() == [1.0, 2.0]


@pytest.mark.parametrize("pkl, records, message", [
    (tensor_pickle(size=(3,)), {"0": FLOATS}, "reads past the end"),
    (tensor_pickle(offset=2), {"0": FLOATS}, "reads past the end"),
    (tensor_pickle(stride=(-1,)), {"0": FLOATS}, "non-negative ints"),
    (tensor_pickle(offset=-1), {"0": FLOATS}, "storage_offset must be a non-negative int"),
    (tensor_pickle(size=(2, 1)), {"0": FLOATS}, "differ in length"),
    (tensor_pickle(size=(2**40, 2**40), stride=(0, 0)), {"0": FLOATS}, "64-bit"),
    (tensor_pickle(numel=3), {"0": FLOATS}, "should hold 12 bytes"),
    (tensor_pickle(numel=2**31 - 1), {"0": FLOATS}, "should hold"),
    (tensor_pickle(), {}, "missing"),
    (tensor_pickle(key="../0"), {"0": FLOATS}, "missing"),
    (tensor_pickle(storage="QuantizedStorage"), {"0": FLOATS}, "GLOBAL torch.QuantizedStorage was not an allowed"),
    (tensor_pickle()[:-5], {"0": FLOATS}, "malformed"),
    (b"\x80\x02(X\x01\x00\x00\x00aQ.", {}, "Only persistent_load of storage"),
    (b"\x80\x02cbuiltins\nbytearray\nJ\x00\x00\x00\x7f\x85R.", {}, "bytearray"),
    (b"\x80\x02cbuiltins\nset\n]]a\x85R.", {}, "malformed"),  # set([[]]): unhashable, an allowed callable's error
    (b"\x80\x02r\xff\xff\xff\x7f.", {}, "malformed"),  # LONG_BINPUT 2**31 - 1 on an empty stack: no huge memo
    (b"\x80\x02cbuiltins\ncomplex\n)\x81}b.", {}, "BUILD"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_malformed_pytorch_files_raise_serialization_error(pkl, records, message):
    with pytest.raises(SerializationError, match=message):
        torch.load(archive(pkl, records))


@pytest.mark.parametrize("name, pkl", [
    ("posix.system", pickle.dumps(os.system, protocol=2)),
    ("eval", b"\x80\x02c__builtin__\neval\nX\x04\x00\x00\x001+1;\x85R."),
    ("builtins.getattr", None),
    ("subprocess.Popen", b"\x80\x02csubprocess\nPopen\n."),
    ("minitorch.nn.modules.linear.Linear", None),
])
def test_globals_outside_the_allow_list_are_refused(name, pkl):
    if pkl is None:
        pkl = b"\x80\x02c" + ".".join(name.split(".")[:-1]).encode() + b"\n" + name.split(".")[-1].encode() + b"\n."
        name = name.removeprefix("builtins.")
    with pytest.raises(pickle.UnpicklingError, match=rf"GLOBAL {name} was not an allowed global by default") as info:
        torch.load(archive(pkl))
    assert isinstance(info.value, SerializationError)
    assert f"add_safe_globals([{name}])" in str(info.value) and "weights_only" in str(info.value)


def test_bare_pickles_and_torchscript_files_are_refused_with_a_reason():
    with pytest.raises(SerializationError, match="Invalid magic number"):  # read as the legacy format: no header
        torch.load(io.BytesIO(pickle.dumps({"a": 1}, protocol=2)))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("m/data.pkl", b"\x80\x02}.")
        zf.writestr("m/constants.pkl", b"\x80\x02}.")
        zf.writestr("m/code/m.py", b"")
    with pytest.raises(SerializationError, match="TorchScript"):
        torch.load(io.BytesIO(buffer.getvalue()))
    with pytest.raises(SerializationError, match="format version"):
        torch.load(archive(b"\x80\x02}.", version=b"999"))
    with pytest.raises(SerializationError, match="byte order"):
        torch.load(archive(b"\x80\x02}.", byteorder=b"middle"))


class Point:
    def __init__(self, x):
        self.x = x


def test_safe_globals_registry():
    data = io.BytesIO()
    torch.save({"p": Point(3), "w": torch.ones(2)}, data)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL test_serialization_weights_only.Point"):
        torch.load(io.BytesIO(data.getvalue()))
    with serialization.safe_globals([Point]):
        assert serialization.get_safe_globals() == [Point]
        assert torch.load(io.BytesIO(data.getvalue()))["p"].x == 3
    assert serialization.get_safe_globals() == []
    serialization.add_safe_globals([(Point, "test_serialization_weights_only.Point")])
    try:
        assert torch.load(io.BytesIO(data.getvalue()))["p"].x == 3
    finally:
        serialization.clear_safe_globals()
    assert torch.load(io.BytesIO(data.getvalue()), weights_only=False)["p"].x == 3


def test_whole_module_round_trips_with_weights_only_false(tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    torch.save(model, tmp_path / "model.pt")
    with pytest.raises(pickle.UnpicklingError, match="Sequential"):
        torch.load(tmp_path / "model.pt")
    loaded = torch.load(tmp_path / "model.pt", weights_only=False, mmap=True)
    x = torch.randn(5, 3)
    assert type(loaded[0]) is torch.nn.Linear and torch.equal(loaded(x), model(x))
    assert isinstance(loaded[0].weight, torch.nn.Parameter)


def test_state_dict_metadata_and_parameters_survive():
    model = torch.nn.Linear(2, 2)
    state = torch.load(io.BytesIO(_saved(model.state_dict())))
    assert type(state) is OrderedDict and list(state) == ["weight", "bias"]
    assert state._metadata == model.state_dict()._metadata  # set through BUILD, allowed on dicts
    parameter = torch.load(io.BytesIO(_saved(model.weight)))
    assert isinstance(parameter, torch.nn.Parameter) and parameter.requires_grad


def test_map_location_on_pytorch_files():
    base = torch.arange(3.0)
    data = _saved({"x": base, "y": base[1:]})
    meta = torch.load(io.BytesIO(data), map_location="meta")
    assert meta["x"].is_meta and meta["y"].storage_offset() == 1
    seen = []
    torch.load(io.BytesIO(data), map_location=lambda storage, location: seen.append(location))
    assert seen == ["cpu"]
    assert torch.load(io.BytesIO(data), map_location={"cpu": "meta"})["x"].is_meta
    with pytest.raises(ValueError, match="bad map_location"):
        torch.load(io.BytesIO(data), map_location="nowhere")


def _saved(obj) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def test_pickle_module_and_pickle_load_args_follow_pytorch():
    data = _saved({"w": torch.ones(2)})
    with pytest.raises(RuntimeError, match="explicit pickle_module"):
        torch.load(io.BytesIO(data), pickle_module=pickle, weights_only=True)
    assert torch.load(io.BytesIO(data), pickle_module=pickle)["w"].tolist() == [1.0, 1.0]  # weights_only=False
    with pytest.warns(UserWarning, match="pickle_load_args only works"):
        torch.load(io.BytesIO(data), encoding="latin1")
    assert torch.load(io.BytesIO(data), weights_only=False, encoding="latin1")["w"].tolist() == [1.0, 1.0]
