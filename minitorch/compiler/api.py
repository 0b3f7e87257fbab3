"""``minitorch.compile``: PyTorch's ``torch.compile`` signature over minitorch's tracer and plans.

A compiled function keeps a cache of plans keyed by its guards (compiler/guards.py). A call whose key is
cached replays the plan; a new key traces the call (which runs eagerly, so its results are eager mode's) and
caches a plan: one whole-call plan (plan.py), or, when the trace met graph breaks, a ``GuidedPlan`` whose pieces
replay while the function's Python runs again (pieces.py), or the decision to run that key eagerly with the
reason. After ``cache_size_limit`` traces (PyTorch's recompile limit, 8) new keys run eagerly with a warning.
"""

from __future__ import annotations

import functools
import statistics
import time
import types
import warnings
import weakref
from collections.abc import Callable
from typing import Any

from .. import _trace_state
from ..nn.modules.module import Module
from ..tensor import Tensor
from . import explain as explaining
from . import fusion
from .errors import Unsupported
from .guards import Unguardable, call_key, externals_hold
from .optim_step import CompiledStep, installed, is_optimizer_step, optimizers_in, steps_for
from .pieces import GuidedPlan
from .plan import Plan, output_structure
from .tracer import Tracer

cache_size_limit = 8  # PyTorch's torch._dynamo.config.recompile_limit
_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs")
_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_compiled: weakref.WeakSet = weakref.WeakSet()  # every compiled function, for reset()


class InvalidBackend(RuntimeError):
    """``backend=`` names no backend minitorch has (PyTorch's ``torch._dynamo.exc.InvalidBackend``)."""


# A plan with graph breaks (pieces) is timed against eager mode on its first calls: after one warm-up replay the
# next TRIAL_CALLS calls alternate replay and eager (the function's Python runs either way, and the pieces' results
# are eager mode's bit for bit, so only the time differs); if the replays' median is above SLOWER times the eager
# calls', the key runs eagerly from then on (explain() says so, with both medians). 0: no trial.
TRIAL_CALLS = 8
SLOWER = 1.1


class Entry:
    """A cache entry: a plan, or the reason this key runs eagerly (``trial``: a guided plan's timings while it
    is measured against eager mode, else None)."""

    __slots__ = ("plan", "reason", "trial", "slow_plan")

    def __init__(self, plan: Plan | None, reason: str | None = None):
        self.plan, self.reason = plan, reason
        self.trial = ([], []) if plan is not None and plan.guided and TRIAL_CALLS else None
        self.slow_plan = None  # a guided plan measured slower than eager mode (kept for explain())


