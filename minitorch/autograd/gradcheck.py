"""gradcheck / gradgradcheck: compare backward against central finite differences, as PyTorch does.

Slow mode builds, for every (differentiable output j, input i requiring grad) pair, the numerical
Jacobian column by column (perturb one input element by ``±eps`` in place) and the analytical one
row by row (one backward per output element with a one-hot seed), and requires
``|a - n| <= atol + rtol * |n|`` everywhere. Fast mode compares the scalar ``v^T J u`` for random
unit vectors ``u``, ``v`` instead, with atol scaled by ``sum(u) * sum(v)`` (PyTorch's rule); when it
fails it recomputes the slow Jacobians for the error message.

Besides the Jacobians, gradcheck checks what PyTorch's does: backward gives the same result twice
(``nondet_tol``), gradients have the inputs' sizes (and dtypes with ``check_grad_dtypes``), a zero
grad_output gives zero input grads, and backward copes with undefined (None) output grads.

The Jacobians are built as backend arrays: the only per-element Python work is one forward per
perturbation and one backward per output element.
"""

from __future__ import annotations

import itertools
import warnings

from .._dtype import float64
from ..creation import tensor, zeros_like
from ..random import Generator, rand
from ..tensor import Tensor, from_array
from .api import grad as autograd_grad
from .function import Function
from .gradcheck_forward import forward_directional, forward_jacobians

FAILED_NONDET_MSG = """

NOTE: If your op relies on non-deterministic operations, this failure might be expected:
call gradcheck/gradgradcheck with `nondet_tol=<tol>` as a keyword argument.
"""

FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode! Call gradcheck/gradgradcheck with `fast_mode=False`
as a keyword argument.
""".strip()


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the analytical and numerical gradients disagree."""


# inputs and outputs -------------------------------------------------------------------------------


def _as_tuple(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def _diff_inputs(inputs: tuple) -> list:
    """The inputs gradcheck differentiates: tensors that require grad (only floats can)."""
    return [t for t in inputs if _is_tensor(t) and t.requires_grad]


def _tensor_outputs(out) -> tuple:
    return tuple(o for o in _as_tuple(out) if _is_tensor(o))


def _differentiable_outputs(out) -> tuple:
    return tuple(o for o in _tensor_outputs(out) if o.requires_grad)


def _check_inputs(inputs: tuple) -> None:
    """Warn about non-double inputs; refuse overlapping memory and calls with nothing to check."""
    any_requires_grad = False
    for idx, inp in enumerate(inputs):
        if not (_is_tensor(inp) and inp.requires_grad):
            continue
        if inp.dtype.name not in ("float64", "complex128"):
            warnings.warn(
                f"Input #{idx} requires gradient and is not a double precision floating point or complex. "
                "This check will likely fail if all the inputs are not of double precision floating point "
                "or complex. ",
                stacklevel=4,
            )
        content = inp._values() if inp.is_sparse else inp
        if not all(stride > 0 or size <= 1 for stride, size in zip(content.stride(), content.shape)):
            raise RuntimeError(
                f"The {idx}th input has a dimension with stride 0. gradcheck only supports inputs that are "
                "non-overlapping to be able to compute the numerical gradients correctly. You should call "
                ".contiguous on the input before passing it to gradcheck."
            )
        any_requires_grad = True
    if not any_requires_grad:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of the them have "
            "requires_grad=True."
        )


def _check_outputs(outputs: tuple) -> None:
    if any(o.is_sparse for o in outputs):
        raise ValueError(
            "Sparse output is not supported at gradcheck yet. Please call to_dense(masked_grad=...) on the "
            "output of fn for gradcheck."
        )


def _xp(t):
    return t._storage.backend.xp


def _wrap(array, like):
    """An array of Jacobian entries as a Tensor on ``like``'s device (for messages)."""
    return from_array(array, like._storage.backend, like.device)


def _dense(t):
    return t.to_dense() if t.is_sparse else t


def _float_dtype(xp, t):
    return t._array.dtype if t.dtype.is_floating_point else xp.float64


# numerical Jacobians ------------------------------------------------------------------------------


def _snapshot(outputs: tuple) -> list:
    """Copies of the output values (an output may alias an input that is being perturbed)."""
    return [o._array.astype(_float_dtype(_xp(o), o), copy=True) for o in outputs]


