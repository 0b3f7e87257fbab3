"""In-place samplers (``uniform_``, ``normal_``, ``bernoulli_``, ``random_``, ``exponential_``, ``geometric_``,
``log_normal_``, ``cauchy_``) and ``torch.bernoulli``.

Each draws its values from the generator in PyTorch's iteration order (memory order, outermost dim first)
and writes them with ``copy_``, so autograd sees an ordinary in-place write. With PyTorch's CPU generator
(``_backends/torch_mt.py``) the values are PyTorch's; ``normal_`` takes PyTorch's serial path (one cached
sample carried between calls) below 16 elements or on a non-contiguous tensor, as PyTorch does.
"""

from __future__ import annotations

from . import _dtype, _trace_state
from .ops.inplace import copy_
from .random import Generator, _generator, _has_data, check_random_bounds
from .tensor import Tensor, from_array

_MANTISSA_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def _iteration_order(t: Tensor) -> list:
    """The dims from outermost to innermost in memory (C order for a contiguous tensor)."""
    strides = t.stride()
    return sorted(range(t.dim()), key=lambda d: -strides[d]) if not t.is_contiguous() else list(range(t.dim()))


def _fill(self: Tensor, generator: Generator | None, draw, replayable: bool = True) -> Tensor:
    """``self`` overwritten with ``draw(stream, n)``'s values, laid out in iteration order. ``replayable``: the
    draw depends only on Python numbers, so a compiled plan may draw it again at each call (_trace_state)."""
    gen = _generator(generator, self.device)
    n = self.numel()
    if n == 0:
        return self
    order = _iteration_order(self)
    shape = tuple(self.shape[d] for d in order)
    values = _values(gen, draw, n, self.dtype, shape, order)
    if _trace_state.tracer is not None and replayable and generator is None and not self.requires_grad:
        device, dtype = self.device, self.dtype
        return _trace_state.random_fill(  # a draw a compiled plan replays from the default generator
            self, lambda: _values(_generator(None, device), draw, n, dtype, shape, order),
            lambda: copy_(self, from_array(values, gen.backend, gen.device)))
    return copy_(self, from_array(values, gen.backend, gen.device))


def _values(gen: Generator, draw, n: int, dtype, shape: tuple, order: list):
    """``n`` values from ``gen``'s stream in ``dtype``, as an array of ``self``'s shape in its iteration order."""
    backend = gen.backend
    state = backend.quiet_fp_state  # a cauchy_ draw beyond half's range is inf, silently, as in PyTorch
    token = state[0].set(state[1]) if state is not None else None
    try:
        values = draw(gen._rng, n)
        if dtype.is_floating_point and dtype.itemsize == 2:  # PyTorch rounds a double to half via float
            values = values.astype(backend.array_dtype(_dtype.float32), copy=False)
        values = values.astype(backend.array_dtype(dtype), copy=False)
    finally:
        if state is not None:
            state[0].reset(token)
    return values.reshape(shape).transpose(sorted(range(len(order)), key=order.__getitem__))


def _array_dtype(self: Tensor):
    return _generator(None, self.device).backend.array_dtype(self.dtype)


def _no_other_keywords(name: str, kwargs: dict) -> None:
    if kwargs:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")


def _require_float(self: Tensor, kernel: str) -> None:
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.scalar_type_name(self.dtype)}\'')


def uniform_(self: Tensor, from_: float = 0.0, to: float = 1.0, *, generator=None, **kwargs) -> Tensor:
    """Values uniform on [from, to): ``u * (to - from) + from``, one fused multiply-add in the dtype."""
    from_, to = kwargs.pop("from", from_), kwargs.pop("to", to)
    _no_other_keywords("uniform_", kwargs)
    _require_float(self, "check_uniform_bounds")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_} > to={to}")
    dtype = _array_dtype(self)
    return _fill(self, generator, lambda s, n: s.uniform(n, dtype, float(from_), float(to)))


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """Values from N(mean, std**2)."""
    _require_float(self, "normal_kernel_cpu")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    dtype, contiguous = _array_dtype(self), self.is_contiguous()
    return _fill(self, generator, lambda s, n: s.normal(n, dtype, float(mean), float(std), contiguous))


