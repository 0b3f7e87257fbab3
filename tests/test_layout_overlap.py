"""Output layouts, memory overlap in in-place ops, and error types found by the differential fuzzer.
Expected values were taken from PyTorch 2.13 (CPU) and are written out."""

import pytest

import minitorch as torch
import minitorch.nn.functional as F
from minitorch.autograd import gradcheck

OVERLAP = "some elements of the input tensor and the written-to tensor refer to a single memory location"


# layout -------------------------------------------------------------------------------------------

def test_softmax_output_is_row_major_so_view_works():
    x = torch.zeros(1, 2, 2).transpose(0, -1)  # fuzzer seed 2319
    y = F.softmax(x, dim=1)
    assert y.stride() == (2, 1, 1) and y.is_contiguous()
    assert y.view(1, -1).shape == (1, 4)
    assert F.log_softmax(torch.arange(24.).reshape(2, 3, 4).permute(2, 0, 1), 2).stride() == (6, 3, 1)


def test_softmax_of_transposed_input_gradient():
    x = torch.randn(3, 4, dtype=torch.float64).t().requires_grad_()
    assert gradcheck(lambda t: F.softmax(t, 1), (x,))
    assert gradcheck(lambda t: F.log_softmax(t, 0), (x,))


def test_clone_preserves_a_permuted_layout():
    x = torch.arange(6.).reshape(2, 3).t()
    c = x.clone()
    assert c.stride() == (1, 3) and not c.is_contiguous() and c.tolist() == x.tolist()
    assert torch.arange(24.).reshape(2, 3, 4).permute(2, 0, 1).clone().stride() == (1, 12, 4)
    assert torch.arange(24.).reshape(4, 6)[:, ::2].clone().stride() == (3, 1)  # not dense: packed in its order
    assert torch.ones(3, 1).expand(3, 4).clone().stride() == (4, 1)
    assert x.contiguous().stride() == (2, 1)  # contiguous() still gives row-major
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        c.view(-1)


def test_clone_of_transposed_input_gradient_keeps_shape():
    x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    (x.t().clone() * torch.arange(6.).reshape(3, 2)).sum().backward()
    assert x.grad.shape == (2, 3) and x.grad.tolist() == [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]


def test_random_like_preserves_a_permuted_layout():
    y = torch.arange(24.).reshape(2, 3, 4).permute(2, 0, 1)
    for r in (torch.rand_like(y), torch.randn_like(y), torch.randint_like(y, 5)):
        assert r.shape == (4, 2, 3) and r.stride() == (1, 12, 4) and not r._is_view()
    assert torch.rand_like(y, requires_grad=True).requires_grad


# memory overlap ---------------------------------------------------------------------------------

def test_fills_of_an_expanded_tensor_are_allowed():
    for fill in (lambda e: e.zero_(), lambda e: e.fill_(1.0), lambda e: e.masked_fill_(torch.tensor([True, False]), 1.0),
                 lambda e: e.index_fill_(0, torch.tensor([0]), 1.0),
                 lambda e: e.index_put_((torch.tensor([0]),), torch.tensor(1.0))):
        e = torch.tensor(0.0).expand(2)
        fill(e)
        assert e.stride() == (0,)
    e = torch.tensor(0.0).expand(2)
    e.fill_(3.0)
    assert e.tolist() == [3.0, 3.0]


@pytest.mark.parametrize("write", [
    lambda e: e.add_(1), lambda e: e.copy_(torch.ones(2)), lambda e: e.fill_(torch.tensor(1.0)),
    lambda e: e.exp_(), lambda e: e.__setitem__(slice(None), 1.0),
])
def test_other_writes_to_an_expanded_tensor_still_raise(write):
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        write(torch.tensor(0.0).expand(2))


@pytest.mark.parametrize("write", [
    lambda x: x.index_add_(0, torch.tensor([0, 1, 2]), x),
    lambda x: x[:2].index_add_(0, torch.tensor([0, 1]), x[1:]),
    lambda x: x[:1].scatter_(0, torch.tensor([0]), x[:1]),  # fuzzer seeds 995, 2724
    lambda x: x[:1].scatter_add_(0, torch.tensor([0]), x[:1]),
    lambda x: x.index_copy_(0, torch.tensor([0, 1, 2]), x),
    lambda x: x[1:].copy_(x[:2]),
    lambda x: x[1:].add_(x[:2]),
    lambda x: x.index_put_((torch.tensor([0]),), x[:1]),
])
def test_in_place_ops_whose_source_overlaps_the_destination_raise(write):
    x = torch.arange(3.0)
    with pytest.raises(RuntimeError, match=OVERLAP):
        write(x)
    assert x.tolist() == [0.0, 1.0, 2.0]


