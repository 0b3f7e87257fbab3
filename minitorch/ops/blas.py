"""Matrix products: matmul and its named special cases, einsum, tensordot, kron, cross.

``Matmul`` is the one product op: its forward is a single ``xp.matmul`` for every shape PyTorch
accepts (1-D vectors, matrices, broadcast batches), and its backward is two more matmuls against
transposed *views* (no copies), so ``mm``, ``bmm``, ``mv``, ``dot`` and ``addmm`` are all thin
wrappers that check shapes with PyTorch's messages. ``Einsum`` is the other op: its gradient for
each operand is again an einsum, with that operand's subscripts as the output.

The old top-level linear algebra names (``torch.det``, ``torch.inverse``, ``torch.svd``, ...) are
here too, as wrappers of ``minitorch.linalg`` (imported when called: linalg builds on this module).
"""

from __future__ import annotations

import math
import string

from .. import _dtype
from .._autocast_state import autocast_op
from .._backends.dtypes import FLOAT32, is_bfloat16
from ..autograd import grad_mode
from ..tensor import Tensor, from_array, wrap_dim
from .op import Op, multilinear_jvp
from .promotion import conj_if_complex
from .views import view_strides

# c10's TypeMeta names, which PyTorch prints in matmul dtype errors ("float != double")
_TYPE_META = {
    "float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int", "int32": "int",
    "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
    "bfloat16": "c10::BFloat16", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
}
# c10's ScalarType names ("Float", "Long"), which most other messages print
SCALAR_TYPE = {
    "float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
    "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool", "bfloat16": "BFloat16",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}


def _needs_grad(node: Op, index: int) -> bool:
    """Whether input ``index`` of a recorded node wants a gradient (skip work for the others)."""
    return node.needs_grad(index)


def _check_same_dtype(a: Tensor, b: Tensor) -> None:
    if a._storage.dtype is not b._storage.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {_TYPE_META[a.dtype.name]} != "
            f"{_TYPE_META[b.dtype.name]}"
        )


def _shape_str(shape) -> str:
    return "x".join(str(n) for n in shape)


# matmul -----------------------------------------------------------------------------------------


class Matmul(Op):
    """``a @ b`` for any shapes ``xp.matmul`` takes; 1-D operands are vectors (dims dropped)."""

    save_inputs = (0, 1)
    saved_when = {0: (1,), 1: (0,)}  # as PyTorch's mm/mv/bmm: each operand only for the other's gradient
    # PyTorch's node for the shapes where its product is one op; its matmul of other shapes is a composite
    # (expand, reshape, bmm, view) whose last node names no product, so minitorch keeps MatmulBackward0 there
    _NODE_NAMES = {(2, 2): "MmBackward0", (2, 1): "MvBackward0", (1, 1): "DotBackward0"}
    batched = False  # set by bmm: PyTorch's BmmBackward0 (its matmul of batches ends in a view of a bmm instead)

    def name(self) -> str:
        return "BmmBackward0" if self.batched else self._NODE_NAMES.get(getattr(self, "ndims", None), "MatmulBackward0")

    def jvp(self, inputs, outputs, tangents):  # linear in each operand: sum of one-tangent terms
        return multilinear_jvp(self, inputs, outputs, tangents)

    def forward(self, a, b):
        self.ndims = (a.ndim, b.ndim)
        if is_bfloat16(a.dtype):  # PyTorch accumulates bfloat16 products in float32 and rounds once
            return self.xp.matmul(a.astype(FLOAT32), b.astype(FLOAT32)).astype(a.dtype)
        return self.xp.matmul(a, b)

    def backward(self, grad):
        a, b = self.saved_tensors
        a_vector, b_vector = self.ndims[0] == 1, self.ndims[1] == 1
        if b_vector:  # (k,) on the right acts as (k, 1): put the dropped dims back, as views
            b = b.unsqueeze(-1) if b is not None else None
            grad = grad.unsqueeze(-1)
        if a_vector:  # and as (1, k) on the left
            a = a.unsqueeze(0) if a is not None else None
            grad = grad.unsqueeze(-2)
        grad_a = grad_b = None
        if _needs_grad(self, 0):
            grad_a = grad @ conj_if_complex(b).mT  # b^H: complex gradients conjugate the other factor
            if a_vector:
                grad_a = grad_a.squeeze(-2)
        if _needs_grad(self, 1):
            if self.ndims[1] <= 2 and a.dim() > 2:  # b (k, n) or (k,): one matmul over the folded batch, not a batch
                rows = math.prod(a._array.shape[:-1])  # not -1: ambiguous when the inner or output dim is 0
                a = conj_if_complex(a)
                grad_b = a.reshape(rows, a._array.shape[-1]).mT @ grad.reshape(rows, grad._array.shape[-1])
            else:
                grad_b = conj_if_complex(a).mT @ grad
            if b_vector:
                grad_b = grad_b.squeeze(-1)
        return grad_a, grad_b