def bernoulli_(self: Tensor, p=0.5, *, generator=None) -> Tensor:
    """1 with probability ``p`` (a number, or a tensor broadcast to ``self``), else 0."""
    if isinstance(p, Tensor):
        if _has_data(p) and bool(((p._array < 0) | (p._array > 1)).any()):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
        expanded = p.to(self.device).expand(self.shape)
        order = _iteration_order(self)
        flat = expanded._array.transpose(order).reshape(-1)
        return _fill(self, generator, lambda s, n: s.bernoulli_tensor(flat), replayable=False)
    p = float(p)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    return _fill(self, generator, lambda s, n: s.bernoulli_scalar(n, p))


def bernoulli(input: Tensor, p: float | None = None, *, generator=None) -> Tensor:
    """0/1 samples (in ``input``'s dtype) that are 1 with probability ``input`` (or ``p``)."""
    out = input.new_empty(tuple(input.shape))  # contiguous, as PyTorch's (drawn in row-major order)
    return bernoulli_(out, input if p is None else p, generator=generator)


def random_(self: Tensor, *args, generator=None, **kwargs) -> Tensor:
    """``random_()``: integers on [0, 2**mantissa or max]; ``random_(to)``: on [0, to);
    ``random_(from, to)``: on [from, to) (``to=None``: up to the dtype's largest value)."""
    if len(args) > 2:
        raise TypeError(f"random_() takes at most 2 positional arguments (from, to), got {len(args)}")
    if not args and not kwargs:
        dtype = _array_dtype(self)
        return _fill(self, generator, lambda s, n: s.random_bits(n, dtype))
    if len(args) == 1 and not kwargs:
        from_, to = 0, args[0]
    else:
        _no_other_keywords("random_", {k: v for k, v in kwargs.items() if k not in ("from", "to")})
        bound = dict(zip(("from", "to"), args), **kwargs)
        from_, to = bound.get("from", 0), bound.get("to")
    if to is None:
        to = _largest(self.dtype) + 1
    low, high = int(from_), int(to)
    check_random_bounds(low, high, self.dtype)
    return _fill(self, generator, lambda s, n: s.random_from_to(n, low, high))


def _largest(dtype) -> int:
    if dtype.is_floating_point:
        return 2 ** _MANTISSA_DIGITS[dtype.name]
    if dtype is _dtype.bool:
        return 1
    bits = dtype.itemsize * 8 - (1 if dtype.is_signed else 0)
    return 2**bits - 1


def exponential_(self: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    """Values from Exp(lambd): ``-log1p(-u) / lambd``."""
    _require_float(self, "exponential_cpu")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    dtype = _array_dtype(self)
    return _fill(self, generator, lambda s, n: s.exponential(n, dtype, float(lambd)))


def geometric_(self: Tensor, p: float, *, generator=None) -> Tensor:
    """The number of Bernoulli(p) trials up to the first success: ``ceil(log(u) / log1p(-p))``."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    return _fill(self, generator, lambda s, n: s.geometric(n, float(p)))


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
    """``exp`` of N(mean, std**2) values (PyTorch's serial normal, with its cached sample)."""
    _require_float(self, "log_normal_cpu")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    return _fill(self, generator, lambda s, n: s.log_normal(n, float(mean), float(std)))


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    """Values from Cauchy(median, sigma): ``median + sigma * tan(pi * (u - 0.5))``."""
    _require_float(self, "cauchy_cpu")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    return _fill(self, generator, lambda s, n: s.cauchy(n, float(median), float(sigma)))


__all__ = ["bernoulli"]
