"""View ops: new size/stride/offset over the same storage, computed here in plain Python.

A view's forward is only geometry; ``Tensor._view`` asks the backend for that window of the shared
1-D buffer. Backward rules are views again (transpose, permute, reshape) or, for views that pick
a region (slicing, select, narrow, diagonal, as_strided), one differentiable ``ViewScatter``:
zeros of the input's size with the gradient written into the same region.
"""

from __future__ import annotations

import math
import operator

from .._dtype import int64
from .._geometry import contiguous_strides, infer_size, view_strides, wrap_dim  # noqa: F401 (re-exported)
from .._names import state as names_state
from ..autograd import grad_mode
from ..autograd.forward_ad import propagate
from ..autograd.forward_ad import state as forward_ad
from ..autograd.view_history import region_of
from ..tensor import Tensor, legacy_type_name, view_requires_grad
from . import named
from .concat import cat, stack
from .op import Op, dispatch_non_dense


class ReplaceRegion(Op):
    """A copy of a contiguous ``whole`` with the strided region ``(size, stride, offset)`` of its
    flat memory replaced by ``inside`` (broadcast). Its backward is itself plus a region read."""

    def forward(self, whole, inside, size, stride, offset):
        self.region = (size, stride, offset)
        out = whole.copy()
        self.backend.as_strided(out.reshape(-1), size, stride, offset)[...] = inside
        return out

    def backward(self, grad):
        grad = grad.contiguous()
        return ReplaceRegion.apply(grad, 0.0, *self.region), region_of(grad, *self.region)


def replace_region(whole: Tensor, inside, size, stride, offset) -> Tensor:
    """``Tensor._replace_region`` (for autograd/view_history.py's CopySlices): ReplaceRegion."""
    return ReplaceRegion.apply(whole, inside, size, stride, offset)


def view_scatter(src: Tensor, numel: int, size, stride, offset) -> Tensor:
    """``Tensor._view_scatter`` (for CopySlices): ViewScatter, ``src`` added into zeros of length ``numel``."""
    return ViewScatter.apply(src, numel, size, stride, offset)


def view_creation(x: Tensor, multi_output: bool = False) -> str:
    """How a new view of ``x`` counts as made, for the in-place checks (PyTorch's CreationMeta).

    The mode the view is made in gives ``"default"`` (or ``"multi_output"`` for unbind/split/chunk),
    ``"no_grad"`` or ``"inference_mode"``; a view of a view is never less restricted than its input
    (``propagate_creation_meta``): ``"default"`` keeps the input view's meta, and ``"inference_mode"``
    is never replaced. So writing into ``x.split(1)[0][2]`` raises as writing into the piece does.
    """
    state = grad_mode.state
    if state.enabled:
        made = "multi_output" if multi_output else "default"
    else:
        made = "inference_mode" if state.inference else "no_grad"
    meta = x._meta
    if meta is None or meta.base is None:
        return made
    inherited = meta.creation
    return inherited if made == "default" or inherited == "inference_mode" else made


