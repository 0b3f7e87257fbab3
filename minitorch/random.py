"""Random numbers: Generator objects, the default generators, and the random factories.

Every draw goes through a device's backend random stream (numpy's PCG64 on the CPU, CuPy's XORWOW
on CUDA, shapes only on ``meta``). ``manual_seed`` reseeds the default generator of every device, so
a seeded run is reproducible within minitorch; the numbers differ from PyTorch's (other streams).
"""

from __future__ import annotations

import json
import secrets

from . import _dtype
from ._backends import backend_for
from ._device import CPU, as_device
from ._geometry import broadcast_shapes
from .creation import _dense_order, _shape, check_allocation
from .tensor import Tensor, from_array

_DEFAULT_SEED = 67280421310721
_UINT64 = 0xFFFF_FFFF_FFFF_FFFF


class Generator:
    """A random stream on one device: ``Generator(device='cpu').manual_seed(0)``."""

    def __init__(self, device="cpu"):
        dev = as_device(device)
        self.backend = backend_for(dev)
        self.device = self.backend.normalize(dev)
        self._seed = _DEFAULT_SEED
        self._rng = self.backend.rng(self._seed)

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream from ``seed`` (negative seeds wrap to uint64, as in PyTorch)."""
        if isinstance(seed, bool) or not isinstance(seed, int):
            seed = int(seed)
        if not -(2**63) <= seed <= _UINT64:
            raise RuntimeError(f"Overflow when unpacking long: seed {seed} does not fit in 64 bits")
        self._seed = seed & _UINT64
        self._rng = self.backend.rng(self._seed)
        return self

    def seed(self) -> int:
        """Reseed from the OS's entropy and return the new seed."""
        self.manual_seed(secrets.randbits(63))
        return self._seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Tensor:
        """The stream's state as a uint8 tensor (PyTorch's ByteTensor): JSON of the seed and the
        bit generator's state. ``set_state`` restores it exactly on the CPU."""
        bit_generator = getattr(self._rng, "bit_generator", None)
        state = getattr(bit_generator, "state", None) if bit_generator is not None else None
        if not isinstance(state, dict):
            state = None  # CuPy's streams do not expose their state: set_state then reseeds
        payload = json.dumps({"seed": self._seed, "state": state}).encode()
        cpu = backend_for(CPU)
        array = cpu.xp.frombuffer(payload, dtype=cpu.array_dtype(_dtype.uint8)).copy()
        return from_array(array, cpu, CPU)

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state from ``get_state``. A malformed state raises (TypeError for a non-ByteTensor, as
        PyTorch; RuntimeError otherwise) and leaves the generator unchanged."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype is not _dtype.uint8:
            raise TypeError(f"RNG state must be a torch.ByteTensor, got a tensor of dtype {new_state.dtype}")
        if not new_state.is_contiguous():
            raise RuntimeError("RNG state must be contiguous")
        if new_state.device.type == "meta" or new_state.numel() > _MAX_STATE_BYTES:
            raise RuntimeError(f"Generator.set_state(): invalid RNG state (a {new_state.device.type} tensor of "
                               f"{new_state.numel()} bytes; a state holds at most {_MAX_STATE_BYTES})")
        seed, state = _parse_state(bytes(new_state.cpu().reshape(-1).tolist()))
        rng = self.backend.rng(seed)
        if state is not None:
            bit_generator = getattr(rng, "bit_generator", None)
            try:
                bit_generator.state = state
                restored = bit_generator.state == state  # numpy wraps or ignores some out-of-range fields
            except (ValueError, TypeError, AttributeError, KeyError, OverflowError) as exc:
                raise RuntimeError(f"Generator.set_state(): invalid RNG state ({exc})") from None
            if not restored:
                raise RuntimeError("Generator.set_state(): invalid RNG state (a field is out of range)")
        self._seed, self._rng = seed, rng
        return self

    def __repr__(self) -> str:
        return f"<minitorch.Generator object on {self.device}>"


