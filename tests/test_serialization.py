"""save/load: round trips, storage sharing, map_location, and refusal of unsafe or corrupt files."""

from __future__ import annotations

import io
import json
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given

import minitorch as torch
from minitorch import serialization
from minitorch.serialization import SerializationError
from minitorch.testing.strategies import tensors


def round_trip(obj, **load_kwargs):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer, **load_kwargs)


def test_tensor_round_trip_to_a_path(tmp_path):
    points = torch.tensor([[4.0, 1.0], [5.0, 3.0], [2.0, 1.0]])
    path = tmp_path / "ourpoints.t"
    torch.save(points, path)
    loaded = torch.load(path)
    assert loaded.tolist() == points.tolist() and loaded.dtype is torch.float32
    torch.save(points, str(path))
    with open(path, "rb") as f:
        assert torch.load(f).tolist() == points.tolist()
    with open(path, "wb") as f:
        torch.save(points * 2, f)
    assert torch.load(str(path)).tolist() == (points * 2).tolist()


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64, torch.int8, torch.uint8, torch.int16,
                                   torch.int32, torch.int64, torch.bool])
def test_every_dtype_round_trips_exactly(dtype):
    values = torch.tensor([0, 1, -3, 100, 7], dtype=torch.float64).to(dtype)
    loaded = round_trip(values)
    assert loaded.dtype is dtype and loaded.tolist() == values.tolist()


@given(t=tensors(dtype=torch.float64))
def test_geometry_round_trips(t):
    loaded = round_trip(t)
    assert loaded.tolist() == t.tolist()
    assert loaded.stride() == t.stride() and loaded.storage_offset() == t.storage_offset()
    assert len(loaded.storage()) == len(t.storage())


def test_views_of_one_storage_load_as_views_of_one_storage():
    x = torch.arange(12.0).view(3, 4)
    views = {"x": x, "t": x.t(), "row": x[1], "cols": x[:, ::2]}
    loaded = round_trip(views)
    storage = loaded["x"].untyped_storage()
    for name, view in views.items():
        assert loaded[name].untyped_storage() == storage
        assert loaded[name].stride() == view.stride() and loaded[name].storage_offset() == view.storage_offset()
        assert loaded[name].tolist() == view.tolist()
    loaded["x"].numpy()[1, 0] = -1.0  # a write through one shows in the others, as before saving
    assert loaded["row"][0].item() == -1.0 and loaded["t"][0, 1].item() == -1.0
    other = round_trip([x, torch.arange(12.0)])
    assert other[0].untyped_storage() != other[1].untyped_storage()


def test_containers_and_scalars_round_trip():
    obj = {
        "epoch": 3,
        "lr": 0.1,
        "nan": float("nan"),
        "inf": [float("inf"), -float("inf")],
        "flag": True,
        "none": None,
        "name": "run-1",
        "betas": (0.9, 0.999),
        "nested": {"a": [1, {"b": (2, [3])}]},
        7: "int key",
        (1, 2): "tuple key",
        "state": OrderedDict([("w", torch.ones(2, 2)), ("b", torch.zeros(2))]),
        "dtype": torch.float64,
        "device": torch.device("cpu"),
        "size": torch.Size([2, 3]),
    }
    loaded = round_trip(obj)
    assert type(loaded) is dict and list(loaded) == list(obj)
    assert loaded["epoch"] == 3 and loaded["lr"] == 0.1 and np.isnan(loaded["nan"])
    assert loaded["inf"] == [float("inf"), -float("inf")]
    assert loaded["flag"] is True and loaded["none"] is None and loaded["name"] == "run-1"
    assert loaded["betas"] == (0.9, 0.999) and type(loaded["betas"]) is tuple
    assert loaded["nested"] == {"a": [1, {"b": (2, [3])}]}
    assert loaded[7] == "int key" and loaded[(1, 2)] == "tuple key"
    assert type(loaded["state"]) is OrderedDict and list(loaded["state"]) == ["w", "b"]
    assert loaded["state"]["w"].tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert loaded["dtype"] is torch.float64 and loaded["device"] == torch.device("cpu")
    assert isinstance(loaded["size"], torch.Size) and loaded["size"] == (2, 3)


