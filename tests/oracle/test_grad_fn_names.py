"""``out.grad_fn.name()`` against PyTorch for the common ops: each op is built from inputs that require grad in
both libraries and the names of the output's node compared.

The ops come from the fuzzer's table (tests/oracle/ops.py, evaluated at a fixed shape) and from a list of further
common ops below. Where minitorch records one node for what PyTorch composes from several (or the reverse), the
names differ by design; those cases are listed in COMPOSED with both names (docs/differences.md), so a change
in either library still fails here. ``type(grad_fn).__name__`` is minitorch's op class, not the node name
(docs/differences.md), so only ``name()`` is compared."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minitorch as mt  # noqa: E402

from .ops import OPS  # noqa: E402

SHAPES = [(3, 4), (2, 3, 4), (4,), (4, 4)]

EXTRA = [
    ("torch.mm(a, b)", [(3, 4), (4, 2)]), ("a @ b", [(3, 4), (4, 2)]), ("torch.matmul(a, b)", [(4,), (4,)]),
    ("torch.matmul(a, b)", [(3, 4), (4,)]), ("torch.bmm(a, b)", [(2, 3, 4), (2, 4, 5)]),
    ("torch.mv(a, b)", [(3, 4), (4,)]), ("torch.dot(a, b)", [(4,), (4,)]), ("a.mm(b)", [(3, 4), (4, 2)]),
    ("torch.sum(a)", [(3, 4)]), ("a.sum(0)", [(3, 4)]), ("a.sum_to_size(1, 4)", [(3, 4)]), ("torch.mean(a)", [(3, 4)]),
    ("a.mean((0, 1))", [(3, 4)]), ("torch.prod(a)", [(3, 4)]), ("a.prod(1)", [(3, 4)]), ("torch.amax(a)", [(3, 4)]),
    ("torch.amin(a, 1)", [(3, 4)]), ("a.max()", [(3, 4)]), ("a.min()", [(3, 4)]), ("torch.max(a, 1).values", [(3, 4)]),
    ("a.min(0).values", [(3, 4)]), ("torch.median(a)", [(3, 4)]), ("torch.median(a, 1).values", [(3, 4)]),
    ("torch.std(a)", [(3, 4)]), ("torch.std(a, 1)", [(3, 4)]), ("torch.var(a)", [(3, 4)]), ("torch.norm(a)", [(3, 4)]),
    ("torch.linalg.norm(a)", [(3, 4)]), ("torch.linalg.vector_norm(a, 3)", [(3, 4)]),
    ("torch.clamp(a, 0.3, 0.6)", [(3, 4)]), ("torch.clamp(a, b)", [(3, 4), (3, 4)]), ("torch.clamp_min(a, 0.3)", [(3, 4)]),
    ("torch.clamp_max(a, b)", [(3, 4), (3, 4)]), ("a.clip(max=0.5)", [(3, 4)]),
    ("a.pow(2)", [(3, 4)]), ("a.square()", [(3, 4)]), ("a ** b", [(3, 4), (3, 4)]), ("torch.pow(2.0, a)", [(3, 4)]),
    ("1.0 - a", [(3, 4)]), ("torch.rsub(a, 2.0)", [(3, 4)]), ("torch.fmod(a, 0.3)", [(3, 4)]),
    ("torch.fmod(a, b)", [(3, 4), (3, 4)]), ("a % 0.3", [(3, 4)]), ("a % b", [(3, 4), (3, 4)]),
    ("torch.lerp(a, b, 0.3)", [(3, 4), (3, 4)]), ("torch.lerp(a, b, c)", [(3, 4), (3, 4), (3, 4)]),
    ("torch.log1p(a)", [(3, 4)]), ("torch.deg2rad(a)", [(3, 4)]), ("torch.rad2deg(a)", [(3, 4)]),
    ("torch.logaddexp(a, b)", [(3, 4), (3, 4)]), ("torch.logaddexp2(a, b)", [(3, 4), (3, 4)]),
    ("F.logsigmoid(a)", [(3, 4)]), ("F.celu(a)", [(3, 4)]), ("F.selu(a)", [(3, 4)]), ("F.prelu(a, b)", [(3, 4), (1,)]),
    ("a.scatter(1, torch.tensor([[0], [1], [2]]), 1.5)", [(3, 4)]),
    ("a.scatter(1, torch.tensor([[0], [1], [2]]), b)", [(3, 4), (3, 1)]),
    ("a.squeeze()", [(1, 4)]), ("a.squeeze(0)", [(1, 4)]), ("a.squeeze((0, 1))", [(1, 1, 4)]), ("a.t()", [(3, 4)]),
    ("a.t()", [(4,)]), ("a.T", [(3, 4)]), ("a.transpose(0, 1)", [(3, 4)]), ("a.transpose(1, 1)", [(3, 4)]),
    ("torch.narrow(a, 1, 1, 2)", [(3, 4)]), ("a[1:]", [(3, 4)]), ("a[1]", [(3, 4)]),
    ("F.pad(a, (1, 1))", [(3, 4)]), ("F.conv1d(a, b)", [(1, 2, 5), (3, 2, 3)]),
    ("F.conv2d(a, b, c)", [(1, 2, 5, 5), (3, 2, 3, 3), (3,)]), ("F.conv_transpose1d(a, b)", [(1, 2, 5), (2, 3, 3)]),
    ("F.max_pool2d(a, 2)", [(1, 2, 4, 4)]), ("F.max_pool3d(a, 2)", [(1, 1, 4, 4, 4)]),
    ("F.adaptive_max_pool2d(a, 2)", [(1, 2, 4, 4)]), ("F.unfold(a, 2)", [(1, 2, 3, 3)]),
    ("F.fold(a, (3, 3), 2)", [(1, 8, 4)]), ("torch.det(a)", [(3, 3)]), ("torch.linalg.inv(a)", [(3, 3)]),
    ("torch.linalg.svdvals(a)", [(3, 3)]), ("torch.linalg.qr(a).Q", [(3, 3)]),
    ("torch.cumsum(a, 0)", [(3, 4)]), ("torch.sort(a, 1).values", [(3, 4)]), ("torch.topk(a, 2).values", [(3, 4)]),
    ("F.softmax(a, 1)", [(3, 4)]), ("F.embedding(torch.tensor([0, 2]), a)", [(3, 4)]),
    ("torch.cat([a, b], 0)", [(3, 4), (2, 4)]), ("a.expand(2, 3, 4)", [(3, 4)]), ("a.reshape(2, 6)", [(3, 4)]),
    ("a[:, 1]", [(3, 4)]), ("a[None]", [(3, 4)]), ("a[..., 0]", [(3, 4)]), ("a[:]", [(3, 4)]), ("a[:, :]", [(3, 4)]),
    ("a[None, 1:2]", [(3, 4)]), ("a[1, None]", [(3, 4)]),
    # in-place view ops: overloads of their own
    ("a.clone().t_()", [(3, 4)]), ("a.clone()[:1].transpose_(0, 1)", [(3, 4)]), ("a.clone().unsqueeze_(0)", [(3, 4)]),
    ("a.clone().squeeze_()", [(1, 4)]), ("a.clone().squeeze_(0)", [(1, 4)]), ("a.clone().squeeze_((0, 1))", [(1, 1, 4)]),
    ("a.clone().swapdims_(0, 1)", [(3, 4)]), ("a.clone().as_strided_((2,), (1,))", [(3, 4)]),
]

# minitorch composes these differently from PyTorch (docs/differences.md): (PyTorch's name, minitorch's name)
COMPOSED = {
    "F.linear(a, b, c)": ("AddmmBackward0", "LinearBackward0"),  # PyTorch: addmm(bias, input, weight.t())
    "torch.stack([a, b], dim=-1)": ("StackBackward0", "CatBackward0"),  # minitorch: cat of unsqueezed views
}


def name_of(out):
    if isinstance(out, (tuple, list)):
        out = out[0]
    return out.grad_fn.name() if out.grad_fn is not None else None


def build(lib, source, shapes):
    rng = np.random.default_rng(0)
    namespace = {"torch": lib, "F": lib.nn.functional}
    for name, shape in zip("abc", shapes):
        namespace[name] = lib.tensor(rng.uniform(0.2, 0.9, shape), dtype=lib.float64).requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return name_of(eval(source, namespace))  # noqa: S307 - sources of this file and ops.py


def table_cases():
    """Each differentiable func/view op of the fuzzer's table at the first shape it takes; constant arguments
    drawn with a fixed seed."""
    cases = []
    for op in OPS.values():
        if not op.diff or op.kind not in ("func", "view") or op.template.startswith("!"):
            continue
        shape = next((s for s in SHAPES if op.when is None or op.when(s, "float64")), None)
        if shape is None:
            continue
        rng = np.random.default_rng(1)
        shapes = [shape]
        if op.arity > 1:
            if callable(op.second):
                extra = op.second(rng, [shape])
            elif op.second in ("broadcast", "same", "cat"):
                extra = [shape] * (op.arity - 1)
            else:
                continue
            if extra is None:
                continue
            shapes += list(extra)
        args = op.args(rng, [shape]) if op.args else {}
        if args is None:
            continue
        cases.append((op.template.format(a="a", b="b", c="c", **args), shapes))
    return cases


CASES = {f"{source} {shapes}": (source, shapes) for source, shapes in table_cases() + EXTRA}


@pytest.mark.parametrize("case", list(CASES))
def test_grad_fn_name_matches_pytorch(case):
    source, shapes = CASES[case]
    try:
        expected = build(torch, source, shapes)
    except Exception as error:  # noqa: BLE001 - arguments PyTorch refuses (the table draws a few): so must we
        with pytest.raises(type(error)):
            build(mt, source, shapes)
        return
    got = build(mt, source, shapes)
    assert (expected, got) == COMPOSED.get(source, (expected, expected))


def test_composed_cases_are_in_the_table():
    assert set(COMPOSED) <= {source for source, _ in CASES.values()}
