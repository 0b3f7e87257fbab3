"""Indexing by tensors: advanced ``t[index]``, gather/scatter, index_select/index_add/..., masks, take, nonzero.

Every read that may repeat an index (advanced indexing, gather, index_select, take) has a gradient
that *adds* into zeros (``backend.index_add``: numpy's add.at, CuPy's scatter_add), so
``x[[0, 0, 1]].sum().backward()`` gives ``[2, 1, 0]``; a plain ``g[idx] += v`` would count a
repeated index once. Each accumulate op's own gradient is the matching read, so double backward works.

Index arrays are validated and normalized (negative values wrapped, moved to the input's device)
before an op runs, and every op keeps its own copy of them: changing an index tensor afterwards
cannot change a gradient.
"""

from __future__ import annotations

import math

from .. import _dtype
from .._dtype import scalar_type_name
from ..creation import tensor
from ..tensor import Tensor, wrap_dim
from .comparison import where
from .op import Op, linear_jvp
from .promotion import array_kind, promote
from .shape import broadcast_shapes, broadcast_tensors
from .views import Index, ViewScatter, contiguous_strides, normalize_basic_index

_INTEGER_INDEX = ("int64", "int32")  # what PyTorch's index kernels take (bool/uint8 are masks)


def dim_index(xp, index, dim: int) -> tuple:
    """A numpy-style fancy index addressing ``out[..., index[...], ...]`` along ``dim``: broadcast
    aranges on every other axis, ``index`` itself on ``dim``."""
    ndim = index.ndim
    grids = []
    for d, n in enumerate(index.shape):
        if d == dim:
            grids.append(index)
        else:
            shape = [1] * ndim
            shape[d] = n
            grids.append(xp.arange(n).reshape(shape))
    return tuple(grids)


def _along(dim: int, index) -> tuple:
    """The numpy index ``[:, ..., :, index]`` with ``index`` at position ``dim``."""
    return (slice(None),) * dim + (index,)


def _check_index(op: str, input: Tensor, dim: int, index: Tensor, src=None) -> int:
    """PyTorch's gather/scatter checks: int32 or int64 index of input's rank, no larger than input (apart from
    ``dim``) and src, with values in ``[0, size)`` (these ops do not wrap negative indices)."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' (position 3) must be Tensor, not {type(index).__name__}")
    if index.dtype.name not in _INTEGER_INDEX:
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index (got {index.dtype})")
    if op in ("scatter", "scatter_add") and isinstance(src, Tensor) and src.dtype is not input.dtype:
        raise RuntimeError(f"scatter(): Expected self.dtype to be equal to src.dtype (got {input.dtype} and "
                           f"{src.dtype})")
    ndim = input.dim()
    dim = wrap_dim(dim, ndim)
    if index.numel() == 0:
        return dim
    if index.dim() != ndim:
        raise RuntimeError(f"Index tensor must have the same number of dimensions as input tensor ({op}: input "
                           f"{list(input.shape)}, index {list(index.shape)})")
    shape, index_shape = input._array.shape, index._array.shape
    for d in range(ndim):
        if d != dim and index_shape[d] > shape[d]:
            raise RuntimeError(f"Size does not match at dimension {d} expected index {list(index_shape)} to be "
                               f"smaller than self {list(shape)} apart from dimension {dim}")
    if isinstance(src, Tensor):
        if src.dim() != index.dim():
            raise RuntimeError(f"Index tensor must have the same number of dimensions as src tensor ({op}: index "
                               f"{list(index_shape)}, src {list(src.shape)})")
        if any(n > m for n, m in zip(index_shape, src._array.shape)):
            raise RuntimeError(f"Expected index {list(index_shape)} to be smaller than self {list(shape)} apart from "
                               f"dimension {dim} and to be smaller size than src {list(src.shape)}")
    size = shape[dim] if ndim else 1
    if input.device.type != "meta":
        low, high = int(index._array.min()), int(index._array.max())
        if low < 0 or high >= size:
            raise RuntimeError(f"{op}(): index {low if low < 0 else high} is out of bounds for dimension {dim} "
                               f"with size {size}")
    return dim


def _check_index_type(op: str, index) -> None:
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): index must be a Tensor, not {type(index).__name__}")
    if index.dtype.name not in _INTEGER_INDEX:
        if op == "index":
            raise IndexError(f"tensors used as indices must be long, int, byte or bool tensors (got {index.dtype})")
        raise RuntimeError(f"{op}(): Expected dtype int32 or int64 for index, but got {index.dtype}")


def _index_array(op: str, input: Tensor, index: Tensor, size: int, *, wrap: bool, message: str | None = None,
                 error: type = IndexError, empty_result: bool = False):
    """``index`` as an int64 array on ``input``'s device, bounds-checked against ``size`` (negative
    values wrapped when ``wrap``); always a fresh array the caller's op may keep.

    With ``empty_result`` (advanced indexing whose result has no element) PyTorch's kernel visits no
    element and checks no bound: the index comes back as zeros, which numpy accepts."""
    _check_index_type(op, index)
    if index.device != input.device:
        index = index.to(input.device)
    backend = input._storage.backend
    array = index._array.astype(backend.array_dtype(_dtype.int64), copy=True)
    if empty_result:
        return backend.xp.zeros_like(array)
    if array.size and input.device.type != "meta":
        low, high = int(array.min()), int(array.max())
        bad = high if high >= size else (low if low < (-size if wrap else 0) else None)
        if bad is not None:
            raise error(message.format(index=bad) if message else
                             f"index {bad} is out of bounds for dimension with size {size}")
        if wrap and low < 0:
            array = backend.xp.where(array < 0, array + size, array)
    return array


# advanced indexing --------------------------------------------------------------------------


class AdvancedIndex(Op):
    """``x[index]`` for a numpy index tuple of slices and (checked, non-negative) integer arrays:
    numpy's rule places the indexed dims where PyTorch does once integer scalars are selected."""

    def name(self) -> str:
        return "IndexBackward0"

    jvp = linear_jvp  # forward mode: linear in its first input, so the op itself on the tangent (ops/op.py)

    def forward(self, x, index):
        self.index, self.input_shape = index, x.shape
        out = x[index]
        # PyTorch's index kernel lays out a row-major input's result row-major; numpy puts the indexed dims first
        # in memory when they are not leading (seed 760426). (A strided input's result: numpy's layout.)
        if type(out) is self.backend.ndarray and x.flags.c_contiguous and not out.flags.c_contiguous:
            out = self.xp.ascontiguousarray(out)
        return out

    def backward(self, grad):
        return IndexPut.apply(grad.new_zeros(self.input_shape), grad, index=self.index, accumulate=True)


