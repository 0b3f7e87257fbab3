"""Differential tests of the dtypes programs name: bfloat16 (values, result dtypes, gradients) and the complex
dtypes (creation, promotion, arithmetic, views, autograd, torch.fft). Each case runs in PyTorch and in minitorch
on the same data."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minitorch  # noqa: E402

RNG = np.random.default_rng(0)
DATA = {
    "x": RNG.standard_normal((4, 6)).astype(np.float32),
    "y": RNG.standard_normal((4, 6)).astype(np.float32),
    "w": RNG.standard_normal((5, 6)).astype(np.float32),
    "b": RNG.standard_normal(5).astype(np.float32),
    "p": RNG.uniform(0.05, 0.95, (4, 6)).astype(np.float32),
}


def _bf16_inputs(t):
    return {k: t.tensor(v).to(t.bfloat16).requires_grad_() for k, v in DATA.items()}


def _run(t, source, inputs):
    env = dict(inputs, t=t, F=t.nn.functional)
    out = eval(source, env)
    grads = {}
    if out.requires_grad:
        out.float().sum().backward() if out.dim() else out.float().backward()
        grads = {k: (v.grad.dtype, v.grad.float().numpy()) for k, v in inputs.items() if v.grad is not None}
    return str(out.dtype).rsplit(".", 1)[-1], out.detach().float().numpy(), grads


# (source, exact): exact cases are one PyTorch kernel whose bfloat16 rounding minitorch reproduces bit for bit;
# the others (composite in minitorch or accumulated in another order) agree to a bfloat16 rounding or two.
BF16_CASES = [
    ("x + y", True), ("x - y", True), ("x * y", True), ("x / y", True), ("x + 1.3", True), ("x - 0.3", True),
    ("0.3 - x", True), ("x * 0.3", True), ("x / 0.3", True), ("x * 3", True), ("x + t.ones(6, dtype=t.int64)", True),
    ("x.exp()", True), ("x.tanh()", True), ("x.sigmoid()", True), ("x.abs().sqrt()", True), ("x.abs() ** 0.3", True),
    ("-x", True), ("x.abs()", True), ("t.maximum(x, y)", True), ("x.clamp(-0.5, 0.5)", True), ("x.relu()", True),
    ("x.sum()", True), ("x.sum(0)", True), ("x.sum(1)", True), ("x.mean()", True), ("x.mean(1)", True),
    ("x.amax(1)", True), ("x.max()", True), ("x.cumsum(1)", True), ("x.prod(1)", True),
    ("x @ y.T", True), ("F.linear(x, w, b)", True), ("t.matmul(x[0], w.T)", True),
    ("F.gelu(x)", True), ("F.gelu(x, approximate='tanh')", True), ("F.silu(x)", True), ("F.leaky_relu(x, 0.1)", True),
    ("F.elu(x)", True), ("F.softplus(x)", True), ("F.hardtanh(x)", True),
    ("F.softmax(x, -1)", True), ("F.log_softmax(x, -1)", False), ("F.layer_norm(x, (6,))", False),
    ("F.cross_entropy(x, t.tensor([0, 1, 2, 0]))", False), ("F.mse_loss(x, y)", False),
    ("F.binary_cross_entropy(p, p.detach() * 0 + 0.5)", False), ("x.var()", False), ("x.std(1)", False),
    ("x.norm()", False), ("t.where(x > 0, x, y)", True), ("x.masked_fill(x > 0, 0.5)", True),
    ("t.cat([x, y]).sort(0).values", True), ("x.topk(2).values", True), ("x.float()", True), ("x.double()", True),
    ("x.half()", True), ("x + x.half()", True), ("x + x.float()", True), ("(x > 0.3).float()", True),
    ("x.to(t.int32)", True), ("x.to(t.float32).bfloat16()", True), ("t.lerp(x, y, 0.3)", False),
    ("x.add(y, alpha=0.3)", False), ("x.sub(y, alpha=2)", True), ("x * 1 + x.detach().clone().mul_(0.3)", True),
    ("x * 1 + x.detach().clone().add_(0.3)", True), ("x * 1 + x.detach().clone().div_(0.7)", True),
    ("F.dropout(x, 0.0)", True), ("F.embedding(t.tensor([0, 3, 1]), x)", True), ("x.abs().log()", True),
    ("F.max_pool1d(x[None], 2)", True), ("F.avg_pool1d(x[None], 2)", False),
    ("F.conv1d(x[:, None], w[:, None, :3])", False), ("t.einsum('ij,kj->ik', x, w)", True),
    ("x ** 3", True), ("x.abs() ** -2", True), ("x ** 2", True), ("x.cumprod(1)", True), ("F.layer_norm(x, (6,), w[0], b[:1] * 0 + w[1])", False),
    ("F.softmax(x, 0)", False), ("t.softmax(x.t(), -1)", True),
]


@pytest.mark.parametrize("source,exact", BF16_CASES, ids=[c[0] for c in BF16_CASES])
def test_bfloat16_against_pytorch(source, exact):
    expected = _run(torch, source, _bf16_inputs(torch))
    actual = _run(minitorch, source, _bf16_inputs(minitorch))
    assert actual[0] == expected[0], f"{source}: dtype {actual[0]} != {expected[0]}"
    rtol, atol = (0, 0) if exact else (2**-6, 1e-2)
    np.testing.assert_allclose(actual[1], expected[1], rtol=rtol, atol=atol, err_msg=source)
    assert actual[2].keys() == expected[2].keys(), source
    for name, (dtype, grad) in expected[2].items():
        assert str(actual[2][name][0]) == str(dtype), f"{source}: grad of {name} is {actual[2][name][0]}"
        np.testing.assert_allclose(actual[2][name][1], grad, rtol=2**-6, atol=1e-2, err_msg=f"{source}: d{name}")


def test_bfloat16_training_matches_pytorch():
    """A few AdamW steps of a bfloat16 MLP from the same weights: parameters and losses stay close."""
    results = []
    for t in (torch, minitorch):
        model = t.nn.Sequential(t.nn.Linear(6, 5), t.nn.GELU(), t.nn.Linear(5, 3))
        with t.no_grad():
            for p, value in zip(model.parameters(), (DATA["w"], DATA["b"], DATA["w"][:3, :5], DATA["b"][:3])):
                p.copy_(t.tensor(value))
        model = model.bfloat16()
        optimizer = t.optim.AdamW(model.parameters(), lr=1e-2)
        data, target = t.tensor(DATA["x"]).bfloat16(), t.tensor([0, 1, 2, 0])
        losses = []
        for _ in range(4):
            optimizer.zero_grad()
            loss = t.nn.functional.cross_entropy(model(data), target)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        assert all(str(p.dtype).endswith("bfloat16") for p in model.parameters())
        results.append((losses, [p.detach().float().numpy() for p in model.parameters()]))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=2e-2)
    for ours, theirs in zip(results[1][1], results[0][1]):
        np.testing.assert_allclose(ours, theirs, rtol=2e-2, atol=2e-2)


def test_bfloat16_rounding_matches_pytorch_on_many_values():
    """Conversion to bfloat16 rounds to nearest even, as PyTorch's; and prints the same."""
    values = np.concatenate([RNG.standard_normal(10_000) * 10.0 ** RNG.integers(-40, 38, 10_000),
                             [0.0, -0.0, np.inf, -np.inf, np.nan, 3.3895e38, 1e-45]])
    ours = minitorch.tensor(values).bfloat16()
    theirs = torch.tensor(values).bfloat16()
    np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())
    small = torch.tensor([1.0, 2.5, 3.14159, -0.001]).bfloat16()
    assert repr(minitorch.tensor([1.0, 2.5, 3.14159, -0.001]).bfloat16()) == repr(small)