_MAX_STATE_BYTES = 4096  # get_state's JSON is about 200 bytes: refuse large tensors before decoding them


def _parse_state(payload: bytes) -> tuple:
    """``(seed, bit_generator_state or None)`` from ``get_state``'s JSON, each field type-checked."""
    try:
        state = json.loads(payload.decode(), parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        raise RuntimeError(f"Generator.set_state(): invalid RNG state ({exc})") from None
    if not isinstance(state, dict) or state.keys() != {"seed", "state"}:
        raise RuntimeError("Generator.set_state(): invalid RNG state (expected the keys 'seed' and 'state')")
    seed = state["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= _UINT64:
        raise RuntimeError(f"Generator.set_state(): invalid RNG state (seed {str(seed)[:40]} is not a uint64)")
    if state["state"] is not None and not isinstance(state["state"], dict):
        raise RuntimeError("Generator.set_state(): invalid RNG state (the stream state is not an object)")
    return seed, state["state"]


def _refuse_constant(text: str):
    raise ValueError(f"{text} is not a valid number in an RNG state")


_default_generators: dict[str, Generator] = {}


def _default_generator_for(device) -> Generator:
    """The default Generator of a device type (created on first use)."""
    dev = as_device(device)
    gen = _default_generators.get(dev.type)
    if gen is None:
        gen = _default_generators[dev.type] = Generator(dev)
    return gen


default_generator = _default_generator_for(CPU)


def manual_seed(seed: int) -> Generator:
    """Seed every device's default generator; returns the CPU one (as PyTorch does)."""
    for gen in _default_generators.values():
        gen.manual_seed(seed)
    return default_generator


def seed() -> int:
    """Seed every default generator from the OS's entropy; returns the seed."""
    value = default_generator.seed()
    for gen in _default_generators.values():
        gen.manual_seed(value)
    return value


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    default_generator.set_state(new_state)


# drawing ----------------------------------------------------------------------------------------

# float32/float16 casts of a float64 draw in [0, 1) can round up to 1.0; clamp to the largest value below 1.
_BELOW_ONE = {"float16": 1 - 2**-11, "float32": 1 - 2**-24}


def _generator(generator: Generator | None, device) -> Generator:
    if generator is None:
        return _default_generator_for(device if device is not None else CPU)
    if not isinstance(generator, Generator):
        raise TypeError(f"expected a minitorch.Generator, got {type(generator).__name__}")
    if device is not None and as_device(device).type != generator.device.type:
        raise RuntimeError(
            f"Expected a '{as_device(device).type}' device type for generator but found '{generator.device.type}'"
        )
    return generator


def _wrap(array, gen: Generator, dtype, requires_grad: bool) -> Tensor:
    backend = gen.backend
    t = from_array(array.astype(backend.array_dtype(dtype), copy=False), backend, gen.device)
    return t.requires_grad_(True) if requires_grad else t


def _float_dtype(name: str, dtype) -> _dtype.dtype:
    """Floating draws refuse an integer dtype: NotImplementedError, as PyTorch's missing-kernel error."""
    dtype = dtype or _dtype.get_default_dtype()
    if not dtype.is_floating_point:
        raise NotImplementedError(f"{name}(): expected a floating point dtype, got {dtype} (no "
                                  f"'{_dtype.scalar_type_name(dtype)}' kernel)")
    return dtype


def _uniform(gen: Generator, shape, dtype):
    """Uniform [0, 1) in ``dtype`` as a backend array (never 1.0, even after rounding to float32)."""
    array = gen._rng.random(size=shape).astype(gen.backend.array_dtype(dtype), copy=False)
    below_one = _BELOW_ONE.get(dtype.name)
    return array if below_one is None else gen.backend.xp.minimum(array, below_one)


def _draw_shape(name: str, size, gen: Generator, dtype) -> tuple:
    """The shape of a draw of ``dtype``, checked against the device's memory before drawing."""
    shape = _shape(size, name)
    check_allocation(name, shape, dtype, gen.backend)
    return shape


def _has_data(gen_or_tensor) -> bool:
    device = gen_or_tensor.device
    return device.type != "meta"


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False) -> Tensor:
    """Uniform on [0, 1)."""
    dtype = _float_dtype("rand", dtype)
    gen = _generator(generator, device)
    return _wrap(_uniform(gen, _draw_shape("rand", size, gen, dtype), dtype), gen, dtype, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False) -> Tensor:
    """Standard normal."""
    dtype = _float_dtype("randn", dtype)
    gen = _generator(generator, device)
    return _wrap(gen._rng.standard_normal(size=_draw_shape("randn", size, gen, dtype)), gen, dtype, requires_grad)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False,
            layout=None, pin_memory=False) -> Tensor:
    """Integers uniform on [low, high): ``randint(high, size)`` or ``randint(low, high, size)``."""
    if size is None and isinstance(high, (tuple, list)):
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing 1 required positional argument: 'size'")
    low, high = int(low), int(high)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    dtype = dtype or _dtype.int64
    gen = _generator(generator, device)
    shape = _draw_shape("randint", (size,), gen, dtype)
    return _wrap(gen._rng.integers(low, high, size=shape), gen, dtype, requires_grad)


