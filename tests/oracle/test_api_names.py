"""Differential tests for the top-level and Tensor names that real programs use (issue 15, part 1): each case runs
the same source with ``t`` bound to PyTorch and to minitorch and compares values, dtypes, shapes, strides and
exception types."""

import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minitorch  # noqa: E402
from minitorch.nn.utils.rnn import pad_sequence as mt_pad_sequence  # noqa: E402


def _run(module, source: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return eval(source, {"t": module, "math": math})
        except Exception as exc:  # noqa: BLE001 - compared by type
            return exc


def _same(expected, actual, source: str) -> None:
    if isinstance(expected, Exception):
        assert isinstance(actual, type(expected)), f"{source}: expected {type(expected).__name__}, got {actual!r}"
        return
    assert not isinstance(actual, Exception), f"{source}: PyTorch gave {expected!r}, minitorch raised {actual!r}"
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, minitorch.Tensor), source
        assert str(actual.dtype) == str(expected.dtype), source
        assert tuple(actual.shape) == tuple(expected.shape), source
        np.testing.assert_allclose(np.asarray(actual.detach().numpy(), dtype=np.float64),
                                   expected.detach().double().numpy(), rtol=1e-6, atol=1e-7, err_msg=source)
    elif isinstance(expected, tuple) and expected and isinstance(expected[0], torch.Tensor):
        assert len(actual) == len(expected), source
        for e, a in zip(expected, actual):
            _same(e, a, source)
    elif isinstance(expected, torch.dtype):
        assert str(actual) == str(expected), source
    elif isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(actual), source
    else:
        assert actual == expected, f"{source}: {actual!r} != {expected!r}"


def _check(source: str) -> None:
    _same(_run(torch, source), _run(minitorch, source), source)


CONSTANTS = ["t.inf", "t.pi", "t.e", "t.nan", "t.newaxis", "-t.inf < 0 < t.inf", "t.zeros(2, 3)[:, t.newaxis].shape"]

FINFO = [
    f"(t.finfo({d}).{field})" for d in ("t.float16", "t.float32", "t.float64", "t.bfloat16", "")
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")
] + [
    f"(t.iinfo({d}).{field})" for d in ("t.uint8", "t.int8", "t.int16", "t.int32", "t.int64")
    for field in ("bits", "max", "min", "dtype")
] + [
    "t.finfo(t.int32)", "t.finfo(t.bool)", "t.iinfo(t.float32)", "t.iinfo(t.bool)", "t.finfo('float32')",
    "t.iinfo()", "t.iinfo(t.qint8).max", "t.iinfo(t.quint8).min", "t.iinfo(t.qint32).bits", "repr(t.finfo(t.float32))", "repr(t.iinfo(t.int8))",
    "t.finfo(t.float32) == t.finfo(t.float32)", "t.finfo() == t.finfo(t.float32)",
]

REPEAT_INTERLEAVE = [
    "t.tensor([[1., 2], [3, 4]]).repeat_interleave(2)",
    "t.tensor([[1., 2], [3, 4]]).repeat_interleave(2, dim=0)",
    "t.tensor([[1., 2], [3, 4]]).repeat_interleave(3, dim=-1)",
    "t.repeat_interleave(t.tensor([[1., 2], [3, 4]]), t.tensor([1, 2]), dim=0)",
    "t.repeat_interleave(t.tensor([[1., 2], [3, 4]]), t.tensor([0, 2]), 1)",
    "t.tensor([[1., 2], [3, 4]]).repeat_interleave(t.tensor([1, 0, 2, 1]))",
    "t.tensor([[1., 2], [3, 4]]).repeat_interleave(t.tensor(2), dim=1)",
    "t.tensor([[1., 2], [3, 4]]).repeat_interleave(t.tensor([2]), dim=1)",
    "t.tensor([[1., 2], [3, 4]]).repeat_interleave(t.tensor([1, 2], dtype=t.int32), dim=0)",
    "t.repeat_interleave(t.tensor([1, 2, 0]))",
    "t.repeat_interleave(t.tensor([3, 1], dtype=t.int32))",
    "t.tensor(5.).repeat_interleave(3)",
    "t.zeros(0, 2).repeat_interleave(3, dim=0)",
    "t.tensor([True, False]).repeat_interleave(2)",
    "t.arange(6).repeat_interleave(2, dim=0, output_size=12)",
    "t.zeros(2).repeat_interleave(-1)",
    "t.zeros(2).repeat_interleave(t.tensor([1, -2]))",
    "t.zeros(2).repeat_interleave(t.tensor([1., 2]))",
    "t.zeros(2).repeat_interleave(t.tensor([1, 2, 3]))",
    "t.zeros(2).repeat_interleave(t.tensor([[1, 2]]))",
    "t.zeros(2, 2).repeat_interleave(2, dim=2)",
    "t.zeros(2).repeat_interleave(2, dim=0, output_size=5)",
    "t.repeat_interleave(t.tensor([[1, 2]]))",
    "t.repeat_interleave(t.tensor([1., 2]))",
]

