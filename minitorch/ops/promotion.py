"""Operands of elementwise kernels: type promotion, broadcasting errors, a quiet floating-point state.

``promote`` casts array operands to PyTorch's result dtype. Python scalars stay Python scalars:
numpy (NEP 50) and CuPy treat them as "weak", like PyTorch's wrapped numbers, so ``float16 + 1.5``
stays float16 without a cast. ``Elementwise`` is the base of the broadcasting ops: it turns the
array library's broadcasting ``ValueError`` into PyTorch's ``RuntimeError`` and silences numpy's
floating-point warnings (divide by zero, invalid value, overflow), which PyTorch never emits.
"""

from __future__ import annotations

from .. import _dtype
from .._backends.dtypes import FLOAT32, is_bfloat16
from .._backends.dtypes import kind as array_kind
from .._geometry import broadcast_dims, broadcast_shapes  # noqa: F401 (re-exported)
from ..tensor import Tensor
from .op import Op

_SCALARS = (bool, int, float, complex)
_SCALAR_TYPES = frozenset(_SCALARS)  # exact types: numpy scalars (np.float64 subclasses float) are 0-dim arrays


class _Operand:
    """What result_type_of needs from an array operand: its dtype and whether it is 0-dim."""

    __slots__ = ("dtype", "_ndim")

    def __init__(self, dtype, ndim):
        self.dtype, self._ndim = dtype, ndim

    def dim(self):
        return self._ndim


def _check_operands(op, operands) -> None:
    for x in operands:
        if type(x) not in _SCALAR_TYPES and not (hasattr(x, "dtype") and hasattr(x, "ndim")):
            name = op.name() if isinstance(op, Op) else str(op)
            raise TypeError(
                f"{name.rstrip('0123456789').removesuffix('Backward').lower()}(): expected Tensor or Number operands, "
                f"got {type(x).__name__}"
            )


def result_dtype(backend, *operands) -> _dtype.dtype:
    """PyTorch's result dtype of arrays (by dtype and dimensionality) and Python scalars."""
    return _dtype.result_type_of(
        [x if type(x) in _SCALAR_TYPES else _Operand(backend.dtype_of(x), x.ndim) for x in operands]
    )


def promote(op, *operands, to_float: bool = False, float32_scalars: bool = False):
    """``(operands cast to the common dtype..., that array dtype)``; ``to_float`` makes integer results
    floating (true division, atan2, ... on integer tensors). A Python number with a bfloat16 result becomes
    bfloat16, unless ``float32_scalars`` (PyTorch's mul and div read it in float32: the kernel's result is then
    float32, to be rounded by the op).

    Fast path: all arrays share one dtype and no scalar is of a higher category (bool < int < float);
    the common case ``float32 * float32`` or ``float32 * 2.0`` then costs a few attribute reads."""
    if len(operands) == 2 and not to_float:
        a, b = operands
        dtype = getattr(a, "dtype", None)
        if dtype is not None and dtype is getattr(b, "dtype", None):  # two arrays of one dtype: nothing to do
            return a, b, dtype
    common = None
    scalar_kind = "b"
    try:
        for x in operands:
            kind = type(x)
            if kind in _SCALAR_TYPES:
                if kind is complex:
                    scalar_kind = "c"
                elif kind is float and scalar_kind != "c":
                    scalar_kind = "f"
                elif kind is int and scalar_kind == "b":
                    scalar_kind = "i"
            elif common is None:
                common = x.dtype
            elif x.dtype != common:
                common = False
    except AttributeError:
        _check_operands(op, operands)
        raise
    if common is None:
        raise TypeError(f"{op.name()}: expected at least one tensor operand")
    if common is not False and (scalar_kind == "b" or (scalar_kind == "i" and common.kind != "b")
                                or (common.kind == "f" and scalar_kind != "c") or common.kind == "c"):
        target = common
        if to_float and target.kind not in "fc" and array_kind(target) != "f":  # (bfloat16: kind 'V')
            target = op.backend.array_dtype(_dtype.get_default_dtype())
        else:
            return operands + (target,)
    else:
        dtype = result_dtype(op.backend, *operands)
        if to_float and not (dtype.is_floating_point or dtype.is_complex):
            dtype = _dtype.get_default_dtype()
        target = op.backend.array_dtype(dtype)
        if dtype is _dtype.bfloat16 and not float32_scalars:
            # numpy makes bfloat16 + 1.5 float32: the number becomes bfloat16, as PyTorch's TensorIterator casts it
            # to the common dtype (its mul and div read it in float32, see ops/arithmetic.py)
            operands = tuple(op.xp.asarray(x, dtype=target) if type(x) in _SCALAR_TYPES else x for x in operands)
    cast = tuple(x if type(x) in _SCALAR_TYPES or x.dtype == target else x.astype(target) for x in operands)
    return cast + (target,)


