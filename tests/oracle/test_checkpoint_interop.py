"""Checkpoints cross between minitorch and real PyTorch (issue 16): ``minitorch.save`` files load in
``torch.load(weights_only=True)`` and ``torch.save`` files load in ``minitorch.load``, with identical values,
dtypes, shapes, strides, storage offsets and storage sharing; hostile files are refused by both."""

import io
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minitorch as mt  # noqa: E402
from minitorch.serialization import SerializationError  # noqa: E402

DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64", "bool",
          "complex64", "complex128"]


def to_torch_file(obj) -> io.BytesIO:
    buffer = io.BytesIO()
    mt.save(obj, buffer)
    buffer.seek(0)
    return buffer


def from_torch(obj, **kwargs):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return mt.load(buffer, **kwargs)


def values(t) -> np.ndarray:
    """Exact element values of either library's tensor (bfloat16 via float32, which holds it exactly)."""
    if t.dtype in (torch.bfloat16, mt.bfloat16):
        t = t.float()
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach().numpy())


def assert_same(ours, theirs):
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert tuple(ours.stride()) == tuple(theirs.stride())
    assert ours.storage_offset() == theirs.storage_offset()
    assert ours.requires_grad == theirs.requires_grad
    np.testing.assert_array_equal(values(ours), values(theirs))


def sample(dtype: str):
    data = np.array([[0, 1, -3, 100], [7, -8, 2, 5], [1, 0, 0, 1]], dtype=np.float64) / 2
    t = torch.tensor(data).to(getattr(torch, dtype))
    if dtype.startswith("complex"):
        t = t + 1j * t.flip(0)
    return t


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_round_trips_both_ways(dtype):
    theirs = sample(dtype)
    ours = from_torch(theirs)
    assert_same(ours, theirs)
    back = torch.load(to_torch_file(ours), weights_only=True)
    assert_same(ours, back)
    assert back.dtype == theirs.dtype and torch.equal(back, theirs)


def test_views_share_storage_both_ways():
    x = torch.arange(24.0).view(4, 6)
    views = {"x": x, "t": x.t(), "row": x[2], "cols": x[:, 1::2], "expanded": x[0, :1].expand(5)}
    ours = from_torch(views)
    for name, view in views.items():
        assert_same(ours[name], view)
        assert ours[name].untyped_storage() == ours["x"].untyped_storage()
    ours["x"].numpy()[2, 0] = -1.0  # still one storage after the load
    assert ours["row"][0].item() == -1.0 and ours["t"][0, 2].item() == -1.0
    back = torch.load(to_torch_file(ours), weights_only=True)
    for name in views:
        assert_same(ours[name], back[name])
        assert back[name].untyped_storage().data_ptr() == back["x"].untyped_storage().data_ptr()
    back["x"][1, 1] = 42.0
    assert back["t"][1, 1].item() == 42.0


def test_nested_containers_and_scalars():
    obj = {"epoch": 3, "lr": 0.5, "nan": float("nan"), "flags": [True, None, "text", b"raw"], 7: (1, 2.5),
           "od": OrderedDict(b=torch.ones(2), a=torch.zeros(1, dtype=torch.int64)), "c": 1 + 2j,
           "set": {1, 2}, "size": torch.Size([2, 3]), "dtype": torch.float16, "device": torch.device("cpu"),
           "param": torch.nn.Parameter(torch.ones(3)), "grad": torch.ones(2, requires_grad=True)}
    ours = from_torch(obj)
    assert ours["epoch"] == 3 and ours[7] == (1, 2.5) and ours["flags"] == [True, None, "text", b"raw"]
    assert type(ours["od"]) is OrderedDict and list(ours["od"]) == ["b", "a"] and ours["c"] == 1 + 2j
    assert ours["set"] == {1, 2} and ours["size"] == mt.Size([2, 3]) and isinstance(ours["size"], mt.Size)
    assert ours["dtype"] is mt.float16 and ours["device"] == mt.device("cpu")
    assert isinstance(ours["param"], mt.nn.Parameter) and ours["param"].requires_grad
    assert ours["grad"].requires_grad and ours["grad"].is_leaf
    back = torch.load(to_torch_file(ours), weights_only=True)
    assert back["epoch"] == 3 and back[7] == (1, 2.5) and back["flags"] == [True, None, "text", b"raw"]
    assert type(back["od"]) is OrderedDict and list(back["od"]) == ["b", "a"]
    assert back["size"] == torch.Size([2, 3]) and isinstance(back["size"], torch.Size)
    assert back["dtype"] is torch.float16 and back["device"] == torch.device("cpu") and back["set"] == {1, 2}
    assert isinstance(back["param"], torch.nn.Parameter) and back["param"].requires_grad
    assert back["grad"].requires_grad and np.isnan(back["nan"])


def mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))


def convnet(lib):
    return lib.nn.Sequential(lib.nn.Conv2d(1, 4, 3, padding=1), lib.nn.BatchNorm2d(4), lib.nn.ReLU(),
                             lib.nn.MaxPool2d(2), lib.nn.Flatten(), lib.nn.Linear(4 * 4 * 4, 5))


@pytest.mark.parametrize("build, shape", [(mlp, (6, 4)), (convnet, (2, 1, 8, 8))])
def test_a_pytorch_trained_model_loads_into_minitorch(build, shape):
    torch.manual_seed(0)
    model = build(torch)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    x = torch.randn(*shape)
    for _ in range(5):
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        optimizer.step()
    model.eval()
    state = from_torch(model.state_dict())
    ours = build(mt)
    ours.load_state_dict(state)
    ours.eval()
    expected = model(x).detach().numpy()
    np.testing.assert_allclose(ours(mt.tensor(x.numpy())).detach().numpy(), expected, rtol=1e-5, atol=1e-6)
    # and back: PyTorch loads minitorch's save of the same weights and computes the same outputs
    again = build(torch)
    again.load_state_dict(torch.load(to_torch_file(ours.state_dict()), weights_only=True))
    again.eval()
    np.testing.assert_allclose(again(x).detach().numpy(), expected, rtol=1e-6, atol=1e-7)


def test_optimizer_state_dicts_cross():
    model = mlp(mt)
    optimizer = mt.optim.Adam(model.parameters(), lr=0.01)
    model(mt.randn(5, 4)).sum().backward()
    optimizer.step()
    theirs = torch.load(to_torch_file(optimizer.state_dict()), weights_only=True)
    ours = optimizer.state_dict()
    assert theirs["param_groups"][0]["lr"] == 0.01 and sorted(theirs["state"]) == sorted(ours["state"])
    for index, state in ours["state"].items():
        for key, value in state.items():
            if isinstance(value, mt.Tensor):
                assert_same(value, theirs["state"][index][key])
            else:
                assert theirs["state"][index][key] == value
    torch_model = mlp(torch)
    torch_optimizer = torch.optim.Adam(torch_model.parameters(), lr=0.01)
    torch_model(torch.randn(5, 4)).sum().backward()
    torch_optimizer.step()
    loaded = from_torch(torch_optimizer.state_dict())
    fresh = mt.optim.Adam(mlp(mt).parameters(), lr=0.5)
    fresh.load_state_dict(loaded)
    assert fresh.param_groups[0]["lr"] == 0.01
    step = torch_optimizer.state_dict()["state"][0]["step"]
    assert_same(loaded["state"][0]["step"], step) and assert_same(loaded["state"][0]["exp_avg"],
                                                                    torch_optimizer.state[torch_model[0].weight]["exp_avg"])


def test_whole_module_needs_weights_only_false():
    model = mlp(mt)
    buffer = to_torch_file(model)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL minitorch.nn.modules.container.Sequential"):
        mt.load(buffer)
    buffer.seek(0)
    loaded = mt.load(buffer, weights_only=False)
    x = mt.randn(3, 4)
    assert type(loaded) is type(model) and np.array_equal(loaded(x).detach().numpy(), model(x).detach().numpy())


def test_safe_globals_admit_a_class():
    buffer = to_torch_file({"when": np.float64(1.5)})  # numpy scalars need an explicit allow, as in PyTorch
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL numpy"):
        torch.load(io.BytesIO(buffer.getvalue()), weights_only=True)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL numpy"):
        mt.load(io.BytesIO(buffer.getvalue()))
    allowed = [np.dtype, np._core.multiarray.scalar, type(np.dtype(np.float64))]
    with torch.serialization.safe_globals(allowed):
        assert torch.load(io.BytesIO(buffer.getvalue()), weights_only=True)["when"] == 1.5
    with mt.serialization.safe_globals(allowed):
        assert mt.load(io.BytesIO(buffer.getvalue()))["when"] == 1.5
    assert mt.serialization.get_safe_globals() == []


