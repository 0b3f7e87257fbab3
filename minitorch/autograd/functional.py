"""torch.autograd.functional: Jacobians, Hessians and their products.

The reverse-mode functions run the user's function once under ``enable_grad`` and ask ``autograd.grad`` for
the rows they need. ``jvp`` runs the function once on dual tensors (forward mode, autograd/forward_ad.py):
``J v`` is the outputs' tangent. Where forward mode cannot serve (``strict=True``, whose errors are phrased for
it, or inside an open dual level, which does not nest) it uses PyTorch's double-backward trick: the vjp
``g(u) = J^T u`` is linear in a dummy cotangent ``u``, so differentiating ``g(u) . v`` with respect to ``u``
gives ``J v``; ``hvp`` always does. ``jacobian(..., strategy="forward-mode", vectorize=True)`` pushes one
tangent per input element (a loop: minitorch's vmap is one).
"""

from __future__ import annotations

from collections.abc import Callable

from ..creation import zeros, zeros_like
from ..ops.shape import stack
from ..tensor import Tensor
from . import forward_ad
from . import grad as autograd_grad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

def _as_tuple(inp, arg_name: str, fn_name: str) -> tuple[bool, tuple]:
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            if is_tuple:
                raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                                f"but the value at index {i} has type {type(el)}.")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                            f"but the given {arg_name} has type {type(el)}.")
    return is_tuple, items


def _tuple_postprocess(res, to_unpack):
    """Undo ``_as_tuple``: a lone Tensor input/output gets a lone result (a pair for Jacobians)."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(r[0] for r in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """Fresh differentiable copies of the inputs: a view keeps the caller's graph under create_graph."""
    return tuple(
        inp.view_as(inp) if create_graph and inp.requires_grad else inp.detach().requires_grad_(need_graph)
        for inp in inputs
    )


def _grad_postprocess(inputs: tuple, create_graph: bool) -> tuple:
    if inputs and isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v: tuple, other: tuple, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


def _check_requires_grad(inputs: tuple, input_type: str, strict: bool) -> None:
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. "
                               "This is not allowed in strict mode.")
        if not inp.requires_grad:
            if input_type == "hessian":
                raise RuntimeError(f"The hessian of the user-provided function with respect to input {i} is "
                                   "independent of the input. This is not allowed in strict mode. You should ensure "
                                   "that your function is thrice differentiable and that the hessian depends on "
                                   "the inputs.")
            if input_type == "jacobian":
                raise RuntimeError("While computing the hessian, found that the jacobian of the user-provided "
                                   f"function with respect to input {i} is independent of the input. This is not "
                                   "allowed in strict mode. You should ensure that your function is twice "
                                   "differentiable and that the jacobian depends on the inputs (this would be "
                                   "violated by a linear function for example).")
            if input_type == "grad_inputs":
                raise RuntimeError(f"The gradient with respect to input {i} is independent of the inputs of the "
                                   "user-provided function. This is not allowed in strict mode.")
            raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The outputs "
                               "must be computed in a differentiable manner from the input when running in strict "
                               "mode.")


def _autograd_grad(outputs: tuple, inputs: tuple, grad_outputs=None, create_graph=False, retain_graph=None) -> tuple:
    """autograd.grad over the outputs that need it (None per input when none does)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return autograd_grad(tuple(o for o, _ in pairs), inputs, tuple(g for _, g in pairs), allow_unused=True,
                         create_graph=create_graph, retain_graph=retain_graph)


_ZERO_MESSAGES = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in "
            "strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in "
                  "strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed "
                   "in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                         "backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads: tuple, refs: tuple, strict: bool, create_graph: bool, stage: str) -> tuple:
    """Zeros where a gradient is None (strict mode refuses instead)."""
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_ZERO_MESSAGES[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is "
                               "not allowed in strict mode when create_graph=True.")
        res.append(g)
    return tuple(res)


def _prepare_v(v, fn_name: str, create_graph: bool, other: tuple, is_other_tuple: bool, none_message: str):
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, other, is_other_tuple)
    elif len(other) != 1 or other[0].nelement() != 1:
        raise RuntimeError(none_message)
    return v


def vjp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        v = _prepare_v(v, "vjp", create_graph, outputs, is_outputs_tuple,
                       "The vector v can only be None if the user-provided function returns a single Tensor with "
                       "a single element.")
        with set_grad_enabled(True if create_graph else is_grad_enabled()):
            grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
            result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_inputs_tuple)


def jvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), J v)``: one forward-mode pass (or, with ``strict`` or inside a dual level, the
    double-backward trick: two reverse passes)."""
    if not strict and forward_ad.state.level < 0:
        return _forward_jvp(func, inputs, v, create_graph)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, "jvp", create_graph, inputs, is_inputs_tuple,
                       "The vector v can only be None if the input to the user-provided function is a single "
                       "Tensor with a single element.")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        # J^T u for a dummy u (zeros that require grad): linear in u, so d(J^T u . v)/du = J v
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
        with set_grad_enabled(True if create_graph else is_grad_enabled()):
            grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
            result = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_outputs_tuple)