class ViewOp(Op):
    """An op whose output shares the input's storage. Subclasses define ``geometry``."""

    node_name = None  # PyTorch's node where the caller knows it better (t() is TBackward0, a Transpose)

    def name(self) -> str:
        return self.node_name or type(self).__name__ + "Backward0"

    def geometry(self, shape, stride, offset, *params):
        """``(size, stride, offset)`` of the view, from the input's geometry."""
        raise NotImplementedError

    @classmethod
    def apply(cls, x: Tensor, *params):
        if names_state.active:  # name inference first (ops/named.py)
            result = named.apply(cls, (x,) + params, {})
            if result is not None:
                return result
        if cls._tracer is not None:
            return cls._tracer.op(cls, (x,) + params, {})
        if not x._dense:
            return dispatch_non_dense(cls, (x,) + params, {})
        node = cls.__new__(cls)
        node.input_shape = x._array.shape
        size, stride, offset = node.geometry(x._array.shape, x.stride(), x._offset, *params)
        out = node.make_view(x, size, stride, offset)
        meta = out._autograd_meta()
        meta.base = x._meta.base if x._meta is not None and x._meta.base is not None else x
        meta.view_version = x._storage.version
        meta.creation = view_creation(x)
        if grad_mode.state.enabled and (x._requires_grad or view_requires_grad(x)):
            node.backend = x._storage.backend
            node.device = x._storage.device
            node.params = params
            node._record((x,), (out,))
        if forward_ad.active:
            node.params = params
            propagate(node, (x,), (out,))
        return out

    def jvp(self, inputs, outputs, tangents):
        """Hand-written, for every view op: the tangent of a view is the same view of the input's tangent (which
        is laid out like the input, so it is the same window of the same memory pattern)."""
        return type(self).apply(tangents[0], *self.params)

    def make_view(self, x: Tensor, size, stride, offset) -> Tensor:
        """The view tensor over ``x``'s storage (view_as_real/view_as_complex see it as another dtype)."""
        return x._view(size, stride, offset)

    def region_in_contiguous(self):
        """This view's geometry over a contiguous tensor of the input's shape."""
        shape = self.input_shape
        return self.geometry(shape, contiguous_strides(shape), 0, *self.params)

    def scatter_backward(self, grad: Tensor) -> Tensor:
        size, stride, offset = self.region_in_contiguous()
        flat = ViewScatter.apply(grad, math.prod(self.input_shape), size, stride, offset)
        return flat.view(self.input_shape)


class ViewScatter(Op):
    """A 1-D tensor of zeros of length ``numel`` with ``src`` added into the strided region
    ``(size, stride, offset)``; overlapping regions (as_strided windows) add up."""

    def forward(self, src, numel, size, stride, offset):
        self.region = (size, stride, offset)
        out = self.xp.zeros(numel, dtype=src.dtype)
        window = self.backend.as_strided(out, size, stride, offset)
        if _overlaps(size, stride):
            indices = self.xp.arange(numel).astype(self.backend.array_dtype(_int64()))
            index_window = self.backend.as_strided(indices, size, stride, offset)
            self.backend.index_add(out, index_window.reshape(-1), src.reshape(-1))
        else:
            window[...] = src
        return out

    def backward(self, grad):
        return region_of(grad, *self.region)


def _int64():
    return int64


def _overlaps(size, stride) -> bool:
    """Whether two indices of a strided window can reach the same element."""
    dims = sorted((s, n) for n, s in zip(size, stride) if n > 1)
    extent = 1
    for s, n in dims:
        if s < extent:
            return True
        extent = s * (n - 1) + extent
    return False


# reshaping ------------------------------------------------------------------------------------


def int_list(op: str, name: str, args, keyword=None) -> tuple:
    """The ints of a PyTorch int-list argument (sizes, dims): given as varargs (``x.view(2, 3)``), as one
    sequence (``x.view((2, 3))``) or by keyword (``keyword``, then ``args`` must be empty). Anything but
    ints (or 0-dim integer tensors) is a TypeError naming the op, the argument and the position, as in
    PyTorch; a float is never truncated."""
    if keyword is not None:
        if args:
            raise TypeError(f"{op}() got multiple values for argument '{name}'")
        args = (keyword,)
    elif not args:
        raise TypeError(f'{op}() missing 1 required positional arguments: "{name}"')
    if len(args) == 1:
        if isinstance(args[0], (tuple, list)):
            args = args[0]
        elif not hasattr(args[0], "__index__"):
            kind = type(args[0]).__name__
            raise TypeError(f"{op}(): argument '{name}' (position 1) must be tuple of ints, not {kind}")
    try:
        return tuple(map(operator.index, args))
    except TypeError:
        for i, n in enumerate(args):
            if isinstance(n, bool) or not hasattr(n, "__index__"):
                raise TypeError(
                    f"{op}(): argument '{name}' (position 1) must be tuple of ints, but found element of type "
                    f"{type(n).__name__} at pos {i}"
                ) from None
        raise