class _System:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def _hostile_archive(data: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("archive/data.pkl", data)
        archive.writestr("archive/version", "3")
    return buffer.getvalue()


HOSTILE = {
    "os.system via GLOBAL": pickle.dumps({"w": _System()}, protocol=2),
    "builtins.eval via REDUCE": b"\x80\x02cbuiltins\neval\nX\x0c\x00\x00\x00print('pwn')\x85R.",
    "getattr chain": b"\x80\x02cbuiltins\ngetattr\ncos\nsystem\n\x86R.",
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_files_are_refused_by_both(name):
    data = _hostile_archive(HOSTILE[name])
    with pytest.raises(pickle.UnpicklingError):
        torch.load(io.BytesIO(data), weights_only=True)
    with pytest.raises(pickle.UnpicklingError, match="was not an allowed global") as refused:
        mt.load(io.BytesIO(data))
    assert isinstance(refused.value, SerializationError)


def test_oversized_storage_record_is_refused():
    buffer = io.BytesIO()
    torch.save(torch.arange(4.0), buffer)
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as archive:
        entries = [(i.filename, archive.read(i)) for i in archive.infolist()]
    for claimed in (5, 2**40):
        forged = io.BytesIO()
        with zipfile.ZipFile(forged, "w") as archive:
            for member, payload in entries:
                if member.endswith("data.pkl"):
                    payload = payload.replace(b"K\x04t", b"J" + claimed.to_bytes(4, "little", signed=False) + b"t") \
                        if claimed < 2**31 else payload.replace(b"K\x04t", b"\x8a\x06" + claimed.to_bytes(6, "little")
                                                                + b"t")
                archive.writestr(member, payload)
        with pytest.raises(SerializationError, match="should hold|bad element count"):
            mt.load(io.BytesIO(forged.getvalue()))


def test_pytorch_memory_maps_minitorch_files(tmp_path):
    """Storage records are 64-byte aligned as torch.save's, so torch.load(mmap=True) maps them."""
    path = tmp_path / "w.pt"
    state = {"w": mt.arange(10.0), "i": mt.arange(3, dtype=mt.int16), "b": mt.tensor([True])}
    mt.save(state, path)
    loaded = torch.load(path, mmap=True, weights_only=True)
    assert loaded["w"].tolist() == list(range(10)) and loaded["i"].dtype == torch.int16 and loaded["b"].item()
    assert mt.load(path, mmap=True)["w"].tolist() == list(range(10))


def test_a_whole_pytorch_module_loads_with_weights_only_false():
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())
    buffer = io.BytesIO()
    torch.save(model, buffer)
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL torch.nn.modules.container.Sequential"):
        mt.load(buffer)
    buffer.seek(0)
    ours = mt.load(buffer, weights_only=False)
    assert type(ours) is mt.nn.Sequential and type(ours[0]) is mt.nn.Linear
    x = torch.randn(4, 3)
    np.testing.assert_allclose(ours(mt.tensor(x.numpy())).detach().numpy(), model(x).detach().numpy(), rtol=1e-6)


def test_dtypes_minitorch_lacks_are_named():
    buffer = io.BytesIO()
    torch.save({"u": torch.zeros(3, dtype=torch.uint16)}, buffer)
    with pytest.raises(SerializationError, match="torch.uint16, a dtype minitorch does not have"):
        mt.load(io.BytesIO(buffer.getvalue()))


def _quantized_pair():
    x = torch.randn(4, 3, generator=torch.Generator().manual_seed(0))
    theirs = {
        "t": torch.quantize_per_tensor(x, 0.05, 3, torch.quint8),
        "s": torch.quantize_per_tensor(x, 0.1, -2, torch.qint8),
        "i": torch.quantize_per_tensor(x, 0.001, 0, torch.qint32),
        "c": torch.quantize_per_channel(x, torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64),
                                        torch.tensor([1, 0, -1]), 1, torch.qint8),
    }
    theirs["v"] = theirs["t"][1:]  # a view of t's storage
    xm = mt.tensor(x.numpy())
    ours = {
        "t": mt.quantize_per_tensor(xm, 0.05, 3, mt.quint8),
        "s": mt.quantize_per_tensor(xm, 0.1, -2, mt.qint8),
        "i": mt.quantize_per_tensor(xm, 0.001, 0, mt.qint32),
        "c": mt.quantize_per_channel(xm, mt.tensor([0.1, 0.2, 0.3], dtype=mt.float64), mt.tensor([1, 0, -1]), 1,
                                     mt.qint8),
    }
    ours["v"] = ours["t"][1:]
    return ours, theirs


