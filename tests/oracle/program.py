"""Random straight-line programs: generate, run against a module (torch or minitorch), compare.

A program is Python source, line by line: leaves (``x0 = torch.tensor(...)``), the inputs derived from them
(``v0 = x0.transpose(0, -1)``: non-contiguous inputs), then steps (``v3 = torch.sum(v1, dim=0)``), then a
gradient phase (a random-weighted sum of the float outputs, ``backward``, ``autograd.grad`` with
``create_graph=True`` and a second derivative). The same lines run with ``torch`` bound to PyTorch or to
minitorch; every line is compared (exception type, dtype, shape, requires_grad, contiguity of views, values
with NaN positions) and the first disagreement is the program's failure.

Generation runs the program in PyTorch as it goes (PyTorch's results give the shapes the next step draws
from), so generating a program and its oracle run are the same pass.
"""

import copy
import re
from dataclasses import dataclass, field

import numpy as np

from . import differences
from .ops import FLOAT, OPS
from .pending import pending_reason

VAR = re.compile(r"\b([vx]\d+)\b")
TOL = {  # (rtol, atol): atol scales with the largest expected magnitude (at least 1)
    # float64 gradients: atol 1e-7, as PyTorch's own float64 kernels use float32 constants in places
    # (hardsigmoid's backward multiplies by float32(1/6): a relative error of 3e-8)
    "float64": {"value": (1e-7, 1e-10), "grad": (1e-6, 1e-7)},
    "float32": {"value": (2e-4, 2e-6), "grad": (2e-3, 2e-5)},
}


@dataclass
class Leaf:
    name: str            # x<k>
    data: np.ndarray     # float64 values (cast by torch.tensor(..., dtype=))
    dtype: str
    requires_grad: bool
    view: str = ""       # "", ".transpose(0, -1)", "[::2]": the input v<k> is a view of the leaf

    def source(self, literal):
        """A leaf that is not a view (PyTorch treats views of a temporary specially in places): nested
        lists give the shape, an empty shape is spelled out."""
        shape = tuple(self.data.shape)
        rg = ".requires_grad_()" if self.requires_grad else ""
        if 0 in shape:
            return f"{self.name} = torch.zeros({shape}, dtype=torch.{self.dtype}){rg}"
        data = repr(self.data.tolist()) if literal else f"_D['{self.name}']"
        return f"{self.name} = torch.tensor({data}, dtype=torch.{self.dtype}){rg}"


@dataclass
class Step:
    out: str             # v<k>
    op: str              # key into OPS
    inputs: tuple        # variable references ("v1", "v5[0]")
    args: dict           # source strings

    def source(self):
        o = OPS[self.op]
        fields = dict(self.args)
        for key, ref in zip("abc", self.inputs):
            fields[key] = ref
        text = o.template.format(**fields)
        if text.startswith("!"):
            return f"{text[1:]}\n{self.out} = {self.inputs[0]}"
        return f"{self.out} = {text}"


@dataclass
class Program:
    dtype: str
    leaves: list
    inputs: list         # (v-name, leaf name, view suffix) for the leaf-derived inputs
    steps: list
    weights: dict = field(default_factory=dict)   # ref -> np.ndarray for the loss
    weights2: dict = field(default_factory=dict)  # leaf -> np.ndarray for the second-order loss
    grad_phase: bool = True
    first_order_only: bool = False  # a create_graph-scoped PENDING op is in the program (pending.py)

    def lines(self, literal=False):
        """(label, source) per line; label names the step for the report."""
        out = [(f"leaf {lf.name}", lf.source(literal)) for lf in self.leaves]
        out += [(f"input {v}", f"{v} = {x}{view}") for v, x, view in self.inputs]
        out += [(f"step {s.out} {s.op}", s.source()) for s in self.steps]
        return out

    def grad_lines(self, literal=False):
        if not self.grad_phase or not self.weights:
            return []
        leaves = [lf.name for lf in self.leaves if lf.requires_grad]
        if not leaves:
            return []

        def const(key, arr):
            data = repr(arr.tolist()) if literal else f"_W['{key}']"
            return f"torch.tensor({data}, dtype=torch.{self.dtype}).reshape({tuple(arr.shape)})"

        terms = " + ".join(f"({ref} * {const(ref, w)}).sum()" for ref, w in self.weights.items())
        lst = "[" + ", ".join(leaves) + "]"
        out = [("loss", f"L = {terms}"),
               ("backward", "L.backward(retain_graph=True)")]
        if self.first_order_only:
            return out
        out.append(("grad create_graph", f"g = torch.autograd.grad(L, {lst}, create_graph=True, allow_unused=True)"))
        if self.weights2:
            idx = {name: i for i, name in enumerate(leaves)}
            terms2 = " + ".join(f"(g[{idx[k]}] * {const(k, w)}).sum()" for k, w in self.weights2.items())
            out.append(("second-order loss", f"L2 = {terms2}"))
            out.append(("second derivative", f"gg = torch.autograd.grad(L2, {lst}, allow_unused=True)"))
        return out

    def source(self, module):
        head = "import torch\nimport torch.nn.functional as F\n" if module == "torch" else \
            "import minitorch as torch\nimport minitorch.nn.functional as F\n"
        body = [src for _, src in self.lines(literal=True) + self.grad_lines(literal=True)]
        return head + "\n".join(body) + "\n"


