"""Special functions, logit, hypot/copysign, addcmul/addcdiv, cummax/cummin, logcumsumexp, unfold, h/v/dsplit,
dist and cdist. Expected values were computed with PyTorch 2.13 (CPU) and are written out here."""

import math

import pytest

import minitorch as torch
from minitorch.autograd import gradcheck, gradgradcheck

INF, NAN = math.inf, math.nan
F64 = torch.float64

X = [-3.5, -2.5, -0.5, 1e-08, 0.25, 0.5, 1.0, 1.0000001, 1.4616321449683622, 1.5, 2.0, 2.5, 7.3, 12.0, 150.0, 1e10]
LGAMMA = [-1.309006684993042, -0.05624371649767405, 1.2655121234846454, 18.42068073818021, 1.2880225246980774,
          0.5723649429247001, 0.0, -5.772155829918507e-08, -0.12148629053584961, -0.12078223763524522, 0.0,
          0.2846828704729192, 7.147892523022248, 17.502307845873887, 600.0094705553274, 220258509288.81058]
DIGAMMA = [1.388870926359529, 1.1031566406452433, 0.03648997397857639, -100000000.57721564, -4.2274535333762655,
           -1.9635100260214229, -0.5772156649015328, -0.5772155004081377, -4.069010753338098e-16,
           0.036489973978576194, 0.422784335098467, 0.7031566406452431, 1.917820335637986, 2.4426616799758123,
           5.007298257075679, 23.025850929890456]
TRIGAMMA = [9.62087929802929, 9.53924664493752, 8.934802200117687, 1.0000000000000004e+16, 17.19732915341456,
            4.934802202073678, 1.6449340676383375, 1.644933827226989, 0.9676722458946125, 0.9348022009716718,
            0.6449340670881899, 0.4903577562398206, 0.14679576813395465, 0.08690187287193527, 0.006688938271165995,
            1.00000000005e-10]
POLYGAMMA_3 = [194.78785955946245, 194.74787621918756, 193.40909103400242, 5.999999999999999e+32, 1538.782144009189,
               97.40909103400242, 6.493939402266829, 6.493936913640827, 1.5509985657339072, 1.4090910340024367,
               0.4939394022668293, 0.2239058488172521, 0.00629315871319849, 0.001310093231070826,
               5.985448553818361e-07, 2.0000000003000003e-30]
BESSEL_X = [-40.0, -3.0, 0.0, 1e-05, 0.5, 5.0, 29.9, 30.1, 100.0, 700.0]
I0 = [1.48947747934199e+16, 4.880792585865024, 1.0, 1.0000000000249998, 1.0634833707413236, 27.239871823604442,
      708478330489.0146, 862432920031.7792, 1.0737517071310738e+42, 1.5295933476718735e+302]
I1 = [-1.4707396163259354e+16, -3.9533702174026093, 0.0, 5.000000000062501e-06, 0.25789430539089636,
      24.335642142450524, 696528308361.0928, 847983630191.5414, 1.0683693903381625e+42, 1.5285003902339006e+302]
ERFC_X = [-6.0, -1.0, 0.0, 0.3, 1.0, 3.0, 10.0, 26.5]
ERFC = [2.0, 1.8427007929497148, 1.0, 0.6713732405408726, 0.15729920705028513, 2.209049699858544e-05,
        2.088487583762545e-45, 2.2109076642637343e-307]
SPECIAL_POINTS = [0.0, -0.0, -1.0, -2.0, INF, -INF, NAN]


def close(actual, expected, rtol=1e-14, atol=0.0):
    for a, e in zip(actual, expected, strict=True):
        if math.isnan(e) or math.isinf(e):
            assert (math.isnan(a) and math.isnan(e)) or a == e, (actual, expected)
        else:
            assert abs(a - e) <= atol + rtol * abs(e), (a, e)