class IndexPut(Op):
    """A copy of ``x`` with ``values`` written (or, with ``accumulate``, added) at a numpy index tuple."""

    def forward(self, x, values, index, accumulate):
        self.index, self.accumulate = index, accumulate
        self.values_is_tensor = hasattr(values, "shape")
        if self.values_is_tensor:
            values = values.astype(x.dtype, copy=False)
        out = x.copy()
        if accumulate:
            self.backend.index_add(out, index, values)
        else:
            out[index] = values
        return out

    def backward(self, grad):
        grad_values = AdvancedIndex.apply(grad, index=self.index) if self.values_is_tensor else None
        grad_input = grad if self.accumulate else IndexPut.apply(grad, 0.0, index=self.index, accumulate=False)
        return grad_input, grad_values


def _treat_sequence_as_tuple(index) -> bool:
    """PyTorch's (numpy's legacy) rule: a short list holding slices, None, Ellipsis, tensors or
    sequences is a tuple of indices (``x[[t0, t1]]`` is ``x[t0, t1]``); a list of ints is one index."""
    if isinstance(index, tuple):
        return True
    if not isinstance(index, list) or len(index) >= 32:
        return False
    return any(item is None or item is Ellipsis or isinstance(item, (slice, Tensor, list, tuple)) for item in index)


def _as_index_tensor(item, device) -> Tensor:
    """A list/array index as a tensor (on the CPU for a meta input: its values are known)."""
    device = "cpu" if device.type == "meta" else device
    if isinstance(item, (list, tuple)) and len(item) == 0:
        return tensor([], dtype=_dtype.int64, device=device)
    return tensor(item, device=device)


def _index_items(index, device) -> list:
    """The index as a list of None, Ellipsis, int, slice, bool and Tensor items."""
    items = list(index) if _treat_sequence_as_tuple(index) else [index]
    result = []
    for item in items:
        if item is None or item is Ellipsis or isinstance(item, (slice, Tensor, bool)):
            result.append(item)
        elif isinstance(item, int):
            result.append(int(item))
        elif isinstance(item, (list, tuple)) or hasattr(item, "__array__") or hasattr(item, "__dlpack__"):
            if not hasattr(item, "__len__") and hasattr(item, "__index__"):  # numpy integer scalar
                result.append(int(item.__index__()))
            else:
                result.append(_as_index_tensor(item, device))
        elif hasattr(item, "__index__"):
            result.append(int(item.__index__()))
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
                f"(got {type(item).__name__})"
            )
    return result


def _is_mask(item) -> bool:
    return isinstance(item, Tensor) and item.dtype.name in ("bool", "uint8")


def _consumed_dims(item) -> int:
    """How many input dims an index item uses up (None and 0-d bools use none)."""
    if item is None or item is Ellipsis or isinstance(item, bool):
        return 0
    if isinstance(item, Tensor):
        if item.dtype.is_floating_point:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return item.dim() if _is_mask(item) else 1
    return 1


def broadcast_shapes_of(op: str, shapes) -> tuple:
    """numpy broadcasting of index shapes, with PyTorch's IndexError when they disagree."""
    ndim = max((len(s) for s in shapes), default=0)
    result = [1] * ndim
    for shape in shapes:
        for i, n in enumerate(shape, ndim - len(shape)):
            if n != 1:
                if result[i] not in (1, n):
                    raise IndexError(
                        "shape mismatch: indexing tensors could not be broadcast together with shapes "
                        + ", ".join(str(list(s)) for s in shapes)
                    )
                result[i] = n
    return tuple(result)


