"""torch.func's differentiation transforms on minitorch's reverse-mode engine.

PyTorch's functorch gives each transform a "level" and wraps tensors per level. minitorch keeps it
simpler: a transform re-roots its differentiated inputs (a fresh leaf, or a view when an enclosing
transform or the caller's autograd must see through it) and asks ``autograd.grad`` for the result,
with ``create_graph`` exactly when something outside needs the result's graph: inside another transform
(``_depth > 0``), or when an argument itself requires grad. Nesting (``grad(grad(f))``,
``jacrev(jacrev(f))``) then works through double backward.

``jvp``, ``jacfwd`` and ``linearize`` are forward mode (``torch.autograd.forward_ad``): ``func`` runs once on
dual tensors and ``J t`` is the outputs' tangent; ``jacfwd`` pushes one one-hot tangent per input element, and
``hessian`` is PyTorch's ``jacfwd(jacrev(f))``, forward over reverse. The primals are re-rooted like the
reverse transforms' (fresh leaves that require grad), so a reverse transform inside sees through them. Dual
levels do not nest (and vmap's batched tensors carry no tangents), so a forward transform inside another
(``jacfwd(jacfwd(f))``, or inside vmap) falls back to the double-vjp
trick: the vjp ``g(u) = J^T u`` is linear in a dummy cotangent ``u``, and the gradient of ``g(u) . t`` with
respect to ``u`` is ``J t`` (two reverse passes, the same values).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable

from ..autograd import forward_ad
from ..autograd import grad as autograd_grad
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..creation import zeros, zeros_like
from ..ops.comparison import equal
from ..ops.shape import stack
from ..random import get_rng_state, set_rng_state
from ..tensor import Tensor
from ._pytree import spec_str, tree_flatten, tree_map, tree_unflatten
from .batched_autograd import differentiable as differentiable_in_vmap
from .batched_autograd import in_vmap

__all__ = ["grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "linearize", "vjp"]

_depth = 0  # how many transforms are running around the current call


@contextlib.contextmanager
def _nesting():
    global _depth
    _depth += 1
    try:
        with enable_grad():
            yield
    finally:
        _depth -= 1


def _needs_graph(flat_args) -> bool:
    """Whether the result must stay differentiable: inside another transform, or for an argument's history."""
    if not is_grad_enabled():
        return False
    return _depth > 0 or any(isinstance(a, Tensor) and a.requires_grad for a in flat_args)


def _differentiable(x, keep_graph: bool):
    """A fresh input to differentiate with respect to: a view keeps the caller's graph, else a new leaf (dual
    again, with ``x``'s tangent, inside a forward transform: reverse over forward keeps the tangent)."""
    if not isinstance(x, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    if in_vmap():  # batched at every running vmap level, so its gradient is per sample
        return differentiable_in_vmap(x, keep_graph)
    if keep_graph and x.requires_grad:
        return x.view_as(x)
    fresh = x.detach().requires_grad_(True)
    tangent = forward_ad.unpack_dual(x).tangent
    return fresh if tangent is None else forward_ad.make_dual(fresh, tangent)


def _undo(tree, keep_graph: bool):
    return tree if keep_graph else tree_map(lambda t: _detached(t) if isinstance(t, Tensor) else t, tree)


def _detached(t: Tensor) -> Tensor:
    """``t.detach()``, still dual inside a forward transform (forward over reverse needs the tangent)."""
    tangent = forward_ad.unpack_dual(t).tangent
    return t.detach() if tangent is None else forward_ad.make_dual(t.detach(), tangent)


# argnums --------------------------------------------------------------------------------------
def _wrap_argnum(argnum, num_args: int) -> int:
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _check_argnums(argnums, num_args: int):
    """argnums normalised to non-negative ints (int stays int), with PyTorch's errors."""
    if isinstance(argnums, int):
        return _wrap_argnum(argnums, num_args)
    if not isinstance(argnums, tuple):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    wrapped = tuple(_wrap_argnum(a, num_args) for a in argnums)
    if len(wrapped) == 0:
        raise RuntimeError("argnums must be non-empty")
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return wrapped


def _replace_argnums(args: tuple, argnums, diff) -> tuple:
    if isinstance(argnums, int):
        return tuple(diff if i == argnums else a for i, a in enumerate(args))
    return tuple(diff[argnums.index(i)] if i in argnums else a for i, a in enumerate(args))


def _prepare(args: tuple, argnums, keep_graph: bool):
    """(args with the differentiated ones re-rooted, the differentiated tree, its flat leaves, its spec)."""
    argnums = _check_argnums(argnums, len(args))
    chosen = args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)
    flat, spec = tree_flatten(chosen)
    flat = [_differentiable(x, keep_graph) for x in flat]
    diff = tree_unflatten(flat, spec)
    return _replace_argnums(args, argnums, diff), flat, spec


