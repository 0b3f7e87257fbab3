"""Solving and inverting: solve, inv, pinv, matrix_power, and the determinants det and slogdet.

Every rule is the textbook one written with differentiable ops (solve, matmul, transposed views),
so second derivatives come for free:
  X = A^-1 B:      gB = A^-T gX,            gA = -gB X^T
  Y = A^-1:        gA = -Y^T gY Y^T
  d = det A:       gA = g d A^-T           (singular A: g times the cofactor matrix, see Det)
  log|det A|:      gA = g A^-T
"""

from __future__ import annotations

from ..ops.blas import SCALAR_TYPE, _broadcast_shapes, _needs_grad
from ..ops.op import Op
from ..tensor import Tensor, from_array
from ._support import (
    MultiOutputOp,
    check_floating,
    check_matrix,
    check_square,
    check_square_floating,
    is_linalg_error,
    lapack,
    linalg_slogdet,
    singular_error,
)

# solve ----------------------------------------------------------------------------------------


class Solve(Op):
    """``X = A^-1 B`` for batches of square ``A`` and matrices ``B``; batch dims broadcast."""

    save_inputs = (0,)
    save_output = True

    def forward(self, A, B):
        xp = self.xp
        if A.shape[:-2] != B.shape[:-2]:  # not every array library broadcasts solve's batch dims
            batch = _broadcast_shapes(A.shape[:-2], B.shape[:-2])
            A, B = xp.broadcast_to(A, batch + A.shape[-2:]), xp.broadcast_to(B, batch + B.shape[-2:])
        try:
            return lapack(self, xp.linalg.solve, A, B)
        except Exception as error:
            if not is_linalg_error(error):
                raise
            raise singular_error(self, "linalg.solve", A) from None

    def backward(self, grad):
        A, X = self.saved_tensors
        grad_B = solve(A.mT, grad)
        grad_A = -(grad_B @ X.mT) if _needs_grad(self, 0) else None
        return grad_A, grad_B


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """The solution X of ``A X = B`` (``X A = B`` when ``left=False``). ``B`` is a batch of vectors when it
    is 1-D or has the shape ``A.shape[:-1]``, as in PyTorch."""
    name = "linalg.solve"
    check_square_floating(name, A)
    if A._storage.dtype is not B._storage.dtype:
        raise RuntimeError(
            f"{name}: Expected A and B to have the same dtype, but found A of type {SCALAR_TYPE[A.dtype.name]} "
            f"and B of type {SCALAR_TYPE[B.dtype.name]} instead"
        )
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and B._array.shape == A._array.shape[:-1])
    if vector:
        if not left:
            raise RuntimeError(f"{name}: Vector broadcasting of the left hand side is not supported for left=False. "
                               f"In this case linalg.solve is equivalent to B / A.squeeze(-1)")
        B = B.unsqueeze(-1)
    if not left:
        return solve(A.mT, B.mT).mT
    n = A._array.shape[-1]
    if B._array.shape[-2] != n:
        m, k = B._array.shape[-2:]
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation AX = B ({n}x{n} and {m}x{k})")
    X = Solve.apply(A, B)
    return X.squeeze(-1) if vector else X


# inv ------------------------------------------------------------------------------------------


class Inv(Op):
    save_output = True

    def name(self) -> str:  # PyTorch's inv is linalg.inv_ex's node
        return "LinalgInvExBackward0"

    def forward(self, A):
        try:
            return lapack(self, self.xp.linalg.inv, A)
        except Exception as error:
            if not is_linalg_error(error):
                raise
            raise singular_error(self, "linalg.inv", A) from None

    def backward(self, grad):
        (Y,) = self.saved_tensors
        return -(Y.mT @ grad @ Y.mT)


def inv(A: Tensor) -> Tensor:
    """The inverse of a batch of square matrices; singular input raises ``LinAlgError``."""
    check_square_floating("linalg.inv", A)
    return Inv.apply(A)


# pinv -----------------------------------------------------------------------------------------


class Pinv(Op):
    """The Moore-Penrose pseudo-inverse, singular values at most ``max(atol, rtol * s_max)`` dropped.
    The derivative is PyTorch's closed form (correct while the rank does not change)."""

    save_inputs = (0,)
    save_output = True

    def forward(self, A, atol, rtol, hermitian):
        xp = self.xp
        if hermitian:
            values, vectors = lapack(self, xp.linalg.eigh, A)
            magnitude = xp.abs(values)
        else:
            u, magnitude, vh = lapack(self, lambda a: xp.linalg.svd(a, full_matrices=False), A)
        largest = magnitude.max(axis=-1, keepdims=True) if magnitude.shape[-1] else magnitude[..., :1]
        cutoff = xp.maximum(atol, rtol * largest)
        keep = magnitude > cutoff
        if hermitian:
            scale = xp.where(keep, 1 / xp.where(keep, values, 1), 0).astype(A.dtype)
            return xp.matmul(vectors * scale[..., None, :], xp.swapaxes(vectors, -1, -2))
        scale = xp.where(keep, 1 / xp.where(keep, magnitude, 1), 0).astype(A.dtype)
        return xp.matmul(xp.swapaxes(vh, -1, -2) * scale[..., None, :], xp.swapaxes(u, -1, -2))

    def backward(self, grad):
        A, P = self.saved_tensors
        m, n = A._array.shape[-2:]
        Ph, gh = P.mT, grad.mT
        if m <= n:
            K = gh @ P
            KPh = K @ Ph
            return -(P @ K).mT + KPh - (A @ P) @ KPh + (Ph @ P) @ (gh - K @ A)
        K = P @ gh
        PhK = Ph @ K
        return -(K @ P).mT + (gh - A @ K) @ P @ Ph + PhK - PhK @ P @ A


