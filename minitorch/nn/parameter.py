"""Parameter: a leaf Tensor that a Module registers as learnable when assigned as an attribute."""

from __future__ import annotations

from ..creation import empty
from ..tensor import Tensor

__all__ = ["Parameter", "Buffer"]


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