def _numerical_jacobians(func, inputs: tuple, eps: float) -> list:
    """``result[i][j]``: d tensor-output j / d diff-input i, an array of shape (input numel, output numel).

    Each input element is perturbed in place through the input's own (strided) array, so the
    storage version is untouched and saved tensors of the caller's graph stay valid. A complex element is
    perturbed along its real and its imaginary part: the entry is ds/dx + i ds/dy (PyTorch's conjugate
    Wirtinger convention, the gradient a real output's backward gives).
    """
    result = []
    for x in _diff_inputs(inputs):
        array, xp = x._array, _xp(x)
        steps = (eps, eps * 1j) if x.dtype.is_complex else (eps,)
        columns = None
        for k, index in enumerate(itertools.product(*map(range, array.shape))):
            original = array[index].item()
            derivatives = []
            for step in steps:
                array[index] = original - step
                below = _snapshot(_tensor_outputs(func(*inputs)))
                array[index] = original + step
                above = _snapshot(_tensor_outputs(func(*inputs)))
                array[index] = original
                derivatives.append([((a - b) / (2 * eps)).reshape(-1) for a, b in zip(above, below)])
            if columns is None:
                columns = [xp.zeros((x.numel(), d.size), dtype=xp.result_type(d.dtype, array.dtype))
                           for d in derivatives[0]]
            for j, jacobian in enumerate(columns):
                jacobian[k] = derivatives[0][j] if len(steps) == 1 else derivatives[0][j] + 1j * derivatives[1][j]
        if columns is None:  # an empty input: empty Jacobians, one per output
            columns = [xp.zeros((0, o.numel()), dtype=_float_dtype(xp, o)) for o in _tensor_outputs(func(*inputs))]
        result.append(columns)
    return result


def _numerical_directional(func, inputs: tuple, x, u, eps: float) -> list:
    """``J u`` for every tensor output, by central differences along ``u`` (flattened output arrays)."""
    array = x._array
    original = array.copy()
    delta = (eps * u).reshape(array.shape).astype(array.dtype)
    array[...] = original - delta
    below = _snapshot(_tensor_outputs(func(*inputs)))
    array[...] = original + delta
    above = _snapshot(_tensor_outputs(func(*inputs)))
    array[...] = original
    return [((a - b) / (2 * eps)).reshape(-1) for a, b in zip(above, below)]


# analytical Jacobians -----------------------------------------------------------------------------


def _vjps(output, diff_inputs: list, seeds) -> list:
    """For each seed (a flat array over ``output``), the gradients of ``seed . output`` w.r.t. the inputs."""
    rows = []
    shape = output._array.shape
    for seed in seeds:
        grads = autograd_grad(output, diff_inputs, _wrap(seed.reshape(shape), output), retain_graph=True,
                              allow_unused=True)
        rows.append([None if g is None else _dense(g) for g in grads])
    return rows


def _stack(rows: list, diff_inputs: list) -> tuple:
    """Rows of gradients -> one (input numel, len(rows)) array per input; plus size/dtype flags."""
    sizes_ok = types_ok = True
    jacobians = []
    for i, inp in enumerate(diff_inputs):
        xp = _xp(inp)
        jacobian = xp.zeros((inp.numel(), len(rows)), dtype=inp._array.dtype)
        for k, row in enumerate(rows):
            g = row[i]
            if g is None:
                continue
            if g.shape != inp.shape:
                sizes_ok = False
                continue
            if g.dtype is not inp.dtype:
                types_ok = False
            jacobian[:, k] = g._array.reshape(-1)
        jacobians.append(jacobian)
    return jacobians, sizes_ok, types_ok


def _analytical_jacobians(output, diff_inputs: list, nondet_tol: float, check_grad_dtypes: bool, seeds) -> list:
    """``result[i]``: the rows ``seed^T J`` for every seed, w.r.t. diff-input i; computed twice to
    catch a backward that is not reentrant (gives different values for the same call)."""
    seeds = list(seeds)
    first, sizes_ok, types_ok = _stack(_vjps(output, diff_inputs, seeds), diff_inputs)
    second, _, _ = _stack(_vjps(output, diff_inputs, seeds), diff_inputs)
    reentrant = all(
        a.size == 0 or float(_xp(x).abs(a - b).max()) <= nondet_tol for a, b, x in zip(first, second, diff_inputs)
    )
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not reentrant:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and grad_output multiple times "
            "gives different values, although analytical gradient matches numerical gradient."
            f"The tolerance for nondeterminism was {nondet_tol}." + FAILED_NONDET_MSG
        )
    return first