DIFF = [
    "t.diff(t.tensor([[1., 4, 9], [2, 3, 7]]))",
    "t.diff(t.tensor([[1., 4, 9], [2, 3, 7]]), dim=0)",
    "t.diff(t.tensor([[1., 4, 9], [2, 3, 7]]), n=2)",
    "t.diff(t.tensor([[1., 4, 9], [2, 3, 7]]), n=5)",
    "t.diff(t.tensor([[1., 4, 9], [2, 3, 7]]), n=0)",
    "t.tensor([1., 4, 9]).diff(prepend=t.tensor([0.]), append=t.tensor([20., 30.]))",
    "t.diff(t.tensor([[1., 4, 9], [2, 3, 7]]), prepend=t.zeros(2, 1, dtype=t.float64))",
    "t.diff(t.tensor([True, False, False]))",
    "t.diff(t.tensor([True, False, False]), n=2)",
    "t.diff(t.tensor([1, 5, 2]))",
    "t.diff(t.tensor([1, 5, 2], dtype=t.uint8))",
    "t.diff(t.tensor([1., 2]), n=-1)",
    "t.diff(t.tensor(1.))",
    "t.diff(t.zeros(2, 3), prepend=t.zeros(2))",
    "t.diff(t.zeros(2, 3), append=t.zeros(1, 1))",
    "t.diff(t.zeros(3), n=1.5)",
]

COUNTING = [
    "t.bincount(t.tensor([0, 1, 1, 3]))",
    "t.bincount(t.tensor([0, 1, 1, 3]), minlength=6)",
    "t.tensor([0, 1, 1, 3]).bincount(weights=t.tensor([1., 2, 3, 4]))",
    "t.bincount(t.tensor([0, 1, 1, 3]), weights=t.tensor([1., 2, 3, 4], dtype=t.float64))",
    "t.bincount(t.tensor([0, 1, 1, 3]), weights=t.tensor([1, 2, 3, 4]))",
    "t.bincount(t.tensor([0, 1]), weights=t.tensor([1., 2], dtype=t.float16))",
    "t.bincount(t.tensor([], dtype=t.int64))",
    "t.bincount(t.tensor([0, 2], dtype=t.uint8))",
    "t.bincount(t.tensor([0, -1]))",
    "t.bincount(t.tensor([[0, 1]]))",
    "t.bincount(t.tensor([0., 1]))",
    "t.bincount(t.tensor([True, False]))",
    "t.bincount(t.tensor([0, 1]), minlength=-1)",
    "t.bincount(t.tensor([0, 1]), weights=t.tensor([1.]))",
    "t.histc(t.tensor([1., 2, 1]), bins=4, min=0, max=3)",
    "t.histc(t.tensor([1., 2, 1, 5]))",
    "t.tensor([1., 2]).histc(3)",
    "t.histc(t.tensor([1., 2, 1], dtype=t.float64), bins=3)",
    "t.histc(t.tensor([]), bins=3)",
    "t.histc(t.tensor([2., 2]), bins=3)",
    "t.histc(t.tensor([1., 2]), bins=2, min=1, max=1)",
    "t.histc(t.tensor([0.1, 0.2, 0.3, 0.7]), bins=3, min=0.1, max=0.7)",
    "t.histc(t.linspace(-1, 1, 1001), bins=7, min=-0.9, max=0.8)",
    "t.histc(t.tensor([1, 2, 1]), bins=4, min=0, max=3)",
    "t.histc(t.tensor([1., 2, 1]), bins=0)",
    "t.histc(t.tensor([1., 2, 1]), bins=4, min=3, max=0)",
    "t.histc(t.tensor([1., float('inf')]), bins=3)",
    "t.histogram(t.tensor([1., 2, 1]), bins=4, range=(0., 3.))",
    "t.histogram(t.tensor([1., 2, 1]), bins=4, range=(0., 3.), weight=t.tensor([1., 2., 4.]))",
    "t.histogram(t.tensor([1., 2, 1]), bins=t.tensor([0., 1, 2.5, 3]))",
    "t.histogram(t.tensor([1., 2, 1]), bins=4, density=True)",
    "t.tensor([[1., 2], [1, 7]]).histogram(3)",
    "t.histogram(t.tensor([], dtype=t.float32), bins=2)",
    "t.histogram(t.tensor([2., 2]), bins=2)",
    "t.histogram(t.tensor([1., 2]), 2, range=(1., 1.))",
    "t.histogram(t.linspace(-1, 1, 1001, dtype=t.float64), bins=9)",
    "t.histogram(t.linspace(-1, 1, 1001), bins=t.linspace(-0.9, 0.8, 8))",
    "t.histogram(t.tensor([1, 2, 1]), 4)",
    "t.histogram(t.tensor([1., 2, 1]), bins=0)",
    "t.histogram(t.tensor([1., 2, 1]), bins=2, range=(3., 1.))",
    "t.histogram(t.tensor([1., float('inf')]), 2)",
    "t.histogram(t.tensor([1., 2]), t.tensor([[0., 1]]))",
    "t.histogram(t.tensor([1., 2]), t.tensor([0., 3], dtype=t.float64))",
    "t.histogram(t.tensor([1., 2]), 2, weight=t.tensor([1.]))",
    "t.histogram(t.tensor([1., 2]), 2, weight=t.tensor([1., 2], dtype=t.float64))",
]

