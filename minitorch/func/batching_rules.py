"""Batching rules: each op run once on a whole batch, the batch dim carried through (vmap, batched.py).

A rule receives the op's arguments as ``Op.apply`` got them, some of them BatchedTensors. It takes the
innermost vmap level among them (outer levels stay wrapped and are handled when the rule calls the op on
the values: nested vmap is recursion), moves that level's batch dim to the front of each batched value,
shifts the op's dim arguments by one (or pads ranks for broadcasting), calls the op once, and wraps the
result with the batch dim at 0. Whole op families share a rule: every broadcasting ``Elementwise`` op,
every reduction over a dims tuple. Ops with no rule take ``loop_fallback`` (one call per sample, stacked),
and their names are recorded (``vmap_fallback_ops``); docs/func.md lists them. The rules of the ops under
``torch.nn.functional`` (linear, conv, pooling, losses, softmax, norms) are in nn_batching_rules.py.
"""

from __future__ import annotations

from .. import _dtype
from .._geometry import view_strides
from ..creation import arange
from ..ops import blas, conversion, reduction, shape, sorting, views
from ..ops.concat import Cat
from ..ops.indexing import NON_DENSE_INDEX, AdvancedIndex, Gather, IndexSelect
from ..ops.inplace import Copy
from ..ops.op import NON_DENSE_FALLBACKS, NON_DENSE_IMPLEMENTATIONS, Op, register_non_dense
from ..ops.promotion import Elementwise
from ..ops.shape import stack
from ..tensor import Tensor
from .batched import BatchedTensor, wrap

KIND = "batched"
_FALLBACK_USED: set = set()


# helpers ------------------------------------------------------------------------------------------
def innermost_level(args) -> int:
    return max((a._level for a in args if type(a) is BatchedTensor), default=0)


def batch_size(args, level: int) -> int:
    for a in args:
        if type(a) is BatchedTensor and a._level == level:
            return a._value.shape[a._bdim]
    raise AssertionError("no argument is batched at this level")


def front(x, level: int):
    """``x``'s value with the batch dim of ``level`` first; None when ``x`` is not batched at ``level``."""
    if type(x) is BatchedTensor and x._level == level:
        value, bdim = x._value, x._bdim
        return value.movedim(bdim, 0) if bdim else value
    return None


def front_or_expand(x, level: int, size: int):
    """``x``'s value with the batch dim first, an unbatched tensor expanded to the batch."""
    value = front(x, level)
    if value is None:
        return x.unsqueeze(0).expand((size,) + tuple(x.shape))
    return value


def wrap_result(result, level: int):
    if type(result) is tuple:
        return tuple(wrap(r, 0, level) for r in result)
    return wrap(result, 0, level)


def register(*ops):
    """Decorator: ``rule`` is the batching rule of these Op classes."""

    def decorate(rule):
        for op in ops:
            register_non_dense(op, KIND)(rule)
        return rule

    return decorate


def shifted(dims) -> tuple:
    return tuple(d + 1 for d in dims)


# the loop fallback --------------------------------------------------------------------------------
def loop_fallback(op, args, params):
    """An op with no batching rule: called once per sample (select along each batch dim) and stacked.
    Correct for any op, at the cost of one call per sample; its name goes on ``vmap_fallback_ops()``."""
    level = innermost_level(args)
    size = batch_size(args, level)
    _FALLBACK_USED.add(op.__name__)
    if size == 0:
        raise RuntimeError(f"vmap: {op.__name__} has no batching rule, and its loop fallback cannot run over a "
                           "batch of size 0")
    results = []
    for b in range(size):
        sample = [a._value.select(a._bdim, b) if type(a) is BatchedTensor and a._level == level else a for a in args]
        results.append(op.apply(*sample, **params))
    if type(results[0]) is tuple:
        return tuple(wrap(stack([r[i] for r in results]), 0, level) for i in range(len(results[0])))
    return wrap(stack(results), 0, level)


def vmap_fallback_ops() -> list[str]:
    """The names of the ops that have run through vmap's loop fallback in this process (no batching rule)."""
    return sorted(_FALLBACK_USED)


