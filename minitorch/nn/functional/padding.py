"""F.pad: constant, reflect, replicate and circular padding, with negative pads cropping.

``pad`` lists (before, after) pairs starting from the *last* dim, as in PyTorch. Constant padding is
one op whose adjoint is itself with the pads negated (padding and cropping are adjoint). The other
modes read each output position from an input position along one dim at a time (``Take``), whose
adjoint scatter-adds the gradient back (``TakeTranspose``); the two are each other's derivative.
"""

from __future__ import annotations

from ..._dtype import int64
from ...ops.comparison import depends_on
from ...ops.op import Op, linear_jvp
from ...tensor import Tensor


class ConstantPad(Op):
    """``x`` with ``pads[d] = (before, after)`` elements of ``value`` added around dim ``d``
    (negative amounts crop)."""

    def name(self) -> str:
        return "ConstantPadNdBackward0"

    def forward(self, x, pads, value):
        self.pads = pads
        shape = tuple(n + lo + hi for n, (lo, hi) in zip(x.shape, pads))
        out = self.xp.full(shape, value, dtype=x.dtype) if value != 0 else self.xp.zeros(shape, dtype=x.dtype)
        source = tuple(slice(max(-lo, 0), n - max(-hi, 0)) for n, (lo, hi) in zip(x.shape, pads))
        target = tuple(slice(max(lo, 0), m - max(hi, 0)) for m, (lo, hi) in zip(shape, pads))
        if all(s.start < s.stop for s in source):
            out[target] = x[source]
        return out

    def backward(self, grad):
        return ConstantPad.apply(grad, tuple((-lo, -hi) for lo, hi in self.pads), 0)


class Take(Op):
    """``x`` read at positions ``index`` (a 1-D integer array) along ``dim``."""

    jvp = linear_jvp  # forward mode: linear in its first input, so the op itself on the tangent (ops/op.py)

    def forward(self, x, dim, index):
        self.dim, self.index, self.size = dim, index, x.shape[dim]
        return self.xp.take(x, index, axis=dim)

    def backward(self, grad):
        return TakeTranspose.apply(grad, self.dim, self.index, self.size)


class PadTake(Take):
    """``Take`` for reflect and replicate padding: PyTorch's reflection_pad/replication_pad backward takes the
    input, so the gradient depends on it (derivative 0). (Circular padding is slicing in PyTorch: plain Take.)"""

    save_inputs = (0,)

    def backward(self, grad):
        (x,) = self.saved_tensors
        return depends_on(super().backward(grad), x)


class TakeTranspose(Op):
    """The adjoint of ``Take``: ``grad`` added back at ``index`` along ``dim`` (repeats add up)."""

    def forward(self, grad, dim, index, size):
        self.dim, self.index = dim, index
        xp = self.xp
        shape = grad.shape[:dim] + (size,) + grad.shape[dim + 1 :]
        out = xp.zeros(shape, dtype=grad.dtype)
        self.backend.index_add(xp.moveaxis(out, dim, 0), index, xp.moveaxis(grad, dim, 0))
        return out

    def backward(self, grad):
        return Take.apply(grad, self.dim, self.index)


def _source_positions(mode: str, n: int, lo: int, hi: int) -> list:
    """For each output position along a dim of size ``n`` padded by (lo, hi), the input position it reads."""
    positions = range(-lo, n + hi)
    if mode == "reflect":
        return [abs(j) if abs(j) < n else 2 * (n - 1) - abs(j) for j in positions]
    if mode == "replicate":
        return [min(max(j, 0), n - 1) for j in positions]
    return [j % n for j in positions]  # circular


_MODES = ("constant", "reflect", "replicate", "circular")


def _check_non_constant(mode: str, input: Tensor, dim: int, lo: int, hi: int, pad_number: int) -> None:
    n = input.shape[dim]
    if mode == "reflect" and (lo >= n or hi >= n):
        raise RuntimeError(
            f"Argument #{pad_number}: Padding size should be less than the corresponding input dimension, but got: "
            f"padding ({lo}, {hi}) at dimension {dim} of input {list(input.shape)}"
        )
    if mode == "replicate" and n == 0:
        raise RuntimeError(f"pad(): replicate padding needs a non-empty input along dimension {dim}, input "
                           f"{list(input.shape)}")
    if mode == "circular" and (lo > n or hi > n):
        raise RuntimeError("Padding value causes wrapping around more than once.")
    if n + lo + hi < 0:
        raise RuntimeError(
            f"The input size {n}, plus negative padding {lo} and {hi} resulted in a negative output size, which is "
            f"invalid. Check dimension {dim} of your input."
        )


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad (or, with negative amounts, crop) the last ``len(pad) // 2`` dims of ``input``.

    ``pad = (left, right, top, bottom, ...)`` starts from the last dim; ``mode`` is 'constant'
    (with ``value``, default 0), 'reflect', 'replicate' or 'circular'."""
    pad = tuple(int(p) for p in pad)
    ndim = input.dim()
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * ndim:
        raise RuntimeError(
            f"Padding length should be less than or equal to two times the input dimension but got padding length "
            f"{len(pad)} and input of dimension {ndim}"
        )
    if mode not in _MODES:
        raise RuntimeError(f"Unrecognised padding mode {mode}")
    pairs = {ndim - 1 - i: (pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)}
    if mode == "constant":
        for d, (lo, hi) in pairs.items():
            n = input.shape[d]
            if n + lo + hi < 0:
                raise RuntimeError(
                    f"The input size {n}, plus negative padding {lo} and {hi} resulted in a negative output size, "
                    f"which is invalid. Check dimension {d} of your input."
                )
        pads = tuple(pairs.get(d, (0, 0)) for d in range(ndim))
        return ConstantPad.apply(input, pads, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    out = input
    for i, (d, (lo, hi)) in enumerate(pairs.items()):
        _check_non_constant(mode, input, d, lo, hi, 4 + 2 * i)
        if lo or hi:
            index = _source_positions(mode, input.shape[d], lo, hi)
            take = Take if mode == "circular" else PadTake
            out = take.apply(out, d, input._storage.backend.asarray(index, dtype=int64))
    return out


__all__ = ["pad"]