# --- running -------------------------------------------------------------------------------------------------
_CODE = {}


def _compile(src):
    code = _CODE.get(src)
    if code is None:
        if len(_CODE) > 20000:
            _CODE.clear()
        code = _CODE[src] = compile(src, "<oracle>", "exec")
    return code


class Failed:
    """An exception a line raised (its type name is what gets compared)."""

    def __init__(self, exc):
        self.type = type(exc).__name__
        self.msg = str(exc).split("\n")[0][:200]

    def __repr__(self):
        return f"{self.type}: {self.msg}"


def namespace(module, prog):
    ns = {"torch": module, "F": module.nn.functional,
          "_D": {lf.name: lf.data.tolist() for lf in prog.leaves},
          "_W": {k: w.tolist() for k, w in list(prog.weights.items()) + list(prog.weights2.items())}}
    return ns


SKIPPED = "skipped"


def exec_line(src, ns, out=None):
    """Run one line; None, or the Failed it raised, or SKIPPED when it reads a variable that failed.

    A failed line leaves `out` bound to its Failed (a failed statement, such as setitem, leaves its input
    unchanged and `out` bound to it), so later lines that read it are skipped in both modules alike.
    """
    for name in VAR.findall(src):
        if name != out and isinstance(ns.get(name), Failed):
            if out:
                ns[out] = Failed(RuntimeError(SKIPPED))
            return SKIPPED
    try:
        exec(_compile(src), ns)
    except Exception as e:  # noqa: BLE001 - the exception type is what the oracle compares
        err = Failed(e)
        if out:
            last = src.rsplit("\n", 1)[-1]
            ns[out] = err
            if "\n" in src and last.startswith(f"{out} = "):
                try:  # a failed statement: the step's value is its unchanged input
                    exec(_compile(last), ns)
                except Exception:  # noqa: BLE001
                    pass
        return err
    return None


# --- snapshots and comparison ------------------------------------------------------------------------------
def is_tensor(x):
    return hasattr(x, "dtype") and hasattr(x, "is_contiguous") and hasattr(x, "detach")


def snap(x, contig=False):
    """A comparable summary of a value (tensors: dtype, shape, requires_grad, values)."""
    if isinstance(x, Failed) or x is None:
        return x
    if is_tensor(x):
        try:
            arr = x.detach().numpy().copy()
        except RuntimeError:  # PyTorch's ZeroTensor (an efficient zero gradient): all zeros. Its
            # numpy(force=True) can crash the process (a 0-dim float32 one did), so build the zeros here.
            arr = np.zeros(tuple(x.shape), dtype=str(x.dtype).replace("torch.", ""))
        return {"dtype": str(x.dtype).replace("torch.", ""), "shape": tuple(x.shape),
                "requires_grad": bool(x.requires_grad),
                "contiguous": bool(x.is_contiguous()) if contig else None, "values": arr}
    if isinstance(x, (tuple, list)):
        return [snap(e, contig) for e in x]
    return x


def close(exp, got, dtype, kind):
    """Values agree: same NaN positions, same infinities, finite values within the dtype's tolerance."""
    if exp.shape != got.shape:
        return False
    if exp.dtype.kind not in "fc":
        return np.array_equal(exp, got)
    rtol, atol = TOL.get(dtype, TOL["float32"])[kind]
    e = exp.astype(np.float64)
    g = got.astype(np.float64)
    if not np.array_equal(np.isnan(e), np.isnan(g)):
        return False
    fin = np.isfinite(e)
    if not np.array_equal(e[~fin & ~np.isnan(e)], g[~fin & ~np.isnan(e)]):
        return False
    if not fin.any():
        return True
    scale = max(1.0, float(np.abs(e[fin]).max()))
    return bool(np.all(np.abs(e[fin] - g[fin]) <= atol * scale + rtol * np.abs(e[fin])))


def diff(exp, got, kind="value", index_ok=None):
    """None when exp (PyTorch) and got (minitorch) agree, else a short description of the first difference."""
    if isinstance(exp, Failed) or isinstance(got, Failed):
        if isinstance(exp, Failed) and isinstance(got, Failed):
            return None if exp.type == got.type else f"exception {got.type} != PyTorch's {exp.type}"
        if isinstance(exp, Failed):
            return f"no exception, PyTorch raises {exp.type}"
        return f"raises {got.type}, PyTorch does not"
    if isinstance(exp, list):
        if not isinstance(got, list) or len(exp) != len(got):
            return f"returns {type(got).__name__} of {len(got) if isinstance(got, list) else '-'}, " \
                   f"PyTorch {len(exp)} values"
        for i, (e, g) in enumerate(zip(exp, got)):
            d = diff(e, g, kind, index_ok if i == 1 else None)
            if d:
                return f"[{i}]: {d}"
        return None
    if isinstance(exp, dict):
        if not isinstance(got, dict):
            return f"returns {type(got).__name__}, PyTorch a tensor"
        for key in ("dtype", "shape", "requires_grad", "contiguous"):
            if exp[key] != got[key]:
                return f"{key} {got[key]} != PyTorch's {exp[key]}"
        if not close(exp["values"], got["values"], exp["dtype"], kind):
            if index_ok is not None and index_ok(exp["values"], got["values"]):
                return None
            return "values differ"
        return None
    if exp is None or got is None:
        return None if exp is got else f"{got!r} != PyTorch's {exp!r}"
    if type(exp) is not type(got) and not (isinstance(exp, (int, float)) and isinstance(got, (int, float))):
        return f"returns {type(got).__name__}, PyTorch {type(exp).__name__}"
    if isinstance(exp, float) and isinstance(got, float) and np.isclose(exp, got, equal_nan=True):
        return None
    return None if exp == got else f"{got!r} != PyTorch's {exp!r}"


