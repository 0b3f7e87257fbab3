"""F.ctc_loss: the Connectionist Temporal Classification loss (Graves et al. 2006).

The loss of one sequence is ``-log`` of the total probability of every alignment of its targets (with
blanks between and around them, repeats collapsed) to the input frames: the forward (alpha) recursion in
log space, vectorized over the batch and over the extended target positions, one step per frame. The
gradient comes from the backward (beta) recursion with PyTorch's formula
``exp(lp) - exp(log(sum_{s: l'_s = c} alpha_t(s) beta_t(s)) + nll - lp)``, which, as PyTorch's, assumes
``log_probs`` are log-softmax outputs (the gradient is then exact with respect to the logits). It is
computed with the forward pass and is not differentiable again, as in PyTorch.
"""

from __future__ import annotations

import contextlib

from ... import _dtype
from ...creation import tensor
from ...ops.op import Op
from ...tensor import Tensor


def _logsumexp(xp, *terms):
    """Elementwise log(sum(exp(terms))), -inf (not nan) where every term is -inf."""
    top = terms[0]
    for term in terms[1:]:
        top = xp.maximum(top, term)
    finite = xp.where(xp.isfinite(top), top, 0)
    total = sum(xp.exp(term - finite) for term in terms)
    return xp.where(total > 0, xp.log(xp.where(total > 0, total, 1)), -xp.inf) + finite