# kind -> function(input, items): ``input[items]`` where an index tensor is of that kind (vmap's BatchedTensors:
# per-sample indices, minitorch/func/batching_rules.py)
NON_DENSE_INDEX: dict = {}


def advanced_getitem(input: Tensor, index) -> Tensor:
    """``input[index]`` with integer/bool tensors or lists among the index items (PyTorch semantics).

    Integers, slices, None and Ellipsis are applied first as one basic view (as PyTorch does, so an
    integer scalar is a select and never joins the advanced indices). Masks become their nonzero
    coordinates. The index tensors broadcast together; their result dims replace the indexed dims
    when those are adjacent, and go first otherwise (numpy's rule)."""
    items = _index_items(index, input.device)
    for item in items:
        if isinstance(item, Tensor) and not item._dense and item._kind in NON_DENSE_INDEX:
            return NON_DENSE_INDEX[item._kind](input, items)
    basic, slots = _split_index(input, items)
    view = input if all(b == slice(None) for b in basic) else input[tuple(basic)]
    if all(slot is None for slot in slots):
        return view
    shape = view._array.shape
    empty = _empty_result("index", shape, slots)
    arrays = []
    for j, slot in enumerate(slots):
        if slot is None:
            arrays.append(slice(None))
            continue
        message = f"index {{index}} is out of bounds for dimension {j} with size {shape[j]}"
        arrays.append(_index_array("index", view, slot, shape[j], wrap=True, message=message, empty_result=empty))
    return AdvancedIndex.apply(view, index=tuple(arrays))


def assignment_index(input: Tensor, index) -> tuple:
    """``index`` for ``input[index] = v`` as numpy reads it: its items (lists as index tensors), with the integer
    index tensors made zeros when nothing is selected, since PyTorch then checks no bound (as in reading)."""
    items = _index_items(index, input.device)
    basic, slots = _split_index(input, items)
    if any(slot is not None for slot in slots):
        view_shape = input._array[tuple(basic)].shape if input.dim() else ()
        if _empty_result("index_put_", view_shape, slots):
            items = [input.new_zeros(item.shape, dtype=item.dtype) if isinstance(item, Tensor) and not _is_mask(item)
                     and item.dim() else item for item in items]
    return tuple(items)


def _split_index(input: Tensor, items: list) -> tuple[list, list]:
    """The index items split into a basic index (ints, slices, None: one view) and, per dim of that view, None
    or the index Tensor applied to it (masks become their nonzero coordinates). An Ellipsis in ``items`` is
    replaced by the slices it stands for."""
    ndim = input.dim()
    consumed = sum(_consumed_dims(item) for item in items)
    ellipses = [i for i, item in enumerate(items) if item is Ellipsis]  # identity: Tensor == is elementwise
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    if ellipses:
        at = ellipses[0]
        items[at : at + 1] = [slice(None)] * (ndim - consumed)
    basic, slots, dim = [], [], 0  # slots: per dim of the basic view, None or an index Tensor
    for item in items:
        if item is None:
            basic.append(None)
            slots.append(None)
        elif isinstance(item, slice):
            if item.step is not None and item.step <= 0:
                raise ValueError("step must be greater than zero")
            basic.append(item)
            slots.append(None)
            dim += 1
        elif isinstance(item, bool) or (isinstance(item, Tensor) and item.dim() == 0 and _is_mask(item)):
            basic.append(None)  # a 0-d mask adds a dim of size 1 and keeps (True) or drops (False) it
            slots.append(_as_index_tensor([0] if bool(item) else [], input.device))
        elif isinstance(item, int) or (isinstance(item, Tensor) and item.dim() == 0):
            basic.append(int(item))  # an integer (or 0-d integer tensor) selects, as in PyTorch
            dim += 1
        elif _is_mask(item):
            shape = input._array.shape
            for j, n in enumerate(item._array.shape):
                if n != shape[dim + j]:
                    raise IndexError(
                        f"The shape of the mask {list(item.shape)} at index {j} does not match the shape of the "
                        f"indexed tensor {list(input.shape)} at index {dim + j}"
                    )
            basic.extend([slice(None)] * item.dim())
            slots.extend(nonzero(item.to(input.device), as_tuple=True))
            dim += item.dim()
        else:
            basic.append(slice(None))
            slots.append(item)
            dim += 1
    return basic, slots


def _empty_result(op: str, shape: tuple, slots: list) -> bool:
    """Whether advanced indexing of ``shape`` by ``slots`` (the leading dims' index Tensors, None for a whole dim)
    selects no element, after PyTorch's checks that hold even then: the indices are integer tensors whose shapes
    broadcast, and a dim of size 0 takes no index unless the broadcast index is empty."""
    for slot in slots:
        if slot is not None:
            _check_index_type(op, slot)
    index_shape = broadcast_shapes_of(op, [tuple(slot.shape) for slot in slots if slot is not None])
    for n, slot in zip(shape, slots):
        if slot is not None and n == 0 and 0 not in index_shape:  # (an empty broadcast index reads nothing: 357124)
            raise IndexError("index is out of bounds for dimension with size 0")
    kept = [n for j, n in enumerate(shape) if j >= len(slots) or slots[j] is None]
    return 0 in index_shape or 0 in kept