def tie_checker(step, ns_torch_inputs, mod_input):
    """For index outputs (sort/topk/max/argmax ...): indices may differ only where the values tie.

    Deliberate difference: see differences.TIES. Accept minitorch's indices when the input's values at them
    equal the input's values at PyTorch's indices (then the two index sets differ only among equal values).
    """
    o = OPS[step.op]
    if o.kind != "index" or mod_input is None:
        return None
    src = mod_input
    dim = o.index_dim(step.args) if o.index_dim else None

    def same(a, b):  # values equal within the dtype's tolerance (near-ties: one ulp apart in float32)
        return a.shape == b.shape and close(a, b, str(src.dtype), "value")

    def ok(exp_idx, got_idx):
        accepted = _ok(exp_idx, got_idx)
        ok.used |= accepted
        return accepted

    ok.used = False

    def _ok(exp_idx, got_idx):
        if exp_idx.shape != got_idx.shape or exp_idx.dtype.kind not in "iu":
            return False
        x = src.reshape(-1) if dim is None or src.ndim == 0 else src
        if dim is None or src.ndim == 0:
            pick = lambda i: x[i]  # noqa: E731
        else:
            ei, gi = exp_idx, got_idx
            if ei.ndim < x.ndim:  # keepdim=False reductions
                ei, gi = np.expand_dims(ei, dim), np.expand_dims(gi, dim)
            if ei.ndim != x.ndim and ei.size == x.size:  # (reshaped in place later, unsqueeze_: the op's shape)
                ei, gi = ei.reshape(x.shape), gi.reshape(x.shape)
            if ei.ndim != x.ndim:  # reshaped in place to something else: the ties cannot be told apart
                return False
            if (gi < 0).any() or (gi >= x.shape[dim]).any():
                return False
            return same(np.take_along_axis(x, ei, dim), np.take_along_axis(x, gi, dim))
        if (got_idx < 0).any() or (got_idx >= x.size).any():
            return False
        return same(np.asarray(pick(exp_idx)), np.asarray(pick(got_idx)))

    return ok


@dataclass
class Outcome:
    failure: str | None = None   # description of the first disagreement
    where: str = ""              # the line's label
    check: str = ""              # exception | value | grad | gradgrad | final
    diverged: bool = False       # a value differed only by rounding of its inputs (checked op-locally)
    zero_dependence: bool = False  # a create_graph gradient requires grad where PyTorch's does not
    partial_write: bool = False    # PyTorch wrote part of a failed in-place op's result
    unimplemented_in_pytorch: bool = False  # PyTorch raised "derivative ... is not implemented"
    layout_inherited: bool = False  # a view's input is contiguous in one module only (contiguity not compared)
    float32_rounding: bool = False  # a float32 gradient differed within PyTorch's own float32 rounding error
    overlapping_write: bool = False  # an in-place op wrote a tensor whose elements share memory (as_strided windows)
    gelu_of_inf: bool = False  # PyTorch's vectorized float32 gelu gives NaN at +inf (minitorch: inf)
    forward_rounding: bool = False  # a gradient PyTorch also gives when it runs on minitorch's forward values
    empty_structure: bool = False  # an empty gradient is None, or lacks requires_grad, in one library only
    exp: object = None
    got: object = None

    @property
    def key(self):
        return (self.where.split(" ")[-1] if self.where.startswith("step") else self.where) + " / " + self.check


def input_layouts_differ(ns_t, ns_m, step):
    """The view's input is laid out differently in the two modules (the strides of its dims longer than 1
    differ): the view's contiguity inherits that. (Ops minitorch does not yet lay out as PyTorch does are
    listed in docs/testing.md; the input's contiguity is not compared, only that of views.)"""
    try:
        a, b = eval(step.inputs[0], ns_t), eval(step.inputs[0], ns_m)  # noqa: S307 - our own reference
        longer = [d for d, n in enumerate(a.shape) if n > 1]
        return [a.stride()[d] for d in longer] != [b.stride()[d] for d in longer] and a.numel() > 1
    except Exception:  # noqa: BLE001
        return False


def run_step(ns, label, src, step):
    """Run a line: (error, the first input before the step for index and in-place ops, the step's value)."""
    if step is None:
        return exec_line(src, ns), None, None
    before = _first_tensor_input(ns, step) if OPS[step.op].kind in ("index", "inplace") else None
    err = exec_line(src, ns, step.out)
    return err, before, (None if err else _snap_step(ns, step, OPS[step.op].kind == "view"))


