"""``torch.compile(optimizer.step)``: the update of SGD, Adam and AdamW as one replayed program per call.

The eager step (optim/sgd.py, optim/adam.py) already runs on arrays; what it costs beyond its ufuncs is the
Python around them - per parameter, a few dict lookups (group options, ``state``), the checks, a temporary array
per arithmetic operation. The compiled step records, at its first call (which runs eagerly and creates the
state), each parameter's arrays (the parameter, its state buffers, two scratch buffers per shape), and replays
*the same ufunc calls in the same order* with ``out=`` into those buffers: results are bit-identical to eager.

Guards, checked at every call: the optimizer is a plain SGD, Adam or AdamW (its class's own ``step``), no step
hook is registered and no closure passed; the param groups, their parameters and the state dicts and buffers are
the traced objects; every option but the learning rate is as traced; each gradient is dense, of its parameter's
shape and dtype, and present exactly where it was. A failed guard re-records (the call runs eagerly), up to the
recompile limit. The learning rate (and the step count) are read at every call, so a scheduler's changes apply.
"""

from __future__ import annotations

import contextlib
import types

from .. import _trace_state
from ..optim import SGD, Adam, AdamW
from ..optim import optimizer as optimizer_module
from ..optim.optimizer import scalar

_STEPS = {SGD: SGD.step, Adam: Adam.step, AdamW: AdamW.step}
_OPTIONS = {SGD: ("momentum", "dampening", "weight_decay", "nesterov", "maximize"),
            Adam: ("betas", "eps", "weight_decay", "amsgrad", "maximize", "decoupled_weight_decay"),
            AdamW: ("betas", "eps", "weight_decay", "amsgrad", "maximize", "decoupled_weight_decay")}
_BUFFERS = {SGD: ("momentum_buffer",), Adam: ("step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"),
            AdamW: ("step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq")}


class Unrecordable(Exception):
    """The step cannot be replayed (the reason): the call runs eagerly."""


class ParamPlan:
    """One parameter's arrays, found once: the tensor, its state dict and buffers, and scratch buffers."""

    __slots__ = ("p", "param", "shape", "dtype", "state", "buffers", "arrays", "scratch")

    def __init__(self, p, state: dict, names: tuple, scratch):
        self.p, self.param, self.shape, self.dtype = p, p._array, p._array.shape, p._storage.dtype
        self.state = state
        self.buffers = tuple((name, state[name]) for name in names if state is not None and name in state)
        self.arrays = {name: t._array for name, t in self.buffers}
        self.scratch = scratch


class StepPlan:
    """What one traced call of the step read: the groups, their options, and a ``ParamPlan`` per parameter with a
    gradient (None for one without: it must still have none)."""

    def __init__(self, optimizer):
        kind = type(optimizer)
        self.kind = kind
        self.state = optimizer.state
        self.groups = []
        scratch: dict = {}
        for group in optimizer.param_groups:
            options = tuple(group[name] for name in _OPTIONS[kind])
            params = []
            for p in group["params"]:
                if p.grad is None:
                    params.append((p, None))
                    continue
                check_grad(p)
                if not p._dense or p._storage.dtype.is_complex or not p._array.flags.c_contiguous:
                    raise Unrecordable("a sparse, complex or non-contiguous parameter")
                state = optimizer.state.get(p)
                needs_state = kind is not SGD or group["momentum"] != 0
                if needs_state and (state is None or (kind is SGD and "momentum_buffer" not in state)):
                    raise Unrecordable("a parameter without optimizer state yet")
                key = (p._array.shape, p._array.dtype)
                if key not in scratch:
                    xp = p._storage.backend.xp
                    scratch[key] = (xp.empty(key[0], key[1]), xp.empty(key[0], key[1]))
                params.append((p, ParamPlan(p, state, _BUFFERS[kind], scratch[key])))
            self.groups.append((group, options, params))
        self.scratch_bytes = sum(a.nbytes + b.nbytes for a, b in scratch.values())

    def holds(self, optimizer) -> str | None:
        """None if the guards hold, else the first that does not."""
        if optimizer.state is not self.state or len(optimizer.param_groups) != len(self.groups):
            return "the optimizer's state or param groups were replaced"
        kind = self.kind
        for group, (traced, options, params) in zip(optimizer.param_groups, self.groups):
            if group is not traced or len(group["params"]) != len(params):
                return "a param group was replaced"
            if tuple(group[name] for name in _OPTIONS[kind]) != options:
                return "an option other than lr changed"
            for p, (q, plan) in zip(group["params"], params):
                if p is not q:
                    return "a parameter was replaced"
                grad = p.grad
                if (grad is None) != (plan is None):
                    return "a parameter got or lost its gradient"
                if plan is None:
                    continue
                if (not grad._dense or grad._array.shape != plan.shape or grad._storage.dtype is not plan.dtype
                        or p._array is not plan.param or optimizer.state.get(p) is not plan.state):
                    return "a gradient or a parameter's array or state changed"
                for name, t in plan.buffers:
                    if plan.state[name] is not t or t._array is not plan.arrays[name]:
                        return "an optimizer state buffer was replaced"
        return None

    def run(self) -> None:
        if self.kind is SGD:
            for group, _, params in self.groups:
                _sgd(group, params)
        else:
            for group, _, params in self.groups:
                _adam(group, params)


