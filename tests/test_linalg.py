"""minitorch.linalg: values against numpy.linalg, gradcheck/gradgradcheck in float64 (on transposed and
strided layouts too), PyTorch's error messages, and the meta device.

Decompositions are checked on fixed-seed random matrices with distinct eigenvalues / singular values.
Eigenvectors and singular vectors are only defined up to sign, so their gradient checks go through
sign-invariant functions (``V * V``, ``U @ Vh``, reconstructions)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch as torch
from minitorch import linalg
from minitorch.autograd import gradcheck, gradgradcheck
from minitorch.testing.strategies import tensors

LAYOUTS = ("contiguous", "transposed", "strided")


def arr(t):
    return t.detach().cpu().numpy()


def as_tensor(values, layout="contiguous", device="cpu", requires_grad=True):
    """``values`` as a float64 tensor stored in the given layout (same values, different strides)."""
    values = np.asarray(values, dtype=np.float64)
    if layout == "transposed" and values.ndim >= 2:
        t = torch.tensor(np.ascontiguousarray(np.swapaxes(values, -1, -2)), dtype=torch.float64, device=device).mT
    elif layout == "strided" and values.ndim >= 1:
        doubled = np.repeat(values, 2, axis=-1)
        t = torch.tensor(doubled, dtype=torch.float64, device=device)[..., ::2]
    else:
        t = torch.tensor(values, dtype=torch.float64, device=device)
    return t.detach().requires_grad_(requires_grad)


def random(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def well_conditioned(n, batch=(), seed=0):
    return random(*batch, n, n, seed=seed) + 3 * np.eye(n)


def symmetric(a):
    return a + a.mT


def positive_definite(a):
    return a @ a.mT + torch.eye(a.shape[-1], dtype=a.dtype, device=a.device)


# solve, inv, det -------------------------------------------------------------------------------


@given(st.integers(1, 4), st.sampled_from([(), (2,)]), st.integers(1, 3), st.data())
def test_solve_inv_det_on_drawn_layouts(n, batch, k, data):
    noise = data.draw(tensors(batch + (n, n), min_value=-1, max_value=1))
    A = (noise + (n + 1) * torch.eye(n, dtype=torch.float64)).detach()  # strictly diagonally dominant: invertible
    A = data.draw(st.sampled_from([A, A.mT.contiguous().mT])).requires_grad_()
    B = data.draw(tensors(batch + (n, k), requires_grad=True))
    np.testing.assert_allclose(arr(linalg.solve(A, B)), np.linalg.solve(arr(A), arr(B)), atol=1e-10)
    np.testing.assert_allclose(arr(linalg.inv(A)), np.linalg.inv(arr(A)), atol=1e-10)
    np.testing.assert_allclose(arr(linalg.det(A)), np.linalg.det(arr(A)), rtol=1e-10)
    assert gradcheck(linalg.solve, (A, B)) and gradcheck(linalg.inv, (A,)) and gradcheck(linalg.det, (A,))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_solve_broadcasting_vectors_and_left(layout):
    A = as_tensor(well_conditioned(3, (2, 1)), layout)
    B = as_tensor(random(4, 3, 2, seed=1), layout)
    X = linalg.solve(A, B)
    assert tuple(X.shape) == (2, 4, 3, 2)
    np.testing.assert_allclose(arr(X), np.linalg.solve(arr(A), arr(B)), atol=1e-12)
    assert gradcheck(linalg.solve, (A, B)) and gradgradcheck(linalg.solve, (A, B))
    vector = as_tensor(random(3, seed=2), layout)
    np.testing.assert_allclose(arr(linalg.solve(A[0, 0], vector)), np.linalg.solve(arr(A[0, 0]), arr(vector)),
                               atol=1e-12)
    batch_of_vectors = as_tensor(random(2, 3, seed=3), layout)  # shape A.shape[:-1]: a batch of vectors
    A2 = A[:, 0]
    expected = np.linalg.solve(arr(A2), arr(batch_of_vectors)[..., None])[..., 0]
    np.testing.assert_allclose(arr(linalg.solve(A2, batch_of_vectors)), expected, atol=1e-12)
    assert gradcheck(linalg.solve, (A2, batch_of_vectors))
    right = as_tensor(random(2, 3, seed=4), layout)
    X = linalg.solve(A[0, 0], right, left=False)
    np.testing.assert_allclose(arr(X @ A[0, 0]), arr(right), atol=1e-12)
    assert gradcheck(lambda a, b: linalg.solve(a, b, left=False), (A[0, 0], right))


def test_solve_errors(device):
    A = torch.tensor([[1.0, 2.0], [2.0, 4.0]], device=device)
    with pytest.raises(linalg.LinAlgError, match="linalg.solve: The solver failed because the input matrix is "
                                                 "singular."):
        linalg.solve(A, torch.ones(2, 1, device=device))
    with pytest.raises(RuntimeError, match=r"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                                           r"\(2x2 and 3x1\)"):
        linalg.solve(torch.eye(2, device=device), torch.ones(3, 1, device=device))
    with pytest.raises(RuntimeError, match="linalg.solve: Expected A and B to have the same dtype, but found A of "
                                           "type Float and B of type Double instead"):
        linalg.solve(torch.eye(2, device=device), torch.ones(2, 1, dtype=torch.float64, device=device))
    with pytest.raises(RuntimeError, match="linalg.solve: A must be batches of square matrices, but they are 2 by 3 "
                                           "matrices"):
        linalg.solve(torch.ones(2, 3, device=device), torch.ones(2, 1, device=device))
    with pytest.raises(RuntimeError, match="linalg.inv: Expected a floating point or complex tensor as input. "
                                           "Got Long"):
        linalg.inv(torch.ones(2, 2, dtype=torch.int64, device=device))
    with pytest.raises(RuntimeError, match="linalg.inv: The input tensor A must have at least 2 dimensions."):
        linalg.inv(torch.ones(2, device=device))
    assert A.tolist() == [[1.0, 2.0], [2.0, 4.0]]


def test_inv_values_gradients_and_singular_messages(device):
    A = as_tensor(well_conditioned(3, (2,)), device=device)
    np.testing.assert_allclose(arr(linalg.inv(A)), np.linalg.inv(arr(A)), atol=1e-12)
    np.testing.assert_allclose(arr(torch.inverse(A)), np.linalg.inv(arr(A)), atol=1e-12)
    assert gradgradcheck(linalg.inv, (A,))
    singular = torch.tensor([[1.0, 2.0], [2.0, 4.0]], device=device)
    with pytest.raises(linalg.LinAlgError, match="linalg.inv: The diagonal element 2 is zero, the inversion could "
                                                 "not be completed because the input matrix is singular."):
        linalg.inv(singular)
    batch = torch.tensor([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 1.0]]], device=device)
    with pytest.raises(RuntimeError, match=r"linalg.inv: \(Batch element 1\): The diagonal element 1 is zero"):
        linalg.inv(batch)


def test_det_values_gradients_and_singular_gradient(device):
    A = as_tensor(well_conditioned(3, (2,)), "transposed", device=device)
    np.testing.assert_allclose(arr(torch.det(A)), np.linalg.det(arr(A)), rtol=1e-12)
    assert gradgradcheck(linalg.det, (A,))
    singular = torch.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=torch.float64, device=device, requires_grad=True)
    linalg.det(singular).backward()
    np.testing.assert_allclose(arr(singular.grad), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)  # the cofactors
    rank_two = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])  # LU meets an exact zero pivot
    cofactors = np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(rank_two, i, 0), j, 1))
                           for j in range(3)] for i in range(3)])
    x = as_tensor(rank_two, device=device)
    assert linalg.det(x).item() == 0.0
    linalg.det(x).backward()
    np.testing.assert_allclose(arr(x.grad), cofactors, atol=1e-9)


def test_slogdet_and_logdet(device):
    A = as_tensor(well_conditioned(3, (2,), seed=5) * np.array([1, -1])[:, None, None], device=device)
    sign, logabsdet = linalg.slogdet(A)
    expected_sign, expected_log = np.linalg.slogdet(arr(A))
    np.testing.assert_allclose(arr(sign), expected_sign)
    np.testing.assert_allclose(arr(logabsdet), expected_log, atol=1e-12)
    assert linalg.slogdet(A).logabsdet is not None and torch.slogdet(A).sign is not None
    assert gradcheck(lambda a: linalg.slogdet(a)[1], (A,)) and gradgradcheck(lambda a: linalg.slogdet(a)[1], (A,))
    logdet = torch.logdet(A)
    signs = np.sign(np.linalg.det(arr(A)))
    assert math.isnan(logdet.tolist()[int(np.argmin(signs))])
    np.testing.assert_allclose(logdet.tolist()[int(np.argmax(signs))], expected_log[np.argmax(signs)])


@pytest.mark.parametrize("n", [0, 1, 2, 3, -2])
def test_matrix_power(n):
    A = as_tensor(well_conditioned(3, (2,), seed=6) / 3)
    expected = np.linalg.matrix_power(arr(A), n)
    np.testing.assert_allclose(arr(linalg.matrix_power(A, n)), expected, atol=1e-12)
    np.testing.assert_allclose(arr(A.matrix_power(n)), expected, atol=1e-12)
    if n:
        assert gradcheck(lambda a: linalg.matrix_power(a, n), (A,))


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
def test_pinv(shape):
    A = as_tensor(random(*shape, seed=7), "transposed")
    np.testing.assert_allclose(arr(linalg.pinv(A)), np.linalg.pinv(arr(A)), atol=1e-12)
    np.testing.assert_allclose(arr(torch.pinverse(A)), np.linalg.pinv(arr(A)), atol=1e-12)
    assert gradcheck(linalg.pinv, (A,)) and gradgradcheck(linalg.pinv, (A,))


def test_pinv_rank_deficient_and_hermitian():
    low_rank = random(4, 1, seed=8) @ random(1, 3, seed=9)
    A = as_tensor(low_rank)
    np.testing.assert_allclose(arr(linalg.pinv(A)), np.linalg.pinv(low_rank), atol=1e-12)
    assert gradcheck(lambda a: linalg.pinv(a, atol=1e-3), (A,))  # perturbations stay below the cutoff: rank 1
    S = random(3, 3, seed=10)
    S = S + S.T
    np.testing.assert_allclose(arr(linalg.pinv(as_tensor(S), hermitian=True)), np.linalg.pinv(S), atol=1e-12)
    assert int(linalg.matrix_rank(A)) == 1 and int(linalg.matrix_rank(as_tensor(S))) == np.linalg.matrix_rank(S)
    assert linalg.matrix_rank(as_tensor(S), hermitian=True).dtype is torch.int64


# decompositions -------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS)
def test_cholesky(layout):
    X = as_tensor(random(2, 3, 3, seed=11), layout)
    A = positive_definite(X)
    L = linalg.cholesky(A)
    np.testing.assert_allclose(arr(L), np.linalg.cholesky(arr(A)), atol=1e-12)
    np.testing.assert_allclose(arr(linalg.cholesky(A, upper=True)), np.swapaxes(arr(L), -1, -2), atol=1e-12)
    np.testing.assert_allclose(arr(torch.cholesky(A)), arr(L), atol=1e-12)
    assert gradcheck(lambda x: linalg.cholesky(positive_definite(x)), (X,))
    assert gradgradcheck(lambda x: linalg.cholesky(positive_definite(x)), (X,))
    assert gradcheck(lambda x: linalg.cholesky(positive_definite(x), upper=True), (X,))


def test_cholesky_errors(device):
    A = torch.tensor([[1.0, 2.0], [2.0, 1.0]], device=device)
    with pytest.raises(linalg.LinAlgError, match=r"linalg.cholesky: The factorization could not be completed because "
                                                 r"the input is not positive-definite \(the leading minor of order 2 "
                                                 r"is not positive-definite\)."):
        linalg.cholesky(A)
    batch = torch.tensor([[[1.0, 0.0], [0.0, 1.0]], [[-1.0, 0.0], [0.0, 1.0]]], device=device)
    with pytest.raises(RuntimeError, match=r"linalg.cholesky: \(Batch element 1\): .* leading minor of order 1 "):
        linalg.cholesky(batch)


def test_cholesky_of_nan_raises_as_pytorch(device):
    """LAPACK's potrf fails on a NaN pivot (PyTorch raises LinAlgError); numpy's cholesky returned NaNs. The order
    is PyTorch 2.13's: the first diagonal entry of L that the NaN reaches (only the lower triangle is read)."""
    nan = math.nan
    for rows, order in [([[4.0, 1.0], [1.0, nan]], 2), ([[nan, 1.0], [1.0, 3.0]], 1), ([[4.0, 1.0], [nan, 3.0]], 2),
                        ([[4.0, 1.0, 0.0], [1.0, 3.0, 0.0], [nan, 0.0, 2.0]], 3),
                        ([[4.0, 1.0, 0.0], [1.0, -3.0, 0.0], [0.0, 0.0, nan]], 2)]:
        for dtype in (torch.float32, torch.float64):
            A = torch.tensor(rows, dtype=dtype, device=device, requires_grad=True)
            with pytest.raises(linalg.LinAlgError, match=rf"^linalg.cholesky: The factorization could not be "
                                                         rf"completed because the input is not positive-definite "
                                                         rf"\(the leading minor of order {order} is not "):
                linalg.cholesky(A)
    batch = torch.tensor([[[1.0, 0.0], [0.0, 1.0]], [[nan, 1.0], [1.0, 3.0]]], device=device)
    with pytest.raises(RuntimeError, match=r"linalg.cholesky: \(Batch element 1\): .* leading minor of order 1 "):
        linalg.cholesky(batch)
    with pytest.raises(linalg.LinAlgError, match=r"^cholesky: The factorization .* leading minor of order 1 "):
        torch.cholesky(torch.tensor([[nan, 1.0], [1.0, 3.0]], device=device))  # the deprecated name, PyTorch's
    upper_nan = torch.tensor([[4.0, nan], [1.0, 3.0]], device=device)  # the upper triangle is not read
    np.testing.assert_allclose(arr(linalg.cholesky(upper_nan)), [[2.0, 0.0], [0.5, 1.6583123951777]], rtol=1e-6)


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 5), (2, 4, 2)])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_qr_reduced(shape, layout):
    A = as_tensor(random(*shape, seed=12), layout)
    Q, R = linalg.qr(A)
    expected_q, expected_r = np.linalg.qr(arr(A))
    np.testing.assert_allclose(arr(Q), expected_q, atol=1e-12)
    np.testing.assert_allclose(arr(R), expected_r, atol=1e-12)
    np.testing.assert_allclose(arr(Q @ R), arr(A), atol=1e-12)
    # LAPACK fixes the gauge (Householder signs), so Q and R themselves are differentiable functions
    assert gradcheck(linalg.qr, (A,)) and gradgradcheck(linalg.qr, (A,))


