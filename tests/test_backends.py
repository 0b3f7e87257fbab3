"""The backend registry: a third-party backend registered at run time gets the full op set."""

import math

import pytest

import minitorch as torch
from minitorch._backends import backend_for, register_backend
from minitorch._backends.numpy_backend import NumpyBackend


class CountingBackend(NumpyBackend):
    """A numpy backend under another device type that counts the buffers it wraps."""

    device_type = "counting"

    def __init__(self):
        super().__init__()
        self.wrapped = 0

    def normalize(self, dev):
        return torch.device("counting")

    def buffer_of(self, array):
        self.wrapped += 1
        return super().buffer_of(array)


@pytest.fixture
def counting():
    backend = CountingBackend()
    register_backend("counting", backend)
    return backend


def test_third_party_backend_runs_ops_and_autograd(counting):
    x = torch.tensor([1.0, 2.0, 3.0], device="counting", requires_grad=True)
    assert x.device == torch.device("counting")
    y = (x * x).exp().sum()
    y.backward()
    assert backend_for(torch.device("counting")) is counting
    assert counting.wrapped > 0
    assert x.grad.device.type == "counting"
    assert x.grad.tolist() == pytest.approx([2 * v * math.exp(v * v) for v in (1.0, 2.0, 3.0)])


def test_mixing_devices_names_both(counting):
    a = torch.ones(2)
    b = torch.ones(2, device="counting")
    with pytest.raises(RuntimeError, match="cpu and counting"):
        a + b


def test_unknown_device_type_is_rejected():
    with pytest.raises(RuntimeError):
        torch.device("tpu")


def test_only_backends_import_numpy_or_cupy():
    """The layering rule of DESIGN.md: numpy/CuPy appear only under minitorch/_backends/."""
    import pathlib
    import re

    root = pathlib.Path(torch.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        if "_backends" in path.parts:
            continue
        if re.search(r"^\s*(import|from)\s+(numpy|cupy|cupyx)\b", path.read_text(), re.M):
            offenders.append(str(path.relative_to(root)))
    assert offenders == []