def test_empty_scatter_into_itself_raises():
    x = torch.zeros(0)  # fuzzer seed 3724: the same tensor, however empty
    with pytest.raises(RuntimeError, match=OVERLAP):
        x.scatter_(0, torch.tensor([], dtype=torch.int64), x)


def test_disjoint_or_identical_sources_are_allowed():
    x = torch.arange(4.0)
    x[:2].index_add_(0, torch.tensor([0, 1]), x[2:])
    assert x.tolist() == [2.0, 4.0, 2.0, 3.0]
    x.add_(x)  # a full overlap is fine for elementwise ops
    assert x.tolist() == [4.0, 8.0, 4.0, 6.0]


# error types ------------------------------------------------------------------------------------

def test_index_add_checks_the_index_count_before_the_range():
    with pytest.raises(RuntimeError, match=r"Number of indices \(1\) should be equal to source.size\(dim\): \(2\)"):
        torch.zeros(3).index_add_(0, torch.tensor([5]), torch.ones(2))
    with pytest.raises(RuntimeError, match=r"Number of indices \(1\) should be equal to source.size\(dim\): \(0\)"):
        torch.zeros(0, 0).index_add_(0, torch.tensor([0]), torch.zeros(0, 0), alpha=0.0)  # fuzzer seed 1679


def test_cat_of_only_legacy_empty_tensors_ignores_dim():
    assert torch.cat([torch.zeros(0), torch.zeros(0)], 1).shape == (0,)
    assert torch.cat([torch.zeros(0)], -2).shape == (0,)
    assert torch.cat([torch.zeros(0, dtype=torch.int64), torch.zeros(0)], 7).dtype == torch.float32
    assert torch.cat([torch.zeros(0), torch.zeros(2, 3)], 1).shape == (2, 3)