def overlapping_target(ns, step):
    """The in-place op's first input has elements that share memory without a stride-0 dim (overlapping
    as_strided or unfold windows): PyTorch writes it element by element, so its result depends on its loop
    order (its docs call it undefined; differences.OVERLAPPING_WRITE). An expanded one raises in both."""
    try:
        x = eval(step.inputs[0], ns)  # noqa: S307 - a variable reference of our own program
    except Exception:  # noqa: BLE001
        return False
    if not is_tensor(x) or x.numel() < 2:
        return False
    dims = sorted((s, n) for n, s in zip(x.shape, x.stride()) if n > 1)
    extent = 1
    for s, n in dims:
        if s < extent:
            return True
        extent += s * (n - 1)
    return False


def gelu_of_inf(ns, step, exp, got):
    """PyTorch's vectorized float32 kernel of the exact gelu returns NaN at +inf (its scalar path, used for one
    element, and its float64 kernel return inf, as minitorch does: differences.GELU_OF_INF). True when the
    values differ only there."""
    if step.op != "F.gelu" or not isinstance(exp, dict) or exp["dtype"] != "float32":
        return False
    try:
        x = eval(step.inputs[0], ns).detach().numpy()  # noqa: S307 - a variable reference of our own program
    except Exception:  # noqa: BLE001
        return False
    e, g = exp["values"], got["values"]
    at_inf = np.isposinf(x) if x.shape == e.shape else np.zeros(e.shape, bool)
    return bool(at_inf.any() and np.all(np.isnan(e[at_inf]) & np.isposinf(g[at_inf]))
                and close(e[~at_inf], g[~at_inf], "float32", "value"))


def partial_write(ns, step, before):
    """PyTorch's failed in-place op may have written part of its result (scatter_ with an index out of
    range writes the entries before it); minitorch leaves a failed op's input unchanged, by design."""
    now = _first_tensor_input(ns, step)
    return before is not None and now is not None and not np.array_equal(before, now, equal_nan=True)


def _snap_step(ns, step, contig):
    return snap(ns.get(step.out), contig)


def _first_tensor_input(ns, step):
    try:
        x = eval(step.inputs[0], ns)  # noqa: S307 - a variable reference of our own program
    except Exception:  # noqa: BLE001
        return None
    return x.detach().numpy().copy() if is_tensor(x) else None


def compare(prog, torch_mod, mini_mod, torch_ref=None):
    """Run prog in both modules and return the Outcome (failure None when they agree)."""
    ns_t = torch_ref if torch_ref is not None else namespace(torch_mod, prog)
    ns_m = namespace(mini_mod, prog)
    res = Outcome()
    ties = {}
    layout_values = set()  # as_strided views whose values follow a layout that differs (layout_inherited)
    labels = prog.lines()
    steps = {f"step {s.out} {s.op}": s for s in prog.steps}
    for label, src in labels:
        step = steps.get(label)
        out = step.out if step is not None else None
        if torch_ref is not None:  # PyTorch ran this line while the program was generated
            et, before_t, exp = torch_ref["_results"].get(label, (None, None, None))
        else:
            et, before_t, exp = run_step(ns_t, label, src, step)
        em = exec_line(src, ns_m, out)
        if et == SKIPPED and em == SKIPPED:
            continue
        d = diff(et, em) if (et or em) else None
        if d:
            return Outcome(d, label, "exception", exp=et, got=em)
        if et and step is not None and OPS[step.op].kind == "inplace" and torch_ref is None:
            res.partial_write |= partial_write(ns_t, step, before_t)
        if et and step is not None and OPS[step.op].kind == "inplace" and torch_ref is not None:
            res.partial_write |= torch_ref["_partial"].get(label, False)
        if et or step is None:
            continue
        got = _snap_step(ns_m, step, OPS[step.op].kind == "view")
        if OPS[step.op].kind == "view" and isinstance(exp, list) and isinstance(got, list) \
                and input_layouts_differ(ns_t, ns_m, step):  # split/chunk/unbind: each piece inherits it
            exp = [{**e, "contiguous": None} if isinstance(e, dict) else e for e in exp]
            got = [{**e, "contiguous": None} if isinstance(e, dict) else e for e in got]
            res.layout_inherited = True
        if OPS[step.op].kind == "view" and isinstance(exp, dict) and input_layouts_differ(ns_t, ns_m, step):
            exp, got = {**exp, "contiguous": None}, {**got, "contiguous": None}
            res.layout_inherited = True
            if step.op == "as_strided":  # it reads memory in storage order: the values follow the layout
                got = {**got, "values": exp["values"]}
                layout_values.add(step.out)
        ties[step.out] = tie_checker(step, ns_t, before_t)
        d = diff(exp, got, "value", ties[step.out])
        if ties[step.out] is not None and ties[step.out].used:
            # indices differ among ties (differences.TIES): what depends on them is checked op by op, and
            # the gradients (routed by those indices) for structure only
            res.diverged = True
        if d and "values differ" in d and OPS[step.op].kind == "inplace" and overlapping_target(ns_m, step):
            res.overlapping_write = res.diverged = True  # later values: op by op; gradients: structure only
            continue
        if d == "values differ" and gelu_of_inf(ns_m, step, exp, got):
            res.gelu_of_inf = res.diverged = True  # what follows: op by op, gradients for structure only
            continue
        if d and "values differ" in d and op_locally_right(prog, step, mini_mod, torch_mod, got):
            res.diverged = True
            continue
        if d:
            return Outcome(d, label, "exception" if "exception" in d else "value", exp=exp, got=got)
    # the final state of every variable (in-place ops write through views into bases)
    for name in [lf.name for lf in prog.leaves] + [s.out for s in prog.steps]:
        exp, got = snap(ns_t.get(name)), snap(ns_m.get(name))
        d = diff(exp, got, "value", ties.get(name))
        if d and name in layout_values and "values differ" in d:
            continue
        if d and res.partial_write and "values differ" in d:
            continue  # PyTorch wrote part of a failed in-place op's result: counted, see partial_write
        if d and not (res.diverged and "values differ" in d):
            return Outcome(d, f"final {name}", "final", exp=exp, got=got)
    return grad_phase(prog, ns_t, ns_m, res, torch_mod)


