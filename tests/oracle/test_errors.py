"""Hand-written differential tests: the exception type of common ops on bad arguments (random programs rarely
draw these), and a few values random programs cannot reach. Each case runs in PyTorch and in minitorch."""

import pytest

torch = pytest.importorskip("torch")

import minitorch  # noqa: E402

# (label, source): `t` is the module, `F` its nn.functional
CASES = [
    ("add: shapes that do not broadcast", "t.zeros(2, 3) + t.zeros(4)"),
    ("view: size mismatch", "t.zeros(2, 3).view(4)"),
    ("view: non-contiguous", "t.zeros(2, 3).t().view(6)"),
    ("reshape: two -1", "t.zeros(2, 3).reshape(-1, -1)"),
    ("reshape: size mismatch", "t.zeros(2, 3).reshape(4, -1)"),
    ("sum: dim out of range", "t.zeros(2, 3).sum(dim=2)"),
    ("mean: integer input", "t.zeros(2, dtype=t.int64).mean()"),
    ("transpose: dim out of range", "t.zeros(2, 3).transpose(0, 2)"),
    ("permute: repeated dim", "t.zeros(2, 3).permute(0, 0)"),
    ("permute: too few dims", "t.zeros(2, 3).permute(0)"),
    ("squeeze: dim out of range", "t.zeros(2, 2).squeeze(3)"),
    ("unsqueeze: dim out of range", "t.zeros(2).unsqueeze(3)"),
    ("expand: smaller size", "t.zeros(2).expand(3)"),
    ("expand: fewer dims", "t.zeros(2, 3).expand(3)"),
    ("matmul: inner mismatch", "t.zeros(2, 3) @ t.zeros(2, 3)"),
    ("matmul: 0-dim", "t.matmul(t.zeros(()), t.zeros(2))"),
    ("mm: not a matrix", "t.mm(t.zeros(3), t.zeros(3, 2))"),
    ("bmm: batch mismatch", "t.bmm(t.zeros(2, 2, 2), t.zeros(3, 2, 2))"),
    ("dot: 2-d", "t.dot(t.zeros(2, 2), t.zeros(2, 2))"),
    ("dot: dtype mismatch", "t.dot(t.zeros(2), t.zeros(2, dtype=t.float64))"),
    ("cat: rank mismatch", "t.cat([t.zeros(2), t.zeros(2, 2)])"),
    ("cat: size mismatch", "t.cat([t.zeros(2, 3), t.zeros(2, 4)], dim=0)"),
    ("cat: empty list", "t.cat([])"),
    ("stack: shape mismatch", "t.stack([t.zeros(2), t.zeros(3)])"),
    ("getitem: index out of range", "t.zeros(3)[5]"),
    ("getitem: too many indices", "t.zeros(3)[0, 0]"),
    ("getitem: float index tensor", "t.zeros(3)[t.tensor([0.5])]"),
    ("getitem: mask shape mismatch", "t.zeros(3)[t.tensor([True, False])]"),
    ("setitem: value shape mismatch", "t.zeros(2, 3).__setitem__(0, t.zeros(4))"),
    ("gather: float index", "t.gather(t.zeros(2, 2), 0, t.tensor([[0.5]]))"),
    ("gather: index out of range", "t.gather(t.zeros(2, 2), 0, t.tensor([[2]]))"),
    ("gather: int32 index", "t.gather(t.zeros(2, 2), 0, t.tensor([[0]], dtype=t.int32))"),
    ("scatter: index out of range", "t.zeros(3).scatter(0, t.tensor([3]), t.ones(1))"),
    ("index_select: index out of range", "t.zeros(2).index_select(0, t.tensor([2]))"),
    ("index_select: 2-d index", "t.zeros(2).index_select(0, t.tensor([[0]]))"),
    ("narrow: start out of range", "t.zeros(3).narrow(0, 4, 1)"),
    ("narrow: length too long", "t.zeros(3).narrow(0, 1, 3)"),
    ("select: index out of range", "t.zeros(3).select(0, 3)"),
    ("split: zero size", "t.zeros(3).split(0)"),
    ("chunk: zero chunks", "t.zeros(3).chunk(0)"),
    ("topk: k too large", "t.zeros(3).topk(4)"),
    ("softmax: dim out of range", "F.softmax(t.zeros(2, 3), dim=2)"),
    ("log_softmax: integer input", "F.log_softmax(t.zeros(3, dtype=t.int64), dim=0)"),
    ("flip: repeated dim", "t.zeros(2, 2).flip(0, 0)"),
    ("argmax: empty", "t.zeros(0).argmax()"),
    ("max: empty", "t.zeros(0).max()"),
    ("std: integer input", "t.zeros(3, dtype=t.int64).std()"),
    ("clamp: no bounds", "t.clamp(t.zeros(2))"),
    ("where: condition not bool", "t.where(t.zeros(2), t.zeros(2), t.ones(2))"),
    ("masked_fill: float mask", "t.zeros(2).masked_fill(t.zeros(2), 1.0)"),
    ("item: more than one element", "t.zeros(2).item()"),
    ("float(): more than one element", "float(t.zeros(2))"),
    ("int(): more than one element", "int(t.zeros(2))"),
    ("bool(): more than one element", "bool(t.zeros(2))"),
    ("empty: negative size", "t.empty(-1)"),
    ("empty: size too large", "t.empty(2**62)"),
    ("arange: zero step", "t.arange(0, 3, 0)"),
    ("requires_grad on an integer tensor", "t.zeros(2, dtype=t.int64).requires_grad_()"),
    ("backward without grad", "t.zeros(2).sum().backward()"),
    ("backward of a non-scalar", "t.ones(2, requires_grad=True).mul(2).backward()"),
    ("numpy() of a tensor requiring grad", "t.ones(2, requires_grad=True).numpy()"),
    ("in-place on a leaf requiring grad", "t.ones(2, requires_grad=True).add_(1)"),
    ("in-place: result type does not fit", "t.zeros(2, dtype=t.int64).add_(0.5)"),
    ("in-place: broadcast does not fit", "t.zeros(2).add_(t.zeros(2, 2))"),
    ("autograd.grad: unused input", "t.autograd.grad(t.ones(1, requires_grad=True).sum(), [t.ones(1, requires_grad=True)])"),
    ("view under an in-place after backward",
     "(lambda x: ((y := x.exp()), y.add_(1), y.sum().backward()))(t.ones(2, requires_grad=True))"),
    ("F.linear: shape mismatch", "F.linear(t.zeros(2, 3), t.zeros(4, 2))"),
    ("F.relu: integer input", "F.relu(t.zeros(2, dtype=t.int64)).sum().backward()"),
]


def outcome(module, source):
    """The exception type name a source line raises with `t` bound to module, or None."""
    try:
        eval(source, {"t": module, "F": module.nn.functional})  # noqa: S307 - the sources above
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__
    return None


@pytest.mark.parametrize("label, source", CASES, ids=[c[0] for c in CASES])
def test_exception_type_matches_pytorch(label, source):
    expected = outcome(torch, source)
    got = outcome(minitorch, source)
    assert got == expected, f"{source}: minitorch raises {got}, PyTorch {expected}"
