"""Matrix products (ops/blas.py): values against numpy, gradcheck/gradgradcheck in float64 on drawn
shapes and layouts (transposed and strided views, broadcast batches), and PyTorch's error messages."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch as torch
from minitorch.autograd import gradcheck, gradgradcheck
from minitorch.testing.strategies import broadcastable_shapes, shapes, tensors


def arr(t):
    return t.detach().numpy()


def rand(*shape, device="cpu", requires_grad=True, seed=0):
    values = np.random.default_rng(seed + len(shape) + sum(shape)).standard_normal(shape)
    return torch.tensor(values, dtype=torch.float64, device=device, requires_grad=requires_grad)


@st.composite
def matmul_operands(draw):
    """Shape pairs for every matmul case: dot, mv, vector @ batch, mm, and broadcast batches."""
    n, k, m = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    batch = draw(shapes(0, 2, 1, 3))
    other_batch = draw(broadcastable_shapes(batch, max_dims=2))
    if draw(st.booleans()):
        batch, other_batch = other_batch, batch
    kind = draw(st.sampled_from(["dot", "mv", "vm", "mm", "batched", "batch_vector", "vector_batch"]))
    a_shape, b_shape = {
        "dot": ((k,), (k,)),
        "mv": ((n, k), (k,)),
        "vm": ((k,), (k, m)),
        "mm": ((n, k), (k, m)),
        "batched": (batch + (n, k), other_batch + (k, m)),
        "batch_vector": (batch + (n, k), (k,)),
        "vector_batch": ((k,), batch + (k, m)),
    }[kind]
    return draw(tensors(a_shape, requires_grad=True)), draw(tensors(b_shape, requires_grad=True))


@given(matmul_operands())
def test_matmul_values_and_gradients(operands):
    a, b = operands
    out = a @ b
    np.testing.assert_allclose(arr(out), arr(a) @ arr(b), rtol=1e-12, atol=1e-12)
    assert tuple(out.shape) == np.matmul(arr(a), arr(b)).shape
    assert gradcheck(torch.matmul, (a, b))


@settings(max_examples=8)
@given(matmul_operands())
def test_matmul_double_backward(operands):
    assert gradgradcheck(torch.matmul, operands)


def test_matmul_on_device(device):
    a, b = rand(2, 3, 4, device=device), rand(4, 5, device=device)
    out = a @ b
    assert out.device == a.device and tuple(out.shape) == (2, 3, 5)
    out.sum().backward()
    np.testing.assert_allclose(a.grad.cpu().numpy(), np.broadcast_to(arr(b.cpu()).sum(1), (2, 3, 4)), rtol=1e-12)
    np.testing.assert_allclose(b.grad.cpu().numpy(), np.broadcast_to(arr(a.cpu()).sum((0, 1))[:, None], (4, 5)))


def test_matmul_2d_backward_is_two_matmuls_of_transposed_views():
    a, b = rand(3, 4), rand(4, 5)
    grad_a, grad_b = torch.autograd.grad(a @ b, [a, b], torch.ones(3, 5, dtype=torch.float64), create_graph=True)
    for g in (grad_a, grad_b):
        assert g.grad_fn.name() == "MmBackward0"  # PyTorch's mm node
        kinds = {type(node).__name__ for node, _ in g.grad_fn.next_functions if node is not None}
        assert kinds <= {"Transpose", "AccumulateGrad", "Matmul"}, kinds


def test_batched_matmul_gradient_reduces_broadcast_batch():
    a, b = rand(3, 1, 2, 4), rand(5, 4, 2)
    out = a @ b
    assert tuple(out.shape) == (3, 5, 2, 2)
    out.sum().backward()
    assert tuple(a.grad.shape) == (3, 1, 2, 4) and tuple(b.grad.shape) == (5, 4, 2)
    assert gradcheck(torch.matmul, (a, b))


def test_meta_matmul_shapes():
    a = torch.empty(7, 3, 4, device="meta")
    b = torch.empty(4, 6, device="meta")
    assert tuple((a @ b).shape) == (7, 3, 6)
    assert tuple(torch.einsum("bij,jk->bki", a, b).shape) == (7, 6, 3)


def test_integer_matmul_keeps_dtype():
    a = torch.tensor([[1, 2], [3, 4]])
    assert (a @ a).tolist() == [[7, 10], [15, 22]] and (a @ a).dtype is torch.int64


@pytest.mark.parametrize(
    "shapes_, message",
    [
        (((), (2,)), "both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
        (((3,), (4,)), r"inconsistent tensor size, expected tensor \[3\] and src \[4\]"),
        (((2, 3), (4,)), r"size mismatch, got input \(2\), mat \(2x3\), vec \(4\)"),
        (((3,), (4, 5)), r"mat1 and mat2 shapes cannot be multiplied \(1x3 and 4x5\)"),
        (((2, 3), (4, 5)), r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"),
        (((2, 2, 3), (4, 5)), r"mat1 and mat2 shapes cannot be multiplied \(4x3 and 4x5\)"),
        (((6, 2, 3), (6, 4, 5)), r"Expected size for first two dimensions of batch2 tensor to be: \[6, 3\]"),
        (((2, 2, 3), (3, 3, 5)), "The size of tensor a \\(2\\) must match the size of tensor b \\(3\\)"),
    ],
)
def test_matmul_shape_errors(shapes_, message):
    a, b = (torch.zeros(s) for s in shapes_)
    with pytest.raises(RuntimeError, match=message):
        torch.matmul(a, b)


def test_matmul_dtype_error_and_inputs_untouched():
    a, b = torch.ones(2, 2), torch.ones(2, 2, dtype=torch.float64)
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype, but got: float != double"):
        a @ b
    assert a.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    with pytest.raises(TypeError):
        a @ 3


def test_mm_bmm_mv_dot_strict_shapes(device):
    with pytest.raises(RuntimeError, match="self must be a matrix"):
        torch.mm(torch.zeros(3, device=device), torch.zeros(3, 2, device=device))
    with pytest.raises(RuntimeError, match="mat2 must be a matrix"):
        torch.mm(torch.zeros(2, 3, device=device), torch.zeros(1, 3, 2, device=device))
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"):
        torch.mm(torch.zeros(2, 3, device=device), torch.zeros(4, 5, device=device))
    with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor"):
        torch.bmm(torch.zeros(2, 3, device=device), torch.zeros(2, 3, 4, device=device))
    with pytest.raises(RuntimeError, match="batch2 must be a 3D tensor"):
        torch.bmm(torch.zeros(2, 2, 3, device=device), torch.zeros(3, 4, device=device))
    with pytest.raises(RuntimeError, match=r"Expected size for first two dimensions of batch2 tensor to be: \[2, 3\] "
                                           r"but got: \[1, 3\]"):
        torch.bmm(torch.zeros(2, 2, 3, device=device), torch.zeros(1, 3, 4, device=device))
    with pytest.raises(RuntimeError, match="vector \\+ matrix @ vector expected, got 1, 2, 2"):
        torch.mv(torch.zeros(2, 3, device=device), torch.zeros(3, 1, device=device))
    with pytest.raises(RuntimeError, match="1D tensors expected, but got 2D and 1D tensors"):
        torch.dot(torch.zeros(2, 3, device=device), torch.zeros(3, device=device))
    with pytest.raises(RuntimeError, match="dot : expected both vectors to have same dtype, but found Float and Double"):
        torch.dot(torch.zeros(3, device=device), torch.zeros(3, dtype=torch.float64, device=device))


@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.data())
def test_mm_bmm_mv_dot_values_and_gradients(n, k, m, b, data):
    x = data.draw(tensors((n, k), requires_grad=True))
    y = data.draw(tensors((k, m), requires_grad=True))
    v = data.draw(tensors((k,), requires_grad=True))
    w = data.draw(tensors((k,), requires_grad=True))
    p = data.draw(tensors((b, n, k), requires_grad=True))
    q = data.draw(tensors((b, k, m), requires_grad=True))
    np.testing.assert_allclose(arr(torch.mm(x, y)), arr(x) @ arr(y), atol=1e-12)
    np.testing.assert_allclose(arr(torch.bmm(p, q)), arr(p) @ arr(q), atol=1e-12)
    np.testing.assert_allclose(arr(torch.mv(x, v)), arr(x) @ arr(v), atol=1e-12)
    np.testing.assert_allclose(arr(torch.dot(v, w)), arr(v) @ arr(w), atol=1e-12)
    np.testing.assert_allclose(arr(x.mv(v)), arr(x) @ arr(v), atol=1e-12)
    assert gradcheck(torch.mm, (x, y)) and gradcheck(torch.bmm, (p, q))
    assert gradcheck(torch.mv, (x, v)) and gradcheck(torch.dot, (v, w)) and gradcheck(torch.vdot, (v, w))
    assert gradgradcheck(torch.bmm, (p, q)) and gradgradcheck(torch.dot, (v, w))


@given(st.data())
def test_outer_inner_values_and_gradients(data):
    v = data.draw(tensors(shapes(1, 1, 1, 4), requires_grad=True))
    w = data.draw(tensors(shapes(1, 1, 1, 4), requires_grad=True))
    np.testing.assert_allclose(arr(torch.outer(v, w)), np.outer(arr(v), arr(w)), atol=1e-12)
    np.testing.assert_allclose(arr(torch.ger(v, w)), np.outer(arr(v), arr(w)), atol=1e-12)
    assert gradcheck(torch.outer, (v, w)) and gradgradcheck(torch.outer, (v, w))
    k = data.draw(st.integers(1, 3))
    a = data.draw(tensors(shapes(0, 2, 1, 3).map(lambda s: s + (k,)), requires_grad=True))
    b = data.draw(tensors(shapes(0, 2, 1, 3).map(lambda s: s + (k,)), requires_grad=True))
    np.testing.assert_allclose(arr(torch.inner(a, b)), np.inner(arr(a), arr(b)), atol=1e-12)
    assert gradcheck(torch.inner, (a, b))


def test_outer_error_and_inner_scalar():
    with pytest.raises(RuntimeError, match="outer: Expected 1-D argument self, but got 2-D"):
        torch.outer(torch.zeros(2, 2), torch.zeros(2))
    assert torch.inner(torch.tensor(2.0), torch.tensor([1.0, 3.0])).tolist() == [2.0, 6.0]


@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, -2.0), (0, 3.0)])
def test_addmm_family(device, beta, alpha):
    mat1, mat2, vec = rand(2, 3, device=device), rand(3, 4, device=device), rand(3, device=device)
    b1, b2 = rand(5, 2, 3, device=device), rand(5, 3, 4, device=device)
    cases = [  # (function, its inputs, the product numpy computes)
        (torch.addmm, (rand(4, device=device), mat1, mat2), np.matmul),
        (torch.addmv, (rand(2, device=device), mat1, vec), np.matmul),
        (torch.addr, (rand(2, 1, device=device), rand(2, device=device), rand(4, device=device)), np.outer),
        (torch.baddbmm, (rand(1, 2, 4, device=device), b1, b2), np.matmul),
        (torch.addbmm, (rand(2, 4, device=device), b1, b2), lambda x, y: (x @ y).sum(0)),
    ]
    for fn, (inp, x, y), product in cases:
        out = fn(inp, x, y, beta=beta, alpha=alpha)
        expected = alpha * product(arr(x.cpu()), arr(y.cpu())) + beta * arr(inp.cpu())
        np.testing.assert_allclose(out.cpu().numpy(force=True), expected, atol=1e-12)
        assert gradcheck(lambda i, a, b: fn(i, a, b, beta=beta, alpha=alpha), (inp, x, y))


def test_addmm_beta_zero_ignores_nan():
    nan_input = torch.full((2, 2), math.nan, dtype=torch.float64)
    out = torch.addmm(nan_input, torch.eye(2, dtype=torch.float64), torch.eye(2, dtype=torch.float64), beta=0)
    assert out.tolist() == [[1.0, 0.0], [0.0, 1.0]]


EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("ij->", [(2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,i->", [(4,), (4,)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("...ij,...jk", [(2, 2, 3), (3, 4)]),
    ("...ij,...jk->...ik", [(1, 2, 3), (4, 3, 2)]),
    ("i...->...", [(2, 3, 4)]),
    ("ij,ij->i", [(3, 1), (3, 4)]),
    ("ijk,jil->kl", [(2, 3, 2), (3, 2, 4)]),
]


@pytest.mark.parametrize("equation, operand_shapes", EINSUM_CASES)
def test_einsum_matches_numpy_and_gradchecks(equation, operand_shapes):
    operands = [rand(*s, seed=i) for i, s in enumerate(operand_shapes)]
    out = torch.einsum(equation, *operands)
    arrays = [arr(o) for o in operands]
    if equation.startswith("...ij,...jk->") or equation == "ij,ij->i":
        expected = np.einsum(equation, *[np.broadcast_to(a, np.broadcast_shapes(*(b.shape for b in arrays)))
                                         if equation == "ij,ij->i" else a for a in arrays])
    else:
        expected = np.einsum(equation, *arrays)
    np.testing.assert_allclose(arr(out), expected, atol=1e-12)
    assert gradcheck(lambda *xs: torch.einsum(equation, *xs), operands)
    assert gradgradcheck(lambda *xs: torch.einsum(equation, *xs), operands)


@settings(max_examples=10)
@given(st.data())
def test_einsum_batched_contraction_on_drawn_layouts(data):
    b, i, j, k = (data.draw(st.integers(1, 3)) for _ in range(4))
    x = data.draw(tensors((b, i, j), requires_grad=True))
    y = data.draw(tensors((b, j, k), requires_grad=True))
    np.testing.assert_allclose(arr(torch.einsum("bij,bjk->bki", x, y)), np.einsum("bij,bjk->bki", arr(x), arr(y)),
                               atol=1e-12)
    assert gradcheck(lambda p, q: torch.einsum("bij,bjk->bki", p, q), (x, y))


def test_einsum_list_and_sublist_forms(device):
    x, y = rand(2, 3, device=device), rand(3, 4, device=device)
    expected = arr(x.cpu()) @ arr(y.cpu())
    np.testing.assert_allclose(torch.einsum("ij,jk->ik", [x, y]).cpu().numpy(force=True), expected, atol=1e-12)
    np.testing.assert_allclose(torch.einsum(x, [0, 1], y, [1, 2], [0, 2]).cpu().numpy(force=True), expected,
                               atol=1e-12)


def test_einsum_without_a_sum_over_one_operand_is_a_view_as_in_pytorch():
    """PyTorch's einsum permutes (and takes diagonals of) a single operand without copying: the result is a view."""
    x = torch.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    y = torch.einsum("ij->ji", x)
    assert y._base is x and y.stride() == (1, 3)
    y[0, 1] = -1.0
    assert x.tolist() == [[0.0, 1.0, 2.0], [-1.0, 4.0, 5.0]]
    d = torch.einsum("ii->i", torch.zeros(3, 3))
    assert d._base is not None and d.stride() == (4,)


