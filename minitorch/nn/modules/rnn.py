"""Recurrent layers (RNN with tanh/relu, LSTM with an optional projection, GRU) and their one-step cells.

A layer projects its whole input sequence with one GEMM (``x @ W_ih^T + b_ih`` for every step at
once); the Python loop over time then does one GEMM for the recurrent term of all gates together
(``h @ W_hh^T + b_hh``), a chunk into gates and a few pointwise ops. The step functions below are
shared by the layers and the cells, so both compute exactly PyTorch's equations (gate order
LSTM ``i, f, g, o``; GRU ``r, z, n`` with ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``), and every
op is differentiable, so gradients and double backward come from the ops' own rules.
"""

from __future__ import annotations

import math
import numbers
import warnings

from ...creation import empty, zeros, zeros_like
from ...ops.op import Op
from ...ops.shape import cat, stack
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..functional.linear import linear
from ..parameter import Parameter
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


class _TimeSteps(Op):
    """``input.unbind(0)`` as a single node: each step is a copy, and backward stacks the steps' gradients
    in one op. (T select views would each scatter their gradient into a zero tensor the size of the whole
    sequence: O(T^2) work for a T-step loop.)"""

    def forward(self, x):
        return tuple(x[t].copy() for t in range(x.shape[0]))

    def backward(self, *grads):
        like = next(g for g in grads if g is not None)
        return stack([zeros_like(like) if g is None else g for g in grads])


# one time step: ``x_gates`` is the input's projection ``x @ W_ih^T + b_ih`` (all gates) ------------


def _rnn_tanh_step(x_gates: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None, w_hr=None) -> Tensor:
    return (x_gates + linear(h, w_hh, b_hh)).tanh()


def _rnn_relu_step(x_gates: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None, w_hr=None) -> Tensor:
    return (x_gates + linear(h, w_hh, b_hh)).relu()


def _lstm_step(x_gates: Tensor, state: tuple, w_hh: Tensor, b_hh: Tensor | None, w_hr: Tensor | None = None) -> tuple:
    """``c' = f * c + i * g``, ``h' = o * tanh(c')`` (then ``h' @ W_hr^T`` with a projection)."""
    h, c = state
    i, f, g, o = (x_gates + linear(h, w_hh, b_hh)).chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    return (h if w_hr is None else linear(h, w_hr)), c


def _gru_step(x_gates: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None, w_hr=None) -> Tensor:
    """``h' = (1 - z) * n + z * h``, written ``n + z * (h - n)``; ``r`` gates the hidden term of ``n``
    including its bias, which is why the input and hidden projections stay separate here."""
    x_r, x_z, x_n = x_gates.chunk(3, -1)
    h_r, h_z, h_n = linear(h, w_hh, b_hh).chunk(3, -1)
    r = (x_r + h_r).sigmoid()
    z = (x_z + h_z).sigmoid()
    n = (x_n + r * h_n).tanh()
    return n + z * (h - n)


_STEPS = {"RNN_TANH": _rnn_tanh_step, "RNN_RELU": _rnn_relu_step, "LSTM": _lstm_step, "GRU": _gru_step}


# multi-layer recurrent networks ------------------------------------------------------------------