@pytest.mark.parametrize("a", ["bfloat16", "float16", "float32", "float64", "int64", "int8", "uint8", "bool",
                               "complex64", "complex128"])
@pytest.mark.parametrize("b", ["bfloat16", "float16", "float32", "float64", "int64", "bool", "complex64",
                               "complex128"])
def test_promote_types_against_pytorch(a, b):
    expected = torch.promote_types(getattr(torch, a), getattr(torch, b))
    assert str(minitorch.promote_types(getattr(minitorch, a), getattr(minitorch, b))) == str(expected)


@pytest.mark.parametrize("source", [
    "t.ones(3, dtype=t.bfloat16) + t.tensor(2.5)", "t.ones(3, dtype=t.bfloat16) + t.tensor([2.5] * 3)",
    "t.ones(3, dtype=t.bfloat16) + 1", "t.ones(3, dtype=t.bfloat16) + True", "t.ones(3, dtype=t.int64) * t.tensor(2.5, dtype=t.bfloat16)",
    "t.ones(3, dtype=t.bfloat16) / t.ones(3, dtype=t.int64)", "t.tensor(2.5, dtype=t.bfloat16) + t.ones(3, dtype=t.float16)",
    "t.ones(3) + 1j", "t.ones(3, dtype=t.float64) + 1j", "t.ones(3, dtype=t.bfloat16) + 1j",
    "t.ones(3, dtype=t.int64) + 1j", "t.ones(3, dtype=t.complex64) + t.ones(3, dtype=t.float64)",
    "t.ones(3, dtype=t.complex64) + t.tensor(1.0, dtype=t.float64)", "t.ones(3) + t.tensor(1j, dtype=t.complex128)",
    "t.ones(3, dtype=t.complex128) * 2.5", "t.tensor([1 + 2j, 3])", "t.tensor(1j)", "t.tensor([1, 2.5j], dtype=t.complex128)",
    "t.arange(3, dtype=t.bfloat16)", "t.zeros(2, dtype=t.complex64)", "t.full((2,), 1.5, dtype=t.bfloat16)",
    "t.full((2,), 1 + 1j)", "t.ones(2, dtype=t.bfloat16).sum(dtype=t.float32)", "t.ones(2, dtype=t.bfloat16).mean()",
])
def test_result_dtypes_against_pytorch(source):
    expected = eval(source, {"t": torch})
    actual = eval(source, {"t": minitorch})
    assert str(actual.dtype) == str(expected.dtype), source
    np.testing.assert_allclose(np.asarray(actual.tolist()), np.asarray(expected.tolist()), rtol=1e-6)