@pytest.mark.parametrize("equation, strides", [
    ("bij,bkj->bik", (15, 5, 1)), ("bij,bkj->bki", (15, 3, 1)), ("bij,bkj->kbi", (3, 15, 1)),
    ("bij,bkj->ikb", (5, 1, 15)),
])
def test_einsum_output_layout_follows_pytorchs_batched_product(equation, strides):
    """PyTorch 2.13 lays out a contracted pair as its bmm does (fuzzer seed 87936: view() after einsum): shared
    dims outermost, then the dims of the operand holding the first remaining output dim (measured strides)."""
    a, b = torch.ones(2, 3, 4), torch.ones(2, 5, 4)
    assert torch.einsum(equation, a, b).stride() == strides
    assert torch.einsum("ijl,jk->ikl", torch.ones(3, 4, 6), torch.ones(4, 5)).stride() == (30, 1, 5)
    c, d = torch.ones(2, 3), torch.ones(3, 2).t()
    assert torch.einsum("ij,kj->ki", c, d).stride() == (2, 1)
    assert torch.einsum("ij,ij->ij", d, c).stride() == (1, 2)  # nothing summed: a product, laid out as mul


def test_einsum_keeps_an_operand_only_for_the_others_gradient():
    """As PyTorch's mul/bmm: writing into an operand whose partner needs no gradient is allowed."""
    x = torch.ones(2, 3, requires_grad=True)
    w = torch.full((4, 3), 2.0)
    y = torch.einsum("ij,kj->ik", x, w)
    x.detach().mul_(5)  # x is not kept for its own gradient
    y.sum().backward()
    assert x.grad.tolist() == [[8.0, 8.0, 8.0]] * 2
    y = torch.einsum("ij,kj->ik", x, w)
    w.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize(
    "equation, operand_shapes, message",
    [
        ("ij,jk->ik", [(2, 3)], "fewer operands were provided than specified in the equation"),
        ("ij->ij", [(2, 3), (3, 4)], "more operands were provided than specified in the equation"),
        ("ijk->i", [(2, 3)], r"the number of subscripts in the equation \(3\) does not match the number of dimensions"),
        ("ij->ii", [(2, 3)], "output subscript i appears more than once in the output"),
        ("ij->k", [(2, 3)], "output subscript k does not appear in the equation for any input operand"),
        ("ij,jk->ik", [(2, 3), (4, 5)], "subscript j has size 4 for operand 1"),
        ("ii->i", [(2, 3)], "subscript i is repeated for operand 0 but the sizes don't match"),
    ],
)
def test_einsum_errors(equation, operand_shapes, message):
    with pytest.raises(RuntimeError, match=message):
        torch.einsum(equation, *[torch.zeros(s) for s in operand_shapes])


