"""Random numbers: Generator objects, the default generators, seeding and state, and the random factories.

Every draw goes through a device's backend stream. On the CPU that stream is PyTorch's own generator
(``_backends/torch_mt.py``: the same Mersenne Twister and the same transformations), so after
``manual_seed(s)`` the factories here and the in-place samplers (``uniform_``, ``normal_``, ...,
``sampling.py``) give PyTorch's numbers, and ``get_rng_state()`` is PyTorch's 5056-byte state. CUDA
uses CuPy's XORWOW (other numbers than PyTorch's Philox) and ``meta`` draws shapes only.
"""

from __future__ import annotations

import contextlib
import math
import operator
import secrets

from . import _dtype
from ._backends import backend_for
from ._device import CPU, as_device
from ._geometry import broadcast_shapes
from ._names import set_names
from .creation import _dense_order, _shape, check_allocation
from .tensor import Tensor, from_array

_DEFAULT_SEED = 67280421310721  # PyTorch's default CPU seed
_UINT64 = 0xFFFF_FFFF_FFFF_FFFF
_MAX_CATEGORIES = 2**24  # multinomial's indices go through float32


class Generator:
    """A random stream on one device: ``Generator(device='cpu').manual_seed(0)``."""

    def __init__(self, device="cpu"):
        dev = as_device(device)
        self.backend = backend_for(dev)
        self.device = self.backend.normalize(dev)
        self._rng = self.backend.rng(_DEFAULT_SEED)

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream from ``seed`` (negative seeds wrap to uint64, as in PyTorch)."""
        try:
            seed = operator.index(seed)
        except TypeError:
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}") from None
        self._rng = self.backend.rng(_checked_seed(seed))
        return self

    def seed(self) -> int:
        """Reseed from the OS's entropy and return the new seed."""
        value = secrets.randbits(64)
        self.manual_seed(value)
        return value

    def initial_seed(self) -> int:
        return self._rng.initial_seed

    def _draws_marker(self):
        """A value that changes whenever this generator draws or is reseeded (vmap's randomness="error" check
        compares it before and after the call)."""
        marker = getattr(self._rng, "draws_marker", None)
        return (id(self._rng), marker()) if marker is not None else self._rng.get_state()

    def get_state(self) -> Tensor:
        """The stream's state as a uint8 tensor: PyTorch's ``CPUGeneratorImplState`` bytes on the CPU."""
        payload = self._rng.get_state()
        cpu = backend_for(CPU)
        array = cpu.xp.frombuffer(payload, dtype=cpu.array_dtype(_dtype.uint8)).copy()
        return from_array(array, cpu, CPU)

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state from ``get_state`` (PyTorch's exceptions for a wrong type, size or content)."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype is not _dtype.uint8 or new_state.device.type != "cpu":
            raise TypeError("RNG state must be a torch.ByteTensor")
        if not new_state.is_contiguous():
            raise RuntimeError("RNG state must be contiguous")
        try:
            self._rng.set_state(new_state._array.reshape(-1).tobytes())
        except ValueError as exc:
            raise RuntimeError(str(exc)) from None
        return self

    def clone_state(self) -> Generator:
        """A new Generator on the same device, continuing from this one's current state."""
        return Generator(self.device).set_state(self.get_state())

    def __reduce__(self):  # pickle and deepcopy keep the stream's position, as PyTorch's (the state as bytes)
        return Generator, (str(self.device),), (self.initial_seed(), None, self._rng.get_state())

    def __setstate__(self, state) -> None:
        try:
            self._rng.set_state(bytes(state[2]))
        except ValueError as exc:
            raise RuntimeError(str(exc)) from None

    def __repr__(self) -> str:
        return f"<minitorch.Generator object on {self.device}>"


def _checked_seed(seed) -> int:
    seed = int(seed)
    if not -(2**63) <= seed <= _UINT64:
        raise ValueError("Overflow when unpacking long long")
    return seed & _UINT64


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
    seed = _checked_seed(seed)
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


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng", _devices_kw: str = "devices",
             device_type: str = "cuda"):
    """Run the block with the default generators' states restored afterwards (CPU, and ``device_type``'s
    generator where one was used)."""
    if not enabled:
        yield
        return
    saved = [(gen, gen.get_state()) for kind, gen in _default_generators.items()
             if kind in ("cpu", as_device(device_type).type)]
    try:
        yield
    finally:
        for gen, state in saved:
            gen.set_state(state)


# drawing ----------------------------------------------------------------------------------------


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


def _wrap(array, gen: Generator, shape, dtype, requires_grad: bool = False) -> Tensor:
    backend = gen.backend
    t = from_array(array.astype(backend.array_dtype(dtype), copy=False).reshape(shape), backend, gen.device)
    return t.requires_grad_(True) if requires_grad else t


def _float_dtype(name: str, dtype) -> _dtype.dtype:
    """Floating draws refuse an integer dtype: NotImplementedError, as PyTorch's missing-kernel error."""
    dtype = dtype or _dtype.get_default_dtype()
    if not dtype.is_floating_point:
        raise NotImplementedError(f"{name}(): expected a floating point dtype, got {dtype} (no "
                                  f"'{_dtype.scalar_type_name(dtype)}' kernel)")
    return dtype