def _broadcast_batch(a_batch: tuple, b_batch: tuple) -> tuple:
    """The broadcast of two batch shapes, with PyTorch's error when they do not broadcast."""
    ndim = max(len(a_batch), len(b_batch))
    a_batch = (1,) * (ndim - len(a_batch)) + tuple(a_batch)
    b_batch = (1,) * (ndim - len(b_batch)) + tuple(b_batch)
    out = []
    for i, (n, m) in enumerate(zip(a_batch, b_batch)):
        if n != m and n != 1 and m != 1:
            raise RuntimeError(
                f"The size of tensor a ({n}) must match the size of tensor b ({m}) at non-singleton dimension {i}"
            )
        out.append(max(n, m) if n and m else 0)
    return tuple(out)


def _check_matmul(a: Tensor, b: Tensor) -> None:
    """PyTorch's shape errors for matmul, chosen by the path its composite implementation takes."""
    sa, sb = a._array.shape, b._array.shape
    da, db = len(sa), len(sb)
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    k_a = sa[-1]
    k_b = sb[0] if db == 1 else sb[-2]
    if k_a == k_b:
        if da > 2 or db > 2:
            _broadcast_batch(sa[:-2], sb[:-2])
        return
    if da == 1 and db == 1:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{k_a}] and src [{k_b}] to have the same number of "
            f"elements, but got {k_a} and {k_b} elements respectively"
        )
    if da == 2 and db == 1:
        raise RuntimeError(f"size mismatch, got input ({sa[0]}), mat ({_shape_str(sa)}), vec ({sb[0]})")
    if db <= 2:  # 1-D @ 2-D and N-D @ (1-D or 2-D) fold into one mm
        rows = math.prod(sa[:-1])
        right = sb if db == 2 else (sb[0], 1)
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k_a} and {_shape_str(right)})")
    batch = math.prod(_broadcast_batch(sa[:-2], sb[:-2]))
    raise RuntimeError(
        f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, {k_a}] but got: "
        f"[{batch}, {k_b}]."
    )


def _check_matmul_dtype(a: Tensor, b: Tensor) -> None:
    _check_same_dtype(a, b)
    if a._storage.dtype is _dtype.bool:
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")


