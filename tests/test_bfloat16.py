"""bfloat16: PyTorch's brain-float dtype (8 exponent bits, 8 significand bits), stored by ml_dtypes' numpy dtype.

Values here are worked out by hand: bfloat16 keeps 8 significant bits, so 1/3 is 0.333984375 and 1 + 2^-9 is 1."""

import io
import math

import pytest

import minitorch as torch
import minitorch.nn.functional as F


def test_dtype_attributes():
    bf = torch.bfloat16
    assert repr(bf) == "torch.bfloat16"
    assert bf.is_floating_point and not bf.is_complex and bf.is_signed and bf.itemsize == 2
    assert torch.ones(3, dtype=bf).element_size() == 2
    assert torch.ones(3, dtype=bf).type() == "torch.BFloat16Tensor"
    assert torch.ones(3).type("torch.BFloat16Tensor").dtype is bf


def test_promotion():
    bf = torch.bfloat16
    assert torch.promote_types(bf, torch.float16) is torch.float32  # neither holds the other
    assert torch.promote_types(torch.float16, bf) is torch.float32
    assert torch.promote_types(bf, torch.float32) is torch.float32
    assert torch.promote_types(bf, torch.int64) is bf
    assert torch.promote_types(torch.bool, bf) is bf
    assert torch.promote_types(bf, torch.complex64) is torch.complex64
    x = torch.ones(2, dtype=bf)
    assert (x + 1).dtype is bf and (x * 2.5).dtype is bf and (x / 3).dtype is bf
    assert (x + torch.tensor(2.0)).dtype is bf  # a 0-dim float32 is weak
    assert (x + torch.ones(2)).dtype is torch.float32
    assert (x + torch.ones(2, dtype=torch.float16)).dtype is torch.float32
    assert (torch.arange(2) * torch.tensor(1.5, dtype=bf)).dtype is bf
    assert (torch.arange(2) / torch.ones(2, dtype=bf)).dtype is bf


def test_conversion_rounds_to_nearest_even():
    x = torch.tensor([1 / 3, 1 + 2**-9, 1 + 3 * 2**-9, 3e38, -0.0], dtype=torch.float64).bfloat16()
    assert x.tolist()[:3] == [0.333984375, 1.0, 1.0078125]
    assert x.tolist()[3] == pytest.approx(3.0e38, rel=2**-8)
    assert math.copysign(1.0, x.tolist()[4]) == -1.0
    assert torch.tensor([1 / 3], dtype=torch.bfloat16).item() == 0.333984375
    assert torch.full((2,), 1 / 3, dtype=torch.bfloat16).tolist() == [0.333984375] * 2
    assert torch.tensor([1.0]).to(torch.bfloat16).dtype is torch.bfloat16


def test_arithmetic_rounds_each_result():
    one = torch.ones(1, dtype=torch.bfloat16)
    assert (one + 2**-9).item() == 1.0  # the number becomes bfloat16 first (2^-9), the sum rounds back to 1
    assert (one * 3).item() == 3.0
    third = one / 3
    assert third.dtype is torch.bfloat16 and third.item() == 0.333984375
    assert (torch.tensor([255.0], dtype=torch.bfloat16) + 1).item() == 256.0


def test_sums_accumulate_in_float32():
    x = torch.full((1000,), 0.1, dtype=torch.bfloat16)  # 0.10009765625 each
    total = x.sum()
    assert total.dtype is torch.bfloat16
    # added in bfloat16 the sum would stop growing at 32 (0.1 is below half a unit there); in float32 it is
    # 100.09765625, which rounds to 100.0 in bfloat16
    assert total.item() == 100.0
    assert x.mean().item() == pytest.approx(0.10009765625)
    assert x.sum(dtype=torch.float32).item() == pytest.approx(100.09765625)
    assert (x.reshape(10, 100) @ torch.ones(100, 1, dtype=torch.bfloat16)).flatten().tolist() == [10.0] * 10


def test_unary_ops_compute_in_float32_and_round_once():
    x = torch.tensor([0.5, -1.25, 3.0], dtype=torch.bfloat16)
    for op in ("exp", "sigmoid", "tanh", "log1p", "sqrt"):
        y = getattr(x.abs(), op)()
        expected = getattr(x.abs().float(), op)().bfloat16()
        assert y.dtype is torch.bfloat16 and y.tolist() == expected.tolist(), op
    assert F.gelu(x).tolist() == F.gelu(x.float()).bfloat16().tolist()


def test_autograd_in_bfloat16():
    w = torch.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=torch.bfloat16, requires_grad=True)
    x = torch.tensor([1.0, 3.0], dtype=torch.bfloat16, requires_grad=True)
    y = ((w @ x) * 0.5 + 1.5).tanh().sum()
    y.backward()
    assert y.dtype is torch.bfloat16
    assert w.grad.dtype is torch.bfloat16 and x.grad.dtype is torch.bfloat16
    w32, x32 = w.detach().float().requires_grad_(), x.detach().float().requires_grad_()
    ((w32 @ x32) * 0.5 + 1.5).tanh().sum().backward()
    assert torch.allclose(w.grad.float(), w32.grad, rtol=2**-6, atol=1e-2)
    assert torch.allclose(x.grad.float(), x32.grad, rtol=2**-6, atol=1e-2)


def test_modules_and_optimizers():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.LayerNorm(8),
                                torch.nn.Linear(8, 3)).bfloat16()
    assert all(p.dtype is torch.bfloat16 for p in model.parameters())
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    data = torch.randn(16, 4).bfloat16()
    target = torch.randint(0, 3, (16,))
    losses = []
    for _ in range(5):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data), target)
        assert loss.dtype is torch.bfloat16
        loss.backward()
        assert all(p.grad.dtype is torch.bfloat16 for p in model.parameters())
        optimizer.step()
        losses.append(loss.item())
    assert all(p.dtype is torch.bfloat16 for p in model.parameters())
    assert losses[-1] < losses[0]


def test_conv_and_pooling_keep_bfloat16():
    conv = torch.nn.Conv2d(2, 3, 3, padding=1).bfloat16()
    y = F.max_pool2d(conv(torch.randn(1, 2, 6, 6).bfloat16()), 2)
    assert y.dtype is torch.bfloat16
    y.float().sum().backward()
    assert conv.weight.grad.dtype is torch.bfloat16


def test_printing():
    x = torch.tensor([1.0, 2.5, 3.14159], dtype=torch.bfloat16)
    assert repr(x) == "tensor([1.0000, 2.5000, 3.1406], dtype=torch.bfloat16)"


def test_save_and_load():
    x = torch.tensor([[1.0, -2.5], [1 / 3, 1e30]], dtype=torch.bfloat16)
    buffer = io.BytesIO()
    torch.save({"x": x, "view": x[:, 1]}, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer)
    assert loaded["x"].dtype is torch.bfloat16 and loaded["x"].tolist() == x.tolist()
    assert loaded["view"].tolist() == x[:, 1].tolist()


def test_meta_device():
    x = torch.empty(2, 3, dtype=torch.bfloat16, device="meta")
    assert (x * 0.5).dtype is torch.bfloat16 and x.exp().shape == (2, 3)
