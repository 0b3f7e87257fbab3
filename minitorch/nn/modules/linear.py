"""Affine layers: Identity, Linear (``x @ W^T + b``) and Bilinear (``x1^T W x2 + b``).

Initialisation is PyTorch's, so a model seeded the same way starts from the same distribution:
Linear's weight is ``kaiming_uniform_(a=sqrt(5))`` (that is, U(-1/sqrt(fan_in), 1/sqrt(fan_in))) and
its bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)); Bilinear's weight and bias are U(-1/sqrt(in1), 1/sqrt(in1)).
"""

from __future__ import annotations

import math

from ...autograd import grad_mode
from ...creation import empty
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module


def reset_fan_in_uniform_(weight: Tensor, bias: Tensor | None, zero_fan_bias: bool = True) -> None:
    """PyTorch's default init of Linear and the conv layers: weight ``kaiming_uniform_(a=sqrt(5))``, that is
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for a weight (out, in, *kernel), and the bias from the same range.
    With fan_in 0, Linear draws its bias from U(0, 0); the conv layers (``zero_fan_bias=False``) leave it as is."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
    if bias is not None and (fan_in > 0 or zero_fan_bias):
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        init.uniform_(bias, -bound, bound)


class Identity(Module):
    """Returns its input unchanged; any constructor arguments are accepted and ignored (as in PyTorch)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """``y = x @ weight.T + bias``: input (*, in_features), output (*, out_features).

    weight (out_features, in_features) and bias (out_features,) are drawn from
    U(-1/sqrt(in_features), 1/sqrt(in_features)), PyTorch's default."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in_features), **factory_kwargs))
        if bias:
            self.bias = Parameter(empty(out_features, **factory_kwargs))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_fan_in_uniform_(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """``y[..., k] = x1 @ weight[k] @ x2 + bias[k]``: weight (out, in1, in2), bias (out,), both
    U(-1/sqrt(in1_features), 1/sqrt(in1_features))."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in1_features, in2_features), **factory_kwargs))
        if bias:
            self.bias = Parameter(empty(out_features, **factory_kwargs))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose ``in_features`` is ``input.shape[-1]`` of the first input; then it becomes a Linear."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__(0, 0, False)  # in/out 0 and no bias: nothing is drawn before the shapes are known
        self.weight = UninitializedParameter(**factory_kwargs)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(**factory_kwargs)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            with grad_mode.no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


__all__ = ["Identity", "Linear", "Bilinear", "LazyLinear"]