class View(ViewOp):
    def geometry(self, shape, stride, offset, new_shape):
        new_stride = view_strides(shape, stride, new_shape)
        if new_stride is None:
            raise RuntimeError(
                f"view size is not compatible with input tensor's size and stride (at least one dimension "
                f"spans across two contiguous subspaces). Use .reshape(...) instead. "
                f"(input shape {list(shape)}, stride {list(stride)}; requested {list(new_shape)})"
            )
        return new_shape, new_stride, offset

    def backward(self, grad):
        return grad.reshape(self.input_shape)


def view(input: Tensor, *shape, size=None) -> Tensor:
    """The same storage seen with another shape; needs compatible strides (else use reshape)."""
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list)) and not hasattr(shape[0], "__index__"):
        raise NotImplementedError("view(dtype) reinterpretation is not supported; use .to(dtype)")
    return View.apply(input, infer_size(int_list("view", "size", shape, size), input.numel()))


def reshape(input: Tensor, *sizes, shape=None) -> Tensor:
    """A view when the strides allow it, otherwise a copy."""
    new_shape = infer_size(int_list("reshape", "shape", sizes, shape), input.numel())
    if new_shape == input._array.shape:
        return View.apply(input, new_shape)
    if view_strides(input._array.shape, input.stride(), new_shape) is not None:
        return View.apply(input, new_shape)
    copied = View.apply(input.contiguous(), new_shape)  # PyTorch: clone(contiguous_format)
    copied._autograd_meta().base = None  # a copy, not a view: `_base` is None, as in PyTorch
    return copied


def view_as(input: Tensor, other: Tensor) -> Tensor:
    return view(input, other._array.shape)


def reshape_as(input: Tensor, other: Tensor) -> Tensor:
    return reshape(input, other._array.shape)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    shape = input._array.shape
    if not shape:
        return reshape(input, (1,))
    start, end = wrap_dim(start_dim, len(shape)), wrap_dim(end_dim, len(shape))
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    return reshape(input, shape[:start] + (math.prod(shape[start : end + 1]),) + shape[end + 1 :])


def ravel(input: Tensor) -> Tensor:
    """The elements as a 1-D tensor in row-major order: a view when ``input`` is contiguous, else a view of a
    contiguous copy (as PyTorch's ``contiguous().view(-1)``)."""
    return view(input.contiguous(), -1)


def unflatten(input: Tensor, dim: int, sizes) -> Tensor:
    shape = input._array.shape
    d = wrap_dim(dim, len(shape))
    sizes = infer_size(sizes, shape[d])
    return view(input, shape[:d] + tuple(sizes) + shape[d + 1 :]) if input.is_contiguous() else reshape(
        input, shape[:d] + tuple(sizes) + shape[d + 1 :]
    )


# permuting ------------------------------------------------------------------------------------


class Permute(ViewOp):
    def geometry(self, shape, stride, offset, dims):
        return tuple(shape[d] for d in dims), tuple(stride[d] for d in dims), offset

    def backward(self, grad):
        dims = self.params[0]
        inverse = [0] * len(dims)
        for i, d in enumerate(dims):
            inverse[d] = i
        return grad.permute(inverse)


class Transpose(ViewOp):
    def geometry(self, shape, stride, offset, dim0, dim1):
        shape, stride = list(shape), list(stride)
        shape[dim0], shape[dim1] = shape[dim1], shape[dim0]
        stride[dim0], stride[dim1] = stride[dim1], stride[dim0]
        return tuple(shape), tuple(stride), offset

    def backward(self, grad):
        return grad.transpose(*self.params)


def permute(input: Tensor, *args, dims=None) -> Tensor:
    dims = int_list("permute", "dims", args, dims)
    ndim = input.dim()
    if len(dims) != ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the length of the "
            f"desired ordering of dimensions i.e. input.dim() = {ndim} is not equal to len(dims) = {len(dims)}"
        )
    dims = tuple(wrap_dim(d, ndim) for d in dims)
    if len(set(dims)) != ndim:
        raise RuntimeError(f"permute(): duplicate dims are not allowed (got {list(dims)})")
    return Permute.apply(input, dims)


