"""``repr(tensor)`` in PyTorch's format: aligned columns, 4 decimals or scientific notation,
``...`` summaries above 1000 elements, and dtype/device/grad annotations when they differ."""

from __future__ import annotations

import math

from . import _dtype

THRESHOLD, EDGE_ITEMS, LINE_WIDTH, PRECISION = 1000, 3, 80, 4


class _Formatter:
    """Chooses one format for all elements so columns line up (PyTorch's _Formatter)."""

    def __init__(self, values: list, floating: bool):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        if not floating:
            self.width = max((len(str(v)) for v in values), default=1)
            return
        finite = [v for v in values if math.isfinite(v)]
        self.width = max((len(str(v)) for v in values if not math.isfinite(v)), default=1)
        if not finite:
            return
        self.int_mode = all(v == math.floor(v) for v in finite)
        magnitudes = [abs(v) for v in finite if v != 0]
        if self.int_mode:
            if magnitudes and max(magnitudes) > 1e8:
                self.sci_mode, self.int_mode = True, False
            else:
                self.width = max(self.width, max(len(f"{v:.0f}.") for v in finite))
                return
        if magnitudes:
            big, small = max(magnitudes), min(magnitudes)
            self.sci_mode = big / small > 1000.0 or big > 1e8 or small < 1e-4
        fmt = f"{{:.{PRECISION}e}}" if self.sci_mode else f"{{:.{PRECISION}f}}"
        self.width = max(self.width, max(len(fmt.format(v)) for v in finite))

    def format(self, v) -> str:
        if not self.floating:
            text = str(v)
        elif not math.isfinite(v):
            text = str(v)
        elif self.int_mode:
            text = f"{v:.0f}."
        elif self.sci_mode:
            text = f"{v:.{PRECISION}e}"
        else:
            text = f"{v:.{PRECISION}f}"
        return text.rjust(self.width)


def _summarize(array, summarize: bool):
    """Nested lists of the values to print (edges only when summarizing)."""
    if array.ndim == 0:
        return array.item()
    n = array.shape[0]
    if summarize and n > 2 * EDGE_ITEMS:
        return [_summarize(array[i], summarize) for i in range(EDGE_ITEMS)] + [Ellipsis] + [
            _summarize(array[i], summarize) for i in range(n - EDGE_ITEMS, n)
        ]
    return [_summarize(array[i], summarize) for i in range(n)]


def _flatten(nested):
    if isinstance(nested, list):
        for item in nested:
            yield from _flatten(item)
    elif nested is not Ellipsis:
        yield nested


def _render(nested, fmt: _Formatter, indent: int, ndim: int) -> str:
    if ndim == 1:
        items = ["..." if v is Ellipsis else fmt.format(v) for v in nested]
        per_line = max(1, (LINE_WIDTH - indent) // (fmt.width + 2))
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    separator = "," + "\n" * (ndim - 1) + " " * (indent + 1)
    parts = ["..." if sub is Ellipsis else _render(sub, fmt, indent + 1, ndim - 1) for sub in nested]
    return "[" + separator.join(parts) + "]"


def tensor_repr(t) -> str:
    prefix = "tensor("
    annotations = []
    if t.is_meta:
        body = "..."
    else:
        array = t._storage.backend.to_numpy(t._array)
        summarize = array.size > THRESHOLD
        nested = _summarize(array, summarize)
        floating = t.dtype.is_floating_point
        values = list(_flatten(nested))
        if t.dtype is _dtype.bool:
            values = [bool(v) for v in values]
        fmt = _Formatter([float(v) for v in values] if floating else values, floating)
        if array.ndim == 0:
            body = fmt.format(float(nested) if floating else nested).strip()
        elif array.size == 0:
            body = "[]"
            annotations.append(f"size={tuple(array.shape)}") if array.ndim > 1 else None
        else:
            body = _render(nested, fmt, len(prefix), array.ndim)
    if t.device.type != "cpu":
        annotations.append(f"device='{t.device}'")
    default_shown = (_dtype.get_default_dtype(), _dtype.int64, _dtype.bool)
    if t.is_meta:
        annotations.insert(0, f"size={tuple(t.shape)}")
        annotations.append(f"dtype={t.dtype}")
    elif t.dtype not in default_shown or (t.numel() == 0 and t.dtype is not _dtype.get_default_dtype()):
        annotations.append(f"dtype={t.dtype}")
    if t.grad_fn is not None:
        annotations.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        annotations.append("requires_grad=True")
    return prefix + ", ".join([body] + annotations) + ")"
