"""``repr(tensor)`` in PyTorch's format (a port of ``torch/_tensor_str.py``).

One formatter is chosen for all printed elements so columns line up: integers as they are, floats
with ``precision`` decimals, or in scientific notation when the magnitudes span more than three
orders or leave [1e-4, 1e8]. Tensors above ``threshold`` elements print only ``edgeitems`` at each
edge. dtype, device and autograd state are appended when they differ from the defaults.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator
from typing import Any

from . import _dtype, _trace_state
from .autograd import forward_ad


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set how tensors print (PyTorch's options; ``sci_mode=None`` means automatic)."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions(): unknown profile {profile!r}; expected one of {list(_PROFILES)}")
        for key, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, key, value)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current print options as a dict (keys as in ``set_printoptions``)."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs) -> Iterator[None]:
    """``with printoptions(precision=2): ...`` sets options for the block, then restores them."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """Chooses one format for all elements so columns line up (PyTorch's ``_Formatter``)."""

    def __init__(self, values: list, floating: bool):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        precision = PRINT_OPTS.precision
        if not floating:
            self.max_width = max((len(str(v)) for v in values), default=1)
            return
        finite = [v for v in values if math.isfinite(v) and v != 0]
        if not finite:
            return
        magnitudes = [abs(v) for v in finite]
        big, small = max(magnitudes), min(magnitudes)
        self.int_mode = all(v == math.ceil(v) for v in finite)
        if self.int_mode:
            if big / small > 1000.0 or big > 1.0e8:
                self.sci_mode = True
                self.max_width = max(len(f"{v:.{precision}e}") for v in finite)
            else:
                self.max_width = max(len(f"{v:.0f}") + 1 for v in finite)
        elif big / small > 1000.0 or big > 1.0e8 or small < 1.0e-4:
            self.sci_mode = True
            self.max_width = max(len(f"{v:.{precision}e}") for v in finite)
        else:
            self.max_width = max(len(f"{v:.{precision}f}") for v in finite)
        if PRINT_OPTS.sci_mode is not None:
            self.sci_mode = PRINT_OPTS.sci_mode

    def format(self, value) -> str:
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{PRINT_OPTS.precision}f}"
        return (self.max_width - len(text)) * " " + text


class _ComplexFormatter:
    """PyTorch's complex layout: the real parts and the imaginary parts each get a _Formatter of their own."""

    def __init__(self, values: list):
        self.real = _Formatter([v.real for v in values], True)
        self.imag = _Formatter([v.imag for v in values], True)
        self.max_width = self.real.max_width + self.imag.max_width + 1

    def format(self, value) -> str:
        imag = (self.imag.format(value.imag) + "j").lstrip()
        return self.real.format(value.real) + ("" if imag[0] in "+-" else "+") + imag


def _values(array, summarize: bool):
    """Nested Python lists of the values to print; ``...`` marks the summarized middle of a dim."""
    if array.ndim == 0:
        return array.item()
    n, edge = array.shape[0], PRINT_OPTS.edgeitems
    if summarize and array.ndim == 1 and not edge:
        return [Ellipsis]
    if summarize and n > 2 * edge:
        head = [_values(array[i], summarize) for i in range(edge)]
        tail = [_values(array[i], summarize) for i in range(n - edge, n)]
        return head + [Ellipsis] + tail
    if array.ndim == 1:
        return array.tolist()
    return [_values(array[i], summarize) for i in range(n)]


def _flatten(nested) -> Iterator:
    if isinstance(nested, list):
        for item in nested:
            yield from _flatten(item)
    elif nested is not Ellipsis:
        yield nested