class CtcLoss(Op):
    """Per-sequence negative log-likelihoods (N,) of ``targets`` under ``log_probs`` (T, N, C)."""

    def forward(self, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
        xp = self.xp
        T, N, C = log_probs.shape
        longest = max(target_lengths) if target_lengths else 0
        L = 2 * longest + 1
        index_dtype = self.backend.array_dtype(_dtype.int64)
        extended = xp.full((N, L), blank, dtype=index_dtype)
        for n, labels in enumerate(targets):
            extended[n, 1 : 2 * len(labels) : 2] = xp.asarray(labels, dtype=index_dtype)
        skip = xp.zeros((N, L), dtype=bool)
        skip[:, 2:] = (extended[:, 2:] != blank) & (extended[:, 2:] != extended[:, :-2])
        lp = xp.take_along_axis(log_probs, xp.broadcast_to(extended[None], (T, N, L)), axis=2)  # (T, N, L)
        neg_inf = xp.full((N, 1), -xp.inf, dtype=log_probs.dtype)
        in_len = xp.asarray(input_lengths, dtype=index_dtype)
        tg_len = xp.asarray(target_lengths, dtype=index_dtype)
        rows = xp.arange(N)

        alpha = xp.full((T, N, L), -xp.inf, dtype=log_probs.dtype)
        alpha[0, :, 0] = lp[0, :, 0]
        if L > 1:
            alpha[0, :, 1] = xp.where(tg_len > 0, lp[0, :, 1], -xp.inf)
        for t in range(1, T):
            prev = alpha[t - 1]
            one_back = xp.concatenate([neg_inf, prev[:, :-1]], axis=1)
            two_back = xp.where(skip, xp.concatenate([neg_inf, neg_inf, prev[:, :-2]], axis=1)[:, :L], -xp.inf)
            alpha[t] = _logsumexp(xp, prev, one_back, two_back) + lp[t]
        last = alpha[xp.maximum(in_len - 1, 0), rows]  # (N, L)
        end = 2 * tg_len
        nll = -_logsumexp(xp, last[rows, end], xp.where(tg_len > 0, last[rows, xp.maximum(end - 1, 0)], -xp.inf))

        beta = xp.full((T, N, L), -xp.inf, dtype=log_probs.dtype)
        positions = xp.arange(L)[None, :]
        start = xp.where((positions == end[:, None]) | ((positions == end[:, None] - 1) & (tg_len[:, None] > 0)),
                         0.0, -xp.inf)
        skip_ahead = xp.concatenate([skip[:, 2:], xp.zeros((N, 2), dtype=bool)], axis=1)[:, :L]
        for t in range(T - 1, -1, -1):
            if t < T - 1:
                nxt = beta[t + 1]
                one_ahead = xp.concatenate([nxt[:, 1:], neg_inf], axis=1)
                two_ahead = xp.where(skip_ahead, xp.concatenate([nxt[:, 2:], neg_inf, neg_inf], axis=1)[:, :L],
                                     -xp.inf)
                step = _logsumexp(xp, nxt, one_ahead, two_ahead) + lp[t]
            else:
                step = xp.full((N, L), -xp.inf, dtype=log_probs.dtype)
            at_end = (in_len - 1 == t)[:, None]
            beta[t] = xp.where(at_end, start + lp[t], xp.where((t < in_len - 1)[:, None], step, -xp.inf))

        # gradient with respect to log_probs, per PyTorch's ctc_loss_backward
        both = alpha + beta
        top = both.max(axis=2, keepdims=True)
        top = xp.where(xp.isfinite(top), top, 0)
        occupancy = xp.zeros((T, N, C), dtype=log_probs.dtype)
        weights = xp.exp(both - top)
        for n in range(N):
            self.backend.index_add(xp.moveaxis(occupancy[:, n], 1, 0), extended[n], xp.moveaxis(weights[:, n], 1, 0))
        with_log = xp.where(occupancy > 0, xp.log(xp.where(occupancy > 0, occupancy, 1)), -xp.inf) + top
        errstate = getattr(xp, "errstate", None)  # an impossible alignment (nll = inf) gives nan, as PyTorch's
        with errstate(invalid="ignore") if errstate is not None else contextlib.nullcontext():
            grad = xp.exp(log_probs) - xp.exp(with_log + nll[None, :, None] - log_probs)
        frames = xp.arange(T)[:, None, None] < in_len[None, :, None]
        infinite = ~xp.isfinite(nll)
        if zero_infinity:
            grad = xp.where(infinite[None, :, None], 0, grad)
            nll = xp.where(infinite, 0, nll)
        self.grad = xp.where(frames, grad, 0).astype(log_probs.dtype, copy=False)
        return nll.astype(log_probs.dtype, copy=False)

    def backward(self, grad):
        return self.constant(self.grad) * grad.reshape(1, -1, 1), None, None, None, None, None


def _lengths(name: str, value, batch: int) -> list:
    values = value.tolist() if isinstance(value, Tensor) else value
    values = [values] if isinstance(values, int) else [int(v) for v in values]
    if len(values) != batch:
        raise RuntimeError(f"{name} must be of size batch_size")
    return values


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """CTC loss of ``targets`` (N, S) padded, or concatenated 1-D, class indices without ``blank``) under
    ``log_probs`` (T, N, C) or (T, C) (log-softmax outputs); 'mean' divides each loss by its target length
    (at least 1) and averages over the batch. ``zero_infinity`` zeroes impossible alignments' losses and
    gradients."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0) if targets.dim() == 1 else targets
    if log_probs.dim() != 3:
        raise RuntimeError(f"ctc_loss: expected log_probs of 2 or 3 dimensions, got {log_probs.dim()}")
    T, N, C = log_probs.shape
    if not 0 <= blank < C:
        raise RuntimeError("blank must be in label range")
    in_lengths = _lengths("input_lengths", input_lengths, N)
    tg_lengths = _lengths("target_lengths", target_lengths, N)
    for length in in_lengths:
        if length > T:
            raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got value {length} (while "
                               "checking arguments for ctc_loss_allocate_outputs)")
    flat = targets.tolist()
    if targets.dim() == 1:  # concatenated
        offsets = [sum(tg_lengths[:n]) for n in range(N)]
        labels = [[int(v) for v in flat[o : o + k]] for o, k in zip(offsets, tg_lengths)]
    else:
        longest = max(tg_lengths) if tg_lengths else 0
        if targets.shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                               f"{targets.shape[1]} for argument #2 'targets' (while checking arguments for "
                               "ctc_loss_allocate_outputs)")
        labels = [[int(v) for v in row[:k]] for row, k in zip(flat, tg_lengths)]
    losses = CtcLoss.apply(log_probs, labels, in_lengths, tg_lengths, blank, zero_infinity)
    if reduction == "mean":
        divisor = tensor([max(k, 1) for k in tg_lengths], dtype=losses.dtype, device=losses.device)
        return (losses / divisor).mean()
    if reduction == "sum":
        return losses.sum()
    return losses.squeeze(0) if unbatched else losses


__all__ = ["ctc_loss"]