def pinv(A: Tensor, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:
    """Pseudo-inverse. Defaults as PyTorch: ``rtol = eps * max(m, n)`` when neither tolerance is given,
    and 0 when only ``atol`` is."""
    name = "linalg.pinv"
    check_matrix(name, A)
    check_floating(name, A)
    if rtol is None:
        if atol is None:
            rtol = (2.220446049250313e-16 if A.dtype.itemsize == 8 else 1.1920928955078125e-07) * max(A.shape[-2:])
        else:
            rtol = 0.0
    atol = 0.0 if atol is None else atol
    if isinstance(atol, Tensor) or isinstance(rtol, Tensor):
        raise TypeError("linalg.pinv: tensor-valued atol/rtol are not supported; pass Python floats")
    return Pinv.apply(A, float(atol), float(rtol), bool(hermitian))


# matrix_power ---------------------------------------------------------------------------------


def matrix_power(A: Tensor, n: int) -> Tensor:
    """``A`` multiplied by itself ``n`` times by repeated squaring; ``n < 0`` powers the inverse."""
    check_square("linalg.matrix_power", A)
    if n == 0:
        backend = A._storage.backend
        eye = backend.xp.broadcast_to(backend.xp.eye(A._array.shape[-1], dtype=A._array.dtype), A._array.shape)
        return from_array(backend.xp.array(eye, copy=True), backend, A.device)
    if n < 0:
        A, n = inv(A), -n
    result = None
    square = A
    while True:
        if n & 1:
            result = square if result is None else result @ square
        n >>= 1
        if not n:
            return result
        square = square @ square


# determinants ---------------------------------------------------------------------------------


class Det(Op):
    """det A. The derivative ``g d A^-T`` needs an invertible A; for a singular one (d == 0 exactly) it
    is g times the cofactor matrix, computed from the SVD as a constant: first derivatives are right
    there, second derivatives through a singular point are not provided."""

    def name(self) -> str:
        return "LinalgDetBackward0"

    save_inputs = (0,)
    save_output = True

    def forward(self, A):
        return lapack(self, self.xp.linalg.det, A)

    def backward(self, grad):
        A, d = self.saved_tensors
        if not bool((d == 0).any()):
            return (grad * d).unsqueeze(-1).unsqueeze(-1) * inv(A).mT
        return grad.unsqueeze(-1).unsqueeze(-1) * self.constant(self._cofactors(A._array))

    def _cofactors(self, A):
        """cof(A) = det(U) det(Vh) U adj(S) Vh, with adj(S)_ii the product of the other singular values."""
        xp = self.xp
        u, s, vh = xp.linalg.svd(A)
        n = s.shape[-1]
        eye = xp.eye(n, dtype=bool)
        others = xp.prod(xp.where(eye, xp.ones_like(s)[..., None, :], s[..., None, :]), axis=-1)
        sign = xp.linalg.det(u) * xp.linalg.det(vh)
        return xp.matmul(u * (sign[..., None] * others)[..., None, :], vh)


def det(A: Tensor) -> Tensor:
    """The determinant of a batch of square matrices."""
    check_square_floating("linalg.det", A)
    return Det.apply(A)


class Slogdet(MultiOutputOp):
    """``(sign, log|det A|)``; only the log-magnitude is differentiable (the sign is locally constant)."""

    save_inputs = (0,)
    save_output = False

    def forward(self, A):
        sign, logabsdet = lapack(self, self.xp.linalg.slogdet, A)
        return self.xp.asarray(sign, dtype=A.dtype), self.xp.asarray(logabsdet, dtype=A.dtype)

    def backward(self, grad_sign, grad_logabsdet):
        if grad_logabsdet is None:
            return None
        (A,) = self.saved_tensors
        return grad_logabsdet.unsqueeze(-1).unsqueeze(-1) * inv(A).mT


def slogdet(A: Tensor):
    """``(sign, logabsdet)`` with ``det A = sign * exp(logabsdet)``; stable where det over/underflows."""
    check_square_floating("linalg.slogdet", A)
    return linalg_slogdet(*Slogdet.apply(A))


__all__ = ["solve", "inv", "pinv", "matrix_power", "det", "slogdet"]