class RNNBase(Module):
    """The parameters, checks and layer/direction loop shared by RNN, LSTM and GRU.

    Parameters are named as PyTorch names them (``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}``,
    ``bias_hh_l{k}``, ``weight_hr_l{k}`` with ``proj_size``; ``_reverse`` for the backward direction), so
    state dicts carry over. All are initialised from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None) -> None:
        super().__init__()
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                f"num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                stacklevel=2,
            )
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        factory = {"device": device, "dtype": dtype}
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
            for direction in range(num_directions):
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = {"weight_ih": (gate_size, layer_input_size), "weight_hh": (gate_size, real_hidden_size)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                for name, shape in shapes.items():
                    setattr(self, name + suffix, Parameter(empty(shape, **factory)))
                self._all_weights.append([name + suffix for name in shapes])
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def _flat_weights_names(self) -> list[str]:
        return [name for names in self._all_weights for name in names]

    @property
    def _flat_weights(self) -> list[Tensor]:
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op: minitorch has no cuDNN weight buffer to compact."""

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # forward helpers ---------------------------------------------------------------------------

    def _check_input(self, input: Tensor) -> None:
        weight = getattr(self, self._all_weights[0][0])
        if input.dtype is not weight.dtype:
            raise ValueError(f"input must have the type {weight.dtype}, got type {input.dtype}")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got {input.shape[-1]}"
            )
        if input.shape[0] == 0:
            raise RuntimeError(f"{type(self).__name__}: expected a sequence length larger than 0, got input of "
                               f"shape {list(input.shape)}")

    def _hidden_shape(self, batch: int, size: int) -> tuple:
        return (self.num_layers * (2 if self.bidirectional else 1), batch, size)

    @staticmethod
    def _check_hidden_size(hx: Tensor, expected: tuple, msg: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hx.shape) != expected:
            raise RuntimeError(msg.format(expected, list(hx.shape)))

    def _layer_weights(self, index: int) -> tuple:
        """``(w_ih, w_hh, b_ih, b_hh, w_hr)`` of layer-direction ``index`` (absent ones are None)."""
        params = dict(zip((n.rsplit("_l", 1)[0] for n in self._all_weights[index]), self.all_weights[index]))
        return tuple(params.get(k) for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))

    def _run(self, input: Tensor, state: list) -> tuple[Tensor, list]:
        """Run every layer and direction over ``input`` (T, N, I); ``state`` holds one initial state per
        layer-direction (a tensor, or an (h, c) pair for LSTM); returns the output and the final states."""
        step = _STEPS[self.mode]
        num_directions = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(num_directions):
                index = layer * num_directions + direction
                w_ih, w_hh, b_ih, b_hh, w_hr = self._layer_weights(index)
                steps = _TimeSteps.apply(linear(input, w_ih, b_ih))  # every step's input projection: one GEMM
                order = range(len(steps) - 1, -1, -1) if direction == 1 else range(len(steps))
                h = state[index]
                out = [None] * len(steps)
                for t in order:
                    h = step(steps[t], h, w_hh, b_hh, w_hr)
                    out[t] = h[0] if self.mode == "LSTM" else h
                outputs.append(stack(out))
                finals.append(h)
            input = outputs[0] if num_directions == 1 else cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                input = F.dropout(input, self.dropout, True)
        return input, finals

    def _prepare(self, input: Tensor) -> tuple[Tensor, bool]:
        """Check the input's rank and bring it to (T, N, I); says whether it was batched."""
        if input.dim() not in (2, 3):
            noun = "tensor" if self.mode.startswith("RNN") else "input"
            raise ValueError(
                f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.dim()}D {noun} instead"
            )
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        self._check_input(input)
        return input, batched

    def _finish(self, output: Tensor, batched: bool) -> Tensor:
        if not batched:
            return output.squeeze(1)
        return output.transpose(0, 1) if self.batch_first else output

    def _single_state_forward(self, input: Tensor, hx: Tensor | None) -> tuple[Tensor, Tensor]:
        """Forward of RNN and GRU, whose state is one tensor h of shape (layers * directions, N, H)."""
        input, batched = self._prepare(input)
        if hx is not None:
            if hx.dim() != (3 if batched else 2):
                kind = "batched 3-D" if batched else "unbatched 2-D"
                raise RuntimeError(
                    f"For {kind} input, hx should also be {3 if batched else 2}-D but got {hx.dim()}-D tensor"
                )
            if not batched:
                hx = hx.unsqueeze(1)
        expected = self._hidden_shape(input.shape[1], self.hidden_size)
        if hx is None:
            hx = zeros(expected, dtype=input.dtype, device=input.device)
        self._check_hidden_size(hx, expected)
        output, finals = self._run(input, list(hx.unbind(0)))
        h_n = stack(finals)
        return self._finish(output, batched), (h_n if batched else h_n.squeeze(1))


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or ReLU), stacked
    ``num_layers`` deep, optionally bidirectional. Returns ``(output, h_n)``."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        return self._single_state_forward(input, hx)