def _index_put_arrays(op: str, input: Tensor, indices) -> tuple:
    """``indices`` (a tuple of index tensors, None for a whole dim) as a checked numpy index tuple."""
    if len(indices) > input.dim():
        raise IndexError(f"too many indices for tensor of dimension {input.dim()} (got {len(indices)})")
    slots = []  # per leading dim: None or an index Tensor (a mask gives one per dim it covers)
    for index in indices:
        if index is not None and _is_mask(index):
            slots.extend(nonzero(index.to(input.device), as_tuple=True))
        else:
            slots.append(index)
    shape = input._array.shape
    empty = _empty_result(op, shape, slots)
    return tuple(
        slice(None) if slot is None else _index_array(
            op, input, slot, shape[j], wrap=True, empty_result=empty,
            message=f"index {{index}} is out of bounds for dimension {j} with size {shape[j]}")
        for j, slot in enumerate(slots)
    )


def _check_broadcasts_to_result(values: Tensor, shape: tuple) -> None:
    """PyTorch broadcasts index_put's values to the indexed shape by the ordinary rule (numpy's assignment would
    also drop their leading size-1 dims; setitem does that itself, as PyTorch's does)."""
    sizes = values._array.shape
    if len(sizes) > len(shape) or any(v not in (1, s) for v, s in zip(reversed(sizes), reversed(shape))):
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(sizes)} cannot be broadcast to indexing result of shape "
            f"{list(shape)}"
        )


def index_put(input: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``input[indices] = values`` (``+=`` with ``accumulate``; repeated
    indices then add up). Differentiable in ``input`` and ``values``."""
    index = _index_put_arrays("index_put", input, tuple(indices))
    if isinstance(values, Tensor) and values.dtype is not input.dtype:
        raise RuntimeError(
            f"Index put requires the source and destination dtypes match, got {input.dtype} for the destination "
            f"and {values.dtype} for the source."
        )
    if isinstance(values, Tensor) and values.dim():
        _check_broadcasts_to_result(values, input._array[index].shape)
    return IndexPut.apply(input, values, index=index, accumulate=bool(accumulate))


# gather / scatter ---------------------------------------------------------------------------


def pad_to(grad: Tensor, shape: tuple) -> Tensor:
    """``grad`` placed at the start of zeros of ``shape`` (src may be larger than index)."""
    if grad._array.shape == tuple(shape):
        return grad
    return ViewScatter.apply(grad, math.prod(shape), grad._array.shape, contiguous_strides(shape), 0).view(shape)


class Gather(Op):
    save_inputs = (0, 1)  # PyTorch saves the input too (its gradient reads only its shape)

    jvp = linear_jvp  # forward mode: linear in its first input, so the op itself on the tangent (ops/op.py)

    def forward(self, x, index, dim):
        self.dim, self.input_shape = dim, x.shape
        return x[dim_index(self.xp, index, dim)]

    def backward(self, grad):
        _, index = self.saved_tensors
        return grad.new_zeros(self.input_shape).scatter_add(self.dim, index, grad), None


class ScatterAdd(Op):
    save_inputs = (1,)
    saved_when = {1: (2,)}  # only src's gradient reads the index

    def forward(self, x, index, src, dim):
        x, src, _ = promote(self, x, src)
        self.dim, self.src_shape = dim, src.shape
        out = x.copy()
        if index.size:
            self.backend.index_add(out, dim_index(self.xp, index, dim), src[tuple(slice(0, n) for n in index.shape)])
        return out

    def backward(self, grad):
        (index,) = self.saved_tensors
        return grad, None, (pad_to(grad.gather(self.dim, index), self.src_shape) if index is not None else None)


class Scatter(Op):
    save_inputs = (1,)

    def name(self) -> str:  # ScatterBackward0: a src tensor, ScatterBackward1: a value
        return "ScatterBackward0" if self.with_src else "ScatterBackward1"

    def forward(self, x, index, src, dim):
        self.dim, self.src_shape, self.with_src = dim, getattr(src, "shape", ()), hasattr(src, "shape")
        out = x.copy()
        if index.size:
            value = src if not hasattr(src, "shape") else src[tuple(slice(0, n) for n in index.shape)]
            out[dim_index(self.xp, index, dim)] = value
        return out

    def backward(self, grad):
        (index,) = self.saved_tensors
        grad_src = pad_to(grad.gather(self.dim, index), self.src_shape) if self.src_shape else None
        return grad.scatter(self.dim, index, value=0.0), None, grad_src


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """``out[i][j] = input[i][index[i][j]]`` (dim=1): picks along ``dim``; the gradient scatter-adds back."""
    dim = _check_index("gather", input, dim, index)
    return Gather.apply(input, index, dim)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim``; repeated indices add up."""
    dim = _check_index("scatter_add", input, dim, index, src)
    return ScatterAdd.apply(input, index, src, dim)


def scatter(input: Tensor, dim: int, index: Tensor, src=None, *, value=None, reduce=None) -> Tensor:
    """A copy of ``input`` with ``src`` (or a scalar ``value``) written at ``index`` along ``dim``."""
    dim = _check_index("scatter", input, dim, index, src)
    if reduce is not None:
        if src is None:
            src = input.new_full(tuple(index.shape), value)
        if reduce == "add":
            return scatter_add(input, dim, index, src)
        if reduce == "multiply":
            return scatter_reduce(input, dim, index, src, "prod")
        raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce}")
    return Scatter.apply(input, index, value if src is None else src, dim)