def as_float(op, x):
    """Integer and bool arrays become the default float dtype (unary float ops such as exp)."""
    if array_kind(x.dtype) in "fc":
        return x
    return x.astype(op.backend.array_dtype(_dtype.get_default_dtype()))


def conj_if_complex(x):
    """``x``'s complex conjugate when it is complex (a Tensor, array or number), else ``x`` itself: PyTorch's
    backward formulas conjugate the factors they multiply the gradient by (``grad * conj(b)`` for ``a * b``)."""
    if type(x) is complex:
        return x.conjugate()
    return x.conj() if x is not None and type(x) not in _SCALAR_TYPES and x.dtype.kind == "c" else x


def bfloat16_in_float32(forward):
    """Decorate an op's ``forward(self, x, ...)``: a bfloat16 ``x`` is computed in float32 and the result rounded
    to bfloat16 once, as PyTorch's CPU kernels compute bfloat16 (softmax, layer_norm, cumsum: rounding each numpy
    step instead costs up to 10% relative error). Other dtypes go straight through."""

    def wrapped(self, x, *args, **kwargs):
        if x.dtype.kind != "V" or not is_bfloat16(x.dtype):
            return forward(self, x, *args, **kwargs)
        return forward(self, x.astype(FLOAT32), *args, **kwargs).astype(x.dtype)

    wrapped.__name__, wrapped.__doc__, wrapped.__wrapped__ = forward.__name__, forward.__doc__, forward
    return wrapped


def as_bfloat16_of(result, x):
    """A kernel's ``result`` rounded to bfloat16 when its input ``x`` is bfloat16: numpy computes bfloat16 with
    a Python float in float32 (ml_dtypes' promotion), where PyTorch's kernel rounds its float32 result."""
    if is_bfloat16(x.dtype) and result.dtype != x.dtype:
        return result.astype(x.dtype)
    return result


def check_broadcast(op_name: str, *operands) -> None:
    """Raise PyTorch's broadcasting RuntimeError (with the op's name and every shape) if operands clash."""
    shapes = [tuple(x.shape) for x in operands if type(x) not in _SCALAR_TYPES and hasattr(x, "shape")]
    try:
        broadcast_shapes(*shapes)
    except RuntimeError as error:
        listed = " and ".join(str(list(s)) for s in shapes)
        raise RuntimeError(f"{error} ({op_name}: shapes {listed})") from None


def _size_one_strides_are_numpys(x) -> bool:
    """Whether every dim of size 1 of row-major ``x`` has the stride numpy gives it (the product of the sizes
    after it). A view can carry others (``zeros(4, 1, 1).transpose(0, -1)``: strides (1, 1, 1)), and PyTorch
    orders a broadcast output's dims by them."""
    if 1 not in x.shape:
        return True
    expected = x.itemsize
    for n, stride in zip(reversed(x.shape), reversed(x.strides)):
        if n == 1 and stride != expected:
            return False
        expected *= n
    return True


