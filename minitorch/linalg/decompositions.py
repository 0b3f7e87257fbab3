"""Matrix decompositions: cholesky, qr, eigh/eigvalsh, eig/eigvals, svd/svdvals.

The backward rules are PyTorch's (FunctionsManual.cpp), written with differentiable ops so they can
be differentiated again. They assume what PyTorch assumes: distinct eigenvalues / singular values;
symmetric input to eigh and cholesky (only one triangle is read); for qr, the reduced mode with
m >= n (or any m <= n); for svd with ``full_matrices=True``, only the first min(m, n) columns of U and
rows of Vh carry gradient. Eigenvectors and singular vectors are defined up to sign, so only
losses invariant to those signs have meaningful gradients.

minitorch has no complex dtypes: ``eig``/``eigvals`` return real tensors when every eigenvalue is
real and raise a RuntimeError otherwise.
"""

from __future__ import annotations

from .._backends import backend_for
from .._device import device
from ..ops.op import Op
from ..tensor import Tensor
from ._support import (
    MultiOutputOp,
    check_floating,
    check_matrix,
    check_square_floating,
    cholesky_factor,
    convergence_error,
    diag_embed,
    grad_wanted,
    identity_like,
    is_linalg_error,
    lapack,
    linalg_eig,
    linalg_eigh,
    linalg_qr,
    linalg_svd,
    not_positive_definite_error,
    tril,
)
from .inverses import solve


def _off_diagonal(op: Op, A: Tensor) -> Tensor:
    return A * (1 - identity_like(op, A))


def _solve_right(X: Tensor, R: Tensor) -> Tensor:
    """``X R^-T``, i.e. the Y with ``Y R^T = X``."""
    return solve(R, X.mT).mT


# cholesky ------------------------------------------------------------------------------------


class Cholesky(Op):
    """L with A = L L^T (reads the lower triangle). Backward (Murray 2016, as PyTorch):
    gA = L^-T Phi(L^T gL) L^-1, with Phi the symmetric part of the lower triangle."""

    save_output = True

    def forward(self, A, upper, name="linalg.cholesky"):
        self.upper = upper
        try:
            L = lapack(self, lambda matrix: cholesky_factor(self.xp, matrix), A)
        except Exception as error:
            if not is_linalg_error(error):
                raise
            raise not_positive_definite_error(self, name, A) from None
        return self.xp.swapaxes(L, -1, -2) if upper else L

    def backward(self, grad):
        (L,) = self.saved_tensors
        if self.upper:
            L, grad = L.mT, grad.mT
        P = tril(self, L.mT @ grad)
        P = 0.5 * (P + tril(self, P, -1).mT)
        return _solve_right(solve(L.mT, P), L.mT)


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """The Cholesky factor of a batch of symmetric positive-definite matrices (lower, or upper = L^T)."""
    check_square_floating("linalg.cholesky", A)
    return Cholesky.apply(A, upper)


# qr ------------------------------------------------------------------------------------------


class QR(MultiOutputOp):
    """A = QR. Backward for m >= n: gA = (gQ + Q copyltu(M)) R^-T with M = R gR^T - gQ^T Q, where
    copyltu mirrors the lower triangle; for m < n, the square left block is handled that way and the
    rest is Q gR2 (PyTorch's derivation)."""

    def name(self) -> str:
        return "LinalgQrBackward0"

    def forward(self, A, mode):
        self.mode = mode
        xp = self.xp
        if mode == "r":
            R = lapack(self, lambda a: xp.linalg.qr(a, mode="r"), A)
            return xp.zeros((0,), dtype=A.dtype), R
        return tuple(lapack(self, lambda a: xp.linalg.qr(a, mode=mode), A))

    def backward(self, grad_Q, grad_R):
        if self.mode == "r":
            raise RuntimeError(
                "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr."
            )
        Q, R = self.saved_tensors
        m, n = Q._array.shape[-2], R._array.shape[-1]
        if self.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        if m >= n:
            return self._square_or_tall(grad_Q, grad_R, Q, R)
        # m < n: A = [A1 A2], R = [U V]; A1 = Q U is square, V = Q^T A2
        A2 = Q @ R.narrow(-1, m, n - m)
        grad_U = grad_V = None
        if grad_R is not None:
            grad_U, grad_V = grad_R.narrow(-1, 0, m), grad_R.narrow(-1, m, n - m)
        if grad_V is not None:
            grad_Q = A2 @ grad_V.mT if grad_Q is None else grad_Q + A2 @ grad_V.mT
        grad_A1 = self._square_or_tall(grad_Q, grad_U, Q, R.narrow(-1, 0, m))
        # place the blocks side by side: [gA1 gA2] = gA1 [I 0] + gA2 [0 I]
        eye = identity_like(self, R, n)
        result = grad_A1 @ eye.narrow(0, 0, m)
        if grad_V is not None:
            result = result + (Q @ grad_V) @ eye.narrow(0, m, n - m)
        return result

    def _square_or_tall(self, grad_Q, grad_R, Q, R):
        M = None
        if grad_R is not None:
            M = R @ grad_R.mT
        if grad_Q is not None:
            M = -(grad_Q.mT @ Q) if M is None else M - grad_Q.mT @ Q
        lower = tril(self, M)
        inner = Q @ (lower + tril(self, M, -1).mT)
        return _solve_right(inner if grad_Q is None else inner + grad_Q, R)