_REDUCE_UFUNC = {"sum": "add", "prod": "multiply", "mean": "add", "amax": "maximum", "amin": "minimum"}


class ScatterReduce(Op):
    """Reduce ``src`` into a copy of ``input`` at ``index`` along ``dim`` (numpy's ufunc.at).
    Gradients follow PyTorch: amax/amin split the gradient evenly between tied maxima."""

    save_inputs = (0, 1)
    save_output = True

    def forward(self, x, src, index, dim, reduce, include_self):
        self.dim, self.reduce, self.include_self, self.index = dim, reduce, include_self, index
        self.src_shape = src.shape
        xp = self.xp
        src = src[tuple(slice(0, n) for n in index.shape)].astype(x.dtype, copy=False)
        where = dim_index(xp, index, dim)
        out = x.copy()
        if not include_self:
            identity = {"sum": 0, "mean": 0, "prod": 1}.get(reduce)
            if identity is None:
                info = self.backend.finfo(x.dtype) if array_kind(x.dtype) == "f" else xp.iinfo(x.dtype)
                identity = info.min if reduce == "amax" else info.max
            out[where] = identity
        if reduce in ("sum", "mean"):
            self.backend.index_add(out, where, src)
        else:  # numpy's ufunc.at; CuPy's covers maximum/minimum (a backend index_reduce would cover prod)
            getattr(xp, _REDUCE_UFUNC[reduce]).at(out, where, src)
        if reduce == "mean":
            count = xp.zeros(x.shape, dtype=out.dtype) + (1 if include_self else 0)
            self.backend.index_add(count, where, xp.ones(index.shape, dtype=out.dtype))
            self.count = xp.maximum(count, 1)
            out = out / self.count if array_kind(out.dtype) == "f" else out // self.count
        return out

    def backward(self, grad):
        x, src, out = self.saved_tensors
        dim, index, reduce = self.dim, self.wrap(self.index), self.reduce
        scattered = self.wrap(self._scattered_mask(x._array.shape))
        if reduce in ("sum", "mean"):
            if reduce == "mean":
                grad = grad / self.wrap(self.count)
            grad_input = grad if self.include_self else grad.masked_fill(scattered, 0.0)
            grad_src = grad.gather(dim, index)
        elif reduce == "prod":
            grad_input, grad_src = self._prod_backward(grad, x, src, out, index)
        else:
            src = src[tuple(slice(0, n) for n in index.shape)]
            input_is_result = (x == out) if self.include_self else ~scattered
            src_is_result = src == out.gather(dim, index)
            count = input_is_result.to(grad.dtype).scatter_add(dim, index, src_is_result.to(grad.dtype))
            share = grad / count.masked_fill(count == 0, 1.0)
            grad_input = share.masked_fill(~input_is_result, 0.0)
            grad_src = share.gather(dim, index).masked_fill(~src_is_result, 0.0)
        if not self.include_self:
            grad_input = grad_input.masked_fill(scattered, 0.0)
        return grad_input, pad_to(grad_src, self.src_shape)

    def _scattered_mask(self, shape):
        mask = self.xp.zeros(shape, dtype=bool)
        mask[dim_index(self.xp, self.index, self.dim)] = True
        return mask

    def _prod_backward(self, grad, x, src, out, index):
        """PyTorch's rule: the product of the *other* factors, exact when some factors are zero."""
        dim, include_self = self.dim, self.include_self
        src = src[tuple(slice(0, n) for n in index.shape)]
        masked_input = x.masked_fill(x == 0, 1.0)
        others = scatter_reduce(masked_input, dim, index, src, "prod", include_self=include_self)
        grad_input = grad * others / masked_input
        src_zero = src == 0
        zeros_per_slot = x.new_zeros(x.shape).scatter_add(dim, index, src_zero.to(x.dtype)).gather(dim, index)
        single_zero = src_zero & (zeros_per_slot == 1)
        masked_src = src.masked_fill(single_zero, 1.0)
        with_one = scatter_reduce(x, dim, index, masked_src, "prod", include_self=include_self)
        grad_src = where(single_zero, (grad * with_one).gather(dim, index),
                         (grad * out).gather(dim, index) / src.masked_fill(src_zero, 1.0))
        return grad_input, grad_src


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """Reduce ``src`` into ``input`` at ``index`` along ``dim`` with sum, prod, mean, amax or amin."""
    if reduce not in _REDUCE_UFUNC:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    dim = _check_index("scatter_reduce", input, dim, index, src)
    if src.dtype is not input.dtype:
        raise RuntimeError(
            f"scatter_reduce(): Expected self.dtype to be equal to src.dtype (got {input.dtype} and {src.dtype})"
        )
    array = _index_array("scatter_reduce", input, index, input._array.shape[dim], wrap=False)
    return ScatterReduce.apply(input, src, index=array, dim=dim, reduce=reduce, include_self=bool(include_self))