@autocast_op("lower")
def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Matrix product with NumPy/PyTorch rules: vectors, matrices, and broadcast batches of matrices."""
    _check_matmul_dtype(input, other)
    _check_matmul(input, other)
    batched = input.dim() > 2 or other.dim() > 2
    if batched and grad_mode.state.enabled and (input.requires_grad or other.requires_grad):
        input, other = _as_pytorch_saves(input, other)
    return Matmul.apply(input, other)


def _reshape_copies(t: Tensor, shape, stride=None) -> bool:
    """Whether reshaping ``t`` (of ``stride``, or its own) to ``shape`` needs a copy (PyTorch's computeStride)."""
    return view_strides(t._array.shape, stride or t.stride(), shape) is None


def _leading_dims_merge(t: Tensor, stride) -> bool:
    """should_fold's test: the dims before the last two merge without a copy (or the tensor is empty)."""
    shape = t._array.shape
    return t.numel() == 0 or all(stride[i] == stride[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


def _as_pytorch_saves(a: Tensor, b: Tensor) -> tuple:
    """The operands, each replaced by a copy of itself where PyTorch's composite matmul saves a reshaped copy
    of it for the other's gradient (its fold into one mm, or its batch flattening for bmm): writing into such an
    operand before backward is then no error, as in PyTorch (seed 97687). Values and gradients are unchanged."""
    da, db = a.dim(), b.dim()
    copy_a = copy_b = False
    # 3-D @ 3-D with one batch of 1: PyTorch 2.13 squeezes it and folds when that operand requires grad (measured)
    one_a, one_b = da == db == 3 and a._array.shape[0] == 1, da == db == 3 and b._array.shape[0] == 1
    fold_a = (da >= 3 and db <= 2 and (b.requires_grad or _leading_dims_merge(a, a.stride()))) or (
        one_b and not one_a and b.requires_grad)
    fold_b = (db >= 3 and da <= 2 and (a.requires_grad or (da == 1 and _leading_dims_merge(b, _mT_stride(b))))) or (
        one_a and not one_b and a.requires_grad)
    if fold_a:
        copy_a = _reshape_copies(a, (math.prod(a._array.shape[:-1]), a._array.shape[-1]))
    elif fold_b:
        t_shape = b._array.shape[:-2] + (b._array.shape[-1], b._array.shape[-2])  # fold b.mT
        copy_b = view_strides(t_shape, _mT_stride(b), (math.prod(t_shape[:-1]), t_shape[-1])) is None
    elif da >= 3 or db >= 3:  # bmm over the broadcast batch, each operand expanded then flattened
        batch = _broadcast_batch(a._array.shape[:-2], b._array.shape[:-2])
        flat = math.prod(batch)
        copy_a = _expanded_reshape_copies(a, batch, flat)
        copy_b = _expanded_reshape_copies(b, batch, flat)
    if copy_a and b.requires_grad:
        a = a.clone()
    if copy_b and a.requires_grad:
        b = b.clone()
    return a, b


def _mT_stride(t: Tensor) -> tuple:
    stride = t.stride()
    return stride[:-2] + (stride[-1], stride[-2])


def _expanded_reshape_copies(t: Tensor, batch: tuple, flat: int) -> bool:
    """Whether ``t.expand(batch + matrix).reshape(flat, *matrix)`` copies (a vector is a (k,) matrix here)."""
    shape, stride = t._array.shape, t.stride()
    matrix_dims = 1 if t.dim() == 1 else 2
    own = len(shape) - matrix_dims
    pad = len(batch) - max(own, 0)
    ex_stride = [0] * pad + [0 if n == 1 and m != 1 else s for n, s, m in zip(shape[:own], stride[:own], batch[pad:])]
    ex_shape = tuple(batch) + shape[own:] if own >= 0 else tuple(batch) + shape
    return view_strides(ex_shape, tuple(ex_stride) + stride[own:], (flat,) + shape[own:]) is None


@autocast_op("lower")
def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """Matrix @ matrix, both exactly 2-D."""
    if input.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    if input._array.shape[1] != mat2._array.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(input.shape)} and {_shape_str(mat2.shape)})"
        )
    _check_matmul_dtype(input, mat2)
    return Matmul.apply(input, mat2)


def spmm(input: Tensor, mat2: Tensor) -> Tensor:
    """``mm`` under its sparse name: a sparse COO (or dense) matrix @ a dense matrix."""
    return mm(input, mat2)


@autocast_op("lower")
def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batch of matrices @ batch of matrices, both exactly 3-D with equal batch sizes (no broadcasting)."""
    if input.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    (b, _, k), (b2, k2, _) = input._array.shape, mat2._array.shape
    if b != b2 or k != k2:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{b}, {k}] but got: [{b2}, {k2}]."
        )
    _check_matmul_dtype(input, mat2)
    out = Matmul.apply(input, mat2)
    if isinstance(out._grad_fn, Matmul):  # only the node's name says it came from bmm
        out._grad_fn.batched = True
    return out


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix @ vector."""
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.dim()}, {vec.dim()}")
    rows, cols = input._array.shape
    if cols != vec._array.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{cols}), vec ({vec._array.shape[0]})")
    _check_matmul_dtype(input, vec)
    return Matmul.apply(input, vec)


