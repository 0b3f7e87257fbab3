"""The top-level and Tensor names real programs use (issue 15, part 1), without PyTorch: gradients (gradcheck in
float64 on 0-dim, empty and non-contiguous inputs), layouts, the default device, and the error cases."""

import math
import warnings

import pytest

import minitorch as torch
from minitorch.autograd import gradcheck, gradgradcheck
from minitorch.nn.utils.rnn import pad_sequence, unpad_sequence


def _f64(*shape, requires_grad=True):
    return torch.randn(*shape, dtype=torch.float64).requires_grad_(requires_grad)


def test_constants():
    assert (torch.inf, torch.pi, torch.e, torch.newaxis) == (math.inf, math.pi, math.e, None)
    assert math.isnan(torch.nan)
    assert torch.zeros(2, 3)[:, torch.newaxis].shape == (2, 1, 3)


def test_finfo_and_iinfo():
    f = torch.finfo(torch.float32)
    assert (f.bits, f.eps, f.tiny, f.resolution, f.dtype) == (32, 2.0**-23, 2.0**-126, 1e-06, "float32")
    assert f.max == -f.min == (2 - 2.0**-23) * 2.0**127
    assert torch.finfo(torch.float16).max == 65504.0 and torch.finfo(torch.float64).eps == 2.0**-52
    assert torch.finfo() == torch.finfo(torch.get_default_dtype())
    i = torch.iinfo(torch.int8)
    assert (i.bits, i.min, i.max, i.dtype) == (8, -128, 127, "int8")
    assert torch.iinfo(torch.uint8).max == 255 and torch.iinfo(torch.int64).min == -(2**63)
    with pytest.raises(TypeError, match="finfo"):
        torch.finfo(torch.int32)
    with pytest.raises(TypeError, match="iinfo"):
        torch.iinfo(torch.float32)
    with pytest.raises(TypeError, match="argument 'type'"):
        torch.finfo("float32")


@pytest.mark.parametrize("make", [
    lambda: _f64(3, 4),
    lambda: _f64(4, 3).t(),  # non-contiguous
    lambda: _f64(0, 3),  # empty
    lambda: _f64(),  # 0-dim
])
def test_repeat_interleave_gradients(make):
    x = make()
    assert gradcheck(lambda x: x.repeat_interleave(2), (x,))
    assert gradgradcheck(lambda x: torch.repeat_interleave(x, 3), (x,))
    if x.dim() == 2:
        counts = torch.tensor([1, 0, 3, 2][: x.shape[1]])
        assert gradcheck(lambda x: x.repeat_interleave(counts, dim=1), (x,))
        assert gradgradcheck(lambda x: x.repeat_interleave(counts, dim=-1), (x,))
        assert gradcheck(lambda x: x.repeat_interleave(2, dim=0, output_size=2 * x.shape[0]), (x,))


def test_repeat_interleave_values_and_errors():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert x.repeat_interleave(torch.tensor([1, 2]), dim=0).tolist() == [[1, 2], [3, 4], [3, 4]]
    assert torch.repeat_interleave(torch.tensor([2, 0, 1])).tolist() == [0, 0, 2]
    with pytest.raises(RuntimeError, match="non-negative"):
        x.repeat_interleave(-1)
    with pytest.raises(RuntimeError, match="same size as input along dim"):
        x.repeat_interleave(torch.tensor([1, 2, 3]), dim=0)
    with pytest.raises(RuntimeError, match="output_size"):
        x.repeat_interleave(2, dim=0, output_size=3)
    with pytest.raises(NotImplementedError, match="Float"):
        x.repeat_interleave(torch.tensor([1.0, 2.0]), dim=0)


@pytest.mark.parametrize("make", [lambda: _f64(3, 5), lambda: _f64(5, 3).t(), lambda: _f64(0, 4), lambda: _f64(3, 0)])
def test_diff_gradients(make):
    x = make()
    assert gradcheck(lambda x: torch.diff(x), (x,))
    assert gradcheck(lambda x: torch.diff(x, n=2, dim=0), (x,))
    assert gradgradcheck(lambda x: x.diff(n=3), (x,))
    extra = _f64(x.shape[0], 2)
    assert gradcheck(lambda x, extra: torch.diff(x, prepend=extra, append=extra), (x, extra))