def test_qr_modes():
    A = as_tensor(random(4, 3, seed=13))
    Q, R = linalg.qr(A, mode="complete")
    assert tuple(Q.shape) == (4, 4) and tuple(R.shape) == (4, 3)
    np.testing.assert_allclose(arr(Q @ R), arr(A), atol=1e-12)
    Q, R = linalg.qr(A, mode="r")
    assert tuple(Q.shape) == (0,) and tuple(R.shape) == (3, 3)
    with pytest.raises(RuntimeError, match="The derivative of linalg.qr depends on Q"):
        R.sum().backward()
    Q, R = linalg.qr(A, mode="complete")
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete' and nrows > ncols"):
        (Q.sum() + R.sum()).backward()
    square = as_tensor(random(3, 3, seed=14))
    assert gradcheck(lambda a: linalg.qr(a, mode="complete"), (square,))
    Q, R = torch.qr(A, some=False)
    assert tuple(Q.shape) == (4, 4)
    with pytest.raises(RuntimeError, match="qr received unrecognized mode 'full'"):
        linalg.qr(A, mode="full")


def _eigh_invariants(a, UPLO="L"):
    values, vectors = linalg.eigh(symmetric(a), UPLO=UPLO)
    return values, vectors * vectors


@pytest.mark.parametrize("layout", LAYOUTS)
def test_eigh(layout):
    X = as_tensor(random(2, 3, 3, seed=15), layout)
    A = symmetric(X)
    values, vectors = linalg.eigh(A)
    expected_values, expected_vectors = np.linalg.eigh(arr(A))
    np.testing.assert_allclose(arr(values), expected_values, atol=1e-12)
    np.testing.assert_allclose(np.abs(arr(vectors)), np.abs(expected_vectors), atol=1e-12)
    np.testing.assert_allclose(arr((vectors * values.unsqueeze(-2)) @ vectors.mT), arr(A), atol=1e-12)
    np.testing.assert_allclose(arr(linalg.eigvalsh(A)), expected_values, atol=1e-12)
    assert gradcheck(_eigh_invariants, (X,)) and gradgradcheck(_eigh_invariants, (X,))
    assert gradcheck(lambda a: _eigh_invariants(a, "U"), (X,))
    assert gradcheck(lambda a: linalg.eigvalsh(symmetric(a)), (X,))