def transpose(input: Tensor, dim0: int | str, dim1: int | str) -> Tensor:
    ndim = input.dim()
    try:
        dim0, dim1 = wrap_dim(dim0, ndim), wrap_dim(dim1, ndim)
    except TypeError:  # dimension names
        dim0, dim1 = input._wrap_dim(dim0), input._wrap_dim(dim1)
    if dim0 == dim1:  # still a new view (an alias), as in PyTorch, and its node is TransposeBackward0 there
        return _named(View.apply(input, input._array.shape), "TransposeBackward0")
    return Transpose.apply(input, dim0, dim1)


def _named(out: Tensor, node_name: str) -> Tensor:
    """``out`` with its view node called ``node_name`` (only the name: the node is unchanged)."""
    node = out._grad_fn
    if isinstance(node, ViewOp):
        node.node_name = node_name
    return out


swapaxes = swapdims = transpose


def t(input: Tensor) -> Tensor:
    if input.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.dim()}D")
    # below 2 dims: a new view (an alias), as PyTorch
    return _named(transpose(input, 0, 0 if input.dim() < 2 else 1), "TBackward0")


def movedim(input: Tensor, source, destination) -> Tensor:
    ndim = input.dim()
    source = [wrap_dim(d, ndim) for d in ((source,) if isinstance(source, int) else source)]
    destination = [wrap_dim(d, ndim) for d in ((destination,) if isinstance(destination, int) else destination)]
    order = [d for d in range(ndim) if d not in source]
    for dst, src in sorted(zip(destination, source)):
        order.insert(dst, src)
    return permute(input, order)


moveaxis = movedim


# expanding and squeezing ----------------------------------------------------------------------


class Expand(ViewOp):
    def geometry(self, shape, stride, offset, sizes):
        lead = len(sizes) - len(shape)
        if lead < 0:
            raise RuntimeError(
                f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to the number "
                f"of dimensions in the tensor ({len(shape)})"
            )
        new_shape, new_stride = [], []
        for i, want in enumerate(sizes):
            if i < lead:
                if want < 0:
                    raise RuntimeError(
                        f"The expanded size of the tensor ({want}) isn't allowed in a leading, "
                        f"non-existing dimension {i}"
                    )
                new_shape.append(want)
                new_stride.append(0)
                continue
            have, s = shape[i - lead], stride[i - lead]
            if want == -1 or want == have:
                new_shape.append(have)
                new_stride.append(s)
            elif have == 1:
                new_shape.append(want)
                new_stride.append(0)
            else:
                raise RuntimeError(
                    f"The expanded size of the tensor ({want}) must match the existing size ({have}) at "
                    f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: {list(shape)}"
                )
        # A new size-1 dim gets the stride row-major order gives it (PyTorch's inferExpandGeometry; a 0-d
        # tensor's expansion has stride 0 everywhere).
        for i in reversed(range(lead if shape else 0)):
            if new_shape[i] == 1:
                new_stride[i] = new_shape[i + 1] * new_stride[i + 1] if i + 1 < len(sizes) else 1
        return tuple(new_shape), tuple(new_stride), offset

    def backward(self, grad):
        return grad.sum_to_size(self.input_shape)


def expand(input: Tensor, *sizes, size=None) -> Tensor:
    """A broadcast view: size-1 dims repeat with stride 0 (no copy)."""
    sizes = int_list("expand", "size", sizes, size)
    if len(sizes) < input.dim():
        raise RuntimeError(
            f"expand({legacy_type_name(input)}{{{list(input.shape)}}}, size={list(sizes)}): the number of sizes "
            f"provided ({len(sizes)}) must be greater or equal to the number of dimensions in the tensor "
            f"({input.dim()})"
        )
    return Expand.apply(input, sizes)


def expand_as(input: Tensor, other: Tensor) -> Tensor:
    return expand(input, other._array.shape)


