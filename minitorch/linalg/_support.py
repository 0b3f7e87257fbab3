"""What the linalg ops share: input checks and LAPACK errors with PyTorch's messages, the named
result tuples, a multi-output Op base, and small differentiable matrix helpers for backward rules.

LAPACK failures arrive as the array library's ``LinAlgError`` (numpy's, which CuPy also raises when
it checks); they are recognised by class name so this file never imports numpy, and re-raised as
``minitorch.linalg.LinAlgError`` (a ``RuntimeError``, like ``torch.linalg.LinAlgError``).
"""

from __future__ import annotations

from collections import namedtuple

from .._backends import backend_for
from .._device import device
from ..autograd import forward_ad, grad_mode, saved_hooks
from ..autograd.graph import SavedTensor, pack_saved
from ..ops.blas import SCALAR_TYPE
from ..ops.op import Op
from ..tensor import Tensor


class LinAlgError(RuntimeError):
    """A linear algebra routine failed on its input (singular, not positive-definite, no convergence)."""


def _structseq(name: str, fields: tuple) -> type:
    base = namedtuple(name, fields)

    def __repr__(self) -> str:
        body = ",\n".join(f"{field}={value!r}" for field, value in zip(self._fields, self))
        return f"torch.return_types.{name}(\n{body})"

    return type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__module__": "minitorch.return_types"})


svd_result = _structseq("svd", ("U", "S", "V"))
linalg_svd = _structseq("linalg_svd", ("U", "S", "Vh"))
linalg_eigh = _structseq("linalg_eigh", ("eigenvalues", "eigenvectors"))
linalg_eig = _structseq("linalg_eig", ("eigenvalues", "eigenvectors"))
linalg_qr = _structseq("linalg_qr", ("Q", "R"))
linalg_slogdet = _structseq("linalg_slogdet", ("sign", "logabsdet"))


# input checks ---------------------------------------------------------------------------------


def check_matrix(name: str, A: Tensor, arg: str = "A") -> None:
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")


def check_square(name: str, A: Tensor, arg: str = "A") -> None:
    check_matrix(name, A, arg)
    m, n = A._array.shape[-2:]
    if m != n:
        raise RuntimeError(f"{name}: {arg} must be batches of square matrices, but they are {m} by {n} matrices")


def check_floating(name: str, A: Tensor) -> None:
    if not A._storage.dtype.is_floating_point:
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. Got {SCALAR_TYPE[A.dtype.name]}"
        )
    if A._storage.dtype.itemsize < 4:
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {SCALAR_TYPE[A.dtype.name]}")


def check_square_floating(name: str, A: Tensor, arg: str = "A") -> None:
    check_square(name, A, arg)
    check_floating(name, A)


# LAPACK errors --------------------------------------------------------------------------------


def is_linalg_error(error: Exception) -> bool:
    return type(error).__name__ == "LinAlgError"


def lapack(op: Op, fn, *arrays):
    """``fn(*arrays)``; on the meta device (no data) ``fn`` runs on identity stand-ins instead, since
    the all-zero stand-ins meta hands numpy would be singular."""
    if op.device.type == "meta":
        xp = backend_for(device("cpu")).xp
        stand_ins = []
        for a in arrays:
            eye = xp.eye(a.shape[-2], a.shape[-1], dtype=a.dtype) if a.ndim >= 2 else xp.ones(a.shape, a.dtype)
            stand_ins.append(xp.broadcast_to(eye, a.shape))
        return fn(*stand_ins)
    return fn(*arrays)


def batch_prefix(A, index: int) -> str:
    return f": (Batch element {index})" if A.ndim > 2 else ""


def first_failure(xp, fn, A) -> tuple:
    """``(batch index, matrix)`` of the first matrix of the batch ``A`` on which ``fn`` fails."""
    matrices = A.reshape((-1,) + A.shape[-2:])
    for index in range(matrices.shape[0]):
        try:
            fn(matrices[index])
        except Exception as error:
            if not is_linalg_error(error):
                raise
            return index, matrices[index]
    return 0, matrices[0]


def zero_pivot(xp, matrix) -> int:
    """The 1-based index of the first zero pivot of LU with partial pivoting (LAPACK getrf's ``info``)."""
    U = matrix.astype(matrix.dtype, copy=True)
    n = U.shape[0]
    for j in range(n):
        p = j + int(xp.argmax(xp.abs(U[j:, j])))
        if U[p, j] == 0:
            return j + 1
        if p != j:
            U[[j, p]] = U[[p, j]]
        U[j + 1:, j:] -= xp.outer(U[j + 1:, j] / U[j, j], U[j, j:])
    return n


