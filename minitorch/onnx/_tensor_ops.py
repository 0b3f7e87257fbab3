"""ONNX translations of reductions, views, reshapes, indexing, concatenation and copies.

Shapes the forward computed in Python (``x.view(B, -1)``) are written so that a dynamic batch still works: a
reshape copies the input's leading dims (ONNX's 0) and infers one more (-1), an expand keeps every dim it does
not grow at 1.
"""

from __future__ import annotations

import math

from .._dtype import bool as bool_dtype
from .._dtype import int64
from ._translation import INT64_MAX, first_input, operand, output, registrar, slice_node, wrap_dims
from .errors import UnsupportedOperatorError

TRANSLATIONS: dict = {}
translates = registrar(TRANSLATIONS)


# reductions ----------------------------------------------------------------------------------------------
@translates("Sum", "Mean")
def _sum_mean(g, step):
    x, dims, keepdim = step.args[:3]
    dtype = output(step).dtype
    onnx_op = "ReduceSum" if step.op.__name__ == "Sum" else "ReduceMean"
    axes = wrap_dims(dims, x.dim())
    if not axes:  # nothing reduced (a 0-dim input)
        return [g.node("Identity", [operand(g, x, dtype)])]
    return [g.reduce(onnx_op, operand(g, x, dtype), axes, keepdim)]


@translates("Extremum")
def _extremum(g, step):
    x, dims, keepdim, largest = step.args[:4]
    axes = wrap_dims(dims, x.dim())
    if not axes:
        return [g.node("Identity", [g.value(x)])]
    return [g.reduce("ReduceMax" if largest else "ReduceMin", g.value(x), axes, keepdim)]


@translates("ExtremumAlongDim")
def _extremum_along_dim(g, step):
    x, dim, keepdim, largest = step.args[:4]
    axis = wrap_dims([dim], x.dim())[0]
    value = g.value(x)
    values = g.reduce("ReduceMax" if largest else "ReduceMin", value, [axis], keepdim)
    indices = g.node("ArgMax" if largest else "ArgMin", [value], axis=axis, keepdims=int(keepdim))
    return [values, indices]


@translates("ArgExtremum")
def _arg_extremum(g, step):
    x, dim, keepdim, largest = step.args[:4]
    value = g.value(x)
    if dim is None:  # over the flattened input
        value, axis, keepdim = g.node("Reshape", [value, g.ints([-1])]), 0, False
    else:
        axis = wrap_dims([dim], x.dim())[0]
    return [g.node("ArgMax" if largest else "ArgMin", [value], axis=axis, keepdims=int(keepdim))]


@translates("Var")
def _var(g, step):
    x, dims, correction, keepdim, take_sqrt = step.args[:5]
    dtype = output(step).dtype
    axes = wrap_dims(dims, x.dim())
    value = g.value(x)
    count = math.prod(x.shape[a] for a in axes)
    centered = g.node("Sub", [value, g.reduce("ReduceMean", value, axes, True)])
    total = g.reduce("ReduceSum", g.node("Mul", [centered, centered]), axes, keepdim)
    out = g.node("Div", [total, g.scalar(max(count - correction, 0), dtype)])
    return [g.node("Sqrt", [out]) if take_sqrt else out]


# shapes and views ----------------------------------------------------------------------------------------
def reshape_target(in_shape: tuple, out_shape: tuple) -> list:
    """The ONNX Reshape shape for a traced reshape: the leading dims it keeps are copied from the input (0),
    the trailing dims it keeps and the rest are literal, except the first dim that is neither, which is
    inferred (-1); so a reshape written with ``x.size(0)`` follows a dynamic batch size."""
    target = list(out_shape)
    lead = 0
    while lead < min(len(in_shape), len(out_shape)) and in_shape[lead] == out_shape[lead] and in_shape[lead] != 0:
        target[lead] = 0
        lead += 1
    trail = 0
    while (trail < min(len(in_shape), len(out_shape)) - lead and in_shape[-1 - trail] == out_shape[-1 - trail]):
        trail += 1
    if lead < len(out_shape) - trail and 0 not in out_shape:
        target[lead] = -1
    return target


def _reshapes_to(in_shape: tuple, target: list, out_shape: tuple) -> bool:
    """Whether ONNX's Reshape of ``in_shape`` to ``target`` (0: copy, -1: infer) gives ``out_shape``."""
    sizes = [in_shape[i] if t == 0 else t for i, t in enumerate(target)]
    if -1 in sizes:
        known = math.prod(s for s in sizes if s != -1)
        if not known:
            return False
        sizes[sizes.index(-1)] = math.prod(in_shape) // known
    return tuple(sizes) == tuple(out_shape)