class Squeeze(ViewOp):
    def geometry(self, shape, stride, offset, dims):
        keep = [i for i in range(len(shape)) if not (i in dims and shape[i] == 1)]
        return tuple(shape[i] for i in keep), tuple(stride[i] for i in keep), offset

    def backward(self, grad):
        return grad.reshape(self.input_shape)


class Unsqueeze(ViewOp):
    def geometry(self, shape, stride, offset, dim):
        new_stride = stride[dim] * shape[dim] if dim < len(shape) else 1
        return shape[:dim] + (1,) + shape[dim:], stride[:dim] + (new_stride,) + stride[dim:], offset

    def backward(self, grad):
        return grad.squeeze(self.params[0])


def squeeze(input: Tensor, dim=None) -> Tensor:
    ndim = input.dim()
    if dim is None:
        dims = tuple(range(ndim))
    else:
        dims = tuple(wrap_dim(d, ndim) for d in ((dim,) if isinstance(dim, int) else dim))
    if dim is None:
        return Squeeze.apply(input, dims)
    # PyTorch's overloads: squeeze() is SqueezeBackward0, squeeze(dim) 1, squeeze(dims) 2
    return _named(Squeeze.apply(input, dims), "SqueezeBackward1" if isinstance(dim, int) else "SqueezeBackward2")


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    return Unsqueeze.apply(input, wrap_dim(dim, input.dim() + 1))


# picking a region -----------------------------------------------------------------------------


class Narrow(ViewOp):
    def name(self) -> str:  # PyTorch's narrow is a slice
        return "SliceBackward0"

    def geometry(self, shape, stride, offset, dim, start, length):
        return shape[:dim] + (length,) + shape[dim + 1 :], stride, offset + start * stride[dim]

    def backward(self, grad):
        return self.scatter_backward(grad)


class Select(ViewOp):
    def geometry(self, shape, stride, offset, dim, index):
        return shape[:dim] + shape[dim + 1 :], stride[:dim] + stride[dim + 1 :], offset + index * stride[dim]

    def backward(self, grad):
        return self.scatter_backward(grad)


class Diagonal(ViewOp):
    def geometry(self, shape, stride, offset, diag_offset, dim1, dim2):
        if diag_offset >= 0:
            length = max(0, min(shape[dim1], shape[dim2] - diag_offset))
            start = offset + diag_offset * stride[dim2] if length else offset
        else:
            length = max(0, min(shape[dim1] + diag_offset, shape[dim2]))
            start = offset - diag_offset * stride[dim1] if length else offset
        keep = [i for i in range(len(shape)) if i not in (dim1, dim2)]
        return (
            tuple(shape[i] for i in keep) + (length,),
            tuple(stride[i] for i in keep) + (stride[dim1] + stride[dim2],),
            start,
        )

    def backward(self, grad):
        return self.scatter_backward(grad)