MEMORY_FORMATS = [
    "repr(t.channels_last)", "repr(t.preserve_format)", "repr(t.contiguous_format)", "repr(t.channels_last_3d)",
    "t.legacy_contiguous_format is t.contiguous_format",
    "t.randn(2, 3, 4, 5).contiguous(memory_format=t.channels_last).stride()",
    "t.randn(2, 3, 4, 5).contiguous(memory_format=t.channels_last).is_contiguous()",
    "t.randn(2, 3, 4, 5).contiguous(memory_format=t.channels_last).is_contiguous(memory_format=t.channels_last)",
    "t.randn(2, 3, 4, 5).contiguous(memory_format=t.channels_last).is_contiguous(memory_format=t.preserve_format)",
    "t.randn(2, 3, 4, 5).is_contiguous(memory_format=t.preserve_format)",
    "t.randn(2, 3, 4, 5).clone(memory_format=t.channels_last).stride()",
    "t.randn(2, 3, 4, 5).contiguous(memory_format=t.channels_last).clone().stride()",
    "t.randn(2, 3, 4, 5).contiguous(memory_format=t.channels_last).clone(memory_format=t.contiguous_format).stride()",
    "t.empty(2, 3, 4, 5, memory_format=t.channels_last).stride()",
    "t.empty_like(t.randn(2, 3, 4, 5).contiguous(memory_format=t.channels_last)).stride()",
    "t.zeros_like(t.randn(2, 3, 4, 5), memory_format=t.channels_last).stride()",
    "t.ones_like(t.randn(2, 3, 4, 5), memory_format=t.channels_last)",
    "t.full_like(t.randn(2, 3, 4, 5), 7., memory_format=t.channels_last).stride()",
    "t.randn(2, 3, 4, 5).to(memory_format=t.channels_last).stride()",
    "t.randn(2, 3, 4, 5).to(t.float64, memory_format=t.channels_last).stride()",
    "t.randn(2, 3, 4, 5).contiguous(memory_format=t.channels_last).to(t.float64).stride()",
    "t.randn(2, 3, 4, 5).contiguous(memory_format=t.channels_last).to(memory_format=t.contiguous_format).stride()",
    "t.randn(2, 3, 4, 5, 6).contiguous(memory_format=t.channels_last_3d).stride()",
    "t.randn(2, 3, 1, 1).contiguous(memory_format=t.channels_last).stride()",
    "t.randn(2, 1, 4, 1).is_contiguous(memory_format=t.channels_last)",
    "t.zeros(0, 3, 4, 5).contiguous(memory_format=t.channels_last).stride()",
    "t.arange(120.).reshape(2, 3, 4, 5).contiguous(memory_format=t.channels_last)",
    "t.randn(2, 3, 4).contiguous(memory_format=t.channels_last)",
    "t.arange(120.).reshape(2, 3, 4, 5).contiguous(memory_format=t.preserve_format)",
    "t.empty(2, 3, memory_format=t.channels_last)",
    "t.empty(2, 3, 4, 5, memory_format=t.preserve_format)",
    "t.randn(2, 3, 4, 5).contiguous(memory_format=3)",
    "t.randn(2, 3, 4, 5).is_contiguous(memory_format=3)",
    "t.randn(2, 3).clone(memory_format=t.channels_last)",
    "t.randn(2, 3).to(memory_format=t.channels_last)",
    "t.empty_like(t.randn(2, 3), memory_format=t.channels_last)",
]

