"""Complex dtypes: creation, promotion, the views between complex and real memory, arithmetic, and autograd by
PyTorch's convention (for a real loss L of z = x + iy, z.grad = dL/dx + i dL/dy). Expected values are worked out
by hand or with Python's complex numbers."""

import cmath
import io

import pytest

import minitorch as torch
from minitorch.autograd import gradcheck, gradgradcheck

Z = [1 + 2j, 3 - 1j, -0.5 + 0.25j]
W = [0.5 - 1j, 2 + 1j, 1.5 + 0j]


def _z(values=Z, **kwargs):
    return torch.tensor(values, dtype=torch.complex128, **kwargs)


def test_dtypes_and_creation():
    assert torch.cfloat is torch.complex64 and torch.cdouble is torch.complex128
    assert torch.complex64.is_complex and not torch.complex64.is_floating_point
    assert torch.complex64.itemsize == 8 and torch.complex128.to_real() is torch.float64
    assert torch.tensor([1 + 2j, 3]).dtype is torch.complex64
    assert torch.tensor(1j).tolist() == 1j and torch.tensor(2j).item() == 2j
    assert torch.full((2,), 1 + 1j).dtype is torch.complex64
    assert torch.zeros(2, dtype=torch.cfloat).tolist() == [0j, 0j]
    assert torch.ones(2).to(torch.complex128).tolist() == [1 + 0j, 1 + 0j]
    assert torch.complex(torch.tensor([1.0, 2.0]), torch.tensor([3.0, -4.0])).tolist() == [1 + 3j, 2 - 4j]
    p = torch.polar(torch.tensor([2.0], dtype=torch.float64), torch.tensor([0.5], dtype=torch.float64))
    assert p.item() == pytest.approx(cmath.rect(2.0, 0.5))
    default = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        assert torch.tensor([1j]).dtype is torch.complex128
    finally:
        torch.set_default_dtype(default)
    x = torch.ones(2, dtype=torch.complex64)
    assert x.is_complex() and torch.is_complex(x) and not x.is_floating_point() and x.element_size() == 8


def test_promotion():
    assert torch.promote_types(torch.complex64, torch.float64) is torch.complex128
    assert torch.promote_types(torch.int64, torch.complex64) is torch.complex64
    assert (torch.ones(2) + 1j).dtype is torch.complex64
    assert (torch.ones(2, dtype=torch.float64) + 1j).dtype is torch.complex128
    assert (torch.ones(2, dtype=torch.int64) * 1j).dtype is torch.complex64
    assert (torch.ones(2, dtype=torch.complex64) + torch.tensor(1.0, dtype=torch.float64)).dtype is torch.complex64
    assert (torch.ones(2, dtype=torch.complex64) + torch.ones(2, dtype=torch.float64)).dtype is torch.complex128
    assert (torch.ones(2, dtype=torch.int64) / torch.tensor(1j)).dtype is torch.complex64


def test_arithmetic_values():
    a, b = _z(), _z(W)
    for op in ("__add__", "__sub__", "__mul__", "__truediv__", "__pow__"):
        expected = [getattr(u, op)(v) for u, v in zip(Z, W)]
        assert getattr(a, op)(b).tolist() == pytest.approx(expected), op
    assert (a * 2j + 1).tolist() == pytest.approx([u * 2j + 1 for u in Z])
    assert (1 / a).tolist() == pytest.approx([1 / u for u in Z])
    assert a.exp().tolist() == pytest.approx([cmath.exp(u) for u in Z])
    assert a.sqrt().tolist() == pytest.approx([cmath.sqrt(u) for u in Z])
    assert a.abs().tolist() == pytest.approx([abs(u) for u in Z])
    assert a.angle().tolist() == pytest.approx([cmath.phase(u) for u in Z])
    assert torch.tensor([-2.0, 0.0, 3.0]).angle().tolist() == pytest.approx([cmath.pi, 0.0, 0.0])
    assert a.sgn().tolist() == pytest.approx([u / abs(u) for u in Z])
    assert a.conj().tolist() == [u.conjugate() for u in Z]
    assert (a @ b).item() == pytest.approx(sum(u * v for u, v in zip(Z, W)))
    assert torch.vdot(a, b).item() == pytest.approx(sum(u.conjugate() * v for u, v in zip(Z, W)))
    assert a.sum().item() == pytest.approx(sum(Z)) and a.mean().item() == pytest.approx(sum(Z) / 3)
    assert a.norm().item() == pytest.approx(sum(abs(u) ** 2 for u in Z) ** 0.5)
    mean_z = sum(Z) / 3
    assert a.var().item() == pytest.approx(sum(abs(u - mean_z) ** 2 for u in Z) / 2)
    m = torch.tensor([[1 + 1j, 2], [0, 1j]], dtype=torch.complex128)
    assert m.mH.tolist() == [[1 - 1j, 0], [2, -1j]] and m.adjoint().tolist() == m.mH.tolist()


