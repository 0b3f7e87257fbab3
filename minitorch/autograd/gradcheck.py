"""gradcheck / gradgradcheck: compare backward against central finite differences, as PyTorch does.

Slow mode builds both Jacobians column by column (numerical: perturb one input element by
``±eps`` in place; analytical: one backward per output element with a one-hot seed) and requires
``|a - n| <= atol + rtol * |n|`` everywhere. Fast mode compares the scalar ``v^T J u`` for random
unit vectors ``u``, ``v`` instead, with atol scaled by ``sum(u) * sum(v)`` (PyTorch's rule).
"""

from __future__ import annotations

import warnings


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the analytical and numerical gradients disagree."""


def _tensors(inputs):
    from ..tensor import Tensor

    if isinstance(inputs, Tensor):
        return (inputs,)
    return tuple(inputs)


def _differentiable(inputs):
    from ..tensor import Tensor

    return [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad and t.dtype.is_floating_point]


def _outputs(func, inputs):
    from ..tensor import Tensor

    out = func(*inputs)
    return (out,) if isinstance(out, Tensor) else tuple(o for o in out if isinstance(o, Tensor))


def _flat_values(t):
    return t.detach().reshape(-1).to(dtype=_float64())


def _float64():
    from .._dtype import float64

    return float64


def _numerical_jacobian(func, inputs, index, eps):
    """Columns: d outputs / d inputs[index][k], by central differences, perturbing in place."""
    from ..creation import zeros

    x = inputs[index]
    outputs = _outputs(func, inputs)
    n_out = sum(o.numel() for o in outputs)
    jacobian = zeros(x.numel(), n_out, dtype=_float64())
    flat = x.detach().reshape(-1) if x.is_contiguous() else None
    # perturbations write arrays directly; func runs with grad on (gradgradcheck needs it)
    for k in range(x.numel()):
        target = flat if flat is not None else x.detach().contiguous().reshape(-1)
        original = target[k].item()
        _write(x, target, k, original + eps)
        plus = [_flat_values(o) for o in _outputs(func, inputs)]
        _write(x, target, k, original - eps)
        minus = [_flat_values(o) for o in _outputs(func, inputs)]
        _write(x, target, k, original)
        column = [((p - m) / (2 * eps))._array for p, m in zip(plus, minus)]
        if column:
            jacobian._array[k] = jacobian._storage.backend.xp.concatenate(column)
    return jacobian


def _write(x, flat, k, value):
    """Set element k (row-major) of x in place, through a view when x is contiguous."""
    if flat._storage is x._storage:
        flat._array.reshape(-1)[k] = value
    else:
        view = x.detach()
        index = []
        for n in reversed(x.shape):
            index.append(k % n)
            k //= n
        view._array[tuple(reversed(index))] = value


def _analytical_jacobian(func, inputs, diff_indices, nondet_tol):
    """Rows: d outputs[j] / d inputs, by one backward per output element (one-hot seed)."""
    from ..autograd import grad as autograd_grad
    from ..creation import zeros, zeros_like

    outputs = _outputs(func, inputs)
    n_out = sum(o.numel() for o in outputs)
    jacobians = [zeros(inputs[i].numel(), n_out, dtype=_float64()) for i in diff_indices]
    diff_inputs = [inputs[i] for i in diff_indices]
    row = 0
    reentrant = True
    for j, out in enumerate(outputs):
        for k in range(out.numel()):
            if not out.requires_grad:
                row += 1
                continue
            seed = zeros_like(out)
            seed.reshape(-1)._array[k] = 1
            grads = autograd_grad(out, diff_inputs, seed, retain_graph=True, allow_unused=True)
            again = autograd_grad(out, diff_inputs, seed, retain_graph=True, allow_unused=True)
            for col, (g, g2, inp) in enumerate(zip(grads, again, diff_inputs)):
                if g is None:
                    continue
                if g.shape != inp.shape:
                    raise GradcheckError("Analytical gradient has incorrect size")
                dense = g.to_dense() if g.is_sparse else g
                dense2 = g2.to_dense() if g2.is_sparse else g2
                if dense.numel() and float((dense - dense2).abs()._array.max()) > nondet_tol:
                    reentrant = False
                jacobians[col]._array[:, row] = dense.reshape(-1).to(dtype=_float64())._array
            row += 1
    return jacobians, reentrant


def _allclose(a, n, rtol, atol) -> bool:
    return bool(((a - n).abs() <= atol + rtol * n.abs()).all())


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
    masked=None,
) -> bool:
    """True when backward agrees with finite differences for every input that requires grad."""
    inputs = _tensors(inputs)
    diff_indices = _differentiable(inputs)
    if not diff_indices:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them have requires_grad=True.")
    for i in diff_indices:
        if inputs[i].dtype.name != "float64":
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or complex. This check "
                "will likely fail if all the inputs are not of double precision floating point or complex. ",
                stacklevel=2,
            )
    try:
        if fast_mode:
            _fast_check(func, inputs, diff_indices, eps, atol, rtol)
        else:
            _slow_check(func, inputs, diff_indices, eps, atol, rtol, nondet_tol)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _slow_check(func, inputs, diff_indices, eps, atol, rtol, nondet_tol):
    analytical, reentrant = _analytical_jacobian(func, inputs, diff_indices, nondet_tol)
    for col, i in enumerate(diff_indices):
        numerical = _numerical_jacobian(func, inputs, i, eps)
        if not _allclose(analytical[col], numerical, rtol, atol):
            raise GradcheckError(
                f"Jacobian mismatch for output 0 with respect to input {i},\n"
                f"numerical:{numerical}\nanalytical:{analytical[col]}\n"
            )
    if not reentrant:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and grad_output multiple times "
            "gives different values, although analytical gradient matches numerical gradient."
            f"The tolerance for nondeterminism was {nondet_tol}."
        )


def _fast_check(func, inputs, diff_indices, eps, atol, rtol):
    """Compare v^T J u (analytical, by one backward) with the directional finite difference."""
    from ..autograd import grad as autograd_grad
    from ..random import Generator, rand

    generator = Generator()
    generator.manual_seed(0)
    outputs = _outputs(func, inputs)
    vs = [_unit(rand(o.shape, dtype=_float64(), generator=generator)) for o in outputs]
    for i in diff_indices:
        x = inputs[i]
        u = _unit(rand(x.shape, dtype=_float64(), generator=generator))
        seeds = [v.to(o.dtype) for v, o in zip(vs, outputs)]
        live = [(o, s) for o, s in zip(outputs, seeds) if o.requires_grad]
        (g,) = autograd_grad([o for o, _ in live], [x], [s for _, s in live], retain_graph=True, allow_unused=True)
        analytical = 0.0 if g is None else float((g.to(_float64()) * u).sum().item())
        original = x.detach().clone()
        x.detach()._array[...] = (original + eps * u.to(x.dtype))._array
        plus = _outputs(func, inputs)
        plus_v = sum(float((p.to(_float64()) * v).sum().item()) for p, v in zip(plus, vs))
        x.detach()._array[...] = (original - eps * u.to(x.dtype))._array
        minus = _outputs(func, inputs)
        minus_v = sum(float((m.to(_float64()) * v).sum().item()) for m, v in zip(minus, vs))
        x.detach()._array[...] = original._array
        numerical = (plus_v - minus_v) / (2 * eps)
        scaled_atol = atol * float(u.sum().item()) * sum(float(v.sum().item()) for v in vs)
        if abs(analytical - numerical) > scaled_atol + rtol * abs(numerical):
            raise GradcheckError(
                f"Jacobian mismatch for output 0 with respect to input {i},\n"
                f"numerical:{numerical}\nanalytical:{analytical}\n\n"
                "The above quantities relating the numerical and analytical jacobians are computed in fast mode. "
                "See: https://github.com/pytorch/pytorch/issues/53876 for more background about fast mode."
            )


def _unit(t):
    return t / (t * t).sum().sqrt() if t.numel() else t


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
    """gradcheck of the function ``(inputs, v) -> v^T J(inputs)``: checks second derivatives."""
    from ..autograd import grad as autograd_grad
    from ..random import Generator, randn

    inputs = _tensors(inputs)
    diff_indices = _differentiable(inputs)
    outputs = _outputs(func, inputs)
    if grad_outputs is None:
        generator = Generator()
        generator.manual_seed(0)
        grad_outputs = tuple(
            randn(o.shape, dtype=o.dtype, generator=generator).requires_grad_(True) for o in outputs if o.requires_grad
        )
    else:
        grad_outputs = _tensors(grad_outputs)
    n_inputs = len(inputs)

    def first_derivative(*all_inputs):
        xs, vs = all_inputs[:n_inputs], all_inputs[n_inputs:]
        outs = [o for o in _outputs(func, xs) if o.requires_grad]
        grads = autograd_grad(outs, [xs[i] for i in diff_indices], vs, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        first_derivative, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
        raise_exception=raise_exception, nondet_tol=nondet_tol, fast_mode=fast_mode,
    )