class CompiledFunction:
    """A function (or a module's ``__call__``) with a cache of traced plans."""

    def __init__(self, fn: Callable, fullgraph: bool, backend: str, module: Module | None = None):
        self.fn = fn
        self.fullgraph = fullgraph
        self.fuse = backend in ("inductor", "cudagraphs")
        self.backend = backend
        self.module = module
        self.cache: dict = {}
        self.traces = 0
        self.history: list = []  # (key, Entry) of every trace, newest last (explain() lists them)
        self._modules = tuple(module.modules()) if module is not None else ()
        self._steps: dict = {}  # id(optimizer) -> the CompiledStep its steps run inside this function
        self._warned = False
        functools.update_wrapper(self, fn, updated=())
        _compiled.add(self)

    def __get__(self, instance, owner=None):  # @torch.compile on a method
        if instance is None:
            return self
        bound = self.__dict__.setdefault("_bound", {})
        compiled = bound.get(id(instance))
        if compiled is None or compiled.fn.__self__ is not instance:
            compiled = bound[id(instance)] = CompiledFunction(types.MethodType(self.fn, instance), self.fullgraph,
                                                              self.backend)
        return compiled

    def __call__(self, *args, **kwargs):
        if _trace_state.tracer is not None:  # inside another compiled function's trace: part of that trace
            return self.fn(*args, **kwargs)
        try:
            tensors, key = call_key(args, kwargs, self._modules)
        except Unguardable as exc:
            if self.fullgraph:
                raise Unsupported(f"torch.compile(fullgraph=True): {exc}") from None
            return self.fn(*args, **kwargs)
        entry = self.cache.get(key)
        if entry is not None:
            plan = entry.plan
            if plan is None:
                return self.fn(*args, **kwargs)
            if externals_hold(plan):
                if plan.guided:
                    if entry.trial is not None:
                        return self._trial(entry, args, kwargs, tensors)
                    return plan.run(self.fn, args, kwargs, tensors)
                if plan.lock.acquire(blocking=False):
                    try:
                        return plan.run(tensors)
                    finally:
                        plan.lock.release()
                return self.fn(*args, **kwargs)  # another thread replays this plan: its buffers are in use
        if self.traces >= cache_size_limit:
            if not self._warned:
                warnings.warn(f"torch.compile: {getattr(self.fn, '__name__', 'function')} reached the recompile "
                              f"limit ({cache_size_limit}); calls with new guards run eagerly", stacklevel=2)
                self._warned = True
            return self.fn(*args, **kwargs)
        return self._trace(args, kwargs, tensors, key)

    def _trial(self, entry: Entry, args, kwargs, tensors):
        """One of a guided plan's first calls: replayed or run eagerly, in turns, and timed (see TRIAL_CALLS)."""
        replayed, eager = entry.trial
        n = len(replayed) + len(eager)
        if n == 0:  # a warm-up replay (buffers, run lists), not timed
            replayed.append(None)
            return entry.plan.run(self.fn, args, kwargs, tensors)
        replay = n % 2 == 1
        started = time.perf_counter()
        result = entry.plan.run(self.fn, args, kwargs, tensors) if replay else self.fn(*args, **kwargs)
        (replayed if replay else eager).append(time.perf_counter() - started)
        if n >= TRIAL_CALLS:
            entry.trial = None
            pieces, plain = statistics.median(replayed[1:]), statistics.median(eager)
            if pieces > SLOWER * plain:
                entry.slow_plan, entry.plan = entry.plan, None
                entry.reason = (f"its compiled pieces were measured slower than eager mode on its first calls (median "
                                f"{pieces * 1e3:.3g} ms against {plain * 1e3:.3g} ms per call): it runs eagerly")
        return result

    def _trace(self, args, kwargs, tensors, key):
        self.traces += 1
        started = time.perf_counter()
        externals = find_externals(self.fn, self.module, args, kwargs)
        steps = steps_for(optimizers_in(self.fn, args, kwargs), self._steps, self.backend, cache_size_limit)
        tracer = Tracer(externals, self.fullgraph)
        positions = {}
        for position, t in enumerate(tensors):
            tracer.input(t, position)
            positions.setdefault(id(t), position)
        histories = [(t, t.grad_fn, t._requires_grad) for t in tensors]
        tracer.start()
        try:
            with installed(steps):  # the optimizers the function reaches step compiled (optim_step.py)
                result = self.fn(*args, **kwargs)
        finally:
            tracer.stop()
        tracer.finish(_result_tensors(result))
        rebased = _history_given_in_place(tracer, histories)
        if tracer.abandoned is not None:
            entry = Entry(None, tracer.abandoned)
        elif rebased is not None:  # (a replay writes the values, not the tensor's new history)
            entry = Entry(None, f"an in-place op gave {rebased} a new autograd history (a write into it, or into a "
                                "view of it, of a value that requires grad): it runs eagerly")
        elif tracer.breaks:  # pieces between the breaks, replayed while the function's Python runs (pieces.py)
            plan = GuidedPlan(tracer, key, self.fuse, _result_tensors(result))
            plan.optimizer_steps = steps
            plan.compile_seconds = time.perf_counter() - started
            entry = Entry(plan)
        else:
            try:
                plan = Plan(tracer, positions, output_structure(result, tracer), key, 0.0)
                if self.fuse:
                    fusion.fuse(plan, tracer)
                plan.compile_seconds = time.perf_counter() - started
                entry = Entry(plan)
            except Unsupported as exc:
                entry = Entry(None, str(exc))
        self.cache[key] = entry
        self.history.append((key, entry))
        return result

    # inspection -----------------------------------------------------------------------------------
    def explain(self) -> str:
        """Guards, graph breaks, kernels and fused groups of every plan traced so far."""
        return explaining.render(self)

    def print_plan(self) -> None:
        print(self.explain())