def test_requires_grad_is_kept_but_history_is_not():
    w = torch.ones(3, requires_grad=True)
    y = w * 2
    loaded = round_trip({"w": w, "y": y, "d": w.detach()})
    assert loaded["w"].requires_grad and loaded["w"].is_leaf
    assert loaded["y"].requires_grad and loaded["y"].grad_fn is None
    assert not loaded["d"].requires_grad


def test_objects_that_cannot_be_pickled_raise_and_options_are_checked():
    with pytest.raises((pickle.PicklingError, AttributeError), match="lambda"):
        torch.save({"f": lambda: 0}, io.BytesIO())
    cycle: list = []
    cycle.append(cycle)
    loaded = round_trip(cycle)  # pickle keeps the cycle, as in PyTorch
    assert loaded[0] is loaded
    with pytest.raises(ValueError, match="pickle_module"):
        torch.save(1, io.BytesIO(), pickle_module=json)
    with pytest.raises(ValueError, match="mmap"):
        torch.load(io.BytesIO(), mmap=True)


def test_map_location_moves_storages():
    x = torch.arange(6.0).view(2, 3)
    meta = round_trip({"x": x, "t": x.t()}, map_location="meta")
    assert meta["x"].is_meta and meta["x"].shape == (2, 3) and meta["t"].stride() == (1, 3)
    assert round_trip(x, map_location=torch.device("cpu")).device == torch.device("cpu")
    assert round_trip(x, map_location={"cpu": "meta"}).is_meta
    seen = []
    kept = round_trip(x, map_location=lambda storage, location: seen.append(location) or storage)
    assert seen == ["cpu"] and kept.tolist() == x.tolist()
    with pytest.raises(ValueError, match="bad map_location"):
        round_trip(x, map_location="nowhere")


def test_meta_tensors_save_without_data():
    m = torch.ones(1000, 1000, device="meta")
    buffer = io.BytesIO()
    torch.save(m, buffer)
    assert buffer.tell() < 2000  # no bytes written for a meta storage
    buffer.seek(0)
    loaded = torch.load(buffer)
    assert loaded.is_meta and loaded.shape == (1000, 1000)
    assert round_trip(m, map_location="cpu").is_meta  # PyTorch too: a meta tensor has no data to move
    old = io.BytesIO()
    serialization._save_minitorch_format(m, old)  # minitorch's earlier format refuses instead
    old.seek(0)
    with pytest.raises(SerializationError, match="meta tensor and has no data"):
        torch.load(old, map_location="cpu")


def test_cuda_checkpoint_without_cuda_suggests_map_location():
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    buffer = _forge({"format": "minitorch.save", "version": 1, "byteorder": "little",
                     "storages": [{"dtype": "float32", "numel": 2, "device": "cuda:0"}],
                     "object": {"$tensor": {"storage": 0, "size": [2], "stride": [1], "storage_offset": 0,
                                            "requires_grad": False}}}, {"storages/0": b"\0" * 8})
    with pytest.raises(RuntimeError, match="map_location=torch.device\\('cpu'\\)"):
        torch.load(buffer)
    buffer.seek(0)
    assert torch.load(buffer, map_location="cpu").tolist() == [0.0, 0.0]


# unsafe and corrupt files -----------------------------------------------------------------------


