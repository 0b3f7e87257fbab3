"""Shape ops that build a new tensor: cat/stack, repeat/tile, flip/roll, tril/triu, diag, trace,
and the broadcasting helpers (broadcast_to/broadcast_tensors/broadcast_shapes, atleast_*, meshgrid).

Where an op is a composition of views (repeat = reshape + expand + reshape, meshgrid = expand,
diag_embed = a strided write into zeros) it is written that way, so its gradient comes from those
views; only cat, flip, roll and tril/triu need kernels and derivatives of their own.
"""

from __future__ import annotations

import math
import warnings

from .._dtype import scalar_type_name
from ..tensor import Size, Tensor, from_array, wrap_dim
from .comparison import ne
from .concat import Cat, _shapes, _tensor_list, cat, concat, concatenate, stack  # noqa: F401 (re-exported)
from .conversion import Clone
from .op import Op, linear_jvp
from .views import Diagonal, ViewScatter, contiguous_strides, int_list


def hstack(tensors) -> Tensor:
    """Concatenate column-wise: along dim 0 for 1-D tensors, dim 1 otherwise."""
    tensors = atleast_1d(*_tensor_list("hstack", tensors))
    tensors = (tensors,) if isinstance(tensors, Tensor) else tensors
    return cat(tensors, 0 if tensors[0].dim() == 1 else 1)


def vstack(tensors) -> Tensor:
    """Concatenate row-wise after making every tensor at least 2-D."""
    tensors = atleast_2d(*_tensor_list("vstack", tensors))
    return cat((tensors,) if isinstance(tensors, Tensor) else tensors, 0)


row_stack = vstack


def dstack(tensors) -> Tensor:
    """Concatenate depth-wise (dim 2) after making every tensor at least 3-D."""
    tensors = atleast_3d(*_tensor_list("dstack", tensors))
    return cat((tensors,) if isinstance(tensors, Tensor) else tensors, 2)


def column_stack(tensors) -> Tensor:
    """Stack as columns: 0-d and 1-D tensors become ``(n, 1)`` columns, then ``hstack``."""
    tensors = _tensor_list("column_stack", tensors)
    return hstack([t.reshape(t.numel(), 1) if t.dim() <= 1 else t for t in tensors])


# repeating -------------------------------------------------------------------------------------