def test_bfloat16_dtype_properties_against_pytorch():
    for name in ("bfloat16", "complex64", "complex128"):
        ours, theirs = getattr(minitorch, name), getattr(torch, name)
        assert (ours.is_floating_point, ours.is_complex, ours.itemsize) == (
            theirs.is_floating_point, theirs.is_complex, theirs.itemsize)
        assert repr(ours) == repr(theirs)
        x, y = minitorch.ones(2, dtype=ours), torch.ones(2, dtype=theirs)
        assert (x.is_floating_point(), x.is_complex(), x.element_size(), x.type()) == (
            y.is_floating_point(), y.is_complex(), y.element_size(), y.type())
    assert minitorch.cfloat is minitorch.complex64 and minitorch.cdouble is minitorch.complex128


# complex ---------------------------------------------------------------------------------------------

CA = np.array([1 + 2j, 3 - 1j, -0.5 + 0.25j])
CB = np.array([0.5 - 1j, 2 + 1j, 1.5 + 0j])
XR = np.array([0.3, -1.2, 2.0])
M4 = RNG.standard_normal((4, 6))
C4 = RNG.standard_normal((4, 6)) + 1j * RNG.standard_normal((4, 6))


def _complex_run(t, source):
    """Values and gradients of ``source`` in a, b (complex128), x (float64), m (4x6 float64), c (4x6 complex128); a
    complex result is reduced by a real linear functional with complex weights, so every part of it is checked."""
    leaves = {"a": t.tensor(CA, dtype=t.complex128), "b": t.tensor(CB, dtype=t.complex128),
              "x": t.tensor(XR, dtype=t.float64), "m": t.tensor(M4, dtype=t.float64),
              "c": t.tensor(C4, dtype=t.complex128)}
    for leaf in leaves.values():
        leaf.requires_grad_()
    out = eval(source, dict(leaves, t=t, F=t.nn.functional))
    n = out.numel()
    weights = np.cos(np.arange(n)) + (1j * np.sin(np.arange(n)) if out.is_complex() else 0)
    w = t.tensor(weights.reshape(tuple(out.shape)))
    if out.requires_grad:
        ((out * w).real.sum() if out.is_complex() else (out * w).sum()).backward()
    grads = {k: np.asarray(v.grad.tolist()) for k, v in leaves.items() if v.grad is not None}
    return str(out.dtype).rsplit(".", 1)[-1], np.asarray(out.detach().tolist()), grads