@pytest.mark.parametrize(("function", "expected", "atol"), [
    (torch.lgamma, LGAMMA, 0.0), (torch.digamma, DIGAMMA, 1e-15),  # digamma at its root: PyTorch's is 4e-16 off
    (lambda t: torch.polygamma(1, t), TRIGAMMA, 0.0), (lambda t: t.polygamma(3), POLYGAMMA_3, 0.0),
])
def test_gamma_family_matches_pytorch(device, function, expected, atol):
    # PyTorch's own trigamma is accurate to ~1e-9 only (mpmath agrees with minitorch to 1e-15 there)
    rtol = 1e-8 if expected is TRIGAMMA else 2e-14
    close(function(torch.tensor(X, dtype=F64, device=device)).tolist(), expected, rtol=rtol, atol=atol)


def test_special_function_poles_and_infinities(device):
    x = torch.tensor(SPECIAL_POINTS, dtype=F64, device=device)
    close(torch.lgamma(x).tolist(), [INF, INF, INF, INF, INF, INF, NAN])
    close(torch.digamma(x).tolist(), [-INF, INF, NAN, NAN, INF, NAN, NAN])
    close(torch.polygamma(2, x[:3]).tolist(), [-INF, -INF, -INF])
    close(torch.polygamma(3, x[:3]).tolist(), [INF, INF, INF])
    assert torch.polygamma(0, x[:1]).tolist() == [-INF]
    with pytest.raises(RuntimeError, match="polygamma.*negative n"):
        torch.polygamma(-1, x)


def test_bessel_and_erfc_match_pytorch(device):
    x = torch.tensor(BESSEL_X, dtype=F64, device=device)
    close(torch.i0(x).tolist(), I0, rtol=3e-15)
    close(torch.special.i1(x).tolist(), I1, rtol=3e-15)
    close(torch.erfc(torch.tensor(ERFC_X, dtype=F64, device=device)).tolist(), ERFC, rtol=2e-15)


def test_float32_special_functions_round_once(device):
    x = torch.tensor([0.5, 3.3], device=device)
    assert torch.lgamma(x).tolist() == [0.5723649263381958, 0.9870985150337219]
    # PyTorch's float32 digamma runs in float32 (-1.9635108709335327 at 0.5); minitorch rounds the float64 value
    close(torch.digamma(x).tolist(), [-1.9635108709335327, 1.0348225831985474], rtol=1e-6)
    close(torch.i0(x).tolist(), [1.063483476638794, 6.2426300048828125], rtol=2.5e-7)  # PyTorch's: 1 ulp off at 0.5
    assert torch.i0(x).dtype == torch.float32
    assert torch.erfc(x).tolist() == [0.4795001149177551, 3.0577107281715143e-06]
    assert torch.sinc(x).tolist() == [0.6366197466850281, -0.07803580909967422]


def test_special_derivatives_at_special_points(device):
    x = torch.tensor([0.0, 0.5, 1.0, -2.25, 1e-10], dtype=F64, device=device, requires_grad=True)
    assert torch.sinc(x).tolist()[0] == 1.0
    torch.sinc(x).sum().backward()
    close(x.grad.tolist(), [0.0, -1.2732395447351625, -1.0, -0.26980961553194194, 0.0], rtol=1e-15)
    # sinc''(0) = -pi^2 / 3 (PyTorch: nan, from its masked_fill; docs/differences.md); an infinite incoming
    # gradient still gives 0 at 0, as PyTorch's
    z = torch.tensor([0.0, 1e-3, -0.7], dtype=F64, device=device, requires_grad=True)
    (grad,) = torch.autograd.grad(torch.sinc(z).sum(), z, create_graph=True)
    assert torch.autograd.grad(grad[0], z)[0].tolist()[0] == pytest.approx(-math.pi**2 / 3, rel=1e-15)
    assert gradgradcheck(torch.sinc, (z,))
    weights = torch.tensor([math.inf, 1.0, 1.0], dtype=F64, device=device)
    assert torch.autograd.grad((torch.sinc(z) * weights).sum(), z)[0].tolist()[0] == 0.0
    x = torch.tensor([0.0, 1e-20, 2.0], dtype=F64, device=device, requires_grad=True)
    (grad,) = torch.autograd.grad(torch.i0(x).sum(), x, create_graph=True)
    close(grad.tolist(), [0.0, 5e-21, 1.5906368546373295])
    grad.sum().backward()
    close(x.grad.tolist(), [0.5, 0.5, 1.484266875017402], rtol=1e-15)  # i1'(0) = 1/2 (PyTorch's i1_backward)
    x = torch.tensor([0.7, 2.5], dtype=F64, device=device, requires_grad=True)
    for f in (torch.lgamma, torch.digamma, lambda t: torch.polygamma(2, t), torch.special.i1, torch.erfc):
        assert gradcheck(f, (x,)) and gradgradcheck(f, (x,))