def _grads(outputs, inputs, grad_outputs, create_graph: bool, retain_graph: bool | None = None) -> list:
    """autograd.grad over the outputs that require grad; zeros for inputs nothing reached."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not pairs:
        return [zeros_like(x) for x in inputs]
    result = autograd_grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=retain_graph,
                           create_graph=create_graph, allow_unused=True)
    return [zeros_like(x) if g is None else g for g, x in zip(result, inputs)]


def _split_aux(output, has_aux: bool, api: str):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return output


def _check_tensor_outputs(flat_out: list, api: str) -> None:
    if (len(flat_out) == 1 and flat_out[0] is None) or len(flat_out) < 1:
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got output = {flat_out})")
    for o in flat_out:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(o)}")


# grad -----------------------------------------------------------------------------------------
def grad_and_value(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """A function returning ``(gradient, value)`` of the scalar ``func`` w.r.t. ``args[argnums]``."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        keep_graph = _needs_graph(tree_flatten((args, kwargs))[0])
        with _nesting():
            args, flat, spec = _prepare(args, argnums, keep_graph)
            output, aux = _split_aux(func(*args, **kwargs), has_aux, "grad_and_value(f)(*args)")
            if not isinstance(output, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                                   f"{type(output)}")
            if output.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev "
                                   "APIs instead?")
            grads = _grads([output], flat, [None], create_graph=keep_graph)
        gradient = _undo(tree_unflatten(grads, spec), keep_graph)
        value = _undo(output, keep_graph)
        if has_aux:
            return gradient, (value, _undo(aux, keep_graph))
        return gradient, value

    return wrapper


def grad(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """A function returning the gradient of the scalar ``func`` w.r.t. ``args[argnums]`` (a tree like them)."""
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        gradient, value = inner(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return wrapper


# vjp ------------------------------------------------------------------------------------------
def vjp(func: Callable, *primals, has_aux: bool = False):
    """``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` gives one gradient per primal (a tuple)."""
    keep_graph = _needs_graph(tree_flatten(primals)[0])
    with _nesting():
        flat_primals, primals_spec = tree_flatten(primals)
        flat_primals = [_differentiable(x, keep_graph) for x in flat_primals]
        output, aux = _split_aux(func(*tree_unflatten(flat_primals, primals_spec)), has_aux, "vjp(f, *primals)")
        flat_out, out_spec = tree_flatten(output)
        _check_tensor_outputs(flat_out, "vjp(f, *primals)")
        for o in flat_out:
            if not (o.dtype.is_floating_point or o.dtype.is_complex):
                raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got "
                                   f"Tensor with dtype {o.dtype}")

    def vjp_fn(cotangents, retain_graph: bool = True, create_graph: bool | None = None):
        create = keep_graph if create_graph is None else create_graph
        flat_cot, cot_spec = tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {spec_str(cot_spec)}, primal output: "
                               f"{spec_str(out_spec)}")
        with enable_grad() if create else contextlib.nullcontext():
            grads = _grads(flat_out, flat_primals, flat_cot, create_graph=create, retain_graph=retain_graph)
        return _undo(tree_unflatten(grads, primals_spec), create)

    result = _undo(output, keep_graph)
    if has_aux:
        return result, vjp_fn, _undo(aux, keep_graph)
    return result, vjp_fn


