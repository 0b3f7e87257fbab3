"""Lazy modules (shapes inferred on the first call), DataParallel on a machine without a GPU, the margin
losses and PyTorch's module paths."""

from __future__ import annotations

import copy
import importlib

import numpy as np
import pytest

import minitorch as torch
import minitorch.nn as nn
import minitorch.nn.functional as F
from minitorch.autograd import gradcheck
from minitorch.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy

RNG = np.random.default_rng(5)


def rand(*shape, requires_grad=True):
    return torch.tensor(RNG.standard_normal(shape), dtype=torch.float64, requires_grad=requires_grad)


# lazy modules --------------------------------------------------------------------------------------------


def test_uninitialized_parameter_materializes_in_place():
    p = UninitializedParameter(dtype=torch.float64)
    assert repr(p) == "<UninitializedParameter>" and p.requires_grad and isinstance(p, nn.Parameter)
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        p.shape
    p.materialize((2, 3))
    assert type(p) is nn.Parameter and p.shape == (2, 3) and p.dtype == torch.float64 and p.requires_grad
    b = UninitializedBuffer(persistent=False)
    assert not b.persistent and is_lazy(b)
    b.materialize(4)
    assert type(b) is torch.Tensor and b.shape == (4,) and not is_lazy(b)
    assert copy.deepcopy(UninitializedParameter(requires_grad=False)).requires_grad is False


def test_lazy_linear_becomes_linear():
    torch.manual_seed(0)
    m = nn.LazyLinear(3)
    assert repr(m) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    assert all(is_lazy(v) for v in m.state_dict().values())
    opt = torch.optim.SGD(m.parameters(), lr=0.1)  # built before the first call: holds the same objects
    weight = m.weight
    out = m(torch.randn(2, 5))
    assert out.shape == (2, 3) and type(m) is nn.Linear and m.in_features == 5
    assert m.weight is weight and m.weight.shape == (3, 5)
    bound = 1 / 5**0.5  # Linear's own initialisation once the shape is known
    assert m.weight.abs().max().item() <= bound and m.bias.abs().max().item() <= bound
    before = m.weight.detach().clone()
    out.sum().backward()
    opt.step()
    assert not torch.equal(before, m.weight.detach())
    assert repr(m) == "Linear(in_features=5, out_features=3, bias=True)"
    assert not m._forward_pre_hooks  # the inference hook removed itself


def test_lazy_modules_load_state_dict_and_errors():
    target = nn.Linear(4, 2)
    lazy = nn.LazyLinear(2)
    lazy.load_state_dict(target.state_dict())
    assert lazy.weight.shape == (2, 4) and torch.equal(lazy.weight, target.weight)
    conv = nn.LazyConv2d(4, 3, groups=2)
    assert repr(conv) == "LazyConv2d(0, 4, kernel_size=(3, 3), stride=(1, 1), groups=2)"
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        conv(torch.zeros(3, 5, 5))
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input to LazyConv2d"):
        nn.LazyConv2d(4, 3)(torch.zeros(5, 5))
    with pytest.raises(RuntimeError, match="Modules with uninitialized parameters can't be used with `DataParallel`"):
        nn.LazyLinear(2)._replicate_for_data_parallel()


@pytest.mark.parametrize(("lazy", "eager", "shape", "weight_shape"), [
    (lambda: nn.LazyConv1d(4, 3), nn.Conv1d, (2, 3, 8), (4, 3, 3)),
    (lambda: nn.LazyConv2d(4, 3, padding=1), nn.Conv2d, (3, 6, 6), (4, 3, 3, 3)),
    (lambda: nn.LazyConv3d(2, 2, bias=False), nn.Conv3d, (1, 2, 3, 3, 3), (2, 2, 2, 2, 2)),
    (lambda: nn.LazyConvTranspose1d(4, 3, stride=2), nn.ConvTranspose1d, (2, 6, 5), (6, 4, 3)),
    (lambda: nn.LazyConvTranspose2d(2, 2), nn.ConvTranspose2d, (1, 3, 4, 4), (3, 2, 2, 2)),
    (lambda: nn.LazyConvTranspose3d(2, 1, groups=2), nn.ConvTranspose3d, (1, 4, 2, 2, 2), (4, 1, 1, 1, 1)),
])
def test_lazy_convolutions(lazy, eager, shape, weight_shape):
    m = lazy()
    out = m(torch.randn(*shape))
    assert type(m) is eager and m.weight.shape == weight_shape
    assert out.shape == eager.forward(m, torch.randn(*shape)).shape