def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """Inner product of two 1-D tensors of the same length (a 0-d tensor)."""
    if input.dim() != 1 or tensor.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {tensor.dim()}D tensors")
    if input._array.shape != tensor._array.shape:
        n, m = input._array.shape[0], tensor._array.shape[0]
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same number of elements, "
            f"but got {n} and {m} elements respectively"
        )
    if input._storage.dtype is not tensor._storage.dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found {SCALAR_TYPE[input.dtype.name]} and "
            f"{SCALAR_TYPE[tensor.dtype.name]}"
        )
    return Matmul.apply(input, tensor)


def vdot(input: Tensor, other: Tensor) -> Tensor:
    """``sum(conj(input) * other)`` of two 1-D tensors."""
    return dot(conj_if_complex(input), other)


def inner(input: Tensor, other: Tensor) -> Tensor:
    """Sum over the last dims: shape ``input.shape[:-1] + other.shape[:-1]`` (a product for 0-d inputs)."""
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    if input._array.shape[-1] != other._array.shape[-1]:
        raise RuntimeError(
            f"inner() the last dimension must match on both input tensors but got shapes {list(input.shape)} "
            f"and {list(other.shape)}"
        )
    return tensordot(input, other, dims=([-1], [-1]))


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """``input[i] * vec2[j]``: an elementwise product of broadcast views (no matmul needed)."""
    for name, t in (("self", input), ("vec2", vec2)):
        if t.dim() != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.dim()}-D")
    return input.unsqueeze(1) * vec2


ger = outer


def _scaled_sum(input: Tensor, product: Tensor, beta, alpha, name: str) -> Tensor:
    """``beta * input + alpha * product`` with ``input`` broadcast to the product's shape;
    ``beta == 0`` ignores ``input`` entirely (nan and inf in it do not propagate), as in PyTorch."""
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product
    if input._array.shape != product._array.shape:
        try:
            input = input.expand(product._array.shape)
        except RuntimeError as error:
            raise RuntimeError(
                f"{name}: the input of shape {list(input.shape)} does not broadcast to the product's shape "
                f"{list(product.shape)}"
            ) from error
    return product + (input if beta == 1 else input * beta)


@autocast_op("lower")
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``."""
    return _scaled_sum(input, mm(mat1, mat2), beta, alpha, "addmm")


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``."""
    return _scaled_sum(input, mv(mat, vec), beta, alpha, "addmv")


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``."""
    return _scaled_sum(input, outer(vec1, vec2), beta, alpha, "addr")


@autocast_op("lower")
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * bmm(batch1, batch2)``."""
    return _scaled_sum(input, bmm(batch1, batch2), beta, alpha, "baddbmm")