# jvp by the double-vjp trick ------------------------------------------------------------------
class _Linearized:
    """f at the primals with its vjp ``g(u) = J^T u`` recorded for a dummy ``u``: ``J t`` is d(g . t)/du."""

    def __init__(self, func, primals: tuple, api: str, has_aux: bool = False, argnums=None):
        self.keep_graph = _needs_graph(tree_flatten(primals)[0])
        with _nesting():
            if argnums is None:
                flat, self.spec = tree_flatten(primals)
                self.flat = [_differentiable(x, self.keep_graph) for x in flat]
                args = tree_unflatten(self.flat, self.spec)
            else:
                args, self.flat, self.spec = _prepare(primals, argnums, self.keep_graph)
            output, self.aux = _split_aux(func(*args), has_aux, api)
            self.out, self.out_spec = tree_flatten(output)
            _check_tensor_outputs(self.out, api)
            self.dummies = [zeros_like(o, requires_grad=True) for o in self.out]
            self.vjps = _grads(self.out, self.flat, self.dummies, create_graph=True)

    def output(self):
        return _undo(tree_unflatten(self.out, self.out_spec), self.keep_graph)

    def apply(self, flat_tangents, retain_graph: bool = True) -> list:
        """``J t`` per flat output, for tangents ``t`` one per flat primal."""
        pairs = [(g, t) for g, t in zip(self.vjps, flat_tangents) if g.requires_grad]
        if not pairs:
            return [zeros_like(o) for o in self.out]
        with enable_grad() if self.keep_graph else contextlib.nullcontext():
            result = autograd_grad([g for g, _ in pairs], self.dummies, [t for _, t in pairs],
                                   retain_graph=retain_graph, create_graph=self.keep_graph, allow_unused=True)
        return [zeros_like(o) if r is None else _undo(r, self.keep_graph) for r, o in zip(result, self.out)]


_JVP = "jvp(f, primals, tangents)"


def _check_tangents(primals, tangents, flat_primals: list):
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    flat_p, p_spec = tree_flatten(primals)
    flat_t, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python structure. For example, "
                           "if primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{spec_str(p_spec)} and tangents with structure {spec_str(t_spec)}")
    for name, flat in (("primals", flat_p), ("tangents", flat_t)):
        if not flat:
            raise RuntimeError(f"{_JVP}: Expected {name} to contain at least one Tensor.")
        for x in flat:
            if not isinstance(x, Tensor):
                raise RuntimeError(f"{_JVP}: Expected {name} to only contain Tensors, got {type(x)}")
    for p, t in zip(flat_p, flat_t):
        if p.shape != t.shape:
            raise RuntimeError(f"Trying to set a forward gradient that has a different size than that of the "
                               f"original Tensor, this is not supported. Tensor is of size {list(p.shape)} while "
                               f"the given forward gradient is of size {list(t.shape)}.")
    return flat_t


def _forward(func, primals: tuple, flat_tangents: list, api: str, has_aux: bool = False, argnums=None):
    """One forward-mode pass: ``(outputs, output tangents, out_spec, aux)`` of ``func`` at the primals (those
    chosen by ``argnums`` if given) made dual with ``flat_tangents`` (None for an output without a tangent).
    Nothing is re-rooted: the results keep whatever reverse-mode history the primals (and closures) give them."""
    with forward_ad.dual_level():
        chosen = None if argnums is None else _check_argnums(argnums, len(primals))
        tree = primals if chosen is None else primals[chosen] if isinstance(chosen, int) else tuple(
            primals[i] for i in chosen)
        flat, spec = tree_flatten(tree)
        duals = tree_unflatten([forward_ad.make_dual(x, t) for x, t in zip(flat, flat_tangents)], spec)
        args = duals if chosen is None else _replace_argnums(primals, chosen, duals)
        output, aux = _split_aux(func(*args), has_aux, api)
        flat_out, out_spec = tree_flatten(output)
        _check_tensor_outputs(flat_out, api)
        unpacked = [forward_ad.unpack_dual(o) for o in flat_out]
        outs = [p for p, _ in unpacked]
        tangents = [t for _, t in unpacked]
        aux = tree_map(lambda a: forward_ad.unpack_dual(a).primal if isinstance(a, Tensor) else a, aux)
    return outs, tangents, out_spec, aux


def _forward_unavailable() -> bool:
    """Inside another forward transform (dual levels do not nest) or inside vmap (batched tensors carry no
    tangents): the forward transforms then compute ``J t`` by the double-vjp trick instead."""
    return forward_ad.state.level >= 0 or in_vmap()