@translates("View")
def _view(g, step):
    x = step.args[0]
    out = output(step)
    out_shape = tuple(out.shape)
    if 0 in out_shape:  # an empty result: literal sizes (ONNX's 0 would copy the input's dim)
        return [g.node("Reshape", [g.value(x), g.ints(out_shape)], allowzero=1)]
    target = reshape_target(tuple(x.shape), out_shape)
    other_in, other_out = g.other_shape(x), g.other_shape(out)
    if other_out is not None and not _reshapes_to(other_in, target, other_out):  # a second trace says otherwise
        shape = g.shape_value(out_shape, other_out)
        if shape is not None:
            return [g.node("Reshape", [g.value(x), shape])]
    return [g.node("Reshape", [g.value(x), g.ints(target)])]


@translates("Permute")
def _permute(g, step):
    x, dims = step.args[:2]
    return [g.node("Transpose", [g.value(x)], perm=wrap_dims(dims, x.dim()))]


@translates("Transpose")
def _transpose(g, step):
    x, dim0, dim1 = step.args[:3]
    perm = list(range(x.dim()))
    if not perm:
        return [g.node("Identity", [g.value(x)])]
    a, b = wrap_dims([dim0, dim1], x.dim())
    perm[a], perm[b] = perm[b], perm[a]
    return [g.node("Transpose", [g.value(x)], perm=perm)]


def _expand_target(in_shape: tuple, out_shape: tuple) -> list:
    in_shape = (1,) * (len(out_shape) - len(in_shape)) + tuple(in_shape)
    return [1 if i == o else o for i, o in zip(in_shape, out_shape)]  # dims kept: 1 (any size broadcasts)


@translates("Expand")
def _expand(g, step):
    x = step.args[0]
    out_shape = tuple(output(step).shape)
    target = _expand_target(tuple(x.shape), out_shape)
    other_in, other_out = g.other_shape(x), g.other_shape(output(step))
    if other_out is not None and _expand_target(other_in, other_out) != target:  # the second trace grows other dims
        shape = g.shape_value(out_shape, other_out)
        if shape is not None:
            return [g.node("Expand", [g.value(x), shape])]
    return [g.node("Expand", [g.value(x), g.ints(target)])]


@translates("Squeeze")
def _squeeze(g, step):
    x, dims = step.args[:2]
    dims = [dims] if isinstance(dims, int) else list(dims) if dims is not None else list(range(x.dim()))
    axes = [d for d in wrap_dims(dims, x.dim()) if x.shape[d] == 1]
    if not axes:
        return [g.node("Identity", [g.value(x)])]
    return [g.node("Squeeze", [g.value(x), g.ints(axes)])]


@translates("Unsqueeze")
def _unsqueeze(g, step):
    x, dim = step.args[:2]
    return [g.node("Unsqueeze", [g.value(x), g.ints([dim % (x.dim() + 1)])])]


@translates("Index")
def _index(g, step):
    """Basic indexing: slices (Slice), ints (a one-wide Slice, then Squeeze) and None (Unsqueeze)."""
    x, index = step.args[:2]
    value = g.value(x)
    starts, ends, axes, steps, squeezed, inserted = [], [], [], [], [], []
    dim = out_dim = 0
    for item in index:
        if item is None:
            inserted.append(out_dim)
            out_dim += 1
            continue
        if isinstance(item, int):
            starts.append(item)
            ends.append(item + 1 if item != -1 else INT64_MAX)
            axes.append(dim)
            steps.append(1)
            squeezed.append(dim)
        elif item != slice(None):
            starts.append(0 if item.start is None else item.start)
            ends.append(INT64_MAX if item.stop is None else item.stop)
            axes.append(dim)
            steps.append(1 if item.step is None else item.step)
            out_dim += 1
        else:
            out_dim += 1
        dim += 1
    if axes:
        value = slice_node(g, value, starts, ends, axes, steps)
    if squeezed:
        value = g.node("Squeeze", [value, g.ints(squeezed)])
    if inserted:
        value = g.node("Unsqueeze", [value, g.ints(inserted)])
    return [value if axes or inserted else g.node("Identity", [value])]


@translates("Select")
def _select(g, step):
    x, dim, index = step.args[:3]
    return [g.node("Gather", [g.value(x), g.scalar(index, int64)], axis=dim % x.dim())]


@translates("Narrow")
def _narrow(g, step):
    x, dim, start, length = step.args[:4]
    return [slice_node(g, g.value(x), [start], [start + length], [dim % x.dim()])]


@translates("SplitViews")
def _split_views(g, step):
    x, dim, sizes, squeeze = step.args[:4]
    axis = dim % x.dim()
    value = g.value(x)
    if len(sizes) == 1:
        pieces = [g.node("Identity", [value])]
    else:
        pieces = g.node("Split", [value, g.ints(sizes)], outputs=len(sizes), axis=axis)
    if squeeze:
        pieces = [g.node("Squeeze", [p, g.ints([axis])]) for p in pieces]
    return pieces