def check_grad(p) -> None:
    grad = p.grad
    if not grad._dense or grad._array.shape != p._array.shape or grad._storage.dtype is not p._storage.dtype:
        raise Unrecordable("a sparse gradient, or one of another shape or dtype than its parameter")


def _sgd(group: dict, params: list) -> None:
    """optim/sgd.py's dense update, ufunc by ufunc, into the parameter's buffers."""
    lr, weight_decay = scalar(group["lr"]), group["weight_decay"]
    momentum, dampening = group["momentum"], group["dampening"]
    nesterov, maximize = group["nesterov"], group["maximize"]
    for p, plan in params:
        if plan is None:
            continue
        xp = p._storage.backend.xp
        param, (t1, t2) = plan.param, plan.scratch
        grad = p.grad._array
        if maximize:
            grad = xp.negative(grad, out=t2)
        if weight_decay != 0:
            grad = xp.add(grad, xp.multiply(weight_decay, param, out=t1), out=t2)
        if momentum != 0:
            buf = plan.arrays["momentum_buffer"]
            xp.multiply(buf, momentum, out=buf)
            xp.add(buf, xp.multiply(1 - dampening, grad, out=t1), out=buf)
            plan.buffers[0][1]._storage.version += 1
            grad = xp.add(grad, xp.multiply(momentum, buf, out=t1), out=t2) if nesterov else buf
        xp.subtract(param, xp.multiply(lr, grad, out=t1), out=param)
        p._storage.version += 1


def _adam(group: dict, params: list) -> None:
    """optim/adam.py's update (Adam and AdamW), ufunc by ufunc, into the parameter's buffers."""
    lr, (beta1, beta2), eps = scalar(group["lr"]), group["betas"], group["eps"]
    weight_decay, decoupled, amsgrad, maximize = (group["weight_decay"], group["decoupled_weight_decay"],
                                                  group["amsgrad"], group["maximize"])
    for p, plan in params:
        if plan is None:
            continue
        xp = p._storage.backend.xp
        param, (t1, t2) = plan.param, plan.scratch
        arrays = plan.arrays
        exp_avg, exp_avg_sq, step_array = arrays["exp_avg"], arrays["exp_avg_sq"], arrays["step"]
        grad = p.grad._array
        if maximize:
            grad = xp.negative(grad, out=t2)
        step_array[...] = step_array + 1  # step_counter
        step = float(step_array)
        if weight_decay != 0:
            if decoupled:
                xp.multiply(param, 1 - lr * weight_decay, out=param)
            else:
                grad = xp.add(grad, xp.multiply(weight_decay, param, out=t1), out=t2)
        xp.add(exp_avg, xp.multiply(1 - beta1, xp.subtract(grad, exp_avg, out=t1), out=t1), out=exp_avg)
        xp.multiply(exp_avg_sq, beta2, out=exp_avg_sq)
        xp.add(exp_avg_sq, xp.multiply(xp.multiply(1 - beta2, grad, out=t1), grad, out=t1), out=exp_avg_sq)
        bias_correction1 = 1 - beta1**step
        bias_correction2_sqrt = (1 - beta2**step) ** 0.5
        if amsgrad:
            max_exp_avg_sq = arrays["max_exp_avg_sq"]
            xp.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
            denom = xp.divide(xp.sqrt(max_exp_avg_sq, out=t1), bias_correction2_sqrt, out=t1)
        else:
            denom = xp.divide(xp.sqrt(exp_avg_sq, out=t1), bias_correction2_sqrt, out=t1)
        xp.add(denom, eps, out=denom)
        xp.subtract(param, xp.multiply(lr / bias_correction1, xp.divide(exp_avg, denom, out=t1), out=t1), out=param)
        for _, t in plan.buffers:
            t._storage.version += 1
        p._storage.version += 1