def ops_without_rule() -> list[str]:
    """Every Op class (``module.Class``) with no batching rule: under vmap each runs through the loop fallback
    (docs/func.md lists them; a test keeps that list equal to this one). Sparse and quantized kernels are left
    out: vmap does not take those layouts."""
    seen, pending = set(), [Op]
    while pending:
        for sub in pending.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                pending.append(sub)
    names = []
    for op in seen:
        module = op.__module__.removeprefix("minitorch.")
        # bases, never applied themselves
        abstract = op is views.ViewOp or (op.forward is Op.forward and not issubclass(op, views.ViewOp))
        if abstract or module.startswith(("sparse", "quantization")) or issubclass(op, Elementwise):
            continue
        if (op, KIND) not in NON_DENSE_IMPLEMENTATIONS:
            names.append(f"{module}.{op.__name__}")
    return sorted(names)


# broadcasting elementwise ops ---------------------------------------------------------------------
def _logical_dtype_fix(args, moved: list, level: int) -> None:
    """A logically 0-dim batched operand is 1-dim physically, which would change PyTorch's type promotion
    (0-dim tensors rank below dimensioned ones): cast it to the logical result dtype first."""
    if not any(type(a) is BatchedTensor and a._level == level and a.dim() == 0 for a in args):
        return
    operands = [a for a in args if isinstance(a, Tensor) or type(a) in (bool, int, float, complex)]
    try:
        logical = _dtype.result_type_of(operands)
        physical = _dtype.result_type_of([m for m in moved if isinstance(m, Tensor) or type(m) in
                                          (bool, int, float, complex)])
    except (TypeError, RuntimeError, AttributeError):
        return
    if logical is physical:
        return
    for i, a in enumerate(args):
        if type(a) is BatchedTensor and a._level == level and a.dim() == 0 and a.dtype is not logical:
            moved[i] = moved[i].to(logical)


def elementwise(op, args, params):
    """Broadcasting ops: batch dims first, each batched operand padded to the largest logical rank."""
    level = innermost_level(args)
    rank = max(a.dim() for a in args if isinstance(a, Tensor))
    moved = []
    for a in args:
        value = front(a, level)
        if value is not None:
            for _ in range(rank - a.dim()):
                value = value.unsqueeze(1)
            moved.append(value)
        else:
            moved.append(a)
    _logical_dtype_fix(args, moved, level)
    return wrap_result(op.apply(*moved, **params), level)


def _dispatch(op, args, params):
    """Rules for whole families (every Elementwise op), else the loop fallback."""
    if issubclass(op, Elementwise):
        return elementwise(op, args, params)
    return loop_fallback(op, args, params)


NON_DENSE_FALLBACKS[KIND] = _dispatch


# views and shape ops ------------------------------------------------------------------------------
@register(views.View)
def _view(x, shape):
    level = x._level
    value = front(x, level)
    physical = (value.shape[0],) + tuple(shape)
    if view_strides(tuple(value.shape), value.stride(), physical) is not None:
        return wrap(views.View.apply(value, physical), 0, level)
    return wrap(value.reshape(physical), 0, level)  # the batch dim moved in a way a view cannot follow: a copy


@register(views.Permute)
def _permute(x, dims):
    return wrap(views.Permute.apply(front(x, x._level), (0,) + shifted(dims)), 0, x._level)


@register(views.Transpose)
def _transpose(x, dim0, dim1):
    return wrap(views.Transpose.apply(front(x, x._level), dim0 + 1, dim1 + 1), 0, x._level)


@register(views.Expand)
def _expand(x, sizes):
    value = front(x, x._level)
    for _ in range(len(sizes) - x.dim()):
        value = value.unsqueeze(1)
    return wrap(views.Expand.apply(value, (value.shape[0],) + tuple(sizes)), 0, x._level)


@register(views.Squeeze)
def _squeeze(x, dims):
    return wrap(views.Squeeze.apply(front(x, x._level), shifted(dims)), 0, x._level)


@register(views.Unsqueeze)
def _unsqueeze(x, dim):
    return wrap(views.Unsqueeze.apply(front(x, x._level), dim + 1), 0, x._level)


@register(views.Narrow)
def _narrow(x, dim, start, length):
    return wrap(views.Narrow.apply(front(x, x._level), dim + 1, start, length), 0, x._level)


@register(views.Select)
def _select(x, dim, index):
    return wrap(views.Select.apply(front(x, x._level), dim + 1, index), 0, x._level)


@register(views.Diagonal)
def _diagonal(x, offset, dim1, dim2):
    return wrap(views.Diagonal.apply(front(x, x._level), offset, dim1 + 1, dim2 + 1), 0, x._level)


@register(views.Index)
def _index(x, index):
    return wrap(views.Index.apply(front(x, x._level), (slice(None),) + tuple(index)), 0, x._level)


