"""PyTorch's type promotion (minitorch/_dtype.py, ops/promotion.py): promote_types, result_type and the dtype
every elementwise op actually produces, for dimensioned tensors, 0-dim tensors and Python scalars."""

import operator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch as torch

HEALTH = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
fixture_ok = settings(suppress_health_check=HEALTH)  # ``device`` is a plain string: safe across examples

DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.float32,
          torch.float64]
b, u8, i8, i16, i32, i64, f16, f32, f64 = DTYPES

# PyTorch's promote_types table (torch/_prims_common, c10/core/ScalarType.cpp) for these dtypes, row by column
TABLE = [
    # b     u8    i8    i16   i32   i64   f16   f32   f64
    [b, u8, i8, i16, i32, i64, f16, f32, f64],  # b
    [u8, u8, i16, i16, i32, i64, f16, f32, f64],  # u8
    [i8, i16, i8, i16, i32, i64, f16, f32, f64],  # i8
    [i16, i16, i16, i16, i32, i64, f16, f32, f64],  # i16
    [i32, i32, i32, i32, i32, i64, f16, f32, f64],  # i32
    [i64, i64, i64, i64, i64, i64, f16, f32, f64],  # i64
    [f16, f16, f16, f16, f16, f16, f16, f32, f64],  # f16
    [f32, f32, f32, f32, f32, f32, f32, f32, f64],  # f32
    [f64, f64, f64, f64, f64, f64, f64, f64, f64],  # f64
]


@pytest.mark.parametrize("row", range(len(DTYPES)))
def test_promote_types_table(row):
    for column, expected in enumerate(TABLE[row]):
        assert torch.promote_types(DTYPES[row], DTYPES[column]) is expected, (DTYPES[row], DTYPES[column])


def test_promote_types_rejects_non_dtypes():
    with pytest.raises(TypeError, match="promote_types\\(\\): argument 'type2' must be torch.dtype, not int"):
        torch.promote_types(torch.int8, 1)


def t(dtype, device, dim=True):
    """A 1-d (or 0-dim) tensor of ``dtype``."""
    return torch.ones(2 if dim else (), dtype=dtype, device=device)


def test_result_type_categories(device):
    assert torch.result_type(t(i64, device), 1.5) is f32  # int tensor + Python float -> default float
    assert torch.result_type(t(f16, device), 2) is f16  # Python int never widens a float tensor
    assert torch.result_type(t(f16, device), 2.5) is f16
    assert torch.result_type(t(u8, device), t(i8, device)) is i16
    assert torch.result_type(t(f64, device, dim=False), t(f32, device)) is f32  # 0-dim: same category, no say
    assert torch.result_type(t(i64, device, dim=False), t(u8, device)) is u8
    assert torch.result_type(t(f64, device, dim=False), t(i32, device)) is f64  # higher category: it wins
    assert torch.result_type(t(b, device), 3) is i64
    assert torch.result_type(t(b, device), True) is b
    assert torch.result_type(t(i32, device), 3) is i32
    assert torch.result_type(t(u8, device), 1000) is u8
    assert torch.result_type(t(i64, device, dim=False), 2.5) is f32
    assert torch.result_type(t(b, device, dim=False), t(b, device)) is b
    assert torch.result_type(2, t(i8, device)) is i8


def test_default_dtype_drives_python_floats(device):
    torch.set_default_dtype(torch.float64)
    try:
        assert torch.result_type(t(i32, device), 1.5) is f64
        assert (t(i32, device) + 1.5).dtype is f64
        assert (t(i64, device) / 2).dtype is f64
        assert (t(f32, device) + 1.5).dtype is f32
    finally:
        torch.set_default_dtype(torch.float32)


OPERATORS = [operator.add, operator.mul, torch.maximum, torch.remainder, torch.fmax, torch.minimum]


@fixture_ok
@given(
    left=st.sampled_from(DTYPES), right=st.sampled_from(DTYPES), left_dim=st.booleans(), right_dim=st.booleans(),
    op=st.sampled_from(OPERATORS),
)
def test_ops_produce_the_result_type(device, left, right, left_dim, right_dim, op):
    a, b_ = t(left, device, left_dim), t(right, device, right_dim)
    expected = torch.result_type(a, b_)
    if op is torch.remainder and expected is b:
        return  # remainder on bool is not defined (numpy and PyTorch refuse it)
    assert op(a, b_).dtype is expected
    if b not in (left, right):  # subtraction refuses bool operands
        assert (a - b_).dtype is expected
    assert (a == b_).dtype is b and (a < b_).dtype is b
    true_division = expected if expected.is_floating_point else torch.get_default_dtype()
    assert (a / b_).dtype is true_division


@fixture_ok
@given(dtype=st.sampled_from(DTYPES), scalar=st.sampled_from([True, 3, -2, 2.5]), dim=st.booleans())
def test_ops_with_python_scalars(device, dtype, scalar, dim):
    x = t(dtype, device, dim)
    expected = torch.result_type(x, scalar)
    assert (x * scalar).dtype is expected and (scalar * x).dtype is expected
    assert (x + scalar).dtype is expected
    assert (x > scalar).dtype is b


def test_examples_from_the_brief(device):
    assert (torch.tensor([1, 2], dtype=torch.uint8, device=device) + torch.tensor([1], dtype=torch.int8,
                                                                                  device=device)).dtype is i16
    assert (torch.tensor([1, 2], device=device) + 1.0).dtype is f32
    assert (torch.tensor([1.0], dtype=torch.float16, device=device) + 1).dtype is f16
    assert (torch.tensor(1.0, dtype=torch.float64, device=device) + torch.ones(2, device=device)).dtype is f32
    assert (torch.tensor(1, device=device) + torch.ones(2, dtype=torch.uint8, device=device)).dtype is u8
    assert (torch.tensor([4, 6], device=device) / 2).dtype is f32
    assert torch.tensor([1, 2], device=device).eq(1.0).dtype is b
    assert torch.where(torch.tensor([True], device=device), torch.ones(1, dtype=torch.int32, device=device),
                       torch.ones(1, dtype=torch.float16, device=device)).dtype is f16