def _history_given_in_place(tracer: Tracer, histories: list) -> str | None:
    """What an in-place write of the traced call gave a new autograd history that a replay would not give it (a
    replay writes the values only): an argument tensor, a tensor made with no history, or a tensor the trace's steps
    did not make; None if nothing."""
    for i, (t, grad_fn, requires_grad) in enumerate(histories):
        if t.grad_fn is not grad_fn or t._requires_grad != requires_grad:
            return f"argument tensor {i}"
    for slot in tracer.slots:
        t = slot.tensor
        if t._storage.version != slot.version and t.requires_grad and (not slot.requires_grad or (
                t._storage in tracer.foreign_writes and t._grad_fn is not slot.grad_fn)):
            return "a tensor the trace did not make, or one made with no history,"
    return None


def _result_tensors(result) -> list:
    if isinstance(result, Tensor):
        return [result]
    if isinstance(result, (list, tuple)):
        return [t for item in result for t in _result_tensors(item)]
    if isinstance(result, dict):
        return [t for item in result.values() for t in _result_tensors(item)]
    return []


def find_externals(fn, module, args, kwargs) -> dict:
    """``id -> (tensor, getter, name)`` for the tensors a call may read without receiving them: parameters and
    buffers of the compiled module and of modules among the arguments, closure and global tensors (and modules)
    of the function, and tensors held by a bound method's object. The getter finds the tensor again at each call
    (a guard: the plan runs only while it still returns the traced tensor)."""
    found: dict = {}
    if module is not None:
        _add_module(found, module, "self")
    for i, a in enumerate(list(args) + list(kwargs.values())):
        if isinstance(a, Module):
            _add_module(found, a, f"argument {i}")
    for owner_fn in _functions(fn):
        code = getattr(owner_fn, "__code__", None)
        if code is None:
            continue
        for name, cell in zip(code.co_freevars, owner_fn.__closure__ or ()):
            _add_value(found, cell, "cell_contents", name)
        namespace = getattr(owner_fn, "__globals__", {})
        for name in code.co_names:
            if name in namespace:
                _add_value(found, namespace, name, name, mapping=True)
        owner = getattr(owner_fn, "__self__", None)
        if owner is not None and not isinstance(owner, type) and hasattr(owner, "__dict__"):
            if isinstance(owner, Module):
                _add_module(found, owner, "self")
            else:
                for name in list(vars(owner)):
                    _add_value(found, owner.__dict__, name, f"self.{name}", mapping=True)
    return found


def _functions(fn):
    yield fn
    inner = getattr(fn, "__func__", None)
    if inner is not None:
        yield types.MethodType(inner, fn.__self__)
    wrapped = getattr(fn, "__wrapped__", None)
    if wrapped is not None:
        yield wrapped


def _add_module(found: dict, module: Module, prefix: str) -> None:
    for path, sub in module.named_modules():
        for kind in ("_parameters", "_buffers"):
            for name, t in list(getattr(sub, kind).items()):
                if isinstance(t, Tensor) and id(t) not in found:
                    where = f"{prefix}.{path}." if path else f"{prefix}."
                    found[id(t)] = (t, functools.partial(getattr(sub, kind).get, name), where + name)