@register(views.Unfold)
def _unfold(x, dim, size, step):
    return wrap(views.Unfold.apply(front(x, x._level), dim + 1, size, step), 0, x._level)


@register(views.SplitViews)
def _split(x, dim, sizes, squeeze, op_name):
    return wrap_result(views.SplitViews.apply(front(x, x._level), dim + 1, sizes, squeeze, op_name), x._level)


@register(views.AsStrided)
def _as_strided(x, *params):
    raise RuntimeError("vmap: as_strided has no batching rule in minitorch (its storage geometry is not per "
                       "sample); rewrite it with view/reshape/unfold")


@register(Cat)
def _cat(*tensors, dim, keep):
    level = innermost_level(tensors)
    size = batch_size(tensors, level)
    moved = [front_or_expand(t, level, size) for t in tensors]
    return wrap(Cat.apply(*moved, dim=dim + 1, keep=keep), 0, level)


@register(conversion.Clone)
def _clone(x, order="K"):
    if type(order) is tuple:  # explicit strides (a memory format): per sample
        return loop_fallback(conversion.Clone, (x, order), {})
    return wrap(conversion.Clone.apply(front(x, x._level), order), 0, x._level)


@register(conversion.ToCopy)
def _to_copy(x, **params):
    return wrap(conversion.ToCopy.apply(front(x, x._level), **params), 0, x._level)


@register(shape.Triangle)
def _triangle(x, diagonal, upper):
    return wrap(shape.Triangle.apply(front(x, x._level), diagonal, upper), 0, x._level)


def broadcasting(op):
    """Ops that are elementwise over broadcast operands without being Elementwise subclasses."""
    register(op)(lambda *args, **params: elementwise(op, args, params))


broadcasting(Copy)  # copy_/fill_/zero_: the source broadcast to the destination



# indexing -----------------------------------------------------------------------------------------
@register(AdvancedIndex)
def _advanced_index(x, index):
    arrays = [i for i, item in enumerate(index) if not isinstance(item, slice)]
    if arrays and arrays[-1] - arrays[0] + 1 != len(arrays):  # separated index arrays go first: per sample
        return loop_fallback(AdvancedIndex, (x,), {"index": index})
    return wrap(AdvancedIndex.apply(front(x, x._level), index=(slice(None),) + tuple(index)), 0, x._level)


def batched_index(x, items: list):
    """``x[items]`` where an index tensor is batched. One index tensor on the first dim (``table[idx]``, the
    lookup of per-sample indices) is one advanced index on the batch: ``x[idx]`` for an unbatched ``x``,
    ``x[arange(B), idx]`` for a batched one. Other mixes of batched indices run per sample (the loop fallback)."""
    level = innermost_level([x] + items)
    size = batch_size([x] + items, level)
    tensors = [i for i in items if isinstance(i, Tensor)]
    if len(items) == 1 and not tensors[0].dtype.is_floating_point and tensors[0].dtype.name not in ("bool", "uint8"):
        index = front_or_expand(items[0], level, size)
        value = front(x, level)
        if value is None:
            return wrap(x[index], 0, level)
        rows = arange(size, device=index.device).reshape((size,) + (1,) * (index.dim() - 1))
        return wrap(value[rows, index], 0, level)
    _FALLBACK_USED.add("AdvancedIndex")
    results = []
    for b in range(size):
        pick = [i._value.select(i._bdim, b) if type(i) is BatchedTensor and i._level == level else i for i in items]
        sample = x._value.select(x._bdim, b) if type(x) is BatchedTensor and x._level == level else x
        results.append(sample[tuple(pick)])
    return wrap(stack(results), 0, level)


NON_DENSE_INDEX[KIND] = batched_index


@register(Gather)
def _gather(x, index, dim):
    level = innermost_level((x, index))
    size = batch_size((x, index), level)
    return wrap(Gather.apply(front_or_expand(x, level, size), front_or_expand(index, level, size), dim + 1), 0,
                level)


@register(IndexSelect)
def _index_select(x, index, dim):
    return wrap(IndexSelect.apply(front(x, x._level), index=index, dim=dim + 1), 0, x._level)


# reductions ---------------------------------------------------------------------------------------
def dims_rule(op, dims_at: int):
    """Ops whose argument ``dims_at`` (after the input) is a tuple of logical dims."""

    def rule(x, *params):
        params = list(params)
        params[dims_at] = shifted(params[dims_at])
        return wrap_result(op.apply(front(x, x._level), *params), x._level)

    register(op)(rule)