COMPLEX_CASES = [
    "a * b", "a / b", "a + b * 2", "a - b", "a * x", "x / a", "x * 1j", "a * (2 - 1j) + 1j", "1j / a", "1j - a", "-a",
    "a.exp()", "a.log()", "a.sqrt()", "a.sin()", "a.cos()", "a.tanh()", "a.sigmoid()", "a.reciprocal()", "a.square()",
    "a ** 2", "a ** b", "2 ** a", "a.abs()", "a.angle()", "x.angle()", "a.sgn()", "a.real * 3", "a.imag * 3",
    "a.conj() * b", "a.conj_physical()", "t.view_as_real(a) ** 2", "t.view_as_complex(t.stack([x, x * 2], -1)) * b",
    "t.complex(x, x * x) * b", "t.polar(x.abs(), x) * b", "a[:, None] @ b[None, :]", "c @ c.mT", "c.mH @ c",
    "t.matmul(c, m.T.to(t.complex128))", "t.dot(a, b)", "t.vdot(a, b)", "(a * b).sum()", "(a * b).mean()", "c.sum(0)",
    "c.mean(1)", "x.to(t.complex128) * b", "(a * b).real.to(t.float32)", "t.where(x > 0, a, b)", "t.cat([a, b]) * 2",
    "a[:, None].expand(3, 2) * 1j", "a.cumsum(0)", "a.prod()", "c.prod(1)", "c.t() * 2", "c[:, ::2].contiguous()",
    "c.reshape(6, 4).flip(0)", "(a * b).abs().sum()", "t.stack([a, b]).sum(0)", "c.adjoint()", "c.H",
    "a.abs().pow(2).sum().sqrt()", "t.einsum('ij,kj->ik', c, c.conj())", "t.einsum('i,i->', a, b)",
    "F.linear(c, c[:2] * 1j, a[:2])", "t.outer(a, b)", "t.kron(a, b)", "t.tensordot(c, c, dims=([1], [1]))", "c.norm()", "c.norm(dim=1)", "t.linalg.vector_norm(a, ord=1)", "c.var()",
    "c.std(1)", "c.var(0, correction=0)", "t.var_mean(c, 1)[0]",
    "t.fft.fft(a)", "t.fft.ifft(c, norm='ortho')", "t.fft.fft(x, n=5, norm='forward')", "t.fft.rfft(m)",
    "t.fft.rfft(m, n=5, norm='ortho')", "t.fft.irfft(c)", "t.fft.irfft(c, n=7, norm='forward')", "t.fft.irfft(c, n=9)",
    "t.fft.fft2(c)", "t.fft.ifft2(m, norm='forward')", "t.fft.fftn(c, s=(3, 8))", "t.fft.rfft2(m, norm='ortho')",
    "t.fft.irfft2(c)", "t.fft.rfftn(m, s=(5, 4))", "t.fft.irfftn(c, s=(3, 5), norm='forward')", "t.fft.hfft(c)",
    "t.fft.hfft(c, n=5, norm='ortho')", "t.fft.ihfft(m)", "t.fft.ifftn(c, dim=(0,))", "t.fft.fftshift(c)",
    "t.fft.ifftshift(m, dim=1)", "t.fft.fftshift(t.fft.fft(m))", "t.fft.fftfreq(7, d=0.3)", "t.fft.rfftfreq(8)",
    "t.fft.fft(m.float()).abs()", "t.fft.rfft(m[:, ::2])", "t.fft.irfft(t.fft.rfft(m), n=6)", "t.fft.fft(x.to(t.int64))",
]


