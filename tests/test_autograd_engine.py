"""The autograd engine: SEMANTICS.md acceptance checks AG-1 .. AG-18."""

import math

import pytest

import minitorch as torch
from minitorch.autograd import Function, gradcheck
from minitorch.ops.comparison import DependsOn, depends_on


def leaf(values, device="cpu", dtype=torch.float32):
    return torch.tensor(values, dtype=dtype, device=device, requires_grad=True)


def test_ag1_accumulation_is_in_place(device):
    x = leaf([1.0, 2.0], device)
    (x * 3).sum().backward()
    first = x.grad
    (x * 4).sum().backward()
    assert x.grad is first
    assert x.grad.tolist() == [7.0, 7.0]


def test_ag2_implicit_grad_needs_scalar():
    x = leaf([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * x).backward()


def test_ag3_backward_twice():
    x = leaf([2.0])
    y = x.exp().sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    x2 = leaf([2.0])
    y2 = x2.exp().sum()
    y2.backward(retain_graph=True)
    y2.backward()
    assert x2.grad.item() == pytest.approx(2 * math.exp(2), rel=1e-6)


def test_ag4_graph_without_saved_tensors_walks_twice():
    x = leaf([1.0, 1.0, 1.0])
    y = (x + 1).sum()
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_ag5_unused_input():
    x, z = leaf([1.0, 1.0, 1.0]), leaf([1.0])
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        torch.autograd.grad((x * 2).sum(), [x, z])
    gx, gz = torch.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)
    assert gx.tolist() == [2.0, 2.0, 2.0] and gz is None


def test_ag6_higher_order():
    x = leaf(3.0)
    (g,) = torch.autograd.grad(x**3, x, create_graph=True)
    assert g.item() == 27.0 and g.grad_fn is not None
    (gg,) = torch.autograd.grad(g, x)
    assert gg.item() == 18.0


def test_ag7_hook_replaces_grad():
    x = leaf([1.0, 1.0])
    y = x * 2
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    assert x.grad.tolist() == [20.0, 20.0]


def test_ag8_retain_grad():
    x = leaf([1.0, 1.0])
    y = x * 2
    y.retain_grad()
    (y * y).sum().backward()
    assert y.grad.tolist() == [4.0, 4.0]
    assert x.grad.tolist() == [8.0, 8.0]


def test_ag9_leaf_hook_removed_and_post_accumulate():
    x = leaf([1.0, 1.0])
    seen = []
    handle = x.register_hook(lambda g: g * 3)
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (x * 2).sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]
    handle.remove()
    (x * 2).sum().backward()
    assert x.grad.tolist() == [8.0, 8.0]
    assert seen == [[6.0, 6.0], [8.0, 8.0]]


def test_ag10_hook_order():
    x = leaf([1.0, 1.0])
    y = x * 2
    order = []
    y.register_hook(lambda g: order.append("t1"))
    y.register_hook(lambda g: order.append("t2"))
    y.grad_fn.register_prehook(lambda g: order.append("pre"))
    y.grad_fn.register_hook(lambda gi, go: order.append("post"))
    y.sum().backward()
    assert order == ["t1", "t2", "pre", "post"]


def test_ag11_requires_grad_rules():
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        torch.tensor([1, 2]).requires_grad_()
    y = leaf([1.0]) * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)


def test_ag12_no_grad_and_enable_grad():
    with torch.no_grad():
        y = torch.ones(2, requires_grad=True) * 2
        assert not y.requires_grad and y.grad_fn is None
        with torch.enable_grad():
            assert (torch.ones(2, requires_grad=True) * 2).requires_grad


