"""``nn.utils.rnn``: batching variable-length sequences, padded (``pad_sequence``) or packed
(``PackedSequence``: the time steps of all sequences one after another, longest first).

Every function is written in differentiable tensor ops (slices, ``cat``, slice assignment into a tensor of
the padding value), so gradients flow back into each sequence. minitorch's recurrent modules (``nn.RNN``,
``nn.LSTM``, ``nn.GRU``) do not take a ``PackedSequence`` yet: pass them the padded batch.
"""

from __future__ import annotations

from collections import namedtuple

from ... import _dtype
from ...creation import tensor
from ...ops.shape import cat
from ...ops.sorting import argsort
from ...tensor import Tensor


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack sequences of shapes ``(L_i, *)`` into ``(L_max, B, *)`` (``(B, L_max, *)`` with ``batch_first``),
    filling the shorter ones with ``padding_value`` on ``padding_side``; the result has the first sequence's
    dtype and device."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    sequences = list(sequences) if not isinstance(sequences, Tensor) else list(sequences.unbind(0))
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    for i, s in enumerate(sequences):
        if not isinstance(s, Tensor):
            raise TypeError(f"pad_sequence(): expected a sequence of Tensors, but element {i} is {type(s).__name__}")
        if s.dim() == 0:
            raise RuntimeError("pad_sequence(): every sequence must have at least one dimension (got a 0-d tensor)")
    longest = max(s.shape[0] for s in sequences)
    trailing = tuple(sequences[0].shape[1:])
    shape = (len(sequences), longest) if batch_first else (longest, len(sequences))
    out = sequences[0].new_full(shape + trailing, padding_value)
    for i, s in enumerate(sequences):
        length = s.shape[0]
        rows = slice(0, length) if padding_side == "right" else slice(longest - length, longest)
        if batch_first:
            out[i, rows] = s
        else:
            out[rows, i] = s
    return out


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False) -> list:
    """The inverse of ``pad_sequence`` (right padding): the first ``lengths[i]`` steps of each sequence."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[: int(length)] for seq, length in zip(padded_sequences, lengths)]


class PackedSequence(namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """Sequences packed time step by time step: ``data`` holds step 0 of every sequence, then step 1 of those
    still running, ...; ``batch_sizes[t]`` is how many run at step ``t`` (an int64 CPU tensor). With
    ``sorted_indices``, the sequences were reordered longest first (``unsorted_indices`` undoes it)."""

    __slots__ = ()

    def __new__(cls, data: Tensor, batch_sizes: Tensor | None = None, sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = _invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> PackedSequence:
        """``data`` moved/cast as ``Tensor.to``; the indices follow its device, ``batch_sizes`` stays on the CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        indices = [None if t is None else t.to(data.device) for t in (self.sorted_indices, self.unsorted_indices)]
        return type(self)(data, self.batch_sizes, *indices)

    def cuda(self, *args, **kwargs) -> PackedSequence:
        return self.to("cuda" if not args else args[0], **kwargs)

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    def double(self) -> PackedSequence:
        return self.to(dtype=_dtype.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=_dtype.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=_dtype.float16)

    def long(self) -> PackedSequence:
        return self.to(dtype=_dtype.int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=_dtype.int32)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return False


def _invert_permutation(permutation: Tensor) -> Tensor:
    return argsort(permutation)


def _lengths_list(lengths) -> list:
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1 or lengths.dtype is not _dtype.int64 or lengths.device.type != "cpu":
            raise RuntimeError(
                "'lengths' argument should be a 1D CPU int64 tensor, but got "
                f"{lengths.dim()}D {lengths.device.type} {_dtype.scalar_type_name(lengths.dtype)} tensor"
            )
        return lengths.tolist()
    return [int(n) for n in lengths]


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (``T x B x *``, or ``B x T x *`` with ``batch_first``) of sequences of ``lengths``.
    With ``enforce_sorted`` the lengths must be decreasing; otherwise the sequences are sorted first."""
    lengths = _lengths_list(lengths)
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
                "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement "
                "if you do not need ONNX exportability."
            )
        sorted_indices = None
    else:
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])  # stable, as PyTorch's sort here
        sorted_indices = tensor(order, dtype=_dtype.int64, device=input.device)
        lengths = [lengths[i] for i in order]
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if lengths and lengths[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0"
        )
    if batch_first:
        input = input.transpose(0, 1)
    batch_sizes = [sum(1 for n in lengths if n > t) for t in range(lengths[0] if lengths else 0)]
    data = cat([input[t, :size] for t, size in enumerate(batch_sizes)]) if batch_sizes else input[:0, 0]
    return PackedSequence(data, tensor(batch_sizes, dtype=_dtype.int64), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple:
    """The inverse of ``pack_padded_sequence``: ``(padded batch, lengths)``, in the original order of the
    sequences, padded with ``padding_value`` to the longest (or to ``total_length``)."""
    data, batch_sizes = sequence.data, sequence.batch_sizes.tolist()
    longest = len(batch_sizes)
    if total_length is not None:
        if total_length < longest:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in input, but got "
                f"total_length={total_length} and max sequence length being {longest}"
            )
        longest = total_length
    batch = batch_sizes[0] if batch_sizes else 0
    out = data.new_full((longest, batch) + tuple(data.shape[1:]), padding_value)
    start = 0
    for t, size in enumerate(batch_sizes):
        out[t, :size] = data[start : start + size]
        start += size
    lengths = tensor([sum(1 for size in batch_sizes if size > b) for b in range(batch)], dtype=_dtype.int64)
    if sequence.unsorted_indices is not None:
        out = out.index_select(1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.cpu()]
    return (out.transpose(0, 1) if batch_first else out), lengths


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences (``L_i x *``) directly."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The inverse of ``pack_sequence``: the list of sequences, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


__all__ = ["PackedSequence", "pack_padded_sequence", "pack_sequence", "pad_packed_sequence", "pad_sequence",
           "unpack_sequence", "unpad_sequence"]