def dim_rule(op, dim_at: int):
    """Ops whose argument ``dim_at`` (after the input) is one non-negative logical dim."""

    def rule(x, *params):
        params = list(params)
        params[dim_at] += 1
        return wrap_result(op.apply(front(x, x._level), *params), x._level)

    register(op)(rule)


for _op in (reduction.Sum, reduction.Mean, reduction.Extremum, reduction.Var, reduction.Logsumexp, reduction.All,
            reduction.Any, reduction.CountNonzero):
    dims_rule(_op, 0)
dims_rule(reduction.Norm, 1)
for _op in (reduction.Cumsum, reduction.ReverseCumsum, reduction.Cumprod, reduction.CumExtremum,
            reduction.Logcumsumexp, reduction.ExtremumAlongDim, sorting.Sort, sorting.MedianAlongDim, sorting.Mode):
    dim_rule(_op, 0)
for _op in (sorting.Topk, sorting.Kthvalue):
    dim_rule(_op, 1)


@register(shape.Flip)
def _flip(x, dims):
    return wrap(shape.Flip.apply(front(x, x._level), dims=shifted(dims)), 0, x._level)


@register(shape.Roll)
def _roll(x, shifts, dims):
    return wrap(shape.Roll.apply(front(x, x._level), shifts=shifts, dims=shifted(dims)), 0, x._level)


def _flattened(x, dim, keepdim):
    """``(value, dim, keepdim, shape after)`` for a reduction whose ``dim=None`` means "all, flattened"."""
    value = front(x, x._level)
    if dim is not None:
        return value, dim + 1, keepdim, None
    size = value.shape[0]
    return value.reshape(size, -1), 1, False, (size,) + (1,) * x.dim() if keepdim else None


@register(reduction.Prod)
def _prod(x, dim, keepdim, dtype=None):
    value, dim, keep, shape = _flattened(x, dim, keepdim)
    out = reduction.Prod.apply(value, dim, keep, dtype)
    return wrap(out if shape is None else out.reshape(shape), 0, x._level)


@register(reduction.ArgExtremum)
def _arg_extremum(x, dim, keepdim, largest):
    value, dim, keep, shape = _flattened(x, dim, keepdim)
    out = reduction.ArgExtremum.apply(value, dim, keep, largest)
    return wrap(out if shape is None else out.reshape(shape), 0, x._level)


# matrix products ----------------------------------------------------------------------------------
@register(blas.Matmul)
def _matmul(a, b):
    """matmul's 1-D/2-D/N-D cases with a batch dim on either side: vectors become matrices, the batched
    operands get their batch dim first and are padded to a common rank, the unbatched one broadcasts."""
    level = innermost_level((a, b))
    ra, rb = a.dim(), b.dim()
    pa, pb = front(a, level), front(b, level)
    if pa is not None and pb is None and ra == 1 and rb == 2:  # (B, k) @ (k, n): one matrix product
        return wrap(blas.Matmul.apply(pa, b), 0, level)
    left = a if pa is None else pa
    right = b if pb is None else pb
    if ra == 1:
        left = left.unsqueeze(-2)
    if rb == 1:
        right = right.unsqueeze(-1)
    rank = max(ra, rb, 2)
    if pa is not None:
        for _ in range(rank - max(ra, 2)):
            left = left.unsqueeze(1)
    if pb is not None:
        for _ in range(rank - max(rb, 2)):
            right = right.unsqueeze(1)
    out = blas.Matmul.apply(left, right)
    if rb == 1:
        out = out.squeeze(-1)
    if ra == 1:
        out = out.squeeze(-1 if rb == 1 else -2)
    return wrap(out, 0, level)


@register(blas.Einsum)
def _einsum(*operands, equation, layout=None):
    """A new subscript for the batch, in front of each batched operand's and of the output's."""
    level = innermost_level(operands)
    letter = next(c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkjihgfedcba" if c not in equation)
    inputs, output = equation.split("->")
    subscripts, moved = [], []
    for sub, t in zip(inputs.split(","), operands):
        value = front(t, level)
        subscripts.append(sub if value is None else letter + sub)
        moved.append(t if value is None else value)
    new = ",".join(subscripts) + "->" + letter + output
    layout = None if layout is None else letter + layout
    return wrap(blas.Einsum.apply(*moved, equation=new, layout=layout), 0, level)
