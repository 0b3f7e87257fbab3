"""Linear maps: ``linear`` (x @ W^T + b, one GEMM over all leading dims) and ``bilinear``."""

from __future__ import annotations

import math

from ..._autocast_state import autocast_op
from ...autograd import grad_mode
from ...ops.op import Op, multilinear_jvp
from ...ops.promotion import conj_if_complex
from ...ops.views import view_strides
from ...tensor import Tensor
from .activation import scalar_type_name


class Linear(Op):
    """``x @ W^T + b`` with ``x`` of shape (..., in): the leading dims are flattened into one GEMM
    (a view when ``x``'s layout allows), and ``W^T`` is a transposed view, never a copy.

    Both gradients are linear maps again (``g @ W`` and ``g^T @ x``), so backward calls ``linear``
    and double backward comes for free; the bias gradient is ``g``, summed over broadcast dims by
    the engine."""

    save_inputs = (0, 1)
    saved_when = {0: (1,), 1: (0,)}  # as PyTorch's addmm/mm: each only for the other's gradient

    def jvp(self, inputs, outputs, tangents):  # bilinear in (input, weight), plus the bias tangent
        return multilinear_jvp(self, inputs, outputs, tangents, bias=2)

    def forward(self, x, weight, bias=None):
        self.has_bias = bias is not None
        rows = math.prod(x.shape[:-1])
        x2 = x if x.ndim == 2 else x.reshape(rows, x.shape[-1])
        out = self.xp.matmul(x2, weight.T)
        if bias is not None:
            out += bias
        # numpy's bfloat16 matmul gives float32: the bias is added before the one rounding, as in PyTorch
        return out.reshape(x.shape[:-1] + (weight.shape[0],)).astype(x.dtype, copy=False)

    def backward(self, grad):
        x, weight = map(conj_if_complex, self.saved_tensors)  # complex: grad times the conjugated other factor
        needs = self._input_meta
        grad_x = linear(grad, weight.t()) if needs[0] is not None else None
        grad_weight = None
        if needs[1] is not None:
            rows = math.prod(x.shape[:-1])  # not -1: ambiguous when in_features or out_features is 0
            g2 = grad if grad.dim() == 2 else grad.reshape(rows, grad.shape[-1])
            x2 = x if x.dim() == 2 else x.reshape(rows, x.shape[-1])
            grad_weight = linear(g2.t(), x2.t())
        return grad_x, grad_weight, grad if self.has_bias else None


@autocast_op("lower")
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``: input (*, in_features), weight (out_features, in_features),
    bias (out_features); a 1-D weight gives a result without the feature dim."""
    if input.dim() == 0 or weight.dim() not in (1, 2):
        raise RuntimeError(
            f"linear(): expected input of at least 1 dim and a 1-D or 2-D weight, but got input of shape "
            f"{list(input.shape)} and weight of shape {list(weight.shape)}"
        )
    if input.dtype is not weight.dtype:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got {scalar_type_name(input.dtype)} and "
            f"{scalar_type_name(weight.dtype)}"
        )
    vector_weight = weight.dim() == 1
    if vector_weight:
        weight = weight.unsqueeze(0)
    if input.shape[-1] != weight.shape[1]:
        rows = math.prod(input.shape[:-1])
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} and "
            f"{weight.shape[1]}x{weight.shape[0]})"
        )
    if bias is not None and bias.numel() not in (1, weight.shape[0]):
        raise RuntimeError(
            f"linear(): bias of shape {list(bias.shape)} does not match out_features={weight.shape[0]} "
            f"of weight {list(weight.shape)}"
        )
    if input.dim() > 2 and weight.requires_grad and grad_mode.state.enabled and view_strides(
            input._array.shape, input.stride(), (math.prod(input.shape[:-1]), input.shape[-1])) is None:
        # PyTorch folds such an input into a matrix for its mm (matmul's fold): a copy, which is what it saves for
        # the weight's gradient; writing into the input before backward is then allowed
        input = input.clone()
    if vector_weight:
        out = Linear.apply(input, weight, None).squeeze(-1)
        return out if bias is None else out + bias
    if bias is not None and input.dim() != 2 and bias.dim() == 1 and input.is_contiguous():
        # PyTorch's _flatten_nd_linear: one addmm on the input flattened to a matrix, and a view of its result
        # back to the input's leading dims (so the output of a 1-D or 3-D linear is a view, as writes into it
        # show: fuzzer seed 228923)
        rows = math.prod(input.shape[:-1])
        out = Linear.apply(input.reshape(rows, input.shape[-1]), weight, bias)
        return out.view(*input.shape[:-1], weight.shape[0])
    return Linear.apply(input, weight, bias)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y[..., k] = input1 @ weight[k] @ input2 + bias[k]``; weight (out, in1, in2).

    Computed as one ``linear`` of ``input2`` with weight viewed (out*in1, in2), then a product with
    ``input1`` summed over in1: two kernels, no per-output loop."""
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(
            f"bilinear(): input batch dimensions do not match: got {list(input1.shape[:-1])} and "
            f"{list(input2.shape[:-1])}"
        )
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional, but got a {weight.dim()}D weight")
    out_features, in1, in2 = weight.shape
    if input1.shape[-1] != in1:
        raise RuntimeError(
            f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but expected {in1}"
        )
    if input2.shape[-1] != in2:
        raise RuntimeError(
            f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but expected {in2}"
        )
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_features):
        raise RuntimeError(
            f"bilinear(): bias size does not match weight size: got {bias.shape[-1] if bias.dim() else 1} but "
            f"expected {out_features}"
        )
    projected = linear(input2, weight.reshape(out_features * in1, in2))
    projected = projected.reshape(input2.shape[:-1] + (out_features, in1))
    out = (projected * input1.unsqueeze(-2)).sum(-1)
    return out if bias is None else out + bias


__all__ = ["linear", "bilinear"]