def float64_reference(prog, torch_mod):
    """PyTorch's gradients of the same float32 program computed in float64 (leaves and weights rounded to
    float32 first, so the inputs are the same numbers): {"x0.grad": snapshot, "g[0]": ..., "gg[0]": ...}."""
    p = copy.deepcopy(prog)
    p.dtype = "float64"
    for lf in p.leaves:
        lf.dtype = "float64"
        lf.data = lf.data.astype(np.float32).astype(np.float64)
    p.weights = {k: w.astype(np.float32).astype(np.float64) for k, w in p.weights.items()}
    p.weights2 = {k: w.astype(np.float32).astype(np.float64) for k, w in p.weights2.items()}
    ns = namespace(torch_mod, p)
    largest = {}  # phase -> the largest finite gradient any node of that backward pass received or sent
    roots = {"backward": "L", "grad create_graph": "L", "second derivative": "L2"}
    phase, seen = [None], set()
    for label, src in p.lines() + p.grad_lines():
        if label in roots:
            phase[0] = label
            _watch_magnitudes(ns.get(roots[label]), largest, phase, seen)
        exec_line(src, ns, label.split(" ")[1] if label.startswith("step") else None)
    out = {"_largest": largest}
    leaves = [lf.name for lf in p.leaves if lf.requires_grad]
    for i, x in enumerate(leaves):
        out[f"{x}.grad"] = snap(getattr(ns.get(x), "grad", None))
        for key in ("g", "gg"):
            vals = ns.get(key)
            if isinstance(vals, (tuple, list)) and i < len(vals):
                out[f"{key}[{i}]"] = snap(vals[i])
    return out


def _watch_magnitudes(root, largest, phase, seen):
    """Hook every node of root's graph (once: ``seen``) to record the largest finite gradient it handles under
    the current ``phase[0]``."""
    fn = getattr(root, "grad_fn", None)
    stack = [fn] if fn is not None else []

    def hook(grad_inputs, grad_outputs):
        for t in tuple(grad_inputs) + tuple(grad_outputs):
            if t is not None and t.numel():
                a = t.detach().abs()
                a = a[a.isfinite()]
                if a.numel():
                    largest[phase[0]] = max(largest.get(phase[0], 0.0), float(a.max()))

    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        node.register_hook(hook)
        stack.extend(nf for nf, _ in node.next_functions)


def within_reference_error(exp, got, ref, largest=0.0):
    """A float32 gradient is as close to the float64 reference as PyTorch's own float32 one is (twice its
    error, plus the float32 tolerance): rounding in a cancelling sum, not a wrong formula. ``largest``: the
    largest gradient the (float64) backward pass handled on the way; float32 rounds each step to about 2^-24
    of what it handles, so a result far smaller than that may be off by a few of those ulps (PyTorch's own
    error is then small only by luck of its evaluation order; seed 79838: 1 / x^2 terms of 8000 cancelling
    to 0.05)."""
    if not (isinstance(exp, dict) and isinstance(got, dict) and isinstance(ref, dict)):
        return False
    e, g, r = (x["values"].astype(np.float64) for x in (exp, got, ref))
    if e.shape != g.shape or e.shape != r.shape or not np.array_equal(np.isnan(e), np.isnan(g)):
        return False
    fin = np.isfinite(e) & np.isfinite(g) & np.isfinite(r)
    if not np.array_equal(e[~fin], g[~fin]) and not np.array_equal(np.isnan(e[~fin]), np.isnan(g[~fin])):
        return False
    rtol, atol = TOL["float32"]["grad"]
    bound = 2 * np.abs(e[fin] - r[fin]) + atol * max(1.0, float(np.abs(r[fin]).max(initial=0))) + rtol * np.abs(r[fin])
    bound = bound + 8 * float(np.finfo(np.float32).eps) * largest
    return bool(np.all(np.abs(g[fin] - r[fin]) <= bound))