class Index(ViewOp):
    """Basic indexing: ints, slices (positive steps), None and Ellipsis, in one view."""

    def name(self) -> str:
        """PyTorch applies the components one by one (int: select, slice: slice, None: unsqueeze; a slice over a
        whole dim is skipped, except a lone one: ``x[:]``) and names the output by the last; minitorch records
        them as one node."""
        index = self.params[0]
        if len(index) == 1 and isinstance(index[0], slice):
            return "SliceBackward0"
        last, dim, shape = "AliasBackward0", 0, self.input_shape
        for item in index:
            if item is None:
                last = "UnsqueezeBackward0"
                continue
            if isinstance(item, int):
                last = "SelectBackward0"
            elif item.indices(shape[dim]) != (0, shape[dim], 1):
                last = "SliceBackward0"
            dim += 1
        return last

    def geometry(self, shape, stride, offset, index):
        size, new_stride, dim = [], [], 0
        for item in index:
            if item is None:
                size.append(1)
                new_stride.append(stride[dim] * shape[dim] if dim < len(shape) else 1)
            elif isinstance(item, int):
                n = shape[dim]
                if not -n <= item < n:
                    raise IndexError(f"index {item} is out of bounds for dimension {dim} with size {n}")
                offset += (item % n) * stride[dim]
                dim += 1
            else:
                start, stop, step = item.indices(shape[dim])
                length = max(0, (stop - start + step - 1) // step)
                offset += start * stride[dim]  # an empty slice too (PyTorch: zeros(4, 3)[4:].storage_offset() == 12)
                size.append(length)
                new_stride.append(stride[dim] * step)
                dim += 1
        size.extend(shape[dim:])
        new_stride.extend(stride[dim:])
        return tuple(size), tuple(new_stride), offset

    def backward(self, grad):
        return self.scatter_backward(grad)


class Unfold(ViewOp):
    """``unfold(dim, size, step)``: the windows of ``size`` elements every ``step`` along ``dim``, as a new
    last dim; the windows overlap in memory when step < size, and their gradients add up (ViewScatter)."""

    def geometry(self, shape, stride, offset, dim, size, step):
        if not shape:  # a 0-dim tensor unfolds as one element
            return (size,), (1,), offset
        count = (shape[dim] - size) // step + 1
        return (
            shape[:dim] + (count,) + shape[dim + 1 :] + (size,),
            stride[:dim] + (stride[dim] * step,) + stride[dim + 1 :] + (stride[dim],),
            offset,
        )

    def backward(self, grad):
        return self.scatter_backward(grad)


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """``Tensor.unfold``: a view of every window of ``size`` elements, ``step`` apart, along ``dimension``."""
    ndim = input.dim()
    dim = wrap_dim(dimension, max(ndim, 1))
    n = input._array.shape[dim] if ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {n} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return Unfold.apply(input, dim, size, step)


class AsStrided(ViewOp):
    """Any window of the storage. Backward scatters into the *storage* and re-reads the input's
    own window; where the input's window reads an element several times (an expanded input), each reading
    gets an equal share of that element's gradient, as in PyTorch's ``as_strided_backward``."""

    def geometry(self, shape, stride, offset, size, new_stride, storage_offset):
        return size, new_stride, storage_offset

    @classmethod
    def apply(cls, x, size, stride, storage_offset):
        out = super().apply(x, size, stride, storage_offset)
        if out.grad_fn is not None:
            out.grad_fn.input_geometry = (x._array.shape, x.stride(), x._offset, len(x._storage))
        return out

    def backward(self, grad):
        shape, stride, offset, numel = self.input_geometry
        flat = ViewScatter.apply(grad, numel, *self.params)
        if _overlaps(shape, stride):  # how often the input reads each element (0 where it reads none: unread)
            readings = ViewScatter.apply(grad.new_ones(shape), numel, shape, stride, offset)
            flat = flat / readings.clamp(min=1)
        return flat.as_strided(shape, stride, offset)


def normalize_basic_index(index, ndim: int):
    """The index as a tuple of ints/slices/None of full length, or None if it is not basic."""
    if not isinstance(index, tuple):
        index = (index,)
    items = []
    for item in index:
        if item is None or item is Ellipsis or isinstance(item, slice):
            items.append(item)
        elif isinstance(item, int) and not isinstance(item, bool):
            items.append(item)
        elif isinstance(item, Tensor) and item.dim() == 0 and item.dtype.category == 1:  # a 0-dim integer tensor
            items.append(int(item.item()))
        else:
            return None
    consumed = sum(1 for i in items if i is not None and i is not Ellipsis)
    if items.count(Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at : at + 1] = [slice(None)] * (ndim - consumed)
    for item in items:
        if isinstance(item, slice) and item.step is not None and item.step <= 0:
            raise ValueError("step must be greater than zero")
    return tuple(items)


def basic_getitem(input: Tensor, index: tuple) -> Tensor:
    return Index.apply(input, index)


def narrow(input: Tensor, dim: int, start, length: int) -> Tensor:
    dim = wrap_dim(dim, input.dim())
    n = input._array.shape[dim]
    start = int(start)
    if not -n <= start <= n:  # PyTorch: an IndexError for the start, a RuntimeError for the length
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    if start < 0:
        start += n
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return Narrow.apply(input, dim, start, length)


def select(input: Tensor, dim: int, index: int) -> Tensor:
    dim = wrap_dim(dim, input.dim())
    n = input._array.shape[dim]
    if not -n <= index < n:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(input.shape)} at dimension {dim}"
        )
    return Select.apply(input, dim, index % n)


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    ndim = input.dim()
    dim1, dim2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if dim1 == dim2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return Diagonal.apply(input, offset, dim1, dim2)