@pytest.mark.parametrize(("lazy", "eager", "shape"), [
    (nn.LazyBatchNorm1d, nn.BatchNorm1d, (4, 3)), (nn.LazyBatchNorm2d, nn.BatchNorm2d, (2, 3, 4, 4)),
    (nn.LazyBatchNorm3d, nn.BatchNorm3d, (2, 3, 2, 2, 2)), (nn.LazyInstanceNorm1d, nn.InstanceNorm1d, (2, 3, 5)),
    (nn.LazyInstanceNorm2d, nn.InstanceNorm2d, (2, 3, 4, 4)),
    (nn.LazyInstanceNorm3d, nn.InstanceNorm3d, (2, 3, 2, 2, 2)),
])
def test_lazy_norms(lazy, eager, shape):
    m = lazy()
    assert list(m.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert repr(m).startswith(f"{lazy.__name__}(0, eps=1e-05, momentum=0.1, affine=True, bias=True")
    m(torch.randn(*shape))
    assert type(m) is eager and m.num_features == 3 and m.weight.shape == (3,) and m.running_var.shape == (3,)
    assert m.weight.tolist() == [1, 1, 1] and m.bias.tolist() == [0, 0, 0]
    assert m.num_batches_tracked.item() == (1 if "Batch" in lazy.__name__ else 0)  # as PyTorch
    plain = lazy(affine=False, track_running_stats=False)
    assert list(plain.state_dict()) == []
    no_bias = lazy(bias=False)
    assert [n for n, _ in no_bias.named_parameters()] == ["weight"]


def test_lazy_module_to_keeps_buffers_lazy():
    m = nn.LazyBatchNorm1d().double()
    assert is_lazy(m.running_mean) and m.running_mean.dtype == torch.float64
    m(torch.randn(4, 2, dtype=torch.float64))
    assert m.running_mean.dtype == torch.float64 and m.running_mean.shape == (2,)


def test_norm_bias_keyword():
    m = nn.BatchNorm2d(3, bias=False)
    assert m.bias is None and list(m.state_dict()) == ["weight", "running_mean", "running_var",
                                                      "num_batches_tracked"]
    assert repr(m) == "BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=False, track_running_stats=True)"
    assert m(torch.randn(2, 3, 2, 2)).shape == (2, 3, 2, 2)
    assert nn.InstanceNorm3d(2, affine=True)(torch.randn(2, 2, 2, 2)).shape == (2, 2, 2, 2)


# DataParallel --------------------------------------------------------------------------------------------


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU-only behaviour")
def test_data_parallel_without_gpu_wraps_the_module():
    inner = nn.Linear(3, 2)
    dp = nn.DataParallel(inner)
    assert dp.module is inner and dp.device_ids == []
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]
    assert repr(dp) == "DataParallel(\n  (module): Linear(in_features=3, out_features=2, bias=True)\n)"
    x = torch.randn(4, 3)
    assert torch.equal(dp(x), inner(x))
    fresh = nn.DataParallel(nn.Linear(3, 2))
    fresh.load_state_dict(dp.state_dict())
    assert torch.equal(fresh.module.weight, inner.weight)
    with pytest.raises(RuntimeError, match="device type could not be determined"):
        nn.parallel.data_parallel(inner, x)
    with pytest.raises(AssertionError, match="Gather function not implemented for CPU tensors"):
        nn.parallel.gather([x, x], -1)
    with pytest.raises(AssertionError, match="Broadcast function not implemented for CPU tensors"):
        nn.parallel.replicate(inner, [0])
    assert nn.parallel.scatter({"a": 1}, [0, 1]) == [{"a": 1}, {"a": 1}]


def test_parallel_apply_runs_each_module():
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    x, y = torch.randn(1, 2), torch.randn(1, 2)
    out = nn.parallel.parallel_apply([a, b], [(x,), y])
    assert torch.equal(out[0], a(x)) and torch.equal(out[1], b(y))
    with pytest.raises(AssertionError, match="The number of modules 2 is not equal to the number of inputs 1"):
        nn.parallel.parallel_apply([a, b], [(x,)])


# margin losses -------------------------------------------------------------------------------------------


def test_multi_margin_loss_values():
    x = torch.tensor([[0.1, 0.2, 0.4, 0.8]], dtype=torch.float64)
    y = torch.tensor([3])
    # PyTorch's docs example: (1-(0.8-0.1) + 1-(0.8-0.2) + 1-(0.8-0.4)) / 4
    assert F.multi_margin_loss(x, y).item() == pytest.approx(0.325)
    assert nn.MultiMarginLoss(p=2)(x, y).item() == pytest.approx((0.3**2 + 0.4**2 + 0.6**2) / 4)
    w = torch.tensor([1.0, 1.0, 1.0, 2.0], dtype=torch.float64)
    assert F.multi_margin_loss(x, y, weight=w).item() == pytest.approx(0.65)