@pytest.mark.parametrize(
    "shape_a, shape_b, dims",
    [((2, 3, 4), (3, 4, 5), 2), ((2, 3), (3, 4), 1), ((2, 3), (4, 5), 0), ((3, 4, 2), (2, 3, 5), ([0, 2], [1, 0]))],
)
def test_tensordot(shape_a, shape_b, dims):
    a, b = rand(*shape_a), rand(*shape_b, seed=3)
    np.testing.assert_allclose(arr(torch.tensordot(a, b, dims)), np.tensordot(arr(a), arr(b), dims), atol=1e-12)
    assert gradcheck(lambda x, y: torch.tensordot(x, y, dims), (a, b))
    assert gradgradcheck(lambda x, y: torch.tensordot(x, y, dims), (a, b))


def test_tensordot_size_error():
    with pytest.raises(RuntimeError, match="contracted dimensions need to match, but first has size 3 in dim 1"):
        torch.tensordot(torch.zeros(2, 3), torch.zeros(4, 5), dims=([1], [0]))


@given(st.data())
def test_kron(data):
    a = data.draw(tensors(shapes(1, 3, 1, 3), requires_grad=True))
    b = data.draw(tensors(shapes(1, 3, 1, 3), requires_grad=True))
    np.testing.assert_allclose(arr(torch.kron(a, b)), np.kron(arr(a), arr(b)), atol=1e-12)
    assert gradcheck(torch.kron, (a, b))


