"""The tensor lessons of the seeds: storage, offsets, strides, views, contiguity, scalars; plus the
runtime helpers (threads, utils.benchmark.Timer)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from hypothesis import given

import minitorch as torch
from minitorch.testing.strategies import tensors

# metadata -----------------------------------------------------------------------------------------


def test_dtype_shape_device_of_a_tensor():
    t = torch.tensor([[1.0, -1.0], [1.0, -1.0]])
    assert t.dtype is torch.float32
    assert t.shape == torch.Size([2, 2]) and repr(t.shape) == "torch.Size([2, 2])"
    assert repr(t.device) == "device(type='cpu')"
    assert t.size() == (2, 2) and t.size(1) == 2 and t.size(-1) == 2
    assert t.dim() == 2 and t.ndim == 2 and t.numel() == 4 and len(t) == 2
    assert isinstance(t.shape[0:1], torch.Size) and t.shape.numel() == 4


def test_storage_lesson_from_the_seeds():
    t = torch.arange(10.0).view(2, 5)
    storage = t.storage()
    assert len(storage) == 10 and storage[3] == 3.0
    assert storage.tolist() == [float(i) for i in range(10)]
    storage[3] = 10.0  # a write through the storage shows in every tensor over it
    assert t[0, 3].item() == 10.0
    assert t.size() == (2, 5) and t.storage_offset() == 0 and t.stride() == (5, 1)
    assert "TypedStorage(dtype=torch.float32" in repr(storage) and "of size 10" in repr(storage)


def test_offset_and_stride_address_the_storage():
    points = torch.tensor([[4.0, 1.0], [5.0, 3.0], [2.0, 1.0]])
    second = points[1]
    assert second.storage_offset() == 2 and points.stride() == (2, 1)
    flat = points.storage().tolist()
    for i in range(3):
        for j in range(2):
            index = points.storage_offset() + i * points.stride()[0] + j * points.stride()[1]
            assert flat[index] == points[i, j].item()
    assert second.untyped_storage() == points.untyped_storage()
    clone = points[1].clone()
    assert clone.untyped_storage() != points.untyped_storage() and clone.tolist() == [5.0, 3.0]


def test_transpose_flips_strides_without_copying():
    t = torch.zeros(1, 2, 3)
    assert t.stride() == (6, 3, 1)
    assert (t.transpose(0, 1).shape, t.transpose(0, 1).stride()) == ((2, 1, 3), (3, 6, 1))
    assert (t.transpose(0, 2).shape, t.transpose(0, 2).stride()) == ((3, 2, 1), (1, 3, 6))
    assert (t.transpose(1, 2).shape, t.transpose(1, 2).stride()) == ((1, 3, 2), (6, 1, 3))
    some = torch.ones(3, 4, 5)
    assert some.transpose(0, 2).stride() == (1, 5, 20)
    points = torch.tensor([[4.0, 1.0], [5.0, 3.0], [2.0, 1.0]])
    points_t = points.t()
    assert points_t.stride() == (1, 2) and points_t.data_ptr() == points.data_ptr()
    assert points_t.untyped_storage() == points.untyped_storage()
    assert torch.equal(points.t(), points.transpose(0, 1))


def test_contiguous_copies_only_when_needed():
    points = torch.tensor([[4.0, 1.0], [5.0, 3.0], [2.0, 1.0]])
    points_t = points.t()
    assert points.is_contiguous() and not points_t.is_contiguous()
    assert points.contiguous() is points
    made = points_t.contiguous()
    assert made.stride() == (3, 1) and made.is_contiguous()
    assert made.data_ptr() != points.data_ptr() and made.tolist() == points_t.tolist()
    assert torch.ones(3, 1).t().is_contiguous()  # size-1 dims do not count
    assert torch.ones(2, 4)[:, ::2].is_contiguous() is False


def test_view_shares_data_ptr():
    x = torch.ones((2, 2))
    x_view = x.view(4)
    assert x.data_ptr() == x_view.data_ptr()
    assert x_view.tolist() == [1.0] * 4
    t = torch.tensor([[1, 2, 3], [4, 5, 6]])
    assert t.view(3, -1).tolist() == [[1, 2], [3, 4], [5, 6]]
    assert t.t().tolist() == [[1, 4], [2, 5], [3, 6]]


def test_data_ptr_moves_with_offset_and_element_size():
    x = torch.arange(6, dtype=torch.int32)
    assert x.element_size() == 4 and torch.ones(1, dtype=torch.float64).element_size() == 8
    assert x[2:].data_ptr() == x.data_ptr() + 2 * 4
    assert x.untyped_storage().data_ptr() == x.data_ptr()
    assert x.untyped_storage().nbytes() == 24 and x[2:].untyped_storage().nbytes() == 24
    assert torch.ones(3, dtype=torch.bool).element_size() == 1


def test_item_tolist_and_python_conversions():
    assert torch.tensor(2.5).item() == 2.5 and isinstance(torch.tensor(3).item(), int)
    assert torch.tensor([[7]]).item() == 7
    assert torch.tensor([True]).item() is True
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        torch.tensor([1, 2]).item()
    assert torch.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert torch.tensor(1.5).tolist() == 1.5
    assert float(torch.tensor(1.5)) == 1.5 and int(torch.tensor(3)) == 3 and bool(torch.tensor(1))
    assert [1, 2, 3][torch.tensor(1)] == 2
    with pytest.raises(TypeError):
        [1, 2][torch.tensor(1.0)]


def test_python_scalar_conversion_errors_and_warning():
    """PyTorch: float()/int()/complex() of a tensor that is not one element raise ValueError (item() raises
    RuntimeError); bool() names the empty case; float() and complex() of a tensor requiring grad warn."""
    for convert in (float, int, complex):
        for t in (torch.ones(2), torch.ones(0), torch.ones(2, 2, requires_grad=True)):
            with pytest.raises(ValueError, match="only one element tensors can be converted to Python scalars"), \
                    warnings.catch_warnings():
                warnings.simplefilter("ignore")  # float() of a grad tensor warns first, as in PyTorch
                convert(t)
    with pytest.raises(RuntimeError, match="a Tensor with 0 elements cannot be converted to Scalar"):
        torch.ones(0).item()
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with no values is ambiguous"):
        bool(torch.ones(0))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(torch.ones(2))
    leaf = torch.ones(1, requires_grad=True)
    for convert in (float, complex):
        for t in (leaf, leaf * 2):
            with pytest.warns(UserWarning, match="Converting a tensor with requires_grad=True to a scalar may lead "
                                                 "to unexpected behavior.\nConsider using tensor.detach"):
                assert convert(t) == convert(t.detach())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert int(leaf) == 1 and bool(leaf) and leaf.item() == 1.0 and float(leaf.detach()) == 1.0


def test_torch_rand_lesson_shapes():
    torch.manual_seed(0)
    assert isinstance(torch.rand(1).item(), float)
    for shape in [(1,), (1, 1), (1, 1, 1), (1, 1, 1, 1), (2, 6)]:
        assert torch.rand(*shape).size() == shape
    t = torch.rand(2, 3)
    assert (t.size(), t.dim(), t.numel()) == ((2, 3), 2, 6)
    x = torch.rand(3, 4)
    assert x[:, 2].shape == (3,) and x[-1].shape == (4,) and x[-1:].shape == (1, 4) and x[None].shape == (1, 3, 4)


def test_dtype_conversions_of_the_seeds():
    t = torch.rand(2, 3)
    assert t.type(torch.float64).dtype is torch.float64
    assert t.to(torch.double).dtype is torch.float64 and t.to(dtype=torch.short).dtype is torch.int16
    assert torch.tensor([[1, 2], [3, 4]], dtype=torch.short).dtype is torch.int16
    assert (torch.rand(5, dtype=torch.float64) * torch.rand(5).to(torch.short)).dtype is torch.float64
    assert t.type() == "torch.FloatTensor"


@given(t=tensors(dtype=torch.float64))
def test_geometry_agrees_with_numpy_view(t):
    """stride/offset/contiguity read off the tensor describe exactly the memory numpy sees."""
    array = t.numpy()
    assert t.shape == array.shape
    assert t.stride() == tuple(s // 8 for s in array.strides)
    assert t.is_contiguous() == array.flags.c_contiguous
    assert t.contiguous().is_contiguous() and t.contiguous().tolist() == array.tolist()
    assert t.clone().tolist() == array.tolist() and t.clone().data_ptr() != t.data_ptr()
    if t.numel():
        assert t.data_ptr() == array.__array_interface__["data"][0]
        assert np.isclose(t.storage()[t.storage_offset()], array.flat[0])


# runtime helpers ----------------------------------------------------------------------------------


def test_num_threads_round_trip():
    previous = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        assert torch.get_num_threads() == 1
        torch.set_num_threads(2)
        threadpoolctl = pytest.importorskip("threadpoolctl")
        if not [i for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]:
            pytest.skip("numpy has no BLAS thread pool here")
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(previous)
    with pytest.raises(RuntimeError, match="positive integer"):
        torch.set_num_threads(0)


def test_benchmark_timer_prints_like_pytorch():
    import minitorch.utils.benchmark as benchmark

    a, b = torch.randn(20, 20), torch.randn(20, 20)
    timer = benchmark.Timer(stmt="a + b", globals={"a": a, "b": b})
    m = timer.timeit(50)
    assert type(m).__module__ == "minitorch.utils.benchmark.utils.common"
    lines = repr(m).split("\n")
    assert re.fullmatch(r"<minitorch\.utils\.benchmark\.utils\.common\.Measurement object at 0x[0-9a-f]+>", lines[0])
    assert lines[1] == "a + b"
    assert re.fullmatch(r"  \d+\.\d\d (ns|us|ms|s)", lines[2])
    assert lines[3] == "  1 measurement, 50 runs , 1 thread"
    assert m.number_per_run == 50 and len(m.times) == 1 and m.median == m.times[0] > 0


def test_benchmark_labels_setup_and_blocked_autorange():
    from minitorch.utils import benchmark

    m = benchmark.Timer(stmt="sum(x)", setup="x = list(range(10))", label="loop", description="python").timeit(10)
    assert repr(m).split("\n")[1:4] == ["loop", "python", "setup: x = list(range(10))"]
    seen = []
    blocked = benchmark.Timer(stmt="1 + 1").blocked_autorange(callback=lambda n, t: seen.append(n), min_run_time=0.01)
    text = repr(blocked)
    if len(blocked.times) > 1:
        assert "Median: " in text and f"{blocked.number_per_run} runs per measurement, 1 thread" in text
    else:  # one block already took min_run_time (a loaded machine)
        assert f"1 measurement, {blocked.number_per_run} runs , 1 thread" in text
    assert len(seen) == len(blocked.times) >= 1 and sum(blocked.raw_times) >= 0.01
    assert blocked.iqr >= 0 and blocked.mean > 0


def test_benchmark_units():
    from minitorch.utils.benchmark import select_unit

    assert select_unit(2.29e-3) == ("ms", 1e-3)
    assert select_unit(191.26e-6) == ("us", 1e-6)
    assert select_unit(5e-8) == ("ns", 1e-9)
    assert select_unit(1.37) == ("s", 1.0)


def test_benchmark_is_reachable_as_attribute():
    import minitorch.utils

    assert minitorch.utils.benchmark.Timer.__name__ == "Timer"
    with pytest.raises(AttributeError):
        minitorch.utils.no_such_module  # noqa: B018
