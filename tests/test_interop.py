"""numpy and DLPack interop: which conversions share memory and which copy (the seeds' zero-copy lesson)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

import minitorch as torch
from minitorch.testing.strategies import tensors


def test_numpy_shares_memory_both_ways():
    t = torch.ones(3, 4)
    n = t.numpy()
    assert n.dtype == np.float32 and n.shape == (3, 4)
    n[0, 0] = 0.0  # write through numpy, seen by the tensor
    assert t[0, 0].item() == 0.0
    t.storage()[5] = 9.0  # write through the tensor's storage, seen by numpy
    assert n[1, 1] == 9.0
    assert np.shares_memory(n, t.numpy())


def test_numpy_of_views_shares_memory():
    t = torch.arange(12.0).view(3, 4)
    for view in (t.t(), t[1], t[:, ::2], t.view(12), t[1:, 1:]):
        array = view.numpy()
        assert np.shares_memory(array, t.numpy())
        assert array.tolist() == view.tolist()
        assert view.stride() == tuple(s // 4 for s in array.strides)
    t.numpy()[2, 3] = -1.0
    assert t.t().numpy()[3, 2] == -1.0


def test_numpy_on_requires_grad_tensor_raises_pytorch_message():
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad. "
                                           r"Use tensor.detach\(\).numpy\(\) instead."):
        x.numpy()
    assert np.shares_memory(x.detach().numpy(), x.detach().numpy())
    assert x.numpy(force=True).tolist() == [1.0, 1.0]


def test_array_protocol():
    t = torch.arange(6).view(2, 3)
    a = np.asarray(t)
    assert a.dtype == np.int64 and np.shares_memory(a, t.numpy())
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert np.asarray(torch.ones(2, requires_grad=True)).tolist() == [1.0, 1.0]  # __array__ detaches
    assert (np.add(t, 1) == np.arange(1, 7).reshape(2, 3)).all()


def test_tensor_copies_as_tensor_and_from_numpy_share():
    np_array = np.ones((2, 2))
    copied = torch.tensor(np_array)
    assert copied.dtype is torch.float64 and not np.shares_memory(copied.numpy(), np_array)
    np_array[0, 0] = 5.0
    assert copied[0, 0].item() == 1.0

    shared = torch.from_numpy(np_array)
    assert shared.dtype is torch.float64 and np.shares_memory(shared.numpy(), np_array)
    np_array += 1.0  # in-place on the numpy side
    assert shared.tolist() == [[6.0, 2.0], [2.0, 2.0]]
    np_array = np_array + 1.0  # rebinding makes a new array: the tensor keeps the old memory
    assert shared.tolist() == [[6.0, 2.0], [2.0, 2.0]]

    source = np.arange(4, dtype=np.float32)
    same = torch.as_tensor(source)
    assert same.data_ptr() == source.__array_interface__["data"][0]
    cast = torch.as_tensor(source, dtype=torch.float64)
    assert cast.dtype is torch.float64 and not np.shares_memory(cast.numpy(), source)
    t = torch.ones(2)
    assert torch.as_tensor(t) is t
    assert torch.as_tensor([1, 2]).dtype is torch.int64


def test_from_numpy_strided_views_and_dtypes():
    base = np.arange(12.0).reshape(3, 4)
    for view in (base[:, ::2], base.T, base[1:, 1:], base[::2]):
        t = torch.from_numpy(view)
        assert t.tolist() == view.tolist() and np.shares_memory(t.numpy(), base)
        assert t.stride() == tuple(s // 8 for s in view.strides)
    base[0, 0] = 42.0
    assert torch.from_numpy(base.T)[0, 0].item() == 42.0
    for np_dtype, dtype in [(np.float32, torch.float32), (np.int32, torch.int32), (np.bool_, torch.bool),
                            (np.uint8, torch.uint8), (np.float16, torch.float16), (np.int8, torch.int8)]:
        assert torch.from_numpy(np.zeros(2, dtype=np_dtype)).dtype is dtype
    assert torch.from_numpy(np.full((), 2.0)).shape == ()


def test_from_numpy_errors():
    with pytest.raises(ValueError, match="At least one stride in the given numpy array is negative"):
        torch.from_numpy(np.arange(4)[::-1])
    with pytest.raises(TypeError, match="expected np.ndarray"):
        torch.from_numpy([1, 2])
    with pytest.raises(TypeError, match="complex256"):
        torch.from_numpy(np.zeros(2, dtype=np.clongdouble))
    assert torch.from_numpy(np.zeros(2, dtype=np.complex128)).dtype is torch.complex128
    readonly = np.zeros(2)
    readonly.flags.writeable = False
    with pytest.warns(UserWarning, match="not writable"):
        torch.from_numpy(readonly)


def test_dlpack_is_zero_copy_both_ways():
    source = np.arange(6.0).reshape(2, 3)
    t = torch.from_dlpack(source)
    assert t.data_ptr() == source.__array_interface__["data"][0] and t.tolist() == source.tolist()
    source[1, 2] = -5.0
    assert t[1, 2].item() == -5.0

    x = torch.arange(4.0)
    back = np.from_dlpack(x)
    assert np.shares_memory(back, x.numpy())
    x.numpy()[0] = 7.0
    assert back[0] == 7.0
    assert x.__dlpack_device__()[0] == 1  # kDLCPU
    assert torch.from_dlpack(x).data_ptr() == x.data_ptr()
    with pytest.raises(BufferError, match="Can't export tensors that require gradient"):  # PyTorch's type
        np.from_dlpack(torch.ones(2, requires_grad=True))


def test_dlpack_refusals_match_pytorch():
    refused = {
        "QUInt/QInt types are not supported by dlpack": torch.quantize_per_tensor(torch.ones(2), 0.1, 0, torch.quint8),
        "layout other than torch.strided": torch.ones(2).to_sparse(),
        "Cannot pack tensors on meta": torch.ones(2, device="meta"),
    }
    for message, t in refused.items():
        with pytest.raises(BufferError, match=message):
            t.__dlpack__()


def test_dlpack_capsules_bfloat16_and_copy_options():
    from minitorch.utils.dlpack import DLDeviceType, to_dlpack

    x = torch.arange(6.0).view(2, 3).t().to(torch.bfloat16)  # numpy's own DLPack has no bfloat16
    back = torch.utils.dlpack.from_dlpack(to_dlpack(x))
    assert back.dtype is torch.bfloat16 and back.data_ptr() == x.data_ptr() and back.stride() == x.stride()
    back[0, 1] = 9.0
    assert x[0, 1].item() == 9.0
    capsule = to_dlpack(torch.tensor(2.5))
    scalar = torch.from_dlpack(capsule)
    assert scalar.shape == () and scalar.item() == 2.5
    with pytest.raises(TypeError, match="unused DLPack capsule"):
        torch.from_dlpack(capsule)  # a capsule is consumed once
    with pytest.raises(AssertionError, match="already a DLPack capsule"):
        torch.from_dlpack(to_dlpack(x), copy=True)
    source = np.arange(3.0)
    copied = torch.from_dlpack(source, copy=True)
    assert copied.data_ptr() != source.__array_interface__["data"][0] and copied.tolist() == [0.0, 1.0, 2.0]
    assert torch.from_dlpack(source, device="cpu", copy=False).data_ptr() == source.__array_interface__["data"][0]
    with pytest.raises(ValueError, match="without copying"):
        torch.from_dlpack(source, device="meta", copy=False)
    assert torch.from_dlpack(source, device="meta").is_meta
    assert x.__dlpack_device__() == (DLDeviceType.kDLCPU, 0)


@given(t=tensors(dtype=torch.float64))
def test_numpy_round_trip_preserves_values_and_memory(t):
    array = t.numpy()
    assert np.shares_memory(array, torch.from_numpy(array).numpy()) or t.numel() == 0
    assert torch.from_numpy(array).tolist() == t.tolist()
    assert torch.tensor(array).tolist() == t.tolist()