def repeat(input: Tensor, *sizes) -> Tensor:
    """The tensor tiled ``sizes[d]`` times along each dim (a copy): an expand of interleaved unit
    dims, reshaped, so the gradient sums the copies through expand's rule."""
    sizes = int_list("repeat", "repeats", sizes)
    if len(sizes) < input.dim():
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor "
            f"(repeat dims {list(sizes)}, tensor shape {list(input.shape)})"
        )
    if any(n < 0 for n in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension: repeat dims {list(sizes)}")
    shape = (1,) * (len(sizes) - input.dim()) + input._array.shape
    interleaved = input.reshape(tuple(x for n in shape for x in (1, n)))
    out = interleaved.expand(tuple(x for r, n in zip(sizes, shape) for x in (r, n)))
    out = out.reshape(tuple(r * n for r, n in zip(sizes, shape)))
    return Clone.apply(out, "C") if out._storage is input._storage else out  # a row-major copy, as PyTorch's


def tile(input: Tensor, *args, dims=None) -> Tensor:
    """``repeat`` with ``dims`` padded by leading ones when shorter than the tensor's rank."""
    dims = int_list("tile", "dims", args, dims)
    return repeat(input, (1,) * (input.dim() - len(dims)) + dims)


class RepeatInterleave(Op):
    """Each slice along ``dim`` repeated ``repeats`` times (an int, or an array of one count per slice); the
    gradient sums each slice's copies (an int: a reshape and a sum; counts: an index_add of the copies)."""

    jvp = linear_jvp  # forward mode: linear in its first input, so the op itself on the tangent (ops/op.py)

    def forward(self, x, repeats, dim):
        if type(repeats) is not int:
            repeats = repeats.tolist()  # CuPy's repeat takes counts as a list, not a device array
            self.index = self.xp.repeat(self.xp.arange(x.shape[dim]), repeats)
        self.dim, self.input_shape, self.repeats = dim, x.shape, repeats
        return self.xp.repeat(x, repeats, axis=dim)

    def backward(self, grad):
        if type(self.repeats) is int:
            return grad.unflatten(self.dim, (self.input_shape[self.dim], self.repeats)).sum(self.dim + 1)
        index = from_array(self.index, self.backend, grad.device)  # (the index_add method: ops/indexing.py is above)
        return grad.new_zeros(self.input_shape).index_add(self.dim, index, grad)


class RepeatIndices(Op):
    """``torch.repeat_interleave(repeats)``: index ``i`` repeated ``repeats[i]`` times, in ``repeats``' dtype."""

    def forward(self, repeats):
        return self.xp.repeat(self.xp.arange(repeats.shape[0], dtype=repeats.dtype), repeats.tolist())


def _check_repeats(repeats: Tensor) -> None:
    if repeats.dtype.name not in ("int64", "int32"):
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{scalar_type_name(repeats.dtype)}'")
    if repeats.numel() and bool((repeats < 0).any()):
        raise RuntimeError("repeats can not be negative")


def repeat_interleave(input: Tensor, repeats=None, dim: int | None = None, *, output_size: int | None = None) -> Tensor:
    """Each element (or each slice along ``dim``) repeated ``repeats`` times, in order: ``[a, a, b, b]``.
    ``repeats`` is an int or a tensor of one count per slice; without ``dim`` the input is flattened first.
    ``torch.repeat_interleave(repeats)`` alone gives the indices ``[0]*repeats[0] + [1]*repeats[1] + ...``."""
    if repeats is None:
        if input.dim() != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        _check_repeats(input)
        return RepeatIndices.apply(input)
    if dim is None:
        input, dim = input.reshape(-1), 0
    dim = wrap_dim(dim, input.dim())
    n = input.shape[dim] if input.dim() else 1
    if isinstance(repeats, Tensor):
        if repeats.dim() > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        _check_repeats(repeats)
        if repeats.numel() == 1:
            repeats = int(repeats.item())
        elif repeats.shape[0] != n:
            raise RuntimeError(
                f"repeats must have the same size as input along dim, but got repeats.size(0) = {repeats.shape[0]} "
                f"and input.size({dim}) = {n}"
            )
    elif isinstance(repeats, bool) or not isinstance(repeats, int):
        raise TypeError(f"repeat_interleave(): argument 'repeats' must be Tensor or int, not {type(repeats).__name__}")
    elif repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    if input.dim() == 0:
        input = input.reshape(1)
    if isinstance(repeats, Tensor):
        out = RepeatInterleave.apply(input, repeats._array, dim)
    else:
        out = RepeatInterleave.apply(input, repeats, dim)
    if output_size is not None and output_size != out.shape[dim]:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {out.shape[dim]} but got {output_size}")
    return out


# differences -----------------------------------------------------------------------------------


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None, append: Tensor | None = None
         ) -> Tensor:
    """The ``n``-th forward difference ``x[i + 1] - x[i]`` along ``dim`` (``!=`` for bools), after putting
    ``prepend``/``append`` before/after ``input``; written in narrow and subtraction, which give its gradient."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"diff(): argument 'n' must be int, not {type(n).__name__}")
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    dim = wrap_dim(dim, input.dim())
    parts = []
    for extra in (prepend, input, append):
        if extra is None:
            continue
        if extra.dim() != input.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        for d in range(input.dim()):
            if d != dim and extra.shape[d] != input.shape[d]:
                raise RuntimeError(
                    "diff expects the shape of tensor to prepend or append to match that of input except along the "
                    f"differencing dimension; input.size({d}) = {input.shape[d]}, but got tensor.size({d}) = "
                    f"{extra.shape[d]}"
                )
        parts.append(extra)
    out = cat(parts, dim) if len(parts) > 1 else input
    for _ in range(n):
        length = out.shape[dim]
        if length == 0:
            break
        later, earlier = out.narrow(dim, 1, length - 1), out.narrow(dim, 0, length - 1)
        out = ne(later, earlier) if out.dtype.name == "bool" else later - earlier
    return out


# reordering ------------------------------------------------------------------------------------


def _unique_dims(op: str, dims, ndim: int) -> tuple:
    wrapped = tuple(wrap_dim(d, ndim) for d in dims)
    for d in wrapped:
        if wrapped.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return wrapped


class Flip(Op):
    jvp = linear_jvp  # forward mode: linear in its first input, so the op itself on the tangent (ops/op.py)

    def forward(self, x, dims):
        self.dims = dims
        return self.xp.flip(x, axis=dims).copy() if dims else x.copy()

    def backward(self, grad):
        return grad.flip(self.dims)


def flip(input: Tensor, *args, dims=None) -> Tensor:
    """A copy with the order of elements reversed along ``dims`` (PyTorch copies; numpy would view)."""
    return Flip.apply(input, dims=_unique_dims("flip", int_list("flip", "dims", args, dims), input.dim()))


def fliplr(input: Tensor) -> Tensor:
    if input.dim() < 2:
        raise RuntimeError(f"Input must be >= 2-d. (fliplr got shape {list(input.shape)})")
    return flip(input, (1,))


def flipud(input: Tensor) -> Tensor:
    if input.dim() < 1:
        raise RuntimeError(f"Input must be >= 1-d. (flipud got shape {list(input.shape)})")
    return flip(input, (0,))


class Roll(Op):
    row_major_output = True

    jvp = linear_jvp  # forward mode: linear in its first input, so the op itself on the tangent (ops/op.py)

    def forward(self, x, shifts, dims):
        self.shifts, self.dims = shifts, dims
        return self.xp.roll(x, shifts, axis=dims)

    def backward(self, grad):
        return grad.roll(tuple(-s for s in self.shifts), self.dims)


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    """Elements shifted cyclically along ``dims`` (with ``dims=None``, over the flattened tensor)."""
    shifts = (shifts,) if isinstance(shifts, int) else tuple(int(s) for s in shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return Roll.apply(input.reshape(-1), shifts=shifts, dims=(0,)).view(input.shape)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    return Roll.apply(input, shifts=shifts, dims=tuple(wrap_dim(d, input.dim()) for d in dims))


# triangles and diagonals -----------------------------------------------------------------------


class Triangle(Op):
    """Zeros outside the lower (``upper=False``) or upper triangle of the last two dims."""

    row_major_output = True

    def name(self) -> str:
        return "TriuBackward0" if self.upper else "TrilBackward0"

    jvp = linear_jvp  # forward mode: linear in its first input, so the op itself on the tangent (ops/op.py)

    def forward(self, x, diagonal, upper):
        self.diagonal, self.upper = diagonal, upper
        xp = self.xp
        n, m = x.shape[-2:]
        keep = xp.tri(n, m, diagonal - 1, dtype=bool) == 0 if upper else xp.tri(n, m, diagonal, dtype=bool)
        return xp.where(keep, x, xp.zeros((), dtype=x.dtype))

    def backward(self, grad):
        return Triangle.apply(grad, diagonal=self.diagonal, upper=self.upper)


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle (on and below the ``diagonal``-th diagonal) of the last two dims."""
    if input.dim() < 2:
        raise RuntimeError(f"tril: input tensor must have at least 2 dimensions (got shape {list(input.shape)})")
    return Triangle.apply(input, diagonal=int(diagonal), upper=False)


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle (on and above the ``diagonal``-th diagonal) of the last two dims."""
    if input.dim() < 2:
        raise RuntimeError(f"triu: input tensor must have at least 2 dimensions (got shape {list(input.shape)})")
    return Triangle.apply(input, diagonal=int(diagonal), upper=True)


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices (in dims ``dim1``, ``dim2``) whose ``offset``-th diagonal holds the last dim of
    ``input``: the input written into that strided region of zeros, so the gradient is the
    diagonal of the output's gradient."""
    ndim = input.dim() + 1
    dim1, dim2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if dim1 == dim2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    batch = iter(input._array.shape[:-1])
    n = (input._array.shape[-1] if input.dim() else 1) + abs(offset)
    shape = tuple(n if d in (dim1, dim2) else next(batch) for d in range(ndim))
    size, stride, start = Diagonal.geometry(None, shape, contiguous_strides(shape), 0, offset, dim1, dim2)
    source = input if input.dim() else input.reshape(1)
    return ViewScatter.apply(source, math.prod(shape), size, stride, start).view(shape)


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A vector's square diagonal matrix, or (a copy of) a matrix's ``diagonal``-th diagonal."""
    if input.dim() == 1:
        return diag_embed(input, diagonal)
    if input.dim() == 2:
        return input.diagonal(diagonal).clone()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.dim()}D (shape {list(input.shape)})")


def trace(input: Tensor) -> Tensor:
    """Sum of a matrix's main diagonal (integer inputs sum in int64)."""
    if input.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.dim()}")
    return input.diagonal().sum()