@given(st.data())
def test_cross(data):
    batch = data.draw(shapes(0, 2, 1, 3))
    a = data.draw(tensors(batch + (3,), requires_grad=True))
    other_batch = data.draw(broadcastable_shapes(batch, min_dims=len(batch), max_dims=len(batch)))
    b = data.draw(tensors(other_batch + (3,), requires_grad=True))
    expected = np.cross(arr(a), arr(b))
    np.testing.assert_allclose(arr(torch.linalg.cross(a, b)), expected, atol=1e-12)
    np.testing.assert_allclose(arr(torch.cross(a, b, dim=-1)), expected, atol=1e-12)
    assert gradcheck(torch.linalg.cross, (a, b)) and gradgradcheck(torch.linalg.cross, (a, b))


def test_cross_errors():
    with pytest.raises(RuntimeError, match="linalg.cross: inputs dimension -1 must have length 3. Got 2 and 2"):
        torch.linalg.cross(torch.zeros(2), torch.zeros(2))


def test_multi_dot_and_chain_matmul():
    mats = [rand(1 + i, 2 + i, seed=i) for i in range(3)] + [rand(4, 2)]
    vec_first, vec_last = rand(1), rand(2, seed=9)
    expected = arr(mats[0]) @ arr(mats[1]) @ arr(mats[2]) @ arr(mats[3])
    np.testing.assert_allclose(arr(torch.linalg.multi_dot(mats)), expected, atol=1e-12)
    np.testing.assert_allclose(arr(torch.chain_matmul(*mats)), expected, atol=1e-12)
    assert gradcheck(lambda *m: torch.linalg.multi_dot(m), mats)
    out = torch.linalg.multi_dot([vec_first] + mats + [vec_last])
    assert out.dim() == 0
    with pytest.raises(RuntimeError, match="multi_dot\\(\\): expected at least 2 tensors but got 1"):
        torch.linalg.multi_dot([mats[0]])