def as_strided(input: Tensor, size, stride, storage_offset=None) -> Tensor:
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape ({len(stride)} vs {len(size)})")
    offset = input._offset if storage_offset is None else int(storage_offset)
    extent = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1 if all(size) else 0
    if extent > len(input._storage):
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and itemsize "
            f"{input.element_size()} requiring a storage size of {extent * input.element_size()} are out of bounds "
            f"for storage of size {len(input._storage) * input.element_size()}"
        )
    return AsStrided.apply(input, size, stride, offset)


class SplitViews(Op):
    """unbind / split / chunk: several views of the input recorded as ONE node with several outputs.

    Backward concatenates (split) or stacks (unbind) the pieces' gradients, zeros for pieces that got
    none: one op, however many pieces, so a loop over ``x.unbind(0)`` stays linear in backward.
    The pieces may not be written in place with grad on (PyTorch's multi-output-view rule).
    """

    def name(self) -> str:
        return self.op_name + "Backward0"

    @classmethod
    def apply(cls, x: Tensor, dim: int, sizes: list, squeeze: bool, op_name: str):
        if names_state.active:  # name inference first (ops/named.py)
            result = named.apply(cls, (x, dim, sizes, squeeze, op_name), {})
            if result is not None:
                return result
        if cls._tracer is not None:
            return cls._tracer.op(cls, (x, dim, sizes, squeeze, op_name), {})
        if not x._dense:
            return dispatch_non_dense(cls, (x, dim, sizes, squeeze, op_name), {})
        shape, stride, offset = x._array.shape, x.stride(), x._offset
        base = x._meta.base if x._meta is not None and x._meta.base is not None else x
        creation = view_creation(x, multi_output=True)
        pieces, start = [], 0
        for size in sizes:
            if squeeze:
                start_offset = offset + start * stride[dim]
                geometry = (shape[:dim] + shape[dim + 1 :], stride[:dim] + stride[dim + 1 :], start_offset)
            else:
                geometry = (shape[:dim] + (size,) + shape[dim + 1 :], stride, offset + start * stride[dim])
            piece = x._view(*geometry)
            meta = piece._autograd_meta()
            meta.base, meta.view_version, meta.creation = base, x._storage.version, creation
            pieces.append(piece)
            start += size
        if grad_mode.state.enabled and (x._requires_grad or view_requires_grad(x)):
            node = cls.__new__(cls)
            node.backend, node.device = x._storage.backend, x._storage.device
            node.op_name, node.dim, node.squeeze = op_name, dim, squeeze
            node.piece_shapes = [p._array.shape for p in pieces]
            node._record((x,), tuple(pieces))
        if forward_ad.active:
            node = cls.__new__(cls)
            node.params = (dim, sizes, squeeze, op_name)
            propagate(node, (x,), tuple(pieces))
        return tuple(pieces)

    def jvp(self, inputs, outputs, tangents):
        """Hand-written: the pieces' tangents are the same pieces of the input's tangent."""
        return SplitViews.apply(tangents[0], *self.params)

    def backward(self, *grads):
        filled = [g if g is not None else _zeros_like_shape(grads, shape) for g, shape in zip(grads, self.piece_shapes)]
        return stack(filled, self.dim) if self.squeeze else cat(filled, self.dim)


def _zeros_like_shape(grads, shape):
    template = next(g for g in grads if g is not None)
    return template.new_zeros(shape)


def unbind(input: Tensor, dim: int = 0):
    """The slices along ``dim``, as views (one graph node for all of them)."""
    dim = wrap_dim(dim, input.dim())
    if input._array.shape[dim] == 0:  # no slices (PyTorch returns an empty tuple)
        return ()
    return SplitViews.apply(input, dim, [1] * input._array.shape[dim], True, "Unbind")


