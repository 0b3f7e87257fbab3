"""Indexing by tensors: gather/scatter along a dim (more to come: advanced indexing, index_select, ...).

Gradients of reads that may repeat an index (gather, advanced indexing) are scatter-adds
(``backend.index_add``: numpy's add.at, CuPy's scatter_add), so repeated indices add up.
"""

from __future__ import annotations

from ..tensor import Tensor, wrap_dim
from .op import Op
from .promotion import promote


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


def _check_index(op: str, input: Tensor, dim: int, index: Tensor) -> int:
    if index.dtype.name != "int64":
        raise RuntimeError(f"{op}(): Expected dtype int64 for index, got {index.dtype}")
    if index.dim() != input.dim() and index.numel() > 0:
        raise RuntimeError(f"Index tensor must have the same number of dimensions as input tensor ({op}: input "
                           f"{list(input.shape)}, index {list(index.shape)})")
    return wrap_dim(dim, input.dim())


def pad_to(grad: Tensor, shape: tuple) -> Tensor:
    """``grad`` placed at the start of zeros of ``shape`` (src may be larger than index)."""
    if grad._array.shape == tuple(shape):
        return grad
    from .views import ViewScatter, contiguous_strides

    numel = 1
    for n in shape:
        numel *= n
    return ViewScatter.apply(grad, numel, grad._array.shape, contiguous_strides(shape), 0).view(shape)


class Gather(Op):
    save_inputs = (1,)

    def forward(self, x, index, dim):
        self.dim, self.input_shape = dim, x.shape
        n = x.shape[dim]
        if index.size and (index.min() < -n or index.max() >= n):
            raise RuntimeError(f"gather(): index out of bounds for dimension {dim} with size {n}")
        return x[dim_index(self.xp, index % n if n else index, dim)]

    def backward(self, grad):
        (index,) = self.saved_tensors
        return grad.new_zeros(self.input_shape).scatter_add(self.dim, index, grad), None


class ScatterAdd(Op):
    save_inputs = (1,)

    def forward(self, x, index, src, dim):
        x, src, _ = promote(self, x, src)
        self.dim, self.src_shape = dim, src.shape
        out = x.copy()
        if index.size:
            self.backend.index_add(out, dim_index(self.xp, index, dim), src[tuple(slice(0, n) for n in index.shape)])
        return out

    def backward(self, grad):
        (index,) = self.saved_tensors
        return grad, None, pad_to(grad.gather(self.dim, index), self.src_shape)


class Scatter(Op):
    save_inputs = (1,)

    def forward(self, x, index, src, dim):
        self.dim, self.src_shape = dim, getattr(src, "shape", ())
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
    dim = _check_index("scatter_add", input, dim, index)
    return ScatterAdd.apply(input, index, src, dim)


def scatter(input: Tensor, dim: int, index: Tensor, src=None, *, value=None, reduce=None) -> Tensor:
    """A copy of ``input`` with ``src`` (or a scalar ``value``) written at ``index`` along ``dim``."""
    if reduce is not None:
        if reduce == "add":
            return scatter_add(input, dim, index, src)
        raise NotImplementedError(f"scatter(reduce={reduce!r}) is not supported; use scatter_reduce")
    dim = _check_index("scatter", input, dim, index)
    src = value if src is None else src
    if isinstance(src, Tensor):
        src = src.to(input.dtype)
    return Scatter.apply(input, index, src, dim)


Tensor.gather = gather
Tensor.scatter_add = scatter_add
Tensor.scatter = scatter

__all__ = ["gather", "scatter", "scatter_add"]