@autocast_op("lower")
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]``, as one matmul of the batch laid side by side."""
    if batch1.dim() != 3 or batch2.dim() != 3 or batch1._array.shape[0] != batch2._array.shape[0]:
        raise RuntimeError(
            f"addbmm: expected 3-D batches of the same size, got {list(batch1.shape)} and {list(batch2.shape)}"
        )
    b, n, k = batch1._array.shape
    left = batch1.permute(1, 0, 2).reshape(n, b * k)
    right = batch2.reshape(b * k, batch2._array.shape[2])
    return _scaled_sum(input, mm(left, right), beta, alpha, "addbmm")


# tensordot, kron -----------------------------------------------------------------------------


def tensordot(a: Tensor, b: Tensor, dims=2) -> Tensor:
    """Contract ``dims`` (an int: a's last and b's first; or a pair of dim lists) by one matmul of
    the operands permuted and folded to matrices."""
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.dim() or dims > b.dim():
            raise RuntimeError(
                f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}, ndim_a={a.dim()}, "
                f"ndim_b={b.dim()}"
            )
        dims_a, dims_b = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        dims_a, dims_b = dims
        dims_a = [dims_a] if isinstance(dims_a, int) else list(dims_a)
        dims_b = [dims_b] if isinstance(dims_b, int) else list(dims_b)
        if len(dims_a) != len(dims_b):
            raise RuntimeError("both dimension lists should have same length")
        dims_a = [wrap_dim(d, a.dim()) for d in dims_a]
        dims_b = [wrap_dim(d, b.dim()) for d in dims_b]
    sa, sb = a._array.shape, b._array.shape
    for da, db in zip(dims_a, dims_b):
        if sa[da] != sb[db]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {sa[da]} in dim {da} and second has size "
                f"{sb[db]} in dim {db}"
            )
    _check_same_dtype(a, b)
    free_a = [d for d in range(a.dim()) if d not in dims_a]
    free_b = [d for d in range(b.dim()) if d not in dims_b]
    contracted = math.prod(sa[d] for d in dims_a)
    left = a.permute(free_a + dims_a).reshape(math.prod(sa[d] for d in free_a), contracted)
    right = b.permute(dims_b + free_b).reshape(contracted, math.prod(sb[d] for d in free_b))
    return Matmul.apply(left, right).reshape([sa[d] for d in free_a] + [sb[d] for d in free_b])


def kron(input: Tensor, other: Tensor) -> Tensor:
    """Kronecker product: the interleaved outer product of two tensors, reshaped (all views and a mul)."""
    ndim = max(input.dim(), other.dim())
    sa = (1,) * (ndim - input.dim()) + input._array.shape
    sb = (1,) * (ndim - other.dim()) + other._array.shape
    left = input.reshape([n for size in sa for n in (size, 1)])
    right = other.reshape([n for size in sb for n in (1, size)])
    return (left * right).reshape([n * m for n, m in zip(sa, sb)])


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """Cross product of 3-vectors along ``dim`` (default: the first dim of size 3, as in PyTorch)."""
    if dim is None:
        shape = _broadcast_shapes(input._array.shape, other._array.shape)
        dim = next((i for i, n in enumerate(shape) if n == 3), None)
        if dim is None:
            raise RuntimeError(f"no dimension of size 3 in input (shapes {list(input.shape)} and {list(other.shape)})")
    return linalg_cross(input, other, dim=dim)


def _broadcast_shapes(a: tuple, b: tuple) -> tuple:
    ndim = max(len(a), len(b))
    a, b = (1,) * (ndim - len(a)) + tuple(a), (1,) * (ndim - len(b)) + tuple(b)
    for i, (n, m) in enumerate(zip(a, b)):
        if n != m and n != 1 and m != 1:
            raise RuntimeError(
                f"The size of tensor a ({n}) must match the size of tensor b ({m}) at non-singleton dimension {i}"
            )
    return tuple(m if n == 1 else n for n, m in zip(a, b))


def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """``linalg.cross``: an einsum with the Levi-Civita symbol, so batch dims broadcast for free."""
    if input.dim() != other.dim():
        raise RuntimeError(
            f"linalg.cross: inputs must have the same number of dimensions. Got {input.dim()} and {other.dim()}"
        )
    d = wrap_dim(dim, input.dim())
    n, m = input._array.shape[d], other._array.shape[d]
    if n != 3 or m != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {n} and {m}")
    _broadcast_shapes(input._array.shape, other._array.shape)
    _check_same_dtype(input, other)
    backend = input._storage.backend
    epsilon = backend.zeros((3, 3, 3), input.dtype)
    for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        epsilon[i, j, k], epsilon[i, k, j] = 1, -1
    levi_civita = from_array(epsilon, backend, input.device)
    result = einsum("ijk,...j,...k->...i", levi_civita, input.movedim(d, -1), other.movedim(d, -1))
    return result.movedim(-1, d)


# einsum --------------------------------------------------------------------------------------


class Einsum(Op):
    """``xp.einsum`` of an *explicit* equation whose operands have unique subscripts and equal sizes per
    subscript (``einsum()`` below rewrites any equation into that form with views). The gradient of an
    operand is the einsum of the output gradient and the other operands, producing that operand's
    subscripts; a subscript only that operand has is summed away in forward, so it is broadcast back."""

    def jvp(self, inputs, outputs, tangents):  # linear in each operand: sum of one-tangent terms
        return multilinear_jvp(self, inputs, outputs, tangents)

    def forward(self, *arrays, equation, layout=None):
        self.equation = equation
        n = len(arrays)
        self.save_inputs = tuple(range(n))
        # as PyTorch's composite einsum (mul/bmm): an operand is kept only for the other operands' gradients
        self.saved_when = {i: tuple(j for j in range(n) if j != i) for i in range(n)}
        self.shapes = [a.shape for a in arrays]
        if arrays and is_bfloat16(arrays[0].dtype):  # numpy's einsum has no bfloat16: float32, rounded once
            return self.xp.einsum(equation, *(a.astype(FLOAT32) for a in arrays)).astype(arrays[0].dtype)
        inputs, output = equation.split("->")
        # layout: the output's dims in PyTorch's memory order (outermost first); computed so, permuted back
        out = self.xp.einsum(f"{inputs}->{layout or output}", *arrays, optimize=n > 1)
        if (not isinstance(out, self.backend.ndarray) or any(self.xp.may_share_memory(out, a) for a in arrays)
                or (layout is not None and not out.flags.c_contiguous)):
            out = self.xp.array(out, order="C")  # einsum may return a view of an operand, or any layout
        if layout is not None and layout != output:
            out = out.transpose([layout.index(c) for c in output])
        return out

    def backward(self, grad):
        operands = self.saved_tensors
        inputs, output = self.equation.split("->")
        subscripts = inputs.split(",")
        grads = []
        for i, target in enumerate(subscripts):
            if not _needs_grad(self, i):
                grads.append(None)
                continue
            others = [(s, t) for j, (s, t) in enumerate(zip(subscripts, operands)) if j != i]
            available = set(output).union(*(s for s, _ in others))
            kept = "".join(c for c in target if c in available)
            terms = ",".join([output] + [s for s, _ in others])
            # (complex: grad times the conjugates of the other operands)
            g = Einsum.apply(grad, *[conj_if_complex(t) for _, t in others], equation=f"{terms}->{kept}")
            if kept != target:  # subscripts summed in forward come back as broadcast dims
                shape = self.shapes[i]
                g = g.reshape([shape[k] if c in available else 1 for k, c in enumerate(target)]).expand(shape)
            grads.append(g)
        return tuple(grads)


_LETTERS = string.ascii_uppercase + string.ascii_lowercase


def _sublist_equation(args) -> tuple:
    """``einsum(op1, [0, 1], op2, [1, 2], [0, 2])`` as an equation string and its operands."""
    args = list(args)
    output = args.pop() if len(args) % 2 == 1 else None

    def letters(sub):
        return "".join("..." if s is Ellipsis else _LETTERS[s] for s in sub)

    operands = args[0::2]
    equation = ",".join(letters(s) for s in args[1::2])
    if output is not None:
        equation += "->" + letters(output)
    return equation, operands


@autocast_op("lower")
def einsum(*args) -> Tensor:
    """Einstein summation with PyTorch's rules: ``'...'`` broadcasting, implicit output (alphabetical
    subscripts that appear once), repeated subscripts in one operand (its diagonal), size-1 broadcast."""
    if args and isinstance(args[0], Tensor):
        equation, operands = _sublist_equation(args)
    else:
        equation, operands = args[0], args[1:]
        if len(operands) == 1 and isinstance(operands[0], (tuple, list)):
            operands = tuple(operands[0])
    equation = equation.replace(" ", "")
    if "->" in equation:
        inputs, output = equation.split("->", 1)
    else:
        inputs, output = equation, None
    subscripts = inputs.split(",")
    if len(subscripts) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(subscripts) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    for sub in subscripts + ([output] if output is not None else []):
        for c in sub.replace("...", ""):
            if c not in _LETTERS:
                raise RuntimeError(f"einsum(): invalid subscript given at index {equation.index(c)} in the equation "
                                   f"string, subscripts must be in [a-zA-Z]")
    for i in range(1, len(operands)):
        if operands[i]._storage.dtype is not operands[0]._storage.dtype:
            raise RuntimeError(
                f"expected scalar type {SCALAR_TYPE[operands[0].dtype.name]} but found "
                f"{SCALAR_TYPE[operands[i].dtype.name]}"
            )

    # '...' becomes explicit letters not used elsewhere, aligned to the right
    ellipsis_dims = []
    for i, (sub, t) in enumerate(zip(subscripts, operands)):
        named = len(sub.replace("...", ""))
        if "..." in sub:
            if named > t.dim():
                raise RuntimeError(
                    f"einsum(): the number of subscripts in the equation ({named}) is more than the number of "
                    f"dimensions ({t.dim()}) for operand {i}"
                )
            ellipsis_dims.append(t.dim() - named)
        else:
            if named != t.dim():
                raise RuntimeError(
                    f"einsum(): the number of subscripts in the equation ({named}) does not match the number of "
                    f"dimensions ({t.dim()}) for operand {i} and no ellipsis was given"
                )
            ellipsis_dims.append(0)
    unused = [c for c in _LETTERS if c not in equation]
    n_ellipsis = max(ellipsis_dims, default=0)
    ellipsis = "".join(unused[:n_ellipsis])
    subscripts = [s.replace("...", ellipsis[n_ellipsis - k:] if k else "") for s, k in zip(subscripts, ellipsis_dims)]
    if output is None:
        counts = {}
        for c in "".join(subscripts):
            counts[c] = counts.get(c, 0) + 1
        output = ellipsis + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ellipsis))
    else:
        output = output.replace("...", ellipsis)
    for c in output:
        if output.count(c) > 1:
            raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
        if not any(c in s for s in subscripts):
            raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input operand")

    # repeated subscripts in one operand: take that diagonal (a view, whose backward scatters)
    operands = list(operands)
    for i, sub in enumerate(subscripts):
        while len(set(sub)) != len(sub):
            c = next(c for c in sub if sub.count(c) > 1)
            first = sub.index(c)
            second = sub.index(c, first + 1)
            t = operands[i]
            if t._array.shape[first] != t._array.shape[second]:
                raise RuntimeError(
                    f"einsum(): subscript {c} is repeated for operand {i} but the sizes don't match, "
                    f"{t._array.shape[first]} != {t._array.shape[second]}"
                )
            operands[i] = t.diagonal(0, first, second)
            sub = sub[:first] + sub[first + 1:second] + sub[second + 1:] + c
        subscripts[i] = sub

    # size-1 dims broadcast against the other operands' sizes: expand them (a view; backward sums)
    sizes = {}
    for i, (sub, t) in enumerate(zip(subscripts, operands)):
        for c, n in zip(sub, t._array.shape):
            seen = sizes.get(c, 1)
            if n != seen and n != 1 and seen != 1:
                raise RuntimeError(
                    f"einsum(): operands do not broadcast with remapped shapes (original->remapped): subscript {c} "
                    f"has size {n} for operand {i} which does not broadcast with previously seen size {seen}"
                )
            sizes[c] = max(seen, n) if seen != 1 else n
    if all(c in output for sub in subscripts for c in sub) and len(operands) <= 2:
        # nothing is summed: PyTorch permutes the operand (a view of it) or multiplies the two aligned operands
        aligned = [_aligned(t, sub, output) for t, sub in zip(operands, subscripts)]
        return aligned[0] if len(aligned) == 1 else aligned[0] * aligned[1]
    layout = _pair_layout(operands, subscripts, output) if len(operands) == 2 else output
    if len(operands) == 2 and grad_mode.state.enabled and (operands[0].requires_grad or operands[1].requires_grad):
        # where PyTorch's sumproduct_pair saves a reshaped copy (or a partial sum) of an operand for the other's
        # gradient, writing into that operand before backward is no error (seed 33376): save a copy too
        for i in (0, 1):
            if operands[1 - i].requires_grad and _pair_saves_copy(operands, subscripts, output, i):
                operands[i] = operands[i].clone()
    for i, (sub, t) in enumerate(zip(subscripts, operands)):
        full = tuple(sizes[c] for c in sub)
        if full != t._array.shape:
            operands[i] = t.expand(full)
    result = Einsum.apply(*operands, equation=",".join(subscripts) + "->" + output, layout=layout)
    # PyTorch's result is a view (of its bmm's output, permuted): a write into it goes through CopySlices, so its
    # gradient stays connected to the incoming one under create_graph (seeds 665076, 737387)
    return result.view(result._array.shape)


def _aligned(t: Tensor, sub: str, output: str) -> Tensor:
    """A view of ``t`` (subscripts ``sub``) with its dims in ``output``'s order and size 1 for the others."""
    if sub != "".join(c for c in output if c in sub):
        t = t.permute([sub.index(c) for c in output if c in sub])
    if len(sub) != len(output):
        t = t.view([t._array.shape[sub_order.index(c)] if c in sub else 1 for c in output]
                   if (sub_order := "".join(c for c in output if c in sub)) else [1] * len(output))
    return t