def test_logit(device):
    x = torch.tensor([0.0, 0.25, 1.0, 1.5], dtype=F64, device=device)
    close(torch.logit(x).tolist(), [-INF, -1.0986122886681098, INF, NAN])
    close(x.logit(eps=0.3).tolist(), [-0.8472978603872036, -0.8472978603872036, 0.8472978603872034,
                                      0.8472978603872034])
    x = torch.tensor([-0.5, 0.0, 0.05, 0.5, 0.95, 1.0, 1.5], dtype=F64, device=device, requires_grad=True)
    torch.logit(x, eps=0.1).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0]  # 0 outside [eps, 1 - eps]
    x.grad = None
    torch.logit(x).sum().backward()
    close(x.grad.tolist(), [NAN, INF, 21.052631578947366, 4.0, 21.052631578947366, INF, NAN], rtol=1e-15)
    y = torch.rand(3, 2, dtype=F64, device=device).t().requires_grad_()
    assert gradcheck(lambda t: torch.logit(t, 1e-3), (y,)) and gradgradcheck(lambda t: torch.logit(t, 1e-3), (y,))


def test_deg2rad_rad2deg_promote_integers(device):
    out = torch.deg2rad(torch.tensor([180, -90], device=device))
    assert out.dtype == torch.float32 and out.tolist() == [3.1415927410125732, -1.5707963705062866]
    close(torch.rad2deg(torch.tensor([math.pi, 1.0], dtype=F64, device=device)).tolist(), [180.0, 57.29577951308232])


def test_hypot_and_copysign_special_points(device):
    close(torch.hypot(torch.tensor([3.0, 1e300, 0.0], dtype=F64), torch.tensor([4.0, 1e300, 0.0], dtype=F64)).tolist(),
          [5.0, 1.4142135623730952e+300, 0.0])
    a = torch.zeros(2, dtype=F64, device=device, requires_grad=True)
    b = torch.zeros(2, dtype=F64, device=device, requires_grad=True)
    torch.hypot(a, b).sum().backward()
    assert all(math.isnan(v) for v in a.grad.tolist() + b.grad.tolist())  # PyTorch: grad * self / result
    a = torch.tensor([0.0, -0.0, 2.0], dtype=F64, device=device, requires_grad=True)
    b = torch.tensor([-1.0, 1.0, -1.0], dtype=F64, device=device, requires_grad=True)
    torch.copysign(a, b).sum().backward()
    assert a.grad.tolist() == [0.0, 0.0, -1.0] and b.grad.tolist() == [0.0, 0.0, 0.0]
    assert torch.copysign(torch.tensor([3]), -1.0).tolist() == [-3.0]
    assert torch.copysign(torch.tensor([3]), torch.tensor([-1])).dtype == torch.float32
    with pytest.raises(NotImplementedError, match="hypot_cpu"):
        torch.hypot(torch.tensor([3]), torch.tensor([4]))