def _vector_str(values: list, indent: int, fmt: _Formatter) -> str:
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / (fmt.max_width + 2))))
    if values == [Ellipsis]:
        items = ["..."]
    else:
        items = [" ..." if v is Ellipsis else fmt.format(v) for v in values]
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(values, indent: int, fmt: _Formatter, ndim: int) -> str:
    if ndim == 0:
        return fmt.format(values)
    if ndim == 1:
        return _vector_str(values, indent, fmt)
    parts = ["..." if sub is Ellipsis else _nested_str(sub, indent + 1, fmt, ndim - 1) for sub in values]
    return "[" + ("," + "\n" * (ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _tensor_str(t, indent: int) -> str:
    """The bracketed values of a tensor with at least one element."""
    array = t._storage.backend.to_numpy(t._array)
    summarize = array.size > PRINT_OPTS.threshold
    nested = _values(array, summarize)
    floating = t.dtype.is_floating_point
    values = list(_flatten(nested)) if array.ndim else [nested]
    if t.dtype.is_complex:
        fmt = _ComplexFormatter([complex(v) for v in values])
    else:
        fmt = _Formatter([float(v) for v in values] if floating else values, floating)
    return _nested_str(nested, indent, fmt, array.ndim)


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """Append ``, suffix`` items, wrapping onto a new line when the line would pass ``linewidth``."""
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t, tensor_contents: str | None = None) -> str:
    """``repr(t)``: ``tensor([...], dtype=..., device=..., grad_fn=<...>)`` as PyTorch prints it."""
    if _trace_state.tracer is not None:
        _trace_state.data_read(t, "printing a tensor")
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    default_dtype = _dtype.get_default_dtype()
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    if t.is_quantized:
        return _quantized_repr(t, prefix, suffixes, tensor_contents)
    if t.is_meta:
        suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype is not default_dtype:
            suffixes.append(f"dtype={t.dtype}")
        body = "..."
    elif t.numel() == 0:
        if t.dim() != 1:
            suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype is not default_dtype:
            suffixes.append(f"dtype={t.dtype}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype not in (default_dtype, _dtype.int64, _dtype.bool, _dtype.default_complex_dtype()):
            suffixes.append(f"dtype={t.dtype}")
        body = _tensor_str(t if t._names is None else _unnamed(t), indent)
    if tensor_contents is not None:
        body = tensor_contents
    _autograd_suffix(t, suffixes)
    if t._names is not None:
        suffixes.append(f"names={t._names}")
    if forward_ad.state.level >= 0:  # a dual tensor shows its tangent, as PyTorch's
        tangent = forward_ad.tangent_of(t)
        if tangent is not None:
            suffixes.append(f"tangent={tangent}")
    return _add_suffixes(prefix + body, suffixes, indent)


def _unnamed(t):
    """``t``'s elements without its names (printing them runs ops that do not take named tensors)."""
    alias = t._alias()
    alias._names = None
    return alias


def _autograd_suffix(t, suffixes: list[str]) -> None:
    """``grad_fn=<...>`` or ``requires_grad=True``. A view whose history can't be rebuilt any more (its base
    was written after it was made under no_grad, or by split) shows ``grad_fn=<Invalid>``, as in PyTorch."""
    try:
        node = t.grad_fn
    except RuntimeError:
        suffixes.append("grad_fn=<Invalid>")
        return
    if node is not None:
        suffixes.append(f"grad_fn=<{node.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")


def _quantized_repr(t, prefix: str, suffixes: list[str], tensor_contents: str | None) -> str:
    """PyTorch's format: the dequantized values, then size, dtype, scheme and quantization parameters."""
    indent = len(prefix)
    suffixes.append(f"size={tuple(t.shape)}")
    suffixes.append(f"dtype={t.dtype}")
    suffixes.append(f"quantization_scheme={t.qscheme()}")
    if t.qscheme().name == "per_tensor_affine":
        suffixes.append(f"scale={t.q_scale()}")
        suffixes.append(f"zero_point={t.q_zero_point()}")
    else:
        suffixes.append(f"scale={t.q_per_channel_scales()!r}")
        suffixes.append(f"zero_point={t.q_per_channel_zero_points()!r}")
        suffixes.append(f"axis={t.q_per_channel_axis()}")
    values = t.detach().dequantize()
    if tensor_contents is not None:
        body = tensor_contents
    elif t.numel() == 0:
        body = "[]"
    else:
        body = _tensor_str(values, indent)
    _autograd_suffix(t, suffixes)
    if forward_ad.state.level >= 0:  # a dual tensor shows its tangent, as PyTorch's
        tangent = forward_ad.tangent_of(t)
        if tangent is not None:
            suffixes.append(f"tangent={tangent}")
    return _add_suffixes(prefix + body, suffixes, indent)


__all__ = ["set_printoptions", "get_printoptions", "printoptions"]