def test_binary_ops_follow_the_first_operands_layout():
    y = torch.arange(24.).reshape(2, 3, 4).permute(2, 0, 1)  # strides (1, 12, 4)
    assert (y * torch.ones(4, 2, 3)).stride() == (1, 12, 4)
    assert (y + y.transpose(1, 2).contiguous().transpose(1, 2)).stride() == (1, 12, 4)
    x = torch.arange(6.).reshape(2, 3).t()  # strides (1, 3)
    assert (x + torch.ones(3, 2)).stride() == (1, 3)
    assert (torch.ones(3, 2) + x).stride() == (2, 1)  # the first operand decides
    assert (torch.ones(3, 1) + torch.ones(4, 3).t()).stride() == (1, 3)  # broadcast dims: the next operand decides
    assert torch.where(y > 3, y, torch.zeros(4, 2, 3)).stride() == (1, 12, 4)
    z = x + torch.ones(3, 2)
    assert z.tolist() == [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        z.view(-1)


def test_binary_op_on_permuted_operands_gradients_keep_shapes():
    a = torch.randn(3, 2, dtype=torch.float64).t().requires_grad_()
    b = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    assert gradcheck(lambda s, t: s * t + s, (a, b))
    (a * b).sum().backward()
    assert a.grad.shape == (2, 3) and b.grad.shape == (2, 3)


# geometry of empty views ------------------------------------------------------------------------

def test_empty_views_keep_their_strides_and_offsets():
    z = torch.zeros(0, 2)
    assert z.stride() == (2, 1) and z.t().stride() == (1, 2) and z.t().t().stride() == (2, 1)
    assert torch.zeros(2, 0, 3).permute(2, 0, 1).stride() == (1, 3, 3)
    assert torch.zeros(4, 3)[4:].storage_offset() == 12
    assert torch.zeros(3, 4)[::2, 4:].stride() == (8, 1) and torch.zeros(3, 4)[::2, 4:].storage_offset() == 4
    assert z.t().is_contiguous() and z.t().contiguous().stride() == (1, 2)


def test_index_add_out_of_range_error_type_depends_on_the_dim():
    source = torch.zeros(1, 1)
    with pytest.raises(RuntimeError, match="index 4 is out of bounds for dimension 1 with size 1"):
        torch.zeros(1, 1).index_add_(-1, torch.tensor([4]), source)  # fuzzer seed 101420
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 1 with size 2"):
        torch.zeros(2, 2).index_add_(1, torch.tensor([-1]), torch.zeros(2, 1))
    with pytest.raises(IndexError, match="index out of range in self"):  # a middle dim
        torch.zeros(2, 2, 2).index_add_(1, torch.tensor([9]), torch.zeros(2, 1, 2))
    with pytest.raises(IndexError, match="index out of range in self"):
        torch.zeros(2).index_add_(0, torch.tensor([9]), torch.zeros(1))


def test_copy_into_a_view_with_other_strides_over_the_same_memory_raises():
    w = torch.zeros(1, 1)
    with pytest.raises(RuntimeError, match=OVERLAP):  # fuzzer seed 102135: strides (3, 1) vs (1, 1)
        w[0:2:3] = w
    x = torch.zeros(2)
    x[:] = x  # same memory, same strides: allowed
    x[:].add_(x)


def test_reductions_and_scans_are_row_major_sort_keeps_the_layout():
    y = torch.arange(24.).reshape(2, 3, 4).permute(2, 0, 1)  # (4, 2, 3), strides (1, 12, 4)
    assert y.sum(1, keepdim=True).stride() == (3, 3, 1)
    assert y.sum(1).stride() == (3, 1)
    assert y.amax(1, keepdim=True).stride() == (3, 3, 1)
    assert y.var(1, keepdim=True).stride() == (3, 3, 1)
    assert torch.logsumexp(y, 1, keepdim=True).stride() == (3, 3, 1)
    assert y.median(1, keepdim=True)[0].stride() == (3, 3, 1)
    for scan in (torch.cumsum(y, 0), torch.cumprod(y, 1), torch.cummax(y, 1)[1], torch.logcumsumexp(y, 2)):
        assert scan.stride() == (6, 3, 1)
    assert y.masked_fill(y > 3, 0.0).stride() == (6, 3, 1)  # a contiguous clone, filled
    assert y.roll(1, 0).stride() == (6, 3, 1) and y.triu().stride() == (6, 3, 1)
    values, indices = torch.sort(y, 0)  # fuzzer seed 101908
    assert values.stride() == (1, 12, 4) and indices.stride() == (1, 12, 4)
    assert torch.argsort(torch.arange(6.).reshape(2, 3).t(), 0).stride() == (1, 3)
    assert values[:, 0, 0].tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        indices.view(2, -1)


def test_sort_of_a_transposed_input_gradient():
    x = torch.randn(3, 4, dtype=torch.float64).t().requires_grad_()
    assert gradcheck(lambda t: torch.sort(t, 0)[0] * 2, (x,))
    assert gradcheck(lambda t: torch.cumsum(t, 1).sum(0, keepdim=True), (x,))


def test_expand_new_size_one_dims_get_row_major_strides():
    assert torch.zeros(3).expand(1, 1, 3).stride() == (3, 3, 1)
    assert torch.zeros(3, 1).expand(2, 1, 3, 4).stride() == (0, 3, 1, 0)
    assert torch.zeros(2, 3).t().expand(1, 3, 2).stride() == (3, 1, 3)
    assert torch.zeros(3).expand(0, 1, 3).stride() == (0, 3, 1)
    assert torch.tensor(1.0).expand(1, 1).stride() == (0, 0)  # a 0-d tensor expands with stride 0


def test_setitem_of_a_view_with_itself_is_allowed():
    v = torch.zeros(1, 1).transpose(0, -1)  # fuzzer seed 102004
    v[:] = v
    v[0] = v[0]
    assert v.tolist() == [[0.0]]


def test_setitem_of_a_0d_value_fills_without_an_overlap_check():
    v = torch.tensor(0.5)  # fuzzer seeds 2650, 3893: v[None] = v
    v[None] = v
    assert v.item() == 0.5
    e = torch.tensor(0.0).expand(2)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        e.fill_(torch.tensor(1.0))  # fill_(Tensor) still refuses an expanded tensor
    x = torch.zeros(3)
    s = torch.tensor(2.0, requires_grad=True)
    x[1:] = s
    x.sum().backward()
    assert x.tolist() == [0.0, 2.0, 2.0] and s.grad.item() == 2.0


def test_index_add_and_index_select_of_an_empty_tensor():
    x = torch.zeros(0, 2)
    assert x.index_add_(0, torch.tensor([0]), torch.zeros(1, 2)).shape == (0, 2)  # the indices are not read
    source = torch.ones(1, 0, dtype=torch.float64, requires_grad=True)  # fuzzer seed 1679
    y = torch.zeros(0, 0, dtype=torch.float64).index_add(0, torch.tensor([0]), source, alpha=0.0)
    with pytest.raises(RuntimeError, match="index_select\\(\\): self indexing axis dim should be positive"):
        y.sum().backward()
    with pytest.raises(RuntimeError, match="self indexing axis dim should be positive"):
        torch.zeros(0, 2).index_select(0, torch.tensor([0]))
    with pytest.raises(RuntimeError, match="INDICES element is out of DATA bounds, id=5 axis_dim=2"):
        torch.zeros(2, 0).index_select(0, torch.tensor([5]))
    with pytest.raises(IndexError, match="index out of range in self"):
        torch.zeros(0).index_select(0, torch.tensor([0]))