class Sq(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g


def test_ag13_custom_function():
    x = leaf([1.0, 2.0])
    Sq.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]
    assert type(Sq.apply(x).grad_fn).__name__ == "SqBackward"

    class BadN(Function):
        forward = staticmethod(lambda ctx, x: x * 1)
        backward = staticmethod(lambda ctx, g: (g, g))

    with pytest.raises(RuntimeError, match=r"incorrect number of gradients \(expected 1, got 2\)"):
        BadN.apply(leaf([1.0, 2.0])).sum().backward()

    class BadShape(Function):
        forward = staticmethod(lambda ctx, x: x * 1)
        backward = staticmethod(lambda ctx, g: torch.ones(3))

    with pytest.raises(RuntimeError, match=r"invalid gradient at index 0 - got \[3\] but expected shape compatible with \[2\]"):
        BadShape.apply(leaf([1.0, 2.0])).sum().backward()

    class Reduced(Function):
        forward = staticmethod(lambda ctx, x: x * 1)
        backward = staticmethod(lambda ctx, g: torch.ones(3, 2))

    x = leaf([1.0, 2.0])
    Reduced.apply(x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_ag15_materialize_grads():
    seen = {}

    class Two(Function):
        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            seen["g2"] = g2
            return g1, None

    a, _ = Two.apply(leaf([1.0, 2.0]), True)
    a.sum().backward()
    assert seen["g2"].tolist() == [0.0, 0.0]
    a, _ = Two.apply(leaf([1.0, 2.0]), False)
    a.sum().backward()
    assert seen["g2"] is None


def test_ag16_gradcheck_catches_wrong_backward():
    x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    assert gradcheck(torch.sin, (x,))
    assert gradcheck(torch.sin, (x,), fast_mode=True)

    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * g

    bad = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    assert gradcheck(Wrong.apply, (bad,), raise_exception=False) is False
    with pytest.raises(torch.autograd.GradcheckError, match="Jacobian mismatch"):
        gradcheck(Wrong.apply, (bad,))


def test_ag17_anomaly_names_the_node():
    x = leaf([0.0, 1.0])
    with pytest.warns(UserWarning):
        with torch.autograd.detect_anomaly():
            with pytest.raises(RuntimeError, match="returned nan values"):
                (x / x).sum().backward()


def test_ag18_broadcast_grad_is_reduced(device):
    x = torch.ones(2, 3, device=device, requires_grad=True)
    y = torch.ones(3, device=device, requires_grad=True)
    (x + y).sum().backward()
    assert y.grad.tolist() == [2.0, 2.0, 2.0]


def test_backward_without_graph_errors():
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        torch.ones(2).sum().backward()


def test_seed_shape_mismatch():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(torch.ones(3))


def test_deep_chain_has_no_recursion():
    x = leaf([1.0])
    y = x
    for _ in range(100_000):
        y = y + 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0]


def test_grads_of_two_leaves_never_share_memory():
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (a + b).sum().backward()
    assert a.grad.data_ptr() != b.grad.data_ptr()
    (a + b).sum().backward()
    assert a.grad.tolist() == [2.0, 2.0] and b.grad.tolist() == [2.0, 2.0]


def test_backward_inputs_accumulates_only_there():
    a, b = leaf([1.0]), leaf([2.0])
    (a * b).sum().backward(inputs=[a])
    assert a.grad.tolist() == [2.0] and b.grad is None


def test_create_graph_grad_has_history():
    x = leaf([1.0, 2.0])
    (x * x).sum().backward(create_graph=True)
    assert x.grad.grad_fn is not None