@translates("_TimeSteps")
def _time_steps(g, step):
    """An RNN's input projection, one (batch, features) slice per time step."""
    (x,) = step.args[:1]
    n = x.shape[0]
    value = g.value(x)
    pieces = [value] if n == 1 else g.node("Split", [value, g.ints([1] * n)], outputs=n, axis=0)
    return [g.node("Squeeze", [p, g.ints([0])]) for p in pieces]


@translates("Cat")
def _cat(g, step):
    keep = step.params.get("keep")
    tensors = [t for i, t in enumerate(step.args) if keep is None or keep[i]]
    dtype = output(step).dtype
    if len(tensors) == 1:
        return [g.node("Identity", [operand(g, tensors[0], dtype)])]
    return [g.node("Concat", [operand(g, t, dtype) for t in tensors], axis=step.params["dim"] % output(step).dim())]


@translates("Flip")
def _flip(g, step):
    x = step.args[0]
    axes = wrap_dims(step.params["dims"] if "dims" in step.params else step.args[1], x.dim())
    return [slice_node(g, g.value(x), [-1] * len(axes), [-INT64_MAX - 1] * len(axes), axes, [-1] * len(axes))]


@translates("Triangle")
def _triangle(g, step):
    x = step.args[0]
    upper, diagonal = step.params["upper"], step.params["diagonal"]
    value = g.value(x)
    if x.dtype is bool_dtype:  # (onnxruntime's Trilu has no bool kernel)
        value = g.node("Cast", [value], to=g.onnx_type(int64))
    value = g.node("Trilu", [value, g.scalar(diagonal, int64)], upper=int(upper))
    return [g.node("Cast", [value], to=g.onnx_type(bool_dtype)) if x.dtype is bool_dtype else value]


@translates("Clone")
def _clone(g, step):
    return [g.node("Identity", [first_input(g, step)])]


@translates("ToCopy")
def _to_copy(g, step):
    x = step.args[0]
    out = output(step)
    if out.dtype is x.dtype:
        return [g.node("Identity", [g.value(x)])]
    return [g.node("Cast", [g.value(x)], to=g.onnx_type(out.dtype))]


@translates("Copy")
def _copy(g, step):
    """``x.copy_(src)`` / ``fill_``: src in x's dtype, broadcast to x's shape."""
    x, source = step.args[:2]
    value = operand(g, source, x.dtype)
    return [g.node("Expand", [value, g.node("Shape", [g.value(x)])])]


@translates("Cumsum")
def _cumsum(g, step):
    x, dim = step.args[:2]
    dtype = output(step).dtype
    return [g.node("CumSum", [operand(g, x, dtype), g.scalar(dim % max(x.dim(), 1), int64)])]


@translates("Norm")
def _norm(g, step):
    x, p, dims, keepdim = step.args[:4]
    axes = wrap_dims(dims, x.dim())
    value = g.value(x)
    if p == 2:
        return [g.reduce("ReduceL2", value, axes, keepdim)]
    if p == 1:
        return [g.reduce("ReduceL1", value, axes, keepdim)]
    if math.isinf(p):
        return [g.reduce("ReduceMax" if p > 0 else "ReduceMin", g.node("Abs", [value]), axes, keepdim)]
    if p > 0:
        powers = g.node("Pow", [g.node("Abs", [value]), g.scalar(p, x.dtype)])
        return [g.node("Pow", [g.reduce("ReduceSum", powers, axes, keepdim), g.scalar(1 / p, x.dtype)])]
    raise UnsupportedOperatorError(f"minitorch::Norm (p={p})", g.opset, None)


@translates("Topk")
def _topk(g, step):
    x, k, dim, largest = step.args[:4]
    values, indices = g.node("TopK", [g.value(x), g.ints([k])], outputs=2, axis=dim % x.dim(),
                             largest=int(largest), sorted=1)
    return [values, indices]


@translates("All", "Any")
def _all_any(g, step):
    """A min (all) or max (any) over the input as 0/1, back to bool."""
    x, dims, keepdim = step.args[:3]
    flags = g.node("Cast", [g.node("Cast", [g.value(x)], to=g.onnx_type(bool_dtype))], to=g.onnx_type(int64))
    axes = wrap_dims(dims, x.dim())
    reduced = g.reduce("ReduceMin" if step.op.__name__ == "All" else "ReduceMax", flags, axes, keepdim) if axes \
        else flags
    return [g.node("Cast", [reduced], to=g.onnx_type(output(step).dtype))]


@translates("Gather")
def _gather(g, step):
    """``torch.gather(x, dim, index)``: ONNX's GatherElements."""
    x, index, dim = step.args[:3]
    return [g.node("GatherElements", [g.value(x), operand(g, index, int64)], axis=dim % max(x.dim(), 1))]