def grad_phase(prog, ns_t, ns_m, res, torch_mod):
    ref64 = None
    gl = prog.grad_lines()
    leaves = [lf.name for lf in prog.leaves if lf.requires_grad]
    for label, src in gl:
        et = exec_line(src, ns_t)
        em = exec_line(src, ns_m)
        if et == SKIPPED and em == SKIPPED:
            return res
        d = diff(et, em) if (et or em) else None
        if d and isinstance(et, Failed) and em is None and "is not implemented" in et.msg:
            # PyTorch has no derivative formula here (floor_divide, hardsigmoid's second derivative, ...):
            # the oracle cannot check what minitorch computes, so the gradient phase stops (counted)
            res.unimplemented_in_pytorch = True
            return res
        if d and res.empty_structure and "does not require grad and does not have a grad_fn" in str(et or em):
            return res  # the empty gradient that stayed connected in one library only (empty_structure), one order up
        if d:
            return Outcome(d, label, "exception", exp=et, got=em, diverged=res.diverged)
        if et:
            return res
        if label == "backward":
            pairs = [(f"{x}.grad", snap(ns_t[x].grad), snap(ns_m[x].grad)) for x in leaves]
            check = "grad"
        elif label == "grad create_graph":
            pairs = [(f"g[{i}]", snap(ns_t["g"][i]), snap(ns_m["g"][i])) for i in range(len(leaves))]
            check = "grad create_graph"
        elif label == "second derivative":
            pairs = [(f"gg[{i}]", snap(ns_t["gg"][i]), snap(ns_m["gg"][i])) for i in range(len(leaves))]
            check = "gradgrad"
        else:
            continue
        for what, exp, got in pairs:
            d = diff(exp, got, "grad")
            if d and res.diverged and d == "values differ":
                continue  # values already differed by input rounding (checked op by op): structure only
            if d == "values differ" and prog.dtype == "float32":
                if ref64 is None:
                    ref64 = float64_reference(prog, torch_mod)
                if within_reference_error(exp, got, ref64.get(what), ref64["_largest"].get(label, 0.0)):
                    res.float32_rounding = True
                    continue
            if d and (_no_elements(exp) and _no_elements(got)
                      or res.empty_structure and _zeros_or_none(exp) and _zeros_or_none(got)):
                # nothing to compare but the graph's shape: PyTorch's kernels short-circuit empty inputs (a
                # product over an empty dim is zeros made without a graph), so whether an empty gradient is None
                # or requires grad follows from implementation shortcuts, not from values
                res.empty_structure = True
                continue
            if d == "values differ" and same_on_minitorch_values(prog, ns_m, torch_mod, label, what, got):
                res.forward_rounding = True
                continue
            if d == "requires_grad True != PyTorch's False" and diff({**exp, "requires_grad": True}, got) is None:
                # minitorch's derivative formula keeps a (zero) dependence on the input that PyTorch's does
                # not (cumprod over a size-1 dim, ...): the second derivative would be zeros against None.
                res.zero_dependence = True
                return res
            if d:
                return Outcome(f"{what}: {d}", label, check, exp=exp, got=got, diverged=res.diverged)
    return res


def _zeros_or_none(snapshot) -> bool:
    """A gradient that is None or all zeros (what an empty tensor passes back, connected or not)."""
    return snapshot is None or (isinstance(snapshot, dict) and not snapshot["values"].any())


def _no_elements(snapshot) -> bool:
    """A gradient with nothing to compare: None, or a tensor with no elements."""
    return snapshot is None or (isinstance(snapshot, dict) and snapshot["values"].size == 0)


def same_on_minitorch_values(prog, ns_m, torch_mod, label, what, got):
    """Whether PyTorch gives minitorch's gradient ``what`` when its forward pass runs on minitorch's values.

    Forward values that agree within tolerance may still differ in their last bit (``logaddexp2(-1., -1.)``
    is 0 in one and 1e-7 in the other), and a derivative with a branch (selu's second derivative at 0) then
    takes different sides. PyTorch reruns the program with every out-of-place step's value replaced, bit for
    bit, by minitorch's through an identity Function: its graph and derivative formulas are PyTorch's, the
    values they read are minitorch's. Agreement there means the gradients differ by forward rounding only."""
    if not any(s.out in ns_m and is_tensor(ns_m[s.out]) for s in prog.steps):
        return False
    ns = namespace(torch_mod, prog)
    steps = {f"step {s.out} {s.op}": s for s in prog.steps}
    for line, src in prog.lines():
        step = steps.get(line)
        if exec_line(src, ns, step.out if step else None) is not None:
            return False
        if step is not None and OPS[step.op].kind not in ("view", "inplace", "index"):
            ns[step.out] = _with_values_of(torch_mod, ns, step.out, ns_m.get(step.out))
    for line, src in prog.grad_lines():
        if exec_line(src, ns) is not None:
            return False
        if line == label:
            break
    if label == "backward":  # what: "x3.grad"
        mine = snap(ns[what.split(".")[0]].grad)
    else:  # what: "g[0]" or "gg[1]"
        key, i = what.split("[")
        mine = snap(ns[key][int(i.rstrip("]"))])
    return diff(mine, got, "grad") is None


def _with_values_of(torch_mod, ns, name, value):
    """PyTorch's tensor ``ns[name]`` with minitorch's ``value`` (bit for bit) and PyTorch's gradient path."""
    ours = ns.get(name)
    if not (is_tensor(ours) and is_tensor(value)) or ours._base is not None or tuple(ours.shape) != tuple(value.shape) \
            or any(v is ours for k, v in ns.items() if k != name):
        return ours  # a view, an alias or a tuple: kept (its own values follow from the replaced ones)
    data = torch_mod.from_numpy(value.detach().numpy().copy()).to(ours.dtype)
    if not ours.requires_grad:
        return data
    return _identity_function(torch_mod).apply(ours, data)


_IDENTITY = {}