LEGACY = [
    "t.FloatTensor(2, 3).shape", "t.FloatTensor([1, 2])", "t.LongTensor([1.7, 2])", "t.FloatTensor()",
    "t.FloatTensor(t.Size([2])).shape", "t.DoubleTensor([[1, 2]])", "t.IntTensor([1, 2])", "t.BoolTensor([1, 0])",
    "t.ByteTensor([1, 2])", "t.HalfTensor([1])", "t.ShortTensor([3])", "t.CharTensor([-3])",
    "t.FloatTensor(2, 3, device='cpu').shape", "t.LongTensor(3).dtype",
    "isinstance(t.zeros(2), t.FloatTensor)", "isinstance(t.zeros(2, dtype=t.int64), t.FloatTensor)",
    "isinstance(t.zeros(2, dtype=t.int64), t.LongTensor)", "isinstance(3, t.FloatTensor)",
    "t.FloatTensor.dtype", "t.LongTensor.is_cuda", "t.FloatTensor.__name__", "repr(t.FloatTensor)",
    "type(t.FloatTensor([1.])).__name__", "t.zeros(2).type(t.LongTensor)", "t.zeros(2).type('torch.IntTensor')",
    "t.zeros(2).type()", "t.zeros(2, dtype=t.uint8).type()", "t.zeros(2).type(t.float64)",
    "t.FloatTensor(t.zeros(2))", "t.FloatTensor(t.zeros(2, dtype=t.int64))", "t.FloatTensor('a')",
    "t.FloatTensor(2, 'a')", "t.zeros(2).type('torch.Foo')",
    "t.randn(2, 3).new(2, 3).shape", "t.randn(2, 3).new([1, 2])", "t.randn(2, 3).new()",
    "t.randn(2, 3).new(t.Size([2])).shape", "t.zeros(2, dtype=t.int64).new([1.5])", "t.randn(2, 3).new((2, 3))",
]

TENSOR_METHODS = [
    "t.ravel(t.arange(6.).reshape(2, 3).t())", "t.arange(6.).reshape(2, 3).ravel()", "t.ravel(t.tensor(1.))",
    "t.arange(6.).clone().resize_(2, 2)", "t.arange(6.).clone().resize_((2, 3))", "t.arange(6.).resize_(3, 3).shape",
    "t.arange(6.).resize_(t.Size([2]))", "t.arange(6.)[1:].resize_(2)", "t.arange(6.)[1:].resize_(2).storage_offset()",
    "t.zeros(1, 2, 3, 4).resize_(2, 3, 4, 5, memory_format=t.channels_last).stride()",
    "t.arange(6.).reshape(2, 3).t().clone().resize_(3).stride()", "t.arange(6.).resize_as_(t.zeros(2, 2))",
    "t.zeros(3, requires_grad=True).resize_(2)", "t.arange(6.).resize_(2.5)",
    "t.arange(6.).resize_(2, memory_format=t.channels_last)",
    "t.arange(6.).resize(2, 3)", "t.arange(6.).resize(4)",
    "t.zeros(3).random_(5, 2)", "t.zeros(3).random_(-1)", "t.zeros(3, dtype=t.uint8).random_(300)",
    "t.zeros(3, requires_grad=True).random_()", "t.zeros(100).random_(3).max() < 3",
    "t.zeros(100).random_(2, 5).min() >= 2", "t.zeros(100, dtype=t.bool).random_().dtype",
    "t.zeros(100).random_().max() <= 2 ** 24", "t.zeros(100, dtype=t.int8).random_().min() >= 0",
    "t.spmm(t.ones(2, 2), t.ones(2, 3))",
    "t.spmm(t.sparse_coo_tensor(t.tensor([[0, 1], [1, 0]]), t.tensor([1., 2.]), (2, 2)), t.ones(2, 3))",
]