def _one_hot_seeds(output):
    xp = _xp(output)
    n = output.numel()
    for k in range(n):
        seed = xp.zeros(n, dtype=output._array.dtype)
        seed[k] = 1
        yield seed


def _allclose(xp, a, n, rtol: float, atol: float) -> bool:
    wide = xp.complex128 if a.dtype.kind == "c" or n.dtype.kind == "c" else xp.float64
    return bool(xp.allclose(a.astype(wide), n.astype(wide), rtol=rtol, atol=atol))


def _not_close_message(analytical, numerical, output_idx: int, input_idx: int) -> str:
    return (
        f"Jacobian mismatch for output {output_idx} with respect to input {input_idx},\n"
        f"numerical:{numerical}\nanalytical:{analytical}\n"
    )


# the two modes ------------------------------------------------------------------------------------


def _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol) -> None:
    diff_inputs = _diff_inputs(inputs)
    numerical = _numerical_jacobians(func, inputs, eps)
    if not outputs:
        if any(bool((j != 0).any()) for per_input in numerical for j in per_input):
            raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    differentiable = [o.requires_grad for o in _tensor_outputs(func_out)]
    for j, output in enumerate(outputs):
        analytical = _analytical_jacobians(output, diff_inputs, nondet_tol, check_grad_dtypes, _one_hot_seeds(output))
        for i, (a, inp) in enumerate(zip(analytical, diff_inputs)):
            n = [col for col, d in zip(numerical[i], differentiable) if d][j]
            if not _allclose(_xp(inp), a, n, rtol, atol):
                raise GradcheckError(_not_close_message(_wrap(a, inp), _wrap(n, inp), j, i))


def _unit_vector(n: int, like, generator):
    """A random vector of ``n`` entries, norm 1 (PyTorch's ``rand`` then divide by the norm), as an array."""
    with_values = rand(n, generator=generator, dtype=float64)
    array = with_values._array
    norm = float((array * array).sum()) ** 0.5
    if norm > 0:
        array = array / norm
    return like._storage.backend.asarray(array, dtype=like.dtype)


def _fast_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol) -> None:
    generator = Generator()  # its own stream: the user's RNG state is left alone
    diff_inputs = _diff_inputs(inputs)
    all_u = [_unit_vector(x.numel(), x, generator) for x in diff_inputs]
    all_v = [_unit_vector(o.numel(), o, generator) for o in outputs]
    differentiable = [o.requires_grad for o in _tensor_outputs(func_out)]
    numerical = []  # numerical[i][j] = v_j . (J_ji u_i)
    for x, u in zip(diff_inputs, all_u):
        ju = [col for col, d in zip(_numerical_directional(func, inputs, x, u, eps), differentiable) if d]
        numerical.append([float((v.astype(jv.dtype) * jv).sum()) for v, jv in zip(all_v, ju)])
    if not outputs:
        if any(n != 0 for row in numerical for n in row):
            raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    def x_dtype(i):
        return diff_inputs[i].dtype

    for j, (output, v) in enumerate(zip(outputs, all_v)):
        vj = _analytical_jacobians(output, diff_inputs, nondet_tol, check_grad_dtypes, [v])
        for i, u in enumerate(all_u):
            a = float((vj[i][:, 0].astype(u.dtype) * u).sum())
            n = numerical[i][j]
            scaled_atol = atol * float(u.sum()) * float(v.sum())
            if not abs(a - n) <= scaled_atol + rtol * abs(n):
                raise GradcheckError(
                    _not_close_message(tensor(a, dtype=x_dtype(i)), tensor(n, dtype=x_dtype(i)), j, i)
                    + _slow_mode_report(func, func_out, inputs, outputs, i, j, eps, rtol, atol)
                )


def _slow_mode_report(func, func_out, inputs, outputs, input_idx, output_idx, eps, rtol, atol) -> str:
    """The slow-mode Jacobians of one (input, output) pair, for a fast-mode failure message."""
    diff_inputs = _diff_inputs(inputs)
    inp = diff_inputs[input_idx]
    differentiable = [o.requires_grad for o in _tensor_outputs(func_out)]
    numerical = [c for c, d in zip(_numerical_jacobians(func, inputs, eps)[input_idx], differentiable) if d][output_idx]
    output = outputs[output_idx]
    analytical = _stack(_vjps(output, diff_inputs, _one_hot_seeds(output)), diff_inputs)[0][input_idx]
    xp = _xp(inp)
    max_diff = float(xp.abs(numerical - analytical).max()) if numerical.size else 0.0
    message = (
        "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
        "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
        "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
        f"Numerical:\n {_wrap(numerical, inp)}\n"
        f"Analytical:\n{_wrap(analytical, inp)}\n\n"
        f"The max per-element difference (slow mode) is: {max_diff}.\n"
    )
    if _allclose(xp, analytical, numerical, rtol, atol):
        message += FAST_FAIL_SLOW_OK_MSG
    return message


