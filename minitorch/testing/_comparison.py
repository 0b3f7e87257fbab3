"""assert_close: PyTorch's closeness check (|a - e| <= atol + rtol * |e|, dtype-based defaults)."""

from __future__ import annotations

from ..tensor import Tensor

# PyTorch's default tolerances per dtype: (rtol, atol)
_TOLERANCES = {"float16": (1e-3, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}


def assert_close(actual, expected, *, rtol=None, atol=None, equal_nan=False, check_dtype=True, check_device=True,
                 msg=None) -> None:
    """Raise AssertionError naming the worst mismatch unless ``actual`` and ``expected`` are close."""
    from ..creation import tensor

    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype if check_dtype is False else None)
        check_dtype = False
    if actual.shape != expected.shape:
        raise AssertionError(msg or f"The values for attribute 'shape' do not match: {actual.shape} != {expected.shape}.")
    if check_dtype and actual.dtype is not expected.dtype:
        raise AssertionError(msg or f"The values for attribute 'dtype' do not match: {actual.dtype} != {expected.dtype}.")
    if check_device and actual.device != expected.device:
        raise AssertionError(msg or f"The values for attribute 'device' do not match: {actual.device} != {expected.device}.")
    if (rtol is None) != (atol is None):
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted, but got only one of them.")
    if rtol is None:
        rtol, atol = _TOLERANCES.get(actual.dtype.name, (0.0, 0.0))
    a = actual.detach().cpu().double()._array
    e = expected.detach().cpu().double()._array
    xp = actual.cpu()._storage.backend.xp
    close = xp.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if not close.all():
        diff = xp.abs(a - e)
        worst = xp.unravel_index(xp.nanargmax(xp.where(close, -1, diff)), a.shape) if a.shape else ()
        raise AssertionError(
            msg
            or f"Tensor-likes are not close!\n\nMismatched elements: {int((~close).sum())} / {a.size}\n"
            f"Greatest absolute difference: {float(diff[worst])} at index {tuple(int(i) for i in worst)} "
            f"(up to {atol} allowed)\nactual {float(a[worst])} vs expected {float(e[worst])} (rtol {rtol})"
        )