def in_operands_layout(result, operands, xp):
    """``result`` laid out as PyTorch's TensorIterator lays out the output of ``operands``: dims ordered by
    the first operand's strides, a later operand deciding where an earlier one is broadcast or ambiguous
    (numpy's order 'K' falls back to row-major when operands disagree, and kernels built from several numpy
    calls may return row-major results). Row-major operands: nothing to do."""
    arrays = [x for x in operands if type(x) is xp.ndarray and x.ndim]
    shape, ndim = result.shape, result.ndim
    if not arrays or all(x.flags.c_contiguous for x in arrays) and (
            # TensorIterator's fast path: every operand (a number too) of the output's shape, all row-major
            len(arrays) == len(operands) and all(x.shape == shape for x in arrays)
            # or no dim of size 1 with strides of its own (the only strides of a row-major array it could read)
            or all(_size_one_strides_are_numpys(x) for x in arrays)):
        return result
    strides = []
    for x in arrays:
        lead = ndim - x.ndim
        strides.append([0] * lead + [s if n != 1 or shape[lead + d] == 1 else 0
                                     for d, (n, s) in enumerate(zip(x.shape, x.strides))])

    def should_swap(d0, d1):  # TensorIterator::reorder_dimensions
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(ndim - 1, -1, -1))  # innermost first
    for i in range(1, ndim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            comparison = should_swap(perm[d0], perm[d1])
            if comparison > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif comparison < 0:
                break
    if perm == list(range(ndim - 1, -1, -1)):
        return result if result.flags.c_contiguous else result.copy()
    order = perm[::-1]  # outermost first
    inverse = sorted(range(ndim), key=order.__getitem__)
    out = xp.empty(tuple(shape[d] for d in order), dtype=result.dtype).transpose(inverse)
    if all(a == b for a, b, n in zip(out.strides, result.strides, shape) if n > 1):
        return result
    out[...] = result
    return out


class Elementwise(Op):
    """An op whose kernel broadcasts its operands. Subclasses define ``compute`` (what ``forward`` would
    be); this ``forward`` runs it with floating-point warnings off and reports broadcasting errors."""

    def compute(self, *operands, **params):
        raise NotImplementedError

    def forward(self, *operands, **params):
        state = self.backend.quiet_fp_state  # silences numpy's divide/overflow warnings, as PyTorch is silent
        token = state[0].set(state[1]) if state is not None else None
        try:
            result = self.compute(*operands, **params)
            if type(result) is self.backend.ndarray and result.ndim > 1:
                result = in_operands_layout(result, operands, self.backend.xp)
            return result
        except ValueError:
            check_broadcast(self.name().rstrip("0123456789").removesuffix("Backward").lower(), *operands)
            raise
        except OverflowError:  # a Python int out of the array dtype's range (uint8 - 1000): wrap it like PyTorch
            if not any(type(x) is int for x in operands):
                raise
            target = self.backend.array_dtype(result_dtype(self.backend, *operands))
            wrapped = [self.xp.asarray(x).astype(target) if type(x) is int else x for x in operands]
            return self.compute(*wrapped, **params)
        finally:
            if token is not None:
                state[0].reset(token)

    def jvp(self, inputs, outputs, tangents):
        """Derived from backward, exactly: an elementwise op's Jacobian is diagonal (for each input, after
        broadcasting), so ``J t = J^T t``: backward's rule applied to each input's tangent, summed over inputs.
        (Complex inputs or outputs take Op's general rule: there backward's rule is ``J^H``, not ``J^T``.)"""
        if len(outputs) != 1 or any(isinstance(x, Tensor) and x.is_complex() for x in inputs + outputs):
            return Op.jvp(self, inputs, outputs, tangents)
        shape = outputs[0]._array.shape
        total = None
        for i, t in enumerate(tangents):
            if t is None:
                continue
            backward = self._borrowed_backward(inputs, outputs, (i,))
            term = backward(t.expand(shape))[i]
            if term is not None:
                total = term if total is None else total + term
        return total

    def sum_to_shape(self, grad, shape: tuple):
        """A gradient array of the broadcast shape summed back to an input's ``shape`` (``sum_to_size``
        on arrays: the engine's reduction when backward runs on arrays)."""
        return self.backend.sum(grad, broadcast_dims(shape, grad.shape), True).reshape(shape)

    @property
    def on_meta(self) -> bool:
        """Meta arrays have no values: data-dependent checks (division by zero) are skipped."""
        return self.device.type == "meta"