class _Exploit:
    """Unpickling this runs a shell command: the attack a pickle-based checkpoint makes possible."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


def test_loading_a_malicious_pickle_fails_safely(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    with open(path, "wb") as f:
        pickle.dump({"weights": _Exploit(marker)}, f)
    with pytest.raises(SerializationError, match="not PyTorch's legacy header.*posix.system"):
        torch.load(path)
    with pytest.raises(SerializationError):
        torch.load(path, weights_only=False)
    assert not marker.exists()
    for protocol in (0, 1, 2, 5):
        with pytest.raises(SerializationError):
            torch.load(io.BytesIO(pickle.dumps(_Exploit(marker), protocol=protocol)))
    assert not marker.exists()


def test_pytorch_zip_checkpoint_with_an_unsafe_global_is_refused(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("archive/data.pkl", pickle.dumps(_Exploit(tmp_path / "pwned"), protocol=2))
        archive.writestr("archive/version", "3")
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL posix.system was not an allowed global .*add_safe_globals"):
        torch.load(buffer)
    buffer.seek(0)
    with pytest.raises(SerializationError, match="Weights only load failed"):
        torch.load(buffer, weights_only=True)
    assert not (tmp_path / "pwned").exists()


def _forge(manifest, members=None, raw_manifest=None, compression=zipfile.ZIP_STORED) -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        archive.writestr("minitorch.json", raw_manifest if raw_manifest is not None else json.dumps(manifest))
        for name, data in (members or {}).items():
            archive.writestr(name, data)
    buffer.seek(0)
    return buffer


def _manifest(tensor_record=None, storage=None, obj=None):
    record = {"storage": 0, "size": [2], "stride": [1], "storage_offset": 0, "requires_grad": False}
    record.update(tensor_record or {})
    return {"format": "minitorch.save", "version": 1, "byteorder": "little",
            "storages": [dict({"dtype": "float32", "numel": 2, "device": "cpu"}, **(storage or {}))],
            "object": obj if obj is not None else {"$tensor": record}}


GOOD_DATA = {"storages/0": np.array([1.0, 2.0], dtype="<f4").tobytes()}


def test_forged_valid_file_loads():
    assert torch.load(_forge(_manifest(), GOOD_DATA)).tolist() == [1.0, 2.0]


@pytest.mark.parametrize(
    "manifest, members, message",
    [
        (_manifest({"size": [3]}), GOOD_DATA, "reads past the end of its storage"),
        (_manifest({"storage_offset": 2}), GOOD_DATA, "reads past the end"),
        (_manifest({"stride": [5]}), GOOD_DATA, "reads past the end"),
        (_manifest({"stride": [-1]}), GOOD_DATA, "non-negative integers"),
        (_manifest({"size": [2.5]}), GOOD_DATA, "non-negative integers"),
        (_manifest({"size": [2, 1]}), GOOD_DATA, "malformed"),
        (_manifest({"storage": 3}), GOOD_DATA, "missing storage"),
        (_manifest({"requires_grad": "yes"}), GOOD_DATA, "requires_grad must be a bool"),
        (_manifest(storage={"numel": 10**12}), GOOD_DATA, "should hold"),
        (_manifest(storage={"dtype": "object"}), GOOD_DATA, "unknown dtype"),
        (_manifest(storage={"device": "tpu"}), GOOD_DATA, "bad device"),
        (_manifest(), {}, "data of storage 0 is missing"),
        (_manifest(), {"storages/0": b"\0" * 3}, "should hold 8 bytes"),
        (_manifest(obj={"$pickle": "os.system"}), GOOD_DATA, "unknown entry type"),
        (_manifest(obj={"$tensor": 1, "$tuple": []}), GOOD_DATA, "malformed entry"),
        (_manifest(obj={"$float": "1e400"}), GOOD_DATA, "malformed float"),
        (_manifest(obj={"$dict": [[[1], 2]]}), GOOD_DATA, "unhashable dict key"),
        (dict(_manifest(), format="torch"), GOOD_DATA, "wrong format tag"),
        (dict(_manifest(), version=99), GOOD_DATA, "format version 99"),
        (dict(_manifest(), byteorder="big"), GOOD_DATA, "byte order"),
        # records of the wrong type, found by fuzzing (TypeError: unhashable, bool taken for int, numpy errors)
        (_manifest(storage={"dtype": ["float32"]}), GOOD_DATA, "unknown dtype"),
        (_manifest(storage={"dtype": {}}), GOOD_DATA, "unknown dtype"),
        (_manifest(obj={"$dtype": ["float32"]}), GOOD_DATA, "unknown dtype"),
        (dict(_manifest(), version=True), GOOD_DATA, "format version True"),
        (_manifest(storage={"numel": True}), GOOD_DATA, "bad element count"),
        (_manifest({"parameter": 1}), GOOD_DATA, "parameter must be a bool"),
        # geometry that fits the storage but not in int64 bytes (numpy's ValueError before)
        (_manifest({"size": [10**20], "stride": [0]}), GOOD_DATA, "64-bit"),
        (_manifest({"size": [2**40, 2**40], "stride": [0, 0]}), GOOD_DATA, "64-bit"),
        (_manifest({"size": [1, 2], "stride": [10**30, 1]}), GOOD_DATA, "64-bit"),
        (_manifest({"size": [0, 2**62], "stride": [1, 1]}), GOOD_DATA, "64-bit"),
        (_manifest(storage={"numel": 2**62}), GOOD_DATA, "bad element count"),
        # exactly the documented keys, and exactly the members the manifest names
        ({k: v for k, v in _manifest().items() if k != "object"}, GOOD_DATA, r"lacks \['object'\]"),
        (dict(_manifest(), extra=1), GOOD_DATA, r"unknown keys \['extra'\]"),
        (_manifest({"extra": 1}), GOOD_DATA, "tensor record has unknown keys"),
        (_manifest({"requires_grad": None}), GOOD_DATA, "requires_grad must be a bool"),
        (_manifest(obj={"$tensor": {"storage": 0, "size": [2], "stride": [1]}}), GOOD_DATA, "tensor record lacks"),
        (_manifest(storage={"extra": 1}), GOOD_DATA, "storage 0 has unknown keys"),
        (_manifest(), dict(GOOD_DATA, **{"storages/1": b""}), "unexpected members"),
    ],
)
def test_malformed_files_raise_clear_errors(manifest, members, message):
    with pytest.raises(SerializationError, match=message):
        torch.load(_forge(manifest, members))


def test_corrupt_and_foreign_files_raise_clear_errors(tmp_path):
    with pytest.raises(SerializationError, match="not valid JSON"):
        torch.load(_forge(None, raw_manifest="{not json"))
    deep = "[" * 100000 + "]" * 100000
    with pytest.raises(SerializationError):
        torch.load(_forge(None, raw_manifest=json.dumps(dict(_manifest(), object=None))[:-1] + ', "x": ' + deep + "}"))
    nested: object = 1
    for _ in range(200):
        nested = {"$tuple": [nested]}
    with pytest.raises(SerializationError, match="nested deeper"):
        torch.load(_forge(_manifest(obj=nested), GOOD_DATA))
    with pytest.raises(SerializationError, match="not a zip archive"):
        torch.load(io.BytesIO(b"hello world"))
    with pytest.raises(SerializationError, match="not a minitorch save file"):
        torch.load(_forge_foreign_zip())
    good = io.BytesIO()
    torch.save(torch.arange(100.0), good)
    with pytest.raises(SerializationError, match="corrupt or truncated"):
        torch.load(io.BytesIO(good.getvalue()[: len(good.getvalue()) // 2]))
    with pytest.raises(TypeError, match="binary mode"):
        path = tmp_path / "x.pt"
        torch.save(torch.ones(1), path)
        with open(path) as text_file:
            torch.load(text_file)


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_compressed_members_are_refused_before_reading(method, monkeypatch):
    """save() stores members; a compressed one could be a decompression bomb (1 MB -> gigabytes)."""
    forged = _forge(_manifest(), GOOD_DATA, compression=method)

    def no_reading(*args, **kwargs):
        raise AssertionError("a member was read")

    monkeypatch.setattr(zipfile.ZipFile, "open", no_reading)
    with pytest.raises(SerializationError, match=f"'minitorch.json' of the file object is compressed .zip method {method}"):
        torch.load(forged)


def test_duplicate_members_are_refused():
    buffer = io.BytesIO()
    with pytest.warns(UserWarning, match="Duplicate name"), zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("minitorch.json", json.dumps(_manifest({"size": [1]})))
        archive.writestr("storages/0", GOOD_DATA["storages/0"])
        archive.writestr("minitorch.json", json.dumps(_manifest()))  # zipfile would read this one
    buffer.seek(0)
    with pytest.raises(SerializationError, match="two members named 'minitorch.json'"):
        torch.load(buffer)


def test_non_finite_json_constants_are_refused():
    raw = json.dumps(_manifest(obj=[1.0])).replace("1.0", "NaN")
    with pytest.raises(SerializationError, match="NaN is not JSON"):
        torch.load(_forge(None, GOOD_DATA, raw_manifest=raw))


def test_corrupt_central_directory_offset_raises_serialization_error(tmp_path):
    """A real file seeks where a BytesIO does not: zipfile's OSError (negative seek) must not escape."""
    good = io.BytesIO()
    torch.save(torch.ones(2), good)
    data = good.getvalue()
    end = data.rindex(b"PK\x05\x06") + 16  # the end record's offset of the central directory
    path = tmp_path / "bad.pt"
    path.write_bytes(data[:end] + (0xFFFFFF00).to_bytes(4, "little") + data[end + 4:])
    with pytest.raises(SerializationError, match="corrupt or truncated archive"):
        torch.load(path)