def randperm(n: int, *, generator=None, dtype=None, device=None, requires_grad=False, layout=None,
             pin_memory=False) -> Tensor:
    """A random permutation of ``0 .. n-1``."""
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    gen = _generator(generator, device)
    check_allocation("randperm", (n,), _dtype.int64, gen.backend)
    rng = gen._rng
    array = rng.permutation(n) if hasattr(rng, "permutation") else gen.backend.xp.argsort(rng.random(size=(n,)))
    return _wrap(array, gen, dtype or _dtype.int64, requires_grad)


def _like(input: Tensor, make, requires_grad: bool) -> Tensor:
    """``make(shape)`` in ``input``'s dense permuted layout (PyTorch's preserve_format: the random values are
    drawn in memory order, so ``rand_like(x.t())`` is transposed as ``x.t()`` is)."""
    order = _dense_order(input)
    if order is None:
        t = make(tuple(input.shape))
    else:
        t = make(tuple(input.shape[d] for d in order))
        inverse = sorted(range(len(order)), key=order.__getitem__)
        t = from_array(t._array.transpose(inverse), t._storage.backend, t._storage.device)
    return t.requires_grad_(True) if requires_grad else t


def rand_like(input: Tensor,
              *, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None) -> Tensor:
    return _like(input, lambda s: rand(s, dtype=dtype or input.dtype, device=device or input.device), requires_grad)


def randn_like(input: Tensor,
               *, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None) -> Tensor:
    return _like(input, lambda s: randn(s, dtype=dtype or input.dtype, device=device or input.device), requires_grad)


def randint_like(input: Tensor, low=0, high=None, *, dtype=None, device=None, requires_grad=False, layout=None,
                 memory_format=None) -> Tensor:
    """``randint_like(x, high)`` or ``randint_like(x, low, high)``."""
    if high is None:
        low, high = 0, low
    return _like(input, lambda s: randint(low, high, s, dtype=dtype or input.dtype, device=device or input.device),
                 requires_grad)