def test_addcmul_addcdiv(device):
    assert torch.addcmul(torch.tensor([1, 2]), torch.tensor([2, 3]), torch.tensor([3, 4]), value=2).tolist() == [13, 26]
    out = torch.addcdiv(torch.tensor([1.0]), torch.tensor([2]), torch.tensor([3.0], dtype=F64))
    assert out.dtype == F64
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        torch.addcdiv(torch.tensor([1.0]), torch.tensor([2]), torch.tensor([3]))
    a = torch.randn(3, 1, dtype=F64, device=device, requires_grad=True)
    b = torch.randn(4, dtype=F64, device=device, requires_grad=True)
    c = (torch.rand(3, 4, dtype=F64, device=device) + 0.5).t().t().requires_grad_()
    for f in (lambda x, y, z: torch.addcmul(x, y, z, value=-0.5), lambda x, y, z: x.addcdiv(y, z, value=3)):
        assert gradcheck(f, (a, b, c)) and gradgradcheck(f, (a, b, c))
    x = torch.ones(2, dtype=F64, device=device)
    assert x.addcmul_(torch.tensor([2.0, 3.0], dtype=F64), torch.tensor([2.0, 2.0], dtype=F64), value=0.5) is x
    assert x.tolist() == [3.0, 4.0]


def test_cummax_cummin_ties_and_nan(device):
    x = torch.tensor([1.0, 3.0, 3.0, 2.0, 3.0, NAN, 1.0, NAN], dtype=F64, device=device, requires_grad=True)
    values, indices = torch.cummax(x, 0)
    assert indices.tolist() == [0, 1, 2, 2, 4, 5, 5, 7] and values.grad_fn.name() == "CummaxBackward0"
    values.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 2.0, 0.0, 1.0, 2.0, 0.0, 1.0]  # each value's gradient goes to its index
    assert x.cummin(0).indices.tolist() == [0, 0, 0, 0, 0, 5, 5, 7]
    r = torch.cummax(torch.tensor([1, 1, 0], device=device), 0)
    assert r.values.tolist() == [1, 1, 1] and r.indices.tolist() == [0, 1, 1] and r.values.dtype == torch.int64
    assert torch.cummin(torch.tensor(3.0), 0).indices.tolist() == 0
    y = torch.randn(4, 3, dtype=F64, device=device).t().requires_grad_()
    for f in (lambda t: t.cummax(1).values, lambda t: torch.cummin(t, 0)[0], lambda t: t[:0].cummax(0).values):
        assert gradcheck(f, (y,)) and gradgradcheck(f, (y,))
    values, indices = torch.empty(2), torch.empty(2, dtype=torch.int64)
    torch.cummax(torch.tensor([2.0, 1.0]), 0, out=(values, indices))
    assert values.tolist() == [2.0, 2.0] and indices.tolist() == [0, 0]


def test_logcumsumexp(device):
    x = torch.tensor([[1000.0, 0.0, -INF], [-1000.0, -1000.0, 5.0]], dtype=F64, device=device)
    close(torch.logcumsumexp(x, 1).flatten().tolist(), [1000.0, 1000.0, 1000.0, -1000.0, -999.3068528194401, 5.0])
    x = torch.tensor([1.0, 2.0, 3.0], dtype=F64, device=device, requires_grad=True)
    torch.logcumsumexp(x, 0).backward(torch.tensor([1.0, -2.0, 0.5], dtype=F64, device=device))
    close(x.grad.tolist(), [0.5071324438452001, -1.3397529217326107, 0.33262047788741084])
    with pytest.raises(NotImplementedError, match="logcumsumexp_out_cpu"):
        torch.logcumsumexp(torch.tensor([1, 2]), 0)
    assert torch.logcumsumexp(torch.tensor(2.0), -1).tolist() == 2.0
    y = torch.randn(3, 4, dtype=F64, device=device)[:, ::2].requires_grad_()
    for f in (lambda t: t.logcumsumexp(1), lambda t: t.logcumsumexp(0), lambda t: t[:0].logcumsumexp(0)):
        assert gradcheck(f, (y,)) and gradgradcheck(f, (y,))


def test_logcumsumexp_of_a_0d_tensor_passes_the_gradient_through(device):
    # PyTorch 2.13: logcumsumexp_backward returns grad for a 0-d input, so -inf gets 3.0 (not nan)
    x = torch.tensor(-INF, dtype=F64, device=device, requires_grad=True)
    (grad,) = torch.autograd.grad(torch.logcumsumexp(x, 0) * 3.0, x, create_graph=True)
    assert grad.tolist() == 3.0 and not grad.requires_grad
    z = torch.tensor(0.5, dtype=F64, device=device, requires_grad=True)
    assert gradcheck(lambda t: t.logcumsumexp(-1) ** 2, (z,)) and gradgradcheck(lambda t: t.logcumsumexp(0) ** 2, (z,))


