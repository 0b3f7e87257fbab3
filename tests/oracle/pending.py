"""PENDING: known defects whose fixes are in flight (the lead empties this list after merging them).

Each entry names its defect and how the fuzzer steps around it, so that runs find NEW defects:
  scope "draw":         the generator does not draw the op (when `pred` is None or true for the draw);
  scope "create_graph": programs that use the op stop after the first-order backward (no create_graph
                        gradients, no second derivative): the defect is in the create_graph path only.
Remove an entry once its fix is merged; `python -m tests.oracle --no-pending` draws everything.
"""

from collections import namedtuple

import numpy as np

Entry = namedtuple("Entry", "defect scope pred", defaults=(None,))


def _zero_dim(shape, args, dtype):
    return len(shape) == 0


def _empty(shape, args, dtype):
    return 0 in shape


def _norm_p1_inf(shape, args, dtype):
    return args.get("p") in ("1", "float('inf')", "-float('inf')")


_CG = "create_graph through relu/leaky_relu/norm(p=1)/where(x>0,x,0) gives requires_grad=False"
_MISSING_INPLACE_VIEW = "missing unsqueeze_/squeeze_/t_/transpose_/swapdims_/swapaxes_/as_strided_"

PENDING = {}


def _correction_ge_n(shape, args, dtype):
    """std/var whose correction leaves no degrees of freedom (the reduced size <= correction)."""
    dimkw = args.get("dimkw", "")
    if "dim=" not in dimkw:
        n = 1
        for k in shape:
            n *= k
    else:
        dims = eval(dimkw.split(", dim=")[1].split(", keepdim")[0])  # noqa: S307 - our own generated source
        dims = dims if isinstance(dims, tuple) else (dims,)
        n = 1
        for d in dims:
            n *= shape[d] if shape and -len(shape) <= d < len(shape) else 1
    return n <= int(args.get("corr", 1))


_NEW = {}
# op name -> its entries (an op may have one per scope)
PENDING = {op: [e] for op, e in PENDING.items()}
for _op, _e in _NEW.items():
    PENDING.setdefault(_op, []).append(_e)


def _msg(x):
    return getattr(x, "msg", "") or ""


def _step_op(outcome):
    return outcome.where.split(" ")[-1] if outcome.where.startswith("step") else ""