def test_real_and_imag_are_views():
    z = torch.tensor([1 + 2j, 3 - 1j])
    r = torch.view_as_real(z)
    assert r.dtype is torch.float32 and r.shape == (2, 2) and r.stride() == (2, 1)
    assert r.data_ptr() == z.data_ptr()
    version = z._version
    r[0, 1] = 5.0
    assert z.tolist() == [1 + 5j, 3 - 1j] and z._version == version + 1
    z.imag[1] = 7.0
    z.real.mul_(2)
    assert z.tolist() == [2 + 5j, 6 + 7j]
    assert torch.view_as_real(z)[:, 1].tolist() == [5.0, 7.0]
    back = torch.view_as_complex(r)
    assert back._storage is z._storage  # reinterpreting back gives the original storage
    back[0] = 0j
    assert z[0].item() == 0j
    real = torch.tensor([1.0, 2.0])
    assert real.real is real
    with pytest.raises(RuntimeError, match="imag is not implemented"):
        real.imag
    noncontiguous = torch.view_as_real(torch.tensor([[1 + 2j, 3j], [4, 5 - 1j]]).t())
    assert noncontiguous.stride() == (2, 4, 1)
    assert noncontiguous[0].tolist() == [[1.0, 2.0], [4.0, 0.0]]


def test_views_of_a_graph_tensor():
    z = _z([1 + 2j, 3 - 1j], requires_grad=True)
    y = z * 2
    r = torch.view_as_real(y)
    y.mul_(1j)  # the view's history is rebuilt from y's (through view_as_real)
    assert r.tolist() == [[-4.0, 2.0], [2.0, 6.0]]
    (r ** 2).sum().backward()
    assert z.grad.tolist() == pytest.approx([8 + 16j, 24 - 8j])  # |2iz|^2 = 4|z|^2: gradient 8z
    with pytest.raises(RuntimeError, match="does not record in-place writes through view_as_real"):
        torch.view_as_real(z * 2).mul_(3)


def test_view_as_complex_checks():
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        torch.view_as_complex(torch.ones(3, 3))
    with pytest.raises(RuntimeError, match="last dimension with stride 1"):
        torch.view_as_complex(torch.ones(2, 3).t()[:2])
    with pytest.raises(RuntimeError, match="storage_offset divisible by 2"):
        torch.view_as_complex(torch.ones(5)[1:].view(2, 2))
    with pytest.raises(RuntimeError, match="only supported for half, float and double"):
        torch.view_as_complex(torch.ones(3, 2, dtype=torch.int64))
    with pytest.raises(RuntimeError, match="only supported for complex tensors"):
        torch.view_as_real(torch.ones(3))


def test_gradient_convention():
    """L = |z|^2 = x^2 + y^2: dL/dx + i dL/dy = 2x + 2iy = 2z."""
    z = _z(requires_grad=True)
    (z.abs() ** 2).sum().backward()
    assert z.grad.tolist() == pytest.approx([2 * u for u in Z])
    z.grad = None
    (z * z.conj()).real.sum().backward()
    assert z.grad.tolist() == pytest.approx([2 * u for u in Z])
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)  # real input, complex path: real gradient
    (x * (1 + 2j)).imag.sum().backward()
    assert x.grad.dtype is torch.float64 and x.grad.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("name, fn, n_inputs", [
    ("mul", lambda a, b: a * b, 2), ("div", lambda a, b: a / b, 2), ("pow", lambda a, b: a ** b, 2),
    ("matmul", lambda a, b: a[:, None] @ b[None, :], 2), ("vdot", torch.vdot, 2), ("add_alpha", lambda a, b: a.add(b, alpha=2j), 2),
    ("exp", torch.exp, 1), ("log", torch.log, 1), ("sqrt", torch.sqrt, 1), ("tanh", torch.tanh, 1),
    ("sigmoid", torch.sigmoid, 1), ("reciprocal", torch.reciprocal, 1), ("abs", torch.abs, 1), ("angle", torch.angle, 1),
    ("sgn", torch.sgn, 1), ("real", lambda a: a.real, 1), ("imag", lambda a: a.imag, 1), ("conj", torch.conj, 1),
    ("view_as_real", torch.view_as_real, 1), ("sum", torch.sum, 1), ("mean", torch.mean, 1), ("prod", torch.prod, 1),
    ("cumprod", lambda a: a.cumprod(0), 1), ("norm", torch.norm, 1), ("var", torch.var, 1), ("std", torch.std, 1), ("scalar", lambda a: a * (2 - 1j) + 1j, 1), ("rdiv", lambda a: 1j / a, 1),
])
def test_gradcheck(name, fn, n_inputs):
    inputs = (_z(requires_grad=True), _z(W, requires_grad=True))[:n_inputs]
    assert gradcheck(fn, inputs)


