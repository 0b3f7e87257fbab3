"""Where vmap meets reverse mode: autograd.grad of BatchedTensors, grad's inputs inside vmap, and custom
``autograd.Function``s called on BatchedTensors.

The graph is recorded on the plain tensors under the wrappers (batched.py), so a gradient is computed
there: the outputs (and cotangents) are laid out with every batch level in front (``canonical``), the
gradient of each input's innermost plain tensor is taken, and re-wrapped exactly as that input was.
Samples never mix in a batching rule, so the gradient of the summed batch w.r.t. a batched input is the
per-sample gradient. An input the outputs are batched over but which is itself unbatched would get the
*sum* over samples; ``grad`` inside vmap avoids that by lifting its inputs to every active level first
(a stride-0 expand: per-sample copies that cost no memory), which is what ``vmap(grad(f), in_dims=(None,
0))`` (per-sample gradients of shared parameters) needs.
"""

from __future__ import annotations

from .. import creation
from ..autograd import api, function
from ..autograd.grad_mode import enable_grad, no_grad
from ..ops import inplace
from ..tensor import Tensor
from .batched import BatchedTensor, unwrap, wrap
from .vmap import ACTIVE, RANDOMNESS

KIND = "batched"


# layouts ------------------------------------------------------------------------------------------
def levels_of(x) -> list[int]:
    """The vmap levels ``x`` is batched at, innermost wrapper (highest level) first."""
    levels = []
    while type(x) is BatchedTensor:
        levels.append(x._level)
        x = x._value
    return levels


def _chain(x) -> tuple[Tensor, list]:
    """``(innermost plain tensor, [(bdim, level), ...] from the inside out)``."""
    chain = []
    while type(x) is BatchedTensor:
        chain.append((x._bdim, x._level))
        x = x._value
    return x, chain[::-1]


def _rewrap(plain: Tensor, chain: list) -> Tensor:
    for bdim, level in chain:
        plain = wrap(plain, bdim, level)
    return plain


def canonical(x: Tensor, levels: list[int], sizes: dict) -> Tensor:
    """A plain tensor: ``x`` with the batch dims of ``levels`` (ascending) in front, in that order, then its
    logical dims; a level ``x`` is not batched at is expanded (stride 0)."""
    for level in sorted(levels, reverse=True):  # peel the innermost first: each new dim goes in front
        if type(x) is BatchedTensor and x._level == level:
            x = x._value.movedim(x._bdim, 0) if x._bdim else x._value
        else:
            x = x.unsqueeze(0).expand((sizes[level],) + tuple(x.shape))
    return x


def _sizes(tensors) -> dict:
    sizes = {}
    for t in tensors:
        while type(t) is BatchedTensor:
            sizes[t._level] = t._value.shape[t._bdim]
            t = t._value
    return sizes


# autograd.grad ------------------------------------------------------------------------------------
def batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    """``autograd.grad`` where some tensors are batched: on the plain tensors, results re-wrapped."""
    levels = sorted({lv for t in outputs + tuple(g for g in grad_outputs if isinstance(g, Tensor))
                     for lv in levels_of(t)})
    sizes = _sizes(outputs + tuple(grad_outputs) + inputs)
    for i, t in enumerate(inputs):
        missing = [lv for lv in levels if lv not in levels_of(t)]
        if missing:
            raise RuntimeError(
                f"vmap: autograd.grad of a batched output w.r.t. input {i}, which is not batched over the same "
                "vmap: minitorch would sum its per-sample gradients. Differentiate with minitorch.func.grad / vjp "
                "inside the vmapped function (they batch their inputs), or pass the input through vmap.")
    plain_outputs, seeds = [], []
    with enable_grad():
        for out, g in zip(outputs, grad_outputs):
            if g is None and out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            plain_outputs.append(canonical(out, levels, sizes))
            if g is None:
                seeds.append(None if not levels else plain_outputs[-1].new_ones(plain_outputs[-1].shape))
            elif isinstance(g, Tensor):
                if tuple(g.shape) != tuple(out.shape):
                    raise RuntimeError(f"Mismatch in shape: grad_output[{len(seeds)}] has a shape of {g.shape} "
                                       f"and output[{len(seeds)}] has a shape of {out.shape}.")
                seeds.append(canonical(g, levels, sizes))
            else:
                seeds.append(g)
    plain_inputs, chains = zip(*[_chain(t) for t in inputs]) if inputs else ((), ())
    grads = api.grad(plain_outputs, plain_inputs, seeds, retain_graph=retain_graph, create_graph=create_graph,
                     allow_unused=allow_unused, materialize_grads=materialize_grads)
    return tuple(None if g is None else _rewrap(g, chain) for g, chain in zip(grads, chains))