# Known failures that depend on the data or on a combination of ops (so no op can be left out for them):
# (defect, predicate(program, outcome, PyTorch's namespace)). A matching failure is counted as pending, not as a disagreement.
KNOWN_OUTCOMES = [
    ("pow(x, number) saving its output; NEW: ops save inputs that need no gradient (fmod(x, y) with y "
     "modified in place after: minitorch raises 'modified by an inplace operation', PyTorch does not)",
     lambda p, o, ns: o.check == "exception" and not o.where.startswith("step") and o.exp is None
     and "modified by an inplace operation" in _msg(o.got)),
    ("NEW: index outputs of max/min/sort modified in place are not detected at backward (PyTorch raises)",
     lambda p, o, ns: o.check == "exception" and o.got is None and "LongTensor" in _msg(o.exp)
     and "modified by an inplace operation" in _msg(o.exp)),
    ("setitem `z[0] = ones(1, 27)` into a (8, 27) tensor (a value with extra leading size-1 dims)",
     lambda p, o, ns: _step_op(o) == "setitem.tensor" and o.exp is None and "can't be broadcast" in _msg(o.got)),
    ("in-place on outputs of split/chunk/unbind through a further view (PyTorch raises, minitorch allows)",
     lambda p, o, ns: o.got is None and "output of a function that returns multiple views" in _msg(o.exp)),
    ("NEW: amax/amin/max() backward at a NaN maximum differs (PyTorch: max() sends the gradient to the NaN "
     "entries, amax gives NaN; minitorch the other way round)",
     lambda p, o, ns: o.check in ("grad", "grad create_graph", "gradgrad")
     and any(s.op in ("torch.amax", "torch.amin", "max.all", "min.all") for s in p.steps)
     and (np.isnan(o.exp["values"]).any() or np.isnan(o.got["values"]).any())),
    ("NEW: double backward through an op that saves its output, applied in place to a view (v = x * 1; "
     "v[...].exp_()): the saved output unpacks with the in-place node as grad_fn instead of the view's "
     "CopySlices history, so the second derivative raises 'backward through the graph a second time'",
     lambda p, o, ns: o.check == "exception" and o.exp is None and "graph a second time" in _msg(o.got)),
    ("PyTorch saves sgn's result for its (zero) real gradient, so an in-place op on it raises at backward; "
     "minitorch saves nothing there",
     lambda p, o, ns: o.got is None and "modified by an inplace" in _msg(o.exp)
     and ("of Sgn" in _msg(o.exp) or any(s.op in ("torch.sgn", "Tensor.sgn") for s in p.steps))),
    ("NEW: take_along_dim/gather do not save their input (minitorch needs only its shape), so modifying it in "
     "place before backward does not raise as in PyTorch",
     lambda p, o, ns: o.got is None and "modified by an inplace operation" in _msg(o.exp)
     and any(s.op in ("take_along_dim", "gather") for s in p.steps)),
    ("NEW: second derivative of pow at a zero base (0 ** x): PyTorch NaN (log(0) under its masked_fill), "
     "minitorch 0",
     lambda p, o, ns: o.check == "gradgrad" and np.isnan(o.exp["values"]).any()
     and not np.isnan(o.got["values"]).any() and any(s.op in ("torch.pow", "rpow.op", "op**") for s in p.steps)),
    ("norm/vector_norm second derivative at 0 (PyTorch NaN, minitorch 0; norm create_graph is being fixed)",
     lambda p, o, ns: o.check == "gradgrad" and np.isnan(o.exp["values"]).any()
     and not np.isnan(o.got["values"]).any() and any(s.op in ("norm", "linalg.vector_norm") for s in p.steps)),
    ("NEW: relu backward at a NaN input gives 0 (PyTorch's threshold_backward passes the gradient: x <= 0 is "
     "false at NaN)",
     lambda p, o, ns: o.check in ("grad", "grad create_graph", "gradgrad")
     and any(s.op in ("torch.relu", "Tensor.relu", "F.relu", "Tensor.relu_") and _has_nan(ns, s.inputs[0])
             for s in p.steps)),
    ("NEW: prod backward of an empty slice under create_graph gives requires_grad=False",
     lambda p, o, ns: o.check == "grad create_graph" and "requires_grad False" in o.failure
     and any(s.op == "torch.prod" for s in p.steps)),
    ("atan2 grad at (0,0)",
     lambda p, o, ns: o.check in ("grad", "grad create_graph", "gradgrad")
     and any(s.op == "torch.atan2" for s in p.steps) and np.isnan(o.got["values"]).any()),
    ("NEW: gradients through non-finite forward values (inf, nan) differ between NaN, +-inf and 0 (the order of "
     "inf * 0 in backward formulas: cumprod of [nan], celu(nan), softsign(inf) after reciprocal(0), ...)",
     lambda p, o, ns: o.check in ("grad", "grad create_graph", "gradgrad") and o.failure.endswith("values differ")
     and _differs_only_non_finite(o.exp["values"], o.got["values"]) and _forward_non_finite(p, ns)),
    ("NEW: PyTorch treats a leaf whose empty view received a value requiring grad as a leaf requiring grad "
     "(its in-place ops then raise); minitorch does not",
     lambda p, o, ns: o.got is None and "a leaf Variable that requires grad" in _msg(o.exp)
     and any(0 in lf.data.shape for lf in p.leaves)),
]


def _has_nan(ns, ref):
    """Whether the PyTorch value `ref` (in the generation namespace) holds a NaN."""
    try:
        return bool(eval(ref, ns).isnan().any())  # noqa: S307 - a reference of our own program
    except Exception:  # noqa: BLE001
        return False


def _differs_only_non_finite(exp, got):
    """Where the gradients differ, one of them is NaN or infinite."""
    e, g = exp.astype(np.float64), got.astype(np.float64)
    both = np.isfinite(e) & np.isfinite(g)
    return not np.any(both & ~np.isclose(e, g, rtol=1e-3, atol=1e-5))


def _forward_non_finite(prog, ns):
    """Some value of PyTorch's forward pass (a leaf or a step's output) holds an inf or a NaN."""
    names = [lf.name for lf in prog.leaves] + [s.out for s in prog.steps]
    for name in names:
        vals = ns.get(name)
        for v in vals if isinstance(vals, (tuple, list)) else [vals]:
            if hasattr(v, "is_floating_point") and v.is_floating_point() and not bool(v.isfinite().all()):
                return True
    return False


def known_outcome(prog, outcome, ns):
    """The PENDING defect a failure is an instance of, or None (ns: PyTorch's namespace of the run)."""
    for defect, pred in KNOWN_OUTCOMES:
        try:
            if pred(prog, outcome, ns):
                return defect
        except Exception:  # noqa: BLE001 - a predicate that does not apply
            continue
    return None


def pending_reason(op, shape, args, dtype, scope="draw"):
    """The defect an op draw would hit in `scope`, or None."""
    for entry in PENDING.get(op, ()):
        if entry.scope == scope and (entry.pred is None or entry.pred(shape, args, dtype)):
            return entry.defect
    return None


# test_errors.py cases (by label) whose exception type is a known defect in flight
PENDING_ERRORS = {}
