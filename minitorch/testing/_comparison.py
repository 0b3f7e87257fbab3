"""assert_close: PyTorch's closeness check, ``|actual - expected| <= atol + rtol * |expected|``.

Inputs are paired up as ``torch.testing.assert_close`` does: sequences and mappings are compared
item by item (the failure names the item), ``None`` only equals ``None``, bools are compared by
identity, Python numbers by value (with the tolerances of int64/float64), and tensors by shape,
layout, device and dtype first, then values. Default tolerances depend on the dtype (see
``_DTYPE_PRECISIONS``); integer and bool dtypes are compared exactly.
"""

from __future__ import annotations

import cmath
import collections.abc
import contextlib
import math
import warnings

from .._dtype import promote_types
from ..creation import tensor
from ..tensor import Tensor

# PyTorch's default (rtol, atol) per dtype; every other dtype compares exactly
_DTYPE_PRECISIONS = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "quint8": (1.3e-6, 1e-5),
    "qint8": (1.3e-6, 1e-5),
    "qint32": (1.3e-6, 1e-5),
}
_NUMBER_DTYPE = {int: "int64", float: "float64", complex: "complex128"}
_COMPLEX_PRECISION = (1e-7, 1e-7)


class _Mismatch(Exception):
    """A failed comparison: the exception type to raise, its message, and the item path."""

    def __init__(self, kind: type, message: str, path: tuple = ()):
        super().__init__(message)
        self.kind, self.message, self.path = kind, message, path

    def to_error(self, msg=None) -> Exception:
        if isinstance(msg, str):
            return self.kind(msg)
        message = self.message
        if self.path:
            message += f"\n\nThe failure occurred for item {''.join(str([item]) for item in self.path)}"
        return self.kind(msg(message) if callable(msg) else message)


def assert_close(
    actual,
    expected,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg=None,
) -> None:
    """Raise ``AssertionError`` describing the worst mismatch unless ``actual`` and ``expected`` are close.

    ``msg`` replaces the generated message (a str) or transforms it (a callable taking the message).
    With ``check_dtype=False`` / ``check_device=False`` the inputs are promoted to a common dtype /
    moved to the CPU before the values are compared.
    """
    __tracebackhide__ = True
    if (rtol is None) != (atol is None):
        missing = "rtol" if rtol is None else "atol"
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}.")
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                   check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
                   check_stride=check_stride)
    pairs = _pairs(actual, expected, (), options)  # structure errors raise here, before any value check
    for compare, a, e, path in pairs:
        try:
            compare(a, e, options)
        except _Mismatch as mismatch:
            mismatch.path = path
            raise mismatch.to_error(msg) from None


def _is_sequence(x) -> bool:
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)


def _pairs(actual, expected, path: tuple, options: dict) -> list:
    """Flatten matching sequences/mappings into (compare_fn, actual, expected, path) leaves."""
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                            path).to_error()
        pairs = []
        for i, (a, e) in enumerate(zip(actual, expected)):
            pairs.extend(_pairs(a, e, (*path, i), options))
        return pairs
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            raise _Mismatch(
                AssertionError,
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(expected_keys - actual_keys)}\n"
                f"Additional keys in the actual mapping: {sorted(actual_keys - expected_keys)}",
                path,
            ).to_error()
        try:
            keys = sorted(actual_keys)
        except TypeError:
            keys = list(actual_keys)
        pairs = []
        for key in keys:
            pairs.extend(_pairs(actual[key], expected[key], (*path, key), options))
        return pairs
    return [(_comparison_for(actual, expected, path, options), actual, expected, path)]


def _comparison_for(actual, expected, path: tuple, options: dict):
    if actual is None or expected is None:
        return _compare_none
    if isinstance(actual, bool) and isinstance(expected, bool):
        return _compare_bools
    numbers = (int, float, complex)
    if isinstance(actual, numbers) and isinstance(expected, numbers):
        return _compare_numbers
    if isinstance(actual, Tensor) and isinstance(expected, Tensor):
        if options["allow_subclasses"] or type(actual) is type(expected):
            return _compare_tensors
    raise _Mismatch(
        TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.", path
    ).to_error()


def _compare_none(actual, expected, options) -> None:
    if not (actual is None and expected is None):
        raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}")


def _compare_bools(actual, expected, options) -> None:
    if actual is not expected:
        raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}")


def _tolerances(names: tuple, options: dict) -> tuple:
    if options["rtol"] is not None:
        return options["rtol"], options["atol"]
    found = [_DTYPE_PRECISIONS.get(n, _COMPLEX_PRECISION if n.startswith("complex") else (0.0, 0.0)) for n in names]
    return max(r for r, _ in found), max(a for _, a in found)


def _compare_numbers(actual, expected, options) -> None:
    if options["check_dtype"] and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.")
    rtol, atol = _tolerances(tuple(_NUMBER_DTYPE.get(type(x), "int64") for x in (actual, expected)), options)
    if actual == expected:
        return
    if options["equal_nan"] and cmath.isnan(actual) and cmath.isnan(expected):
        return
    abs_diff = abs(actual - expected)
    if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
        return
    raise _Mismatch(AssertionError, _scalar_mismatch_message(actual, expected, rtol, atol))


def _scalar_mismatch_message(actual, expected, rtol, atol) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = math.inf if expected == 0 else abs_diff / abs(expected)
    return _mismatch_message("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, atol, rel_diff,
                             None, rtol)