@pytest.mark.parametrize("source", COMPLEX_CASES)
def test_complex_against_pytorch(source):
    expected = _complex_run(torch, source)
    actual = _complex_run(minitorch, source)
    assert actual[0] == expected[0], f"{source}: dtype {actual[0]} != {expected[0]}"
    single = any(name in expected[0] or name in source for name in ("float32", "complex64", "float()"))
    tolerance = 1e-5 if single else 1e-9
    np.testing.assert_allclose(actual[1], expected[1], rtol=tolerance, atol=tolerance, err_msg=source)
    assert actual[2].keys() == expected[2].keys(), source
    for name, grad in expected[2].items():
        np.testing.assert_allclose(actual[2][name], grad, rtol=tolerance, atol=tolerance, err_msg=f"{source}: d{name}")


COMPLEX_ERRORS = [
    "z.max()", "z.max(0)", "z.min()", "z.amax()", "z.amin(0)", "z.argmax()", "z.argmin(0)", "z.aminmax()", "z.sort()",
    "z.argsort()", "z.topk(1)", "z.clamp(0, 1)", "t.minimum(z, z)", "z.max(z)", "z.ceil()", "z.trunc()", "z.floor()",
    "z.round()", "z % 2", "t.fmod(z, 2)", "z // 2", "z.relu()", "float(t.tensor(1 + 1j))", "z.le(z)", "z >= 1", "z < z",
    "z.sign()", "t.view_as_real(t.ones(3))", "t.view_as_complex(t.ones(3, 3))",
    "t.view_as_complex(t.ones(3, 2, dtype=t.int64))", "t.view_as_complex(t.ones(2, 3).t())",
    "t.view_as_complex(t.ones(5)[1:].view(2, 2))", "t.complex(t.ones(2), t.ones(2, dtype=t.float64))",
    "t.complex(t.ones(2, dtype=t.int64), t.ones(2, dtype=t.int64))", "t.tensor([1.0]).imag", "z.sum().backward()",
    "t.ones(2, dtype=t.int64).requires_grad_()", "t.fft.fft(t.ones(4, dtype=t.float16))",
    "t.fft.rfft(t.ones(4, dtype=t.complex64))", "t.fft.fft(t.ones(4), norm='bad')", "t.fft.fft(t.ones(4), n=0)",
    "t.fft.fft(t.ones(4), dim=3)", "t.fft.fft(t.ones(()))", "t.fft.fftn(t.ones(2, 3), dim=(0, 0))",
    "t.fft.fft2(t.ones(3))", "t.ones(2, 2, 2).H", "t.ones(2).mH", "t.arange(3, dtype=t.complex64)",
]


@pytest.mark.parametrize("source", COMPLEX_ERRORS)
def test_complex_errors_against_pytorch(source):
    def outcome(t):
        try:
            eval(source, {"t": t, "z": t.tensor([1 + 2j, 3 - 1j], requires_grad="backward" in source)})
        except Exception as error:  # noqa: BLE001 - the exception type is what is compared
            return type(error).__name__, str(error)
        return None, None

    expected, actual = outcome(torch), outcome(minitorch)
    assert expected[0] is not None, source
    assert actual[0] == expected[0], f"{source}: {actual} != {expected}"
    assert actual[1].split(" (")[0].strip() in expected[1] or expected[1].split("\n")[0] in actual[1], (actual, expected)


@pytest.mark.parametrize("source", [
    "t.tensor([1 + 2j, 3 - 1j])", "t.tensor([1.5 + 2j, 3 - 1.25j])", "t.tensor([1 + 2j], dtype=t.complex128)",
    "t.tensor(1 - 0j)", "t.tensor([1e-5 + 2j, 1e5 - 0.5j])", "t.tensor([[1 + 2j, float('nan') + 1j], [3j, -0.0 - 0.0j]])",
    "t.tensor([1 + 2j, 3 - 1j], requires_grad=True) * 2", "t.zeros(0, dtype=t.complex64)",
    "t.arange(12.).reshape(3, 4) * (1 + 1j)", "t.tensor([1 + 2j], requires_grad=True).real",
])
def test_complex_printing_against_pytorch(source):
    assert repr(eval(source, {"t": minitorch})) == repr(eval(source, {"t": torch}))


