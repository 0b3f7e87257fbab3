"""The fast paths of the hot elementwise ops (ops/fast_path.py) compute and record exactly what Op.apply does."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch as torch
from minitorch import _dispatch_modes
from minitorch._names import state as names_state
from minitorch.autograd import forward_ad as fwAD
from minitorch.autograd.graph import SavedTensor
from minitorch.ops import arithmetic, pointwise
from minitorch.ops.op import Op
from minitorch.storage import Storage
from minitorch.tensor import Tensor

BINARY = [  # (operator, op class, argument order of Op.apply: False = (self, other))
    (Tensor.__add__, arithmetic.Add, False), (Tensor.__radd__, arithmetic.Add, True),
    (Tensor.__sub__, arithmetic.Sub, False), (Tensor.__rsub__, arithmetic.Rsub, True),
    (Tensor.__mul__, arithmetic.Mul, False), (Tensor.__rmul__, arithmetic.Mul, True),
    (Tensor.__truediv__, arithmetic.Div, False),
]


def _node_state(node):
    """What backward reads from a recorded node, comparable between two recordings of one op."""
    if node is None:
        return None
    saved = []
    for s in node._saved:
        if type(s) is SavedTensor:
            saved.append(("tensor", s.version, s.output_nr, s.history, s.tensor._array.tobytes()))
        else:
            saved.append(s)
    return (type(node), node.name(), node.next_functions, node._input_meta, node._arrays, node._uniform,
            tuple(saved), node._n_outputs)


def _same(fast, general):
    assert type(fast) is type(general)
    assert fast.dtype is general.dtype and fast.shape == general.shape and fast.stride() == general.stride()
    np.testing.assert_array_equal(fast._array, general._array)
    assert fast.requires_grad == general.requires_grad and fast._output_nr == general._output_nr
    assert fast._meta is None and general._meta is None
    assert _node_state(fast.grad_fn) == _node_state(general.grad_fn)


def _operands():
    """Pairs of operands: tensors wanting a gradient or not, leaves and non-leaves, broadcasting, 0-dim,
    transposed layouts, Python numbers, and the dtypes the fast path takes."""
    leaf = torch.randn(3, 4, requires_grad=True)
    inner = leaf * 2
    plain = torch.randn(3, 4)
    for dtype in (torch.float32, torch.float64, torch.float16):
        a, b = torch.randn(2, 3, dtype=dtype, requires_grad=True), torch.randn(2, 3, dtype=dtype)
        yield a, b
        yield b, a
        yield a, 1.5
        yield a, 3
    yield leaf, inner
    yield inner, leaf
    yield inner, inner
    yield plain, plain
    yield leaf, torch.randn(4, requires_grad=True)  # broadcast: not uniform
    yield torch.randn((), requires_grad=True), torch.randn(())  # 0-dim: numpy returns a scalar
    yield torch.randn(4, 3).t(), torch.randn(3, 4)  # a transposed operand: numpy's 'K' order, then PyTorch's
    yield torch.randn(3, 4).t().contiguous(), torch.randn(1, 3, requires_grad=True)
    weight = torch.nn.Parameter(torch.randn(3, 4))  # a parameter: a plain leaf for the fast path
    yield weight, inner
    yield weight, 2.0
    yield torch.nn.Parameter(torch.randn(4), requires_grad=False), leaf


@pytest.mark.parametrize("operator, op, reflected", BINARY)
def test_binary_operators_record_what_op_apply_records(operator, op, reflected):
    for a, b in _operands():
        for x, y in ((a, b), (b, a)):
            if not isinstance(x, Tensor):
                continue
            fast = operator(x, y)
            general = op.apply(y, x) if reflected else op.apply(x, y)
            _same(fast, general)


@pytest.mark.parametrize("name", sorted(set(pointwise.UNARY) - pointwise.PRIVATE))
def test_unary_ops_record_what_op_apply_records(name):
    op = pointwise.OPS[name]
    for x, _ in _operands():  # (NaN outside a function's domain: equal on both paths)
        _same(getattr(pointwise, name)(x), op.apply(x))


def test_gradients_through_the_fast_path_match_the_general_path():
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    y = torch.randn(5, dtype=torch.float64, requires_grad=True)
    (((x + y) * x - y).tanh().exp() / 3 + 2 - x * 0.5).sum().backward()
    gx, gy = x.grad.clone(), y.grad.clone()
    x.grad = y.grad = None
    A, S, M, D, P = arithmetic.Add, arithmetic.Sub, arithmetic.Mul, arithmetic.Div, pointwise.OPS
    t = P["exp"].apply(P["tanh"].apply(S.apply(M.apply(A.apply(x, y), x), y)))
    A.apply(S.apply(A.apply(D.apply(t, 3), 2), M.apply(x, 0.5)), 0).sum().backward()
    np.testing.assert_allclose(x.grad._array, gx._array)
    np.testing.assert_allclose(y.grad._array, gy._array)
    assert torch.autograd.gradcheck(lambda a, b: ((a + b) * a - b / 2).tanh().exp(), (x, y))


def test_other_cases_take_the_general_path_unchanged():
    x = torch.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="must match the size"):
        x + torch.randn(4)
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool tensor"):
        torch.tensor([True]) - torch.tensor([1.0])
    assert (torch.tensor([1, 2]) * 2.5).dtype is torch.float32  # int tensor, float scalar: promoted
    assert (torch.tensor([1.0], dtype=torch.float16) + torch.tensor([1.0])).dtype is torch.float32
    assert (torch.tensor([1.0], dtype=torch.bfloat16) * 0.3).dtype is torch.bfloat16
    assert (torch.tensor([1.0]) + True).dtype is torch.float32
    assert (x + np.float64(2.0)).dtype is torch.float32  # a numpy scalar is a 0-dim array operand
    assert (x + 1e300).tolist()[0] == float("inf")
    p = torch.nn.Parameter(torch.randn(3))
    assert (p * 2).grad_fn.name() == "MulBackward0"
    view = x[:2]
    assert (view * 2).grad_fn.next_functions[0][0].name() == "SliceBackward0"
    with torch.inference_mode():
        assert torch.exp(torch.randn(2)).is_inference()
    with torch.no_grad():
        assert (x * 2).grad_fn is None and not (x * 2).requires_grad
    assert x.__add__("a") is NotImplemented
    with pytest.raises(TypeError, match="must be Tensor"):
        torch.exp([1.0])
    assert torch.exp(input=x).grad_fn.name() == "ExpBackward0"  # the argument's name is PyTorch's


@pytest.mark.filterwarnings("ignore:Anomaly Detection")
def test_modes_route_to_the_general_path():
    x = torch.randn(3, requires_grad=True)
    with torch.autograd.detect_anomaly():
        assert x.exp().grad_fn._traceback is not None
    packed = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        (x * x).exp()
    assert len(packed) == 3


@pytest.mark.filterwarnings("ignore:Anomaly Detection")
def test_each_mode_counts_itself_while_on_and_only_then():
    """The fast paths read one count of the modes that must see every op: each mode adds itself on the way in
    and takes itself out on the way out, also when nested or suspended."""
    base = _dispatch_modes.holds
    seen = []

    def count(*_):
        seen.append(_dispatch_modes.holds - base)

    with fwAD.dual_level():
        count()
        x = fwAD.make_dual(torch.randn(3), torch.ones(3))
        assert fwAD.unpack_dual(x.exp()).tangent is not None  # a jvp rule suspends forward AD, then resumes it
        count()
    with torch.autograd.detect_anomaly():
        count()
        with torch.autograd.detect_anomaly():
            count()
        count()
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            count()
    with torch.profiler.profile():
        count()
    compiled = torch.compile(lambda t: (count(), t * 2)[1])
    compiled(torch.randn(3))  # traced: the tracer is installed while the function runs
    assert seen == [1, 1, 1, 1, 1, 1, 1, 1]
    assert _dispatch_modes.holds == base


def test_the_profiler_times_every_op():
    x = torch.randn(3, requires_grad=True)
    with torch.profiler.profile() as prof:
        (x * 2 + 1).exp()
    assert {e.key for e in prof.key_averages()} >= {"minitorch::Mul", "minitorch::Add", "minitorch::Exp"}
    assert (x * 2).grad_fn.name() == "MulBackward0"  # and the fast path is back after it


def test_the_common_case_does_not_reach_op_apply(monkeypatch):
    x, y = torch.randn(3, requires_grad=True), torch.randn(3)

    def refuse(cls, *args, **params):
        raise AssertionError(f"{cls.__name__} went through Op.apply")

    monkeypatch.setattr(Op, "apply", classmethod(refuse))
    # (a named tensor made earlier in this process turns name inference on for good: the fast paths step aside)
    monkeypatch.setattr(names_state, "active", False)
    monkeypatch.setattr(_dispatch_modes, "holds", 0)
    out = (2 - ((x + y) * x - 1.5 / y.exp()).tanh() * 3) / 2
    for slot in [s for s in Tensor.__slots__ if s != "__weakref__"]:  # every slot written (Tensor._make's)
        getattr(out, slot)
    for slot in [s for s in Storage.__slots__ if s != "__weakref__"]:
        getattr(out._storage, slot)
    (torch.nn.Parameter(torch.randn(3)) * 2).exp()  # a parameter: a leaf like any other
    with pytest.raises(AssertionError, match="Mul went through"):
        torch.nn.Buffer(torch.randn(3)) * 2  # another subclass: the general path
