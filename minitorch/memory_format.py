"""Memory formats: the order in which a dense tensor's dims lie in memory (``torch.channels_last`` and friends).

``contiguous_format`` is row-major; ``channels_last`` stores an NCHW tensor as NHWC (the channel dim is
innermost), ``channels_last_3d`` does the same for NCDHW; ``preserve_format`` (the default of clone, the
``*_like`` factories and ``to``) keeps the input's layout. minitorch tensors are strided, so these are
real layouts: ``stride()`` and ``is_contiguous(memory_format=...)`` read them as PyTorch does.
"""

from __future__ import annotations


class memory_format:
    """One of ``torch.contiguous_format``, ``channels_last``, ``channels_last_3d``, ``preserve_format``."""

    __slots__ = ("name", "_rank", "_inner_order")

    def __init__(self, name: str, rank: int | None = None, inner_order: tuple = ()) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "_rank", rank)
        object.__setattr__(self, "_inner_order", inner_order)  # dims from innermost to outermost

    def __setattr__(self, key, value):
        raise AttributeError("memory_format objects are immutable")

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self):
        return self.name


contiguous_format = memory_format("contiguous_format")
legacy_contiguous_format = contiguous_format
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last", 4, (1, 3, 2, 0))
channels_last_3d = memory_format("channels_last_3d", 5, (1, 4, 3, 2, 0))


def checked(op: str, value) -> memory_format:
    """``value`` if it is a memory format, else PyTorch's TypeError naming ``op`` and the argument."""
    if not isinstance(value, memory_format):
        cls = type(value)
        type_name = cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
        raise TypeError(f"{op}(): argument 'memory_format' must be torch.memory_format, not {type_name}")
    return value


def format_strides(fmt: memory_format, shape: tuple) -> tuple | None:
    """The strides a tensor of ``shape`` has in ``fmt`` (None: row-major). A channels-last format needs its rank."""
    if fmt._rank is None:
        return None
    if len(shape) != fmt._rank:
        raise RuntimeError(f"required rank {fmt._rank} tensor to use {fmt.name} format")
    strides = [0] * len(shape)
    expected = 1
    for d in fmt._inner_order:
        strides[d] = expected
        expected *= shape[d]
    return tuple(strides)


def is_in_format(shape: tuple, strides: tuple, fmt: memory_format) -> bool:
    """PyTorch's check for ``is_contiguous(memory_format=fmt)``: dims of size 1 may have any stride."""
    if fmt._rank is None or len(shape) != fmt._rank:
        return False
    expected = 1
    for d in fmt._inner_order:
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


__all__ = ["memory_format", "contiguous_format", "legacy_contiguous_format", "preserve_format", "channels_last",
           "channels_last_3d"]