def _operand(name: str, value, gen: Generator):
    """A backend array (or a Python float) for a distribution parameter; checks it sits on ``gen``'s device."""
    if isinstance(value, Tensor):
        if value.device.type != gen.device.type:
            raise RuntimeError(
                f"{name}(): expected the parameter on {gen.device}, but found it on {value.device}"
            )
        return value._array
    return float(value)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False,
           layout=None, pin_memory=False) -> Tensor:
    """Normal samples: ``mean`` and ``std`` are tensors (broadcast together) or floats (then ``size`` is needed)."""
    tensors = [x for x in (mean, std) if isinstance(x, Tensor)]
    if not tensors:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments: with float mean and std, "
                            "size is required")
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        dtype = _float_dtype("normal", dtype)
        gen = _generator(generator, device)
        z = gen._rng.standard_normal(size=_draw_shape("normal", (size,), gen, dtype))
        return _wrap(z * float(std) + float(mean), gen, dtype, requires_grad)
    first = tensors[0]
    dtype = _float_dtype("normal", first.dtype if len(tensors) == 1 else _dtype.promote_types(mean.dtype, std.dtype))
    gen = _generator(generator, first.device)
    mean_a, std_a = _operand("normal", mean, gen), _operand("normal", std, gen)
    if isinstance(std, Tensor) and _has_data(std) and bool((std_a < 0).any()):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    if isinstance(std, float) and std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    shape = broadcast_shapes(*(t.shape for t in tensors))
    z = gen._rng.standard_normal(size=shape).astype(gen.backend.array_dtype(dtype), copy=False)
    return _wrap(z * std_a + mean_a, gen, dtype, requires_grad)


def bernoulli(input: Tensor, p: float | None = None, *, generator=None) -> Tensor:
    """0/1 samples (in ``input``'s dtype) that are 1 with probability ``input`` (or ``p``)."""
    gen = _generator(generator, input.device)
    prob = _operand("bernoulli", input if p is None else p, gen)
    if p is not None and not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    if p is None and _has_data(input) and bool(((prob < 0) | (prob > 1)).any()):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    u = gen._rng.random(size=tuple(input.shape))
    return _wrap(u < prob, gen, input.dtype, False)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *, generator=None) -> Tensor:
    """Category indices drawn from the rows of ``input`` (non-negative weights, not necessarily normalized)."""
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {input.dtype}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    categories = input.shape[-1]
    if not replacement and num_samples > categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    gen = _generator(generator, input.device)
    xp = gen.backend.xp
    weights = input._array.reshape(-1, categories).astype(gen.backend.array_dtype(_dtype.float64))
    rows = weights.shape[0]
    if _has_data(input):
        if bool((~xp.isfinite(weights) | (weights < 0)).any()):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if bool((weights.sum(axis=1) <= 0).any()):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if not replacement and bool(((weights > 0).sum(axis=1) < num_samples).any()):
            raise RuntimeError(
                "invalid multinomial distribution (with replacement=False, not enough non-negative category to sample)"
            )
    if replacement:  # inverse CDF, one row at a time
        cdf = xp.cumsum(weights, axis=1)
        u = gen._rng.random(size=(rows, num_samples)) * cdf[:, -1:]
        samples = xp.stack([xp.searchsorted(cdf[r], u[r], side="right") for r in range(rows)]) if rows else u
        samples = xp.minimum(samples, categories - 1)
    else:  # exponential races (Efraimidis-Spirakis): the num_samples smallest E/w, zero weights never win
        positive = weights > 0
        races = gen._rng.standard_exponential(size=(rows, categories))
        keys = xp.where(positive, races / xp.where(positive, weights, 1.0), float("inf"))
        samples = xp.argsort(keys, axis=1)[:, :num_samples]
    out_shape = (num_samples,) if input.dim() == 1 else (rows, num_samples)
    return _wrap(samples.reshape(out_shape), gen, _dtype.int64, False)


def poisson(input: Tensor, generator=None) -> Tensor:
    """Poisson samples with rates ``input`` (in ``input``'s dtype)."""
    gen = _generator(generator, input.device)
    rate = _operand("poisson", input, gen)
    if _has_data(input) and bool((rate < 0).any()):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return _wrap(gen._rng.poisson(rate, size=tuple(input.shape)), gen, input.dtype, False)


__all__ = [
    "Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
    "rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "normal", "bernoulli",
    "multinomial", "poisson",
]