def test_multilabel_margin_loss_values():
    x = torch.tensor([[0.1, 0.2, 0.4, 0.8]], dtype=torch.float64)
    y = torch.tensor([[3, 0, -1, 1]])
    # PyTorch's docs example: 0.85
    assert nn.MultiLabelMarginLoss()(x, y).item() == pytest.approx(0.85)


def test_margin_losses_gradcheck_and_errors():
    x, y = rand(3, 5), torch.tensor([0, 4, 2])
    for p in (1, 2):
        assert gradcheck(lambda t: F.multi_margin_loss(t, y, p=p, margin=0.5, reduction="sum"), (x,))
    target = torch.tensor([[1, 2, -1, 0, 0], [4, -1, 0, 0, 0], [0, 1, 2, 3, 4]])
    assert gradcheck(lambda t: F.multilabel_margin_loss(t, target, reduction="none"), (x,))
    a, p_, n = rand(4, 3), rand(4, 3), rand(4, 3)
    loss = nn.TripletMarginWithDistanceLoss(distance_function=nn.PairwiseDistance(p=1), swap=True)
    assert gradcheck(loss, (a, p_, n))
    assert repr(nn.TripletMarginWithDistanceLoss()) == (
        "TripletMarginWithDistanceLoss(\n  (distance_function): PairwiseDistance()\n)")
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        F.multi_margin_loss(x, y, p=3)
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(x, torch.tensor([0, 5, 1]))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Float"):
        F.multi_margin_loss(x, y.float())
    with pytest.raises(RuntimeError, match=r"inconsistent target size: \[3\] for input of size: \[3, 5\]"):
        F.multilabel_margin_loss(x, y)
    with pytest.raises(ValueError, match="expected margin to be greater than 0, got 0 instead"):
        nn.TripletMarginWithDistanceLoss(margin=0)
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        nn.NLLLoss2d()


# module paths --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "name"), [
    ("minitorch.nn.modules.activation", "MultiheadAttention"), ("minitorch.nn.modules.loss", "CrossEntropyLoss"),
    ("minitorch.nn.modules.batchnorm", "BatchNorm2d"), ("minitorch.nn.modules.instancenorm", "InstanceNorm1d"),
    ("minitorch.nn.modules.pixelshuffle", "PixelShuffle"), ("minitorch.nn.modules.upsampling", "Upsample"),
    ("minitorch.nn.modules.padding", "ReflectionPad2d"), ("minitorch.nn.modules.fold", "Unfold"),
    ("minitorch.nn.modules.distance", "CosineSimilarity"), ("minitorch.nn.modules.lazy", "LazyModuleMixin"),
    ("minitorch.nn.modules.utils", "_pair"), ("minitorch.nn.modules.module", "Module"),
    ("minitorch.nn.parallel", "DataParallel"), ("minitorch.nn.utils.rnn", "pad_sequence"),
    ("minitorch.optim.optimizer", "Optimizer"), ("minitorch.optim.adam", "Adam"), ("minitorch.optim.sgd", "SGD"),
    ("minitorch.optim.lbfgs", "LBFGS"), ("minitorch.optim.lr_scheduler", "CyclicLR"),
])
def test_pytorch_module_paths(path, name):
    assert getattr(importlib.import_module(path), name) is not None


def test_module_utils_helpers():
    from minitorch.nn.modules.utils import _pair, _reverse_repeat_tuple, consume_prefix_in_state_dict_if_present

    assert _pair(3) == (3, 3) and _pair((1, 2)) == (1, 2)
    assert _reverse_repeat_tuple((1, 2), 2) == (2, 2, 1, 1)
    state = nn.DataParallel(nn.Linear(2, 2)).state_dict()
    consume_prefix_in_state_dict_if_present(state, "module.")
    assert list(state) == ["weight", "bias"]
    nn.Linear(2, 2).load_state_dict(state)


# CTC -----------------------------------------------------------------------------------------------------


def _brute_force_ctc(log_probs, labels, blank=0):
    """-log of the summed probability of every frame path that collapses to ``labels`` (tiny cases only)."""
    import itertools

    T, C = log_probs.shape
    total = 0.0
    for path in itertools.product(range(C), repeat=T):
        collapsed = [c for i, c in enumerate(path) if c != blank and (i == 0 or c != path[i - 1])]
        if collapsed == list(labels):
            total += np.exp(sum(log_probs[t, c] for t, c in enumerate(path)))
    return -np.log(total)