# grad's inputs inside vmap ------------------------------------------------------------------------
def in_vmap() -> bool:
    return bool(ACTIVE)


def differentiable(x: Tensor, keep_graph: bool) -> Tensor:
    """A fresh input for grad/vjp inside vmap, batched at every active vmap level (see the module docstring):
    a leaf, or with ``keep_graph`` a view that keeps the caller's graph."""
    levels = [level for level, _ in ACTIVE]
    present = levels_of(x)
    if all(level in present for level in levels):
        if keep_graph and x.requires_grad:
            return x.view_as(x)
        return x.detach().requires_grad_(True)
    sizes = dict(ACTIVE)
    sizes.update(_sizes((x,)))
    everything = sorted(set(levels) | set(present))
    if keep_graph and x.requires_grad:
        plain = canonical(x, everything, sizes)
    else:
        with no_grad():
            plain = canonical(x.detach(), everything, sizes)
        plain = plain.detach().requires_grad_(True)
    return _rewrap(plain, [(0, level) for level in everything])


# custom Functions ---------------------------------------------------------------------------------
class VmapInfo:
    """What a Function's ``vmap`` staticmethod is told (PyTorch's VmapInfo)."""

    __slots__ = ("batch_size", "randomness")

    def __init__(self, batch_size: int, randomness: str = "error"):
        self.batch_size, self.randomness = batch_size, randomness


_GENERATED: dict = {}


def function_apply(cls, args: tuple, kwargs: dict):
    """``cls.apply`` with BatchedTensor arguments: the Function's ``vmap`` staticmethod, or the rule that
    ``generate_vmap_rule=True`` asks for, with PyTorch's errors otherwise."""
    uses_setup_context = cls.setup_context is not function.Function.setup_context
    if not uses_setup_context:
        raise RuntimeError("In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, "
                           "...), it must override the setup_context staticmethod. For more details, please see "
                           "https://pytorch.org/docs/main/notes/extending.func.html")
    if kwargs:
        args = function._bind_arguments(cls, args, kwargs, True)
    level = max(a._level for a in args if type(a) is BatchedTensor)
    size = next(a._value.shape[a._bdim] for a in args if type(a) is BatchedTensor and a._level == level)
    has_vmap = cls.vmap is not function.Function.vmap
    if cls.generate_vmap_rule:
        if has_vmap:
            raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True and "
                               "an overridden vmap staticmethod. Please set generate_vmap_rule=False or delete the "
                               "overridden vmap staticmethod to avoid ambiguity. For more details, please see "
                               "https://pytorch.org/docs/main/notes/extending.func.html")
        return _generated_rule(cls, args, level, size)
    if not has_vmap:
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
                           "override and implement the vmap staticmethod or set generate_vmap_rule=True. For more "
                           "details, please see https://pytorch.org/docs/main/notes/extending.func.html")
    values, in_dims = zip(*[unwrap(a, level) for a in args])
    output, out_dims = cls.vmap(VmapInfo(size, RANDOMNESS.get(level, "error")), in_dims, *values)
    if isinstance(output, tuple):
        dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(output)
        if len(dims) != len(output):
            raise RuntimeError(f"{cls.__name__}.vmap: expected out_dims to have {len(output)} elements (one per "
                               f"output), got {out_dims}")
        return tuple(o if d is None else wrap(o, d % o.dim(), level) for o, d in zip(output, dims))
    dim = out_dims[0] if isinstance(out_dims, tuple) else out_dims
    return output if dim is None else wrap(output, dim % output.dim(), level)


def _generated_rule(cls, args: tuple, level: int, size: int):
    """generate_vmap_rule=True: a Function on the plain (batch-first) tensors whose forward runs ``cls``'s
    forward/setup_context on them re-wrapped, and whose backward runs ``cls``'s backward the same way (under
    the same level, so what setup_context saved still matches); unbatched inputs get the summed gradient."""
    generated = _GENERATED.get(cls)
    if generated is None:
        generated = _GENERATED[cls] = _generate(cls)
    batched = tuple(unwrap(a, level)[1] is not None for a in args)
    plain = [(a._value.movedim(a._bdim, 0) if a._bdim else a._value) if b else a for a, b in zip(args, batched)]
    outputs = generated.apply(_Plan(level, size, batched), *plain)
    if isinstance(outputs, tuple):
        return tuple(wrap(o, 0, level) for o in outputs)
    return wrap(outputs, 0, level)


