"""minitorch.utils.safetensors: .safetensors files through the safetensors package (skipped without it)."""

from __future__ import annotations

import pytest

safetensors_numpy = pytest.importorskip("safetensors.numpy")

import minitorch as torch  # noqa: E402
from minitorch.utils.safetensors import load, load_file, save, save_file  # noqa: E402

DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.bfloat16,
          torch.float32, torch.float64, torch.complex64]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_dtype_round_trips(tmp_path, dtype):
    t = (torch.arange(6, dtype=torch.float64).reshape(2, 3) - 2).to(dtype)
    save_file({"t": t, "scalar": t[0, 1].clone(), "empty": t[:0]}, tmp_path / "w.safetensors", metadata={"k": "v"})
    loaded = load_file(tmp_path / "w.safetensors")
    for name, value in {"t": t, "scalar": t[0, 1], "empty": t[:0]}.items():
        assert loaded[name].dtype is dtype and loaded[name].shape == value.shape
        assert loaded[name].tolist() == value.tolist()


def test_files_are_the_packages_format_and_non_contiguous_tensors_are_written_contiguous():
    x = torch.arange(6.0).reshape(2, 3)
    data = save({"xt": x.t().clone().t(), "w": torch.ones(2, dtype=torch.int32)})
    arrays = safetensors_numpy.load(data)  # the package's own reader
    assert arrays["xt"].tolist() == x.tolist() and arrays["w"].dtype.name == "int32"
    assert load(safetensors_numpy.save({"a": arrays["xt"]}))["a"].tolist() == x.tolist()


def test_state_dict_round_trip_into_a_module(tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    save_file({k: v.detach() for k, v in model.state_dict().items()}, tmp_path / "m.safetensors")
    fresh = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    fresh.load_state_dict(load_file(tmp_path / "m.safetensors"))
    x = torch.randn(5, 3)
    assert torch.equal(fresh(x), model(x))


def test_errors():
    x = torch.arange(4.0)
    with pytest.raises(RuntimeError, match="share memory"):
        save({"a": x, "b": x[1:]})
    with pytest.raises(TypeError, match="no dtype for torch.complex128"):
        save({"c": torch.zeros(1, dtype=torch.complex128)})
    with pytest.raises(TypeError, match="not a Tensor"):
        save({"a": [1.0]})
    with pytest.raises(TypeError, match="names must be str"):
        save({1: x})


def test_pytorch_reads_minitorch_files_and_back(tmp_path):
    torch_ = pytest.importorskip("torch")
    safetensors_torch = pytest.importorskip("safetensors.torch")
    save_file({"w": torch.arange(6.0).reshape(2, 3), "b": torch.tensor([1.5], dtype=torch.bfloat16)},
              tmp_path / "a.safetensors")
    theirs = safetensors_torch.load_file(tmp_path / "a.safetensors")
    assert theirs["w"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and theirs["b"].dtype == torch_.bfloat16
    safetensors_torch.save_file({"h": torch_.tensor([0.5, -2.0], dtype=torch_.float16)}, tmp_path / "b.safetensors")
    ours = load_file(tmp_path / "b.safetensors")
    assert ours["h"].dtype is torch.float16 and ours["h"].tolist() == [0.5, -2.0]
