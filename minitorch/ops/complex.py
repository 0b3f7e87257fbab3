"""Complex numbers: the views between complex and real storage, conjugation, and the ops that build or split them.

``view_as_real`` sees a complex tensor's memory as float pairs (a trailing dim of 2) and ``view_as_complex`` the
reverse: both are views (``ReinterpretedStorage``: the same bytes, one version counter), and ``real``/``imag``
are selections of ``view_as_real``, so writes through them reach the complex tensor, as in PyTorch.

Autograd follows PyTorch's convention ("Autograd for Complex Numbers"): the gradient of a real loss L with
respect to z = x + iy is dL/dx + i dL/dy, which is 2 dL/d(conj z). For a holomorphic f the backward is then
``grad * conj(f'(z))``; ops/arithmetic.py, ops/blas.py and ops/pointwise.py conjugate with
``promotion.conj_if_complex``. A complex gradient reaching a real input keeps its real part (the engine).
"""

from __future__ import annotations

from .. import _dtype
from ..storage import ReinterpretedStorage
from ..tensor import Tensor
from .comparison import where
from .op import Op
from .promotion import Elementwise
from .views import ViewOp, select

_TYPE_NAMES = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
               "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
               "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
_PART_DTYPES = (_dtype.float16, _dtype.float32, _dtype.float64)  # the real dtypes with a complex twin in numpy


def _reinterpreted(x: Tensor, dtype, size, stride, offset) -> Tensor:
    """A tensor over ``x``'s memory seen as ``dtype``: reinterpreting a reinterpretation gives the original storage
    back (``view_as_complex(view_as_real(z))`` shares ``z``'s storage object)."""
    storage = x._storage
    if isinstance(storage, ReinterpretedStorage) and storage.source.dtype is dtype:
        target = storage.source
    else:
        backend = storage.backend
        target = ReinterpretedStorage(storage, backend.reinterpret(storage.data, backend.array_dtype(dtype)), dtype)
    t = x._alias()
    t._storage = target
    t._array = target.backend.as_strided(target.data, size, stride, offset)
    t._offset = offset
    return t


class ViewAsReal(ViewOp):
    """complex (..., ) -> real (..., 2): each element's real and imaginary parts, in place in memory."""

    def geometry(self, shape, stride, offset):
        return tuple(shape) + (2,), tuple(2 * s for s in stride) + (1,), 2 * offset

    def make_view(self, x, size, stride, offset):
        return _reinterpreted(x, x.dtype.to_real(), size, stride, offset)

    def backward(self, grad):
        return view_as_complex(grad.contiguous())