def assert_same_quantized(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype) and str(ours.qscheme()) == str(theirs.qscheme())
    assert tuple(ours.shape) == tuple(theirs.shape) and tuple(ours.stride()) == tuple(theirs.stride())
    assert ours.storage_offset() == theirs.storage_offset()
    np.testing.assert_array_equal(ours.int_repr().numpy(), theirs.int_repr().numpy())
    if str(ours.qscheme()) == "torch.per_tensor_affine":
        assert ours.q_scale() == theirs.q_scale() and ours.q_zero_point() == theirs.q_zero_point()
    else:
        np.testing.assert_array_equal(ours.q_per_channel_scales().numpy(), theirs.q_per_channel_scales().numpy())
        np.testing.assert_array_equal(ours.q_per_channel_zero_points().numpy(),
                                      theirs.q_per_channel_zero_points().numpy())
        assert ours.q_per_channel_axis() == theirs.q_per_channel_axis()


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_quantized_tensors_round_trip_both_ways():
    """torch.save saves quantized tensors (_rebuild_qtensor over a QUInt8Storage & co.); so does minitorch."""
    ours, theirs = _quantized_pair()
    loaded = torch.load(to_torch_file(ours), weights_only=True)
    for key in ours:
        assert_same_quantized(ours[key], loaded[key])
    assert loaded["v"].untyped_storage().data_ptr() == loaded["t"].untyped_storage().data_ptr()
    back = from_torch(theirs)
    for key in theirs:
        assert_same_quantized(back[key], theirs[key])
    assert back["v"]._storage is back["t"]._storage
    assert_same_quantized(back["t"], ours["t"])


# PyTorch's legacy format (_use_new_zipfile_serialization=False) ------------------------------------------------


def legacy_file(lib, obj) -> io.BytesIO:
    buffer = io.BytesIO()
    lib.save(obj, buffer, _use_new_zipfile_serialization=False)
    buffer.seek(0)
    return buffer


@pytest.mark.parametrize("dtype", DTYPES)
def test_legacy_files_cross_both_ways_for_every_dtype(dtype):
    theirs = {"x": sample(dtype), "t": sample(dtype).t(), "scalar": sample(dtype)[1, 2]}
    file = legacy_file(torch, theirs)
    assert file.getvalue()[:2] != b"PK"
    ours = mt.load(file)
    for key in theirs:
        assert_same(ours[key], theirs[key])
    back = torch.load(legacy_file(mt, ours), weights_only=True)
    for key in theirs:
        assert_same(ours[key], back[key])
        assert back[key].dtype == theirs[key].dtype and torch.equal(back[key], theirs[key])


def test_legacy_files_keep_shared_storages_and_parameters():
    x = torch.arange(24.0).view(4, 6)
    state = {"x": x, "t": x.t(), "row": x[2], "cols": x[:, 1::2], "p": torch.nn.Parameter(torch.ones(3)),
             "model": torch.nn.Linear(3, 2).state_dict(), "step": 7, "mask": torch.tensor([True, False])}
    ours = mt.load(legacy_file(torch, state))
    for name in ("x", "t", "row", "cols"):
        assert_same(ours[name], state[name])
        assert ours[name]._storage is ours["x"]._storage
    assert isinstance(ours["p"], mt.nn.Parameter) and ours["p"].requires_grad and ours["step"] == 7
    assert list(ours["model"]) == ["weight", "bias"]
    back = torch.load(legacy_file(mt, ours), weights_only=True)
    assert back["t"].untyped_storage().data_ptr() == back["x"].untyped_storage().data_ptr()
    back["x"][1, 2] = -3.0
    assert back["t"][2, 1].item() == -3.0 and isinstance(back["p"], torch.nn.Parameter)


def test_legacy_whole_module_and_hostile_files():
    model = torch.nn.Sequential(torch.nn.Linear(3, 2))
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL torch.nn.modules.container.Sequential"):
        mt.load(legacy_file(torch, model))
    ours = mt.load(legacy_file(torch, model), weights_only=False)
    assert type(ours) is mt.nn.Sequential and ours[0].weight.tolist() == model[0].weight.tolist()
    data = legacy_file(torch, {"w": torch.arange(4.0)}).getvalue()
    # a malicious global in place of the object tree: both refuse it with UnpicklingError
    header_end = data.index(b"\x80\x02", data.index(b"little_endian"))
    evil = data[:header_end] + pickle.dumps({"w": _System()}, protocol=2)
    for load in (torch.load, mt.load):
        with pytest.raises(pickle.UnpicklingError):
            load(io.BytesIO(evil))
    # truncated: both refuse (PyTorch with its own errors; minitorch always with SerializationError)
    for cut in (10, len(data) // 2, len(data) - 3):
        with pytest.raises(Exception):  # noqa: B017 - PyTorch raises several types here
            torch.load(io.BytesIO(data[:cut]))
        with pytest.raises(SerializationError):
            mt.load(io.BytesIO(data[:cut]))
