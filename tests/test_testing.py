"""minitorch.testing: assert_close, make_tensor and the hypothesis strategies."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch as torch
from minitorch.testing import assert_close, make_tensor
from minitorch.testing.strategies import broadcastable_shapes, dtypes, gradcheck_inputs, shapes, tensors


def message_of(actual, expected, **kwargs) -> str:
    with pytest.raises(AssertionError) as info:
        assert_close(actual, expected, **kwargs)
    return str(info.value)


# assert_close ----------------------------------------------------------------------------------------


def test_equal_tensors_pass(device):
    t = torch.tensor([1.0, 2.0, 3.0], device=device)
    assert_close(t, t.clone())
    assert_close(t.view(3, 1).t(), torch.tensor([[1.0, 2.0, 3.0]], device=device))  # strides don't matter


@pytest.mark.parametrize(
    "dtype, rtol, atol",
    [(torch.float16, 1e-3, 1e-5), (torch.float32, 1.3e-6, 1e-5), (torch.float64, 1e-7, 1e-7)],
)
def test_default_tolerances_by_dtype(dtype, rtol, atol):
    expected = torch.tensor([100.0], dtype=torch.float64)
    inside = expected * (1 + 0.5 * rtol) + 0.5 * atol
    outside = expected * (1 + 2 * rtol) + 2 * atol
    assert_close(inside.to(dtype), expected.to(dtype))
    if dtype is not torch.float16:  # float16 cannot represent the step
        message = message_of(outside.to(dtype), expected.to(dtype))
        assert f"(up to {atol} allowed)" in message and f"(up to {rtol} allowed)" in message


def test_integer_and_bool_tensors_are_exact():
    message = message_of(torch.tensor([1, 2]), torch.tensor([1, 3]))
    assert message == (
        "Tensor-likes are not equal!\n\nMismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 1 at index (1,)\nGreatest relative difference: 0.3333333333333333 at index (1,)"
    )
    big = 2**62 + 1
    message_of(torch.tensor([big]), torch.tensor([big - 1]))  # no float rounding hides the difference
    assert "not equal" in message_of(torch.tensor([True, False]), torch.tensor([True, True]))
    assert_close(torch.tensor([1, 2]), torch.tensor([1, 3]), rtol=0, atol=1)


def test_mismatch_message_for_floats():
    message = message_of(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.5, 3.0]))
    assert message.startswith("Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n")
    assert "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)" in message
    assert "Greatest relative difference: 0.2" in message and "at index (1,) (up to 1.3e-06 allowed)" in message
    message = message_of(torch.tensor([[0.0, 1.0]]), torch.tensor([[0.0, 0.0]]))
    assert "Greatest absolute difference: 1.0 at index (0, 1)" in message
    assert "Greatest relative difference: inf at index (0, 1)" in message


def test_scalar_tensor_message():
    assert message_of(torch.tensor(1.0), torch.tensor(2.0)) == (
        "Scalars are not close!\n\nExpected 2.0 but got 1.0.\n"
        "Absolute difference: 1.0 (up to 1e-05 allowed)\nRelative difference: 0.5 (up to 1.3e-06 allowed)"
    )


def test_attributes():
    assert message_of(torch.ones(2), torch.ones(3)) == (
        "The values for attribute 'shape' do not match: torch.Size([2]) != torch.Size([3])."
    )
    assert message_of(torch.ones(2), torch.ones(2, dtype=torch.float64)) == (
        "The values for attribute 'dtype' do not match: torch.float32 != torch.float64."
    )
    assert message_of(torch.ones(2), torch.ones(2, device="meta")) == (
        "The values for attribute 'device' do not match: cpu != meta."
    )
    assert_close(torch.ones(2), torch.ones(2, device="meta"), check_device=False)
    assert "stride()" in message_of(torch.ones(2, 2).t(), torch.ones(2, 2), check_stride=True)


def test_check_dtype_false_promotes_and_takes_the_looser_tolerance():
    assert_close(torch.tensor([1.0]), torch.tensor([1.0 + 5e-6], dtype=torch.float64), check_dtype=False)
    assert_close(torch.tensor([2]), torch.tensor([2.0]), check_dtype=False)
    message_of(torch.tensor([2]), torch.tensor([2.5]), check_dtype=False)


def test_nan_and_inf():
    nan = torch.tensor([float("nan"), 1.0])
    message_of(nan, nan.clone())
    assert_close(nan, nan.clone(), equal_nan=True)
    inf = torch.tensor([float("inf"), -float("inf")])
    assert_close(inf, inf.clone())
    message_of(inf, -inf)


def test_explicit_tolerances():
    assert_close(torch.tensor([1.0]), torch.tensor([1.1]), rtol=0.0, atol=0.2)
    message_of(torch.tensor([1.0]), torch.tensor([1.1]), rtol=0.0, atol=0.05)
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be either specified or omitted, but got no atol."):
        assert_close(torch.ones(1), torch.ones(1), rtol=0.1)


def test_nested_sequences_and_mappings():
    assert_close([torch.ones(2), (torch.zeros(1), 3)], [torch.ones(2), (torch.zeros(1), 3)])
    message = message_of([torch.ones(1), torch.ones(1)], [torch.ones(1), torch.zeros(1)])
    assert message.endswith("The failure occurred for item [1]")
    message = message_of({"a": {"b": torch.ones(1)}}, {"a": {"b": torch.zeros(1)}})
    assert message.endswith("The failure occurred for item ['a']['b']")
    assert message_of([1, 2], [1]) == "The length of the sequences mismatch: 2 != 1"
    message = message_of({"a": 1, "b": 2}, {"a": 1, "c": 2})
    assert message == (
        "The keys of the mappings do not match:\nMissing keys in the actual mapping: ['c']\n"
        "Additional keys in the actual mapping: ['b']"
    )


def test_python_scalars_none_and_bools():
    assert_close(1.0, 1.0 + 1e-9)
    assert message_of(1.0, 1.1).startswith("Scalars are not close!\n\nExpected 1.1 but got 1.0.")
    assert_close(3, 3)
    assert message_of(3, 4).startswith("Scalars are not equal!")
    assert message_of(1, 1.0) == "The (d)types do not match: <class 'int'> != <class 'float'>."
    assert_close(1, 1.0, check_dtype=False)
    assert_close(None, None)
    assert message_of(None, 1) == "None mismatch: None is not 1"
    assert_close(True, True)
    assert message_of(True, False) == "Booleans mismatch: True is not False"


def test_unpairable_inputs_raise_type_error():
    with pytest.raises(TypeError, match="No comparison pair was able to handle inputs of type"):
        assert_close(torch.ones(2), [1.0, 1.0])
    with pytest.raises(TypeError, match="No comparison pair"):
        assert_close(torch.ones(1), 1.0)


def test_msg_replaces_or_transforms():
    assert message_of(torch.ones(1), torch.zeros(1), msg="custom") == "custom"
    assert message_of(torch.ones(1), torch.zeros(1), msg=lambda m: "ctx: " + m).startswith("ctx: Tensor-likes")
    assert message_of([1.0], [2.0], msg=lambda m: "ctx: " + m).endswith("The failure occurred for item [0]")
    assert message_of(torch.ones(1), torch.ones(2), msg="custom") == "custom"


def test_requires_grad_tensors_compare_by_value():
    x = torch.ones(2, requires_grad=True)
    assert_close(x * 2, torch.full((2,), 2.0))


# make_tensor -----------------------------------------------------------------------------------------


def test_make_tensor_shapes_and_devices(device):
    assert make_tensor(2, 3, dtype=torch.float32, device=device).shape == (2, 3)
    assert make_tensor((2, 3), dtype=torch.float32, device=device).shape == (2, 3)
    assert make_tensor([], dtype=torch.float64, device=device).shape == ()
    t = make_tensor(4, dtype=torch.float64, device=device)
    assert t.dtype == torch.float64 and t.device == torch.device(device) and not t.requires_grad


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64, torch.int8, torch.uint8,
                                   torch.int32, torch.int64, torch.bool])
def test_make_tensor_default_ranges(dtype):
    values = make_tensor(500, dtype=dtype, device="cpu").numpy()
    assert values.dtype == np.dtype(dtype.name)
    if dtype is torch.bool:
        assert set(values.tolist()) == {False, True}
    elif dtype is torch.uint8:
        assert values.min() >= 0 and values.max() < 10
    elif dtype.is_floating_point:
        assert values.min() >= -9 and values.max() <= 9 and len(set(values.tolist())) > 100
    else:
        assert values.min() >= -9 and values.max() < 10


def test_make_tensor_bounds():
    values = make_tensor(200, dtype=torch.float64, device="cpu", low=2.0, high=3.0).numpy()
    assert values.min() >= 2.0 and values.max() < 3.0
    ints = make_tensor(200, dtype=torch.int64, device="cpu", low=-2.5, high=1.5).numpy()
    assert set(ints.tolist()) <= {-2, -1, 0, 1}
    huge = make_tensor(20, dtype=torch.float64, device="cpu", low=-math.inf, high=math.inf).numpy()
    assert np.isfinite(huge).all()
    with pytest.raises(ValueError, match="`low` must be less than `high`, but got 3 >= 1"):
        make_tensor(2, dtype=torch.float32, device="cpu", low=3, high=1)
    with pytest.raises(ValueError, match="`low` and `high` cannot be NaN"):
        make_tensor(2, dtype=torch.float32, device="cpu", low=math.nan)
    with pytest.raises(ValueError, match="only supports"):
        make_tensor(2, dtype=torch.uint8, device="cpu", low=-10, high=-1)


def test_make_tensor_options():
    t = make_tensor(3, 4, dtype=torch.float64, device="cpu", requires_grad=True, noncontiguous=True)
    assert t.requires_grad and t.is_leaf and not t.is_contiguous() and t.shape == (3, 4)
    assert torch.autograd.gradcheck(torch.sin, (t,))
    assert make_tensor(1, dtype=torch.float32, device="cpu", noncontiguous=True).is_contiguous()  # one element
    assert (make_tensor(300, dtype=torch.int8, device="cpu", low=-1, high=2, exclude_zero=True).numpy() != 0).all()
    tiny = make_tensor(300, dtype=torch.float32, device="cpu", low=0, high=1, exclude_zero=True).numpy()
    assert (tiny > 0).all()
    with pytest.raises(ValueError, match="`requires_grad=True` is not supported for boolean and integral dtypes"):
        make_tensor(2, dtype=torch.int64, device="cpu", requires_grad=True)
    with pytest.raises(ValueError, match="mutually exclusive"):
        make_tensor(2, dtype=torch.float32, device="cpu", noncontiguous=True, memory_format="contiguous_format")


def test_make_tensor_follows_the_global_seed():
    torch.manual_seed(3)
    a = make_tensor(5, dtype=torch.float32, device="cpu")
    torch.manual_seed(3)
    assert make_tensor(5, dtype=torch.float32, device="cpu").tolist() == a.tolist()


# strategies ------------------------------------------------------------------------------------------


@given(shape=shapes(), data=st.data())
def test_broadcastable_shapes_broadcast(shape, data):
    other = data.draw(broadcastable_shapes(shape))
    assert np.broadcast_shapes(shape, other) is not None


@given(t=tensors(shape=(3, 4), min_value=-1.0, max_value=1.0))
def test_tensors_respect_shape_and_bounds(t):
    assert t.shape == (3, 4) and t.dtype == torch.float64 and t.is_leaf
    assert (np.abs(t.numpy()) <= 1.0).all()


def test_tensors_draw_every_layout():
    seen = set()

    @given(tensors(shape=(2, 3)))
    def collect(t):
        seen.add(t.is_contiguous())

    collect()
    assert seen == {True, False}


@given(dtype=dtypes(floating=False, integral=True, boolean=True))
def test_dtypes_families(dtype):
    assert not dtype.is_floating_point


def test_dtypes_needs_a_family():
    with pytest.raises(ValueError, match="needs at least one"):
        dtypes(floating=False)


@given(inputs=gradcheck_inputs(3))
def test_gradcheck_inputs(inputs):
    assert len(inputs) == 3
    assert all(t.dtype == torch.float64 and t.requires_grad and t.is_leaf for t in inputs)
    np.broadcast_shapes(*(tuple(t.shape) for t in inputs))
    assert torch.autograd.gradcheck(lambda a, b, c: a * b + c, inputs)


@given(inputs=gradcheck_inputs(2, shape=(2, 3), broadcast=False))
def test_gradcheck_inputs_fixed_shape(inputs):
    assert [tuple(t.shape) for t in inputs] == [(2, 3), (2, 3)]