def jvp(func: Callable, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J tangents)``: one forward-mode pass (inside another forward transform: the double-vjp
    trick, since dual levels do not nest)."""
    flat_t = _check_tangents(primals, tangents, [])
    if _forward_unavailable():
        return _jvp_by_double_vjp(func, primals, flat_t, strict, has_aux)
    outs, result, out_spec, aux = _forward(func, primals, flat_t, _JVP, has_aux)
    if strict and all(t is None for t in result):
        raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is independent of the inputs. "
                           "This is not allowed with strict=True.")
    result = [zeros_like(o) if t is None else t for t, o in zip(result, outs)]
    output, jvp_out = tree_unflatten(outs, out_spec), tree_unflatten(result, out_spec)
    return (output, jvp_out, aux) if has_aux else (output, jvp_out)


def _jvp_by_double_vjp(func, primals, flat_t: list, strict: bool, has_aux: bool):
    lin = _Linearized(func, primals, _JVP, has_aux)
    if strict and not any(o.requires_grad for o in lin.out):
        raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is independent of the inputs. "
                           "This is not allowed with strict=True.")
    out = tree_unflatten(lin.apply(flat_t, retain_graph=False), lin.out_spec)
    if has_aux:
        return lin.output(), out, _undo(lin.aux, lin.keep_graph)
    return lin.output(), out


def linearize(func: Callable, *primals):
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is ``J tangents`` at the primals, reusable. Each call
    is one forward-mode pass of ``func`` (PyTorch replays a traced graph instead; the values are the same)."""
    output = jvp(func, primals, primals)[0]

    def jvp_fn(*tangents):
        _check_tangents(primals, tangents, [])
        return jvp(func, primals, tangents)[1]

    return output, jvp_fn


# Jacobians ------------------------------------------------------------------------------------
def _check_chunk_size(chunk_size, api: str) -> None:
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"{api}: `chunk_size` should be greater than 0.")


def _assemble(columns: list[list[list]], outs: list, flat: list, spec, out_spec, inputs_last: bool):
    """Jacobian blocks ``out.shape + inp.shape`` from per-element rows/columns, in PyTorch's nesting."""
    per_out = []
    for i, o in enumerate(outs):
        blocks = []
        for k, x in enumerate(flat):
            pieces = columns[i][k]
            if not pieces:
                blocks.append(zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype, device=x.device))
                continue
            # columns stack to out.shape + (inp.numel(),), rows to (out.numel(),) + inp.shape
            block = stack(pieces, -1 if inputs_last else 0)
            blocks.append(block.reshape(tuple(o.shape) + tuple(x.shape)))
        per_out.append(tree_unflatten(blocks, spec))
    return tree_unflatten(per_out, out_spec)


def jacrev(func: Callable, argnums=0, *, has_aux: bool = False, chunk_size: int | None = None,
           _preallocate_and_copy: bool = False) -> Callable:
    """A function returning the Jacobian of ``func`` w.r.t. ``args[argnums]``, one reverse pass per output
    element (``chunk_size`` is accepted; the rows are computed one at a time regardless)."""
    _check_chunk_size(chunk_size, "jacrev")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        keep_graph = _needs_graph(tree_flatten((args, kwargs))[0])
        with _nesting():
            args, flat, spec = _prepare(args, argnums, keep_graph)
            output, aux = _split_aux(func(*args, **kwargs), has_aux, "jacrev(f, ...)(*args)")
            outs, out_spec = tree_flatten(output)
            _check_tensor_outputs(outs, "jacrev(f, ...)(*args)")
            rows = [[[] for _ in flat] for _ in outs]
            for i, o in enumerate(outs):
                if not o.requires_grad:
                    continue
                flat_o = o.reshape(-1)
                for j in range(o.numel()):
                    for k, g in enumerate(_grads([flat_o[j]], flat, [None], keep_graph, retain_graph=True)):
                        rows[i][k].append(g)
            jac = _assemble(rows, outs, flat, spec, out_spec, inputs_last=False)
        jac = _undo(jac, keep_graph)
        return (jac, _undo(aux, keep_graph)) if has_aux else jac

    return wrapper


