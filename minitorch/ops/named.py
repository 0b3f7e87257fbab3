"""Name inference: the dimension names of an op's outputs, from its inputs' (PyTorch's named tensor rules).

Once some tensor has had a name (``_names.state.active``), ``Op.apply`` first calls ``apply`` here. With no
named input it returns None and the op runs as always. With one, the op's rule (``RULES``, filled by
minitorch/_named_tensors.py) checks the names and computes the output names *before* anything runs (so an error never
leaves a half-written tensor), the op runs with names suspended, and the names go onto its outputs. An op
without a rule raises PyTorch's "... is not yet supported with named tensors" error.

Autograd ignores names, as in PyTorch: backward runs with names suspended, so gradients are unnamed.
"""

from __future__ import annotations

import re
import threading
from contextlib import contextmanager

from .._names import names_of, set_names, show
from ..tensor import Tensor


class _Suspended(threading.local):
    """``depth`` > 0 while an op runs under a rule that already computed its names (or during backward)."""

    depth = 0


_suspended = _Suspended()

# op class -> rule(op, args, params) -> the output names: a tuple (every output), None (unnamed outputs), or a
# list with one of those per output. Looked up along the class's MRO, so a base class covers its subclasses.
RULES: dict = {}


def register(rule, *ops) -> None:
    for op in ops:
        RULES[op] = rule


def _rule_for(op):
    for cls in op.__mro__:
        rule = RULES.get(cls)
        if rule is not None:
            return rule
    return None


def _named(value) -> bool:
    if isinstance(value, Tensor):
        return value._names is not None
    if type(value) in (list, tuple):
        return any(isinstance(v, Tensor) and v._names is not None for v in value)
    return False


def apply(op, args: tuple, params: dict):
    """The op's result with names inferred, or None when names play no part (no named input)."""
    if _suspended.depth or not any(_named(a) for a in args):
        return None
    rule = _rule_for(op)
    if rule is None:
        raise not_supported(_op_name(op))
    out_names = rule(op, args, params)
    _suspended.depth += 1
    try:
        result = op.apply(*args, **params)
    finally:
        _suspended.depth -= 1
    return attach(result, out_names)


def evaluate(node, grads):
    """A node's backward with names suspended (the gradients come out unnamed)."""
    _suspended.depth += 1
    try:
        return node._per_input(node.backward(*(_unnamed(g) for g in grads)))
    finally:
        _suspended.depth -= 1


def _unnamed(grad):
    """A gradient passed to backward with names (``y.backward(named)``): the same values and history, no names,
    so a backward that passes it on unchanged (clone, add) gives unnamed gradients too."""
    if not isinstance(grad, Tensor) or grad._names is None or (grad._requires_grad and grad._grad_fn is None):
        return grad
    alias = grad._alias()
    alias._names = None
    alias._grad_fn, alias._output_nr, alias._requires_grad = grad._grad_fn, grad._output_nr, grad._requires_grad
    return alias


@contextmanager
def suspended():
    """Ops inside ignore names (a rule already computed them, or the caller sets them afterwards)."""
    _suspended.depth += 1
    try:
        yield
    finally:
        _suspended.depth -= 1


def attach(result, out_names):
    """Give the outputs their names (a tuple of outputs gets the same names, or one entry each from a list)."""
    if type(result) is tuple:
        for i, output in enumerate(result):
            names = out_names[i] if type(out_names) is list else out_names
            if isinstance(output, Tensor):
                _set(output, names)
        return result
    return _set(result, out_names)


def _set(tensor: Tensor, names):
    if names is not None and len(names) != len(tensor._array.shape):  # a rule's bug, not the user's
        raise AssertionError(f"name inference gave {show(names)} for a {tensor.dim()}-d output")
    return set_names(tensor, names, validate=False)


def _op_name(op) -> str:
    return "aten::" + re.sub(r"(?<!^)(?=[A-Z])", "_", op.__name__).lower()


def not_supported(name: str) -> RuntimeError:
    """PyTorch's error for an op that has no name inference rule."""
    return RuntimeError(
        f"{name} is not yet supported with named tensors. Please drop names via `tensor = tensor.rename(None)`, "
        "call the op with an unnamed tensor, and set names on the result of the operation."
    )


# name operations ------------------------------------------------------------------------------------------
def unify_from_right(names: tuple, other: tuple, action: str = "broadcast") -> tuple:
    """PyTorch's unify_from_right: names match from the right (None matches anything); a named dim matched
    with an unnamed one must not appear elsewhere in the other list."""
    size = max(len(names), len(other))
    result = [None] * size
    for i in range(1, size + 1):
        name = names[-i] if i <= len(names) else None
        other_name = other[-i] if i <= len(other) else None
        if name is not None and other_name is not None and name != other_name:
            raise RuntimeError(
                f"Error when attempting to {action} dims {show(names)} and dims {show(other)}: dim {_quoted(name)} "
                f"and dim {_quoted(other_name)} are at the same position from the right but do not match."
            )
        result[-i] = name if name is not None else other_name
        if name is None or other_name is None:
            _check_aligned(name, names, other, action)
            _check_aligned(other_name, other, names, action)
    return tuple(result)


