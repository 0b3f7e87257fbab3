"""Parameter: a leaf Tensor that a Module registers as learnable when assigned as an attribute."""

from __future__ import annotations

import weakref

from ..creation import empty
from ..ops import fast_path
from ..tensor import Tensor

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


class Parameter(Tensor):
    """A Tensor sharing ``data``'s storage, registered by ``Module.__setattr__``, requiring grad by default.

    It is always a leaf: the history of ``data`` is dropped (PyTorch does the same). Results of ops on a
    Parameter are plain Tensors, so only the objects a Module holds are Parameters.
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): data must be a Tensor, got {type(data).__name__}")
        self = cls._make(data._array, data._storage, data._offset)
        if requires_grad:
            self.requires_grad_(True)
        return self

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True):
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        if self._meta is not None and self._meta.grad is not None:
            result._autograd_meta().grad = self._meta.grad.clone()
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        raise TypeError("minitorch parameters are not picklable; use minitorch.save(module.state_dict())")


fast_path.accept_parameters(Parameter)  # ops on parameters take the fast paths of plain tensors


class Buffer(Tensor):
    """``nn.Buffer(data, persistent=True)``: marks a tensor to be registered as a buffer on assignment.

    Assigning it to a Module attribute registers a plain Tensor sharing its storage (as PyTorch does)."""

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(): data must be a Tensor, got {type(data).__name__}")
        self = cls._make(data._array, data._storage, data._offset)
        self.persistent = persistent
        return self

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True):
        pass


_UNINITIALIZED_SHAPE_MESSAGE = (
    "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
    "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call `forward` to "
    "initialize the parameters before accessing their attributes."
)


class UninitializedTensorMixin:
    """What a lazy module's not-yet-shaped parameter or buffer shares: it holds an empty tensor of the
    intended dtype and device until ``materialize(shape)`` gives it storage and turns it, in place, into
    ``cls_to_become`` (so an optimizer built before the first forward holds the materialized object)."""

    __slots__ = ()
    cls_to_become: type = Tensor

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give the tensor ``shape`` (uninitialized values, as ``empty``) and become ``cls_to_become``."""
        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        self.data = empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(_UNINITIALIZED_SHAPE_MESSAGE)

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize the "
            "parameters before calling `module.share_memory()`."
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


def is_lazy(param) -> bool:
    """Whether ``param`` is an ``UninitializedParameter`` or ``UninitializedBuffer``."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape a lazy module infers from its first input; becomes a ``Parameter``."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        return super().__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad: bool = True, device=None, dtype=None):
        pass

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]


_buffer_persistence: dict[int, bool] = {}  # id -> persistent, dropped with the buffer (Tensor's == is elementwise)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape a lazy module infers from its first input; becomes a plain ``Tensor``.

    It adds no attributes to Tensor's slots (so it can turn into one in place); ``persistent`` is kept aside."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None, persistent: bool = True):
        like = empty(0, device=device, dtype=dtype)
        self = cls._make(like._array, like._storage, like._offset)
        if requires_grad:
            self.requires_grad_(True)
        _buffer_persistence[id(self)] = persistent
        weakref.finalize(self, _buffer_persistence.pop, id(self), None)
        return self

    def __init__(self, requires_grad: bool = False, device=None, dtype=None, persistent: bool = True):
        pass

    @property
    def persistent(self) -> bool:
        return _buffer_persistence.get(id(self), True)
