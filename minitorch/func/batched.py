"""BatchedTensor: what a function sees inside ``vmap``, a tensor with one dimension hidden.

functorch's design: a BatchedTensor wraps a ``value`` (a plain tensor, or a BatchedTensor of an outer
vmap) whose dim ``bdim`` is the batch; ``level`` says which vmap it belongs to (nested vmaps nest
wrappers, the innermost with the highest level). Its shape, dim() and stride() are the *logical*
ones, those of one sample. It is a Tensor subclass with ``_dense = False``, so ``Op.apply`` sends
every op on it to ``dispatch_non_dense`` and from there to a batching rule (batching_rules.py) that
runs the op once on the whole batch; nothing on the dense path pays for it.

Its ``_array`` is not data: a ``LogicalArray`` that holds the logical shape and strides, so code that
reads a tensor's geometry works, while any code that tries to compute on the raw array of a batched
tensor (instead of calling an op) fails loudly rather than silently mixing samples.

Autograd lives on the values: a batched op's result is the wrapper of an op result on the values,
so the graph is recorded between plain tensors, and ``requires_grad`` / ``grad_fn`` read the value's.
"""

from __future__ import annotations

import math

from ..tensor import Tensor

_ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() on "
         "a Tensor, please try to rewrite what you're doing with other operations. If error is occurring somewhere "
         "inside PyTorch internals, please file a bug report.")
_CONTROL_FLOW = ("vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We "
                 "don't support that yet, please file an issue at https://github.com/pytorch/pytorch/issues .")
_NO_STORAGE = "Cannot access data pointer of Tensor that doesn't have storage"


class LogicalArray:
    """The geometry of one sample of a batched tensor, standing where a tensor keeps its array."""

    __slots__ = ("shape", "strides", "ndim", "size", "dtype", "_batch")

    def __init__(self, value_array, bdim: int):
        self._batch = value_array
        shape, strides = value_array.shape, value_array.strides
        self.shape = shape[:bdim] + shape[bdim + 1:]
        self.strides = strides[:bdim] + strides[bdim + 1:]
        self.ndim = len(self.shape)
        self.size = math.prod(self.shape)
        self.dtype = value_array.dtype

    def min(self):
        """The smallest value over every sample (the bounds checks of index arguments read it; code that would use
        it as a per-sample value, as one_hot's class count, refuses batched tensors instead)."""
        return self._batch.min()

    def max(self):
        return self._batch.max()

    def __getattr__(self, name):
        raise RuntimeError(f"vmap: the data of a batched tensor was read directly (array attribute {name!r}): "
                           "either a batched value written in place into an unbatched tensor (impossible under "
                           "vmap, as in PyTorch: use out-of-place ops), or code minitorch has no batching rule for")

    def __array__(self, *args, **kwargs):
        raise RuntimeError("vmap: code converted a batched tensor to an array instead of calling an op; minitorch "
                           "has no batching rule for it")


class BatchedTensor(Tensor):
    """One sample's view of a batch: ``value`` with its dim ``bdim`` hidden, at vmap ``level``."""

    __slots__ = ("_value", "_bdim", "_level")
    _dense = False
    _kind = "batched"

    # geometry and identity ---------------------------------------------------------------------
    def __repr__(self) -> str:
        value = repr(self._value).replace("\n", "\n    ")
        return f"BatchedTensor(lvl={self._level}, bdim={self._bdim}, value=\n    {value}\n)"

    def data_ptr(self) -> int:
        raise RuntimeError(_NO_STORAGE)

    def item(self):
        raise RuntimeError(_ITEM)

    def tolist(self):
        raise RuntimeError(_NO_STORAGE)

    def numpy(self, *, force: bool = False):
        raise RuntimeError(_NO_STORAGE)

    def __bool__(self) -> bool:
        raise RuntimeError(_CONTROL_FLOW)

    def _python_scalar(self):
        raise RuntimeError(_ITEM)

    def __index__(self) -> int:
        raise RuntimeError(_ITEM)

    # autograd: the value's -------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._value.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self._value.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return self._value.grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._value.is_leaf

    @property
    def grad(self):
        return None

    @property
    def _base(self):
        return None

    def _is_view(self) -> bool:
        return False

    def detach(self) -> Tensor:
        return wrap(self._value.detach(), self._bdim, self._level)

    def _alias(self) -> Tensor:
        return wrap(self._value._alias(), self._bdim, self._level)

    @property
    def data(self) -> Tensor:
        return self.detach()

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
        raise RuntimeError("vmap: calling .backward() on a tensor inside the function being vmapped is not "
                           "supported; use minitorch.func.grad or minitorch.autograd.grad inside it instead")


def wrap(value: Tensor, bdim: int, level: int) -> BatchedTensor:
    """``value`` seen one sample at a time along ``bdim`` (at vmap ``level``)."""
    t = object.__new__(BatchedTensor)
    t._value, t._bdim, t._level = value, bdim, level
    t._array = LogicalArray(value._array, bdim)
    t._storage = value._storage
    t._offset = value._offset
    t._requires_grad = False
    t._grad_fn = None
    t._output_nr = 0
    t._meta = None
    t._names = None
    return t


def unwrap(x, level: int):
    """``(value, bdim)`` of ``x`` at ``level``; ``(x, None)`` for anything not batched at that level."""
    if type(x) is BatchedTensor and x._level == level:
        return x._value, x._bdim
    return x, None
