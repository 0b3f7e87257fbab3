"""The KL registry: ``register_kl`` records a formula for a pair of distribution types and ``kl_divergence``
dispatches on the most specific registered pair (PyTorch's rules). The formulas are in ``kl.py`` (same
family) and ``_kl_cross_family.py``."""

from __future__ import annotations

import warnings
from functools import total_ordering

from ..creation import full_like
from ..tensor import Tensor
from .distribution import Distribution

__all__ = ["register_kl", "kl_divergence"]

_KL_REGISTRY: dict = {}  # Source of truth mapping a few general (type, type) pairs to functions.
_KL_MEMOIZE: dict = {}  # Memoized version mapping many specific (type, type) pairs to functions.
_INF = float("inf")


def register_kl(type_p, type_q):
    """Decorator that registers ``fun(p, q)`` as the KL divergence of ``type_p`` from ``type_q``."""
    if not isinstance(type_p, type) and issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) and issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()  # reset since lookup order may have changed
        return fun

    return decorator


@total_ordering
class _Match:
    """A registered pair ordered by specificity (a subclass pair sorts before its bases)."""

    __slots__ = ["types"]

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    """The most specific registered function for ``(type_p, type_q)``; warns when that is ambiguous."""
    matches = [(super_p, super_q) for super_p, super_q in _KL_REGISTRY
               if issubclass(type_p, super_p) and issubclass(type_q, super_q)]
    if not matches:
        return NotImplemented
    # Check that the left- and right- lexicographic orders agree.
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    right_fun = _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left_p.__name__}, {right_q.__name__})", RuntimeWarning, stacklevel=2)
    return left_fun


def _infinite_like(tensor):
    return full_like(tensor, _INF)


def _x_log_x(tensor):
    return tensor.xlogy(tensor)


def _batch_trace_XXT(bmat):
    """The trace of ``X @ X.T`` for a batch of matrices ``X``."""
    n = bmat.size(-1)
    m = bmat.size(-2)
    flat_trace = bmat.reshape(-1, m * n).pow(2).sum(-1)
    return flat_trace.reshape(bmat.shape[:-2])


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """``KL(p || q) = E_p[log p(x) - log q(x)]``, batched over the batch shape; NotImplementedError when no
    formula is registered for the pair."""
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type "
                                  f"{q.__class__.__name__}")
    return fun(p, q)