def _draw_shape(name: str, size, gen: Generator, dtype) -> tuple:
    """The shape of a draw of ``dtype``, checked against the device's memory before drawing."""
    shape = _shape(size, name)
    check_allocation(name, shape, dtype, gen.backend)
    return shape


def _has_data(t) -> bool:
    return t.device.type != "meta"


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False,
        names=None) -> Tensor:
    """Uniform on [0, 1)."""
    dtype = _float_dtype("rand", dtype)
    gen = _generator(generator, device)
    shape = _draw_shape("rand", size, gen, dtype)
    out = _wrap(gen._rng.uniform(math.prod(shape), gen.backend.array_dtype(dtype)), gen, shape, dtype, requires_grad)
    return out if names is None else set_names(out, names)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False,
        names=None) -> Tensor:
    """Standard normal."""
    dtype = _float_dtype("randn", dtype)
    gen = _generator(generator, device)
    shape = _draw_shape("randn", size, gen, dtype)
    out = _wrap(gen._rng.normal(math.prod(shape), gen.backend.array_dtype(dtype)), gen, shape, dtype, requires_grad)
    return out if names is None else set_names(out, names)


def check_random_bounds(low: int, high: int, dtype) -> None:
    """``random_(low, high)``'s checks: a non-empty range whose values the dtype holds."""
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if dtype.is_floating_point or dtype is _dtype.bool:
        return
    bits = dtype.itemsize * 8
    lowest, highest = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if dtype.is_signed else (0, 2**bits - 1)
    name = _C_TYPE_NAMES.get(dtype.name, dtype.name)
    if not lowest <= low <= highest:
        raise RuntimeError(f"from is out of bounds for {name}")
    if not lowest <= high - 1 <= highest:
        raise RuntimeError(f"to - 1 is out of bounds for {name}")


_C_TYPE_NAMES = {"uint8": "unsigned char", "int8": "signed char", "int16": "short", "int32": "int", "int64": "long"}


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
    dtype = dtype or _dtype.int64
    check_random_bounds(low, high, dtype)
    gen = _generator(generator, device)
    shape = _draw_shape("randint", (size,), gen, dtype)
    return _wrap(gen._rng.random_from_to(math.prod(shape), low, high), gen, shape, dtype, requires_grad)


def randperm(n: int, *, generator=None, dtype=None, device=None, requires_grad=False, layout=None,
             pin_memory=False) -> Tensor:
    """A random permutation of ``0 .. n-1`` (PyTorch's Fisher-Yates, swap by swap)."""
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    gen = _generator(generator, device)
    check_allocation("randperm", (n,), _dtype.int64, gen.backend)
    return _wrap(gen._rng.randperm(n), gen, (n,), dtype or _dtype.int64, requires_grad)


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


def rand_like(input: Tensor, *, generator=None, dtype=None, device=None, requires_grad=False, layout=None,
              memory_format=None) -> Tensor:
    return _like(input, lambda s: rand(s, dtype=dtype or input.dtype, device=device or input.device,
                                       generator=generator), requires_grad)


def randn_like(input: Tensor, *, generator=None, dtype=None, device=None, requires_grad=False, layout=None,
               memory_format=None) -> Tensor:
    return _like(input, lambda s: randn(s, dtype=dtype or input.dtype, device=device or input.device,
                                        generator=generator), requires_grad)


def randint_like(input: Tensor, low=0, high=None, *, generator=None, dtype=None, device=None, requires_grad=False,
                 layout=None, memory_format=None) -> Tensor:
    """``randint_like(x, high)`` or ``randint_like(x, low, high)``."""
    if high is None:
        low, high = 0, low
    return _like(input, lambda s: randint(low, high, s, dtype=dtype or input.dtype, device=device or input.device,
                                          generator=generator), requires_grad)


def _on_device(name: str, value: Tensor, gen: Generator):
    if value.device.type != gen.device.type:
        raise RuntimeError(f"{name}(): expected the parameter on {gen.device}, but found it on {value.device}")
    return value._array


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False,
           layout=None, pin_memory=False) -> Tensor:
    """Normal samples: ``mean`` and ``std`` are tensors (broadcast together) or floats (then ``size`` is needed).

    As PyTorch: standard normals ``z`` for the output, then ``z * std + mean`` with tensor parameters (two
    roundings; the dtype is ``mean``'s, else ``std``'s), or PyTorch's fused ``normal_(mean, std)``."""
    mean_is_tensor, std_is_tensor = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mean_is_tensor and not std_is_tensor:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments: with float mean and std, "
                            "size is required")
        _check_std(std)
        dtype = _float_dtype("normal", dtype)
        gen = _generator(generator, device)
        shape = _draw_shape("normal", (size,), gen, dtype)
        array = gen._rng.normal(math.prod(shape), gen.backend.array_dtype(dtype), float(mean), float(std))
        return _wrap(array, gen, shape, dtype, requires_grad)
    first = mean if mean_is_tensor else std
    dtype = _float_dtype("normal", first.dtype)
    gen = _generator(generator, first.device)
    if std_is_tensor and _has_data(std) and bool((_on_device("normal", std, gen) < 0).any()):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    if not std_is_tensor:
        _check_std(std)
    shape = broadcast_shapes(*(t.shape for t in (mean, std) if isinstance(t, Tensor)))
    array_dtype = gen.backend.array_dtype(dtype)
    z = gen._rng.normal(math.prod(shape), array_dtype, 0.0, 1.0 if std_is_tensor else float(std)).reshape(shape)
    if std_is_tensor:  # in-place mul_/add_: computed in the promoted dtype, rounded to the output's
        z = (z * _on_device("normal", std, gen)).astype(array_dtype, copy=False)
    z = (z + (_on_device("normal", mean, gen) if mean_is_tensor else array_dtype.type(mean))).astype(array_dtype)
    return _wrap(z, gen, shape, dtype, requires_grad)