def test_diff_errors_and_bools():
    assert torch.diff(torch.tensor([True, False, False])).tolist() == [True, False]
    with pytest.raises(RuntimeError, match="at least one-dimensional"):
        torch.diff(torch.tensor(1.0))
    with pytest.raises(RuntimeError, match="non-negative"):
        torch.diff(torch.zeros(3), n=-1)
    with pytest.raises(RuntimeError, match="same dimension"):
        torch.diff(torch.zeros(2, 3), prepend=torch.zeros(2))
    with pytest.raises(TypeError, match="'n'"):
        torch.diff(torch.zeros(3), n=1.5)


def test_ravel_is_a_view_when_contiguous():
    x = torch.arange(6.0).reshape(2, 3).clone()
    assert x.ravel()._base is x and torch.ravel(x.t()).tolist() == [0, 3, 1, 4, 2, 5]
    y = _f64(3, 4).t()
    assert gradcheck(torch.ravel, (y,)) and gradcheck(torch.ravel, (_f64(),))


def test_counting():
    assert torch.bincount(torch.tensor([0, 1, 1, 3])).tolist() == [1, 2, 0, 1]
    assert torch.bincount(torch.tensor([1]), weights=torch.tensor([2.5]), minlength=3).tolist() == [0, 2.5, 0]
    assert torch.histc(torch.tensor([1.0, 2, 1]), bins=4, min=0, max=3).tolist() == [0, 2, 1, 0]
    hist, edges = torch.histogram(torch.tensor([1.0, 2, 1]), bins=2)
    assert hist.tolist() == [2, 1] and edges.tolist() == [1, 1.5, 2]
    with pytest.raises(RuntimeError, match="non-negative"):
        torch.bincount(torch.tensor([-1]))
    with pytest.raises(RuntimeError, match="bins must be > 0"):
        torch.histc(torch.ones(2), bins=0)
    weights = _f64(3)
    counted = torch.bincount(torch.tensor([0, 1, 1]), weights=weights)
    with pytest.raises(RuntimeError, match="not implemented"):  # PyTorch records a node without a derivative
        counted.sum().backward()
    assert not torch.histc(weights).requires_grad


def test_memory_formats():
    x = torch.randn(2, 3, 4, 5)
    y = x.contiguous(memory_format=torch.channels_last)
    assert y.stride() == (60, 1, 15, 3) and not y.is_contiguous()
    assert y.is_contiguous(memory_format=torch.channels_last) and torch.equal(x, y)
    assert y.clone().stride() == y.stride() and torch.empty_like(y).stride() == y.stride()
    assert y.contiguous() is not y and y.contiguous().stride() == (60, 20, 5, 1)
    assert x.to(memory_format=torch.contiguous_format) is x
    assert torch.empty(2, 3, 4, 5, 6, memory_format=torch.channels_last_3d).stride() == (360, 1, 90, 18, 3)
    with pytest.raises(RuntimeError, match="rank 4"):
        torch.zeros(2, 3).contiguous(memory_format=torch.channels_last)
    with pytest.raises(TypeError, match="memory_format"):
        x.clone(memory_format="channels_last")
    z = _f64(2, 3, 2, 2)
    assert gradcheck(lambda z: z.contiguous(memory_format=torch.channels_last) * 2, (z,))


def test_legacy_constructors():
    assert torch.FloatTensor([1, 2]).dtype is torch.float32 and torch.LongTensor(2, 3).shape == (2, 3)
    assert isinstance(torch.zeros(2), torch.FloatTensor) and not isinstance(torch.zeros(2), torch.LongTensor)
    assert torch.zeros(2).type(torch.LongTensor).dtype is torch.int64
    assert torch.randn(2).new([1, 2]).dtype is torch.float32
    x = torch.zeros(2)
    assert torch.FloatTensor(x) is x
    with pytest.raises(TypeError):
        torch.FloatTensor(torch.zeros(2, dtype=torch.int64))


def test_default_device_and_device_context():
    try:
        torch.set_default_device("meta")
        assert torch.get_default_device() == torch.device("meta")
        assert torch.zeros(2).device.type == "meta" and torch.tensor([1.0]).device.type == "meta"
        assert torch.Tensor(2).device.type == "cpu" and torch.zeros(2, device="cpu").device.type == "cpu"
    finally:
        torch.set_default_device(None)
    assert torch.get_default_device() == torch.device("cpu")
    with torch.device("meta"):
        assert torch.arange(3).device.type == "meta"
    assert torch.arange(3).device.type == "cpu"