class _Plan:
    """Which arguments of a generated Function are batched, at which level and batch size."""

    __slots__ = ("level", "size", "batched", "tuple_output", "inputs", "output")

    def __init__(self, level: int, size: int, batched: tuple):
        self.level, self.size, self.batched, self.tuple_output = level, size, batched, False
        self.inputs = self.output = None  # the wrapped inputs and outputs, from forward to setup_context


def _generate(cls):
    """The Function on plain batch-first tensors that ``cls`` with ``generate_vmap_rule=True`` becomes. It is
    written in the setup_context style with ``generate_vmap_rule=True`` itself, so under a nested vmap (its
    arguments batched at an outer level) it is generated again, one level at a time."""
    key = f"_vmap_plan_{id(cls)}"  # where its ctx keeps the plan (a nested level's ctx is the same object)

    def forward(plan, *plain):
        plan.inputs = tuple(wrap(p, 0, plan.level) if b else p for p, b in zip(plain, plan.batched))
        ACTIVE.append((plan.level, plan.size))
        try:
            plan.output = cls.forward(*plan.inputs)
        finally:
            ACTIVE.pop()
        plan.tuple_output = isinstance(plan.output, tuple)
        outs = plan.output if plan.tuple_output else (plan.output,)
        result = tuple(canonical(o, [plan.level], {plan.level: plan.size}) for o in outs)
        return result if plan.tuple_output else result[0]

    def setup_context(ctx, inputs, output):
        plan = inputs[0]
        ACTIVE.append((plan.level, plan.size))
        try:
            cls.setup_context(ctx, plan.inputs, plan.output)
        finally:
            ACTIVE.pop()
        plan.inputs = plan.output = None
        setattr(ctx, key, plan)

    def backward(ctx, *grads):
        plan = getattr(ctx, key)
        ACTIVE.append((plan.level, plan.size))
        try:
            result = cls.backward(ctx, *[None if g is None else wrap(g, 0, plan.level) for g in grads])
        finally:
            ACTIVE.pop()
        result = result if isinstance(result, tuple) else (result,)
        sizes = {plan.level: plan.size}
        plain = [None]  # the plan argument
        for g, b in zip(result, plan.batched):
            if not isinstance(g, Tensor):
                plain.append(None)
            elif b:
                plain.append(canonical(g, [plan.level], sizes))
            elif unwrap(g, plan.level)[1] is not None:  # an unbatched input: every sample's share, summed
                plain.append(canonical(g, [plan.level], sizes).sum(0))
            else:
                plain.append(g * plan.size)
        return tuple(plain)

    return type(cls.__name__ + "Vmapped", (function.Function,),
                {"forward": staticmethod(forward), "setup_context": staticmethod(setup_context),
                 "backward": staticmethod(backward), "generate_vmap_rule": True})


# in-place ops on a BatchedTensor -----------------------------------------------------------------
def batched_inplace(self: BatchedTensor, fn, args: tuple, kwargs: dict, op_name: str) -> Tensor:
    """``self.op_(...)``: the op out of place on the batch, copied into the plain tensor under ``self`` through
    a view laid out batch-first (so views, version counters and autograd's in-place rules are the plain ones)."""
    result = fn(self, *args, **kwargs)
    levels = levels_of(self)
    extra = [lv for lv in levels_of(result) if lv not in levels]
    if extra:
        raise RuntimeError(f"vmap: {op_name}(self, *extra_args) is not possible because there exists a Tensor "
                           "`other` in extra_args that has more elements than `self`. This happened due to `other` "
                           "being vmapped over but `self` not being vmapped over in a vmap. Please try to use "
                           f"out-of-place operators instead of {op_name}.")
    sizes = _sizes((self,))
    target = canonical(self, levels, sizes)
    source = canonical(result, levels, sizes) if isinstance(result, Tensor) else result
    target.copy_(source)
    return self


def batched_like(input: BatchedTensor, factory) -> Tensor:
    """``zeros_like(x)`` and friends of a batched ``x``: the factory on the plain tensor under it, wrapped the
    same way (PyTorch's are batched too; a requires_grad result is a per-sample leaf)."""
    plain, chain = _chain(input)
    return _rewrap(factory(plain), chain)


api.NON_DENSE_GRAD[KIND] = batched_grad  # the batched paths, hooked into autograd once
function.NON_DENSE_APPLY[KIND] = function_apply
inplace.NON_DENSE_INPLACE[KIND] = batched_inplace
creation.LIKE_IMPLEMENTATIONS[KIND] = batched_like


__all__ = ["VmapInfo", "in_vmap"]