class GRU(RNNBase):
    """Gated recurrent unit (Cho et al., 2014) with PyTorch's equations; returns ``(output, h_n)``."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        return self._single_state_forward(input, hx)


class LSTM(RNNBase):
    """Long short-term memory; with ``proj_size > 0`` the hidden state is projected to ``proj_size``
    (Sak et al., 2014) while the cell state keeps ``hidden_size``. Returns ``(output, (h_n, c_n))``."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None):
        input, batched = self._prepare(input)
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        h_shape = self._hidden_shape(input.shape[1], real_hidden)
        c_shape = self._hidden_shape(input.shape[1], self.hidden_size)
        if hx is None:
            hx = (zeros(h_shape, dtype=input.dtype, device=input.device),
                  zeros(c_shape, dtype=input.dtype, device=input.device))
        else:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise RuntimeError("LSTM: expected hx to be a tuple (h_0, c_0)")
            rank = 3 if batched else 2
            if hx[0].dim() != rank or hx[1].dim() != rank:
                kind = "batched 3-D" if batched else "unbatched 2-D"
                raise RuntimeError(
                    f"For {kind} input, hx and cx should also be {rank}-D but got ({hx[0].dim()}-D, "
                    f"{hx[1].dim()}-D) tensors"
                )
            if not batched:
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self._check_hidden_size(hx[0], h_shape, "Expected hidden[0] size {}, got {}")
        self._check_hidden_size(hx[1], c_shape, "Expected hidden[1] size {}, got {}")
        output, finals = self._run(input, list(zip(hx[0].unbind(0), hx[1].unbind(0))))
        h_n = stack([h for h, _ in finals])
        c_n = stack([c for _, c in finals])
        if not batched:
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return self._finish(output, batched), (h_n, c_n)


# cells: one time step ----------------------------------------------------------------------------


class RNNCellBase(Module):
    """Parameters and checks shared by the cells: ``weight_ih`` (chunks * H, I), ``weight_hh``
    (chunks * H, H), ``bias_ih`` and ``bias_hh`` (chunks * H), all from U(-1/sqrt(H), 1/sqrt(H))."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        factory = {"device": device, "dtype": dtype}
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), **factory))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), **factory))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, **factory))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, **factory))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(self, input: Tensor, hx: tuple) -> tuple[Tensor, tuple, bool]:
        """Check ranks and sizes, add the batch dim to unbatched input; ``hx`` is a tuple of states
        (Nones become zeros)."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for i, h in enumerate(hx):
            if h is not None and h.dim() not in (1, 2):
                which = "hidden" if len(hx) == 1 else f"hx[{i}]"
                raise ValueError(f"{name}: Expected {which} to be 1D or 2D, got {h.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
            hx = tuple(None if h is None else h.unsqueeze(0) for h in hx)
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]}, expected {self.input_size}")
        if input.dtype is not self.weight_ih.dtype:
            raise RuntimeError(
                f"{name}: expected input of dtype {self.weight_ih.dtype} like the weights, got {input.dtype}"
            )
        states = []
        for i, h in enumerate(hx):
            suffix = "" if len(hx) == 1 else f"[{i}]"
            if h is None:
                h = zeros(input.shape[0], self.hidden_size, dtype=input.dtype, device=input.device)
            elif h.shape[0] != input.shape[0]:
                raise RuntimeError(
                    f"Input batch size {input.shape[0]} doesn't match hidden{suffix} batch size {h.shape[0]}"
                )
            elif h.shape[1] != self.hidden_size:
                raise RuntimeError(
                    f"hidden{suffix} has inconsistent hidden_size: got {h.shape[1]}, expected {self.hidden_size}"
                )
            states.append(h)
        return input, tuple(states), batched

    def _gates(self, input: Tensor) -> Tensor:
        return linear(input, self.weight_ih, self.bias_ih)


class RNNCell(RNNCellBase):
    """One Elman step: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or ReLU)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        input, (h,), batched = self._prepare(input, (hx,))
        step = _rnn_tanh_step if self.nonlinearity == "tanh" else _rnn_relu_step
        h = step(self._gates(input), h, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step; ``hx = (h, c)`` and the result is ``(h', c')``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        input, state, batched = self._prepare(input, (None, None) if hx is None else tuple(hx))
        h, c = _lstm_step(self._gates(input), state, self.weight_hh, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step with PyTorch's equations (see ``GRU``)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, (h,), batched = self._prepare(input, (hx,))
        h = _gru_step(self._gates(input), h, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)