def _quoted(name) -> str:
    return "None" if name is None else f"'{name}'"


def _check_aligned(name, names: tuple, other: tuple, action: str) -> None:
    if name is not None and name in other:
        raise RuntimeError(
            f"Misaligned dims when attempting to {action} dims {show(names)} and dims {show(other)}: dim "
            f"{_quoted(name)} appears in a different position from the right across both lists."
        )


def _argument(args: tuple, params: dict, index: int, keyword: str, default=None):
    if keyword in params:
        return params[keyword]
    return args[index] if index < len(args) else default


def _first_tensor(args) -> Tensor:
    return next(a for a in args if isinstance(a, Tensor))


# rules ------------------------------------------------------------------------------------------------------
def keep(op, args, params):
    """Keeps input names: the output has the (first) input's names."""
    return _first_tensor(args)._names


def unify(op, args, params):
    """Unifies names from inputs: every tensor input's names matched and unified from the right."""
    result = None
    for a in args:
        if isinstance(a, Tensor):
            names = names_of(a)
            result = names if result is None else unify_from_right(result, names)
    return result


def removing(dims_at: int, keepdim_at: int | None, dims_keyword: str = "dim", keepdim_keyword: str = "keepdim",
             outputs: int = 1):
    """Removes dimensions: the dims reduced over (``args[dims_at]``, None for all) leave the names, unless
    keepdim; a reduction over every dim gives an unnamed (0-d) result."""

    def rule(op, args, params):
        x = args[0]
        names = names_of(x)
        dims = _argument(args, params, dims_at, dims_keyword)
        keepdim = bool(_argument(args, params, keepdim_at, keepdim_keyword, False)) if keepdim_at is not None else False
        if keepdim:
            out = names
        elif dims is None:
            out = None
        else:
            ndim = max(len(names), 1)
            gone = {d % ndim for d in ((dims,) if isinstance(dims, int) else dims)}
            out = tuple(n for i, n in enumerate(names) if i not in gone) if names else names
            if not gone and len(names):  # an empty dim list reduces every dim (PyTorch's sum(dim=[]))
                out = None
        return [out] * outputs if outputs > 1 else out

    return rule


def matmul(op, args, params):
    """Contracts away dims: batch dims unify (aligned from the right), then the first operand's row name
    and the second's column name (vectors contribute none); PyTorch's compute_matmul_outnames."""
    a, b = names_of(args[0]), names_of(args[1])
    if not a or not b:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {len(a)}D and {len(b)}D")
    batch = unify_from_right(a[:-2] if len(a) > 2 else (), b[:-2] if len(b) > 2 else (), "matmul")
    out = batch + ((a[-2],) if len(a) >= 2 else ()) + ((b[-1],) if len(b) >= 2 else ())
    if len(a) >= 2 and len(b) >= 2 and out[-2] is not None and out[-2] == out[-1]:
        raise RuntimeError(
            f"Matrix multiplying Tensor{show(a)} with Tensor{show(b)} would produce output tensor with duplicate "
            f"names {show(out)}. Please rename the input tensors with `Tensor.rename` to prevent this."
        )
    return out


def transpose(op, args, params):
    names = list(names_of(args[0]))
    d0, d1 = args[1], args[2]
    names[d0], names[d1] = names[d1], names[d0]
    return tuple(names)


def permute(op, args, params):
    names = names_of(args[0])
    return tuple(names[d] for d in args[1])


def unsqueeze(op, args, params):
    names = names_of(args[0])
    d = args[1]
    return names[:d] + (None,) + names[d:]


def squeeze(op, args, params):
    x, dims = args[0], args[1]
    shape = x._array.shape
    return tuple(n for i, n in enumerate(names_of(x)) if not (i in dims and shape[i] == 1))


def expand(op, args, params):
    names = names_of(args[0])
    return (None,) * (len(args[1]) - len(names)) + names


def diagonal(op, args, params):
    names = names_of(args[0])
    d1, d2 = args[2], args[3]
    return tuple(n for i, n in enumerate(names) if i not in (d1, d2)) + (None,)


def alias_only(op, args, params):
    """``view``/``reshape`` keep the names only when the shape is unchanged (an alias); any other shape is
    PyTorch's unsupported error (use flatten/unflatten, which name the new dims)."""
    x = args[0]
    if tuple(args[1]) != x._array.shape:
        raise not_supported("aten::view" if op.__name__ == "View" else _op_name(op))
    return x._names


def split_views(op, args, params):
    """split/chunk keep every name; unbind removes the dim it unbinds."""
    x, dim, squeeze_dim = args[0], args[1], args[3]
    names = names_of(x)
    return names[:dim] + names[dim + 1:] if squeeze_dim else names


def cat(op, args, params):
    """Unifies the names of all the tensors (PyTorch's compute_cat_outnames)."""
    result = None
    for a in args:
        if isinstance(a, Tensor):
            names = names_of(a)
            if not names:
                raise RuntimeError("zero-dimensional tensor cannot be concatenated")
            if result is not None and len(names) != len(result):
                raise RuntimeError(f"Tensors must have same number of dimensions: got {len(result)} and {len(names)}")
            result = names if result is None else unify_from_right(result, names, "cat")
    return result