def split(tensor: Tensor, split_size_or_sections, dim: int = 0):
    """Pieces of ``split_size`` (or the given sizes) along ``dim``, as views (one graph node)."""
    try:
        dim = wrap_dim(dim, tensor.dim())
    except TypeError:  # a dimension name
        dim = tensor._wrap_dim(dim)
    n = tensor._array.shape[dim]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        sizes = [min(step, n - i) for i in range(0, n, step)] if n else [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at dimension "
                f"{dim}), but got split_sizes={sizes}"
            )
    op_name = "Split" if isinstance(split_size_or_sections, int) else "SplitWithSizes"
    return SplitViews.apply(tensor, dim, sizes, False, op_name)


def chunk(input: Tensor, chunks: int, dim: int = 0):
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    n = input._array.shape[wrap_dim(dim, input.dim())]
    if n == 0:  # PyTorch: `chunks` empty pieces
        return split(input, [0] * chunks, dim)
    return split(input, max(1, -(-n // chunks)), dim)


def split_with_sizes(input: Tensor, split_sizes, dim: int = 0):
    """Pieces of the given sizes along ``dim``, as views (one graph node): ``split`` with a list."""
    return split(input, list(split_sizes), dim)


def tensor_split(input: Tensor, indices_or_sections, dim: int = 0):
    """Pieces along ``dim``: ``n`` near-equal ones, or the slices between the given indices (Python slice
    bounds: negative ones count from the end). Each piece is a separate slice of ``input``, not an output of
    one multi-output node as in ``split``, so (as in PyTorch) a piece may be written in place."""
    dim = wrap_dim(dim, input.dim())
    n = input._array.shape[dim]
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {k}")
        bounds = [i * (n // k) + min(i, n % k) for i in range(k + 1)]
        pairs = zip(bounds, bounds[1:])
    else:
        indices = [int(i) for i in indices_or_sections]
        pairs = zip([0] + indices, indices + [None])
    before = (slice(None),) * dim
    return tuple(input[before + (slice(start, stop),)] for start, stop in pairs)


def _split_along(name: str, input: Tensor, indices_or_sections, dim: int, min_dims: int):
    """hsplit / vsplit / dsplit: ``tensor_split`` along a fixed dim; a number of sections must divide it."""
    if input.dim() < min_dims:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {min_dims} dimension, but "
            f"got a tensor with {input.dim()} dimensions!"
        )
    if isinstance(indices_or_sections, int):
        n = input._array.shape[dim]
        if indices_or_sections == 0 or n % indices_or_sections:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension {n} is not "
                f"divisible by the split_size {indices_or_sections}!"
            )
    return tensor_split(input, indices_or_sections, dim)


def hsplit(input: Tensor, indices_or_sections):
    """Split along dim 1 (dim 0 of a 1-D tensor), as ``tensor_split``."""
    return _split_along("hsplit", input, indices_or_sections, 1 if input.dim() > 1 else 0, 1)


def vsplit(input: Tensor, indices_or_sections):
    """Split along dim 0 of a tensor with at least 2 dims."""
    return _split_along("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input: Tensor, indices_or_sections):
    """Split along dim 2 of a tensor with at least 3 dims."""
    return _split_along("dsplit", input, indices_or_sections, 2, 3)


def _T(self: Tensor) -> Tensor:
    return permute(self, tuple(reversed(range(self.dim()))))


def _mT(self: Tensor) -> Tensor:
    if self.dim() < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.")
    return transpose(self, -2, -1)


__all__ = [
    "view", "reshape", "view_as", "reshape_as", "flatten", "ravel", "unflatten", "permute", "transpose", "swapaxes",
    "swapdims", "t", "movedim", "moveaxis", "expand", "expand_as", "squeeze", "unsqueeze", "narrow", "select",
    "diagonal", "as_strided", "unbind", "split", "split_with_sizes", "chunk", "tensor_split",
    "hsplit", "vsplit", "dsplit",
]
