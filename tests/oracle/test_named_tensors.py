"""Differential tests for named tensors (issue 15, part 5).

PyTorch 2.13 removed named tensors (``names=`` is a TypeError there, ``Tensor.names`` an AttributeError), so
against it each case runs twice: minitorch on named inputs with dims given by name, PyTorch on the same values
unnamed with dims given by index; values, dtypes, shapes and the gradient of the input must agree, and
minitorch's names must equal the names PyTorch 2.12 documented for the case (its "Named Tensors operator
coverage" rules). Against a PyTorch that still has named tensors the names, and the errors of the error cases
(type and message), are compared with PyTorch itself.
"""

import re
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minitorch  # noqa: E402

TORCH_HAS_NAMES = hasattr(torch.Tensor, "refine_names")
pytestmark = pytest.mark.filterwarnings("ignore:Named tensors and all their associated APIs")

X_NAMES = ("N", "C", "H")  # x: (2, 3, 4); w: (4,) named ('H',); m: (4, 5) named ('H', 'D'); u: (2, 3, 4) unnamed
_rng = np.random.default_rng(15)
X, W, M, U = (_rng.standard_normal(s) for s in ((2, 3, 4), (4,), (4, 5), (2, 3, 4)))

# (source, the names PyTorch 2.12 gives); ``d('C')`` is the dim: a name, or its index in x for an unnamed PyTorch
CASES = [
    ("x.abs()", X_NAMES),
    ("x.exp() * 2 - 1", X_NAMES),
    ("x.sigmoid().tanh()", X_NAMES),
    ("x + w", X_NAMES),
    ("x * u", X_NAMES),
    ("lib.where(x > 0, x, w)", X_NAMES),
    ("x.pow(2).clamp(0, 1)", X_NAMES),
    ("x.sum(d('C'))", ("N", "H")),
    ("x.sum([d('N'), d('H')])", ("C",)),
    ("x.sum(d('C'), keepdim=True)", X_NAMES),
    ("x.sum()", ()),
    ("x.mean(d('H'))", ("N", "C")),
    ("x.prod(d('N'))", ("C", "H")),
    ("x.var(d('C'))", ("N", "H")),
    ("x.std(d('C'), keepdim=True)", X_NAMES),
    ("x.logsumexp(d('H'))", ("N", "C")),
    ("x.max(d('C')).values", ("N", "H")),
    ("x.min(d('H')).values", ("N", "C")),
    ("x.amax(d('C'))", ("N", "H")),
    ("x.argmax(d('C'))", ("N", "H")),
    ("x.norm(dim=d('H'))", ("N", "C")),
    ("x.cumsum(d('C'))", X_NAMES),
    ("x.softmax(d('C'))", X_NAMES),
    ("x.log_softmax(d('H'))", X_NAMES),
    ("lib.nn.functional.softmax(x, dim=d('C'))", X_NAMES),
    ("x.transpose(d('N'), d('H'))", ("H", "C", "N")),
    ("x.permute(2, 0, 1)", ("H", "N", "C")),
    ("x.select(d('C'), 1)", ("N", "H")),
    ("x.narrow(d('H'), 1, 2)", X_NAMES),
    ("x.unsqueeze(0)", (None, "N", "C", "H")),
    ("x.split(2, d('H'))[1]", X_NAMES),
    ("x.unbind(d('C'))[0]", ("N", "H")),
    ("x.clone()", X_NAMES),
    ("x.to(lib.float32)", X_NAMES),
    ("x @ m", ("N", "C", "D")),
    ("lib.matmul(x, w)", ("N", "C")),
    ("lib.cat([x, x], d('C'))", X_NAMES),
    ("x.size(d('H'))", None),
    ("x.stride(d('C'))", None),
]


def _d(named: bool):
    return (lambda name: name) if named else X_NAMES.index


def _run(lib, source: str, named: bool):
    x = lib.tensor(X, requires_grad=True)
    leaf = x
    w, m, u = lib.tensor(W), lib.tensor(M), lib.tensor(U)
    if named:
        x, w, m = x.refine_names(*X_NAMES), w.refine_names("H"), m.refine_names("H", "D")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = eval(source, {"lib": lib, "x": x, "w": w, "m": m, "u": u, "d": _d(named)})
        except Exception as exc:  # noqa: BLE001 - compared by type and message
            return exc, None
        grad = None
        if isinstance(out, lib.Tensor) and out.dtype.is_floating_point:
            out.sum().backward()
            grad = leaf.grad
    return out, grad