def test_eigh_reads_one_triangle():
    A = random(3, 3, seed=16)
    lower = linalg.eigh(as_tensor(A, requires_grad=False)).eigenvalues
    upper = linalg.eigh(as_tensor(A, requires_grad=False), UPLO="U").eigenvalues
    np.testing.assert_allclose(arr(lower), np.linalg.eigvalsh(A, UPLO="L"), atol=1e-12)
    np.testing.assert_allclose(arr(upper), np.linalg.eigvalsh(A, UPLO="U"), atol=1e-12)
    with pytest.raises(RuntimeError, match="Expected UPLO argument to be 'L' or 'U', but got X"):
        linalg.eigh(as_tensor(A), UPLO="X")


def test_eig_and_eigvals_real_spectrum():
    A = np.diag([1.0, 2.5, 4.0]) + 0.2 * random(3, 3, seed=17)
    x = as_tensor(A, "transposed")
    values, vectors = linalg.eig(x)
    expected = np.linalg.eigvals(A)
    np.testing.assert_allclose(np.sort(arr(values)), np.sort(expected.real), atol=1e-12)
    np.testing.assert_allclose(A @ arr(vectors), arr(vectors) * arr(values), atol=1e-12)
    np.testing.assert_allclose(np.sort(arr(linalg.eigvals(x.detach()))), np.sort(expected.real), atol=1e-12)
    assert gradcheck(linalg.eigvals, (x,)) and gradgradcheck(linalg.eigvals, (x,))
    assert gradcheck(lambda a: linalg.eig(a).eigenvectors ** 2, (x,))


