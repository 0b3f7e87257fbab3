"""Checkpoints: atomic saves, optimizer-style state dicts, and damaged files failing loudly."""

from __future__ import annotations

import io
import os
import pickle
import stat
import sys
from collections import OrderedDict

import pytest

import minitorch as torch
from minitorch import serialization
from minitorch.serialization import SerializationError


def checkpoint(value: float) -> dict:
    return {"epoch": int(value), "model": OrderedDict(weight=torch.full((3, 2), value))}


def assert_holds(path, value: float) -> None:
    loaded = torch.load(path)
    assert loaded["epoch"] == int(value) and loaded["model"]["weight"].tolist() == [[value] * 2] * 3


def leftovers(directory) -> list:
    return sorted(p.name for p in directory.iterdir() if p.name != "ckpt.pt")


# atomic saves -----------------------------------------------------------------------------------


def _fail_mid_write(error: BaseException):
    real = serialization._write_zip

    def write_then_fail(handle, manifest, storages):
        real(handle, manifest, storages)
        handle.seek(handle.tell() // 2)
        handle.truncate()  # a half-written archive, as a crash would leave it
        raise error

    return write_then_fail


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_failed_save_leaves_the_old_checkpoint_and_no_temporary_file(tmp_path, monkeypatch, error):
    path = tmp_path / "ckpt.pt"
    torch.save(checkpoint(1.0), path)
    monkeypatch.setattr(serialization, "_write_zip", _fail_mid_write(error))
    with pytest.raises(type(error)):
        torch.save(checkpoint(2.0), path)
    assert_holds(path, 1.0)
    assert leftovers(tmp_path) == []
    monkeypatch.undo()
    torch.save(checkpoint(3.0), path)
    assert_holds(path, 3.0)
    assert leftovers(tmp_path) == []


def test_failed_fsync_leaves_the_old_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    torch.save(checkpoint(1.0), path)

    def broken_fsync(fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(serialization.os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="Input/output error"):
        torch.save(checkpoint(2.0), path)
    monkeypatch.undo()
    assert_holds(path, 1.0)
    assert leftovers(tmp_path) == []


def test_save_is_written_in_full_before_the_rename(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    torch.save(checkpoint(1.0), path)
    seen = []
    real_replace = os.replace

    def checking_replace(source, destination):
        seen.append((os.path.dirname(source), torch.load(source)["epoch"]))
        assert_holds(path, 1.0)  # the old file is still in place until the rename
        real_replace(source, destination)

    monkeypatch.setattr(serialization.os, "replace", checking_replace)
    torch.save(checkpoint(2.0), path)
    assert seen == [(str(tmp_path), 2)]
    assert_holds(path, 2.0)


def test_unsupported_object_fails_before_touching_the_file(tmp_path):
    path = tmp_path / "ckpt.pt"
    torch.save(checkpoint(1.0), path)
    with pytest.raises((pickle.PicklingError, AttributeError), match="lambda"):
        torch.save({"model": lambda: 0}, path)
    assert_holds(path, 1.0)
    assert leftovers(tmp_path) == []


def test_missing_parent_directory(tmp_path):
    with pytest.raises(RuntimeError, match="Parent directory .*missing does not exist"):
        torch.save(checkpoint(1.0), tmp_path / "missing" / "ckpt.pt")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits and symlinks")
def test_overwrite_keeps_permissions_and_follows_symlinks(tmp_path):
    path = tmp_path / "ckpt.pt"
    torch.save(checkpoint(1.0), path)
    os.chmod(path, 0o640)
    torch.save(checkpoint(2.0), path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    link = tmp_path / "latest.pt"
    link.symlink_to(path)
    torch.save(checkpoint(3.0), link)
    assert link.is_symlink() and os.readlink(link) == str(path)
    assert_holds(path, 3.0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt.pt", "latest.pt"]


# state dicts ------------------------------------------------------------------------------------


def round_trip(obj):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer)


def assert_same(a, b) -> None:
    """Equal, with the same container and key types all the way down."""
    assert type(a) is type(b), (a, b)
    if isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tolist() == b.tolist()
    elif isinstance(a, dict):
        assert [(type(k), k) for k in a] == [(type(k), k) for k in b]
        for key in a:
            assert_same(a[key], b[key])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    else:
        assert a == b


def test_optimizer_style_state_dict_round_trips_exactly():
    state_dict = {
        "state": {
            0: {"step": torch.tensor(3.0), "exp_avg": torch.randn(3, 2), "exp_avg_sq": torch.rand(3, 2)},
            1: {"step": torch.tensor(3.0), "momentum_buffer": None},
        },
        "param_groups": [
            {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.0, "amsgrad": False,
             "maximize": False, "foreach": None, "capturable": False, "differentiable": False,
             "fused": None, "params": [0, 1]},
            {"lr": 0.1, "nesterov": True, "dampening": 0, "params": [2], "name": "head"},
        ],
        "scheduler": {"last_epoch": 4, "_last_lr": [0.01, 0.1], "base_lrs": [0.1, 1.0], "milestones": {2: 1, 5: 2}},
        "rng": {-1: "negative", 2**70: "big", 0.5: "float key", True: "bool key", None: "none key"},
    }
    loaded = round_trip(state_dict)
    assert_same(loaded, state_dict)
    assert list(loaded["state"]) == [0, 1] and all(type(k) is int for k in loaded["state"])


def test_model_and_optimizer_checkpoint_resumes_training(tmp_path):
    nn, optim = torch.nn, torch.optim
    x, y = torch.randn(8, 3, dtype=torch.float64), torch.randn(8, 2, dtype=torch.float64)

    def make():
        torch.manual_seed(0)
        model = nn.Linear(3, 2).double()
        return model, optim.Adam(model.parameters(), lr=0.05)

    def step(model, optimizer):
        optimizer.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        optimizer.step()

    model, optimizer = make()
    for _ in range(4):
        step(model, optimizer)
    expected = model.weight.detach().clone()

    model, optimizer = make()
    for _ in range(2):
        step(model, optimizer)
    path = tmp_path / "ckpt.pt"
    torch.save({"epoch": 2, "model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)
    restored, restored_optimizer = make()
    loaded = torch.load(path)
    restored.load_state_dict(loaded["model"])
    restored_optimizer.load_state_dict(loaded["optimizer"])
    for _ in range(2):
        step(restored, restored_optimizer)
    assert loaded["epoch"] == 2
    assert restored.weight.tolist() == expected.tolist()


# damaged files ----------------------------------------------------------------------------------


def saved_bytes() -> bytes:
    buffer = io.BytesIO()
    torch.save({"w": torch.arange(6.0).reshape(2, 3), 0: {"step": 3, "betas": (0.9, None)}}, buffer)
    return buffer.getvalue()


def load_or_none(data: bytes):
    try:
        return torch.load(io.BytesIO(data))
    except SerializationError:
        return None


def test_truncated_files_raise_serialization_error():
    data = saved_bytes()
    comment = len(f"{serialization.FORMAT} v{serialization.VERSION}")
    for n in range(len(data) - comment):  # cutting only into the trailing archive comment loses nothing
        with pytest.raises(SerializationError):
            torch.load(io.BytesIO(data[:n]))


def test_flipped_bytes_raise_or_load_unchanged():
    data = saved_bytes()
    reference = torch.load(io.BytesIO(data))
    refused = 0
    for i in range(0, len(data)):
        damaged = bytearray(data)
        damaged[i] ^= 0xFF
        loaded = load_or_none(bytes(damaged))  # any other exception type fails the test
        if loaded is None:
            refused += 1
            continue
        assert_same(loaded, reference)  # a flip in unused header bytes (timestamps, ...) changes nothing
    assert refused > len(data) // 2
