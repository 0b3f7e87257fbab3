"""Devices: parsing, moving tensors with .to/.cpu/.cuda, and refusing to mix devices in one op."""

from __future__ import annotations

import pytest

import minitorch as torch


def test_device_parsing():
    assert torch.device("cpu").type == "cpu" and torch.device("cpu").index is None
    cuda1 = torch.device("cuda:1")
    assert (cuda1.type, cuda1.index) == ("cuda", 1) and str(cuda1) == "cuda:1"
    assert repr(cuda1) == "device(type='cuda', index=1)"
    assert torch.device("cuda", 0) == torch.device("cuda:0") and torch.device("cuda", 0) is torch.device("cuda:0")
    assert torch.device("cuda").index is None
    assert torch.device("meta") == "meta" and torch.device("cpu") != torch.device("meta")
    assert torch.device(torch.device("cpu")) is torch.device("cpu")
    assert hash(torch.device("cuda:0")) == hash(torch.device("cuda", 0))
    assert len({torch.device("cpu"), torch.device("cpu"), torch.device("cuda:0")}) == 2


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "cuda:-1", "cuda:0:1", "", "CUDA"])
def test_invalid_device_strings_raise(bad):
    with pytest.raises(RuntimeError):
        torch.device(bad)


def test_device_rejects_bad_arguments():
    with pytest.raises(TypeError):
        torch.device(3.5)
    with pytest.raises(RuntimeError, match="already has an index"):
        torch.device("cuda:0", 1)
    with pytest.raises(AttributeError):
        torch.device("cpu").type = "cuda"


def test_to_device_and_dtype(device):
    x = torch.tensor([1.0, 2.0], device=device)
    assert x.to(device) is x and x.to(dtype=torch.float32) is x and x.to(x) is x
    y = x.to(device=device, dtype=torch.float64)
    assert y.dtype is torch.float64 and y.device == x.device and y.tolist() == [1.0, 2.0]
    assert x.to(torch.int32).dtype is torch.int32
    assert x.to(device, torch.float16).dtype is torch.float16
    copy = x.to(device, copy=True)
    assert copy is not x and copy.data_ptr() != x.data_ptr()
    assert x.to(torch.ones(1, dtype=torch.float64, device=device)).dtype is torch.float64


def test_cpu_is_identity_on_cpu_tensors():
    x = torch.ones(2)
    assert x.cpu() is x and x.is_cpu and not x.is_cuda and x.get_device() == -1
    assert x.device == torch.device("cpu") and str(x.device) == "cpu"


def test_moving_to_meta_and_gradients_flow_back_as_shapes():
    x = torch.ones(2, 3, requires_grad=True)
    m = x.to("meta")
    assert m.is_meta and m.requires_grad and m.grad_fn is not None
    assert torch.ones(2, device=torch.device("meta")).device == torch.device("meta")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the machine without CUDA")
def test_cuda_without_cuda():
    assert torch.cuda.is_available() is False and torch.cuda.device_count() == 0
    x = torch.ones(2)
    for move in (lambda: x.cuda(), lambda: x.to("cuda"), lambda: x.to(device="cuda:0"),
                 lambda: torch.ones(2, device="cuda")):
        with pytest.raises(RuntimeError, match="CuPy|CUDA"):
            move()
    assert x.device == torch.device("cpu")  # a failed move leaves the tensor as it was


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA and CuPy")
def test_cuda_round_trip():
    x = torch.arange(4.0)
    g = x.cuda()
    assert g.is_cuda and g.device == torch.device("cuda:0") and g.get_device() == 0
    assert repr(g) == "tensor([0., 1., 2., 3.], device='cuda:0')"
    assert g.cpu().tolist() == x.tolist() and g.to("cpu").device == torch.device("cpu")
    with pytest.raises(RuntimeError, match="same device"):
        x + g


def test_mixing_devices_in_one_op_names_both():
    with pytest.raises(RuntimeError) as info:
        torch.ones(2, 3) * torch.ones(2, 3, device="meta")
    message = str(info.value)
    assert "Expected all tensors to be on the same device" in message
    assert "cpu" in message and "meta" in message


def test_factories_accept_device_objects_and_strings(device):
    dev = torch.device(device)
    for t in (torch.zeros(2, device=dev), torch.zeros(2, device=device), torch.tensor([1], device=dev),
              torch.arange(3, device=dev), torch.rand(2, device=dev)):
        assert t.device.type == dev.type



def test_negative_device_index_is_refused():
    with pytest.raises(RuntimeError, match="Device index must not be negative"):
        torch.device("cuda", -1)
    with pytest.raises(RuntimeError, match="Invalid device string: 'cuda:-1'"):
        torch.device("cuda:-1")