def test_eig_refuses_complex_eigenvalues():
    rotation = torch.tensor([[0.0, -1.0], [1.0, 0.0]])
    with pytest.raises(RuntimeError, match="linalg.eig: the input has complex eigenvalues, and minitorch has no "
                                           "complex dtypes"):
        linalg.eig(rotation)
    with pytest.raises(RuntimeError, match="linalg.eigvals: the input has complex eigenvalues"):
        linalg.eigvals(rotation)


def _svd_invariants(a, full_matrices=False):
    U, S, Vh = linalg.svd(a, full_matrices=full_matrices)
    k = S.shape[-1]
    U, Vh = U[..., :k], Vh[..., :k, :]
    return U @ Vh, S, U * U, Vh * Vh


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 4), (2, 3, 2)])
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_svd(shape, layout):
    A = as_tensor(random(*shape, seed=18), layout)
    U, S, Vh = linalg.svd(A, full_matrices=False)
    np.testing.assert_allclose(arr(S), np.linalg.svd(arr(A), compute_uv=False), atol=1e-12)
    np.testing.assert_allclose(arr((U * S.unsqueeze(-2)) @ Vh), arr(A), atol=1e-12)
    np.testing.assert_allclose(arr(linalg.svdvals(A)), arr(S), atol=1e-12)
    full = linalg.svd(A)
    m, n = shape[-2:]
    assert tuple(full.U.shape[-2:]) == (m, m) and tuple(full.Vh.shape[-2:]) == (n, n)
    assert gradcheck(_svd_invariants, (A,)) and gradgradcheck(_svd_invariants, (A,))
    assert gradcheck(lambda a: _svd_invariants(a, True), (A,))
    assert gradcheck(linalg.svdvals, (A,)) and gradgradcheck(linalg.svdvals, (A,))