def test_batched_matmul_and_linear_backward_with_an_empty_inner_or_output_dim():
    # PyTorch: the gradients are empty (or zero) tensors of the operands' shapes
    a = torch.zeros(1, 1, 1)
    b = torch.zeros(1, 0, requires_grad=True)
    torch.matmul(a, b).sum().backward()
    assert b.grad.shape == (1, 0)
    c = torch.zeros(2, 2, 0)
    d = torch.zeros(0, 3, requires_grad=True)
    torch.matmul(c, d).sum().backward()
    assert d.grad.shape == (0, 3)
    x = torch.zeros(1, 1, 0)
    w = torch.zeros(3, 0, requires_grad=True)
    torch.nn.functional.linear(x, w, torch.zeros(3)).sum().backward()
    assert w.grad.shape == (3, 0)
    x = torch.ones(2, 2, 3, requires_grad=True)
    w = torch.zeros(0, 3, requires_grad=True)
    torch.nn.functional.linear(x, w).sum().backward()
    assert w.grad.shape == (0, 3) and x.grad.tolist() == torch.zeros(2, 2, 3).tolist()


def test_linear_of_a_contiguous_non_matrix_input_is_a_view_of_one_addmm():
    """PyTorch's _flatten_nd_linear: a contiguous 1-D or N-D input with a bias goes through one matrix product
    and comes back as a view, so a write into the output goes through CopySlices; with create_graph the bias's
    gradient then keeps a graph (fuzzer seed 228923)."""
    F = torch.nn.functional
    bias = torch.zeros(3, requires_grad=True)
    out = F.linear(torch.tensor([0.0, 0.0]), torch.zeros(3, 2), bias)
    assert out._base is not None and out.grad_fn.name() == "ViewBackward0"
    out[:] = torch.zeros(3)
    (g,) = torch.autograd.grad(torch.softmax(out, 0).sum(), [bias], create_graph=True)
    assert g.tolist() == [0.0, 0.0, 0.0] and g.requires_grad
    assert F.linear(torch.zeros(4, 5, 2), torch.zeros(3, 2), bias)._base is not None
    assert F.linear(torch.zeros(4, 2), torch.zeros(3, 2), bias)._base is None
    assert F.linear(torch.zeros(2, 4).t(), torch.zeros(3, 2), bias)._base is None  # 2-D: one addmm
    assert F.linear(torch.zeros(5, 2, 4).transpose(1, 2), torch.zeros(3, 2), bias)._base is None  # matmul + add


def test_einsum_result_is_a_view_as_pytorchs():
    """PyTorch's einsum returns a view of its bmm's output: a write into it goes through CopySlices and keeps the
    gradient connected under create_graph (fuzzer seeds 665076, 737387)."""
    x1 = torch.tensor([0.0], dtype=torch.float64)
    x2 = torch.tensor([0.0], dtype=torch.float64, requires_grad=True)
    out = torch.einsum("i,i->", x1, x2)
    assert out.grad_fn.name() == "ViewBackward0" and out._base is not None
    out[...] = 0.001
    (g,) = torch.autograd.grad(torch.tanh(out), [x2], create_graph=True)
    assert g.requires_grad and g.tolist() == [0.0]
