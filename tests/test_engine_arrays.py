"""First-order backward on raw arrays (ops with ``array_derivative``) must give exactly what the Tensor
evaluation gives (``create_graph=True`` runs every derivative on Tensors), and never alias gradients."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from minitorch.autograd.graph import Node
from minitorch.ops.arithmetic import Add, Div, Mul, Neg, Sub
from minitorch.ops.pointwise import ARITHMETIC_DERIVATIVES, OPS

# positive inputs keep every function of the table defined (log, sqrt, atanh after the squash below)
UNARY = sorted(ARITHMETIC_DERIVATIVES)


def _both_modes(fn, inputs):
    """Gradients of sum(fn(*inputs) * weights) evaluated on arrays, and on Tensors."""
    out = fn(*inputs)
    weights = minitorch.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(out.shape), dtype=out.dtype)
    on_arrays = minitorch.autograd.grad((out * weights).sum(), inputs, retain_graph=True)
    on_tensors = minitorch.autograd.grad((out * weights).sum(), inputs, create_graph=True)
    return on_arrays, on_tensors


def _assert_identical(on_arrays, on_tensors):
    for a, t in zip(on_arrays, on_tensors):
        assert type(a) is minitorch.Tensor and a.grad_fn is None
        assert a.dtype is t.dtype and a.shape == t.shape
        np.testing.assert_array_equal(a.numpy(), t.detach().numpy())


def test_the_fast_path_is_taken_for_arithmetic_ops_only():
    for op in (Add, Sub, Mul, Neg):
        assert op.array_derivative
    assert not Node.array_derivative
    x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    assert (x**2).grad_fn.array_derivative and (x / 2).grad_fn.array_derivative
    for y in (x**0, x**x, 2**x, x // 2):  # zero gradients or where(): Tensor path
        assert not y.grad_fn.array_derivative
    assert OPS["tanh"].array_derivative and not OPS["sin"].array_derivative  # sin' needs x.cos()


@pytest.mark.parametrize("name", UNARY)
@given(shape=st.sampled_from([(), (3,), (2, 3)]), seed=st.integers(0, 2**16))
def test_unary_derivatives_on_arrays_match_tensors(name, shape, seed):
    data = np.random.default_rng(seed).uniform(0.1, 0.9, shape)
    for dtype in (minitorch.float32, minitorch.float64):
        x = minitorch.tensor(data, dtype=dtype, requires_grad=True)
        _assert_identical(*_both_modes(getattr(minitorch, name), (x,)))


@pytest.mark.parametrize(
    "fn",
    [
        lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b, lambda a, b: -a * b,
        lambda a, b: minitorch.add(a, b, alpha=2.5), lambda a, b: minitorch.sub(a, b, alpha=-3),
        lambda a, b: (a * 2 - 1.5) / (b + 3), lambda a, b: 2 / a - b * 0.5,
        lambda a, b: a**2 + b**-1 - a**0.5 * b**3,
    ],
    ids=["add", "sub", "mul", "div", "neg", "add_alpha", "sub_alpha", "scalars", "reflected", "pow_number"],
)
@given(
    shapes=st.sampled_from([((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 2)), ((4, 1, 2), (3, 1))]),
    dtypes=st.sampled_from([("float32", "float32"), ("float64", "float32"), ("float16", "float32")]),
    seed=st.integers(0, 2**16),
)
def test_binary_derivatives_on_arrays_match_tensors_with_broadcasting_and_promotion(fn, shapes, dtypes, seed):
    rng = np.random.default_rng(seed)
    a, b = (
        minitorch.tensor(rng.uniform(0.5, 2.0, shape), dtype=getattr(minitorch, dtype), requires_grad=True)
        for shape, dtype in zip(shapes, dtypes)
    )
    _assert_identical(*_both_modes(fn, (a, b)))


@pytest.mark.parametrize("reduce", ["sum", "mean"])
@given(
    case=st.sampled_from([((), None, False), ((3,), None, False), ((2, 3), 1, False), ((2, 3), 0, True),
                          ((4, 1, 2), (0, 2), False), ((4, 1, 2), (0, 2), True), ((2, 0), 1, False)]),
    seed=st.integers(0, 2**16),
)
def test_sum_and_mean_broadcast_their_gradient_on_arrays_as_expand_does(reduce, case, seed):
    shape, dim, keepdim = case
    data = np.random.default_rng(seed).uniform(0.5, 2.0, shape)
    for dtype in (minitorch.float32, minitorch.float64):
        x = minitorch.tensor(data, dtype=dtype, requires_grad=True)
        fn = (lambda t: getattr(t, reduce)()) if dim is None else (lambda t: getattr(t, reduce)(dim, keepdim))
        assert fn(x).grad_fn._arrays
        _assert_identical(*_both_modes(lambda t: fn(t.exp()), (x,)))  # an array node below the reduction
        _assert_identical(*_both_modes(fn, (x,)))  # the broadcast gradient reaches the leaf itself


def test_a_broadcast_gradient_becomes_a_dense_writable_grad():
    """The leaf's .grad of ``(x.sum() * 2)`` is a fresh row-major tensor (PyTorch's layout), not a stride-0 view
    of the incoming gradient: in-place updates of .grad work."""
    x = minitorch.ones(2, 3, requires_grad=True)
    (x.sum() * 2).backward()
    assert x.grad.stride() == (3, 1)
    x.grad.add_(1)
    (x.mean(0) * 3).sum().backward()
    assert x.grad.tolist() == [[4.5, 4.5, 4.5], [4.5, 4.5, 4.5]]


def test_a_broadcast_gradient_reaches_tensor_nodes_unexpanded():
    """sum's gradient on arrays is a broadcast; a node that needs a Tensor gets it as an expanded (stride-0)
    Tensor, as PyTorch's hooks see it and as CopySlices needs it to avoid copying the whole base."""
    x = minitorch.ones(3, 4, requires_grad=True)
    y = x * 1
    seen = []
    y.register_hook(lambda g: seen.append(g.stride()))
    y.sum().backward()
    assert seen == [(0, 0)] and x.grad.stride() == (4, 1)
    z = x * 1
    z[:, ::2].mul_(2)  # CopySlices between the sum and x
    z.sum().backward()
    assert x.grad.tolist() == [[3.0, 2.0, 3.0, 2.0]] * 3