def test_old_svd_api():
    A = as_tensor(random(4, 3, seed=19))
    U, S, V = torch.svd(A)
    assert tuple(U.shape) == (4, 3) and tuple(V.shape) == (3, 3)
    np.testing.assert_allclose(arr((U * S) @ V.mT), arr(A), atol=1e-12)
    U, S, V = torch.svd(A, some=False)
    assert tuple(U.shape) == (4, 4) and tuple(V.shape) == (3, 3)
    U, S, V = A.svd(compute_uv=False)
    assert tuple(U.shape) == (4, 4) and not arr(U).any() and not arr(V).any()
    np.testing.assert_allclose(arr(S), np.linalg.svd(arr(A), compute_uv=False), atol=1e-12)


# norms ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("ord", [2, 1, 0, 3, 0.5, math.inf, -math.inf])
def test_vector_norm(ord, device):
    x = as_tensor(random(2, 3, 4, seed=20), "strided", device=device)
    for dim, axis in [(None, None), (-1, -1), ((0, 2), (0, 2))]:
        expected = np.linalg.vector_norm(arr(x), ord=ord, axis=axis)
        result = linalg.vector_norm(x, ord, dim)
        np.testing.assert_allclose(arr(result), expected, rtol=1e-12)
        if ord != 0:
            assert gradcheck(lambda t: linalg.vector_norm(t, ord, dim), (x,))
    kept = linalg.vector_norm(x, 2, (0, 2), keepdim=True)
    assert tuple(kept.shape) == (1, 3, 1)