@pytest.mark.parametrize("shape_maker", [
    lambda: _z([1 + 1j]).reshape(()),  # 0-dim
    lambda: torch.zeros(0, dtype=torch.complex128),  # empty
    lambda: torch.tensor([[1 + 2j, 3j, 2], [4 - 1j, 5, -1j]], dtype=torch.complex128).t(),  # non-contiguous
])
def test_gradcheck_odd_shapes(shape_maker):
    z = shape_maker().requires_grad_()
    assert gradcheck(lambda a: (a * a.conj() + a.exp()).sqrt(), (z,))
    assert gradcheck(lambda a: torch.view_as_real(a) * 2, (z,))
    assert gradcheck(lambda a: a.abs(), (z,))


@pytest.mark.parametrize("fn", [lambda u, v: u * v, lambda u, v: (u * v).exp() / v, lambda u, v: (u @ v).abs(),
                                lambda u, v: torch.fft.fft(u * u) + v.conj()])
def test_gradgradcheck(fn):
    assert gradgradcheck(fn, (_z(requires_grad=True), _z(W, requires_grad=True)))


def test_make_tensor_complex():
    z = torch.testing.make_tensor(2, 3, dtype=torch.complex64, device="cpu", low=-1, high=1, requires_grad=True,
                                  noncontiguous=True)
    assert z.dtype is torch.complex64 and z.shape == (2, 3) and z.requires_grad and not z.is_contiguous()
    parts = torch.view_as_real(z.detach().contiguous())
    assert bool((parts >= -1).all()) and bool((parts < 1).all())


def test_real_to_complex_gradients():
    x = torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64, requires_grad=True)
    assert gradcheck(lambda r: torch.complex(r, r * r), (x,))
    assert gradcheck(lambda r: torch.polar(r.abs(), r), (x,))
    assert gradcheck(lambda r: torch.view_as_complex(torch.stack([r, 2 * r], -1)), (x,))
    assert gradcheck(lambda r: r.to(torch.complex128) * 1j, (x,))


def test_gradcheck_catches_a_missing_conjugate():
    class Mul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return grad * b, grad * a

    assert not gradcheck(Mul.apply, (_z(requires_grad=True), _z(W, requires_grad=True)), raise_exception=False)


def test_errors():
    z = torch.tensor([1 + 2j, 3 - 1j])
    with pytest.raises(NotImplementedError, match="lt_cpu"):
        z < z
    with pytest.raises(NotImplementedError, match="max_all"):
        z.max()
    with pytest.raises(RuntimeError, match="Sort does not support complex"):
        z.sort()
    with pytest.raises(NotImplementedError, match="clamp is not supported for complex"):
        z.clamp(0, 1)
    with pytest.raises(NotImplementedError, match="torch.sgn instead"):
        z.sign()
    with pytest.raises(RuntimeError, match="implicitly created only for real scalar outputs"):
        z.sum().requires_grad_().backward()
    with pytest.raises(RuntimeError, match="without overflow"):
        float(torch.tensor(1 + 1j))
    assert float(torch.tensor(2 + 0j)) == 2.0
    assert (z == z).tolist() == [True, True]
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        assert z.float().tolist() == [1.0, 3.0]


def test_printing():
    assert repr(torch.tensor([1 + 2j, 3 - 1j])) == "tensor([1.+2.j, 3.-1.j])"
    assert repr(torch.tensor([1.5 + 2j, 3 - 1.25j])) == "tensor([1.5000+2.0000j, 3.0000-1.2500j])"
    assert repr(torch.tensor([1j], dtype=torch.complex128)) == "tensor([0.+1.j], dtype=torch.complex128)"


def test_save_and_load():
    z = torch.tensor([[1 + 2j, -3.5j], [0.25, 7 - 7j]], dtype=torch.complex128)
    buffer = io.BytesIO()
    torch.save({"z": z, "real": z.real}, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer)
    assert loaded["z"].dtype is torch.complex128 and loaded["z"].tolist() == z.tolist()
    assert loaded["real"].tolist() == [[1.0, 0.0], [0.25, 7.0]]