class ViewAsComplex(ViewOp):
    """real (..., 2) -> complex (...): the pairs read as complex numbers, in place in memory."""

    def geometry(self, shape, stride, offset):
        return tuple(shape[:-1]), tuple(s // 2 for s in stride[:-1]), offset // 2

    def make_view(self, x, size, stride, offset):
        return _reinterpreted(x, x.dtype.to_complex(), size, stride, offset)

    def backward(self, grad):
        return view_as_real(grad)


def view_as_real(input: Tensor) -> Tensor:
    """The complex ``input`` as a real tensor with a trailing dim of 2 (real, imaginary), sharing its memory."""
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return ViewAsReal.apply(input)


def view_as_complex(input: Tensor) -> Tensor:
    """A real tensor whose last dim is 2 (with stride 1) as complex numbers, sharing its memory."""
    if input.dtype not in _PART_DTYPES:
        raise RuntimeError(
            "view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar "
            f"type: {_TYPE_NAMES.get(input.dtype.name, input.dtype.name)}"
        )
    if input.dtype is _dtype.float16:
        raise RuntimeError("view_as_complex: minitorch has no complex32 (the complex dtype of float16)")
    if input.dim() == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    stride = input.stride()
    if stride[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in stride[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return ViewAsComplex.apply(input)


def real(input: Tensor) -> Tensor:
    """The real parts of a complex tensor, as a view; a real tensor itself."""
    return select(view_as_real(input), -1, 0) if input.dtype.is_complex else input


def imag(input: Tensor) -> Tensor:
    """The imaginary parts of a complex tensor, as a view (real tensors have none: RuntimeError)."""
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return select(view_as_real(input), -1, 1)


class ConjPhysical(Elementwise):
    """Complex conjugation into new memory; its gradient is the conjugate of the gradient."""

    array_derivative = True

    def compute(self, x):
        return self.xp.conjugate(x)

    def backward(self, grad):
        return grad.conj()


def conj_physical(input: Tensor) -> Tensor:
    """The complex conjugate in new memory (a real tensor: a copy)."""
    return ConjPhysical.apply(input) if input.dtype.is_complex else input.clone()


def conj(input: Tensor) -> Tensor:
    """The complex conjugate; a real tensor is returned as it is. (PyTorch returns a lazy view with its conj bit
    set; minitorch computes it, see docs/differences.md.)"""
    return ConjPhysical.apply(input) if input.dtype.is_complex else input


def resolve_conj(input: Tensor) -> Tensor:
    """``input`` itself: minitorch's conjugates are never lazy."""
    return input


resolve_neg = resolve_conj


def is_conj(input: Tensor) -> bool:
    """False: minitorch has no lazy conjugate views (``conj`` computes)."""
    return False


def is_neg(input: Tensor) -> bool:
    return False


def is_complex(input: Tensor) -> bool:
    return input.dtype.is_complex


class Complex(Op):
    """``real + i imag`` from two real tensors of one floating dtype; gradients are the parts of the gradient."""

    def forward(self, re, im):
        shape = self.xp.broadcast_shapes(re.shape, im.shape)
        out = self.xp.empty(shape, dtype=self.backend.array_dtype(self.backend.dtype_of(re).to_complex()))
        out.real = re
        out.imag = im
        return out

    def backward(self, grad):
        return (real(grad) if self.needs_grad(0) else None), (imag(grad) if self.needs_grad(1) else None)


def complex(real: Tensor, imag: Tensor) -> Tensor:  # noqa: A001 - torch.complex
    """A complex tensor from its real and imaginary parts (both half, float or double, of one dtype)."""
    for t in (real, imag):
        if t.dtype not in _PART_DTYPES:
            raise RuntimeError(
                f"Expected both inputs to be Half, Float or Double tensors but got "
                f"{_TYPE_NAMES[real.dtype.name]} and {_TYPE_NAMES[imag.dtype.name]}"
            )
    if real.dtype is not imag.dtype:
        raise RuntimeError(
            f"Expected object of scalar type {_TYPE_NAMES[real.dtype.name]} but got scalar type "
            f"{_TYPE_NAMES[imag.dtype.name]} for second argument"
        )
    if real.dtype is _dtype.float16:
        raise RuntimeError("complex: minitorch has no complex32 (the complex dtype of float16)")
    return Complex.apply(real, imag)


def polar(abs: Tensor, angle: Tensor) -> Tensor:  # noqa: A002 - torch.polar's argument names
    """``abs * (cos(angle) + i sin(angle))``."""
    if abs.dtype is not angle.dtype:
        complex(abs, angle)  # its dtype errors
    return complex(abs * angle.cos(), abs * angle.sin())


class Angle(Elementwise):
    """The argument of each element: atan2(imag, real) of complex input; 0 or pi for real input (NaN stays NaN).
    Its gradient is ``grad * i z / |z|^2`` for complex input (0 at 0) and 0 for real input, as PyTorch's."""

    save_inputs = (0,)

    def compute(self, x):
        xp = self.xp
        if x.dtype.kind == "c":
            return xp.angle(x)
        if x.dtype.kind in "biu":
            x = x.astype(self.backend.array_dtype(_dtype.get_default_dtype()))
        return xp.where(x < 0, xp.asarray(xp.pi, dtype=x.dtype), xp.zeros((), dtype=x.dtype)) + x * 0

    def backward(self, grad):
        (x,) = self.saved_tensors
        if not x.dtype.is_complex:
            return grad * 0
        return where(x == 0, 0.0, grad * x / (x.abs() ** 2) * 1j)


def angle(input: Tensor) -> Tensor:
    """The argument (phase) of each element, in radians."""
    return Angle.apply(input)


def _H(self: Tensor) -> Tensor:
    if self.dim() not in (0, 2):
        hint = " For batches of matrices, consider using tensor.mH" if self.dim() > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor.{hint}")
    return conj(self.T)


def _mH(self: Tensor) -> Tensor:
    if self.dim() < 2:
        raise RuntimeError(
            f"tensor.mH is only supported on matrices or batches of matrices. Got {self.dim()}-D tensor."
        )
    return conj(self.mT)


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims."""
    if input.dim() < 2:
        raise RuntimeError(
            f"tensor.adjoint() is only supported on matrices or batches of matrices. Got {input.dim()}-D tensor."
        )
    return conj(input.mT)


__all__ = [
    "view_as_real", "view_as_complex", "real", "imag", "conj", "conj_physical", "resolve_conj", "resolve_neg",
    "is_conj", "is_neg", "is_complex", "complex", "polar", "angle", "adjoint",
]