KEYWORD_ALIASES = [
    "t.arange(12.).reshape(3, 4).sum(axis=0, keepdims=True)", "t.sum(t.arange(12.).reshape(3, 4), axis=1)",
    "t.mean(t.arange(12.).reshape(3, 4), axis=0, keepdims=True)", "t.arange(12.).reshape(3, 4).max(axis=1).values",
    "t.amax(t.arange(12.).reshape(3, 4), axis=0, keepdims=True)", "t.arange(12.).reshape(3, 4).std(axis=0)",
    "t.softmax(t.arange(12.).reshape(3, 4), axis=0)", "t.arange(12.).reshape(3, 4).argmax(axis=1)",
    "t.cat([t.ones(2), t.zeros(2)], axis=0)", "t.arange(4.).unsqueeze(axis=0)", "t.logsumexp(t.ones(2, 3), axis=1)",
    "t.arange(12.).reshape(3, 4).prod(axis=1, keepdims=True)", "t.arange(12.).reshape(3, 4).cumsum(axis=1)",
    "t.any(t.ones(2, 3), axis=0, keepdims=True)", "t.arange(12.).reshape(3, 4).norm(dim=0, keepdims=True)",
    "t.ones(2).sum(dim=0, axis=0)", "t.ones(2, 3).norm(dim=0, keepdims=True)", "t.ones(2, 3).split(1, axis=0)",
]

INPLACE = [
    f"t.tensor([1., 2, 3]).{name}(t.tensor([1., 0, 3]))"
    for name in ("eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "greater_equal_", "less_", "less_equal_",
                 "not_equal_", "logical_and_", "logical_or_", "logical_xor_", "arctan2_")
] + [
    f"t.tensor([1, 6, 3]).{name}(t.tensor([3, 2, 1]))"
    for name in ("bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_left_shift_", "bitwise_right_shift_", "eq_")
] + [
    "t.tensor([0.5, 0.9]).arcsinh_()", "t.tensor([1.5, 2.]).arccosh_()", "t.tensor([0.5, -0.2]).arctanh_()",
    "t.tensor([-1.5, 2.]).sgn_()", "t.tensor([-1.5, 2.7]).fix_()", "t.arange(6.).reshape(2, 3).cumsum_(1)",
    "t.arange(1., 7).reshape(2, 3).cumprod_(0)", "t.ones(3, 3).tril_()", "t.ones(3, 3).triu_(1)",
    "t.ones(2, 2).addmm_(t.ones(2, 3), t.ones(3, 2), beta=2)", "t.ones(2).addmv_(t.ones(2, 3), t.ones(3))",
    "t.ones(2, 3).addr_(t.ones(2), t.ones(3))", "t.ones(2, 2).addbmm_(t.ones(4, 2, 3), t.ones(4, 3, 2))",
    "t.ones(4, 2, 2).baddbmm_(t.ones(4, 2, 3), t.ones(4, 3, 2), alpha=0.5)",
    "t.zeros(4).put_(t.tensor([1, 3]), t.tensor([5., 6.]))",
    "t.zeros(4).masked_scatter_(t.tensor([True, False, True, False]), t.tensor([5., 6.]))",
    "t.zeros(3).scatter_reduce_(0, t.tensor([0, 0, 2]), t.tensor([1., 2., 3.]), 'sum')",
    "t.tensor([1, 2]).eq_(t.tensor([1., 3.]))", "t.tensor([1, 2]).cumsum_(0)",
    "t.zeros(3, requires_grad=True).cumsum_(0)",
]

