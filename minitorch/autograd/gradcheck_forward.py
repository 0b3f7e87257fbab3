"""The forward-mode half of gradcheck (``check_forward_ad=True``): Jacobians from tangents.

Reverse mode gives the analytical Jacobian a row per output element (one backward per one-hot seed);
forward mode gives it a column per input element: ``func`` runs inside a dual level with a one-hot tangent
on one input element (``J e_k``), as PyTorch's ``_get_analytical_jacobian_forward_ad`` does. A complex
input element is pushed along ``1`` and ``1j``: the column is ``ds/dx + i ds/dy``, the numerical
Jacobian's convention. Fast mode pushes one random direction ``u`` per input instead (``J u``).
gradcheck.py compares these against the same finite differences as reverse mode.
"""

from __future__ import annotations

import itertools

from ..creation import zeros_like
from ..tensor import Tensor, from_array
from . import forward_ad


def _float_outputs(out) -> list:
    out = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in out if isinstance(o, Tensor)]


def _tangents_of_outputs(func, inputs: tuple, position: int, tangent: Tensor) -> list:
    """The output tangents (flat arrays; zeros where an output has none) of ``func`` with ``inputs[position]``
    made dual with ``tangent``."""
    with forward_ad.dual_level():
        args = list(inputs)
        args[position] = forward_ad.make_dual(inputs[position], tangent)
        outputs = _float_outputs(func(*args))
        result = []
        for o in outputs:
            t = forward_ad.unpack_dual(o).tangent
            if t is None:
                t = zeros_like(o)
            result.append(t._array.reshape(-1).copy())
    return result


def forward_jacobians(func, inputs: tuple) -> list:
    """``result[i][j]``: d output j / d diff-input i from forward mode, shaped (input numel, output numel) like
    gradcheck's numerical Jacobians (row k: the column ``J e_k`` of the usual Jacobian)."""
    result = []
    for position, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x.requires_grad):
            continue
        xp = x._storage.backend.xp
        rows = None
        for k, index in enumerate(itertools.product(*map(range, x._array.shape))):
            steps = (1, 1j) if x.dtype.is_complex else (1,)
            parts = []
            for step in steps:
                seed = xp.zeros(x._array.shape, dtype=x._array.dtype)
                seed[index] = step
                parts.append(_tangents_of_outputs(func, inputs, position, _wrap(seed, x)))
            columns = parts[0] if len(steps) == 1 else [a + 1j * b for a, b in zip(*parts)]
            if rows is None:
                rows = [xp.zeros((x.numel(), c.size), dtype=xp.result_type(c.dtype, x._array.dtype)) for c in columns]
            for jacobian, column in zip(rows, columns):
                jacobian[k] = column
        if rows is None:  # an empty input: empty Jacobians
            rows = [xp.zeros((0, o.numel()), dtype=xp.float64) for o in _float_outputs(func(*inputs))]
        result.append(rows)
    return result


def forward_directional(func, inputs: tuple, position: int, u) -> list:
    """``J u`` (flat arrays, one per tensor output) for the direction ``u`` (a flat array) of input ``position``."""
    x = inputs[position]
    return _tangents_of_outputs(func, inputs, position, _wrap(u.reshape(x._array.shape), x))


def _wrap(array, like: Tensor) -> Tensor:
    return from_array(array.astype(like._array.dtype), like._storage.backend, like.device)