def _pair_saves_copy(operands, subscripts, output: str, i: int) -> bool:
    """Whether PyTorch's einsum hands operand ``i`` of a pair to its bmm as a copy: summed first over a dim only it
    has, or permuted to (shared dims, own dims, summed dims) (the right operand: shared, summed, own) in a way
    its reshape into three dims cannot view."""
    def size(j, c):
        return operands[j]._array.shape[subscripts[j].index(c)] if c in subscripts[j] else 1

    sub, t = subscripts[i], operands[i]
    summed = [c for c in sub if c not in output]
    if any(size(i, c) != 1 and size(1 - i, c) == 1 for c in summed):
        return True  # summed out before the product: PyTorch keeps the sum
    contracted = [c for c in summed if size(i, c) != 1]
    if not contracted:
        return False  # a plain product (mul): the operand itself is kept
    shared = [c for c in output if size(0, c) != 1 and size(1, c) != 1]
    own = [c for c in output if c not in shared and size(i, c) != 1]
    groups = [shared, own, contracted] if i == 0 else [shared, contracted, own]
    order = [c for g in groups for c in g]
    shape = tuple(size(i, c) for c in order)
    stride = tuple(t.stride()[sub.index(c)] for c in order)
    return view_strides(shape, stride, tuple(math.prod(size(i, c) for c in g) for g in groups)) is None


def _pair_layout(operands, subscripts, output: str) -> str:
    """The output's dims from outermost to innermost in memory, as PyTorch's sumproduct_pair lays out its bmm
    (measured on PyTorch 2.13): the dims both operands have (size > 1), then those of the operand that has the
    first of the other output dims, then the rest; each group in output order."""
    def size(i, c):
        sub = subscripts[i]
        return operands[i]._array.shape[sub.index(c)] if c in sub else 1

    both = [c for c in output if size(0, c) != 1 and size(1, c) != 1]
    first = next((c for c in output if c not in both and size(0, c) != 1), None)
    first_b = next((c for c in output if c not in both and size(1, c) != 1), None)
    lead = 1 if first_b is not None and (first is None or output.index(first_b) < output.index(first)) else 0
    left = [c for c in output if c not in both and size(lead, c) != 1]
    return "".join(both + left + [c for c in output if c not in both and c not in left])


def _rmatmul(self: Tensor, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(other, self)


def _matmul_method(self: Tensor, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(self, other)


__all__ = [
    "matmul", "mm", "spmm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv", "addr", "baddbmm",
    "addbmm", "tensordot", "kron", "cross", "einsum",
]