def _values(t, named: bool):
    t = t.detach()
    if named and t.has_names():
        t = t.rename(None)
    return t.numpy()


@pytest.mark.parametrize("source, expected_names", CASES, ids=[c[0] for c in CASES])
def test_named_op_matches_pytorch(source, expected_names):
    mine, mine_grad = _run(minitorch, source, named=True)
    theirs, theirs_grad = _run(torch, source, named=TORCH_HAS_NAMES)
    assert not isinstance(mine, Exception), f"{source}: minitorch raised {mine!r}"
    assert not isinstance(theirs, Exception), f"{source}: PyTorch raised {theirs!r}"
    if not isinstance(theirs, torch.Tensor):
        assert mine == theirs, source
        return
    assert mine.names == expected_names, source
    if TORCH_HAS_NAMES:
        assert mine.names == theirs.names, source
    assert str(mine.dtype) == str(theirs.dtype) and tuple(mine.shape) == tuple(theirs.shape), source
    np.testing.assert_allclose(_values(mine, True), _values(theirs, TORCH_HAS_NAMES), rtol=1e-12, atol=1e-12,
                               err_msg=source)
    assert (mine_grad is None) == (theirs_grad is None), source
    if theirs_grad is not None:
        assert not mine_grad.has_names(), source  # autograd ignores names
        np.testing.assert_allclose(mine_grad.numpy(), theirs_grad.numpy(), rtol=1e-12, atol=1e-12, err_msg=source)


# (source, exception type, PyTorch 2.12's message as a regex)
ERRORS = [
    ("x + lib.zeros(4, names=('N',))", RuntimeError,
     r"^Error when attempting to broadcast dims \['N', 'C', 'H'\] and dims \['N'\]: dim 'H' and dim 'N' are at the "
     r"same position from the right but do not match.$"),
    ("lib.zeros(3, 3, names=('N', None)) + lib.zeros(3, names=('N',))", RuntimeError,
     r"^Misaligned dims when attempting to broadcast dims \['N'\] and dims \['N', None\]: dim 'N' appears in a "
     r"different position from the right across both lists.$"),
    ("x.sum('Z')", RuntimeError, r"^Name 'Z' not found in Tensor\['N', 'C', 'H'\].$"),
    ("x.refine_names('N', 'C', 'W')", RuntimeError,
     r"^refine_names: cannot coerce Tensor\['N', 'C', 'H'\] to Tensor\['N', 'C', 'W'\] because 'H' is different "
     r"from 'W' at index 2"),
    ("x.rename('N', 'N', 'H')", RuntimeError, r"^Cannot construct a tensor with duplicate names. Got names: "
                                               r"\['N', 'N', 'H'\].$"),
    ("lib.zeros(2, names=('1',))", RuntimeError, r"^Invalid name: a valid identifier contains only digits"),
    ("lib.zeros(2, 3, names=('N',))", RuntimeError,
     r"^Number of names \(1\) and number of dimensions in tensor \(2\) do not match."),
    ("x.view(6, 4)", RuntimeError, r"is not yet supported with named tensors. Please drop names via "
                                    r"`tensor = tensor.rename\(None\)`, call the op with an unnamed tensor, and set "
                                    r"names on the result of the operation.$"),
    ("lib.zeros(2, 3, names=('N', 'C')) @ lib.zeros(3, 2, names=('C', 'N')).rename('X', 'N')", RuntimeError,
     r"would produce output tensor with duplicate names \['N', 'N'\]"),
]


@pytest.mark.parametrize("source, kind, message", ERRORS, ids=[e[0] for e in ERRORS])
def test_named_errors(source, kind, message):
    mine, _ = _run(minitorch, source, named=True)
    assert isinstance(mine, kind), f"{source}: expected {kind.__name__}, got {mine!r}"
    assert re.search(message, str(mine)), f"{source}: {mine}"
    if TORCH_HAS_NAMES:
        theirs, _ = _run(torch, source, named=True)
        assert isinstance(theirs, kind) and re.search(message, str(theirs)), theirs
    else:  # the premise of the difference in docs/differences.md: this PyTorch has no named tensors
        with pytest.raises(TypeError):
            torch.zeros(2, names=("N",))