def test_member_claiming_more_bytes_than_the_file_is_refused():
    data = bytearray(_forge(_manifest(), GOOD_DATA).getvalue())
    entry = data.rindex(b"PK\x01\x02")  # the central directory entry of the last member, storages/0
    data[entry + 20:entry + 28] = (2**31).to_bytes(4, "little") * 2  # its compressed and uncompressed sizes
    with pytest.raises(SerializationError, match="claims"):
        torch.load(io.BytesIO(bytes(data)))


def _forge_foreign_zip() -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("readme.txt", "hi")
    buffer.seek(0)
    return buffer


def test_bool_storage_bytes_are_normalized():
    manifest = _manifest(storage={"dtype": "bool", "numel": 2})
    loaded = torch.load(_forge(manifest, {"storages/0": b"\x00\x07"}))
    assert loaded.tolist() == [False, True] and loaded.numpy().view(np.uint8).tolist() == [0, 1]


def test_file_layout_is_pytorchs_zip():
    buffer = io.BytesIO()
    torch.save({"a": torch.arange(3, dtype=torch.int32)}, buffer)
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as archive:
        assert archive.namelist() == ["archive/data.pkl", "archive/.format_version", "archive/.storage_alignment",
                                      "archive/byteorder", "archive/data/0", "archive/version"]
        assert archive.read("archive/byteorder") == b"little" and archive.read("archive/version") == b"3"
        assert archive.read("archive/data/0") == np.arange(3, dtype="<i4").tobytes()
        info = archive.getinfo("archive/data/0")
        assert (info.header_offset + 30 + len(info.filename) + len(info.extra)) % 64 == 0  # aligned as torch's
        assert b"ctorch._utils\n_rebuild_tensor_v2\n" in archive.read("archive/data.pkl")
        assert all(i.compress_type == zipfile.ZIP_STORED for i in archive.infolist())