CASES = CONSTANTS + FINFO + REPEAT_INTERLEAVE + DIFF + COUNTING + MEMORY_FORMATS + LEGACY + TENSOR_METHODS + \
    KEYWORD_ALIASES + INPLACE


@pytest.mark.parametrize("source", CASES)
def test_same_as_pytorch(source):
    _check(source)


def test_missing_in_place_variants_are_gone():
    """Every in-place method PyTorch has whose out-of-place op minitorch has exists too."""
    missing = [n for n in dir(torch.Tensor) if n.endswith("_") and not n.startswith("_")
               and n[:-1] in dir(minitorch.Tensor) and not hasattr(minitorch.Tensor, n)]
    assert missing == []


def test_default_device():
    assert str(minitorch.get_default_device()) == str(torch.get_default_device())
    for lib in (torch, minitorch):
        lib.set_default_device("meta")
        try:
            devices = [str(x.device) for x in (lib.zeros(2), lib.tensor([1.]), lib.arange(3), lib.full((2,), 1.),
                                               lib.eye(2), lib.linspace(0, 1, 3), lib.empty(2),
                                               lib.as_tensor(np.ones(2)), lib.from_numpy(np.ones(2)),
                                               lib.Tensor(2), lib.FloatTensor(2), lib.zeros(2, device="cpu"),
                                               lib.empty_like(lib.zeros(2, device="cpu")))]
            default = str(lib.get_default_device())
        finally:
            lib.set_default_device(None)
        if lib is torch:
            expected = (devices, default)
        else:
            assert (devices, default) == expected
        with lib.device("meta"):
            inside = str(lib.ones(1).device)
        assert (inside, str(lib.ones(1).device)) == ("meta", "cpu")
    with pytest.raises(RuntimeError):
        minitorch.set_default_device("foo")


def test_pad_sequence_matches_pytorch():
    from torch.nn.utils.rnn import pad_sequence

    a, b = [1, 2, 3], [4]
    for kwargs in ({}, {"batch_first": True, "padding_value": -1}, {"batch_first": True, "padding_side": "left"},
                   {"padding_value": 0.5}):
        expected = pad_sequence([torch.tensor(a), torch.tensor(b)], **kwargs)
        actual = mt_pad_sequence([minitorch.tensor(a), minitorch.tensor(b)], **kwargs)
        assert actual.tolist() == expected.tolist() and str(actual.dtype) == str(expected.dtype)
        assert actual.stride() == expected.stride()
    x = [torch.randn(3, 2), torch.randn(1, 2)]
    expected = pad_sequence(x, batch_first=True)
    actual = mt_pad_sequence([minitorch.tensor(v.numpy()) for v in x], batch_first=True)
    np.testing.assert_allclose(actual.numpy(), expected.numpy())
    for call in (lambda f, lib: f([]), lambda f, lib: f([lib.ones(2)], padding_side="up")):
        with pytest.raises(RuntimeError):
            call(pad_sequence, torch)
        with pytest.raises(RuntimeError):
            call(mt_pad_sequence, minitorch)


@pytest.mark.parametrize("source", [
    "t.repeat_interleave(x, 2, dim=1)", "x.repeat_interleave(t.tensor([1, 0, 3]), dim=0)", "x.repeat_interleave(3)",
    "t.diff(x, n=2, dim=0, append=x[:1])", "t.diff(x, prepend=x[:, :2])", "x.ravel()", "x.t().ravel()",
])
def test_gradients_match_pytorch(source):
    data = np.random.default_rng(0).standard_normal((3, 4))
    results = []
    for lib in (torch, minitorch):
        x = lib.tensor(data, requires_grad=True)
        out = eval(source, {"t": lib, "x": x})
        weights = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))
        (out * weights).sum().backward()
        results.append(np.asarray(x.grad.numpy()))
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)