# broadcasting ----------------------------------------------------------------------------------


def broadcast_shapes(*shapes):
    """The shape that tensors of ``shapes`` broadcast to (ints count as 1-D shapes)."""
    shapes = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    ndim = max((len(s) for s in shapes), default=0)
    result = [1] * ndim
    owner = [0] * ndim
    for k, shape in enumerate(shapes):
        for i, n in enumerate(shape, ndim - len(shape)):
            if n < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {list(shape)}")
            if n != 1:
                if result[i] not in (1, n):
                    raise RuntimeError(
                        "Shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is between arg "
                        f"{owner[i]} and arg {k}. (shapes {', '.join(str(list(s)) for s in shapes)})"
                    )
                result[i], owner[i] = n, k
    return Size(result)


def broadcast_tensors(*tensors):
    """Views of ``tensors`` expanded to their common broadcast shape."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    ndim = max((t.dim() for t in tensors), default=0)
    shape = [1] * ndim
    for t in tensors:
        for i, n in enumerate(t._array.shape, ndim - t.dim()):
            if n != 1:
                if shape[i] not in (1, n):
                    raise RuntimeError(
                        f"The size of tensor a ({shape[i]}) must match the size of tensor b ({n}) at non-singleton "
                        f"dimension {i} (shapes {_shapes(tensors)})"
                    )
                shape[i] = n
    shape = tuple(shape)
    return tuple(t if t._array.shape == shape else t.expand(shape) for t in tensors)


def broadcast_to(input: Tensor, *args, size=None) -> Tensor:
    """``input.expand(size)``: a view with stride 0 along broadcast dims."""
    return input.expand(int_list("broadcast_to", "size", args, size))


def _at_least(ndim: int, reshape, tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
        return tuple(_at_least(ndim, reshape, (t,)) for t in tensors)
    if len(tensors) == 1:
        t = tensors[0]
        return t if t.dim() >= ndim else t.reshape(reshape(t._array.shape))
    return tuple(_at_least(ndim, reshape, (t,)) for t in tensors)


def atleast_1d(*tensors):
    """Each tensor viewed with at least one dim (0-d becomes ``(1,)``)."""
    return _at_least(1, lambda s: (1,), tensors)


def atleast_2d(*tensors):
    """Each tensor viewed with at least two dims: ``()`` -> ``(1, 1)``, ``(n,)`` -> ``(1, n)``."""
    return _at_least(2, lambda s: (1,) * (2 - len(s)) + s, tensors)


def atleast_3d(*tensors):
    """Each tensor viewed with at least three dims: ``(n,)`` -> ``(1, n, 1)``, ``(m, n)`` -> ``(m, n, 1)``."""
    return _at_least(3, lambda s: {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}[len(s)], tensors)


def meshgrid(*tensors, indexing: str | None = None):
    """Coordinate grids (expanded views) of 0-D/1-D tensors; ``'xy'`` swaps the first two dims."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn(
            "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
            UserWarning,
            stacklevel=2,
        )
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(
                f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got shape {list(t.shape)}"
            )
        if t.dtype is not tensors[0].dtype or t.device != tensors[0].device:
            raise RuntimeError(
                "meshgrid expects all tensors to have the same dtype and device "
                f"(got {tensors[0].dtype} on {tensors[0].device} and {t.dtype} on {t.device})"
            )
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors = (tensors[1], tensors[0]) + tuple(tensors[2:])
    shape = tuple(t.numel() for t in tensors)
    grids = []
    for i, t in enumerate(tensors):
        view_shape = [1] * len(shape)
        view_shape[i] = -1
        grids.append(t.reshape(view_shape).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(*tensors) -> Tensor:
    """All combinations of the elements of 1-D tensors, one per row (like itertools.product)."""
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    return stack([g.reshape(-1) for g in meshgrid(*tensors, indexing="ij")], dim=1)


__all__ = [
    "cat", "concat", "concatenate", "stack", "hstack", "vstack", "row_stack", "dstack", "column_stack",
    "repeat_interleave", "diff", "tile", "flip", "fliplr", "flipud", "roll", "tril", "triu", "diag", "diag_embed",
    "trace",
    "broadcast_shapes", "broadcast_tensors", "broadcast_to", "atleast_1d", "atleast_2d", "atleast_3d",
    "meshgrid", "cartesian_prod",
]