def _forward_jvp(func: Callable, inputs, v, create_graph: bool):
    """``jvp`` by forward mode: the function runs once on ``make_dual(input, v)``."""
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=create_graph)
        v = _prepare_v(v, "jvp", create_graph, inputs, is_inputs_tuple,
                       "The vector v can only be None if the input to the user-provided function is a single "
                       "Tensor with a single element.")
        if v is None:
            v = (inputs[0].new_ones(inputs[0].shape),)
        (is_outputs_tuple, outputs), (_, tangents) = _dual_pass(func, inputs, v, "jvp")
    outputs = _grad_postprocess(outputs, create_graph)
    tangents = _grad_postprocess(tangents, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(tangents, is_outputs_tuple)


def _dual_pass(func: Callable, inputs: tuple, tangents: tuple, api: str) -> tuple:
    """``((is_outputs_tuple, outputs), (is_outputs_tuple, output tangents))`` of ``func`` on dual inputs (zeros
    for an output without a tangent)."""
    with forward_ad.dual_level():
        duals = tuple(forward_ad.make_dual(x, t) for x, t in zip(inputs, tangents))
        is_outputs_tuple, outputs = _as_tuple(func(*duals), "outputs of the user-provided function", api)
        unpacked = [forward_ad.unpack_dual(o) for o in outputs]
        primals = tuple(p for p, _ in unpacked)
        result = tuple(zeros_like(p) if t is None else t for p, t in unpacked)
    return (is_outputs_tuple, primals), (is_outputs_tuple, result)


def _check_strategy(strategy: str, api: str, create_graph: bool) -> None:
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                         'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                         'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode" and create_graph:
        raise NotImplementedError(
            f"torch.autograd.functional.{api}: `create_graph=True` and `strategy=\"forward-mode\"` are not supported "
            "together (yet). Please either set `create_graph=False` or `strategy=\"reverse-mode\"`."
        )


def _jacobian_forward(func: Callable, inputs, strict: bool, vectorize: bool):
    """The Jacobian column by column: one forward-mode pass per input element (a one-hot tangent)."""
    if strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `strategy=\"forward-mode\"` are "
                           "not supported together (yet). Please either set `strict=False` or "
                           "`strategy=\"reverse-mode\"`.")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    inputs = tuple(inputs)
    columns = [[] for _ in inputs]  # per input: per element, the output tangents
    is_outputs_tuple, outputs = None, None
    for k, x in enumerate(inputs):
        for j in range(x.numel()):
            seeds = [zeros_like(y) for y in inputs]
            one_hot = zeros(x.numel(), dtype=x.dtype, device=x.device)
            one_hot[j] = 1
            seeds[k] = one_hot.view(x.shape)
            (is_outputs_tuple, outputs), (_, tangents) = _dual_pass(func, inputs, seeds, "jacobian")
            columns[k].append(tangents)
    if outputs is None:  # every input is empty: the function still runs once, for the outputs' shapes
        (is_outputs_tuple, outputs), _ = _dual_pass(func, inputs, tuple(zeros_like(y) for y in inputs), "jacobian")
    result = [  # lists, as PyTorch's forward-mode jacobian nests them
        [
            stack([c[i] for c in columns[k]], -1).reshape(out.shape + x.shape) if columns[k]
            else zeros(out.shape + x.shape, dtype=out.dtype, device=out.device)
            for k, x in enumerate(inputs)
        ]
        for i, out in enumerate(outputs)
    ]
    return _tuple_postprocess(result, (is_outputs_tuple, is_inputs_tuple))


def jacobian(func: Callable, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``, one reverse pass per output element.

    Shaped as PyTorch: ``out.shape + inp.shape`` per (output, input) pair, nested in tuples only where the
    outputs/inputs were tuples. ``vectorize=True`` is accepted and gives the same result (minitorch has no
    batched gradients; the rows are computed one at a time either way).
    """
    _check_strategy(strategy, "jacobian", create_graph)
    if strategy == "forward-mode":
        return _jacobian_forward(func, inputs, strict, vectorize)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")
        result = []
        for i, out in enumerate(outputs):
            rows: tuple[list, ...] = tuple([] for _ in inputs)
            flat = out.reshape(-1)
            for j in range(out.nelement()):
                vj = _autograd_grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
                for k, (row, g, inp) in enumerate(zip(rows, vj, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{k}. This is not allowed in strict mode.")
                        g = zeros_like(inp)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is independent of input "
                                           f"{i}. This is not allowed in strict mode when create_graph=True.")
                    row.append(g)
            result.append(tuple(
                stack(row, 0).view(out.size() + inp.size()) if row
                else zeros(out.size() + inp.size(), dtype=inp.dtype, device=inp.device)
                for row, inp in zip(rows, inputs)
            ))
        result = _grad_postprocess(tuple(result), create_graph)
    return _tuple_postprocess(result, (is_outputs_tuple, is_inputs_tuple))


def hessian(func: Callable, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar ``func``: the Jacobian of its Jacobian (reverse over reverse)."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":  # (as PyTorch: so _grad_preprocess keeps the dual inputs)
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_function_grad(func, inputs, v, create_graph, strict, fn_name):
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    v = _prepare_v(v, fn_name, create_graph, inputs, is_inputs_tuple,
                   "The vector v can only be None if the input to the user-provided function is a single Tensor "
                   "with a single element.")
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    return is_inputs_tuple, inputs, v, outputs, is_outputs_tuple, jac


def vhp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T H)`` for a scalar ``func``: the gradient of ``grad . v``."""
    with enable_grad():
        is_inputs_tuple, inputs, v, outputs, is_outputs_tuple, jac = _scalar_function_grad(
            func, inputs, v, create_graph, strict, "vhp")
        _check_requires_grad(jac, "jacobian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_inputs_tuple)


def hvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), H v)`` for a scalar ``func``, by the double-backward trick on the gradient."""
    with enable_grad():
        is_inputs_tuple, inputs, v, outputs, is_outputs_tuple, jac = _scalar_function_grad(
            func, inputs, v, create_graph, strict, "hvp")
        _check_requires_grad(jac, "jacobian", strict=strict)
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_inputs_tuple)