def test_logcumsumexp_of_a_0d_tensor_still_checks_its_saved_output(device):
    # PyTorch 2.13 unpacks the saved result before its 0-d shortcut: writing into it in place raises at backward
    x = torch.tensor(0.0, dtype=F64, device=device, requires_grad=True)
    y = torch.logcumsumexp(x, 0)
    y[...] = 1.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_cummax_gradient_of_an_empty_input_is_the_input(device):
    # PyTorch 2.13's cummaxmin_backward returns the (empty) input itself, which requires grad under create_graph
    x = torch.zeros(0, device=device, requires_grad=True)
    for fn in (torch.cummax, torch.cummin):
        (grad,) = torch.autograd.grad(fn(x, 0)[0].sum(), x, create_graph=True)
        assert grad.shape == (0,) and grad.requires_grad


def test_cummax_of_an_empty_input_accepts_any_dim(device):
    # PyTorch's cummax_out returns before it wraps dim when the input is empty (fuzzer seed 25025); a 0-dim
    # input and a non-empty one still check it
    x = torch.zeros(0, 1, device=device)
    for fn in (torch.cummax, torch.cummin):
        values, indices = fn(x, 3)
        assert values.shape == indices.shape == (0, 1) and indices.dtype == torch.int64
        with pytest.raises(IndexError, match="Dimension out of range"):
            fn(torch.zeros(2, 1, device=device), 3)
        with pytest.raises(IndexError):
            fn(torch.tensor(1.0, device=device), 3)


def test_unfold_is_a_view(device):
    x = torch.arange(7.0, device=device)
    u = x.unfold(0, 3, 2)
    assert u.tolist() == [[0.0, 1.0, 2.0], [2.0, 3.0, 4.0], [4.0, 5.0, 6.0]]
    assert u.stride() == (2, 1) and u._base is x and u.data_ptr() == x.data_ptr()
    x[2] = 9.0
    assert u[0, 2].item() == 9.0 and u[1, 0].item() == 9.0
    assert torch.tensor(5.0).unfold(0, 1, 1).tolist() == [5.0]
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 0 is 7 but size is 8"):
        x.unfold(0, 8, 1)
    with pytest.raises(RuntimeError, match="step is 0 but must be > 0"):
        x.unfold(0, 2, 0)
    y = torch.randn(7, 3, dtype=F64, device=device, requires_grad=True)
    for f in (lambda t: t.unfold(0, 3, 2), lambda t: t.t().unfold(1, 4, 1), lambda t: t.unfold(-1, 2, 1)):
        assert gradcheck(f, (y,)) and gradgradcheck(f, (y,))  # overlapping windows add their gradients
    assert y.unfold(0, 2, 1).grad_fn.name() == "UnfoldBackward0"


def test_hsplit_vsplit_dsplit(device):
    x = torch.arange(24, device=device).reshape(2, 3, 4)
    assert [p.shape for p in torch.hsplit(x, 3)] == [(2, 1, 4)] * 3
    assert [p.shape for p in x.vsplit([1])] == [(1, 3, 4), (1, 3, 4)]
    assert [p.shape for p in torch.dsplit(x, [1, 3])] == [(2, 3, 1), (2, 3, 2), (2, 3, 1)]
    assert [p.tolist() for p in torch.hsplit(torch.arange(4), 2)] == [[0, 1], [2, 3]]
    with pytest.raises(RuntimeError, match="size of the dimension 3 is not divisible by the split_size 2"):
        torch.hsplit(torch.ones(3), 2)
    with pytest.raises(RuntimeError, match="vsplit requires a tensor with at least 2 dimension"):
        torch.vsplit(torch.ones(3), 1)