# along one dim: index_select, index_add, index_fill, index_copy --------------------------------


class IndexSelect(Op):
    jvp = linear_jvp  # forward mode: linear in its first input, so the op itself on the tangent (ops/op.py)

    def forward(self, x, index, dim):
        self.index, self.dim, self.input_shape = index, dim, x.shape
        return self.xp.take(x, index, axis=dim)

    def backward(self, grad):
        return IndexAdd.apply(grad.new_zeros(self.input_shape), grad, index=self.index, dim=self.dim, alpha=1)


class IndexAdd(Op):
    # PyTorch saves source for its own gradient (it reads source.dim() and expands to its shape): writing into
    # source before backward raises, even when source is an (empty) view of the tensor index_add_ writes (seed
    # 110008)
    save_inputs = (1,)
    saved_when = {1: (1,)}

    def forward(self, x, source, index, dim, alpha, unread_index=None):
        self.index, self.dim, self.alpha = index, dim, alpha
        out = x.copy()
        if index is None:  # nothing to add to (an empty input): the indices are not looked at
            self.source_shape, self.empty_dim = source.shape, x.shape[dim] == 0 and source.shape[dim] > 0
            self.unread_index, self.dim_size = unread_index, x.shape[dim]
            return out
        self.backend.index_add(out, _along(dim, index), (source if alpha == 1 else source * alpha).astype(x.dtype))
        return out

    def backward(self, grad):
        if self.needs_grad(1):
            self.saved_tensors  # noqa: B018 - unpacking checks the saved source's version
        if self.index is None:  # PyTorch's backward is index_select(grad, dim, index), which refuses this
            if not self.needs_grad(1):  # (only when source wants a gradient: seed 409335)
                return grad, None
            if self.empty_dim:
                raise RuntimeError(_EMPTY_AXIS)
            if self.unread_index is not None:  # index_select checks every index, even of an empty tensor
                for i in self.unread_index.reshape(-1).tolist():
                    if not 0 <= i < self.dim_size:
                        raise RuntimeError(f"INDICES element is out of DATA bounds, id={i} axis_dim={self.dim_size}")
            return grad, grad.new_zeros(self.source_shape)
        grad_source = IndexSelect.apply(grad, index=self.index, dim=self.dim)
        return grad, grad_source if self.alpha == 1 else grad_source * self.alpha


class IndexFill(Op):
    """``value`` (a scalar or a 0-d tensor) written at ``index`` along ``dim`` of a copy of ``x``."""

    def forward(self, x, value, index, dim):
        self.index, self.dim, self.value_is_tensor = index, dim, hasattr(value, "shape")
        out = x.copy()
        out[_along(dim, index)] = value
        return out

    def backward(self, grad):
        grad_input = IndexFill.apply(grad, 0.0, index=self.index, dim=self.dim)
        if not self.value_is_tensor:
            return grad_input
        unique = self.xp.unique(self.index)  # a repeated index fills one element once
        return grad_input, IndexSelect.apply(grad, index=unique, dim=self.dim).sum()


class IndexCopy(Op):
    def forward(self, x, source, index, dim):
        self.index, self.dim = index, dim
        out = x.copy()
        out[_along(dim, index)] = source
        return out

    def backward(self, grad):
        return (IndexFill.apply(grad, 0.0, index=self.index, dim=self.dim),
                IndexSelect.apply(grad, index=self.index, dim=self.dim))


def _check_long(op: str, index) -> None:
    """index_copy, index_fill, take and put take int64 indices only (PyTorch's kernels; int32 is refused)."""
    if isinstance(index, Tensor) and index.dtype.name != "int64":
        error = IndexError if op == "index_fill" else RuntimeError
        raise error(f"{op}(): Expected a long tensor for index, but got {scalar_type_name(index.dtype)}")


def _along_dim_args(op: str, input: Tensor, dim: int, index: Tensor, *, wrap: bool, error: type = IndexError,
                    message: str | None = None):
    """Wrapped dim and a checked 1-D index array for the index_* family (0-d inputs act as 1-D). ``error``:
    a RuntimeError names the index out of range (index_add_ along some dims)."""
    dim = wrap_dim(dim, input.dim())
    if not isinstance(index, Tensor) or index.dim() > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector")
    size = input._array.shape[dim] if input.dim() else 1
    if message is None:
        message = f"index {{index}} is out of bounds for dimension {dim} with size {size}" if wrap or (
            error is not IndexError) else "index out of range in self"
    return dim, _index_array(op, input, index, size, wrap=wrap, message=message, error=error).reshape(-1)


