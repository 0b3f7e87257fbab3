"""The op table of the differential fuzzer: one declarative entry per op variant.

An entry says how a step is written as Python source (``template``), which inputs it takes (``arity``, and
``when`` on the first input), how its constant arguments are drawn (``args``: a function of the random
generator and the input shapes that returns a dict of *source strings*, or None when the op does not apply),
and whether it is differentiable. The interpreter in program.py formats the template and executes the line
with ``torch`` bound to either PyTorch or minitorch, so one table serves both (and prints runnable repros).

Template fields: ``{a}``, ``{b}``, ``{c}`` are the inputs (variable names); every other field comes from the
dict ``args`` returns. A template that starts with ``!`` is a statement (setitem); its step's value is ``{a}``.

Adding an op: append one ``op(...)`` line to ``OPS`` below; if it needs new kinds of constants, add a small
drawing helper next to the others. Nothing else changes.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

FLOAT = ("float32", "float64")


@dataclass(frozen=True)
class Op:
    name: str                      # unique key (also the failure-group label)
    template: str
    arity: int = 1                 # tensor inputs; the second and third are drawn by `second`
    args: Callable | None = None   # (rng, shapes) -> dict of source strings, or None: not applicable
    when: Callable | None = None   # (shape, dtype_name) -> bool, on the first input
    second: str = "broadcast"      # how inputs 2.. are drawn: broadcast | same | custom (args gives shapes)
    diff: bool = True              # outputs take part in the loss (float outputs only)
    kind: str = "func"             # func | view | inplace | index (index: outputs that are indices of input 0)
    index_dim: Callable | None = None  # kind=index: (args) -> dim (None = flattened) for the tie check
    weight: float = 1.0            # relative frequency
    tags: tuple = field(default_factory=tuple)


# --- drawing helpers: each returns source text -------------------------------------------------------------
def rank_at_least(k):
    return lambda shape, dtype: len(shape) >= k


def is_float(shape, dtype):
    return dtype in FLOAT


def float_rank(k):
    return lambda shape, dtype: dtype in FLOAT and len(shape) >= k


def draw_dim(rng, rank, bad=0.02):
    """A valid dim (negative half the time); rarely an out-of-range one, to compare the error type."""
    n = max(rank, 1)
    if rng.random() < bad:
        return str(n + int(rng.integers(0, 2)))
    d = int(rng.integers(0, n))
    return str(d - n if rng.random() < 0.5 else d)


def draw_scalar(rng, positive=False):
    v = rng.choice([0.5, 2.0, -1.5, 3, 1, 0.0, -2, 0.25, 1e-3]) if not positive else rng.choice([0.5, 2.0, 3, 1, 0.25])
    return repr(v.item() if hasattr(v, "item") else v)


def bool_src(rng):
    return repr(bool(rng.random() < 0.5))


def reduce_args(rng, shapes, dim_required=False):
    """dim (int, tuple or absent) and keepdim."""
    r = len(shapes[0])
    u = rng.random()
    if not dim_required and u < 0.25:
        return {"dimkw": ""}
    if u < 0.35 and r >= 2:
        d = sorted({int(x) for x in rng.choice(r, size=2, replace=False)})
        return {"dimkw": f", dim={tuple(d)}, keepdim={bool_src(rng)}"}
    return {"dimkw": f", dim={draw_dim(rng, r)}, keepdim={bool_src(rng)}"}


def dim_keep(rng, shapes):
    return {"dim": draw_dim(rng, len(shapes[0])), "keepdim": bool_src(rng)}


def one_dim(rng, shapes):
    return {"dim": draw_dim(rng, len(shapes[0]))}


def size_along(shape, dim):
    d = int(dim)
    r = max(len(shape), 1)
    if not -r <= d < r:
        return None
    return shape[d] if shape else 1


def index_tensor(rng, n, size, bad=0.02, negative=True):
    """Source for an int64 index tensor of n entries in [-size, size) ([0, size) unless `negative`);
    rarely (`bad`) one out of range, to compare the error."""
    if size == 0:
        vals = [0] * n if rng.random() < 0.5 else []
    else:
        low = -size if negative and rng.random() < 0.3 else 0
        vals = [int(x) for x in rng.integers(low, size, size=n)]
        if vals and rng.random() < bad:
            vals[0] = size
    return f"torch.tensor({vals}, dtype=torch.int64)"


def index_tensor_shaped(rng, shape, size, bad=0.02, negative=False):
    n = int(np.prod(shape)) if shape else 1
    src = index_tensor(rng, n, size, bad, negative)
    return f"{src}.reshape({tuple(shape)})"


# --- per-op argument drawers ---------------------------------------------------------------------------------
def args_gather(rng, shapes):
    s = shapes[0]
    if not s:
        return None
    dim = int(draw_dim(rng, len(s), bad=0))
    ish = [int(rng.integers(0, k + 1)) for k in s]  # index may be smaller than input on each dim
    ish[dim] = int(rng.integers(0, 4))
    return {"dim": str(dim), "idx": index_tensor_shaped(rng, ish, s[dim], bad=0.03)}


def args_scatter(rng, shapes):
    s = shapes[0]
    if not s:
        return None
    dim = int(draw_dim(rng, len(s), bad=0))
    ish = [int(rng.integers(0, k + 1)) for k in s]
    ish[dim] = int(rng.integers(0, s[dim] + 1))
    idx = index_tensor_shaped(rng, ish, s[dim], bad=0.03)
    return {"dim": str(dim), "idx": idx, "src_shape": tuple(ish)}


def args_index_select(rng, shapes):
    s = shapes[0]
    dim = draw_dim(rng, len(s))
    n = size_along(s, dim)
    if n is None:
        return {"dim": dim, "idx": "torch.tensor([0])"}
    return {"dim": dim, "idx": index_tensor(rng, int(rng.integers(0, 4)), n, negative=False)}


def args_index_add(rng, shapes):
    s = shapes[0]
    if not s:
        return None
    dim = int(draw_dim(rng, len(s), bad=0))
    k = int(rng.integers(0, 4))
    src = list(s)
    src[dim] = k
    return {"dim": str(dim), "idx": index_tensor(rng, k, s[dim], negative=False), "src_shape": tuple(src),
            "alpha": draw_scalar(rng)}


def args_basic_index(rng, shapes):
    """A basic index: ints, slices (with steps), None and Ellipsis."""
    s = shapes[0]
    parts, used = [], 0
    for k in s:
        u = rng.random()
        if u < 0.3 and k > 0:
            parts.append(str(int(rng.integers(-k, k))))
        elif u < 0.7:
            a, b = sorted(int(x) for x in rng.integers(-k - 1, k + 2, size=2))
            st = int(rng.choice([1, 1, 2, 3]))
            parts.append(f"{a}:{b}" + (f":{st}" if st != 1 else ""))
        elif u < 0.8:
            parts.append("None")
            parts.append(":")
        else:
            parts.append(":")
        used += 1
        if rng.random() < 0.3:
            break
    if rng.random() < 0.15:
        parts.insert(int(rng.integers(0, len(parts) + 1)), "...")
    if not parts:
        parts = ["..."] if rng.random() < 0.5 else ["None"]
    return {"idx": ", ".join(parts)}


def args_adv_index(rng, shapes):
    s = shapes[0]
    if not s:
        return None
    n = int(rng.integers(0, 4))
    idx = index_tensor(rng, n, s[0])
    if len(s) >= 2 and rng.random() < 0.5:
        idx2 = index_tensor(rng, n, s[1])
        return {"idx": f"{idx}, {idx2}"}
    if len(s) >= 2 and rng.random() < 0.3:
        return {"idx": f":, {index_tensor(rng, n, s[1])}"}
    return {"idx": idx}


def args_mask(rng, shapes):
    s = shapes[0]
    k = int(rng.integers(0, len(s) + 1))
    ms = s[:k] if k else s
    vals = (rng.random(int(np.prod(ms)) if ms else 1) < 0.5).tolist()
    return {"mask": f"torch.tensor({vals}).reshape({tuple(ms)})", "fill": draw_scalar(rng)}


def args_setitem(rng, shapes):
    a = args_basic_index(rng, shapes)
    return {"idx": a["idx"], "val": draw_scalar(rng)}


def args_split(rng, shapes):
    s = shapes[0]
    if not s:
        return None
    dim = draw_dim(rng, len(s), bad=0)
    n = s[int(dim)]
    if rng.random() < 0.5 and n > 0:
        parts = []
        left = n
        while left > 0:
            p = int(rng.integers(1, left + 1))
            parts.append(p)
            left -= p
        return {"sz": repr(parts), "dim": dim}
    return {"sz": str(int(rng.integers(1, max(n, 1) + 2))), "dim": dim}


def args_chunk(rng, shapes):
    s = shapes[0]
    if not s:
        return None
    return {"n": str(int(rng.integers(1, 5))), "dim": draw_dim(rng, len(s), bad=0)}


def args_cat(rng, shapes):
    r = len(shapes[0])
    return {"dim": draw_dim(rng, r if r else 1)}


def args_clamp(rng, shapes):
    lo, hi = sorted([float(rng.normal()), float(rng.normal())])
    u = rng.random()
    if u < 0.3:
        return {"kw": f"min={lo!r}"}
    if u < 0.5:
        return {"kw": f"max={hi!r}"}
    if u < 0.55:
        return {"kw": f"min={hi!r}, max={lo!r}"}  # min > max: PyTorch sets everything to max
    return {"kw": f"min={lo!r}, max={hi!r}"}


def args_view_shape(rng, shapes):
    s = shapes[0]
    n = int(np.prod(s)) if s else 1
    divs = [d for d in range(1, n + 1) if n % d == 0] or [0]
    if n == 0:
        return {"shape": repr(tuple(rng.permutation([0, 2, 1]).tolist()[: int(rng.integers(1, 4))] + [0])[-3:]).replace("0,)", "0)")}
    d = int(rng.choice(divs))
    shape = [d, n // d]
    if rng.random() < 0.3:
        shape[int(rng.integers(0, 2))] = -1
    if rng.random() < 0.2:
        shape = [n]
    if rng.random() < 0.03:
        shape = [n + 1]
    return {"shape": repr(tuple(shape))}


def args_permute(rng, shapes):
    r = len(shapes[0])
    return {"perm": repr(tuple(int(x) for x in rng.permutation(r)))}


def args_transpose(rng, shapes):
    r = len(shapes[0])
    return {"d0": draw_dim(rng, r), "d1": draw_dim(rng, r)}


def args_expand(rng, shapes):
    s = shapes[0]
    new = [int(rng.integers(1, 4)) if k == 1 else (-1 if rng.random() < 0.3 else k) for k in s]
    if rng.random() < 0.4:
        new = [int(rng.integers(0, 3))] + new
    return {"shape": repr(tuple(new))}


def args_narrow(rng, shapes):
    s = shapes[0]
    if not s:
        return None
    dim = draw_dim(rng, len(s), bad=0)
    n = s[int(dim)]
    start = int(rng.integers(-n, n + 1)) if n else 0
    st = start % n if n and start < 0 else start
    length = int(rng.integers(0, n - st + 1)) if n - st >= 0 else 0
    return {"dim": dim, "start": str(start), "length": str(length)}


def args_select(rng, shapes):
    s = shapes[0]
    if not s:
        return None
    dim = draw_dim(rng, len(s), bad=0)
    n = s[int(dim)]
    return {"dim": dim, "i": str(int(rng.integers(-n, n)) if n else 0)}


def args_diagonal(rng, shapes):
    r = len(shapes[0])
    d0, d1 = (int(x) for x in rng.choice(r, size=2, replace=False))
    return {"off": str(int(rng.integers(-2, 3))), "d0": str(d0), "d1": str(d1)}


def args_unsqueeze(rng, shapes):
    r = len(shapes[0]) + 1
    return {"dim": draw_dim(rng, r)}


def args_squeeze(rng, shapes):
    u = rng.random()
    if u < 0.3:
        return {"dimkw": ""}
    return {"dimkw": draw_dim(rng, len(shapes[0]))}


def args_flatten(rng, shapes):
    r = max(len(shapes[0]), 1)
    a, b = sorted(int(x) for x in rng.integers(0, r, size=2))
    return {"s": str(a), "e": str(b)}


def args_unfold(rng, shapes):
    s = shapes[0]
    if not s:
        return None
    dim = draw_dim(rng, len(s), bad=0)
    n = s[int(dim)]
    return {"dim": dim, "size": str(int(rng.integers(0, n + 1))), "step": str(int(rng.integers(1, 3)))}


def args_as_strided(rng, shapes):
    s = shapes[0]
    n = int(np.prod(s)) if s else 1
    if n == 0:
        return None
    rows = int(rng.integers(1, 3))
    cols = int(rng.integers(1, 3))
    st = (int(rng.integers(0, 2)), 1)
    need = (rows - 1) * st[0] + (cols - 1) * st[1] + 1
    if need > n:
        return None
    return {"size": repr((rows, cols)), "stride": repr(st), "off": str(int(rng.integers(0, n - need + 1)))}


def args_topk(rng, shapes):
    s = shapes[0]
    dim = draw_dim(rng, len(s), bad=0)
    n = size_along(s, dim) or 0
    return {"k": str(int(rng.integers(0, n + 1))), "dim": dim, "largest": bool_src(rng)}


def args_std(rng, shapes):
    a = reduce_args(rng, shapes)
    return {"dimkw": a["dimkw"], "corr": str(int(rng.choice([0, 1, 2])))}


def args_norm(rng, shapes):
    a = reduce_args(rng, shapes)
    return {"dimkw": a["dimkw"], "p": rng.choice(["1", "2", "float('inf')", "3", "0.5"])}


def args_vnorm(rng, shapes):
    a = reduce_args(rng, shapes)
    return {"dimkw": a["dimkw"], "p": rng.choice(["1", "2", "float('inf')", "-float('inf')", "3", "0"])}


def args_round_dec(rng, shapes):
    return {"dec": str(int(rng.integers(-1, 3)))}


def args_pow_scalar(rng, shapes):
    return {"e": rng.choice(["2", "3", "0.5", "-1", "0", "1.5", "-2", "2.0"])}


def args_div_mode(rng, shapes):
    return {"mode": rng.choice(["None", "'floor'", "'trunc'"])}


def args_softmax(rng, shapes):
    return {"dim": draw_dim(rng, len(shapes[0]))}


def args_lerp(rng, shapes):
    return {"w": draw_scalar(rng)}


def args_alpha(rng, shapes):
    return {"alpha": draw_scalar(rng)}


def args_fill(rng, shapes):
    return {"val": draw_scalar(rng)}


def args_cumul(rng, shapes):
    return {"dim": draw_dim(rng, len(shapes[0]))}


def args_leaky(rng, shapes):
    return {"slope": rng.choice(["0.01", "0.2", "1.5"])}


def args_elu(rng, shapes):
    return {"alpha": rng.choice(["1.0", "0.5", "2.0"])}


def args_softplus(rng, shapes):
    # thresholds that x * beta rarely hits exactly: there PyTorch's own first derivative (log branch) and
    # second derivative (linear branch) disagree
    return {"beta": rng.choice(["1.0", "2.0", "0.5"]), "th": rng.choice(["20.0", "1.37"])}


def args_hardtanh(rng, shapes):
    lo, hi = sorted(float(x) for x in rng.normal(size=2))
    return {"lo": repr(round(lo, 3)), "hi": repr(round(hi, 3))}


def args_take_along(rng, shapes):
    s = shapes[0]
    if not s:
        return None
    dim = int(draw_dim(rng, len(s), bad=0))
    ish = list(s)
    ish[dim] = int(rng.integers(0, 4))
    # in range only: PyTorch's take_along_dim does not check its indices (it reads past the tensor)
    return {"dim": str(dim), "idx": index_tensor_shaped(rng, ish, s[dim], bad=0)}


def args_where_mask(rng, shapes):
    return {"thr": draw_scalar(rng)}


# second-operand shapes for the matmul family (program.py makes new leaves of these shapes)
def shapes_matmul(rng, shapes):
    s = shapes[0]
    k = s[-1] if s else None
    if not s:
        return None
    if len(s) == 1:
        return [(k,) if rng.random() < 0.5 else (k, int(rng.integers(0, 4)))]
    if rng.random() < 0.3:
        return [(k,)]
    return [(k, int(rng.integers(0, 4)))] if rng.random() < 0.5 else [s[:-2] + (k, int(rng.integers(1, 4)))]


def shapes_mm(rng, shapes):
    s = shapes[0]
    return [(s[1], int(rng.integers(0, 4)))]


def shapes_bmm(rng, shapes):
    s = shapes[0]
    return [(s[0], s[2], int(rng.integers(0, 4)))]


def shapes_mv(rng, shapes):
    return [(shapes[0][1],)]


def shapes_same(rng, shapes):
    return [shapes[0]]


def shapes_linear(rng, shapes):
    s = shapes[0]
    o = int(rng.integers(1, 4))
    return [(o, s[-1]), (o,)]


def shapes_einsum(rng, shapes):
    return [shapes[0]]


def args_einsum(rng, shapes):
    r = len(shapes[0])
    letters = "ijkl"[:r]
    pats = [f"{letters},{letters}->{letters}", f"{letters}->", f"{letters},{letters}->"]
    if r >= 1:
        pats.append(f"{letters},{letters}->{letters[0]}")
    if r >= 2:
        pats.append(f"{letters}->{letters[::-1]}")
    if r == 2:
        pats.append("ij,kj->ik")
        pats.append("ii->i" if shapes[0][0] == shapes[0][1] else "ij->ji")
    return {"eq": repr(str(rng.choice(pats)))}


# --- the table ----------------------------------------------------------------------------------------------
UNARY_FLOAT = [
    "abs", "neg", "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "sin", "cos", "tan",
    "tanh", "sigmoid", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erfinv",
    "exp2", "reciprocal", "square", "sign", "sgn", "ceil", "floor", "round", "trunc", "frac", "relu",
    "nan_to_num", "positive", "signbit", "isnan", "isfinite", "isinf", "logical_not",
]
FUNCTIONAL_UNARY = [
    "gelu", "silu", "mish", "logsigmoid", "relu6", "selu", "softsign", "tanhshrink", "hardswish", "hardsigmoid",
    "sigmoid", "tanh", "relu",
]
BINARY = [
    "add", "sub", "mul", "div", "pow", "atan2", "maximum", "minimum", "fmax", "fmin", "fmod", "remainder",
    "floor_divide", "logaddexp", "logaddexp2", "xlogy", "hypot", "eq", "ne", "lt", "le", "gt", "ge",
    "logical_and", "logical_or", "logical_xor",
]
NONDIFF = {"sign", "sgn", "ceil", "floor", "round", "trunc", "signbit", "isnan", "isfinite", "isinf",
           "logical_not", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
           "floor_divide"}
# the in-place variants (Tensor methods) that the fuzzer applies to any value (leaves and views included)
INPLACE_UNARY = ["abs_", "neg_", "exp_", "sin_", "tanh_", "sigmoid_", "sqrt_", "relu_", "zero_", "floor_",
                 "reciprocal_", "square_"]


def _build():
    ops = []

    def op(*a, **k):
        ops.append(Op(*a, **k))

    for f in UNARY_FLOAT:
        op(f"torch.{f}", f"torch.{f}({{a}})", when=is_float, diff=f not in NONDIFF, weight=0.4)
        op(f"Tensor.{f}", f"{{a}}.{f}()", when=is_float, diff=f not in NONDIFF, weight=0.15)
    for f in FUNCTIONAL_UNARY:
        op(f"F.{f}", f"F.{f}({{a}})", when=is_float, weight=0.3)
    op("F.leaky_relu", "F.leaky_relu({a}, {slope})", args=args_leaky, when=is_float)
    op("F.elu", "F.elu({a}, alpha={alpha})", args=args_elu, when=is_float)
    op("F.celu", "F.celu({a}, alpha={alpha})", args=args_elu, when=is_float, weight=0.3)
    op("F.softplus", "F.softplus({a}, beta={beta}, threshold={th})", args=args_softplus, when=is_float)
    op("F.hardtanh", "F.hardtanh({a}, {lo}, {hi})", args=args_hardtanh, when=is_float)
    op("F.gelu.tanh", "F.gelu({a}, approximate='tanh')", when=is_float, weight=0.3)
    op("torch.round.decimals", "torch.round({a}, decimals={dec})", args=args_round_dec, when=is_float, diff=False,
       weight=0.3)
    op("torch.pow.scalar", "torch.pow({a}, {e})", args=args_pow_scalar, when=is_float)
    op("pow.op", "{a} ** {e}", args=args_pow_scalar, when=is_float)
    op("rpow.op", "{e} ** {a}", args=args_pow_scalar, when=is_float, weight=0.5)
    op("rsub.op", "{e} - {a}", args=args_pow_scalar, weight=0.5)
    op("rdiv.op", "{e} / {a}", args=args_pow_scalar, when=is_float, weight=0.5)
    op("mul.scalar", "{a} * {e}", args=args_pow_scalar, weight=0.5)
    op("add.int", "{a} + 2", weight=0.3)
    op("clamp", "torch.clamp({a}, {kw})", args=args_clamp, when=is_float)
    op("Tensor.clip", "{a}.clip({kw})", args=args_clamp, when=is_float, weight=0.3)

    for f in BINARY:
        op(f"torch.{f}", f"torch.{f}({{a}}, {{b}})", arity=2, when=is_float, diff=f not in NONDIFF, weight=0.6)
    op("add.alpha", "torch.add({a}, {b}, alpha={alpha})", arity=2, args=args_alpha, when=is_float)
    op("sub.alpha", "torch.sub({a}, {b}, alpha={alpha})", arity=2, args=args_alpha, when=is_float, weight=0.5)
    op("div.mode", "torch.div({a}, {b}, rounding_mode={mode})", arity=2, args=args_div_mode, when=is_float,
       diff=False, weight=0.5)
    for sym in ["+", "-", "*", "/", "**"]:
        op(f"op{sym}", f"{{a}} {sym} {{b}}", arity=2, when=is_float, weight=0.4)
    op("op>", "{a} > {b}", arity=2, diff=False, weight=0.3)
    op("lerp", "torch.lerp({a}, {b}, {w})", arity=2, args=args_lerp, when=is_float, second="same")
    op("lerp.tensor", "torch.lerp({a}, {b}, {c})", arity=3, when=is_float, second="same", weight=0.5)
    op("where", "torch.where({a} > {thr}, {a}, {b})", arity=2, args=args_where_mask, when=is_float)
    op("where.scalar", "torch.where({a} > 0, {a}, 0.0)", when=is_float, weight=0.5)
    op("where.cond", "torch.where({c} > 0, {a}, {b})", arity=3, when=is_float, weight=0.5)
    op("clamp.tensor", "torch.clamp({a}, min={b})", arity=2, when=is_float, weight=0.4)

    # reductions
    for f in ["sum", "mean", "prod", "amax", "amin", "logsumexp"]:
        req = f == "logsumexp"
        op(f"torch.{f}", f"torch.{f}({{a}}{{dimkw}})",
           args=(lambda rng, s, req=req: reduce_args(rng, s, dim_required=req)), when=is_float)
    op("Tensor.sum", "{a}.sum(dtype=None{dimkw})", args=reduce_args, when=is_float, weight=0.3)
    op("max.dim", "torch.max({a}, dim={dim}, keepdim={keepdim})", args=dim_keep, when=is_float, kind="index",
       index_dim=lambda a: int(a["dim"]))
    op("min.dim", "torch.min({a}, dim={dim}, keepdim={keepdim})", args=dim_keep, when=is_float, kind="index",
       index_dim=lambda a: int(a["dim"]))
    op("max.all", "torch.max({a})", when=is_float)
    op("min.all", "{a}.min()", when=is_float, weight=0.5)
    op("std", "torch.std({a}{dimkw}, correction={corr})", args=args_std, when=is_float)
    op("var", "torch.var({a}{dimkw}, correction={corr})", args=args_std, when=is_float)
    op("norm", "torch.norm({a}, p={p}{dimkw})", args=args_norm, when=is_float)
    op("linalg.vector_norm", "torch.linalg.vector_norm({a}, ord={p}{dimkw})", args=args_vnorm, when=is_float)
    op("argmax", "torch.argmax({a}, dim={dim}, keepdim={keepdim})", args=dim_keep, when=is_float, kind="index",
       index_dim=lambda a: int(a["dim"]), diff=False)
    op("argmax.all", "torch.argmax({a})", when=is_float, kind="index", index_dim=lambda a: None, diff=False,
       weight=0.5)
    op("argmin", "{a}.argmin(dim={dim}, keepdim={keepdim})", args=dim_keep, when=is_float, kind="index",
       index_dim=lambda a: int(a["dim"]), diff=False, weight=0.5)

    # matmul family
    op("matmul", "torch.matmul({a}, {b})", arity=2, second=shapes_matmul, when=float_rank(1))
    op("op@", "{a} @ {b}", arity=2, second=shapes_matmul, when=float_rank(1), weight=0.5)
    op("mm", "torch.mm({a}, {b})", arity=2, second=shapes_mm, when=lambda s, d: d in FLOAT and len(s) == 2)
    op("bmm", "torch.bmm({a}, {b})", arity=2, second=shapes_bmm, when=lambda s, d: d in FLOAT and len(s) == 3)
    op("mv", "torch.mv({a}, {b})", arity=2, second=shapes_mv, when=lambda s, d: d in FLOAT and len(s) == 2)
    op("dot", "torch.dot({a}, {b})", arity=2, second=shapes_same, when=lambda s, d: d in FLOAT and len(s) == 1)
    op("einsum", "torch.einsum({eq}, {a}, {b})", arity=2, second=shapes_einsum, args=args_einsum,
       when=lambda s, d: d in FLOAT and 1 <= len(s) <= 3)
    op("F.linear", "F.linear({a}, {b}, {c})", arity=3, second=shapes_linear, when=float_rank(1))

    # indexing
    op("getitem.basic", "{a}[{idx}]", args=args_basic_index, kind="view", weight=2)
    op("getitem.adv", "{a}[{idx}]", args=args_adv_index, weight=1)
    op("getitem.mask", "{a}[{mask}]", args=args_mask, weight=1)
    op("setitem.scalar", "!{a}[{idx}] = {val}", args=args_setitem, kind="inplace", weight=1.5)
    # float targets only: PyTorch marks an integer tensor requires_grad=True after writing a value that
    # requires grad into it (an integer tensor cannot otherwise require grad)
    op("setitem.tensor", "!{a}[{idx}] = {b}", arity=2, args=args_basic_index, kind="inplace", second="index",
       when=is_float, weight=1)
    op("setitem.mask", "!{a}[{mask}] = {fill}", args=args_mask, kind="inplace", weight=0.7)
    op("gather", "torch.gather({a}, {dim}, {idx})", args=args_gather, when=is_float)
    op("scatter", "torch.scatter({a}, {dim}, {idx}, {b})", arity=2, args=args_scatter, second="src",
       when=is_float)
    op("scatter_add", "torch.scatter_add({a}, {dim}, {idx}, {b})", arity=2, args=args_scatter, second="src",
       when=is_float)
    op("scatter.value", "{a}.scatter({dim}, {idx}, 1.5)", args=args_scatter, when=is_float, weight=0.4)
    op("index_select", "torch.index_select({a}, {dim}, {idx})", args=args_index_select, when=is_float)
    op("take_along_dim", "torch.take_along_dim({a}, {idx}, dim={dim})", args=args_take_along, when=is_float)
    op("masked_fill", "{a}.masked_fill({mask}, {fill})", args=args_mask, when=is_float)

    # joining and splitting
    op("cat", "torch.cat([{a}, {b}], dim={dim})", arity=2, args=args_cat, second="cat")
    op("cat.self", "torch.cat([{a}, {a}], {dim})", args=args_cat, weight=0.4)
    op("stack", "torch.stack([{a}, {b}], dim={dim})", arity=2, args=args_unsqueeze, second="same")
    op("split", "torch.split({a}, {sz}, dim={dim})", args=args_split, kind="view")
    op("chunk", "{a}.chunk({n}, dim={dim})", args=args_chunk, kind="view")
    op("unbind", "torch.unbind({a}, dim={dim})", args=one_dim, when=rank_at_least(1), kind="view")

    # softmax family
    op("softmax.method", "{a}.softmax({dim})", args=args_softmax, when=is_float)
    op("F.softmax", "F.softmax({a}, dim={dim})", args=args_softmax, when=is_float)
    op("F.log_softmax", "F.log_softmax({a}, dim={dim})", args=args_softmax, when=is_float)
    op("torch.softmax", "torch.softmax({a}, {dim})", args=args_softmax, when=is_float)
    op("torch.log_softmax", "torch.log_softmax({a}, dim={dim})", args=args_softmax, when=is_float)
    op("log_softmax.method", "{a}.log_softmax({dim})", args=args_softmax, when=is_float, weight=0.5)

    # cumulative
    op("cumsum", "torch.cumsum({a}, dim={dim})", args=args_cumul, when=is_float)
    op("cumprod", "torch.cumprod({a}, {dim})", args=args_cumul, when=is_float)
    op("cummax", "torch.cummax({a}, dim={dim})", args=args_cumul, when=is_float, kind="index",
       index_dim=lambda a: int(a["dim"]))
    op("logcumsumexp", "torch.logcumsumexp({a}, dim={dim})", args=args_cumul, when=is_float)

    # sorting
    op("sort", "torch.sort({a}, dim={dim}, descending={keepdim})", args=dim_keep, when=is_float, kind="index",
       index_dim=lambda a: int(a["dim"]))
    op("sort.stable", "{a}.sort(dim={dim}, stable=True)", args=one_dim, when=is_float, kind="index",
       index_dim=lambda a: int(a["dim"]), weight=0.4)
    op("argsort", "torch.argsort({a}, dim={dim}, descending={keepdim})", args=dim_keep, when=is_float,
       kind="index", index_dim=lambda a: int(a["dim"]), diff=False)
    op("topk", "torch.topk({a}, {k}, dim={dim}, largest={largest})", args=args_topk, when=is_float, kind="index",
       index_dim=lambda a: int(a["dim"]))

    # views
    op("view", "{a}.view({shape})", args=args_view_shape, kind="view")
    op("reshape", "torch.reshape({a}, {shape})", args=args_view_shape, kind="view")
    op("transpose", "torch.transpose({a}, {d0}, {d1})", args=args_transpose, kind="view")
    op("t", "{a}.t()", when=lambda s, d: len(s) <= 2, kind="view")
    op("mT", "{a}.mT", when=rank_at_least(2), kind="view", weight=0.3)
    op("permute", "{a}.permute({perm})", args=args_permute, kind="view")
    op("expand", "{a}.expand({shape})", args=args_expand, kind="view")
    op("narrow", "torch.narrow({a}, {dim}, {start}, {length})", args=args_narrow, kind="view")
    op("select", "torch.select({a}, {dim}, {i})", args=args_select, kind="view")
    op("diagonal", "torch.diagonal({a}, {off}, {d0}, {d1})", args=args_diagonal, when=rank_at_least(2), kind="view")
    op("unsqueeze", "{a}.unsqueeze({dim})", args=args_unsqueeze, kind="view")
    op("squeeze", "{a}.squeeze({dimkw})", args=args_squeeze, kind="view")
    op("flatten", "torch.flatten({a}, {s}, {e})", args=args_flatten, kind="view")
    op("unfold", "{a}.unfold({dim}, {size}, {step})", args=args_unfold, kind="view")
    op("as_strided", "torch.as_strided({a}, {size}, {stride}, {off})", args=args_as_strided, kind="view",
       when=lambda s, d: True, weight=0.5)
    op("contiguous", "{a}.contiguous()", weight=0.3)
    op("clone", "{a}.clone()", weight=0.6)
    op("detach", "{a}.detach()", kind="view", weight=0.3)

    # in-place
    for f in INPLACE_UNARY:
        op(f"Tensor.{f}", f"{{a}}.{f}()", when=is_float, kind="inplace", diff=f not in ("floor_",), weight=0.35)
    for f in ["add_", "sub_", "mul_", "div_", "copy_", "pow_"]:
        op(f"Tensor.{f}", f"{{a}}.{f}({{b}})", arity=2, when=is_float, kind="inplace", second="inplace",
           weight=0.5)
    op("Tensor.add_.alpha", "{a}.add_({b}, alpha={alpha})", arity=2, args=args_alpha, when=is_float,
       kind="inplace", second="inplace", weight=0.3)
    op("Tensor.mul_.scalar", "{a}.mul_({e})", args=args_pow_scalar, when=is_float, kind="inplace", weight=0.4)
    op("Tensor.clamp_", "{a}.clamp_({kw})", args=args_clamp, when=is_float, kind="inplace", weight=0.5)
    op("Tensor.fill_", "{a}.fill_({val})", args=args_fill, kind="inplace", weight=0.3)
    op("Tensor.masked_fill_", "{a}.masked_fill_({mask}, {fill})", args=args_mask, when=is_float, kind="inplace",
       weight=0.5)
    op("Tensor.index_add_", "{a}.index_add_({dim}, {idx}, {b}, alpha={alpha})", arity=2, args=args_index_add,
       second="src", when=is_float, kind="inplace", weight=0.5)
    op("Tensor.scatter_", "{a}.scatter_({dim}, {idx}, {b})", arity=2, args=args_scatter, second="src",
       when=is_float, kind="inplace", weight=0.3)
    op("Tensor.unsqueeze_", "{a}.unsqueeze_({dim})", args=args_unsqueeze, kind="inplace", weight=0.2)
    op("Tensor.t_", "{a}.t_()", when=lambda s, d: len(s) <= 2, kind="inplace", weight=0.2)
    # a no_grad view, then in-place through it (PyTorch forbids the in-place when the base requires grad)
    op("nograd_view_inplace", "!with torch.no_grad(): _v = {a}[..., :1]\n_v.mul_(2.0)", when=rank_at_least(1),
       kind="inplace", weight=0.2)
    return {o.name: o for o in ops}


OPS = _build()