def test_earlier_minitorch_format_still_loads():
    buffer = io.BytesIO()
    x = torch.arange(6.0).view(2, 3)
    serialization._save_minitorch_format({"a": torch.arange(3, dtype=torch.int32), "x": x, "t": x.t()}, buffer)
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as archive:
        assert archive.namelist() == ["minitorch.json", "storages/0", "storages/1"]
        manifest = json.loads(archive.read("minitorch.json"))
        assert manifest["format"] == "minitorch.save" and manifest["byteorder"] == "little"
        assert manifest["storages"][0] == {"dtype": "int32", "numel": 3, "device": "cpu"}
        assert archive.read("storages/0") == np.arange(3, dtype="<i4").tobytes()
    buffer.seek(0)
    loaded = torch.load(buffer)
    assert loaded["t"].tolist() == x.t().tolist() and loaded["t"].untyped_storage() == loaded["x"].untyped_storage()


def test_quantized_tensors_round_trip():
    """As torch.save: per-tensor and per-channel quantized tensors (and views of them) save and load."""
    x = torch.linspace(-2, 2, 12).view(4, 3)
    q = torch.quantize_per_tensor(x, 0.05, 3, torch.quint8)
    c = torch.quantize_per_channel(x, torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64), torch.tensor([1, 0, -1]),
                                   1, torch.qint8)
    loaded = round_trip({"q": q, "view": q[1:], "c": c, "i": torch.quantize_per_tensor(x, 1e-3, 0, torch.qint32)})
    assert loaded["q"].dtype is torch.quint8 and loaded["q"].q_scale() == 0.05 and loaded["q"].q_zero_point() == 3
    assert loaded["q"].int_repr().tolist() == q.int_repr().tolist()
    assert loaded["view"]._storage is loaded["q"]._storage and loaded["view"].storage_offset() == 3
    assert loaded["c"].qscheme() is torch.per_channel_affine and loaded["c"].q_per_channel_axis() == 1
    assert loaded["c"].q_per_channel_scales().tolist() == [0.1, 0.2, 0.3]
    assert loaded["c"].dequantize().tolist() == c.dequantize().tolist()
    assert loaded["i"].dtype is torch.qint32 and loaded["i"].int_repr().tolist() == loaded["i"].int_repr().tolist()


