"""DLPack between minitorch and real PyTorch (issue 16): torch.from_dlpack(minitorch tensor) and
minitorch.from_dlpack(torch tensor) share memory (writes show both ways) for every dtype both have,
non-contiguous and 0-dim tensors included; the refusals are PyTorch's."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minitorch as mt  # noqa: E402

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]


def values(t):
    t = t.detach()
    if str(t.dtype).endswith("bfloat16"):
        t = t.float()
    return np.asarray(t.numpy())


def sample(lib, dtype):
    base = lib.arange(24).reshape(2, 3, 4) % 5
    return base.to(getattr(lib, dtype))


def one(lib, dtype):
    return lib.ones((), dtype=getattr(lib, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("view", ["contiguous", "transposed", "sliced", "0-dim"])
def test_minitorch_to_pytorch_shares_memory(dtype, view):
    x = {"contiguous": lambda t: t, "transposed": lambda t: t.transpose(0, 2), "sliced": lambda t: t[1, :, ::2],
         "0-dim": lambda t: t[1, 2, 3]}[view](sample(mt, dtype))
    t = torch.from_dlpack(x)
    assert str(t.dtype) == str(x.dtype) and tuple(t.shape) == tuple(x.shape) and t.stride() == x.stride()
    assert t.data_ptr() == x.data_ptr()
    np.testing.assert_array_equal(values(t), values(x))
    t.fill_(1)  # a write through PyTorch shows in minitorch
    np.testing.assert_array_equal(values(x), values(one(mt, dtype)).reshape(()) + np.zeros(x.shape))
    x.zero_()  # and the reverse
    assert not values(t).any()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("view", ["contiguous", "transposed", "sliced", "0-dim"])
def test_pytorch_to_minitorch_shares_memory(dtype, view):
    t = {"contiguous": lambda s: s, "transposed": lambda s: s.transpose(0, 2), "sliced": lambda s: s[1, :, ::2],
         "0-dim": lambda s: s[1, 2, 3]}[view](sample(torch, dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "not writable" warning: PyTorch's capsules are writable
        x = mt.from_dlpack(t)
    assert str(x.dtype) == str(t.dtype) and tuple(x.shape) == tuple(t.shape) and x.stride() == t.stride()
    assert x.data_ptr() == t.data_ptr()
    np.testing.assert_array_equal(values(x), values(t))
    x.fill_(1)
    np.testing.assert_array_equal(values(t), values(one(torch, dtype)).reshape(()) + np.zeros(t.shape))
    t.zero_()
    assert not values(x).any()


def test_capsules_cross_both_ways():
    from minitorch.utils.dlpack import to_dlpack

    t = torch.utils.dlpack.from_dlpack(to_dlpack(mt.arange(4.0)))
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy imports pre-1.0 capsules read-only (docs/serialization.md)
        x = mt.from_dlpack(torch.utils.dlpack.to_dlpack(torch.arange(3, dtype=torch.int16)))
    assert x.dtype is mt.int16 and x.tolist() == [0, 1, 2]


def test_the_refusals_are_pytorchs():
    cases = [
        (lambda lib: lib.ones(2, requires_grad=True), "Can't export tensors that require gradient"),
        (lambda lib: lib.ones(2).to_sparse(), "layout other than torch.strided"),
        (lambda lib: lib.quantize_per_tensor(lib.ones(2), 0.1, 0, lib.quint8), "QUInt/QInt"),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for make, message in cases:
            for lib in (torch, mt):
                with pytest.raises(BufferError, match=message):
                    lib.from_dlpack(make(lib) if lib is torch else make(mt))
    for lib in (torch, mt):
        meta = lib.ones(2, device="meta")
        with pytest.raises(BufferError, match="Cannot pack tensors on meta"):
            meta.__dlpack__()
        with pytest.raises(ValueError, match="Unknown device type meta for Dlpack"):
            lib.from_dlpack(meta)
    # minitorch imports a PyTorch tensor that requires grad as PyTorch itself does: it refuses
    with pytest.raises(BufferError, match="require gradient"):
        mt.from_dlpack(torch.ones(2, requires_grad=True))
    source = torch.arange(3.0)
    for lib in (torch, mt):
        with pytest.raises(ValueError, match="without copying"):
            lib.from_dlpack(source if lib is mt else np.arange(3.0), device="cuda", copy=False)