_EMPTY_AXIS = "index_select(): self indexing axis dim should be positive"


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of ``input`` at ``index`` along ``dim`` (repeats allowed; the gradient adds them).
    An empty input of 2+ dims goes through another PyTorch kernel, with other errors (RuntimeErrors)."""
    if input.dim() > 1 and input.numel() == 0 and isinstance(index, Tensor) and index.numel():
        size = input.shape[wrap_dim(dim, input.dim())]
        if size == 0:
            raise RuntimeError(_EMPTY_AXIS)
        _along_dim_args("index_select", input, dim, index, wrap=False, error=RuntimeError,
                        message="INDICES element is out of DATA bounds, id={index} axis_dim=" + str(size))
    if input.dim() == 0 and isinstance(index, Tensor) and index.numel() != 1:  # counted before the range
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {index.numel()} value(s)")
    if input.dim() > 1 and wrap_dim(dim, input.dim()) == 1:  # PyTorch's dim-1 kernel: a RuntimeError
        size = input.shape[1]
        dim, array = _along_dim_args("index_select", input, dim, index, wrap=False, error=RuntimeError,
                                     message="INDICES element is out of DATA bounds, id={index} axis_dim=" + str(size))
    else:
        dim, array = _along_dim_args("index_select", input, dim, index, wrap=False)
    if input.dim() == 0:  # PyTorch: exactly one index, and a 0-dim result
        return IndexSelect.apply(input.reshape(1), index=array.reshape(1), dim=0).reshape(())
    return IndexSelect.apply(input, index=array, dim=dim)


def _check_source(op: str, input: Tensor, dim: int, index, source: Tensor) -> None:
    expected = list(input.shape)
    if expected:
        expected[dim] = index.size
    if list(source.shape) != expected and not (input.dim() == 0 and source.numel() == index.size):
        raise RuntimeError(
            f"{op}(): source of shape {list(source.shape)} does not match input of shape {list(input.shape)} "
            f"with {index.size} indices along dimension {dim} (expected {expected})"
        )
    if source.dtype is not input.dtype:
        raise RuntimeError(
            f"{op}(): self ({input.dtype}) and source ({source.dtype}) must have the same scalar type"
        )


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """A copy of ``input`` with ``alpha * source`` added at ``index`` along ``dim``; repeats add up.
    As in PyTorch, the index count is checked before the index range (a RuntimeError, not an IndexError)."""
    if isinstance(index, Tensor) and index.dim() <= 1 and isinstance(source, Tensor):
        d = wrap_dim(dim, input.dim())
        available = source._array.shape[d] if source.dim() else 1
        if index.numel() != available:
            raise RuntimeError(f"index_add_(): Number of indices ({index.numel()}) should be equal to "
                               f"source.size(dim): ({available}), for dim: {d}")
    # PyTorch's CPU kernel names an index out of range along the first or last dim of a 2+-dim tensor when
    # alpha is 1 (its scatter_add path: a RuntimeError); along a middle dim, with another alpha, or of a 1-dim
    # tensor, it is "index out of range in self".
    outer = input.dim() > 1 and wrap_dim(dim, input.dim()) in (0, input.dim() - 1) and alpha == 1
    error = RuntimeError if outer else IndexError
    if input.dim() > 1 and input.numel() == 0:  # PyTorch's kernel returns before it reads the indices
        known = isinstance(index, Tensor) and index.device.type != "meta"  # (the backward may check them)
        return IndexAdd.apply(input, source, index=None, dim=wrap_dim(dim, input.dim()), alpha=alpha,
                              unread_index=index._array if known else None)
    dim, array = _along_dim_args("index_add", input, dim, index, wrap=False, error=error)
    _check_source("index_add", input, dim, array, source)
    if input.dim() == 0:
        return IndexAdd.apply(input.reshape(1), source.reshape(-1), index=array, dim=0, alpha=alpha).reshape(())
    return IndexAdd.apply(input, source, index=array, dim=dim, alpha=alpha)


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """A copy of ``input`` with ``value`` at ``index`` along ``dim`` (negative indices count from the end)."""
    _check_long("index_fill", index)
    dim, array = _along_dim_args("index_fill", input, dim, index, wrap=True)
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(
                "index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.dim()} dimension(s)."
            )
        value = value.to(input.dtype)
    if input.dim() == 0:
        return IndexFill.apply(input.reshape(1), value, index=array, dim=0).reshape(())
    return IndexFill.apply(input, value, index=array, dim=dim)


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """A copy of ``input`` with the slices of ``source`` written at ``index`` along ``dim``."""
    _check_long("index_copy", index)
    dim, array = _along_dim_args("index_copy", input, dim, index, wrap=False)
    _check_source("index_copy", input, dim, array, source)
    if input.dim() == 0:
        return IndexCopy.apply(input.reshape(1), source.reshape(-1), index=array, dim=0).reshape(())
    return IndexCopy.apply(input, source, index=array, dim=dim)


# masks, take, nonzero ---------------------------------------------------------------------------


def _broadcast_mask(op: str, input: Tensor, mask: Tensor):
    if mask.dtype.name != "bool":
        raise RuntimeError(f"{op}: expected BoolTensor for mask, but got {mask.dtype}")
    return broadcast_tensors(input, mask)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements of ``input`` where ``mask`` (broadcast with it) is True, as a 1-D tensor."""
    input, mask = _broadcast_mask("masked_select", input, mask)
    return advanced_getitem(input, mask)