class CompiledStep:
    """What ``torch.compile(optimizer.step)`` returns: the step, replayed by a ``StepPlan`` when its guards hold
    (module docstring); hooks, closures and other optimizers run the eager step."""

    def __init__(self, step, backend: str, recompile_limit: int):
        self.eager = step
        self.recompile_limit = recompile_limit
        self.optimizer = step.__self__
        self.backend = backend
        self.plan: StepPlan | None = None
        self.history: list = []  # (plan or None, reason) of every recording
        self.traces = 0
        self.replays = 0
        self.fn = step

    def __call__(self, closure=None):
        optimizer = self.optimizer
        reason = self._unsupported(closure)
        if reason is not None:
            if not self.history or self.history[-1][1] != reason:
                self.history.append((None, reason))
            return self.eager(closure)
        plan = self.plan
        if plan is not None and plan.holds(optimizer) is None:
            tracer = _trace_state.tracer
            if tracer is not None:  # inside a compiled function: its trace or replay pauses for the update
                with tracer.pause():
                    plan.run()
            else:
                plan.run()
            optimizer._opt_called = True
            self.replays += 1
            return None
        result = self.eager()  # the first call (or a failed guard): eager, then record what it used
        if self.traces < self.recompile_limit:
            self.traces += 1
            try:
                self.plan = StepPlan(optimizer)
                self.history.append((self.plan, None))
            except Unrecordable as exc:
                self.plan = None
                self.history.append((None, str(exc)))
        return result

    def _unsupported(self, closure) -> str | None:
        optimizer = self.optimizer
        kind = type(optimizer)
        if _STEPS.get(kind) is None or kind.step is not _STEPS[kind]:
            return f"{kind.__name__}.step is not compiled (only SGD, Adam and AdamW are); it runs eagerly"
        if closure is not None:
            return "a closure (it re-evaluates the loss): the step runs eagerly"
        if (optimizer_module._global_optimizer_pre_hooks or optimizer_module._global_optimizer_post_hooks
                or optimizer._optimizer_step_pre_hooks or optimizer._optimizer_step_post_hooks):
            return "step hooks are registered: the step runs eagerly"
        return None

    def explain(self) -> str:
        lines = [f"torch.compile'd {type(self.optimizer).__name__}.step: {self.traces} recording(s), "
                 f"{self.replays} replay(s)"]
        for plan, reason in self.history:
            if plan is None:
                lines.append(f"  runs eagerly: {reason}")
                continue
            count = sum(1 for _, _, params in plan.groups for _, p in params if p is not None)
            lines.append(f"  {count} parameter(s) in {len(plan.groups)} group(s), {plan.scratch_bytes / 2**20:.2f} "
                         "MiB scratch; guards: the groups, parameters, state buffers and options but lr as "
                         "recorded, every gradient dense and of its parameter's shape and dtype")
        return "\n".join(lines)

    def print_plan(self) -> None:
        print(self.explain())


def optimizers_in(fn, args, kwargs) -> list:
    """The optimizers a function can reach the way ``find_externals`` finds tensors (its closure, the globals it
    names, a bound method's object, its arguments): a compiled function runs their steps compiled."""
    found: dict = {}
    candidates = list(args) + list(kwargs.values())
    for f in (fn, getattr(fn, "__func__", None), getattr(fn, "__wrapped__", None)):
        code = getattr(f, "__code__", None)
        if code is None:
            continue
        candidates += [cell.cell_contents for cell in (f.__closure__ or ()) if _filled(cell)]
        namespace = getattr(f, "__globals__", {})
        candidates += [namespace[name] for name in code.co_names if name in namespace]
        owner = getattr(fn, "__self__", None)
        if owner is not None and hasattr(owner, "__dict__"):
            candidates += list(vars(owner).values())
    for value in candidates:
        if isinstance(value, optimizer_module.Optimizer) and type(value) in _STEPS:
            found[id(value)] = value
    return list(found.values())


def steps_for(optimizers: list, cache: dict, backend: str, recompile_limit: int) -> list:
    """``(optimizer, CompiledStep)`` for each optimizer (one CompiledStep per optimizer, kept in ``cache``)."""
    pairs = []
    for optimizer in optimizers:
        step = cache.get(id(optimizer))
        if step is None or step.optimizer is not optimizer:
            step = cache[id(optimizer)] = CompiledStep(types.MethodType(type(optimizer).step, optimizer), backend,
                                                       recompile_limit)
        pairs.append((optimizer, step))
    return pairs


@contextlib.contextmanager
def installed(pairs: list):
    """For the duration of a compiled function's call, ``optimizer.step`` is its CompiledStep (an instance
    attribute over the class's method; an instance that already has its own ``step`` is left alone)."""
    done = []
    for optimizer, step in pairs:
        if "step" not in optimizer.__dict__:
            optimizer.__dict__["step"] = step
            done.append(optimizer)
    try:
        yield
    finally:
        for optimizer in done:
            optimizer.__dict__.pop("step", None)


def _filled(cell) -> bool:
    try:
        return cell.cell_contents is not _EMPTY
    except ValueError:  # an empty cell (a name not assigned yet)
        return False


_EMPTY = object()


def is_optimizer_step(model) -> bool:
    """Whether ``model`` is the bound ``step`` of an optimizer (what ``torch.compile(opt.step)`` receives)."""
    owner = getattr(model, "__self__", None)
    return isinstance(owner, optimizer_module.Optimizer) and getattr(model, "__name__", None) == "step"


