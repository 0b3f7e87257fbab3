"""repr(tensor) matches PyTorch's text: formats, summaries, annotations and print options."""

from __future__ import annotations

import pytest

import minitorch as torch
from minitorch._tensor_str import get_printoptions, printoptions, set_printoptions


@pytest.fixture(autouse=True)
def _default_print_options():
    set_printoptions(profile="default")
    yield
    set_printoptions(profile="default")


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda: torch.tensor([[1.0, -1.0], [1.0, -1.0]]), "tensor([[ 1., -1.],\n        [ 1., -1.]])"),
        (lambda: torch.tensor([[3, 1, 2], [4, 1, 7]]), "tensor([[3, 1, 2],\n        [4, 1, 7]])"),
        (lambda: torch.tensor([True, False]), "tensor([ True, False])"),
        (lambda: torch.tensor(3.5), "tensor(3.5000)"),
        (lambda: torch.tensor(2.0), "tensor(2.)"),
        (lambda: torch.tensor(7), "tensor(7)"),
        (lambda: torch.tensor([0.0, 0.0]), "tensor([0., 0.])"),
        (lambda: torch.linspace(2, 10, 4), "tensor([ 2.0000,  4.6667,  7.3333, 10.0000])"),
        (lambda: torch.logspace(2, 10, 4), "tensor([1.0000e+02, 4.6416e+04, 2.1544e+07, 1.0000e+10])"),
        (lambda: torch.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
        (lambda: torch.tensor([1.0, 10000.0]), "tensor([1.0000e+00, 1.0000e+04])"),
        (lambda: torch.tensor([1e9]), "tensor([1.0000e+09])"),
        (lambda: torch.tensor([float("nan"), 1.0]), "tensor([nan, 1.])"),
        (lambda: torch.tensor([float("inf"), 1.5]), "tensor([   inf, 1.5000])"),
        (lambda: torch.tensor([-float("inf"), 2.0]), "tensor([-inf, 2.])"),
        (lambda: torch.tensor([]), "tensor([])"),
        (lambda: torch.zeros(0, 3), "tensor([], size=(0, 3))"),
        (lambda: torch.tensor([], dtype=torch.int64), "tensor([], dtype=torch.int64)"),
        (lambda: torch.zeros(2, 0, dtype=torch.bool), "tensor([], size=(2, 0), dtype=torch.bool)"),
        (lambda: torch.tensor([1, 2], dtype=torch.int32), "tensor([1, 2], dtype=torch.int32)"),
        (lambda: torch.tensor([1.5], dtype=torch.float64), "tensor([1.5000], dtype=torch.float64)"),
        (lambda: torch.tensor([1.5], dtype=torch.float16), "tensor([1.5000], dtype=torch.float16)"),
        (lambda: torch.tensor([1, 2], dtype=torch.uint8), "tensor([1, 2], dtype=torch.uint8)"),
    ],
)
def test_repr_matches_pytorch(make, expected):
    assert repr(make()) == expected


def test_nested_indentation_and_blank_lines_between_blocks():
    assert repr(torch.zeros(1, 2, 3).transpose(0, 2)) == (
        "tensor([[[0.],\n         [0.]],\n\n        [[0.],\n         [0.]],\n\n        [[0.],\n         [0.]]])"
    )
    assert repr(torch.ones(1, 1, 2, 2)) == "tensor([[[[1., 1.],\n          [1., 1.]]]])"


def test_columns_align_across_rows():
    assert repr(torch.tensor([[1.5, -10.25], [100.0, 2.0]])) == (
        "tensor([[  1.5000, -10.2500],\n        [100.0000,   2.0000]])"
    )


def test_long_rows_wrap_at_linewidth():
    text = repr(torch.ones(40, requires_grad=True))
    lines = text.split("\n")
    assert lines[0] == "tensor([" + ", ".join(["1."] * 18) + ","
    assert lines[2] == "        " + ", ".join(["1."] * 4) + "], requires_grad=True)"
    assert all(len(line) <= 80 for line in lines)


