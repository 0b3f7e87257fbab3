"""Padding variable-length sequences into one batch tensor (and back), as ``torch.nn.utils.rnn`` does.

Each sequence is padded along its first dim with ``F.pad`` and the results are stacked, so gradients flow
back to every sequence. (PackedSequence and pack_padded_sequence are not provided: minitorch's RNNs take
padded batches.)
"""

from __future__ import annotations

from collections.abc import Sequence

from ...ops.shape import stack
from ...tensor import Tensor
from ..functional.padding import pad

__all__ = ["pad_sequence", "unpad_sequence"]


def pad_sequence(sequences: Tensor | Sequence[Tensor], batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack sequences (L_i, *) into (L_max, B, *) (``batch_first``: (B, L_max, *)), filling with
    ``padding_value`` on the ``padding_side``; the result has the first sequence's dtype."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    sequences = list(sequences.unbind(0)) if isinstance(sequences, Tensor) else list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    first = sequences[0]
    if first.dim() == 0:
        raise RuntimeError("pad_sequence(): every sequence must have at least one dimension (got a 0-dim tensor)")
    trailing = tuple(first.shape[1:])
    for seq in sequences[1:]:
        for d, (a, b) in enumerate(zip(trailing, tuple(seq.shape[1:])), start=1):
            if a != b:
                raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                                   f"non-singleton dimension {d}")
    longest = max(seq.shape[0] for seq in sequences)
    padded = []
    for seq in sequences:
        if seq.dtype != first.dtype:
            seq = seq.to(first.dtype)
        extra = longest - seq.shape[0]
        amounts = [0, 0] * (seq.dim() - 1) + ([extra, 0] if padding_side == "left" else [0, extra])
        padded.append(pad(seq, amounts, value=padding_value) if extra else seq)
    return stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False) -> list[Tensor]:
    """The inverse of ``pad_sequence`` (right padding): the first ``lengths[i]`` steps of each batch entry."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[: int(length)] for seq, length in zip(padded_sequences, lengths)]
