"""``nn.utils.rnn``: batching variable-length sequences (``pad_sequence``, ``unpad_sequence``).

The padded batch is written slice by slice into a tensor of the padding value, so gradients flow back into
each sequence through the slice assignments.
"""

from __future__ import annotations

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


__all__ = ["pad_sequence", "unpad_sequence"]