def test_dist_and_cdist(device):
    assert torch.dist(torch.tensor([1.0, 2.0]), torch.tensor([0.0, 0.0])).item() == pytest.approx(math.sqrt(5))
    a = torch.tensor([[0.0, 0.0], [1.0, 2.0]], dtype=F64, device=device)
    b = torch.tensor([[3.0, 4.0], [1.0, 2.0]], dtype=F64, device=device)
    close(torch.cdist(a, b, p=3).flatten().tolist(), [4.497941445275415, 2.080083823051904, 2.5198420997897464, 0.0])
    b = torch.tensor([[3.0, 3.0], [1.0, 2.0]], dtype=F64, device=device)
    expected = {  # PyTorch's _cdist_backward, with a zero distance and a tie in the inf-norm
        2.0: ([-1.1543203766865056, -1.6015339721864634, -0.8944271909999159, -0.4472135954999579],
              [1.6015339721864634, 1.1543203766865056, 0.4472135954999579, 0.8944271909999159]),
        1.0: ([-2.0, -2.0, -1.0, -1.0], [2.0, 2.0, 1.0, 1.0]),
        INF: ([-1.0, -2.0, -1.0, 0.0], [2.0, 1.0, 0.0, 1.0]),
        0.5: ([-4.414213562373094, -3.707106781186547, -1.7071067811865475, -2.414213562373095],
              [3.707106781186547, 4.414213562373094, 2.414213562373095, 1.7071067811865475]),
    }
    for p, (grad_a, grad_b) in expected.items():
        x, y = a.clone().requires_grad_(), b.clone().requires_grad_()
        torch.cdist(x, y, p=p, compute_mode="use_mm_for_euclid_dist").sum().backward()
        close(x.grad.flatten().tolist(), grad_a, rtol=1e-15)
        close(y.grad.flatten().tolist(), grad_b, rtol=1e-15)
    x1 = torch.randn(2, 3, 4, dtype=F64, device=device, requires_grad=True)
    x2 = torch.randn(5, 4, dtype=F64, device=device).requires_grad_()
    for p in (2.0, 0.5, 3.0):
        assert gradcheck(lambda s, t: torch.cdist(s, t, p), (x1, x2))
        assert gradgradcheck(lambda s, t: torch.cdist(s, t, p), (x1, x2))
    assert torch.cdist(torch.ones(2, 0), torch.ones(3, 0)).tolist() == [[0.0] * 3] * 2
    with pytest.raises(RuntimeError, match="X1 and X2 must have the same number of columns"):
        torch.cdist(torch.ones(2, 3), torch.ones(2, 4))
    with pytest.raises(RuntimeError, match="cdist only supports floating-point dtypes, X1 got: Long"):
        torch.cdist(torch.ones(2, 3, dtype=torch.int64), torch.ones(2, 3))


def test_out_and_in_place_variants(device):
    out = torch.empty(2, dtype=F64, device=device)
    x = torch.tensor([0.5, 2.0], dtype=F64, device=device)
    assert torch.lgamma(x, out=out) is out and out.tolist() == torch.lgamma(x).tolist()
    assert torch.polygamma(1, x, out=out) is out and out.tolist() == torch.polygamma(1, x).tolist()
    y = x.clone()
    for name in ("erfc", "lgamma", "digamma", "i0", "sinc", "deg2rad", "rad2deg"):
        assert getattr(y, name + "_")() is y
    z = torch.tensor([0.5], dtype=F64).polygamma_(1)
    assert z.tolist() == torch.polygamma(1, torch.tensor([0.5], dtype=F64)).tolist()
    assert torch.tensor([0.2], dtype=F64).logit_(0.3).tolist() == [-0.8472978603872036]


def test_meta_device_shapes():
    x = torch.empty(3, 4, device="meta")
    assert torch.polygamma(2, x).shape == (3, 4) and torch.lgamma(x).device.type == "meta"
    values, indices = torch.cummax(x, 1)
    assert values.shape == indices.shape == (3, 4) and indices.dtype == torch.int64
    assert torch.logcumsumexp(x, 0).shape == (3, 4) and x.unfold(0, 2, 1).shape == (2, 4, 2)
    assert torch.cdist(x, torch.empty(5, 4, device="meta")).shape == (3, 5)