# create_graph=True: a gradient that depends on a tensor requiring grad requires grad ----------------------------
def _create_graph_cases():
    F = torch.nn.functional

    def zeros():
        return torch.zeros(3, dtype=torch.float64)

    return {
        "where": lambda x: torch.where(x > 0, x, 0.0),
        "where_squared": lambda x: torch.where(x > 0, x, 0.0) ** 2,
        "masked_fill": lambda x: x.masked_fill(x < 0, 0.0),
        "mask_product": lambda x: x * (x > 0),
        "relu": torch.relu,
        "relu_squared": lambda x: torch.relu(x) ** 2,
        "leaky_relu": lambda x: F.leaky_relu(x, 0.1),
        "leaky_relu_squared": lambda x: F.leaky_relu(x, 0.1) ** 2,
        "hardtanh": F.hardtanh,
        "hardtanh_squared": lambda x: F.hardtanh(x) ** 2,
        "relu6": lambda x: F.relu6(x * 4),
        "threshold": lambda x: F.threshold(x, 0.1, 2.0),
        "hardshrink": F.hardshrink,
        "softshrink": F.softshrink,
        "hardswish": lambda x: F.hardswish(x * 2),
        "elu": F.elu,
        "softsign": F.softsign,
        "prelu": lambda x: F.prelu(x, torch.tensor([0.25], dtype=torch.float64)),
        "rrelu_eval": F.rrelu,
        "max_pool1d": lambda x: F.max_pool1d(x[None, None], 2),
        "max_pool1d_squared": lambda x: F.max_pool1d(x[None, None], 2) ** 2,
        "norm_1": lambda x: x.norm(p=1),
        "norm_inf": lambda x: x.norm(p=float("inf")),
        "vector_norm_1": lambda x: torch.linalg.vector_norm(x, 1),
        "vector_norm_inf": lambda x: torch.linalg.vector_norm(x, float("inf")),
        "abs": torch.abs,
        "l1_loss": lambda x: F.l1_loss(x, zeros()),
        "smooth_l1_loss": lambda x: F.smooth_l1_loss(x, zeros()),
        "xlogy": lambda x: torch.xlogy(x.abs(), 2 * torch.ones(3, dtype=torch.float64)),
        "clamp": lambda x: x.clamp(-1, 1),
        "clamp_squared": lambda x: x.clamp(-1, 1) ** 2,
        "clamp_min": lambda x: x.clamp_min(0),
        "clamp_tensor": lambda x: x.clamp(zeros()),
        "maximum": lambda x: torch.maximum(x, zeros()),
        "maximum_squared": lambda x: torch.maximum(x, zeros()) ** 2,
        "fmax": lambda x: torch.fmax(x, zeros()),
        "max_squared": lambda x: x.max() ** 2,
        "sort_squared": lambda x: x.sort()[0] ** 2,
        "sign": torch.sign,
        "floor": torch.floor,
        "sum": lambda x: x.sum(),
        "hinge_embedding_loss": lambda x: F.hinge_embedding_loss(x, torch.ones(3, dtype=torch.float64)),
        "margin_ranking_loss": lambda x: F.margin_ranking_loss(x, zeros(), torch.ones(3, dtype=torch.float64)),
        "nan_to_num_squared": lambda x: torch.nan_to_num(x) ** 2,
        "gelu": F.gelu,
        "silu": F.silu,
        "softplus": F.softplus,
    }