def _identity_function(torch_mod):
    """An autograd Function whose value is its second argument and whose gradient passes to its first."""
    if torch_mod not in _IDENTITY:
        class WithValues(torch_mod.autograd.Function):
            @staticmethod
            def forward(ctx, x, values):
                return values.clone()

            @staticmethod
            def backward(ctx, grad):
                return grad, None

        _IDENTITY[torch_mod] = WithValues
    return _IDENTITY[torch_mod]


def op_locally_right(prog, step, mini_mod, torch_mod, got):
    """Run the step in PyTorch on minitorch's own inputs: if that agrees, the op is right and only its
    inputs differed by rounding (a discontinuous op such as floor may then amplify the difference)."""
    ns_m = namespace(mini_mod, prog)
    for label, src in prog.lines():
        if label == f"step {step.out} {step.op}":
            break
        exec_line(src, ns_m, label.split(" ")[1] if label.startswith("step") else None)
    ns_t = namespace(torch_mod, prog)
    for name, val in list(ns_m.items()):
        if VAR.fullmatch(name):
            ns_t[name] = _to_torch(torch_mod, val)
    if exec_line(step.source(), ns_t, step.out) is not None:
        return False
    def values_only(x):
        if isinstance(x, list):
            return [values_only(e) for e in x]
        return {**x, "contiguous": None, "requires_grad": None} if isinstance(x, dict) else x

    return diff(values_only(_snap_step(ns_t, step, False)), values_only(got)) is None


def _to_torch(torch_mod, val):
    if is_tensor(val):
        t = torch_mod.tensor(val.detach().numpy().copy())
        return t.requires_grad_() if val.requires_grad and t.is_floating_point() else t
    if isinstance(val, (tuple, list)):
        return type(val)(_to_torch(torch_mod, v) for v in val) if isinstance(val, list) else \
            tuple(_to_torch(torch_mod, v) for v in val)
    return val


# --- generation -------------------------------------------------------------------------------------------
SIZES = [1, 2, 3, 4, 2, 3]


def draw_data(rng, shape):
    n = int(np.prod(shape)) if shape else 1
    u = rng.random()
    if u < 0.6:
        d = rng.normal(size=n)
    elif u < 0.75:
        d = rng.uniform(0.1, 2.0, size=n)          # positive: log, sqrt, pow in their domain
    elif u < 0.9:
        d = rng.integers(-3, 4, size=n).astype(np.float64)  # ties and exact zeros
    else:
        d = rng.normal(size=n) * 10.0
    if n and rng.random() < 0.04:
        d[int(rng.integers(0, n))] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0])
    return np.round(d, 4).reshape(shape) if rng.random() < 0.5 else d.reshape(shape)