def qr(A: Tensor, mode: str = "reduced"):
    """``(Q, R)`` with Q orthonormal columns and R upper triangular; mode 'reduced', 'complete' or 'r'
    (then Q is an empty tensor, as in PyTorch)."""
    name = "linalg.qr"
    check_matrix(name, A)
    check_floating(name, A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           f"or 'complete'")
    return linalg_qr(*QR.apply(A, mode))


# eigh ----------------------------------------------------------------------------------------


class Eigh(MultiOutputOp):
    """Symmetric eigendecomposition A = V diag(L) V^T (ascending L). Backward (PyTorch's):
    gA = V (diag(gL) + offdiag(skew(V^T gV) / 2 / E)) V^T with E_ij = L_j - L_i."""

    def forward(self, A, UPLO):
        try:
            L, V = lapack(self, lambda a: self.xp.linalg.eigh(a, UPLO=UPLO), A)
        except Exception as error:
            if not is_linalg_error(error):
                raise
            raise convergence_error("linalg.eigh", "eigenvalues") from None
        return L, V

    def backward(self, grad_L, grad_V):
        L, V = self.saved_tensors
        inner = None
        if grad_V is not None:
            VtgV = V.mT @ grad_V
            E = L.unsqueeze(-2) - L.unsqueeze(-1) + identity_like(self, V)
            inner = _off_diagonal(self, 0.5 * (VtgV - VtgV.mT) / E)
        if grad_L is not None:
            inner = diag_embed(self, grad_L) if inner is None else inner + diag_embed(self, grad_L)
        return V @ inner @ V.mT


def _check_uplo(name: str, UPLO: str) -> None:
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"{name}: Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


def eigh(A: Tensor, UPLO: str = "L"):
    """``(eigenvalues, eigenvectors)`` of a batch of symmetric matrices, eigenvalues ascending; only the
    ``UPLO`` triangle of A is read."""
    check_square_floating("linalg.eigh", A)
    _check_uplo("linalg.eigh", UPLO)
    return linalg_eigh(*Eigh.apply(A, UPLO))


class Eigvalsh(Op):
    def forward(self, A, UPLO):
        try:
            return lapack(self, lambda a: self.xp.linalg.eigvalsh(a, UPLO=UPLO), A)
        except Exception as error:
            if not is_linalg_error(error):
                raise
            raise convergence_error("linalg.eigvalsh", "eigenvalues") from None


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """Eigenvalues of a symmetric matrix (ascending); differentiable through ``eigh`` when needed."""
    check_square_floating("linalg.eigvalsh", A)
    _check_uplo("linalg.eigvalsh", UPLO)
    if grad_wanted(A):
        return Eigh.apply(A, UPLO)[0]
    return Eigvalsh.apply(A, UPLO)


# eig -----------------------------------------------------------------------------------------


def _general_eig(op: Op, A, vectors: bool):
    """``xp.linalg.eig`` (or eigvals), on the host when the array library has none (CuPy); complex
    results are refused, since minitorch has no complex dtypes."""
    name = "linalg.eig" if vectors else "linalg.eigvals"
    xp = op.xp
    function = getattr(xp.linalg, "eig" if vectors else "eigvals", None)
    host = None
    if function is None:
        host = backend_for(_cpu())
        function = getattr(host.xp.linalg, "eig" if vectors else "eigvals")
        A = op.backend.to_numpy(A)
    try:
        result = lapack(op, function, A)
    except Exception as error:
        if not is_linalg_error(error):
            raise
        raise convergence_error(name, "eigenvalues") from None
    values = result[0] if vectors else result
    if values.dtype.kind == "c":
        raise RuntimeError(
            f"{name}: the input has complex eigenvalues, and minitorch has no complex dtypes; only matrices "
            f"whose eigenvalues are all real are supported (e.g. symmetric ones: use linalg.eigh)"
        )
    if host is not None:
        result = tuple(op.backend.from_numpy(r) for r in result) if vectors else op.backend.from_numpy(result)
    return tuple(r.astype(A.dtype, copy=False) for r in result) if vectors else result.astype(A.dtype, copy=False)


def _cpu():
    return device("cpu")


class Eig(MultiOutputOp):
    """A = V diag(L) V^-1 with real L and V (unit columns). Backward (PyTorch's non-symmetric rule):
    gA = V^-T (diag(gL) + offdiag((V^T gV - V^T V diag(diag(V^T gV))) / E)) V^T, E_ij = L_j - L_i."""

    def forward(self, A):
        return _general_eig(self, A, vectors=True)

    def backward(self, grad_L, grad_V):
        L, V = self.saved_tensors
        inner = None
        if grad_V is not None:
            VtgV = V.mT @ grad_V
            diagonal = VtgV.diagonal(0, -2, -1)
            VtgV = VtgV - V.mT @ (V * diagonal.unsqueeze(-2))
            E = L.unsqueeze(-2) - L.unsqueeze(-1) + identity_like(self, V)
            inner = _off_diagonal(self, VtgV / E)
        if grad_L is not None:
            inner = diag_embed(self, grad_L) if inner is None else inner + diag_embed(self, grad_L)
        return solve(V.mT, inner @ V.mT)