def singular_error(op: Op, name: str, A) -> LinAlgError:
    """PyTorch's message for a singular input: solve says so; inv names the zero diagonal element of U."""
    index, matrix = first_failure(op.xp, op.xp.linalg.inv, A)
    if "solve" in name:
        return LinAlgError(f"{name}{batch_prefix(A, index)}: The solver failed because the input matrix is singular.")
    return LinAlgError(
        f"{name}{batch_prefix(A, index)}: The diagonal element {zero_pivot(op.xp, matrix)} is zero, the inversion "
        f"could not be completed because the input matrix is singular."
    )


def cholesky_factor(xp, A):
    """numpy's (or CuPy's) cholesky, failing as LAPACK's potrf does on a NaN pivot too: numpy returns NaNs
    there (a NaN passes its ``<= 0`` test). A NaN anywhere in the lower triangle reaches the diagonal."""
    L = xp.linalg.cholesky(A)
    if xp.isnan(xp.diagonal(L, axis1=-2, axis2=-1)).any():
        raise LinAlgError("cholesky: a pivot is NaN")
    return L


def not_positive_definite_error(op: Op, name: str, A) -> LinAlgError:
    """PyTorch's cholesky message, naming the order of the first leading minor that is not positive-definite."""
    xp = op.xp

    def cholesky(matrix):
        return cholesky_factor(xp, matrix)

    index, matrix = first_failure(op.xp, cholesky, A)
    order = matrix.shape[0]
    for k in range(1, matrix.shape[0] + 1):
        try:
            cholesky(matrix[:k, :k])
        except Exception as error:
            if not is_linalg_error(error):
                raise
            order = k
            break
    return LinAlgError(
        f"{name}{batch_prefix(A, index)}: The factorization could not be completed because the input is not "
        f"positive-definite (the leading minor of order {order} is not positive-definite)."
    )


def convergence_error(name: str, what: str) -> LinAlgError:
    return LinAlgError(
        f"{name}: The algorithm failed to converge because the input matrix is ill-conditioned or has too many "
        f"repeated {what}."
    )


# ops with several outputs -----------------------------------------------------------------------


class MultiOutputOp(Op):
    """An Op whose backward reads *all* its outputs (Op.save_output keeps only the first)."""

    save_output = True

    def _record(self, args, outputs) -> None:
        super()._record(args, outputs)
        if self.save_output:
            self._saved = self._saved + tuple(SavedTensor(out, i) for i, out in enumerate(outputs) if i > 0)
            if saved_hooks.active:  # the outputs saved here (the first ones were packed by Op._record)
                pack_saved(self, outputs)

    def _saved_values(self, inputs: tuple, outputs: tuple) -> tuple:
        saved = super()._saved_values(inputs, outputs)
        return saved + tuple(outputs[1:]) if self.save_output else saved


# differentiable helpers for backward rules ----------------------------------------------------


def identity_like(op: Op, A: Tensor, n: int | None = None) -> Tensor:
    """An n-by-n identity (a constant) of ``A``'s dtype, on the op's device."""
    n = A._array.shape[-1] if n is None else n
    return op.constant(op.xp.eye(n, dtype=A._array.dtype))


def diag_embed(op: Op, v: Tensor) -> Tensor:
    """Batches of diagonal matrices from batches of vectors (a broadcast product with the identity)."""
    return v.unsqueeze(-1) * identity_like(op, v)


def tril(op: Op, A: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle (a product with a constant 0/1 mask, so it is differentiable)."""
    m, n = A._array.shape[-2:]
    xp = op.xp
    return A * op.constant(xp.tril(xp.ones((m, n), dtype=A._array.dtype), diagonal))


def triu(op: Op, A: Tensor, diagonal: int = 0) -> Tensor:
    m, n = A._array.shape[-2:]
    xp = op.xp
    return A * op.constant(xp.triu(xp.ones((m, n), dtype=A._array.dtype), diagonal))


def grad_wanted(A: Tensor) -> bool:
    """Whether an op on ``A`` would be recorded, or ``A`` is dual in forward mode (then value-only shortcuts such as
    eigvalsh, which have no derivative, are skipped)."""
    return (A._requires_grad and grad_mode.state.enabled) or (
        forward_ad.state.active and forward_ad.tangent_of(A) is not None)