class MaskedScatter(Op):
    """``source``'s leading elements, in order, written where ``mask`` is True in a copy of ``x``."""

    def forward(self, x, mask, source):
        self.mask, self.source_shape = mask.copy(), source.shape
        count = int(mask.sum())
        if count > source.size:
            raise RuntimeError(
                f"masked_scatter: expected source to have at least {count} elements (the number of True values in "
                f"the mask), but got {source.size}"
            )
        out = x.copy()
        out[mask] = source.reshape(-1)[:count].astype(x.dtype, copy=False)
        return out

    def backward(self, grad):
        mask = self.constant(self.mask)
        numel = math.prod(self.source_shape)
        return grad.masked_fill(mask, 0.0), None, pad_to(grad[mask], (numel,)).view(self.source_shape)


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """A copy of ``input`` with consecutive elements of ``source`` written where ``mask`` is True."""
    input, mask = _broadcast_mask("masked_scatter", input, mask)
    return MaskedScatter.apply(input, mask, source)


def take(input: Tensor, index: Tensor) -> Tensor:
    """``input`` read as 1-D at ``index``; the result has ``index``'s shape."""
    _check_long("take", index)
    numel = input.numel()
    array = _index_array("take", input, index, numel, wrap=True,
                         message=f"out of range: tried to access index {{index}} on a tensor of {numel} elements.")
    return AdvancedIndex.apply(input.reshape(-1), index=(array,))


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """``gather`` with ``indices`` broadcast against ``input`` on every dim but ``dim`` (None: flattened)."""
    if indices.dtype.name != "int64":
        raise RuntimeError(
            f"torch.take_along_dim(): dtype of indices should be Long but got {scalar_type_name(indices.dtype)}"
        )
    if dim is None:
        return input.reshape(-1).gather(0, indices.reshape(-1))
    dim = wrap_dim(dim, input.dim())
    if input.dim() != indices.dim():
        raise RuntimeError(
            f"torch.take_along_dim(): input and indices should have the same number of dimensions, but got "
            f"{input.dim()} dimensions for input, and {indices.dim()} dimensions for indices"
        )
    input_shape, index_shape = list(input.shape), list(indices.shape)
    input_shape[dim] = index_shape[dim] = 1
    shape = list(broadcast_shapes(input_shape, index_shape))
    index_target, input_target = list(shape), list(shape)
    index_target[dim], input_target[dim] = indices.shape[dim], input.shape[dim]
    return input.expand(input_target).gather(dim, indices.expand(index_target))


class Nonzero(Op):
    def forward(self, x, as_tuple):
        xp, int64 = self.xp, self.backend.array_dtype(_dtype.int64)
        if as_tuple:
            return tuple(i.astype(int64) for i in xp.nonzero(x.reshape(-1) if x.ndim == 0 else x))
        return xp.argwhere(x).astype(int64)


def nonzero(input: Tensor, *, as_tuple: bool = False):
    """Indices of the nonzero elements: an ``(n, ndim)`` int64 tensor, or one 1-D tensor per dim."""
    return Nonzero.apply(input.detach(), as_tuple=as_tuple)


def argwhere(input: Tensor) -> Tensor:
    """``nonzero(input)``: the ``(n, ndim)`` coordinates of the nonzero elements."""
    return nonzero(input)


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``source`` written (or added) at flat positions ``index``."""
    _check_long("put", index)
    if index.numel() != source.numel():
        raise RuntimeError(
            f"put(): Expected source and index to have the same number of elements, but got source.numel() = "
            f"{source.numel()}, index.numel() = {index.numel()}"
        )
    numel = input.numel()
    array = _index_array("put", input, index, numel, wrap=True,
                         message=f"out of range: tried to access index {{index}} on a tensor of {numel} elements.")
    out = IndexPut.apply(input.reshape(-1), source.reshape(-1).to(input.dtype), index=(array.reshape(-1),),
                         accumulate=bool(accumulate))
    return out.view(input.shape)


_METHODS = (
    gather, scatter, scatter_add, scatter_reduce, index_put, index_select, index_add, index_fill, index_copy,
    masked_select, masked_scatter, take, take_along_dim, nonzero, argwhere, put,
)
__all__ = [fn.__name__ for fn in _METHODS]


def getitem(self: Tensor, index):
    """``t[index]``: basic indices give a view (ops/views.py, ``Index``); tensors, lists and masks copy."""
    basic = normalize_basic_index(index, self.dim())
    if basic is not None:
        return Index.apply(self, basic)
    return advanced_getitem(self, index)
