"""Batching rules of the ops under ``torch.nn.functional`` (see batching_rules.py for how a rule works): linear,
convolution and pooling fold the batch into their own batch dim where they can, the class-index losses fold it
into theirs and reduce per sample, softmax and the norms shift their dims.
"""

from __future__ import annotations

import dataclasses

from ..nn.functional.activation import LogSoftmax, Softmax
from ..nn.functional.conv import Conv
from ..nn.functional.dropout import Dropout
from ..nn.functional.linear import Linear
from ..nn.functional.loss import BinaryCrossEntropy, CrossEntropy, NllLoss
from ..nn.functional.normalization import NativeAffine, Normalize
from ..nn.functional.padding import ConstantPad
from ..nn.functional.pooling import AlongDim, MaxPool, WindowSum
from ..nn.functional.sparse import Embedding, OneHot
from ..ops import blas, reduction
from .batched import BatchedTensor, wrap
from .batching_rules import (
    batch_size,
    broadcasting,
    dim_rule,
    dims_rule,
    front,
    front_or_expand,
    innermost_level,
    loop_fallback,
    register,
)

dim_rule(Softmax, 0)
dim_rule(LogSoftmax, 0)
dims_rule(Normalize, 0)  # layer/batch/instance/group norm statistics over logical dims


@register(ConstantPad)
def _constant_pad(x, pads, value):
    return wrap(ConstantPad.apply(front(x, x._level), ((0, 0),) + tuple(pads), value), 0, x._level)


@register(OneHot)
def _one_hot(x, num_classes):
    return wrap(OneHot.apply(front(x, x._level), num_classes), 0, x._level)


@register(Embedding)
def _embedding(weight, indices, *params):
    level = innermost_level((weight, indices))
    if type(weight) is BatchedTensor and weight._level == level:
        return loop_fallback(Embedding, (weight, indices) + params, {})
    return wrap(Embedding.apply(weight, front(indices, level), *params), 0, level)


for _op in (Dropout, NativeAffine, BinaryCrossEntropy):  # dropout's mask, the norms' affine step, BCE per element
    broadcasting(_op)


@register(Linear)
def _linear(x, weight, bias=None):
    level = innermost_level((x, weight, bias))
    if type(x) is BatchedTensor and x._level == level and innermost_level((weight, bias)) < level:
        return wrap(Linear.apply(front(x, level), weight, bias), 0, level)  # one GEMM over batch * rows
    out = blas.Matmul.apply(x, weight.transpose(-1, -2))
    return out if bias is None else out + bias


@register(Conv)
def _conv(x, weight, bias, geometry):
    """The batch folds into the images (N) when only they are batched; a batched weight (per-sample gradients)
    becomes B groups of a grouped convolution over the batch's channels stacked."""
    level = innermost_level((x, weight, bias))
    size = batch_size((x, weight, bias), level)
    px = front_or_expand(x, level, size)
    n, c, spatial = px.shape[1], px.shape[2], tuple(px.shape[3:])
    if innermost_level((weight, bias)) < level:
        out = Conv.apply(px.reshape((size * n, c) + spatial), weight, bias, geometry)
        return wrap(out.reshape((size, n) + tuple(out.shape[1:])), 0, level)
    pw = front_or_expand(weight, level, size)
    o = pw.shape[1]
    stacked_x = px.movedim(0, 1).reshape((n, size * c) + spatial)
    stacked_w = pw.reshape((size * o,) + tuple(pw.shape[2:]))
    stacked_b = None if bias is None else front_or_expand(bias, level, size).reshape(size * o)
    grouped = dataclasses.replace(geometry, groups=geometry.groups * size)
    out = Conv.apply(stacked_x, stacked_w, stacked_b, grouped)
    return wrap(out.reshape((n, size, o) + tuple(out.shape[2:])).movedim(1, 0), 0, level)


def _fold_rule(op):
    """Ops on (N, C, *spatial) images, each image alone (pooling): the batch folds into N."""

    def rule(x, *params):
        value = front(x, x._level)
        size, rest = value.shape[0], tuple(value.shape[2:])
        out = op.apply(value.reshape((size * value.shape[1],) + rest), *params)
        outs = out if type(out) is tuple else (out,)
        unfolded = tuple(wrap(o.reshape((size, -1) + tuple(o.shape[1:])), 0, x._level) for o in outs)
        return unfolded if type(out) is tuple else unfolded[0]

    register(op)(rule)


_fold_rule(MaxPool)
_fold_rule(WindowSum)
dim_rule(AlongDim, 0)


# losses over class indices ------------------------------------------------------------------------
def _class_loss(op):
    """nll_loss / cross_entropy: the batch folds into the loss's own batch dim (reduction 'none'); sum and
    mean (divided by each sample's summed class weights, as PyTorch) are then taken per sample."""

    def rule(x, target, weight, ignore_index, reduction_name, *extra):
        level = innermost_level((x, target, weight))
        if type(weight) is BatchedTensor and weight._level == level:
            return loop_fallback(op, (x, target, weight, ignore_index, reduction_name) + extra, {})
        size = batch_size((x, target), level)
        px, pt = front_or_expand(x, level, size), front_or_expand(target, level, size)
        rows = px.shape[1]
        flat_x = px.reshape((size * rows,) + tuple(px.shape[2:]))
        flat_t = pt.reshape((size * rows,) + tuple(pt.shape[2:]))
        loss = op.apply(flat_x, flat_t, weight, ignore_index, "none", *extra)
        loss = loss.reshape((size, rows) + tuple(loss.shape[1:]))
        if reduction_name == "none":
            return wrap(loss, 0, level)
        dims = tuple(range(1, loss.dim()))
        total = reduction.Sum.apply(loss, dims, False, None)
        if reduction_name == "sum":
            return wrap(total, 0, level)
        valid = pt != ignore_index
        if weight is None:
            weights = valid.to(loss.dtype)
        else:
            classes = pt.masked_fill(~valid, 0)
            weights = weight.index_select(0, classes.reshape(-1)).reshape(tuple(pt.shape)) * valid
        return wrap(total / reduction.Sum.apply(weights, dims, False, None), 0, level)

    register(op)(rule)


_class_loss(NllLoss)
_class_loss(CrossEntropy)