def test_ctc_loss_matches_brute_force():
    logits = RNG.standard_normal((4, 2, 3))
    log_probs = torch.tensor(logits).log_softmax(2)
    targets = torch.tensor([[1, 2], [1, 1]])
    losses = F.ctc_loss(log_probs, targets, [4, 4], [2, 2], reduction="none")
    lp = log_probs.numpy()
    np.testing.assert_allclose(losses.numpy(), [_brute_force_ctc(lp[:, 0], [1, 2]),
                                                _brute_force_ctc(lp[:, 1], [1, 1])], rtol=1e-10)
    # the same targets concatenated, and per-sample input lengths
    flat = F.ctc_loss(log_probs, torch.tensor([1, 2, 1]), [4, 3], [2, 1], reduction="none")
    np.testing.assert_allclose(flat.numpy(), [_brute_force_ctc(lp[:, 0], [1, 2]),
                                              _brute_force_ctc(lp[:3, 1], [1])], rtol=1e-10)
    mean = nn.CTCLoss()(log_probs, targets, [4, 4], [2, 2])
    assert mean.item() == pytest.approx((losses / 2).mean().item())


def test_ctc_loss_gradient_through_log_softmax():
    logits = rand(5, 2, 4)
    targets = torch.tensor([[1, 3, 3], [2, 0, 0]])
    assert gradcheck(lambda x: F.ctc_loss(x.log_softmax(2), targets, [5, 4], [3, 1]), (logits,))


def test_ctc_loss_infinite_and_errors():
    log_probs = torch.randn(2, 1, 3, dtype=torch.float64).log_softmax(2)
    targets = torch.tensor([[1, 1]])  # needs a blank between the repeats: 3 frames at least
    assert F.ctc_loss(log_probs, targets, [2], [2]).item() == float("inf")
    assert F.ctc_loss(log_probs, targets, [2], [2], zero_infinity=True).item() == 0.0
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        F.ctc_loss(log_probs, targets, [2], [2], blank=3)
    with pytest.raises(RuntimeError, match="input_lengths must be of size batch_size"):
        F.ctc_loss(log_probs, targets, [2, 2], [2])
    with pytest.raises(RuntimeError, match="Expected input_lengths to have value at most 2, but got value 3"):
        F.ctc_loss(log_probs, targets, [3], [2])
    assert repr(nn.CTCLoss()) == "CTCLoss()"


def test_rrelu_module():
    m = nn.RReLU(0.1, 0.3)
    assert repr(m) == "RReLU(lower=0.1, upper=0.3)" and repr(nn.RReLU(inplace=True)).endswith("inplace=True)")
    x = torch.tensor([-2.0, -1.0, 3.0])
    m.eval()
    np.testing.assert_allclose(m(x).numpy(), [-0.4, -0.2, 3.0], rtol=1e-6)
    m.train()
    slopes = (m(torch.full((1000,), -1.0)) * -1).numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and abs(slopes.mean() - 0.2) < 0.01


def test_data_parallel_multi_device_algorithm_on_stand_in_devices(monkeypatch):
    """The split / replicate / apply / gather path, with two "GPUs" that are the CPU (device moves are then
    no-ops and the CPU refusals are switched off): results and gradients equal the plain module's."""
    dp_module = importlib.import_module("minitorch.nn.parallel.data_parallel")  # the package's name is the function
    scatter_gather = importlib.import_module("minitorch.nn.parallel.scatter_gather")

    class TwoDevices:
        @staticmethod
        def is_available():
            return True

        @staticmethod
        def device_count():
            return 2

    cpu = torch.device("cpu")
    monkeypatch.setattr(dp_module, "cuda", TwoDevices)
    monkeypatch.setattr(dp_module, "cuda_device", lambda index: cpu)
    monkeypatch.setattr(scatter_gather, "cuda_device", lambda index: cpu)
    monkeypatch.setattr(scatter_gather, "refuse_cpu", lambda tensors, what: None)

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
    wrapped = nn.DataParallel(model)
    assert wrapped.device_ids == [0, 1] and wrapped.output_device == 0
    x = rand(5, 3)
    out = wrapped(x)
    expected = model(x)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-6)
    out.square().sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    expected.square().sum().backward()
    for got, want in zip(grads, [p.grad for p in model.parameters()]):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-7)
    chunks = nn.parallel.scatter((x, {"k": x}), [0, 1])
    assert [c[0].shape for c in chunks] == [(3, 3), (2, 3)] and chunks[1][1]["k"].shape == (2, 3)
    functional = nn.parallel.data_parallel(model, x, device_ids=[0, 1])
    np.testing.assert_allclose(functional.detach().numpy(), expected.detach().numpy(), rtol=1e-6)
