"""torch.func.vmap with batching rules: ``func`` runs once, on BatchedTensors (batched.py).

Each call of the vmapped function opens a new *level*: its inputs are wrapped with their ``in_dims`` as
the batch dim, every op inside runs once on the whole batch through its batching rule
(batching_rules.py), and the outputs are unwrapped with the batch dim moved to ``out_dims``. Nested
vmaps open higher levels; an input batched at an outer level only is, for the inner vmap, unbatched.

What falls back to a loop over the samples (docs/func.md lists it): ops without a batching rule (one
call per sample for that op only, reported by ``vmap_fallback_ops()``), and ``randomness="different"``
when ``func`` draws random numbers (minitorch's random factories have no batching rule: ``func`` is then
called again, once per sample, from the same generator state).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from ..ops.concat import cat
from ..ops.shape import stack
from ..random import default_generator, get_rng_state, set_rng_state
from ..tensor import Tensor
from . import batching_rules, nn_batching_rules  # noqa: F401 - register the rules
from ._pytree import broadcast_prefix, spec_str, tree_flatten, tree_unflatten
from .batched import unwrap, wrap

__all__ = ["vmap"]

# (level, batch size) of the vmaps running now, outermost first; each level's randomness flag
ACTIVE: list[tuple[int, int]] = []
RANDOMNESS: dict[int, str] = {}
_LEVELS = [0]  # the last level handed out


def _name(func) -> str:
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return getattr(func, "__name__", repr(func))


def _flat_in_dims(func, in_dims, args: tuple) -> list:
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                         "trying to vmap over a function with no inputs. The latter is unsupported.")
    flat = broadcast_prefix(in_dims, args)
    if flat is None:
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                         f"structure of `inputs`. in_dims has structure {spec_str(tree_flatten(in_dims)[1])} but "
                         f"inputs has structure {spec_str(tree_flatten(args)[1])}.")
    for in_dim, arg in zip(flat, tree_flatten(args)[0]):
        if in_dim is None:
            continue
        if not isinstance(in_dim, int):
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an "
                             "input but in_dim must be either an integer dimension or None.")
        if not isinstance(arg, Tensor):
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an "
                             f"input but the input is of type {type(arg)}. We cannot vmap over non-Tensor "
                             "arguments, please use None as the respective in_dim")
        if not -arg.dim() <= in_dim < arg.dim():
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for some "
                             f"input, but that input is a Tensor of dimensionality {arg.dim()} so expected in_dim "
                             f"to satisfy -{arg.dim()} <= in_dim < {arg.dim()}.")
    return [d if d is None or d >= 0 else d + a.dim() for d, a in zip(flat, tree_flatten(args)[0])]


def _batch_size(flat_in_dims: list, flat_args: list) -> int:
    sizes = [arg.size(d) for d, arg in zip(flat_in_dims, flat_args) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0]


def _flat_out_dims(func, out_dims, output, spec) -> list:
    flat = broadcast_prefix(out_dims, output)
    if flat is None:
        if isinstance(out_dims, tuple) and len(out_dims) == 1 and spec is None:
            return list(out_dims)
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with "
                         f"the structure of `outputs`. out_dims has structure {spec_str(tree_flatten(out_dims)[1])}"
                         f" but outputs has structure {spec_str(spec)}.")
    return flat


def _unwrap_output(func, out_dims, x, out_dim, level: int, size: int):
    """One output leaf with this level's batch dim at ``out_dim`` (an unbatched tensor is expanded)."""
    name = _name(func)
    value, bdim = unwrap(x, level)
    if out_dim is None:
        if bdim is not None:
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
        return x
    if not isinstance(out_dim, int):
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a python "
                         "collection of ints representing where in the outputs the vmapped dimension should appear.")
    if not isinstance(x, Tensor):
        raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(x)}. Did you mean to "
                         "set out_dims= to None for output?")
    if bdim is None:
        dim = out_dim if out_dim >= 0 else out_dim + x.dim() + 1
        if not 0 <= dim <= x.dim():
            raise IndexError(f"Dimension out of range (expected to be in range of [{-x.dim() - 1}, {x.dim()}], but "
                             f"got {out_dim})")
        return x.unsqueeze(dim).expand(tuple(x.shape[:dim]) + (size,) + tuple(x.shape[dim:]))
    if not -value.dim() <= out_dim < value.dim():
        raise IndexError(f"Dimension out of range (expected to be in range of [{-value.dim()}, {value.dim() - 1}], "
                         f"but got {out_dim})")
    return value.movedim(bdim, out_dim)