def jacfwd(func: Callable, argnums=0, has_aux: bool = False, *, randomness: str = "error") -> Callable:
    """A function returning the Jacobian of ``func`` column by column: one forward-mode pass per input element
    (a one-hot tangent; PyTorch vmaps these passes, minitorch loops). "error" ``randomness`` refuses random
    draws, as PyTorch's vmap does; "same" and "different" let them be ("different" draws anew per column)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if _forward_unavailable():
            return _jacfwd_by_double_vjp(func, argnums, has_aux, randomness, args, kwargs)
        state = get_rng_state() if randomness != "different" else None
        chosen = _check_argnums(argnums, len(args))
        flat, spec = tree_flatten(args[chosen] if isinstance(chosen, int) else tuple(args[i] for i in chosen))
        bound = functools.partial(func, **kwargs)
        columns, outs, out_spec, aux = None, None, None, None
        for k, x in enumerate(flat):
            for j in range(x.numel()):
                if state is not None:
                    set_rng_state(state)
                seeds = [zeros_like(y) for y in flat]
                one_hot = zeros(x.numel(), dtype=x.dtype, device=x.device)
                one_hot[j] = 1
                seeds[k] = one_hot.view(x.shape)
                outs, tangents, out_spec, aux = _forward(bound, args, seeds, _JVP, has_aux, argnums)
                if randomness == "error" and not equal(get_rng_state(), state):
                    set_rng_state(state)
                    raise RuntimeError("vmap: called random operation while in randomness error mode. Please either "
                                       "use the 'same' or 'different' randomness flags on vmap or perform the "
                                       "randomness operation out of vmap")
                if columns is None:
                    columns = [[[] for _ in flat] for _ in outs]
                for i, (t, o) in enumerate(zip(tangents, outs)):
                    columns[i][k].append(zeros_like(o) if t is None else t)
        if outs is None:  # no input element at all: run once for the outputs' shapes
            outs, _, out_spec, aux = _forward(bound, args, [zeros_like(y) for y in flat], _JVP, has_aux, argnums)
            columns = [[[] for _ in flat] for _ in outs]
        jac = _assemble(columns, outs, flat, spec, out_spec, inputs_last=True)
        return (jac, aux) if has_aux else jac

    return wrapper


def _jacfwd_by_double_vjp(func, argnums, has_aux: bool, randomness: str, args: tuple, kwargs: dict):
    """jacfwd by the double-vjp trick: ``func`` runs once; column j of input k is d(g[j])/du = J e_j."""
    state = get_rng_state() if randomness == "error" else None
    lin = _Linearized(functools.partial(func, **kwargs), args, _JVP, has_aux, argnums)
    if state is not None and not equal(get_rng_state(), state):  # PyTorch's jacfwd vmaps: same error
        set_rng_state(state)
        raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use "
                           "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                           "operation out of vmap")
    columns = [[[] for _ in lin.flat] for _ in lin.out]
    for k, g in enumerate(lin.vjps):
        if not g.requires_grad:
            continue
        flat_g = g.reshape(-1)
        for j in range(g.numel()):  # column j of input k: d(g[j])/du = J e_j
            pairs = autograd_grad([flat_g[j]], lin.dummies, retain_graph=True, create_graph=lin.keep_graph,
                                  allow_unused=True)
            for i, (col, o) in enumerate(zip(pairs, lin.out)):
                columns[i][k].append(zeros_like(o) if col is None else col)
    for i, o in enumerate(lin.out):  # inputs nothing reached: explicit zero columns
        for k, x in enumerate(lin.flat):
            if not columns[i][k] and x.numel():
                columns[i][k] = [zeros_like(o)] * x.numel()
    jac = _undo(_assemble(columns, lin.out, lin.flat, lin.spec, lin.out_spec, inputs_last=True), lin.keep_graph)
    return (jac, _undo(lin.aux, lin.keep_graph)) if has_aux else jac


def hessian(func: Callable, argnums=0) -> Callable:
    """The Hessian of ``func`` w.r.t. ``args[argnums]``: ``jacfwd(jacrev(func))``, forward over reverse, as
    PyTorch composes it."""
    return jacfwd(jacrev(func, argnums), argnums)