def _mismatch_message(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol) -> str:
    equality = rtol == 0 and atol == 0

    def line(kind, diff, idx, tol):
        if idx is None:
            text = f"{kind.title()} difference: {diff}"
        else:
            text = f"Greatest {kind} difference: {diff} at index {idx}"
        return text + ("" if equality else f" (up to {tol} allowed)") + "\n"

    message = f"{identifier} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    message += line("absolute", abs_diff, abs_idx, atol) + line("relative", rel_diff, rel_idx, rtol)
    return message.strip()


def _compare_tensors(actual: Tensor, expected: Tensor, options) -> None:
    _compare_attributes(actual, expected, options)
    if actual.is_meta or expected.is_meta:
        return  # meta tensors have no values
    if actual.is_sparse:
        actual, expected = actual.to_dense(), expected.to_dense()
    if actual.is_quantized:
        actual, expected = actual.dequantize(), expected.dequantize()
    if actual.device != expected.device:
        actual, expected = actual.cpu(), expected.cpu()
    rtol, atol = _tolerances((actual.dtype.name, expected.dtype.name), options)
    if actual.dtype is not expected.dtype:
        common = promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(common), expected.to(common)
    _compare_values(actual.detach(), expected.detach(), rtol, atol, options["equal_nan"])


def _compare_attributes(actual: Tensor, expected: Tensor, options) -> None:
    def mismatch(name, a, e):
        raise _Mismatch(AssertionError, f"The values for attribute '{name}' do not match: {a} != {e}.")

    if actual.shape != expected.shape:
        mismatch("shape", actual.shape, expected.shape)
    if actual.is_quantized != expected.is_quantized:
        mismatch("is_quantized", actual.is_quantized, expected.is_quantized)
    if actual.layout != expected.layout:
        if options["check_layout"]:
            mismatch("layout", actual.layout, expected.layout)
    elif not actual.is_sparse and options["check_stride"] and actual.stride() != expected.stride():
        mismatch("stride()", actual.stride(), expected.stride())
    if options["check_device"] and actual.device != expected.device:
        mismatch("device", actual.device, expected.device)
    if options["check_dtype"] and actual.dtype is not expected.dtype:
        mismatch("dtype", actual.dtype, expected.dtype)


def _compare_values(actual: Tensor, expected: Tensor, rtol: float, atol: float, equal_nan: bool) -> None:
    xp = actual._storage.backend.xp
    a, e = actual._array, expected._array
    floating = actual.dtype.is_floating_point or actual.dtype.is_complex
    if floating:
        matches = xp.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    elif rtol == 0 and atol == 0:
        matches = a == e
    else:
        a64, e64 = a.astype(xp.int64), e.astype(xp.int64)
        matches = xp.abs(a64 - e64) <= atol + rtol * xp.abs(e64)
    if bool(matches.all()):
        return
    if not a.shape:
        raise _Mismatch(AssertionError, _scalar_mismatch_message(a.item(), e.item(), rtol, atol))
    raise _Mismatch(AssertionError, _tensor_mismatch_message(xp, a, e, matches, rtol, atol, floating))


def _tensor_mismatch_message(xp, a, e, matches, rtol, atol, floating: bool) -> str:
    total = matches.size
    mismatched = total - int(matches.sum())
    extra = f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"
    a_flat, e_flat, ok = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
    if not floating:
        a_flat, e_flat = a_flat.astype(xp.int64), e_flat.astype(xp.int64)
    abs_diff = xp.abs(a_flat - e_flat)
    abs_diff = xp.where(ok, 0, abs_diff)
    magnitude = xp.abs(e_flat)
    errstate = getattr(xp, "errstate", lambda **_: contextlib.nullcontext())  # CuPy does not warn
    with errstate(invalid="ignore"):  # inf - inf gives nan, as in PyTorch
        rel_diff = xp.where(magnitude == 0, math.inf, abs_diff / xp.where(magnitude == 0, 1, magnitude))
    rel_diff = xp.where(ok, 0, rel_diff)
    abs_idx, rel_idx = int(xp.argmax(abs_diff)), int(xp.argmax(rel_diff))

    def unravel(flat: int) -> tuple:
        index = []
        for size in reversed(a.shape):
            index.append(flat % size)
            flat //= size
        return tuple(reversed(index))

    return _mismatch_message("Tensor-likes", extra, abs_diff[abs_idx].item(), unravel(abs_idx), atol,
                             rel_diff[rel_idx].item(), unravel(rel_idx), rtol)


__all__ = ["assert_close"]


# assert_allclose's own (older, looser) defaults
_ALLCLOSE_PRECISIONS = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol: float | None = None, atol: float | None = None, equal_nan: bool = True,
                    msg: str = "") -> None:
    """Deprecated (PyTorch 1.12): ``assert_close`` with looser default tolerances, NaNs equal, any dtypes compared
    by value, and numbers or lists accepted for either side."""
    __tracebackhide__ = True
    warnings.warn(
        "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future release. "
        "Please use `torch.testing.assert_close()` instead. "
        "You can find detailed upgrade instructions in https://github.com/pytorch/pytorch/issues/61844.",
        FutureWarning,
        stacklevel=2,
    )
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        found = [_ALLCLOSE_PRECISIONS.get(t.dtype.name, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(r for r, _ in found), max(a for _, a in found)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 check_stride=False, msg=msg or None)