# the extra checks ---------------------------------------------------------------------------------


def _test_backward_mul_by_grad_output(outputs: tuple, inputs: tuple) -> None:
    """A zero grad_output must give zero input grads of the inputs' dtype, device and size."""
    diff_inputs = _diff_inputs(inputs)
    grads = autograd_grad(outputs, diff_inputs, [zeros_like(o) for o in outputs], allow_unused=True)
    for gi, di in zip(grads, diff_inputs):
        if gi is None:
            continue
        gi = _dense(gi)
        if not bool((gi == 0).all()):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype is not di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.device != di.device:
            raise GradcheckError("grad is incorrect device")
        if gi.shape != di.shape:
            raise GradcheckError("grad is incorrect size")


class UndefinedGrad(Function):
    """A pass-through whose backward turns the gradient into None (an undefined gradient)."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        return None


def _test_undefined_backward_mode(func, outputs: tuple, inputs: tuple) -> None:
    """Backward must cope with undefined output grads: all at once, and one output at a time."""
    undefined = UndefinedGrad
    diff_inputs = _diff_inputs(inputs)

    def warn_bc_breaking():
        warnings.warn(
            "Backwards compatibility: New undefined gradient support checking feature is enabled by default, "
            "but it may break existing callers of this function. If this is true for you, you can call this "
            'function with "check_undefined_grad=False" to disable the feature',
            stacklevel=4,
        )

    def check(outs):
        try:
            grads = autograd_grad(outs, diff_inputs, [zeros_like(o) for o in outs], allow_unused=True)
        except (RuntimeError, TypeError) as error:
            warn_bc_breaking()
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. Please look at \"Notes about "
                'undefined output gradients" in "tools/autograd/derivatives.yaml"'
            ) from error
        for gi in grads:
            if gi is not None and not bool((_dense(gi) == 0).all()):
                warn_bc_breaking()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads are undefined or zero. "
                    'Please look at "Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'
                )

    check([undefined.apply(o) for o in _differentiable_outputs(func(*inputs))])
    if len(outputs) > 1:
        for undefined_idx in range(len(outputs)):
            outs = _differentiable_outputs(func(*inputs))
            check([undefined.apply(o) if idx == undefined_idx else o for idx, o in enumerate(outs)])


# public API ---------------------------------------------------------------------------------------


def gradcheck(
    func,
    inputs,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """True when backward agrees with finite differences for every input that requires grad.

    ``func`` takes the ``inputs`` (a Tensor or a tuple; non-tensors are passed through) and returns a
    Tensor or a sequence of them. Use float64 inputs: the default tolerances assume double precision.
    On failure raises :class:`GradcheckError`, or returns False when ``raise_exception=False``.
    ``masked`` only matters for sparse inputs (dense inputs ignore it). ``check_forward_ad`` compares the
    Jacobian forward mode gives (one tangent per input element; gradcheck_forward.py) with the same finite
    differences. minitorch's vmap is a loop, not batched gradients, so ``check_batched_forward_grad`` and
    ``check_batched_grad`` must stay False.
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    for flag, value in (("check_batched_forward_grad", check_batched_forward_grad),
                        ("check_batched_grad", check_batched_grad)):
        if value:
            raise ValueError(f"gradcheck: {flag}=True needs batched gradients (a batching vmap), which minitorch "
                             "does not have")
    try:
        _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
                          fast_mode, check_forward_ad, check_backward_ad)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
                      fast_mode, check_forward_ad=False, check_backward_ad=True) -> None:
    inputs = _as_tuple(inputs)
    _check_inputs(inputs)
    func_out = func(*inputs)
    outputs = _differentiable_outputs(func_out)
    _check_outputs(outputs)
    if any(o.dtype.is_complex for o in outputs):  # as PyTorch: the real and imaginary parts, as two real functions
        for part, name in (("real", "real"), ("imag", "imaginary")):
            def part_of(*args, part=part):
                return tuple(getattr(o, part) if o.dtype.is_complex else o for o in _tensor_outputs(func(*args)))

            try:
                _gradcheck_helper(part_of, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                                  check_grad_dtypes, fast_mode, check_forward_ad, check_backward_ad)
            except GradcheckError as error:
                raise GradcheckError(f"While considering the {name} part of complex outputs only, {error}") from None
        return
    if any(x.dtype.is_complex for x in _diff_inputs(inputs)):
        fast_mode = False  # (minitorch's fast mode draws real directions only: complex inputs take the slow mode)
    if check_forward_ad:
        _forward_gradcheck(func, inputs, eps, rtol, atol, fast_mode)
    if not check_backward_ad:
        return
    check = _fast_gradcheck if fast_mode else _slow_gradcheck
    check(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol)
    if not outputs:
        return
    _test_backward_mul_by_grad_output(outputs, inputs)
    if check_undefined_grad:
        _test_undefined_backward_mode(func, outputs, inputs)


