"""torch.func.vmap as a loop: call ``func`` once per index of the mapped dimension, then stack.

This is the *loop fallback* of issue 17, used for every op today: minitorch has no batching rules yet
(a batch dimension carried through each op in one call, as PyTorch's BatchedTensor does), so vmap costs
one Python call of ``func`` per sample. What it does give is PyTorch's semantics: in_dims/out_dims trees,
None dims, nesting, ``randomness`` and PyTorch's errors for bad input; a batching rule per op can later
replace the loop without changing callers. One documented difference: with ``out_dims=None`` an output
counts as "batched" (an error, as in PyTorch) when its values differ between samples.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from ..ops.comparison import equal
from ..ops.shape import stack
from ..random import get_rng_state, set_rng_state
from ..tensor import Tensor
from ._pytree import broadcast_prefix, spec_str, tree_flatten, tree_unflatten

__all__ = ["vmap"]


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
    return flat


def _batch_size(flat_in_dims: list, flat_args: list) -> int:
    sizes = [arg.size(d) for d, arg in zip(flat_in_dims, flat_args) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0]


def _combine(func, out_dims, results: list):
    """Stack the per-sample outputs (trees of the same structure) along their out_dims."""
    name = _name(func)
    flats = [tree_flatten(r) for r in results]
    spec = flats[0][1]
    if any(s != spec for _, s in flats):
        raise ValueError(f"vmap({name}, ...): `{name}` must return outputs of the same structure for every sample "
                         "(minitorch's vmap calls it once per sample)")
    flat_out_dims = broadcast_prefix(out_dims, results[0])
    if flat_out_dims is None:
        if isinstance(out_dims, tuple) and len(out_dims) == 1 and spec is None:
            flat_out_dims = list(out_dims)
        else:
            raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with "
                             f"the structure of `outputs`. out_dims has structure {spec_str(tree_flatten(out_dims)[1])}"
                             f" but outputs has structure {spec_str(spec)}.")
    combined = []
    for idx, out_dim in enumerate(flat_out_dims):
        samples = [leaves[idx] for leaves, _ in flats]
        first = samples[0]
        if out_dim is None:
            if isinstance(first, Tensor) and any(
                    s is not first and not (isinstance(s, Tensor) and s.shape == first.shape and equal(s, first))
                    for s in samples[1:]):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
            combined.append(first)
            continue
        if not isinstance(out_dim, int):
            raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a python "
                             "collection of ints representing where in the outputs the vmapped dimension should "
                             "appear.")
        if not isinstance(first, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(first)}. Did you "
                             "mean to set out_dims= to None for output?")
        combined.append(stack(samples, out_dim if out_dim >= 0 else out_dim + first.dim() + 1))
    return tree_unflatten(combined, spec)


def vmap(func: Callable, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size: int | None = None):
    """``func`` mapped over a dimension of its inputs: a Python loop over the samples, outputs stacked.

    Semantics follow torch.func.vmap (see the module docstring: no batching rules yet, so this is a loop).
    ``randomness``: "error" raises if ``func`` draws from the default generator, "same" gives every sample
    the same draws, "different" lets them differ. ``chunk_size`` is checked and has no further effect
    (the loop already runs one sample at a time).
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
        if size == 0:
            raise ValueError(f"vmap({_name(func)}): minitorch's loop-based vmap cannot map over a dimension of size "
                             "0 (there is no sample to call the function on)")
        state = get_rng_state() if randomness != "different" else None
        results = []
        for b in range(size):
            if randomness == "same":
                set_rng_state(state)
            sample = [a if d is None else a.select(d, b) for a, d in zip(flat_args, flat_in_dims)]
            results.append(func(*tree_unflatten(sample, spec), **kwargs))
        if randomness == "error" and not equal(get_rng_state(), state):  # one check for the whole loop
            set_rng_state(state)
            raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use "
                               "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                               "operation out of vmap")
        return _combine(func, out_dims, results)

    return wrapped
