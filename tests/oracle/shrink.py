"""Shrink a failing program to a minimal one that fails the same way, and print it as runnable Python.

"The same way" is the Outcome's key: the same op (or gradient phase) and the same kind of check. Passes,
repeated until none makes progress: drop the gradient phase, drop steps (with the steps that read them),
drop unused leaves, drop loss terms and set loss weights to one, simplify leaf values (round, then small
integers), and shrink leaf shapes one dim at a time.
"""

import copy

import numpy as np

from .program import VAR, compare, exec_line, is_tensor, namespace


def _uses(step):
    return set(VAR.findall(step.source())) - {step.out}


def _without_steps(prog, drop):
    """prog less the steps named in drop and every step that reads them."""
    drop = set(drop)
    keep = []
    for s in prog.steps:
        if s.out in drop or _uses(s) & drop:
            drop.add(s.out)
        else:
            keep.append(s)
    p = copy.deepcopy(prog)
    p.steps = keep
    p.weights = {r: w for r, w in prog.weights.items() if VAR.match(r).group(1) not in drop}
    return p


def reweight(prog, torch_mod):
    """Loss weights that fit the outputs' current shapes (kept where the shape is unchanged, else ones)."""
    ns = namespace(torch_mod, prog)
    for label, src in prog.lines():
        exec_line(src, ns, label.split(" ")[1] if label.startswith("step") else None)
    weights = {}
    for ref, w in prog.weights.items():
        try:
            t = eval(ref, ns)  # noqa: S307 - a reference of our own program
        except Exception:  # noqa: BLE001
            continue
        if is_tensor(t) and t.requires_grad and t.is_floating_point():
            weights[ref] = w if w.shape == tuple(t.shape) else np.ones(tuple(t.shape))
    prog.weights = weights
    prog.weights2 = {k: (w if w.shape == lf.data.shape else np.ones(lf.data.shape))
                     for k, w in prog.weights2.items() for lf in prog.leaves if lf.name == k and lf.requires_grad}
    return prog


def _candidates(prog, torch_mod):
    if prog.grad_phase:
        p = copy.deepcopy(prog)
        p.grad_phase = False
        yield p
    if prog.weights2:
        p = copy.deepcopy(prog)
        p.weights2 = {}
        yield p
    for s in reversed(prog.steps):
        yield _without_steps(prog, [s.out])
    used = set()
    for s in prog.steps:
        used |= _uses(s)
    used |= {VAR.match(r).group(1) for r in prog.weights}
    for i, (v, x, _) in enumerate(prog.inputs):
        if v not in used:
            p = copy.deepcopy(prog)
            del p.inputs[i]
            p.leaves = [lf for lf in p.leaves if lf.name != x]
            p.weights2.pop(x, None)
            yield p
    for ref in list(prog.weights):
        if len(prog.weights) > 1:
            p = copy.deepcopy(prog)
            del p.weights[ref]
            yield p
        if not np.all(prog.weights[ref] == 1):
            p = copy.deepcopy(prog)
            p.weights[ref] = np.ones_like(prog.weights[ref])
            yield p
    for k in list(prog.weights2):
        if not np.all(prog.weights2[k] == 1):
            p = copy.deepcopy(prog)
            p.weights2[k] = np.ones_like(prog.weights2[k])
            yield p
    for i, lf in enumerate(prog.leaves):
        if lf.requires_grad:
            p = copy.deepcopy(prog)
            p.leaves[i].requires_grad = False
            p.weights2.pop(lf.name, None)
            yield reweight(p, torch_mod)
        for simpler in (np.round(lf.data, 1), np.round(lf.data), np.sign(lf.data), np.zeros_like(lf.data)):
            finite = np.isfinite(lf.data)
            simpler = np.where(finite, simpler, lf.data)
            if not np.array_equal(simpler, lf.data, equal_nan=True):
                p = copy.deepcopy(prog)
                p.leaves[i].data = simpler
                yield p
        for d, n in enumerate(lf.data.shape):
            if n > 1:
                p = copy.deepcopy(prog)
                p.leaves[i].data = np.take(lf.data, range(n - 1), axis=d)
                yield reweight(p, torch_mod)


def shrink(prog, outcome, torch_mod, mini_mod, budget=400):
    """The smallest program found (within `budget` runs) that fails with outcome's key."""
    key = outcome.key
    best, best_out = prog, outcome
    runs = 0
    progress = True
    while progress and runs < budget:
        progress = False
        for cand in _candidates(best, torch_mod):
            runs += 1
            try:
                out = compare(cand, torch_mod, mini_mod)
            except Exception:  # noqa: BLE001 - a candidate the harness cannot run is not smaller
                out = None
            if out is not None and out.failure and out.key == key:
                best, best_out = cand, out
                progress = True
                break
            if runs >= budget:
                break
    return best, best_out


def _show(x):
    if isinstance(x, dict):
        vals = np.array2string(x["values"], precision=8, threshold=60)
        return f"tensor({vals}, dtype={x['dtype']}, shape={x['shape']}, requires_grad={x['requires_grad']})"
    if isinstance(x, list):
        return "(" + ", ".join(_show(e) for e in x) + ")"
    return repr(x)


def report(prog, outcome):
    """The failure as text: what differs, both results, and the program as paste-able Python."""
    src = prog.source("torch").replace("import torch.nn.functional as F\n",
                                       "import torch.nn.functional as F\n"
                                       "# or: import minitorch as torch; import minitorch.nn.functional as F\n")
    return (f"DISAGREEMENT at {outcome.where} ({outcome.check}): minitorch {outcome.failure}\n"
            f"  PyTorch:   {_show(outcome.exp)}\n"
            f"  minitorch: {_show(outcome.got)}\n"
            f"--- program (seed-independent) ---\n{src}")