def _add_value(found: dict, holder, key, name: str, mapping: bool = False) -> None:
    try:
        value = holder[key] if mapping else getattr(holder, key)
    except (KeyError, ValueError, AttributeError):  # an empty cell
        return
    getter = functools.partial(dict.get, holder, key) if mapping else functools.partial(getattr, holder, key)
    if isinstance(value, Tensor):
        if id(value) not in found:
            found[id(value)] = (value, getter, name)
    elif isinstance(value, Module):
        _add_module(found, value, name)
    elif type(value) in (list, tuple) and len(value) < 10_000:
        for i, item in enumerate(value):
            if isinstance(item, Tensor) and id(item) not in found:
                found[id(item)] = (item, _item_getter(getter, i), f"{name}[{i}]")
            elif isinstance(item, Module):
                _add_module(found, item, f"{name}[{i}]")


def _item_getter(getter, i: int):
    def get():
        container = getter()
        return container[i] if type(container) in (list, tuple) and i < len(container) else None

    return get


class OptimizedModule(Module):
    """What ``torch.compile(module)`` returns: calls go through the compiled ``module.__call__``; parameters,
    ``state_dict`` (keys prefixed ``_orig_mod.``) and attributes are the original module's."""

    def __init__(self, mod: Module, compiled: CompiledFunction):
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compiled", compiled)

    def forward(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name: str):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._orig_mod, name)

    def explain(self) -> str:
        return self._compiled.explain()

    def print_plan(self) -> None:
        self._compiled.print_plan()


def compile(model: Callable | None = None, *, fullgraph: bool = False, dynamic: bool | None = None,
            backend: str | Callable = "inductor", mode: str | None = None, options: dict | None = None,
            disable: bool = False) -> Any:
    """Compile ``model`` (a function or an ``nn.Module``; also a decorator, with or without arguments).

    The first call with new guards traces the ops and records a plan; later calls replay it on arrays (with
    elementwise chains fused for ``backend="inductor"``, the default). Graph breaks run eagerly;
    ``fullgraph=True`` raises ``Unsupported`` at one instead. ``dynamic`` is accepted (shapes are always
    specialized: a new shape is a new plan), as are ``mode`` and ``options`` (no tuning knobs are needed)."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(m for m in _MODES if m)}")
    if callable(backend) and not isinstance(backend, str):
        raise NotImplementedError("torch.compile(backend=<callable>): PyTorch hands a custom backend an FX graph; "
                                  "minitorch's compiler records its own plan, so only the named backends "
                                  f"{', '.join(_BACKENDS)} are available")
    if backend not in _BACKENDS:
        raise InvalidBackend(f"Invalid backend: {backend!r}, see `torch._dynamo.list_backends()` for available "
                             "backends.")
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if not callable(model):
        raise RuntimeError("torch.compile: model must be callable (a function or an nn.Module)")
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model, CompiledFunction(model, fullgraph, backend, module=model))
    if is_optimizer_step(model):  # torch.compile(optimizer.step): SGD, Adam, AdamW replay their update
        return CompiledStep(model, backend, cache_size_limit)
    return CompiledFunction(model, fullgraph, backend)


def reset() -> None:
    """Forget every plan of every compiled function (``torch.compiler.reset()``)."""
    for compiled in _compiled:
        compiled.cache.clear()
        compiled.history.clear()
        compiled.traces = 0
        compiled._warned = False


def is_compiling() -> bool:
    """True while minitorch.compile traces a call (``torch.compiler.is_compiling()``)."""
    return _trace_state.tracer is not None


def disable(fn: Callable | None = None, recursive: bool = True):
    """``torch.compiler.disable``: ``fn`` always runs eagerly, even inside a compiled function's trace (a graph
    break there)."""
    if fn is None:
        return lambda f: disable(f, recursive)

    @functools.wraps(fn)
    def eager(*args, **kwargs):
        tracer = _trace_state.tracer
        if tracer is not None:  # tracing or replaying: the function runs with the hooks paused
            return tracer.eager_call(fn, args, kwargs,
                                     f"{getattr(fn, '__name__', 'a function')} is marked torch.compiler.disable")
        return fn(*args, **kwargs)

    return eager
