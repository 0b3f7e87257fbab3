"""Random numbers: Generator objects, the default generators, and the random factories.

Each device type has a default Generator; ``manual_seed`` reseeds all of them, so a seeded run is
reproducible within minitorch (the streams are numpy's PCG64 / CuPy's XORWOW, not PyTorch's).
"""

from __future__ import annotations

from . import _dtype
from ._device import CPU, as_device
from .backends import backend_for
from .tensor import Tensor, from_array

_DEFAULT_SEED = 67280421310721


class Generator:
    """A random stream on one device: ``Generator(device='cpu').manual_seed(0)``."""

    def __init__(self, device="cpu"):
        dev = as_device(device)
        self.backend = backend_for(dev)
        self.device = self.backend.normalize(dev)
        self._seed = _DEFAULT_SEED
        self._rng = self.backend.rng(self._seed)

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed) & 0xFFFF_FFFF_FFFF_FFFF
        self._rng = self.backend.rng(self._seed)
        return self

    def seed(self) -> int:
        import secrets

        self.manual_seed(secrets.randbits(63))
        return self._seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        state = self._rng.bit_generator.state if hasattr(self._rng, "bit_generator") else None
        return {"seed": self._seed, "state": state}

    def set_state(self, state) -> Generator:
        self._seed = state["seed"]
        self._rng = self.backend.rng(self._seed)
        if state.get("state") is not None:
            self._rng.bit_generator.state = state["state"]
        return self


_default_generators: dict[str, Generator] = {}


def default_generator(device=CPU) -> Generator:
    dev = as_device(device)
    gen = _default_generators.get(dev.type)
    if gen is None:
        gen = _default_generators[dev.type] = Generator(dev)
    return gen


def manual_seed(seed: int) -> Generator:
    """Seed every device's default generator."""
    for dev_type in set(_default_generators) | {"cpu"}:
        default_generator(dev_type).manual_seed(seed)
    return default_generator(CPU)


def seed() -> int:
    return default_generator(CPU).seed()


def initial_seed() -> int:
    return default_generator(CPU).initial_seed()


def get_rng_state():
    return default_generator(CPU).get_state()


def set_rng_state(state) -> None:
    default_generator(CPU).set_state(state)


def _shape(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(int(n) for n in size)


def _draw(draw, size, dtype, device, generator, requires_grad):
    dtype = dtype or _dtype.get_default_dtype()
    gen = generator or default_generator(device if device is not None else CPU)
    if device is not None and as_device(device).type != gen.device.type:
        raise RuntimeError(f"Expected a '{as_device(device).type}' device type for generator but found '{gen.device.type}'")
    backend = gen.backend
    array = draw(gen._rng, backend, _shape(size), dtype)
    t = from_array(array.astype(backend.array_dtype(dtype), copy=False), backend, gen.device)
    return t.requires_grad_(True) if requires_grad else t


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None) -> Tensor:
    """Uniform on [0, 1)."""
    return _draw(lambda rng, b, s, d: rng.random(s), size, dtype, device, generator, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None) -> Tensor:
    """Standard normal."""
    return _draw(lambda rng, b, s, d: rng.standard_normal(s), size, dtype, device, generator, requires_grad)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Integers uniform on [low, high)."""
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    return _draw(lambda rng, b, s, d: rng.integers(low, high, size=s), (size,), dtype or _dtype.int64, device, generator, requires_grad)


def randperm(n: int, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _draw(lambda rng, b, s, d: rng.permutation(n), ((n,),), dtype or _dtype.int64, device, generator, requires_grad)


def rand_like(input: Tensor, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return rand(input.shape, dtype=dtype or input.dtype, device=device or input.device, requires_grad=requires_grad)


def randn_like(input: Tensor, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return randn(input.shape, dtype=dtype or input.dtype, device=device or input.device, requires_grad=requires_grad)


def randint_like(input: Tensor, low, high=None, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return randint(low, high, input.shape, dtype=dtype or input.dtype, device=device or input.device)


__all__ = [
    "Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
    "rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like",
]