def _run_batched(func, out_dims, randomness, flat_args, flat_in_dims, spec, kwargs, size):
    """``func`` called once on the wrapped inputs at a new level; the outputs unwrapped."""
    _LEVELS[0] += 1
    level = _LEVELS[0]
    ACTIVE.append((level, size))
    RANDOMNESS[level] = randomness
    try:
        inputs = [a if d is None else wrap(a, d, level) for a, d in zip(flat_args, flat_in_dims)]
        output = func(*tree_unflatten(inputs, spec), **kwargs)
    finally:
        ACTIVE.pop()
        del RANDOMNESS[level]
    leaves, out_spec = tree_flatten(output)
    flat_out_dims = _flat_out_dims(func, out_dims, output, out_spec)
    return tree_unflatten([_unwrap_output(func, out_dims, x, d, level, size)
                           for x, d in zip(leaves, flat_out_dims)], out_spec)


def _run_loop(func, out_dims, flat_args, flat_in_dims, spec, kwargs, size):
    """``func`` once per sample (randomness="different" with random draws), outputs stacked."""
    if size == 0:
        raise ValueError(f"vmap({_name(func)}, randomness='different'): minitorch draws different random numbers "
                         "per sample by calling the function once per sample, which needs at least one sample")
    results = []
    for b in range(size):
        sample = [a if d is None else a.select(d, b) for a, d in zip(flat_args, flat_in_dims)]
        results.append(func(*tree_unflatten(sample, spec), **kwargs))
    name = _name(func)
    flats = [tree_flatten(r) for r in results]
    out_spec = flats[0][1]
    flat_out_dims = _flat_out_dims(func, out_dims, results[0], out_spec)
    combined = []
    for idx, out_dim in enumerate(flat_out_dims):
        samples = [leaves[idx] for leaves, _ in flats]
        first = samples[0]
        if out_dim is None:
            combined.append(first)
            continue
        if not isinstance(first, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(first)}. Did you "
                             "mean to set out_dims= to None for output?")
        combined.append(stack(samples, out_dim if out_dim >= 0 else out_dim + first.dim() + 1))
    return tree_unflatten(combined, out_spec)


def _run(func, out_dims, randomness, flat_args, flat_in_dims, spec, kwargs, size):
    if randomness == "same":
        return _run_batched(func, out_dims, randomness, flat_args, flat_in_dims, spec, kwargs, size)
    state, marker = get_rng_state(), default_generator._draws_marker()
    result = _run_batched(func, out_dims, randomness, flat_args, flat_in_dims, spec, kwargs, size)
    if default_generator._draws_marker() == marker:
        return result
    set_rng_state(state)
    if randomness == "error":
        raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use the "
                           "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
                           "of vmap")
    return _run_loop(func, out_dims, flat_args, flat_in_dims, spec, kwargs, size)


def _chunks(flat_args, flat_in_dims, size: int, chunk_size: int):
    for start in range(0, size, chunk_size):
        length = min(chunk_size, size - start)
        yield [a if d is None else a.narrow(d, start, length) for a, d in zip(flat_args, flat_in_dims)], length


def _concat_chunks(func, out_dims, results: list):
    flats = [tree_flatten(r) for r in results]
    leaves0, out_spec = flats[0]
    flat_out_dims = _flat_out_dims(func, out_dims, results[0], out_spec)
    joined = []
    for idx, out_dim in enumerate(flat_out_dims):
        pieces = [leaves[idx] for leaves, _ in flats]
        if out_dim is None:
            joined.append(pieces[0])
        else:
            joined.append(cat(pieces, out_dim))
    return tree_unflatten(joined, out_spec)


def vmap(func: Callable, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size: int | None = None):
    """``func`` mapped over a dimension of its inputs, run once on the whole batch (see the module docstring).

    ``in_dims``/``out_dims``: an int, None, or a tree matching the inputs/outputs; ``randomness``: "error"
    raises if ``func`` draws random numbers, "same" gives every sample the same draws, "different" different
    ones; ``chunk_size`` runs the batch in chunks of that many samples (less memory, more calls).
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        flat_in_dims = _flat_in_dims(func, in_dims, args)
        flat_args, spec = tree_flatten(args)
        size = _batch_size(flat_in_dims, flat_args)
        if chunk_size is None or chunk_size >= size:
            return _run(func, out_dims, randomness, flat_args, flat_in_dims, spec, kwargs, size)
        results = [_run(func, out_dims, randomness, chunk, flat_in_dims, spec, kwargs, length)
                   for chunk, length in _chunks(flat_args, flat_in_dims, size, chunk_size)]
        return _concat_chunks(func, out_dims, results)

    return wrapped