@pytest.mark.parametrize("ord", ["fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf])
def test_matrix_norm(ord):
    A = as_tensor(random(2, 3, 4, seed=21), "transposed")
    expected = np.linalg.norm(arr(A), ord, axis=(-2, -1))
    np.testing.assert_allclose(arr(linalg.matrix_norm(A, ord)), expected, rtol=1e-12)
    np.testing.assert_allclose(arr(linalg.norm(A, ord, dim=(-2, -1))), expected, rtol=1e-12)
    other_dims = linalg.matrix_norm(A, ord, dim=(2, 0), keepdim=True)
    assert tuple(other_dims.shape) == (1, 3, 1)
    np.testing.assert_allclose(arr(other_dims).reshape(3), np.linalg.norm(arr(A), ord, axis=(2, 0)), rtol=1e-12)
    assert gradcheck(lambda a: linalg.matrix_norm(a, ord), (A,))
    assert gradgradcheck(lambda a: linalg.matrix_norm(a, ord), (A,))


def test_norm_dispatch_and_errors():
    A = as_tensor(random(3, 4, seed=22))
    np.testing.assert_allclose(linalg.norm(A).item(), np.linalg.norm(arr(A)), rtol=1e-12)
    np.testing.assert_allclose(linalg.norm(A, 2).item(), np.linalg.norm(arr(A), 2), rtol=1e-12)
    np.testing.assert_allclose(arr(linalg.norm(A, 3, dim=1)), np.linalg.norm(arr(A), 3, axis=1), rtol=1e-12)
    np.testing.assert_allclose(linalg.norm(A[0], 1).item(), np.linalg.norm(arr(A[0]), 1), rtol=1e-12)
    with pytest.raises(RuntimeError, match="linalg.norm: If dim is not specified but ord is, the input must be 1D or "
                                           "2D. Got 3D."):
        linalg.norm(torch.zeros(2, 2, 2), 2)
    with pytest.raises(RuntimeError, match="linalg.matrix_norm: Order 3 not supported."):
        linalg.matrix_norm(A, 3)
    with pytest.raises(RuntimeError, match="linalg.vector_norm: Expected a floating point or complex tensor as input. "
                                           "Got Long"):
        linalg.vector_norm(torch.ones(3, dtype=torch.int64))
    np.testing.assert_allclose(linalg.vecdot(A[0], A[1]).item(), arr(A[0]) @ arr(A[1]), rtol=1e-12)


# meta -----------------------------------------------------------------------------------------


def test_meta_device_shapes():
    A = torch.empty(5, 3, 3, device="meta")
    B = torch.empty(5, 3, 2, device="meta")
    assert tuple(linalg.solve(A, B).shape) == (5, 3, 2)
    assert tuple(linalg.inv(A).shape) == (5, 3, 3)
    assert tuple(linalg.det(A).shape) == (5,)
    assert tuple(linalg.cholesky(A).shape) == (5, 3, 3)
    assert tuple(linalg.eigh(A).eigenvectors.shape) == (5, 3, 3)
    U, S, Vh = linalg.svd(torch.empty(5, 4, 3, device="meta"), full_matrices=False)
    assert (tuple(U.shape), tuple(S.shape), tuple(Vh.shape)) == ((5, 4, 3), (5, 3), (5, 3, 3))


def test_inf_norm_of_an_empty_tensor_over_a_nonempty_dim():
    # PyTorch: only an empty *reduced* dim has no identity for the inf norms
    x = torch.zeros(0, 1, requires_grad=True)
    y = torch.linalg.vector_norm(x, float("inf"), dim=-1)
    assert y.shape == (0,)
    y.sum().backward()
    assert x.grad.shape == (0, 1)
    assert torch.norm(torch.zeros(0, 1, 1), p=float("inf"), dim=(1, 2)).shape == (0,)
    assert torch.linalg.vector_norm(torch.zeros(0, 1), float("-inf"), dim=1).shape == (0,)
    for call in (lambda: torch.linalg.vector_norm(torch.zeros(0, 1), float("inf"), dim=0),
                 lambda: torch.linalg.vector_norm(torch.zeros(0, 1), float("inf")),
                 lambda: torch.norm(torch.zeros(0, 1), p=float("inf"))):
        with pytest.raises(RuntimeError, match="does not have an identity"):
            call()


def test_vector_norm_ord_0_has_no_gradient():
    """PyTorch's norm_backward returns no gradient for ord 0: x counts as unused (PyTorch 2.13's outcomes)."""
    x = torch.tensor([1.0, 0.0, 2.0], dtype=torch.float64, requires_grad=True)
    for create_graph in (False, True):
        with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
            torch.autograd.grad(linalg.vector_norm(x, 0), x, create_graph=create_graph)
    assert torch.autograd.grad(linalg.vector_norm(x, 0), x, allow_unused=True) == (None,)
    linalg.vector_norm(x, 0).backward()
    assert x.grad is None
    (grad,) = torch.autograd.grad(linalg.vector_norm(x, 0) * 2 + x.sum(), x)
    assert grad.tolist() == [1.0, 1.0, 1.0]
