"""Anomaly detection (SEMANTICS.md 1.12, AG-17)."""

import math
import warnings

import pytest

import minitorch as torch
from minitorch.autograd import Function
from minitorch.autograd.anomaly import is_anomaly_check_nan_enabled, set_anomaly_enabled

ENABLED_WARNING = (
    "Anomaly Detection has been enabled. This mode will increase the runtime and should only be enabled for debugging."
)


def leaf(values, device="cpu"):
    return torch.tensor(values, device=device, requires_grad=True)


@pytest.fixture(autouse=True)
def anomaly_mode_is_restored():
    yield
    assert not torch.autograd.is_anomaly_enabled()
    set_anomaly_enabled(False)


def test_ag17_nan_names_the_node_and_the_output_index(device):
    x = leaf([0.0, 1.0], device)
    with pytest.warns(UserWarning) as record:
        with torch.autograd.detect_anomaly():
            y = (x / x).sum()  # the forward line the report must show
            with pytest.raises(RuntimeError) as info:
                y.backward()
    # d(x/x)/d(numerator) = 1/x = [inf, 1] (no NaN); d/d(denominator) = -x/x^2 = [nan, -1]
    assert str(info.value) == "Function 'DivBackward0' returned nan values in its 1th output."
    messages = [str(w.message) for w in record]
    assert ENABLED_WARNING in messages
    report = next(m for m in messages if m.startswith("Error detected in DivBackward0."))
    assert "Traceback of forward call that caused the error:" in report
    assert __file__ in report and "y = (x / x).sum()" in report


def test_check_nan_false_lets_nan_through():
    x = leaf([0.0, 1.0])
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with torch.autograd.detect_anomaly(check_nan=False):
            assert torch.autograd.is_anomaly_enabled() and not is_anomaly_check_nan_enabled()
            (x / x).sum().backward()
    assert math.isnan(x.grad.tolist()[0])
    assert is_anomaly_check_nan_enabled()


def test_without_anomaly_mode_nan_is_silent():
    x = leaf([0.0, 1.0])
    (x / x).sum().backward()
    assert math.isnan(x.grad.tolist()[0])


def test_set_detect_anomaly_call_and_context_manager():
    torch.autograd.set_detect_anomaly(True)
    try:
        assert torch.autograd.is_anomaly_enabled()
    finally:
        torch.autograd.set_detect_anomaly(False)
    assert not torch.autograd.is_anomaly_enabled()
    with torch.autograd.set_detect_anomaly(True, check_nan=False):
        assert torch.autograd.is_anomaly_enabled() and not is_anomaly_check_nan_enabled()
        with torch.autograd.set_detect_anomaly(False):
            assert not torch.autograd.is_anomaly_enabled()
        assert torch.autograd.is_anomaly_enabled()
    assert not torch.autograd.is_anomaly_enabled() and is_anomaly_check_nan_enabled()


def test_detect_anomaly_as_decorator():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):

        @torch.autograd.detect_anomaly()
        def run(x):
            assert torch.autograd.is_anomaly_enabled()
            (x / x).sum().backward()

    assert not torch.autograd.is_anomaly_enabled()  # decorating does not switch the mode on
    with pytest.raises(RuntimeError, match="returned nan values in its 1th output"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run(leaf([0.0, 1.0]))

    @torch.autograd.set_detect_anomaly(True)
    def probe():
        return torch.autograd.is_anomaly_enabled()

    assert not torch.autograd.is_anomaly_enabled()
    assert probe() is True and not torch.autograd.is_anomaly_enabled()


def test_failing_custom_backward_reports_its_forward_line():
    class Fails(Function):
        forward = staticmethod(lambda ctx, x: x * 2)

        @staticmethod
        def backward(ctx, g):
            raise ValueError("bad backward")

    x = leaf([1.0])
    with pytest.warns(UserWarning) as record:
        with torch.autograd.detect_anomaly():
            y = Fails.apply(x)  # custom function call site
            with pytest.raises(ValueError, match="bad backward"):
                y.sum().backward()
    report = next(str(w.message) for w in record if str(w.message).startswith("Error detected in FailsBackward."))
    assert "y = Fails.apply(x)  # custom function call site" in report


def test_nan_from_a_custom_backward():
    class NanGrad(Function):
        forward = staticmethod(lambda ctx, x, y: x * y)
        backward = staticmethod(lambda ctx, g: (g, g * float("nan")))

    x, y = leaf([1.0]), leaf([2.0])
    with pytest.warns(UserWarning):
        with torch.autograd.detect_anomaly():
            with pytest.raises(RuntimeError, match=r"^Function 'NanGradBackward' returned nan values in its 1th output\.$"):
                NanGrad.apply(x, y).sum().backward()


def test_version_error_hint_changes_with_anomaly_mode():
    x = leaf([1.0, 2.0])
    y = x.exp()
    y._array[...] = 0  # simulate an in-place write (in-place ops come with their own issue)
    y._bump_version()
    with pytest.raises(RuntimeError, match="Hint: enable anomaly detection"):
        y.sum().backward(retain_graph=True)
    with pytest.warns(UserWarning):
        with torch.autograd.detect_anomaly():
            with pytest.raises(RuntimeError, match="Hint: the backtrace further above shows the operation"):
                y.sum().backward()