@pytest.mark.parametrize("axis, scales", [(7, 3), (1, 2)])
def test_quantized_tensors_with_bad_parameters_are_refused(axis, scales):
    from minitorch.quantization.qtensor import PerChannelQuantizer

    c = torch.quantize_per_channel(torch.ones(4, 3), torch.ones(3, dtype=torch.float64), torch.zeros(3, dtype=torch.long),
                                   1, torch.qint8)
    c._quantizer = PerChannelQuantizer(torch.qint8, torch.ones(scales, dtype=torch.float64),
                                       torch.zeros(scales, dtype=torch.long), axis)
    with pytest.raises(SerializationError, match="_rebuild_qtensor"):
        round_trip(c)


def legacy_bytes(obj) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer, _use_new_zipfile_serialization=False)
    return buffer.getvalue()


def test_legacy_format_round_trips(tmp_path):
    """PyTorch's pre-1.6 format (_use_new_zipfile_serialization=False): pickles and raw storages, no zip."""
    base = torch.arange(12.0).view(3, 4)
    obj = {"w": base, "t": base.t(), "row": base[1], "mask": torch.tensor([True, False]),
           "h": torch.tensor([1.5], dtype=torch.bfloat16), "p": torch.nn.Parameter(torch.ones(2)), "step": 3,
           "q": torch.quantize_per_tensor(torch.ones(3), 0.5, 1, torch.quint8), "m": torch.ones(2, device="meta")}
    data = legacy_bytes(obj)
    assert data[:2] != b"PK"
    loaded = torch.load(io.BytesIO(data))
    assert loaded["t"]._storage is loaded["w"]._storage and loaded["row"].storage_offset() == 4
    assert loaded["t"].tolist() == base.t().tolist() and loaded["mask"].tolist() == [True, False]
    assert loaded["h"].dtype is torch.bfloat16 and loaded["h"].item() == 1.5 and loaded["step"] == 3
    assert isinstance(loaded["p"], torch.nn.Parameter) and loaded["p"].requires_grad
    assert loaded["q"].int_repr().tolist() == [3, 3, 3] and loaded["m"].is_meta
    meta = torch.load(io.BytesIO(data), map_location="meta")
    assert meta["w"].is_meta and meta["t"].stride() == (1, 4)
    path = tmp_path / "legacy.pt"
    torch.save(obj, path, _use_new_zipfile_serialization=False)
    assert torch.load(path)["w"].tolist() == base.tolist()
    with pytest.raises(RuntimeError, match="mmap can only be used with files saved with"):
        torch.load(path, mmap=True)


def test_legacy_format_hostile_files_are_refused_within_bounds():
    import tracemalloc

    data = legacy_bytes({"w": torch.arange(1000.0), "i": torch.arange(3)})
    # every truncation: a SerializationError, never another exception
    for cut in range(0, len(data), 7):
        with pytest.raises(SerializationError):
            torch.load(io.BytesIO(data[:cut]))
    # a storage claiming 2**40 elements in a 5 KB file: refused before anything is allocated
    forged = data.replace(b"M\xe8\x03N", b"\x8a\x06" + (2**40).to_bytes(6, "little") + b"N", 1)
    assert forged != data
    tracemalloc.start()
    with pytest.raises(SerializationError, match="claims 1099511627776"):
        torch.load(io.BytesIO(forged))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 10 * len(forged) + 2**20
    # a per-storage count that disagrees with the record, a wrong magic number, trailing keys
    with pytest.raises(SerializationError, match="holds 999 elements"):
        torch.load(io.BytesIO(data.replace((1000).to_bytes(8, "little"), (999).to_bytes(8, "little"))))
    with pytest.raises(SerializationError, match="Invalid magic number"):
        torch.load(io.BytesIO(b"\x80\x02K\x07." + data[15:]))
    # a malicious global in the object tree: PyTorch's weights-only refusal
    evil = data[:data.index(b"\x80\x02", 40)]  # the three header pickles
    evil += b"\x80\x02cposix\nsystem\nX\x02\x00\x00\x00idtR."
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL posix.system was not an allowed global") as info:
        torch.load(io.BytesIO(evil))
    assert isinstance(info.value, SerializationError)