def test_resize():
    x = torch.arange(6.0)
    version = x._version
    assert x.resize_(2, 2).tolist() == [[0, 1], [2, 3]] and x._version > version
    assert x.resize_(3, 3)[:2].reshape(-1)[:6].tolist() == [0, 1, 2, 3, 4, 5]
    with pytest.raises(RuntimeError, match="require grad"):
        torch.zeros(2, requires_grad=True).resize_(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = _f64(2, 3)
        assert gradcheck(lambda y: y.resize(3, 2), (y,))
        with pytest.raises(RuntimeError, match="elements"):
            torch.zeros(6).resize(4)


def test_random_():
    torch.manual_seed(0)
    x = torch.zeros(1000).random_(2, 5)
    assert x.min().item() >= 2 and x.max().item() <= 4 and len(x.unique()) == 3
    assert torch.zeros(100, dtype=torch.uint8).random_().max().item() <= 255
    with pytest.raises(RuntimeError, match="from"):
        torch.zeros(2).random_(3, 1)


def test_numpy_keyword_aliases():
    x = torch.arange(12.0).reshape(3, 4)
    assert x.sum(axis=0, keepdims=True).shape == (1, 4)
    assert torch.mean(x, axis=1).shape == (3,)
    with pytest.raises(TypeError, match="multiple values"):
        x.sum(dim=0, axis=0)


def test_inplace_variants_record_gradients():
    a = _f64(3, 4)
    assert gradcheck(lambda a: (a * 1).cumsum_(1), (a,))
    assert gradcheck(lambda a: (a * 1).tril_(), (a,))
    b = torch.ones(3, 4).eq_(torch.ones(3, 4))
    assert b.dtype is torch.float32 and b.sum().item() == 12


def test_pad_sequence():
    a, b = _f64(3, 2), _f64(1, 2)
    out = pad_sequence([a, b], batch_first=True, padding_value=-1.0)
    assert out.shape == (2, 3, 2) and out[1, 1:].eq(-1).all()
    assert gradcheck(lambda a, b: pad_sequence([a, b]), (a, b))
    assert gradcheck(lambda a, b: pad_sequence([a, b], batch_first=True, padding_side="left"), (a, b))
    parts = unpad_sequence(pad_sequence([a, b]), torch.tensor([3, 1]))
    assert torch.equal(parts[0], a) and torch.equal(parts[1], b)
    with pytest.raises(RuntimeError, match="empty list"):
        pad_sequence([])


def test_spmm_and_assert_allclose():
    s = torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.tensor([1.0, 2.0]), (2, 2))
    assert torch.spmm(s, torch.ones(2, 3)).tolist() == [[1, 1, 1], [2, 2, 2]]
    with pytest.warns(FutureWarning):
        torch.testing.assert_allclose(torch.tensor([1.0, 2.0]), [1.00001, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(AssertionError):
            torch.testing.assert_allclose(torch.tensor([1.0]), [1.1])


def test_packed_sequences_round_trip_with_gradients():
    from minitorch.nn.utils.rnn import pack_padded_sequence, pack_sequence, pad_packed_sequence, unpack_sequence

    x = _f64(3, 4, 2)

    def round_trip(x):
        packed = pack_padded_sequence(x, [2, 4, 1], batch_first=True, enforce_sorted=False)
        return pad_packed_sequence(packed, batch_first=True, padding_value=3.0)[0]

    assert gradcheck(round_trip, (x,))
    out, lengths = pad_packed_sequence(pack_padded_sequence(x, torch.tensor([2, 4, 1]), True, False), True)
    assert lengths.tolist() == [2, 4, 1] and torch.equal(out[1], x[1]) and out[2, 1:].eq(0).all()
    sequences = [_f64(2), _f64(3)]
    assert all(torch.equal(a, b) for a, b in zip(unpack_sequence(pack_sequence(sequences, False)), sequences))
    with pytest.raises(RuntimeError, match="decreasing"):
        pack_sequence(sequences)