def _forward_gradcheck(func, inputs, eps, rtol, atol, fast_mode) -> None:
    """Forward mode's Jacobian (or ``v . J u`` in fast mode) against finite differences, every tensor output."""
    diff_inputs = _diff_inputs(inputs)
    positions = [k for k, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad]
    if fast_mode:
        generator = Generator()
        outputs = _tensor_outputs(func(*inputs))
        all_v = [_unit_vector(o.numel(), o, generator) for o in outputs]
        for i, (x, position) in enumerate(zip(diff_inputs, positions)):
            u = _unit_vector(x.numel(), x, generator)
            numerical = _numerical_directional(func, inputs, x, u, eps)
            analytical = forward_directional(func, inputs, position, u)
            for j, (v, n_col, a_col) in enumerate(zip(all_v, numerical, analytical)):
                n = float((v.astype(n_col.dtype) * n_col).sum().real)
                a = float((v.astype(a_col.dtype) * a_col).sum().real)
                if not abs(a - n) <= atol * float(u.sum()) * float(v.sum()) + rtol * abs(n):
                    raise GradcheckError(_forward_message(tensor(a, dtype=x.dtype), tensor(n, dtype=x.dtype), j, i))
        return
    numerical = _numerical_jacobians(func, inputs, eps)
    analytical = forward_jacobians(func, inputs)
    for i, (x, per_output_n, per_output_a) in enumerate(zip(diff_inputs, numerical, analytical)):
        for j, (n, a) in enumerate(zip(per_output_n, per_output_a)):
            if n.shape != a.shape or not _allclose(_xp(x), a, n, rtol, atol):
                raise GradcheckError(_forward_message(_wrap(a, x), _wrap(n, x), j, i))


def _forward_message(analytical, numerical, output_idx: int, input_idx: int) -> str:
    return (
        f"Jacobian computed with forward mode mismatch for output {output_idx} with respect to input {input_idx},\n"
        f"numerical:{numerical}\nanalytical:{analytical}\n"
    )


def _random_grad_output(output, noncontiguous: bool):
    """A grad_output drawn uniformly from [-1, 1) in ``output``'s dtype (``testing.make_tensor``'s draw), as
    the even columns of a tensor twice as wide when ``noncontiguous``; it requires grad."""
    values = (rand(output.shape, device=output.device, dtype=float64) * 2 + -1).to(output.dtype)
    if noncontiguous and values.numel() > 1:
        shape = tuple(values.shape)
        doubled = values.unsqueeze(-1).expand(shape + (2,)).reshape(shape[:-1] + (2 * shape[-1],))
        values = doubled[..., ::2]
    return values.requires_grad_(True)


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """Check second derivatives: gradcheck of ``(inputs, v) -> v^T J(inputs)``.

    Without ``grad_outputs``, ``v`` is drawn (from the global RNG, in [-1, 1), as PyTorch does) and
    itself requires grad, so the derivative w.r.t. ``v`` (the first derivative) is checked too.
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*inputs))
        grad_outputs = tuple(_random_grad_output(o, gen_non_contig_grad_outputs) for o in outputs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_outputs = len(grad_outputs)
    diff_input_positions = [i for i, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad]

    def first_derivative(*args):
        xs, vs = args[: len(args) - n_outputs], args[len(args) - n_outputs:]
        outs = _differentiable_outputs(func(*xs))
        diff_xs = [xs[i] for i in diff_input_positions]
        grads = autograd_grad(outs, diff_xs, vs, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        first_derivative, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception,
        nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad, fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev, masked=masked,
    )


__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]