def _check_std(std) -> None:
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *, generator=None) -> Tensor:
    """Category indices drawn from the rows of ``input`` (non-negative weights, not necessarily normalized),
    by PyTorch's algorithms: the top ``num_samples`` of ``input / Exp(1)`` without replacement (or for one
    sample), a binary search of the normalised running sum with replacement."""
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_dtype.scalar_type_name(input.dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    categories = input.shape[-1]
    if not replacement and num_samples > categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if categories > _MAX_CATEGORIES:
        raise RuntimeError("number of categories cannot exceed 2^24")
    gen = _generator(generator, input.device)
    xp = gen.backend.xp
    weights = _on_device("multinomial", input, gen).reshape(-1, categories)
    if _has_data(input):
        _check_weights(xp, weights, fast_path=not replacement or num_samples == 1)
    samples = gen._rng.multinomial(weights, num_samples, replacement)
    out_shape = (num_samples,) if input.dim() == 1 else (weights.shape[0], num_samples)
    return _wrap(samples, gen, out_shape, _dtype.int64)


def _check_weights(xp, weights, fast_path: bool) -> None:
    """PyTorch's checks, whose messages differ between its two algorithms."""
    if weights.size == 0:
        return
    if fast_path:
        if not bool((weights.max() < math.inf) & (weights.min() >= 0)):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    else:
        if bool((weights < 0).any()):
            raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        if not bool(xp.isfinite(weights).all()):
            raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
    if bool((weights.sum(axis=1) <= 0).any()):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def poisson(input: Tensor, generator=None) -> Tensor:
    """Poisson samples with rates ``input`` (in ``input``'s dtype), PyTorch's sampler element by element."""
    gen = _generator(generator, input.device)
    rate = _on_device("poisson", input, gen)
    if _has_data(input) and not bool((rate >= 0).all()):  # NaN too
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return _wrap(gen._rng.poisson(rate.reshape(-1)), gen, tuple(input.shape), input.dtype)


def binomial(count: Tensor, prob: Tensor, generator=None) -> Tensor:
    """Binomial(count, prob) samples in ``count``'s dtype, PyTorch's sampler element by element (BTRS from
    ``count * prob >= 10``, inversion below): on the CPU generator, seeded samples are PyTorch's numbers."""
    for name, value in (("count", count), ("prob", prob)):
        if not isinstance(value, Tensor):
            raise TypeError(f"binomial(): argument '{name}' must be Tensor, not {type(value).__name__}")
        if not value.dtype.is_floating_point:
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{_dtype.scalar_type_name(value.dtype)}")
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {_dtype.scalar_type_name(prob.dtype)} but expected "
                           f"{_dtype.scalar_type_name(count.dtype)}")
    if count.dtype not in (_dtype.float32, _dtype.float64):
        raise NotImplementedError(f'"binomial_cpu" not implemented for \'{_dtype.scalar_type_name(count.dtype)}\'')
    gen = _generator(generator, count.device)
    shape = broadcast_shapes(tuple(count.shape), tuple(prob.shape))
    xp = gen.backend.xp
    counts = xp.broadcast_to(_on_device("binomial", count, gen), shape).reshape(-1)
    probs = xp.broadcast_to(_on_device("binomial", prob, gen), shape).reshape(-1)
    draws = gen._rng.binomial(counts, probs, count.dtype is _dtype.float32)
    return _wrap(draws, gen, shape, count.dtype)


def standard_gamma_draws(concentration: Tensor, generator=None) -> Tensor:
    """Gamma(concentration, 1) draws, in float64, made as PyTorch's sampler makes them for ``concentration``'s
    dtype (on the CPU its ``sample_gamma``, element by element, so the numbers are PyTorch's). Not clamped and
    not differentiable: ``torch._standard_gamma`` (minitorch.distributions) adds both."""
    gen = _generator(generator, concentration.device)
    alpha = _on_device("_standard_gamma", concentration, gen)
    draws = gen._rng.standard_gamma(alpha.reshape(-1), concentration.dtype is _dtype.float32)
    return _wrap(draws, gen, tuple(concentration.shape), _dtype.float64)



__all__ = [
    "Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
    "fork_rng", "rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "normal",
    "multinomial", "poisson", "binomial",
]