class Generator:
    """Draws a program while running it in PyTorch (its results give the shapes for later steps)."""

    def __init__(self, torch_mod, rng, dtype, n_steps, pending=True):
        self.torch = torch_mod
        self.rng = rng
        self.dtype = dtype
        self.prog = Program(dtype, [], [], [])
        self.ns = namespace(torch_mod, self.prog)
        self.ns["_results"] = {}
        self.ns["_partial"] = {}
        self.n_steps = n_steps
        self.pending = pending
        self.base = tuple(int(rng.choice(SIZES)) if rng.random() > 0.04 else 0
                          for _ in range(int(rng.integers(0, 4))))

    # values ---------------------------------------------------------------------------------------------
    def refs(self):
        """(reference, tensor) for every live tensor value."""
        out = []
        for v, _, _ in self.prog.inputs:
            out.append((v, self.ns[v]))
        for s in self.prog.steps:
            val = self.ns.get(s.out)
            if isinstance(val, (tuple, list)):
                out += [(f"{s.out}[{i}]", e) for i, e in enumerate(val) if is_tensor(e)]
            elif is_tensor(val):
                out.append((s.out, val))
        return out

    def new_leaf(self, shape, view=None):
        rng = self.rng
        k = len(self.prog.leaves)
        name, v = f"x{k}", f"v{k}"
        if view is None:
            view = ""
            if len(shape) >= 2 and rng.random() < 0.2:
                view = ".transpose(0, -1)"
            elif len(shape) >= 1 and rng.random() < 0.15:
                view = "[::2]"
        stored = list(shape)
        if view == ".transpose(0, -1)":
            stored[0], stored[-1] = stored[-1], stored[0]
        elif view == "[::2]":
            stored[0] = max(2 * stored[0] - int(rng.integers(0, 2)), 0)
        leaf = Leaf(name, draw_data(rng, tuple(stored)), self.dtype, bool(rng.random() < 0.7), view)
        self.prog.leaves.append(leaf)
        # leaves and inputs are numbered apart from steps: v<k> for input k, v<100+j> for step j
        self.prog.inputs.append((v, name, view))
        self.ns["_D"][name] = leaf.data.tolist()
        exec(_compile(leaf.source(False)), self.ns)
        exec(_compile(f"{v} = {name}{view}"), self.ns)
        return v

    def derived_shape(self, shape):
        """A shape that broadcasts with `shape` (a suffix, some dims 1), rarely one that does not."""
        rng = self.rng
        if rng.random() < 0.03:
            return tuple(int(rng.integers(2, 5)) for _ in range(max(len(shape), 1)))
        k = int(rng.integers(0, len(shape) + 1))
        s = [1 if rng.random() < 0.3 else d for d in shape[len(shape) - k:]]
        if rng.random() < 0.15:
            s = [int(rng.integers(1, 3))] + s
        return tuple(s)

    def pick_shaped(self, shape, exact=True):
        cands = [r for r, t in self.refs() if tuple(t.shape) == tuple(shape) and t.is_floating_point()]
        if cands and self.rng.random() < 0.6:
            return cands[int(self.rng.integers(0, len(cands)))]
        return self.new_leaf(tuple(shape))

    def second(self, o, ref, t, args):
        rng = self.rng
        shape = tuple(t.shape)
        mode = o.second
        if callable(mode):
            shapes = mode(rng, [shape])
            return None if shapes is None else [self.pick_shaped(s) for s in shapes]
        if mode == "same":
            return [self.pick_shaped(shape) for _ in range(o.arity - 1)]
        if mode == "src":
            return [self.pick_shaped(args.get("src_shape", shape))]
        if mode == "cat":
            s = list(shape) or [1]
            d = int(args["dim"])
            if -len(s) <= d < len(s):
                s[d] = int(rng.integers(0, 4))
            return [self.pick_shaped(tuple(s) if shape else ())]
        if mode == "index":
            try:
                sub = eval(f"{ref}[{args['idx']}]", self.ns)  # noqa: S307 - our own program's source
                return [self.pick_shaped(self.derived_shape(tuple(sub.shape)))]
            except Exception:  # noqa: BLE001
                return [self.pick_shaped(shape)]
        # broadcast / inplace: an existing broadcastable value, or a new leaf of a derived shape
        out = []
        for _ in range(o.arity - 1):
            if mode == "broadcast" and rng.random() < 0.5:
                cands = [r for r, u in self.refs() if u.is_floating_point() and _broadcastable(shape, u.shape)]
                if cands:
                    out.append(cands[int(rng.integers(0, len(cands)))])
                    continue
            out.append(self.pick_shaped(self.derived_shape(shape)))
        return out

    def step(self):
        rng = self.rng
        names = list(OPS)
        weights = np.array([OPS[n].weight for n in names])
        refs = self.refs()
        for _ in range(50):
            o = OPS[names[int(rng.choice(len(names), p=weights / weights.sum()))]]
            ref, t = refs[int(rng.integers(0, len(refs)))]
            dt = str(t.dtype).replace("torch.", "")
            shape = tuple(t.shape)
            if o.when and not o.when(shape, dt):
                continue
            args = o.args(rng, [shape]) if o.args else {}
            if args is None:
                continue
            if self.pending and pending_reason(o.name, shape, args, dt):
                continue
            if self.pending and pending_reason(o.name, shape, args, dt, "create_graph"):
                self.prog.first_order_only = True
            inputs = [ref]
            if o.arity > 1:
                more = self.second(o, ref, t, args)
                if more is None:
                    continue
                inputs += more
            if o.name == "where.cond":
                inputs = [inputs[0], inputs[1], inputs[1]]
            step = Step(f"v{100 + len(self.prog.steps)}", o.name, tuple(inputs),
                        {k: v for k, v in args.items() if k != "src_shape"})
            self.prog.steps.append(step)
            label = f"step {step.out} {step.op}"
            self.ns["_results"][label] = r = run_step(self.ns, label, step.source(), step)
            if r[0] and o.kind == "inplace":
                self.ns["_partial"][label] = partial_write(self.ns, step, r[1])
            return
        return

    def generate(self):
        rng = self.rng
        for _ in range(int(rng.integers(1, 4))):
            self.new_leaf(self.derived_shape(self.base) if rng.random() < 0.7 else self.base)
        for _ in range(self.n_steps):
            self.step()
        self.choose_weights()
        return self.prog

    def choose_weights(self):
        rng = self.rng
        for s in self.prog.steps + [Step(v, "", (), {}) for v, _, _ in self.prog.inputs]:
            val = self.ns.get(s.out)
            items = [(f"{s.out}[{i}]", e) for i, e in enumerate(val)] if isinstance(val, (tuple, list)) \
                else [(s.out, val)]
            for ref, t in items:
                if not is_tensor(t) or not t.requires_grad or not t.is_floating_point():
                    continue
                if s.op and not OPS[s.op].diff:
                    continue
                self.prog.weights[ref] = np.round(rng.normal(size=tuple(t.shape)), 3)
        g = [lf for lf in self.prog.leaves if lf.requires_grad]
        if g and rng.random() < 0.6:
            for lf in g:
                self.prog.weights2[lf.name] = np.round(rng.normal(size=lf.data.shape), 3)


def _broadcastable(a, b):
    for x, y in zip(reversed(tuple(a)), reversed(tuple(b))):
        if x != y and x != 1 and y != 1:
            return False
    return True


def generate(torch_mod, seed, dtype=None, pending=True):
    rng = np.random.default_rng(seed)
    dtype = dtype or ("float64" if rng.random() < 0.5 else "float32")
    gen = Generator(torch_mod, rng, dtype, int(rng.integers(1, 9)), pending)
    prog = gen.generate()
    gen.ns["_W"] = namespace(torch_mod, prog)["_W"]
    return prog, gen.ns


__all__ = ["Program", "Leaf", "Step", "generate", "compare", "differences", "FLOAT"]