def test_complex_views_share_memory_as_in_pytorch():
    for t in (torch, minitorch):
        z = t.tensor([1 + 2j, 3 - 1j])
        r = t.view_as_real(z)
        r[0, 1] = 5.0
        z.imag[1] = 7.0
        z.real.mul_(2)
        back = t.view_as_complex(r)
        back[0] = 9 - 9j
        assert z.tolist() == [9 - 9j, 6 + 7j]
        assert r.data_ptr() == z.data_ptr()


def test_complex_gradcheck_agrees_with_pytorch():
    """minitorch's gradcheck of complex functions passes where PyTorch's does, and fails on a wrong derivative."""
    def wrong_mul(t):
        class Mul(t.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a * b

            @staticmethod
            def backward(ctx, grad):
                a, b = ctx.saved_tensors
                return grad * b, grad * a  # the conjugates are missing
        return Mul.apply

    for t in (torch, minitorch):
        a = t.tensor(CA, dtype=t.complex128, requires_grad=True)
        b = t.tensor(CB, dtype=t.complex128, requires_grad=True)
        assert t.autograd.gradcheck(lambda u, v: (u * v).exp() / v, (a, b))
        assert t.autograd.gradcheck(lambda u: t.fft.rfft(u.abs(), n=4), (a,))
        assert not t.autograd.gradcheck(wrong_mul(t), (a, b), raise_exception=False)


@pytest.mark.parametrize("name, make", [
    ("Adam", lambda t, p: t.optim.Adam(p, lr=0.1, weight_decay=0.01)),
    ("AdamW", lambda t, p: t.optim.AdamW(p, lr=0.1, amsgrad=True)),
    ("RMSprop", lambda t, p: t.optim.RMSprop(p, lr=0.01, centered=True, momentum=0.5)),
    ("Adagrad", lambda t, p: t.optim.Adagrad(p, lr=0.1)),
    ("SGD", lambda t, p: t.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True)),
])
def test_optimizers_on_complex_parameters_against_pytorch(name, make):
    """PyTorch's optimizers update a complex parameter as its real and imaginary parts (view_as_real)."""
    results = []
    for t in (torch, minitorch):
        w = t.nn.Parameter(t.tensor(CA, dtype=t.complex128))
        optimizer = make(t, [w])
        for _ in range(3):
            optimizer.zero_grad()
            weights = t.tensor([1.0, 2.0, 3.0], dtype=t.float64)
            (w * w.conj() * weights + (w * (1 + 1j)).real).real.sum().backward()
            optimizer.step()
        results.append(np.asarray(w.detach().tolist()))
    np.testing.assert_allclose(results[1], results[0], rtol=1e-10, atol=1e-12)


def test_spectral_layer_training_against_pytorch():
    """A Fourier-neural-operator layer (rfft2, a complex einsum written into a zero spectrum, irfft2) trained
    with Adam on a complex weight: losses and weights follow PyTorch's."""
    w0 = RNG.standard_normal((3, 4, 4, 3)) + 1j * RNG.standard_normal((3, 4, 4, 3))
    x0 = RNG.standard_normal((2, 3, 8, 8))
    results = []
    for t in (torch, minitorch):
        weight = t.nn.Parameter(t.tensor(w0 * 0.1, dtype=t.cfloat))
        optimizer = t.optim.Adam([weight], lr=1e-2)
        x = t.tensor(x0, dtype=t.float32)
        losses = []
        for _ in range(3):
            optimizer.zero_grad()
            spectrum = t.fft.rfft2(x)
            out = t.zeros(2, 4, 8, 5, dtype=t.cfloat)
            out[:, :, :4, :3] = t.einsum("bixy,ioxy->boxy", spectrum[:, :, :4, :3], weight)
            loss = (t.fft.irfft2(out, s=(8, 8)) ** 2).mean()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        results.append((losses, np.asarray(weight.detach().tolist())))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-5)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-4, atol=1e-6)