def test_non_contiguous_inputs_and_gradcheck_on_arrays():
    x = minitorch.randn(4, 6, dtype=minitorch.float64).t().requires_grad_()
    y = minitorch.randn(3, 1, dtype=minitorch.float64, requires_grad=True)
    assert not x.is_contiguous()
    fn = lambda x, y: ((x[::2] * y + x[1::2]).tanh() / (y.exp() + 1)).sigmoid()  # noqa: E731
    assert minitorch.autograd.gradcheck(fn, (x, y))  # first order: on arrays
    assert minitorch.autograd.gradgradcheck(fn, (x, y))  # second order: on Tensors


def test_an_integer_operand_keeps_the_gradient_dtype():
    x = minitorch.tensor([1.5, 2.5], requires_grad=True)
    (x * minitorch.tensor([3, 4])).sum().backward()
    assert x.grad.dtype is minitorch.float32
    assert x.grad.tolist() == [3.0, 4.0]


def test_gradients_passed_through_never_share_memory():
    x = minitorch.zeros(3, requires_grad=True)
    y = minitorch.zeros(3, requires_grad=True)
    seed = minitorch.ones(3)
    (x + y).backward(seed)  # Add hands the same gradient array to both inputs
    assert x.grad.data_ptr() != y.grad.data_ptr()
    assert seed.data_ptr() not in (x.grad.data_ptr(), y.grad.data_ptr())
    (x + y).backward(seed)  # accumulates in place: a shared buffer would count twice
    assert x.grad.tolist() == y.grad.tolist() == [2.0, 2.0, 2.0] and seed.tolist() == [1.0, 1.0, 1.0]