# PyTorch 2.13, x = [1, -2, 0.5] (float64): None where grad(f(x).sum(), x, create_graph=True) does not require
# grad; else d/dx of (that gradient * [1, 2, -3]).sum(). PyTorch's formulas for relu, hardtanh, leaky_relu,
# max_pool, norm(p=1), ... take the saved input (their second derivative is zero, but it is defined), while
# where/masked_fill/clamp/maximum/sign build theirs from comparisons only. (hardsigmoid, which PyTorch cannot
# differentiate twice, gives zeros here like the other piecewise-linear activations.)
CREATE_GRAPH_EXPECTED = {
    "where": None,
    "where_squared": [2.0, 0.0, -6.0],
    "masked_fill": None,
    "mask_product": None,
    "relu": [0.0, 0.0, 0.0],
    "relu_squared": [2.0, 0.0, -6.0],
    "leaky_relu": [0.0, 0.0, 0.0],
    "leaky_relu_squared": [2.0, 0.04, -6.0],
    "hardtanh": [0.0, 0.0, 0.0],
    "hardtanh_squared": [0.0, 0.0, -6.0],
    "relu6": [0.0, 0.0, 0.0],
    "threshold": [0.0, 0.0, 0.0],
    "hardshrink": [0.0, 0.0, 0.0],
    "softshrink": [0.0, 0.0, 0.0],
    "hardswish": [1.333333, 0.0, -4.0],
    "elu": [0.0, 0.270671, 0.0],
    "softsign": [-0.25, 0.148148, 1.777778],
    "prelu": [0.0, 0.0, 0.0],
    "rrelu_eval": [0.0, 0.0, 0.0],
    "max_pool1d": [0.0, 0.0, 0.0],
    "max_pool1d_squared": [2.0, 0.0, 0.0],
    "norm_1": [0.0, 0.0, 0.0],
    "norm_inf": [0.0, 0.0, 0.0],
    "vector_norm_1": [0.0, 0.0, 0.0],
    "vector_norm_inf": [0.0, 0.0, 0.0],
    "abs": [0.0, 0.0, 0.0],
    "l1_loss": [0.0, 0.0, 0.0],
    "smooth_l1_loss": [0.0, 0.0, -1.0],
    "xlogy": [0.0, 0.0, 0.0],
    "clamp": None,
    "clamp_squared": [2.0, 0.0, -6.0],
    "clamp_min": None,
    "clamp_tensor": None,
    "maximum": None,
    "maximum_squared": [2.0, 0.0, -6.0],
    "fmax": None,
    "max_squared": [2.0, 0.0, 0.0],
    "sort_squared": [2.0, 4.0, -6.0],
    "sign": None,
    "floor": None,
    "sum": None,
    "hinge_embedding_loss": None,
    "margin_ranking_loss": None,
    "nan_to_num_squared": [2.0, 4.0, -6.0],
    "gelu": [0.241971, -0.215964, -1.848343],
    "silu": [0.302366, 0.100124, -1.323687],
    "softplus": [0.196612, 0.209987, -0.705011],
}


@pytest.mark.parametrize("name", sorted(CREATE_GRAPH_EXPECTED))
def test_create_graph_gradients_require_grad_as_in_pytorch(name):
    fn = _create_graph_cases()[name]
    x = leaf([1.0, -2.0, 0.5], dtype=torch.float64)
    (g,) = torch.autograd.grad(fn(x).sum(), x, create_graph=True)
    expected = CREATE_GRAPH_EXPECTED[name]
    assert g.requires_grad == (expected is not None)
    if expected is None:
        with pytest.raises(RuntimeError, match="does not require grad"):
            torch.autograd.grad(g.sum(), x)
        return
    (second,) = torch.autograd.grad((g * torch.tensor([1.0, 2.0, -3.0], dtype=torch.float64)).sum(), x)
    assert second.tolist() == pytest.approx(expected, abs=1e-6)


def test_first_order_masks_stay_on_the_fast_path():
    """Without create_graph the mask is not recorded against its source (no copy, no extra node)."""
    x = leaf([1.0, -2.0, 0.5], dtype=torch.float64)
    (g,) = torch.autograd.grad(torch.relu(x).sum(), x)
    assert not g.requires_grad and g.grad_fn is None
    (g2,) = torch.autograd.grad(torch.relu(x).sum(), x, create_graph=True)
    assert type(g2.grad_fn) is DependsOn and g2.tolist() == [1.0, 0.0, 1.0]
    value = torch.ones(3, dtype=torch.float64)
    with torch.no_grad():
        assert depends_on(value, x) is value
    assert depends_on(value, torch.ones(3)) is value  # no source requires grad


def test_first_grad_follows_the_leafs_layout():
    """PyTorch's gradient layout contract: the first .grad has the leaf's strides (dense leaf) or is row-major."""
    x = torch.randn(3, 4, requires_grad=True)
    (x.t() * 2).sum().backward()
    assert x.grad.stride() == (4, 1)
    y = torch.randn(4, 3).t().detach().requires_grad_()
    (y.contiguous() * 2).sum().backward()
    assert y.grad.stride() == (1, 3)
    w = torch.randn(3, 4)[:, ::2].detach().requires_grad_()
    (w.t() * 2).sum().backward()
    assert w.grad.stride() == (2, 1)
    x.grad = None
    (x * x).sum().backward(create_graph=True)
    assert x.grad.grad_fn.name() == "torch::autograd::CopyBackwards"
    torch.testing.assert_close(x.grad, 2 * x.detach())