def eig(A: Tensor):
    """``(eigenvalues, eigenvectors)`` of a general square matrix whose eigenvalues are all real."""
    check_square_floating("linalg.eig", A)
    return linalg_eig(*Eig.apply(A))


class Eigvals(Op):
    def forward(self, A):
        return _general_eig(self, A, vectors=False)


def eigvals(A: Tensor) -> Tensor:
    """Eigenvalues of a general square matrix whose eigenvalues are all real (else RuntimeError)."""
    check_square_floating("linalg.eigvals", A)
    if grad_wanted(A):
        return Eig.apply(A)[0]
    return Eigvals.apply(A)


# svd -----------------------------------------------------------------------------------------


class SVD(MultiOutputOp):
    """A = U diag(S) Vh. Backward: PyTorch's svd_backward (distinct singular values); with
    ``full_matrices`` only the leading min(m, n) singular vectors enter it."""

    def name(self) -> str:  # svd and svdvals: one node in PyTorch
        return "LinalgSvdBackward0"

    def forward(self, A, full_matrices):
        self.full_matrices = full_matrices
        try:
            return tuple(lapack(self, lambda a: self.xp.linalg.svd(a, full_matrices=full_matrices), A))
        except Exception as error:
            if not is_linalg_error(error):
                raise
            raise convergence_error("linalg.svd", "singular values") from None

    def backward(self, grad_U, grad_S, grad_Vh):
        U, S, Vh = self.saved_tensors
        k = S._array.shape[-1]
        if self.full_matrices:
            U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)
            grad_U = None if grad_U is None else grad_U.narrow(-1, 0, k)
            grad_Vh = None if grad_Vh is None else grad_Vh.narrow(-2, 0, k)
        return svd_backward(self, grad_U, grad_S, grad_Vh, U, S, Vh)


def svd_backward(op: Op, grad_U, grad_S, grad_Vh, U, S, Vh):
    m, n = U._array.shape[-2], Vh._array.shape[-1]
    if grad_U is None and grad_Vh is None:
        return U @ (grad_S.unsqueeze(-1) * Vh) if m >= n else (U * grad_S.unsqueeze(-2)) @ Vh
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + identity_like(op, S)
    UtgU = None if grad_U is None else U.mT @ grad_U
    VtgV = None if grad_Vh is None else Vh @ grad_Vh.mT
    if UtgU is not None:
        UtgU = UtgU - UtgU.mT
    if VtgV is not None:
        VtgV = VtgV - VtgV.mT
    if UtgU is not None and VtgV is not None:
        inner = (UtgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VtgV) / E
    elif VtgV is None:
        inner = (UtgU / E) * S.unsqueeze(-2)
    else:
        inner = S.unsqueeze(-1) * (VtgV / E)
    inner = _off_diagonal(op, inner)
    if grad_S is not None:
        inner = inner + diag_embed(op, grad_S)
    if m > n and grad_U is not None:
        gA = U @ inner
        grad_U_scaled = grad_U / S.unsqueeze(-2)
        gA = gA + grad_U_scaled - U @ (U.mT @ grad_U_scaled)
        return gA @ Vh
    if m < n and grad_Vh is not None:
        gA = inner @ Vh
        scaled_grad_Vh = grad_Vh / S.unsqueeze(-1)
        gA = gA + scaled_grad_Vh - (scaled_grad_Vh @ Vh.mT) @ Vh
        return U @ gA
    return U @ (inner @ Vh) if m >= n else (U @ inner) @ Vh


def svd(A: Tensor, full_matrices: bool = True, *, driver=None):
    """``(U, S, Vh)`` with singular values S descending."""
    name = "linalg.svd"
    check_matrix(name, A)
    check_floating(name, A)
    return linalg_svd(*SVD.apply(A, bool(full_matrices)))


class Svdvals(Op):
    def forward(self, A):
        try:
            return lapack(self, lambda a: self.xp.linalg.svd(a, compute_uv=False), A)
        except Exception as error:
            if not is_linalg_error(error):
                raise
            raise convergence_error("linalg.svdvals", "singular values") from None


def svdvals(A: Tensor, *, driver=None) -> Tensor:
    """Singular values, descending; differentiable through ``svd`` when needed."""
    name = "linalg.svdvals"
    check_matrix(name, A)
    check_floating(name, A)
    if grad_wanted(A):
        return SVD.apply(A, False)[1]
    return Svdvals.apply(A)


__all__ = ["cholesky", "qr", "eigh", "eigvalsh", "eig", "eigvals", "svd", "svdvals"]
