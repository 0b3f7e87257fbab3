"""Convolution layers: Conv1d/2d/3d and ConvTranspose1d/2d/3d over ``nn.functional``'s kernels.

One base, ``_ConvNd``, holds the hyper-parameters (as tuples), the weight and bias, PyTorch's
initialisation (weight ``kaiming_uniform_(a=sqrt(5))``, bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with
fan_in = weight.shape[1] * prod(kernel_size)) and PyTorch's repr. Non-'zeros' ``padding_mode`` pads
explicitly with ``F.pad`` ('reflect', 'replicate', 'circular') and then convolves without padding.
"""

from __future__ import annotations

from ...autograd import grad_mode
from ...creation import empty
from ...tensor import Tensor
from .. import functional as F
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .linear import reset_fan_in_uniform_
from .module import Module

_PADDING_STRINGS = {"same", "valid"}
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _ntuple(value, n: int) -> tuple:
    """``value`` as an n-tuple: an int is repeated, a sequence kept (PyTorch's ``_single``/``_pair``/``_triple``)."""
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,) * n


def _reverse_repeat_tuple(values: tuple, n: int) -> tuple:
    """``(a, b)`` -> ``(b, b, a, a)`` for n=2: per-dim padding in the last-dim-first order ``F.pad`` takes."""
    return tuple(x for x in reversed(values) for _ in range(n))


class _ConvNd(Module):
    """Shared state of every convolution: channels, tuple hyper-parameters, weight and bias."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple, padding,
                 dilation: tuple, transposed: bool, output_padding: tuple, groups: int, bias: bool,
                 padding_mode: str, device=None, dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {_PADDING_STRINGS}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(padding, str):
            # 'same' splits the total padding d*(k-1) with the extra element on the right, as PyTorch does
            pads = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    pads[2 * i], pads[2 * i + 1] = total // 2, total - total // 2
            self._reversed_padding_repeated_twice = tuple(pads)
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(padding, 2)
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(empty(shape + tuple(kernel_size), **factory_kwargs))
        if bias:
            self.bias = Parameter(empty(out_channels, **factory_kwargs))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # for the transposed layers PyTorch's fan_in is weight.shape[1] * prod(kernel) too, kept for parity
        reset_fan_in_uniform_(self.weight, self.bias, zero_fan_bias=False)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.kernel_size):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    """Cross-correlation of dimension ``_dims`` via ``_function``; handles ``padding_mode``."""

    _dims = 0
    _function = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        n = self._dims
        super().__init__(
            in_channels, out_channels, _ntuple(kernel_size, n), _ntuple(stride, n),
            padding if isinstance(padding, str) else _ntuple(padding, n), _ntuple(dilation, n), False,
            _ntuple(0, n), groups, bias, padding_mode, device=device, dtype=dtype,
        )

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        conv = type(self)._function
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, _ntuple(0, self._dims), self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D cross-correlation: input (N, C_in, L) or (C_in, L); weight (C_out, C_in / groups, k)."""

    _dims = 1
    _function = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """2-D cross-correlation: input (N, C_in, H, W) or (C_in, H, W); weight (C_out, C_in / groups, kH, kW)."""

    _dims = 2
    _function = staticmethod(F.conv2d)


class Conv3d(_Conv):
    """3-D cross-correlation: input (N, C_in, D, H, W) or (C_in, D, H, W)."""

    _dims = 3
    _function = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    """Transposed convolution (the input-gradient of a convolution) of dimension ``_dims``; only 'zeros'
    padding, as in PyTorch. ``forward(input, output_size)`` picks the ``output_padding`` that gives
    ``output_size``."""

    _dims = 0
    _function = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        n = self._dims
        super().__init__(
            in_channels, out_channels, _ntuple(kernel_size, n), _ntuple(stride, n), _ntuple(padding, n),
            _ntuple(dilation, n), True, _ntuple(output_padding, n), groups, bias, padding_mode,
            device=device, dtype=dtype,
        )

    def _output_padding(self, input: Tensor, output_size) -> tuple:
        """``output_padding``, or the one that makes the result ``output_size`` (checked to be reachable)."""
        n = self._dims
        if output_size is None:
            return self.output_padding
        non_spatial = 2 if input.dim() == n + 2 else 1
        output_size = tuple(output_size)
        if len(output_size) == non_spatial + n:
            output_size = output_size[non_spatial:]
        if len(output_size) != n:
            raise ValueError(
                f"ConvTranspose{n}D: for {input.dim()}D input, output_size must have {n} or {non_spatial + n} "
                f"elements (got {len(output_size)})"
            )
        min_sizes = [
            (input.shape[d + non_spatial] - 1) * self.stride[d] - 2 * self.padding[d]
            + self.dilation[d] * (self.kernel_size[d] - 1) + 1
            for d in range(n)
        ]
        max_sizes = [low + self.stride[d] - 1 for d, low in enumerate(min_sizes)]
        for size, low, high in zip(output_size, min_sizes, max_sizes):
            if size < low or size > high:
                raise ValueError(
                    f"requested an output size of {list(output_size)}, but valid sizes range from {min_sizes} to "
                    f"{max_sizes} (for an input of {list(input.shape[non_spatial:])})"
                )
        return tuple(size - low for size, low in zip(output_size, min_sizes))

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        output_padding = self._output_padding(input, output_size)
        return type(self)._function(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                    self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution: weight (C_in, C_out / groups, k)."""

    _dims = 1
    _function = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution: weight (C_in, C_out / groups, kH, kW)."""

    _dims = 2
    _function = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution: weight (C_in, C_out / groups, kD, kH, kW)."""

    _dims = 3
    _function = staticmethod(F.conv_transpose3d)


class _LazyConvMixin(LazyModuleMixin):
    """``in_channels`` from the first input's channel dim (dim 1, or 0 when unbatched); ``_dims`` spatial dims."""

    def _make_lazy(self, out_channels: int, bias: bool, device, dtype) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _get_in_channels(self, input: Tensor) -> int:
        unbatched, batched = self._dims + 1, self._dims + 2
        if input.dim() not in (unbatched, batched):
            raise RuntimeError(
                f"Expected {unbatched}D (unbatched) or {batched}D (batched) input to {type(self).__name__}, but got "
                f"input of size: {input.shape}"
            )
        return input.shape[1] if input.dim() == batched else input.shape[0]

    def initialize_parameters(self, input: Tensor, *args, **kwargs) -> None:
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups)
        else:
            shape = (self.out_channels, self.in_channels // self.groups)
        with grad_mode.no_grad():
            self.weight.materialize(shape + tuple(self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


class _LazyConv(_LazyConvMixin):
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device=device,
                         dtype=dtype)
        self._make_lazy(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvMixin):
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0, groups: int = 1,
                 bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                         device=device, dtype=dtype)
        self._make_lazy(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """A Conv1d whose ``in_channels`` comes from the first input."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """A Conv2d whose ``in_channels`` comes from the first input."""

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """A Conv3d whose ``in_channels`` comes from the first input."""

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """A ConvTranspose1d whose ``in_channels`` comes from the first input."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """A ConvTranspose2d whose ``in_channels`` comes from the first input."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """A ConvTranspose3d whose ``in_channels`` comes from the first input."""

    cls_to_become = ConvTranspose3d


__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d",
           "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]