def test_summarization_above_threshold():
    assert repr(torch.arange(2000.0)) == (
        "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n        1.9990e+03])"
    )
    text = repr(torch.arange(5000).view(50, 100))
    assert text.split("\n")[0] == "tensor([[   0,    1,    2,  ...,   97,   98,   99],"
    assert "        ...,\n" in text
    assert text.endswith("[4900, 4901, 4902,  ..., 4997, 4998, 4999]])")
    assert "..." not in repr(torch.zeros(1000))  # exactly at the threshold: printed in full


def test_autograd_annotations():
    x = torch.ones(2, requires_grad=True)
    assert repr(x) == "tensor([1., 1.], requires_grad=True)"
    assert repr(x * 2) == "tensor([2., 2.], grad_fn=<MulBackward0>)"
    d = torch.ones(2, dtype=torch.float64, requires_grad=True)
    assert repr(d + 1) == "tensor([2., 2.], dtype=torch.float64, grad_fn=<AddBackward0>)"
    assert repr(x.detach()) == "tensor([1., 1.])"


def test_meta_tensors_print_size_not_values():
    assert repr(torch.ones(2, 3, device="meta")) == "tensor(..., device='meta', size=(2, 3))"
    assert repr(torch.ones(2, dtype=torch.int64, device="meta")) == (
        "tensor(..., device='meta', size=(2,), dtype=torch.int64)"
    )
    assert repr(torch.ones(2, device="meta", requires_grad=True)) == (
        "tensor(..., device='meta', size=(2,), requires_grad=True)"
    )


def test_long_suffixes_wrap_onto_a_new_line():
    x = torch.full((8,), 1.25, dtype=torch.float64, requires_grad=True) * 2
    assert repr(x) == (
        "tensor([2.5000, 2.5000, 2.5000, 2.5000, 2.5000, 2.5000, 2.5000, 2.5000],\n"
        "       dtype=torch.float64, grad_fn=<MulBackward0>)"
    )


def test_default_dtype_controls_which_dtype_is_hidden():
    previous = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        assert repr(torch.tensor([1.5])) == "tensor([1.5000])"
        assert repr(torch.tensor([1.5], dtype=torch.float32)) == "tensor([1.5000], dtype=torch.float32)"
    finally:
        torch.set_default_dtype(previous)


def test_set_printoptions():
    set_printoptions(precision=2)
    assert repr(torch.tensor([1.23456])) == "tensor([1.23])"
    set_printoptions(sci_mode=True)  # options not passed keep their value
    assert repr(torch.tensor([1.5])) == "tensor([1.50e+00])"
    set_printoptions(precision=4, sci_mode=True)
    assert repr(torch.tensor([1.5])) == "tensor([1.5000e+00])"
    set_printoptions(sci_mode=False)
    # PyTorch's quirk, kept: the column width was measured for scientific notation before the override
    assert repr(torch.tensor([1e-5, 1.0])) == "tensor([    0.0000,     1.0000])"
    set_printoptions(threshold=5, edgeitems=2)
    assert repr(torch.arange(10)) == "tensor([0, 1,  ..., 8, 9])"
    set_printoptions(profile="default", linewidth=20)
    assert repr(torch.arange(8)) == "tensor([0, 1, 2, 3,\n        4, 5, 6, 7])"
    set_printoptions(profile="full")
    assert "..." not in repr(torch.zeros(2000))
    set_printoptions(profile="default")
    assert get_printoptions() == dict(precision=4, threshold=1000, edgeitems=3, linewidth=80, sci_mode=None)
    with printoptions(precision=1):
        assert repr(torch.tensor([0.25])) == "tensor([0.2])"
    assert repr(torch.tensor([0.25])) == "tensor([0.2500])"
    with pytest.raises(ValueError, match="unknown profile"):
        set_printoptions(profile="tiny")


def test_printoptions_are_exported_at_top_level():
    assert torch.set_printoptions is set_printoptions


def test_format_of_zero_dim_tensor():
    assert f"{torch.tensor(2.5):.1f}" == "2.5"
    assert str(torch.tensor([1, 2])) == "tensor([1, 2])"
    # an empty spec too (f"{loss}" prints the number, as in PyTorch), also with requires_grad
    assert f"{torch.tensor(0.5, requires_grad=True) * 2}" == "1.0"
    assert f"{torch.tensor(3)}" == "3" and f"{torch.tensor(True)}" == "True"
    assert f"{torch.tensor([1.0, 2.0])}" == "tensor([1., 2.])"
