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


def _step_op(outcome):
    return outcome.where.split(" ")[-1] if outcome.where.startswith("step") else ""


# Known failures that depend on the data or on a combination of ops (so no op can be left out for them):
# (defect, predicate(program, outcome, PyTorch's namespace)). A matching failure is counted as pending, not as a disagreement.
KNOWN_OUTCOMES = [
    ("DELIBERATE (docs/differences.md, 'Gradients through infinities'): gradients through non-finite values "
     "(inf, nan) differ between NaN, +-inf and 0 where PyTorch's double "
     "backward is a fused formula minitorch composes differently: sigmoid, gelu, hardswish with an infinite "
     "incoming gradient; lgamma/digamma at their poles",
     lambda p, o, ns: o.check in ("grad", "grad create_graph", "gradgrad") and o.failure.endswith("values differ")
     and _differs_only_non_finite(o.exp["values"], o.got["values"]) and _forward_non_finite(p, ns)),
    ("DELIBERATE (docs/differences.md, 'dtypes and numbers'): mish's second derivative where exp(x) overflows: "
     "PyTorch differentiates log1p(exp(x)), which gives inf / inf = NaN there; minitorch's softplus is finite",
     lambda p, o, ns: o.check in ("grad create_graph", "gradgrad") and o.failure.endswith("values differ")
     and _differs_only_non_finite(o.exp["values"], o.got["values"]) and _mish_input_overflows(p, ns)),
    ("DELIBERATE (docs/differences.md, 'dtypes and numbers'): the sign of a zero remainder: PyTorch's scalar "
     "kernel keeps fmod's sign (remainder(-1., 1.) is -0.0; its vectorized kernel gives 0.0), minitorch's is the "
     "divisor's, as numpy's; gradients through that zero (a ** 0.5) then differ between -inf, inf and NaN",
     lambda p, o, ns: o.check in ("grad", "grad create_graph", "gradgrad") and o.failure.endswith("values differ")
     and _differs_only_non_finite(o.exp["values"], o.got["values"]) and _remainder_zero_sign(p, ns)),
    ("DELIBERATE (docs/differences.md, 'dtypes and numbers'): the sign of a zero remainder, in values: a reciprocal "
     "of that zero is -inf in one library and inf in the other, and what is computed from it (nan_to_num's "
     "-max or max, a product with it) differs accordingly",
     lambda p, o, ns: o.check in ("value", "final") and "values differ" in o.failure and _remainder_zero_sign(p, ns)),
    ("DELIBERATE (docs/differences.md, 'dtypes and numbers'): a matrix product whose partial sums overflow: inf, "
     "nan or a finite value depending on the order of accumulation (BLAS blocking, FMA), in either library",
     lambda p, o, ns: o.check == "value" and "values differ" in o.failure
     and _product_overflows(p, ns, o.where.split(" ")[1])),
    ("DELIBERATE (docs/differences.md, 'Gradients through infinities'): hardtanh's gradient at a NaN input: "
     "PyTorch's vectorized kernel gives 0, its scalar tail (and minitorch) pass the incoming gradient, so PyTorch's "
     "answer depends on where the element falls in its SIMD loop",
     lambda p, o, ns: o.check in ("grad", "grad create_graph", "gradgrad") and o.failure.endswith("values differ")
     and _hardtanh_reads_nan(p, ns)),
]


def _differs_only_non_finite(exp, got):
    """Where the gradients differ, one of them is NaN or infinite."""
    e, g = exp.astype(np.float64), got.astype(np.float64)
    both = np.isfinite(e) & np.isfinite(g)
    return not np.any(both & ~np.isclose(e, g, rtol=1e-3, atol=1e-5))


def _mish_input_overflows(prog, ns):
    """An F.mish step reads an x whose exp overflows in its dtype."""
    for s in prog.steps:
        if s.op == "F.mish":
            x = eval(s.inputs[0], ns)  # noqa: S307 - a variable reference of our own program
            limit = 88.72 if str(x.dtype) == "torch.float32" else 709.78
            if bool((x.detach() > limit).any()):
                return True
    return False


_PRODUCTS = ("matmul", "op@", "mm", "bmm", "mv", "dot", "einsum", "F.linear")


def _product_overflows(prog, ns, out: str) -> bool:
    """The matrix-product step writing ``out`` multiplies numbers whose products or partial sums can overflow
    (the largest magnitudes' product times the summed length exceeds the dtype's max): whether the result is
    inf, nan or finite then depends on the order the kernel accumulates in (BLAS's blocking, FMA)."""
    for s in prog.steps:
        if s.out == out and s.op in _PRODUCTS:
            a, b = (eval(name, ns).detach().double() for name in s.inputs[:2])  # noqa: S307 - our own program
            largest = float(np.finfo(str(eval(s.inputs[0], ns).dtype).replace("torch.", "")).max)
            extent = max(a.shape[-1] if a.dim() else 1, 1)
            return float(a.abs().max()) * float(b.abs().max()) * extent > largest
    return False


def _hardtanh_reads_nan(prog, ns):
    """An F.hardtanh or F.relu6 step reads a NaN."""
    for s in prog.steps:
        if s.op in ("F.hardtanh", "F.relu6"):
            x = eval(s.inputs[0], ns)  # noqa: S307 - a variable reference of our own program
            if bool(x.detach().isnan().any()):
                return True
    return False


def _remainder_zero_sign(prog, ns):
    """A remainder step's output has a zero whose sign is not its divisor's (PyTorch's scalar kernel)."""
    for s in prog.steps:
        if "remainder" in s.op and len(s.inputs) > 1:
            out, b = ns.get(s.out), eval(s.inputs[1], ns)  # noqa: S307 - our own program's references
            out = out.detach().numpy()
            b = np.broadcast_to(b.detach().numpy() if hasattr(b, "detach") else np.asarray(b), out.shape)
            if np.any((out == 0) & (np.signbit(out) != np.signbit(b))):
                return True
    return False


def _forward_non_finite(prog, ns):
    """Some value of PyTorch's forward pass (a leaf or a step's output) holds an inf or a NaN, or so does a
    first-order gradient that a second derivative goes through (``g``: pow(0, 0.5)'s gradient is inf)."""
    names = [lf.name for lf in prog.leaves] + [s.out for s in prog.steps] + ["g"]
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