PACKING = [
    "R.pack_padded_sequence(x, [2, 4, 1], batch_first=True, enforce_sorted=False)",
    "R.pad_packed_sequence(R.pack_padded_sequence(x, [2, 4, 1], batch_first=True, enforce_sorted=False), "
    "batch_first=True)",
    "R.pad_packed_sequence(R.pack_padded_sequence(x, [2, 4, 1], batch_first=True, enforce_sorted=False), "
    "total_length=6, padding_value=-1)",
    "R.pack_padded_sequence(x.t(), t.tensor([3, 3, 1]))",
    "R.pack_padded_sequence(t.arange(30.).reshape(6, 5), [2, 3, 2, 3, 1, 2], batch_first=True, enforce_sorted=False)",
    "R.pack_sequence([t.tensor([1, 2, 3]), t.tensor([4])])",
    "R.pack_sequence([t.tensor([1.]), t.tensor([4., 5])], enforce_sorted=False)",
    "tuple(R.unpack_sequence(R.pack_sequence([t.tensor([1.]), t.tensor([4., 5])], enforce_sorted=False)))",
    "R.pack_padded_sequence(x, [2, 4, 1], batch_first=True)",
    "R.pack_padded_sequence(x, [2, 0, 1], batch_first=True, enforce_sorted=False)",
    "R.pack_padded_sequence(x, t.tensor([[4, 2, 1]]), batch_first=True)",
    "R.pad_packed_sequence(R.pack_padded_sequence(x, [2, 4, 1], batch_first=True, enforce_sorted=False), "
    "total_length=2)",
    "R.pack_padded_sequence(x, [2, 4, 1], batch_first=True, enforce_sorted=False).to(t.float64).data",
]


@pytest.mark.parametrize("source", PACKING)
def test_packed_sequences_match_pytorch(source):
    import torch.nn.utils.rnn as torch_rnn

    import minitorch.nn.utils.rnn as minitorch_rnn

    results = []
    for lib, rnn in ((torch, torch_rnn), (minitorch, minitorch_rnn)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                results.append(eval(source, {"t": lib, "R": rnn, "x": lib.arange(12.0).reshape(3, 4)}))
            except Exception as exc:  # noqa: BLE001 - compared by type
                results.append(exc)
    expected, actual = results
    if isinstance(expected, tuple) and not isinstance(expected, Exception):
        assert type(actual).__name__ == type(expected).__name__ and len(actual) == len(expected), source
        for e, a in zip(expected, actual):
            if e is None:
                assert a is None, source
            else:
                _same(e, a, source)
    else:
        _same(expected, actual, source)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32"])
def test_linspace_and_logspace_bitwise(dtype):
    """PyTorch's kernels: one fused multiply-add per value (linspace in float32/float64), the endpoints through
    float32 for float16, truncated for integers; logspace's exponents in float64 and the C library's pow."""
    rng = np.random.default_rng(0)
    for _ in range(300):
        start, end = (rng.standard_normal(2) * rng.choice([1, 10, 1000])).tolist()
        steps = int(rng.choice([rng.integers(0, 100), rng.integers(100, 3000)]))
        for name, args in (("linspace", (start, end, steps)), ("logspace", (start / 500, end / 500, steps // 10))):
            expected = getattr(torch, name)(*args, dtype=getattr(torch, dtype)).numpy()
            actual = getattr(minitorch, name)(*args, dtype=getattr(minitorch, dtype)).numpy()
            np.testing.assert_array_equal(actual, expected, err_msg=f"{name}{args} {dtype}")


def test_histograms_bitwise_on_random_data():
    """Elements on or next to bin edges land in PyTorch's bin (its interpolation, local search and edges)."""
    rng = np.random.default_rng(1)
    for _ in range(300):
        dtype = str(rng.choice(["float32", "float64"]))
        data = (rng.standard_normal(int(rng.integers(0, 50))) * rng.choice([1, 0.1, 100])).astype(dtype)
        if rng.random() < 0.5:
            data = np.round(data * 4) / 4  # many values exactly on edges
        bins = int(rng.integers(1, 20))
        low, high = sorted(rng.standard_normal(2).round(2).tolist())
        for name, kwargs in (("histc", {"bins": bins, "min": low, "max": high}), ("histc", {"bins": bins}),
                             ("histogram", {"bins": bins}), ("histogram", {"bins": bins, "range": (low, high)})):
            expected = getattr(torch, name)(torch.from_numpy(data.copy()), **kwargs)
            actual = getattr(minitorch, name)(minitorch.from_numpy(data.copy()), **kwargs)
            for e, a in zip(expected if name == "histogram" else (expected,), actual if name == "histogram" else (actual,)):
                np.testing.assert_array_equal(a.numpy(), e.numpy(), err_msg=f"{name}({data.tolist()}, {kwargs})")
