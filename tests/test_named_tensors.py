"""Named tensors (issue 15, part 5): names in factories, renaming, refining and aligning, name inference through
pointwise ops, reductions, views and matmul, PyTorch's errors, and gradients (gradcheck in float64)."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

import minitorch as torch
import minitorch.nn.functional as F
from minitorch.autograd import gradcheck, gradgradcheck

pytestmark = pytest.mark.filterwarnings("ignore:Named tensors and all their associated APIs")


def _named(*shape, names, dtype=torch.float32):
    return torch.randn(*shape, dtype=dtype, names=names)


# creating and naming ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("factory", [torch.zeros, torch.ones, torch.empty, torch.rand, torch.randn])
def test_factories_take_names(factory):
    assert factory(1, 2, 3, names=("N", "T", "D")).names == ("N", "T", "D")
    assert factory(1, 2, 3, names=("N", None, "D")).names == ("N", None, "D")
    assert factory(1, 2, 3, names=None).names == (None, None, None)
    assert factory(2, 3, names=(None, None)).has_names() is False
    assert factory(1, 2, 3, names=("_1", "batch9", "BATCH_5")).names == ("_1", "batch9", "BATCH_5")


def test_tensor_and_full_take_names():
    assert torch.tensor([[1, 2]], names=("N", "C")).names == ("N", "C")
    assert torch.tensor([0.2126, 0.7152, 0.0722], names=["channels"]).names == ("channels",)
    assert torch.full((2, 3), 2.0, names=("N", "C")).names == ("N", "C")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's advice to use clone()
        assert torch.tensor(torch.zeros(2, names=("N",))).names == ("N",)  # copied from a named tensor
        assert torch.tensor(torch.zeros(2, names=("N",)), names=None).names == ("N",)
        with pytest.raises(RuntimeError, match=r"Name mismatch: specified out tensor with names \['N', 'D'\] are not "
                                               r"the same as the computed output names \['N', 'C'\]"):
            torch.tensor(torch.randn(1, 1, names=("N", "D")), names=("N", "C"))


def test_factory_name_errors():
    with pytest.raises(RuntimeError, match="a valid identifier contains only digits"):
        torch.empty(2, names=("1a",))
    with pytest.raises(RuntimeError, match="a valid identifier"):
        torch.empty(2, names=("?",))
    with pytest.raises(RuntimeError, match=r"Number of names \(1\) and number of dimensions in tensor \(2\)"):
        torch.empty(2, 1, names=("N",))
    with pytest.raises(RuntimeError, match=r"duplicate names. Got names: \['N', 'C', 'N'\]"):
        torch.empty(2, 1, 1, names=("N", "C", "N"))


def test_names_property_and_has_names():
    t = torch.empty(1, 1, names=("N", "C"))
    assert t.has_names() and torch.empty(2).names == (None,) and not torch.empty(2).has_names()
    assert torch.empty(()).names == ()
    t.names = None
    assert t.names == (None, None) and not t.has_names()
    t.names = ("N", "W")
    assert t.names == ("N", "W")
    with pytest.raises(RuntimeError, match="Number of names"):
        t.names = ["N", "C", "W"]
    with pytest.raises(RuntimeError, match="duplicate names"):
        t.names = ["N", "N"]


def test_first_name_warns_once_per_process():
    code = (
        "import warnings\nimport minitorch as torch\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    torch.randn(3, 3, names=('N', 'C'))\n"
        "    torch.zeros(2, names=('A',))\n"
        "print(len(w), w[0].category.__name__, str(w[0].message)[:50], w[0].filename.endswith('<string>'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[0] == "1 UserWarning Named tensors and all their associated APIs are an True"


def test_repr_shows_names():
    assert repr(torch.zeros(2, 3).rename_("N", "C")) == "tensor([[0., 0., 0.],\n        [0., 0., 0.]], names=('N', 'C'))"
    assert repr(torch.zeros(2, 3).rename_(None, None)) == "tensor([[0., 0., 0.],\n        [0., 0., 0.]])"


# rename / refine_names ---------------------------------------------------------------------------------------
def test_rename_forms():
    t = torch.empty(1, 1, names=("N", "C"))
    assert t.rename(None).names == (None, None)
    assert t.rename("H", "W").names == ("H", "W")
    assert t.names == ("N", "C")  # rename is out of place
    assert t.rename("H", "W").data_ptr() == t.data_ptr()  # a view
    assert t.rename(N="batch").names == ("batch", "C")
    named = torch.empty(1, 1, 1, 1, names=("N", "C", "H", "W"))
    assert named.rename("...", "width").names == ("N", "C", "H", "width")
    assert named.rename("batch", ..., "width").names == ("batch", "C", "H", "width")
    assert torch.empty(1, 1, 1, 1).rename("N", "...", "W").names == ("N", None, None, "W")
    assert named.rename("N", "C", "H", "...", "W").names == ("N", "C", "H", "W")  # an empty glob


def test_rename_errors():
    t = torch.empty(1, 1, names=("N", "C"))
    with pytest.raises(RuntimeError, match="Number of names"):
        t.rename("N", "C", "W")
    with pytest.raises(RuntimeError, match="duplicate names"):
        t.rename("N", "N")
    with pytest.raises(RuntimeError, match="either positional args or keyword args"):
        t.rename(None, N="batch")
    with pytest.raises(RuntimeError, match="dim 'B' does not exist"):
        t.rename(B="batch")
    with pytest.raises(RuntimeError, match="More than one "):
        t.rename("...", "channels", "...")


def test_rename_in_place():
    t = torch.empty(1, 1, names=("N", "C"))
    assert t.rename_(None) is t and t.names == (None, None)
    assert t.rename_("H", "W").names == ("H", "W")
    with pytest.raises(RuntimeError, match="Number of names"):
        t.rename_("N", "C", "W")


def test_refine_names():
    assert torch.empty(1, 2, 3).refine_names("N", "C", "H").names == ("N", "C", "H")
    assert torch.empty(1, 2, 3, names=(None, "C", None)).refine_names(None, "C", "H").names == (None, "C", "H")
    assert torch.randn(2, 3, 5, 7).refine_names("N", ..., "C").names == ("N", None, None, "C")
    with pytest.raises(RuntimeError, match=r"cannot coerce Tensor\[None, None\] to Tensor\['N', 'C', 'H'\] because "
                                           r"they have a different number of dims \(2 and 3 respectively\)"):
        torch.empty(2, 3).refine_names("N", "C", "H")
    with pytest.raises(RuntimeError, match="because 'D' is different from 'N' at index 0"):
        torch.empty(3, names=("D",)).refine_names("N")
    with pytest.raises(RuntimeError, match="because 'D' is more specific than None at index 0"):
        torch.empty(3, names=("D",)).refine_names(None)


# align_to / align_as -----------------------------------------------------------------------------------------
def test_align_to_permutes_and_adds_dims():
    x = torch.arange(6.0).reshape(2, 3).refine_names("N", "C")
    out = x.align_to("C", "Z", "N")
    assert out.shape == (3, 1, 2) and out.names == ("C", "Z", "N")
    np.testing.assert_array_equal(out.rename(None).numpy()[:, 0, :], x.rename(None).numpy().T)
    assert out.data_ptr() == x.data_ptr()  # a view
    t = torch.randn(2, 2, 2, 2, 2, 2).refine_names("A", "B", "C", "D", "E", "F")
    assert t.align_to("F", "E", ...).names == ("F", "E", "A", "B", "C", "D")
    assert torch.equal(t.align_to("F", "E", ...).rename(None), t.rename(None).permute(5, 4, 0, 1, 2, 3))


def test_align_to_errors():
    x = torch.empty(2, 3, names=("N", None))
    with pytest.raises(RuntimeError, match="All input dims must be named. Found unnamed dim at index 1"):
        x.align_to("N", "C")
    with pytest.raises(RuntimeError, match=r"Cannot find dim 'C' from Tensor\['N'\] in desired alignment \['N'\]"):
        torch.empty(2, 3, names=("N", "C")).align_to("N")
    with pytest.raises(RuntimeError, match="cannot contain a None name"):
        x.align_to(None, ...)
    with pytest.raises(RuntimeError, match="More than one Ellipsis"):
        x.align_to(..., "N", ...)


def test_align_as_and_the_seed_program():
    img_t = torch.randn(3, 5, 5)
    weights_named = torch.tensor([0.2126, 0.7152, 0.0722], names=["channels"])
    assert weights_named.names == ("channels",)
    img_named = img_t.refine_names(..., "channels", "rows", "columns")
    assert (img_named.shape, img_named.names) == (torch.Size([3, 5, 5]), ("channels", "rows", "columns"))
    batch_named = torch.randn(2, 3, 5, 5).refine_names(..., "channels", "rows", "columns")
    assert batch_named.names == (None, "channels", "rows", "columns")
    weights_aligned = weights_named.align_as(img_named)
    assert (weights_aligned.shape, weights_aligned.names) == (torch.Size([3, 1, 1]), ("channels", "rows", "columns"))
    gray_named = (img_named * weights_aligned).sum("channels")
    assert (gray_named.shape, gray_named.names) == (torch.Size([5, 5]), ("rows", "columns"))
    gray_plain = gray_named.rename(None)
    assert (gray_plain.shape, gray_plain.names) == (torch.Size([5, 5]), (None, None))
    expected = (img_t * torch.tensor([0.2126, 0.7152, 0.0722]).view(3, 1, 1)).sum(0)
    assert torch.allclose(gray_plain, expected)


def test_flatten_and_unflatten_by_name():
    imgs = torch.randn(4, 3, 5, 6, names=("N", "C", "H", "W"))
    flat = imgs.flatten(["C", "H", "W"], "features")
    assert flat.names == ("N", "features") and flat.shape == (4, 90)
    assert imgs.flatten(1, 3, "features").names == ("N", "features")
    back = flat.unflatten("features", (("C", 3), ("H", 5), ("W", 6)))
    assert back.names == ("N", "C", "H", "W") and torch.equal(back.rename(None), imgs.rename(None))
    with pytest.raises(RuntimeError, match="must be consecutive in"):
        imgs.flatten(["C", "W"], "features")
    with pytest.raises(RuntimeError, match="Name 'L' not found in"):
        imgs.flatten(["C", "L"], "features")
    with pytest.raises(RuntimeError, match="input is a named tensor but no names were given"):
        flat.unflatten(1, (3, 30))
    assert torch.ones(2, 10, names=("A", "B")).unflatten("B", (["B1", -1],)).names == ("A", "B1")
    with pytest.raises(RuntimeError, match=r"Provided sizes \[3, -1\] don't multiply up to the size of dim 1 "
                                           r"\('B': 4\) in Tensor\['A', 'B'\]"):
        torch.ones(2, 4, names=("A", "B")).unflatten("B", (("B1", 3), ("B2", -1)))
    with pytest.raises(TypeError, match=r"unflatten\(\): argument 'dim' \(position 1\) must be int, not str"):
        torch.tensor([1], names=("A",)).unflatten("A", (1, 1))
    with pytest.raises(RuntimeError, match="sizes must be non-empty"):
        flat.unflatten("features", None)
    with pytest.raises(RuntimeError, match="cannot be empty"):
        torch.empty(2, 3).flatten((), "abcd")
    sentences = torch.randn(2, 3, 5, 7, names=("N", "T", "H", "D")).transpose("T", "H")  # non-contiguous
    assert sentences.flatten("N", "H", "N_H").names == ("N_H", "T", "D")
    assert torch.equal(sentences.flatten("N", "H", "N_H").rename(None), sentences.rename(None).reshape(10, 3, 7))
    assert torch.arange(6).unflatten(0, (2, 3)).shape == (2, 3)  # the unnamed forms are unchanged
    assert torch.arange(6).reshape(2, 3).flatten().shape == (6,)


# name inference --------------------------------------------------------------------------------------------
def test_binary_ops_unify_from_the_right():
    a = torch.empty(2, 3, names=("N", "C"))
    assert (a + a).names == ("N", "C")
    assert (a * torch.empty(3, names=("C",))).names == ("N", "C")
    assert (a - torch.empty(2, 3)).names == ("N", "C")
    assert (torch.empty(2, 3, names=("N", None)) + torch.empty(2, 3, names=(None, "C"))).names == ("N", "C")
    assert (torch.empty(1, 2, 3) + a).names == (None, "N", "C")
    assert (a * 2).names == ("N", "C") and (2 ** a).names == ("N", "C") and (-a).names == ("N", "C")
    assert torch.where(a > 0, a, 0.0).names == ("N", "C")
    with pytest.raises(RuntimeError, match=r"^Error when attempting to broadcast dims \['N', 'C'\] and dims \['N'\]: "
                                           r"dim 'C' and dim 'N' are at the same position from the right but do not "
                                           r"match.$"):
        a + torch.empty(3, names=("N",))
    with pytest.raises(RuntimeError, match="do not match"):
        a + torch.empty(3, 2, names=("C", "N"))
    with pytest.raises(RuntimeError, match=r"Misaligned dims when attempting to broadcast dims \[None, 'C'\] and "
                                           r"dims \['C', None\]: dim 'C' appears in a different position"):
        torch.empty(2, 3, names=("C", None)) + torch.empty(2, 3, names=(None, "C"))


def test_unary_and_copies_keep_names():
    x = _named(2, 3, names=("N", "C"))
    for out in (x.abs(), x.exp(), x.relu(), x.sigmoid(), x.clamp(0, 1), x.clone(), x.detach(), x.contiguous(),
                x.double(), x.to(torch.float64), F.dropout(x, 0.5), torch.zeros_like(x), x.cumsum("C"), x.softmax("C"),
                F.log_softmax(x, dim="C"), x.t().contiguous().t(), x.narrow("C", 0, 2)):
        assert out.names == ("N", "C"), out


def test_reductions_by_name():
    x = _named(2, 3, 4, names=("N", "C", "H"))
    assert x.sum("C").names == ("N", "H")
    assert x.sum(["N", "C"]).names == ("H",)
    assert x.sum(("N", "C"), keepdim=True).names == ("N", "C", "H")
    assert x.sum().names == () and x.mean().names == ()
    assert torch.sum(x, "H").names == ("N", "C")
    for out in (x.mean("C"), x.prod("C"), x.var("C"), x.std("C"), x.logsumexp("C"), x.amax("C"), x.norm(dim="C"),
                x.argmax("C"), (x > 0).all("C"), (x > 0).any("C")):
        assert out.names == ("N", "H"), out
    values, indices = x.max("C")
    assert values.names == indices.names == ("N", "H")
    assert x.min("H", keepdim=True).values.names == ("N", "C", "H")
    assert x.median("N").values.names == ("C", "H") and x.kthvalue(1, "H").indices.names == ("N", "C")
    assert torch.allclose(x.sum("C").rename(None), x.rename(None).sum(1))
    with pytest.raises(RuntimeError, match=r"^Name 'Z' not found in Tensor\['N', 'C', 'H'\].$"):
        x.sum("Z")


def test_size_stride_transpose_and_views_by_name():
    t = torch.empty(2, 3, 5, names=("N", None, "C"))
    assert (t.size("N"), t.size("C"), t.stride("N"), t.stride("C")) == (2, 5, 15, 1)
    with pytest.raises(RuntimeError, match="Name 'channels' not found in "):
        t.size("channels")
    with pytest.raises(RuntimeError, match=r"Name 'N' not found in Tensor\[None, None, None\]"):
        torch.empty(2, 3, 4).stride("N")
    x = torch.randn(2, 3, 5, 7, names=("N", "C", "H", "W"))
    assert x.transpose("N", "C").names == ("C", "N", "H", "W") and x.transpose(1, 3).names == ("N", "W", "H", "C")
    assert x.permute(3, 2, 1, 0).names == ("W", "H", "C", "N")
    assert x.select("C", 0).names == ("N", "H", "W") and x.unsqueeze(0).names == (None, "N", "C", "H", "W")
    assert torch.empty(3, 1, 1, names=("N", "C", "H")).squeeze("C").names == ("N", "H")
    assert torch.empty(3, 1, 1, names=("N", "C", "H")).squeeze().names == ("N",)
    assert all(p.names == x.names for p in x.split(1, "C")) and all(p.names == x.names for p in x.chunk(2, 0))
    assert all(p.names == ("N", "H", "W") for p in x.unbind("C"))
    assert torch.empty(2, 3, names=("H", "W")).expand(4, 2, 3).names == (None, "H", "W")
    assert torch.zeros(2, 3, 5, 7, names=("A", "B", "C", "D")).diagonal().names == ("C", "D", None)
    assert torch.cat([x, x], "N").names == x.names


def test_matmul_contracts_away_dims():
    x, y = torch.randn(3, 3, names=("N", "D")), torch.randn(3, 3, names=("in", "out"))
    assert x.mm(y).names == ("N", "out") and (x @ y).names == ("N", "out")
    assert x.mv(torch.randn(3, names=("something",))).names == ("N",)
    assert torch.randn(3, names=("C",)).dot(torch.randn(3, names=("C",))).names == ()
    a, b = torch.randn(3, 3, 3, 3, names=("A", "B", "C", "D")), torch.randn(3, 3, 3, names=("B", "E", "F"))
    assert torch.matmul(a, b).names == ("A", "B", "C", "F")
    with pytest.raises(RuntimeError, match="would produce output tensor with duplicate names"):
        torch.randn(2, 3, names=("N", "C")) @ torch.randn(3, 4, names=("X", "N"))
    with pytest.raises(RuntimeError, match="do not match"):
        torch.randn(2, 2, 3, names=("B", "N", "C")) @ torch.randn(2, 3, 4, names=("Z", "C", "D"))


def test_out_tensors_take_or_check_the_names():
    named, partial = torch.randn(3, 2, names=("N", "C")), torch.randn(3, 2, names=("N", None))
    with pytest.raises(RuntimeError, match=r"^Name mismatch: specified out tensor with names \['N', 'C'\] are not "
                                           r"the same as the computed output names \['N', None\]"):
        torch.abs(partial, out=named.clone())
    with pytest.raises(RuntimeError, match="Name mismatch"):
        torch.abs(torch.randn(3, 2), out=named.clone())
    out = torch.randn(3, 2)
    torch.abs(named, out=out)
    assert out.names == ("N", "C")
    out = torch.empty(0)
    torch.add(named, 1, out=out)
    assert out.names == ("N", "C") and out.shape == (3, 2)


def test_equal_compares_names():
    t = torch.randn(2, 3)
    assert torch.equal(t.rename("N", "C"), t.clone().rename("N", "C"))
    assert not torch.equal(t.rename("M", "C"), t.rename("N", "C"))
    assert not torch.equal(t.rename(None, "C"), t.rename("N", "C"))


def test_unsupported_ops_raise():
    x = _named(2, 3, names=("N", "C"))
    message = r"is not yet supported with named tensors. Please drop names via `tensor = tensor.rename\(None\)`"
    for op in (lambda: x.view(6), lambda: x.reshape(3, 2), lambda: x[0], lambda: F.linear(x, torch.randn(4, 3)),
               lambda: x.index_select("C", torch.tensor([0])), lambda: x.flip(0)):
        with pytest.raises(RuntimeError, match=message):
            op()
    assert torch.equal(x.rename(None).view(6), x.rename(None).reshape(6))  # dropping names is the way out


def test_in_place_ops_check_and_infer_names():
    x = torch.zeros(2, 3)
    x += torch.ones(2, 3, names=("N", "C"))  # in-place ops take the names name inference gives
    assert x.names == ("N", "C")
    y = torch.zeros(2, 3, names=("N", "C"))
    before = y.clone()
    with pytest.raises(RuntimeError, match="do not match"):
        y.add_(torch.ones(3, names=("N",)))
    with pytest.raises(RuntimeError, match="do not match"):  # the same-shape fast path checks names too
        y.add_(torch.ones(2, 3, names=("C", "N")))
    assert torch.equal(y.rename(None), before.rename(None)) and y.names == ("N", "C")  # untouched
    assert y.exp_().names == ("N", "C") and y.fill_(1.0).names == ("N", "C") and y.zero_().names == ("N", "C")
    z = torch.empty(2, 3)
    z.copy_(torch.ones(2, 3, names=("N", "C")))
    assert z.names == ("N", "C")


def test_unnamed_tensors_are_unchanged_once_names_exist():
    torch.zeros(1, names=("N",))  # names are in use in this process
    a, b = torch.randn(2, 3), torch.randn(3)
    out = (a + b).sum(0)
    assert out.names == (None,) and not out.has_names()
    with pytest.raises(RuntimeError, match=r"Name 'C' not found in Tensor\[None, None\]"):
        a.sum("C")


# gradients --------------------------------------------------------------------------------------------------
def test_gradients_flow_through_named_ops_and_are_unnamed():
    x = torch.randn(3, 4, names=("N", "C"), dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, names=("C",), dtype=torch.float64, requires_grad=True)
    loss = (x * w).softmax("C").sum("C").mean("N") + (x @ w.align_to("C", "K")).sum()
    loss.backward()
    assert x.grad.names == (None, None) and w.grad.names == (None,)
    assert x.grad.shape == (3, 4) and w.grad.shape == (4,)
    y = torch.randn(3, names=("D",), requires_grad=True)
    y.clone().backward(torch.ones(3, names=("D",)))  # a named grad_output gives an unnamed gradient too
    assert y.grad.names == (None,) and torch.equal(y.grad, torch.ones(3))


def _through_names(x, w):
    """A function of unnamed inputs that names them, computes by name, and drops the names."""
    xn = x.refine_names("N", "C")
    wn = w.rename("C")
    h = (xn * wn).tanh()
    h = h.align_to("C", "N").softmax("N") + h.transpose("N", "C")
    return (h.sum("N") * wn + h.logsumexp("C", keepdim=True).mean("N")).rename(None)


def test_gradcheck_through_named_ops():
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, dtype=torch.float64, requires_grad=True)
    assert gradcheck(_through_names, (x, w))
    assert gradgradcheck(_through_names, (x, w))
    x_t = torch.randn(4, 3, dtype=torch.float64).t().requires_grad_()  # non-contiguous
    assert gradcheck(_through_names, (x_t, w))
    empty = torch.randn(0, 4, dtype=torch.float64, requires_grad=True)
    assert gradcheck(lambda x, w: (x.refine_names("N", "C") * w.rename("C")).exp().sum("C").rename(None), (empty, w))


def test_gradcheck_named_matmul_flatten_and_0_dim():
    a = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)

    def f(a, b):
        out = a.refine_names("B", "N", "C") @ b.refine_names("C", "D")
        return out.flatten(["N", "D"], "ND").unflatten("ND", (("N", 3), ("D", 5))).rename(None)

    assert gradcheck(f, (a, b))
    s = torch.randn((), dtype=torch.float64, requires_grad=True)
    assert gradcheck(lambda s, a: (a.refine_names("B", "N", "C") * s).sum(["N", "C"]).rename(None), (s, a))


def test_named_tensors_are_not_saved():
    import io

    named = torch.zeros(2, 3, names=("N", "C"))
    with pytest.raises(RuntimeError, match="NYI: Named tensors don't support serialization"):
        torch.save(named, io.BytesIO())
    buffer = io.BytesIO()
    torch.save(named.rename(None), buffer)
    buffer.seek(0)
    assert torch.load(buffer).names == (None, None)