def test_a_view_node_between_array_nodes_does_not_alias():
    x = minitorch.zeros(2, 2, requires_grad=True)
    y = minitorch.zeros(2, 2, requires_grad=True)
    (x + y.t()).sum().backward()  # TBackward wraps the array Add passed through; x gets the same array
    x.grad += 1
    assert y.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_hooks_retain_grad_and_captured_inputs_see_tensors():
    x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    h = x * x
    h.retain_grad()
    seen = []
    h.register_hook(lambda g: seen.append(type(g)) or g * 2)
    h.exp().sum().backward()
    assert seen == [minitorch.Tensor] and type(h.grad) is minitorch.Tensor and type(x.grad) is minitorch.Tensor
    np.testing.assert_allclose(h.grad.numpy(), 2 * np.exp([1.0, 4.0]), rtol=1e-6)  # retain_grad sees the hooked value
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 4.0]) * 2 * np.array([1.0, 2.0]), rtol=1e-6)
    (gx,) = minitorch.autograd.grad((x * x).exp().sum(), x)
    assert type(gx) is minitorch.Tensor
    np.testing.assert_allclose(gx.numpy(), np.exp([1.0, 4.0]) * 2 * np.array([1.0, 2.0]), rtol=1e-6)


def test_modified_saved_value_still_raises():
    x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    z = y.exp()  # saves its output
    z.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_no_floating_point_warnings_in_backward():
    x = minitorch.tensor([0.0, 1.0], requires_grad=True)
    y = minitorch.tensor([0.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (x / y).sum().backward()
    assert x.grad.tolist() == [float("inf"), 0.5] and np.isnan(y.grad.numpy()[0])


def test_rounded_division_takes_the_tensor_path():
    x = minitorch.tensor([3.0, 5.0], requires_grad=True)
    assert not Div.array_derivative.fget(type("D", (), {"rounding_mode": "floor"})())
    minitorch.div(x, 2, rounding_mode="floor").sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]


def test_sparse_gradient_meets_an_array_node(device):
    weight = minitorch.randn(5, 3, device=device, requires_grad=True)
    emb = minitorch.nn.functional.embedding(minitorch.tensor([1, 3], device=device), weight, sparse=True)
    (emb * 2).sum().backward()
    assert weight.grad.is_sparse
    np.testing.assert_array_equal(weight.grad.to_dense().cpu().numpy()[[1, 3]], np.full((2, 3), 2.0))


def test_zero_dim_gradients_meeting_at_one_input():
    # 0-dim numpy arithmetic returns numpy scalars, not arrays; they meet in x's buffer and must still add up
    x = minitorch.tensor(1.5, dtype=minitorch.float64, requires_grad=True)
    y = minitorch.tensor(2.0, dtype=minitorch.float64, requires_grad=True)
    v = minitorch.tensor([3.0], dtype=minitorch.float64, requires_grad=True)
    ((x * y + x / y - x) + (v * y).sum()).backward()  # y: a numpy scalar from x * y, a 0-dim array from v * y
    assert x.grad.item() == 2.0 + 0.5 - 1.0 and x.grad.shape == ()
    assert y.grad.item() == 1.5 - 1.5 / 4.0 + 3.0 and y.grad.shape == ()


def test_array_gradients_reach_every_kind_of_node():
    class Double(minitorch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    a = minitorch.tensor([1.0, 2.0], dtype=minitorch.float64, requires_grad=True)
    (Double.apply(a).exp() * 3).sum().backward()  # Exp hands an array to a custom Function's node
    np.testing.assert_allclose(a.grad.numpy(), 6 * np.exp([2.0, 4.0]))
    b = minitorch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    c = b * 1
    c[0:2].mul_(2)
    (c * 3).sum().backward()  # Mul hands an array to CopySlices
    assert b.grad.tolist() == [6.0, 6.0, 3.0]


def test_meta_tensors_backward_on_arrays():
    x = minitorch.randn(3, 2, device="meta", requires_grad=True)
    y = minitorch.randn(2, device="meta", dtype=minitorch.float64, requires_grad=True)
    (x * y + x / y - y).tanh().exp().sum().backward()
    assert x.grad.shape == (3, 2) and x.grad.dtype is minitorch.float32 and x.grad.device.type == "meta"
    assert y.grad.shape == (2,) and y.grad.dtype is minitorch.float64


@pytest.mark.parametrize(
    "other",
    [
        lambda: minitorch.tensor(2.0, dtype=minitorch.float64),  # 0-dim: numpy would promote, PyTorch does not
        lambda: minitorch.tensor([1, 2, 3]),  # int64
        lambda: minitorch.tensor([[1.0, 2.0, 3.0]] * 2),  # broadcasts x up
        lambda: minitorch.tensor([True, False, True]),
    ],
    ids=["0dim_float64", "int64", "broadcast", "bool"],
)
@pytest.mark.parametrize("fn", [lambda x, o: x * o, lambda x, o: x / (o + 1), lambda x, o: (x + o).exp()])
def test_operands_without_grad_keep_the_gradient_exact(other, fn):
    x = minitorch.tensor([0.5, 1.5, 2.5], requires_grad=True)
    on_arrays, on_tensors = _both_modes(lambda x: fn(x, other()), (x,))
    _assert_identical(on_arrays, on_tensors)
    assert on_arrays[0].dtype is minitorch.float32 and on_arrays[0].shape == (3,)


def test_node_hooks_see_tensors_and_can_replace_gradients():
    x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    seen = []
    y.grad_fn.register_prehook(lambda grads: seen.append(type(grads[0])) or (grads[0] * 10,))
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(type(grad_inputs[0])))
    y.sum().backward()
    assert seen == [minitorch.Tensor, minitorch.Tensor] and x.grad.tolist() == [30.0, 30.0]


def test_retain_graph_then_double_backward_on_the_same_graph():
    x = minitorch.tensor([0.5, 1.5], dtype=minitorch.float64, requires_grad=True)
    y = (x * x).tanh()
    (first,) = minitorch.autograd.grad(y.sum(), x, retain_graph=True)  # on arrays
    (again,) = minitorch.autograd.grad(y.sum(), x, create_graph=True)  # the same nodes, on Tensors
    assert again.grad_fn is not None
    np.testing.assert_array_equal(first.numpy(), again.detach().numpy())
    (second,) = minitorch.autograd.grad(again.sum(), x)
    t = np.tanh(np.array([0.25, 2.25]))
    expected = 2 * (1 - t**2) + 2 * np.array([0.5, 1.5]) * (-2 * t * (1 - t**2)) * 2 * np.array([0.5, 1.5])
    np.testing.assert_allclose(second.numpy(), expected, rtol=1e-12)


def test_anomaly_mode_still_names_the_node_that_made_nan():
    x = minitorch.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # detect_anomaly announces itself
        with minitorch.autograd.detect_anomaly(), pytest.raises(RuntimeError, match="DivBackward0"):
            (x / x).sum().backward()


def test_autograd_grad_of_an_intermediate_tensor():
    x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    h = x * x
    z = (h.exp() * 2).sum()
    gh, gx = minitorch.autograd.grad(z, (h, x))
    assert type(gh) is minitorch.Tensor and gh.grad_fn is None
    np.testing.assert_allclose(gh.numpy(), 2 * np.exp([1.0, 4.0]), rtol=1e-6)
    np.testing.assert_allclose(gx.numpy(), 2 * np.exp([1.0, 4.0]) * 2 * np.array([1.0, 2.0]), rtol=1e-6)
