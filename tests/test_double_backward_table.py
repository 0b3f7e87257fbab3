"""``g = grad(f(x).sum(), x, create_graph=True)``, then ``grad((g * w).sum(), x)``, for every differentiable op
called on a float64 input: whether g requires grad, and the second gradient (its weighted sum, or the exception),
as PyTorch 2.13 gives them.

PyTorch decides whether g requires grad by its derivative formula: g depends on x when the formula takes x (or
the output) as an input, even where the second derivative is 0 (linear ops such as avg_pool, pad, nll_loss), and
then differentiating g gives zeros; a formula built from grad and constants alone (sum, mean, where) gives a g
that does not require grad. ``python tests/test_double_backward_table.py`` recomputes the table with PyTorch
(the only place torch is imported); the test compares minitorch with it.
"""

from __future__ import annotations

import math
import sys

import pytest


def _values(t, shape, low, high, phase=0.0):
    """Deterministic values in (low, high), distinct and away from 0 and from each other, in either library."""
    n = math.prod(shape)
    flat = [low + (high - low) * ((0.37 * (i + 1) + phase) % 1.0) for i in range(n)]
    flat = [v if abs(v) > 1e-3 else v + 0.05 for v in flat]
    return t.tensor(flat, dtype=t.float64).reshape(shape)


def _const(t, *shape, low=-1.0, high=1.0, phase=0.5):
    return _values(t, shape, low, high, phase)


def F(t):
    return t.nn.functional


def _idx(t, *values):
    return t.tensor(list(values), dtype=t.int64)


# name -> (input kind, shape, function of (library, x)); kinds: "real" in (-0.95, 0.95), "pos" in (1.1, 2.9),
# "unit" in (0.05, 0.95), "matrix": a well-conditioned square matrix
CASES = {
    # pointwise
    "abs": ("real", (2, 3), lambda t, x: x.abs()),
    "neg": ("real", (2, 3), lambda t, x: -x),
    "exp": ("real", (2, 3), lambda t, x: x.exp()),
    "exp2": ("real", (2, 3), lambda t, x: t.exp2(x)),
    "expm1": ("real", (2, 3), lambda t, x: x.expm1()),
    "log": ("pos", (2, 3), lambda t, x: x.log()),
    "log2": ("pos", (2, 3), lambda t, x: x.log2()),
    "log10": ("pos", (2, 3), lambda t, x: x.log10()),
    "log1p": ("pos", (2, 3), lambda t, x: x.log1p()),
    "sqrt": ("pos", (2, 3), lambda t, x: x.sqrt()),
    "rsqrt": ("pos", (2, 3), lambda t, x: x.rsqrt()),
    "square": ("real", (2, 3), lambda t, x: x.square()),
    "reciprocal": ("pos", (2, 3), lambda t, x: x.reciprocal()),
    "sin": ("real", (2, 3), lambda t, x: x.sin()),
    "cos": ("real", (2, 3), lambda t, x: x.cos()),
    "tan": ("real", (2, 3), lambda t, x: x.tan()),
    "asin": ("real", (2, 3), lambda t, x: x.asin()),
    "acos": ("real", (2, 3), lambda t, x: x.acos()),
    "atan": ("real", (2, 3), lambda t, x: x.atan()),
    "sinh": ("real", (2, 3), lambda t, x: x.sinh()),
    "cosh": ("real", (2, 3), lambda t, x: x.cosh()),
    "tanh": ("real", (2, 3), lambda t, x: x.tanh()),
    "asinh": ("real", (2, 3), lambda t, x: x.asinh()),
    "acosh": ("pos", (2, 3), lambda t, x: x.acosh()),
    "atanh": ("real", (2, 3), lambda t, x: x.atanh()),
    "sigmoid": ("real", (2, 3), lambda t, x: x.sigmoid()),
    "erf": ("real", (2, 3), lambda t, x: t.erf(x)),
    "erfinv": ("real", (2, 3), lambda t, x: t.erfinv(x)),
    "sign": ("real", (2, 3), lambda t, x: x.sign()),
    "sgn": ("real", (2, 3), lambda t, x: x.sgn()),
    "floor": ("real", (2, 3), lambda t, x: x.floor()),
    "ceil": ("real", (2, 3), lambda t, x: x.ceil()),
    "round": ("real", (2, 3), lambda t, x: x.round()),
    "trunc": ("real", (2, 3), lambda t, x: x.trunc()),
    "frac": ("real", (2, 3), lambda t, x: x.frac()),
    "clamp": ("real", (2, 3), lambda t, x: x.clamp(-0.5, 0.5)),
    "clamp_min": ("real", (2, 3), lambda t, x: x.clamp_min(0.1)),
    "clamp_max": ("real", (2, 3), lambda t, x: x.clamp_max(0.1)),
    "nan_to_num": ("real", (2, 3), lambda t, x: t.nan_to_num(x)),
    "pow_2": ("real", (2, 3), lambda t, x: x**2),
    "pow_3": ("real", (2, 3), lambda t, x: x**3),
    "pow_half": ("pos", (2, 3), lambda t, x: x**0.5),
    "pow_1": ("real", (2, 3), lambda t, x: x**1),
    "pow_0": ("real", (2, 3), lambda t, x: x**0),
    "rpow": ("real", (2, 3), lambda t, x: 2.0**x),
    "pow_tensor": ("pos", (2, 3), lambda t, x: t.pow(x, _const(t, 2, 3))),
    "add_scalar": ("real", (2, 3), lambda t, x: x + 2),
    "sub_scalar": ("real", (2, 3), lambda t, x: 2 - x),
    "mul_scalar": ("real", (2, 3), lambda t, x: x * 3),
    "div_scalar": ("real", (2, 3), lambda t, x: x / 3),
    "add": ("real", (2, 3), lambda t, x: x + _const(t, 2, 3)),
    "mul": ("real", (2, 3), lambda t, x: x * _const(t, 2, 3)),
    "mul_self": ("real", (2, 3), lambda t, x: x * x),
    "div": ("real", (2, 3), lambda t, x: x / _const(t, 2, 3, low=1.0, high=2.0)),
    "rdiv": ("pos", (2, 3), lambda t, x: _const(t, 2, 3) / x),
    "fmod": ("real", (2, 3), lambda t, x: t.fmod(x, 0.3)),
    "remainder": ("real", (2, 3), lambda t, x: t.remainder(x, 0.3)),
    "floor_divide": ("real", (2, 3), lambda t, x: t.floor_divide(x, 0.3)),
    "atan2": ("real", (2, 3), lambda t, x: t.atan2(x, _const(t, 2, 3))),
    "atan2_other": ("real", (2, 3), lambda t, x: t.atan2(_const(t, 2, 3), x)),
    "maximum": ("real", (2, 3), lambda t, x: t.maximum(x, _const(t, 2, 3))),
    "minimum": ("real", (2, 3), lambda t, x: t.minimum(x, _const(t, 2, 3))),
    "fmax": ("real", (2, 3), lambda t, x: t.fmax(x, _const(t, 2, 3))),
    "fmin": ("real", (2, 3), lambda t, x: t.fmin(x, _const(t, 2, 3))),
    "lerp_start": ("real", (2, 3), lambda t, x: t.lerp(x, _const(t, 2, 3), 0.3)),
    "lerp_weight": ("real", (2, 3), lambda t, x: t.lerp(_const(t, 2, 3), _const(t, 2, 3, phase=0.2), x)),
    "logaddexp": ("real", (2, 3), lambda t, x: t.logaddexp(x, _const(t, 2, 3))),
    "logaddexp2": ("real", (2, 3), lambda t, x: t.logaddexp2(x, _const(t, 2, 3))),
    "xlogy": ("pos", (2, 3), lambda t, x: t.xlogy(x, _const(t, 2, 3, low=1.0, high=2.0))),
    "xlogy_other": ("pos", (2, 3), lambda t, x: t.xlogy(_const(t, 2, 3), x)),
    "where": ("real", (2, 3), lambda t, x: t.where(_const(t, 2, 3) > 0, x, 0.0)),
    "masked_fill": ("real", (2, 3), lambda t, x: x.masked_fill(_const(t, 2, 3) > 0, 1.0)),
    # reductions
    "sum": ("real", (2, 3), lambda t, x: x.sum()),
    "sum_dim": ("real", (2, 3), lambda t, x: x.sum(1)),
    "mean": ("real", (2, 3), lambda t, x: x.mean()),
    "mean_dim": ("real", (2, 3), lambda t, x: x.mean(0)),
    "prod": ("real", (2, 3), lambda t, x: x.prod()),
    "prod_dim": ("real", (2, 3), lambda t, x: x.prod(1)),
    "cumsum": ("real", (2, 3), lambda t, x: x.cumsum(1)),
    "cumprod": ("real", (2, 3), lambda t, x: x.cumprod(1)),
    "amax": ("real", (2, 3), lambda t, x: x.amax(1)),
    "amin": ("real", (2, 3), lambda t, x: x.amin(1)),
    "max": ("real", (2, 3), lambda t, x: x.max()),
    "max_dim": ("real", (2, 3), lambda t, x: x.max(1)[0]),
    "min_dim": ("real", (2, 3), lambda t, x: x.min(1)[0]),
    "maximum_self": ("real", (2, 3), lambda t, x: t.maximum(x, x.flip(1))),
    "median": ("real", (2, 3), lambda t, x: x.median()),
    "median_dim": ("real", (2, 3), lambda t, x: x.median(1)[0]),
    "kthvalue": ("real", (2, 3), lambda t, x: x.kthvalue(2, 1)[0]),
    "mode": ("real", (2, 3), lambda t, x: x.mode(1)[0]),
    "sort": ("real", (2, 3), lambda t, x: x.sort(1)[0]),
    "topk": ("real", (2, 3), lambda t, x: x.topk(2, 1)[0]),
    "msort": ("real", (2, 3), lambda t, x: t.msort(x)),
    "var": ("real", (2, 3), lambda t, x: x.var()),
    "var_dim": ("real", (2, 3), lambda t, x: x.var(1)),
    "std": ("real", (2, 3), lambda t, x: x.std()),
    "std_dim": ("real", (2, 3), lambda t, x: x.std(1)),
    "var_mean": ("real", (2, 3), lambda t, x: t.var_mean(x, 1)[0]),
    "std_mean": ("real", (2, 3), lambda t, x: t.std_mean(x, 1)[0]),
    "logsumexp": ("real", (2, 3), lambda t, x: x.logsumexp(1)),
    "norm": ("real", (2, 3), lambda t, x: x.norm()),
    "norm_1": ("real", (2, 3), lambda t, x: x.norm(1)),
    "norm_3": ("real", (2, 3), lambda t, x: x.norm(3)),
    "norm_inf": ("real", (2, 3), lambda t, x: x.norm(float("inf"))),
    "norm_0": ("real", (2, 3), lambda t, x: x.norm(0)),
    "vector_norm_0": ("real", (2, 3), lambda t, x: t.linalg.vector_norm(x, 0)),
    "vector_norm_dim": ("real", (2, 3), lambda t, x: t.linalg.vector_norm(x, 2, 1)),
    "matrix_norm_fro": ("real", (2, 3), lambda t, x: t.linalg.matrix_norm(x)),
    "matrix_norm_nuc": ("real", (2, 3), lambda t, x: t.linalg.matrix_norm(x, "nuc")),
    "matrix_norm_1": ("real", (2, 3), lambda t, x: t.linalg.matrix_norm(x, 1)),
    "trace": ("matrix", (3, 3), lambda t, x: x.trace()),
    # shape and indexing
    "reshape": ("real", (2, 3), lambda t, x: x.reshape(3, 2)),
    "transpose": ("real", (2, 3), lambda t, x: x.t()),
    "permute": ("real", (2, 3, 4), lambda t, x: x.permute(2, 0, 1)),
    "expand": ("real", (1, 3), lambda t, x: x.expand(2, 3)),
    "repeat": ("real", (2, 3), lambda t, x: x.repeat(2, 1)),
    "tile": ("real", (2, 3), lambda t, x: x.tile(2)),
    "flip": ("real", (2, 3), lambda t, x: x.flip(0)),
    "roll": ("real", (2, 3), lambda t, x: x.roll(1, 1)),
    "cat": ("real", (2, 3), lambda t, x: t.cat([x, _const(t, 2, 3)])),
    "stack": ("real", (2, 3), lambda t, x: t.stack([x, x])),
    "split": ("real", (4, 3), lambda t, x: x.split(2)[1]),
    "chunk": ("real", (4, 3), lambda t, x: x.chunk(2)[0]),
    "unbind": ("real", (2, 3), lambda t, x: x.unbind(0)[1]),
    "narrow": ("real", (2, 3), lambda t, x: x.narrow(1, 1, 2)),
    "select": ("real", (2, 3), lambda t, x: x.select(1, 1)),
    "slice": ("real", (2, 3), lambda t, x: x[:, 1:]),
    "diagonal": ("matrix", (3, 3), lambda t, x: x.diagonal()),
    "diag": ("real", (3,), lambda t, x: t.diag(x)),
    "diag_embed": ("real", (2, 3), lambda t, x: t.diag_embed(x)),
    "tril": ("matrix", (3, 3), lambda t, x: x.tril()),
    "triu": ("matrix", (3, 3), lambda t, x: x.triu()),
    "as_strided": ("real", (2, 3), lambda t, x: x.as_strided((2, 2), (1, 2))),
    "index_select": ("real", (3, 3), lambda t, x: x.index_select(0, _idx(t, 2, 0, 2))),
    "advanced_index": ("real", (3, 3), lambda t, x: x[_idx(t, 2, 0, 2)]),
    "masked_select": ("real", (2, 3), lambda t, x: x.masked_select(_const(t, 2, 3) > 0)),
    "gather": ("real", (2, 3), lambda t, x: x.gather(1, _idx(t, 0, 2, 1, 1).reshape(2, 2))),
    "take": ("real", (2, 3), lambda t, x: t.take(x, _idx(t, 0, 5, 3))),
    "take_along_dim": ("real", (2, 3), lambda t, x: t.take_along_dim(x, _idx(t, 0, 2, 1, 1).reshape(2, 2), 1)),
    "scatter_self": ("real", (2, 3), lambda t, x: x.scatter(1, _idx(t, 0, 2).reshape(2, 1), _const(t, 2, 1))),
    "scatter_src": ("real", (2, 1), lambda t, x: _const(t, 2, 3).scatter(1, _idx(t, 0, 2).reshape(2, 1), x)),
    "scatter_add": ("real", (2, 1), lambda t, x: _const(t, 2, 3).scatter_add(1, _idx(t, 0, 2).reshape(2, 1), x)),
    "index_add": ("real", (2, 3), lambda t, x: _const(t, 3, 3).index_add(0, _idx(t, 0, 2), x)),
    "index_copy": ("real", (2, 3), lambda t, x: _const(t, 3, 3).index_copy(0, _idx(t, 0, 2), x)),
    "index_fill": ("real", (3, 3), lambda t, x: x.index_fill(0, _idx(t, 0, 2), 1.0)),
    "index_put": ("real", (2, 3), lambda t, x: _const(t, 3, 3).index_put((_idx(t, 0, 2),), x)),
    "masked_scatter": ("real", (6,), lambda t, x: _const(t, 2, 3).masked_scatter(_const(t, 2, 3) > 0, x)),
    # products
    "mm": ("real", (2, 3), lambda t, x: x.mm(_const(t, 3, 2))),
    "matmul": ("real", (2, 3), lambda t, x: x @ _const(t, 3, 4)),
    "mm_self": ("real", (3, 3), lambda t, x: x @ x),
    "mv": ("real", (2, 3), lambda t, x: t.mv(x, _const(t, 3))),
    "dot": ("real", (3,), lambda t, x: t.dot(x, _const(t, 3))),
    "outer": ("real", (3,), lambda t, x: t.outer(x, _const(t, 2))),
    "bmm": ("real", (2, 2, 3), lambda t, x: t.bmm(x, _const(t, 2, 3, 2))),
    "addmm": ("real", (2, 3), lambda t, x: t.addmm(_const(t, 2, 2), x, _const(t, 3, 2))),
    "einsum": ("real", (2, 3), lambda t, x: t.einsum("ij,jk->ik", x, _const(t, 3, 2))),
    "tensordot": ("real", (2, 3), lambda t, x: t.tensordot(x, _const(t, 3, 2), 1)),
    "kron": ("real", (2, 2), lambda t, x: t.kron(x, _const(t, 2, 2))),
    "cross": ("real", (2, 3), lambda t, x: t.cross(x, _const(t, 2, 3), dim=1)),
    # linalg
    "det": ("matrix", (3, 3), lambda t, x: t.det(x)),
    "logdet": ("matrix", (3, 3), lambda t, x: t.logdet(x)),
    "slogdet": ("matrix", (3, 3), lambda t, x: t.linalg.slogdet(x)[1]),
    "inv": ("matrix", (3, 3), lambda t, x: t.linalg.inv(x)),
    "solve": ("matrix", (3, 3), lambda t, x: t.linalg.solve(x, _const(t, 3, 2))),
    "cholesky": ("matrix", (3, 3), lambda t, x: t.linalg.cholesky(x @ x.mT)),
    "qr": ("matrix", (3, 3), lambda t, x: t.linalg.qr(x)[1]),
    "svdvals": ("matrix", (3, 3), lambda t, x: t.linalg.svdvals(x)),
    "eigvalsh": ("matrix", (3, 3), lambda t, x: t.linalg.eigvalsh(x + x.mT)),
    "pinv": ("matrix", (3, 3), lambda t, x: t.linalg.pinv(x)),
    "matrix_power": ("matrix", (3, 3), lambda t, x: t.linalg.matrix_power(x, 3)),
    # activations
    "relu": ("real", (2, 3), lambda t, x: F(t).relu(x)),
    "relu6": ("real", (2, 3), lambda t, x: F(t).relu6(x * 8)),
    "leaky_relu": ("real", (2, 3), lambda t, x: F(t).leaky_relu(x, 0.1)),
    "elu": ("real", (2, 3), lambda t, x: F(t).elu(x)),
    "selu": ("real", (2, 3), lambda t, x: F(t).selu(x)),
    "celu": ("real", (2, 3), lambda t, x: F(t).celu(x, 0.7)),
    "gelu": ("real", (2, 3), lambda t, x: F(t).gelu(x)),
    "gelu_tanh": ("real", (2, 3), lambda t, x: F(t).gelu(x, approximate="tanh")),
    "silu": ("real", (2, 3), lambda t, x: F(t).silu(x)),
    "mish": ("real", (2, 3), lambda t, x: F(t).mish(x)),
    "softplus": ("real", (2, 3), lambda t, x: F(t).softplus(x)),
    "softsign": ("real", (2, 3), lambda t, x: F(t).softsign(x)),
    "hardtanh": ("real", (2, 3), lambda t, x: F(t).hardtanh(x, -0.5, 0.5)),
    "hardsigmoid": ("real", (2, 3), lambda t, x: F(t).hardsigmoid(x * 4)),
    "hardswish": ("real", (2, 3), lambda t, x: F(t).hardswish(x * 4)),
    "hardshrink": ("real", (2, 3), lambda t, x: F(t).hardshrink(x, 0.3)),
    "softshrink": ("real", (2, 3), lambda t, x: F(t).softshrink(x, 0.3)),
    "tanhshrink": ("real", (2, 3), lambda t, x: F(t).tanhshrink(x)),
    "threshold": ("real", (2, 3), lambda t, x: F(t).threshold(x, 0.1, 2.0)),
    "logsigmoid": ("real", (2, 3), lambda t, x: F(t).logsigmoid(x)),
    "prelu": ("real", (2, 3), lambda t, x: F(t).prelu(x, _const(t, 3))),
    "rrelu_eval": ("real", (2, 3), lambda t, x: F(t).rrelu(x)),
    "glu": ("real", (2, 4), lambda t, x: F(t).glu(x)),
    "softmax": ("real", (2, 3), lambda t, x: F(t).softmax(x, 1)),
    "softmin": ("real", (2, 3), lambda t, x: F(t).softmin(x, 1)),
    "log_softmax": ("real", (2, 3), lambda t, x: F(t).log_softmax(x, 1)),
    # layers
    "linear": ("real", (2, 3), lambda t, x: F(t).linear(x, _const(t, 4, 3), _const(t, 4))),
    "linear_weight": ("real", (4, 3), lambda t, x: F(t).linear(_const(t, 2, 3), x)),
    "bilinear": ("real", (2, 3), lambda t, x: F(t).bilinear(x, _const(t, 2, 2), _const(t, 4, 3, 2))),
    "conv1d": ("real", (2, 3, 6), lambda t, x: F(t).conv1d(x, _const(t, 4, 3, 2))),
    "conv1d_weight": ("real", (4, 3, 2), lambda t, x: F(t).conv1d(_const(t, 2, 3, 6), x)),
    "conv2d": ("real", (1, 2, 4, 4), lambda t, x: F(t).conv2d(x, _const(t, 3, 2, 2, 2), padding=1)),
    "conv3d": ("real", (1, 1, 3, 3, 3), lambda t, x: F(t).conv3d(x, _const(t, 2, 1, 2, 2, 2))),
    "conv_transpose1d": ("real", (2, 3, 5), lambda t, x: F(t).conv_transpose1d(x, _const(t, 3, 2, 2))),
    "conv_transpose2d": ("real", (1, 2, 3, 3), lambda t, x: F(t).conv_transpose2d(x, _const(t, 2, 2, 2, 2))),
    "unfold_im2col": ("real", (1, 2, 4, 4), lambda t, x: F(t).unfold(x, 2)),
    "fold": ("real", (1, 8, 9), lambda t, x: F(t).fold(x, (4, 4), 2)),
    "embedding_weight": ("real", (5, 3), lambda t, x: F(t).embedding(_idx(t, 0, 4, 4), x)),
    "embedding_bag": ("real", (5, 3), lambda t, x: F(t).embedding_bag(_idx(t, 0, 4, 4, 1), x, _idx(t, 0, 2))),
    "layer_norm": ("real", (2, 3), lambda t, x: F(t).layer_norm(x, (3,))),
    "layer_norm_affine": ("real", (2, 3), lambda t, x: F(t).layer_norm(x, (3,), _const(t, 3), _const(t, 3))),
    "rms_norm": ("real", (2, 3), lambda t, x: F(t).rms_norm(x, (3,))),
    "group_norm": ("real", (2, 4, 3), lambda t, x: F(t).group_norm(x, 2)),
    "batch_norm_train": ("real", (4, 3), lambda t, x: F(t).batch_norm(x, None, None, training=True)),
    "batch_norm_eval": ("real", (4, 3), lambda t, x: F(t).batch_norm(x, _const(t, 3), _const(t, 3, low=1, high=2))),
    "instance_norm": ("real", (2, 3, 4), lambda t, x: F(t).instance_norm(x)),
    "local_response_norm": ("real", (1, 4, 3), lambda t, x: F(t).local_response_norm(x, 2)),
    "normalize": ("real", (2, 3), lambda t, x: F(t).normalize(x)),
    "cosine_similarity": ("real", (2, 3), lambda t, x: F(t).cosine_similarity(x, _const(t, 2, 3))),
    "pairwise_distance": ("real", (2, 3), lambda t, x: F(t).pairwise_distance(x, _const(t, 2, 3))),
    "scaled_dot_product_attention": (
        "real", (1, 2, 3), lambda t, x: F(t).scaled_dot_product_attention(x, _const(t, 1, 4, 3), _const(t, 1, 4, 3))
    ),
    "dropout_eval": ("real", (2, 3), lambda t, x: F(t).dropout(x, 0.5, training=False)),
    # pooling and padding
    "avg_pool1d": ("real", (2, 3, 6), lambda t, x: F(t).avg_pool1d(x, 2)),
    "avg_pool2d": ("real", (1, 2, 4, 4), lambda t, x: F(t).avg_pool2d(x, 2)),
    "avg_pool3d": ("real", (1, 1, 2, 4, 4), lambda t, x: F(t).avg_pool3d(x, 2)),
    "adaptive_avg_pool1d": ("real", (2, 3, 6), lambda t, x: F(t).adaptive_avg_pool1d(x, 3)),
    "adaptive_avg_pool2d": ("real", (1, 2, 4, 4), lambda t, x: F(t).adaptive_avg_pool2d(x, 3)),
    "adaptive_avg_pool3d": ("real", (1, 1, 2, 4, 4), lambda t, x: F(t).adaptive_avg_pool3d(x, 2)),
    "max_pool1d": ("real", (2, 3, 6), lambda t, x: F(t).max_pool1d(x, 2)),
    "max_pool2d": ("real", (1, 2, 4, 4), lambda t, x: F(t).max_pool2d(x, 2)),
    "max_pool3d": ("real", (1, 1, 2, 4, 4), lambda t, x: F(t).max_pool3d(x, 2)),
    "adaptive_max_pool1d": ("real", (2, 3, 6), lambda t, x: F(t).adaptive_max_pool1d(x, 3)),
    "adaptive_max_pool2d": ("real", (1, 2, 4, 4), lambda t, x: F(t).adaptive_max_pool2d(x, 2)),
    "lp_pool1d": ("pos", (2, 3, 6), lambda t, x: F(t).lp_pool1d(x, 2, 2)),
    "lp_pool2d": ("pos", (1, 2, 4, 4), lambda t, x: F(t).lp_pool2d(x, 3, 2)),
    "pad_constant": ("real", (2, 3, 4), lambda t, x: F(t).pad(x, (1, 2))),
    "pad_reflect": ("real", (2, 3, 6), lambda t, x: F(t).pad(x, (2, 2), mode="reflect")),
    "pad_reflect2d": ("real", (1, 2, 4, 4), lambda t, x: F(t).pad(x, (1, 2, 2, 1), mode="reflect")),
    "pad_replicate": ("real", (2, 3, 6), lambda t, x: F(t).pad(x, (2, 2), mode="replicate")),
    "pad_replicate2d": ("real", (1, 2, 4, 4), lambda t, x: F(t).pad(x, (1, 2, 2, 1), mode="replicate")),
    "pad_circular": ("real", (2, 3, 6), lambda t, x: F(t).pad(x, (2, 2), mode="circular")),
    # losses (x is the input unless the name says target)
    "mse_loss": ("real", (2, 3), lambda t, x: F(t).mse_loss(x, _const(t, 2, 3))),
    "l1_loss": ("real", (2, 3), lambda t, x: F(t).l1_loss(x, _const(t, 2, 3))),
    "smooth_l1_loss": ("real", (2, 3), lambda t, x: F(t).smooth_l1_loss(x, _const(t, 2, 3), beta=0.5)),
    "huber_loss": ("real", (2, 3), lambda t, x: F(t).huber_loss(x, _const(t, 2, 3), delta=0.5)),
    "nll_loss": ("real", (2, 3), lambda t, x: F(t).nll_loss(x, _idx(t, 0, 2))),
    "nll_loss_weight": ("real", (2, 3), lambda t, x: F(t).nll_loss(x, _idx(t, 0, 2), _const(t, 3, low=1, high=2))),
    "nll_loss_2d": ("real", (2, 3, 2, 2), lambda t, x: F(t).nll_loss(x, _idx(t, 0, 2, 1, 1, 0, 2, 2, 1)
                                                                     .reshape(2, 2, 2))),
    "cross_entropy": ("real", (2, 3), lambda t, x: F(t).cross_entropy(x, _idx(t, 0, 2))),
    "cross_entropy_smooth": ("real", (2, 3), lambda t, x: F(t).cross_entropy(x, _idx(t, 0, 2), label_smoothing=0.2)),
    "cross_entropy_probs": ("real", (2, 3), lambda t, x: F(t).cross_entropy(x, _const(t, 2, 3, low=0, high=1))),
    "binary_cross_entropy": ("unit", (2, 3), lambda t, x: F(t).binary_cross_entropy(x, _const(t, 2, 3, low=0, high=1))),
    "binary_cross_entropy_target": (
        "unit", (2, 3), lambda t, x: F(t).binary_cross_entropy(_const(t, 2, 3, low=0.1, high=0.9), x)
    ),
    "bce_with_logits": ("real", (2, 3), lambda t, x: F(t).binary_cross_entropy_with_logits(x, _const(t, 2, 3, low=0,
                                                                                                       high=1))),
    "kl_div": ("real", (2, 3), lambda t, x: F(t).kl_div(x, _const(t, 2, 3, low=0.1, high=0.9), reduction="batchmean")),
    "kl_div_target": ("unit", (2, 3), lambda t, x: F(t).kl_div(_const(t, 2, 3), x, reduction="sum")),
    "poisson_nll_loss": ("real", (2, 3), lambda t, x: F(t).poisson_nll_loss(x, _const(t, 2, 3, low=0, high=3))),
    "gaussian_nll_loss": ("real", (2, 3), lambda t, x: F(t).gaussian_nll_loss(x, _const(t, 2, 3),
                                                                              _const(t, 2, 3, low=0.5, high=1.5))),
    "soft_margin_loss": ("real", (2, 3), lambda t, x: F(t).soft_margin_loss(x, _const(t, 2, 3).sign())),
    "multilabel_soft_margin_loss": ("real", (2, 3), lambda t, x: F(t).multilabel_soft_margin_loss(
        x, _const(t, 2, 3, low=0, high=1).round())),
    "hinge_embedding_loss": ("real", (2, 3), lambda t, x: F(t).hinge_embedding_loss(x, _const(t, 2, 3).sign())),
    "margin_ranking_loss": ("real", (2, 3), lambda t, x: F(t).margin_ranking_loss(x, _const(t, 2, 3),
                                                                                  _const(t, 2, 3, phase=0.1).sign())),
    "cosine_embedding_loss": ("real", (2, 3), lambda t, x: F(t).cosine_embedding_loss(x, _const(t, 2, 3),
                                                                                      _const(t, 2).sign())),
    "triplet_margin_loss": ("real", (2, 3), lambda t, x: F(t).triplet_margin_loss(x, _const(t, 2, 3),
                                                                                  _const(t, 2, 3, phase=0.9))),
}

KINDS = {"real": (-0.95, 0.95), "pos": (1.1, 2.9), "unit": (0.05, 0.95)}


def _input(t, kind, shape):
    if kind == "matrix":
        n = shape[0]
        x = _values(t, shape, -0.4, 0.4) + t.eye(n, dtype=t.float64) * 2
    else:
        x = _values(t, shape, *KINDS[kind])
    return x.requires_grad_()


def outcome(t, name):
    """(g.requires_grad, second) with second the weighted sum of the second gradient, 'nan', or an error tag."""
    kind, shape, function = CASES[name]
    x = _input(t, kind, shape)
    out = function(t, x)
    if out is None:
        return None
    try:
        (g,) = t.autograd.grad(out.sum(), x, create_graph=True)
    except RuntimeError as error:
        return ("first", _tag(error))
    if not g.requires_grad:
        return (False, None)
    weights = _values(t, tuple(g.shape), 0.5, 1.5, phase=0.3)
    try:
        (second,) = t.autograd.grad((g * weights).sum(), x)
    except RuntimeError as error:
        return (True, _tag(error))
    total = second.sum().item()
    return (True, "nan" if math.isnan(total) else round(total, 6))


def _tag(error: Exception) -> str:
    message = str(error)
    for tag, words in (("unused", "appears to not have been used"), ("nograd", "does not require grad")):
        if words in message:
            return tag
    return f"{type(error).__name__}: {message[:60]}"


# PyTorch 2.13's outcomes (regenerate with `python tests/test_double_backward_table.py`)
EXPECTED = {
    'abs': (True, 0.0),
    'neg': (False, None),
    'exp': (True, 5.295028),
    'exp2': (True, 2.524243),
    'expm1': (True, 5.295028),
    'log': (True, -1.888143),
    'log2': (True, -2.724015),
    'log10': (True, -0.82001),
    'log1p': (True, -0.729844),
    'sqrt': (True, -0.607793),
    'rsqrt': (True, 1.111712),
    'square': (True, 11.14),
    'reciprocal': (True, 2.350866),
    'sin': (True, 0.827483),
    'cos': (True, -4.960309),
    'tan': (True, -3.097479),
    'asin': (True, -2.100185),
    'acos': (True, 2.100185),
    'atan': (True, 1.078569),
    'sinh': (True, -0.927242),
    'cosh': (True, 6.222271),
    'tanh': (True, 1.202484),
    'asinh': (True, 0.601047),
    'acosh': (True, -4.621863),
    'atanh': (True, -5.933306),
    'sigmoid': (True, 0.098278),
    'erf': (True, 1.446492),
    'erfinv': (True, -3.701798),
    'sign': (False, None),
    'sgn': (False, None),
    'floor': (False, None),
    'ceil': (False, None),
    'round': (False, None),
    'trunc': (False, None),
    'frac': (False, None),
    'clamp': (False, None),
    'clamp_min': (False, None),
    'clamp_max': (False, None),
    'nan_to_num': (False, None),
    'pow_2': (True, 11.14),
    'pow_3': (True, -5.25654),
    'pow_half': (True, -0.607793),
    'pow_1': (True, 0.0),
    'pow_0': (False, None),
    'rpow': (True, 2.524243),
    'pow_tensor': (True, -0.293661),
    'add_scalar': (False, None),
    'sub_scalar': (False, None),
    'mul_scalar': (False, None),
    'div_scalar': (False, None),
    'add': (False, None),
    'mul': (False, None),
    'mul_self': (True, 11.14),
    'div': (False, None),
    'rdiv': (True, 1.029505),
    'fmod': (False, None),
    'remainder': (False, None),
    'floor_divide': ('first', 'RuntimeError: derivative for aten::floor_divide is not implemented'),
    'atan2': (True, 6.232301),
    'atan2_other': (True, -6.232301),
    'maximum': (False, None),
    'minimum': (False, None),
    'fmax': (False, None),
    'fmin': (False, None),
    'lerp_start': (False, None),
    'lerp_weight': (False, None),
    'logaddexp': (True, 1.105743),
    'logaddexp2': (True, 0.862101),
    'xlogy': (False, None),
    'xlogy_other': (True, -0.83987),
    'where': (False, None),
    'masked_fill': (False, None),
    'sum': (False, None),
    'sum_dim': (False, None),
    'mean': (False, None),
    'mean_dim': (False, None),
    'prod': (True, 0.295253),
    'prod_dim': (True, -0.2375),
    'cumsum': (False, None),
    'cumprod': (True, 3.4025),
    'amax': (False, None),
    'amin': (False, None),
    'max': (False, None),
    'max_dim': (False, None),
    'min_dim': (False, None),
    'maximum_self': (False, None),
    'median': (False, None),
    'median_dim': (False, None),
    'kthvalue': (False, None),
    'mode': (False, None),
    'sort': (False, None),
    'topk': (False, None),
    'msort': (False, None),
    'var': (True, 0.0),
    'var_dim': (True, 0.0),
    'std': (True, -0.0),
    'std_dim': (True, 0.0),
    'var_mean': (True, 0.0),
    'std_mean': (True, 0.0),
    'logsumexp': (True, 0.0),
    'norm': (True, 4.282159),
    'norm_1': (True, 0.0),
    'norm_3': (True, 4.343676),
    'norm_inf': (True, 0.0),
    'norm_0': ('first', 'unused'),
    'vector_norm_0': ('first', 'unused'),
    'vector_norm_dim': (True, 5.86614),
    'matrix_norm_fro': (True, 4.282159),
    'matrix_norm_nuc': (True, 3.676332),
    'matrix_norm_1': (True, 0.0),
    'trace': (False, None),
    'reshape': (False, None),
    'transpose': (False, None),
    'permute': (False, None),
    'expand': (False, None),
    'repeat': (False, None),
    'tile': (False, None),
    'flip': (False, None),
    'roll': (False, None),
    'cat': (False, None),
    'stack': (False, None),
    'split': (False, None),
    'chunk': (False, None),
    'unbind': (False, None),
    'narrow': (False, None),
    'select': (False, None),
    'slice': (False, None),
    'diagonal': (False, None),
    'diag': (False, None),
    'diag_embed': (False, None),
    'tril': (False, None),
    'triu': (False, None),
    'as_strided': (False, None),
    'index_select': (False, None),
    'advanced_index': (False, None),
    'masked_select': (False, None),
    'gather': (False, None),
    'take': (False, None),
    'take_along_dim': (False, None),
    'scatter_self': (False, None),
    'scatter_src': (False, None),
    'scatter_add': (False, None),
    'index_add': (False, None),
    'index_copy': (False, None),
    'index_fill': (False, None),
    'index_put': (False, None),
    'masked_scatter': (False, None),
    'mm': (False, None),
    'matmul': (False, None),
    'mm_self': (True, 53.1),
    'mv': (False, None),
    'dot': (False, None),
    'outer': (False, None),
    'bmm': (False, None),
    'addmm': (False, None),
    'einsum': (False, None),
    'tensordot': (False, None),
    'kron': (False, None),
    'cross': (False, None),
    'det': (True, -0.0),
    'logdet': (True, -2.118654),
    'slogdet': (True, -2.118654),
    'inv': (True, 6.148582),
    'solve': (True, 1.970904),
    'cholesky': (True, -2.068649),
    'qr': (True, -0.106503),
    'svdvals': (True, 0.091123),
    'eigvalsh': (True, -0.0),
    'pinv': (True, 6.148582),
    'matrix_power': (True, 322.50096),
    'relu': (True, 0.0),
    'relu6': (True, 0.0),
    'leaky_relu': (True, 0.0),
    'elu': (True, 3.179124),
    'selu': (True, 5.589217),
    'celu': (True, 4.038921),
    'gelu': (True, 3.576192),
    'gelu_tanh': (True, 3.574011),
    'silu': (True, 2.499033),
    'mish': (True, 3.057769),
    'softplus': (True, 1.318664),
    'softsign': (True, 3.776458),
    'hardtanh': (True, 0.0),
    'hardsigmoid': (True, 'RuntimeError: derivative for aten::hardsigmoid_backward is not implemented'),
    'hardswish': (True, 29.706667),
    'hardshrink': (True, 0.0),
    'softshrink': (True, 0.0),
    'tanhshrink': (True, -1.202484),
    'threshold': (True, 0.0),
    'logsigmoid': (True, -1.318664),
    'prelu': (True, 0.0),
    'rrelu_eval': (True, 0.0),
    'glu': (True, 1.785901),
    'softmax': (True, 0.0),
    'softmin': (True, -0.0),
    'log_softmax': (True, -0.0),
    'linear': (False, None),
    'linear_weight': (False, None),
    'bilinear': (False, None),
    'conv1d': (True, 'unused'),
    'conv1d_weight': (True, 'unused'),
    'conv2d': (True, 'unused'),
    'conv3d': (True, 'unused'),
    'conv_transpose1d': (True, 'unused'),
    'conv_transpose2d': (True, 'unused'),
    'unfold_im2col': (False, None),
    'fold': (False, None),
    'embedding_weight': (False, None),
    'embedding_bag': (False, None),
    'layer_norm': (True, 0.0),
    'layer_norm_affine': (True, -0.0),
    'rms_norm': (True, 9.56994),
    'group_norm': (True, 0.0),
    'batch_norm_train': (True, 0.0),
    'batch_norm_eval': (True, 'unused'),
    'instance_norm': (True, -0.0),
    'local_response_norm': (True, 0.000282),
    'normalize': (True, 5.525207),
    'cosine_similarity': (True, 4.230452),
    'pairwise_distance': (True, 2.650187),
    'scaled_dot_product_attention': (True, 0.005622),
    'dropout_eval': (False, None),
    'avg_pool1d': (True, 0.0),
    'avg_pool2d': (True, 0.0),
    'avg_pool3d': (True, 0.0),
    'adaptive_avg_pool1d': (True, 0.0),
    'adaptive_avg_pool2d': (True, 0.0),
    'adaptive_avg_pool3d': (True, 0.0),
    'max_pool1d': (True, 0.0),
    'max_pool2d': (True, 0.0),
    'max_pool3d': (True, 0.0),
    'adaptive_max_pool1d': (True, 0.0),
    'adaptive_max_pool2d': (True, 0.0),
    'lp_pool1d': (True, 0.702584),
    'lp_pool2d': (True, 0.845435),
    'pad_constant': (False, None),
    'pad_reflect': (True, 0.0),
    'pad_reflect2d': (True, 0.0),
    'pad_replicate': (True, 0.0),
    'pad_replicate2d': (True, 0.0),
    'pad_circular': (False, None),
    'mse_loss': (True, 1.856667),
    'l1_loss': (True, 0.0),
    'smooth_l1_loss': (True, 0.0),
    'huber_loss': (True, 0.0),
    'nll_loss': (True, 0.0),
    'nll_loss_weight': (True, 0.0),
    'nll_loss_2d': (True, 0.0),
    'cross_entropy': (True, -0.0),
    'cross_entropy_smooth': (True, -0.0),
    'cross_entropy_probs': (True, 0.0),
    'binary_cross_entropy': (True, 11.466832),
    'binary_cross_entropy_target': (False, None),
    'bce_with_logits': (True, 0.219777),
    'kl_div': (False, None),
    'kl_div_target': (True, 17.482454),
    'poisson_nll_loss': (True, 0.882505),
    'gaussian_nll_loss': (True, 0.811533),
    'soft_margin_loss': (True, 0.219777),
    'multilabel_soft_margin_loss': (True, 0.219777),
    'hinge_embedding_loss': (False, None),
    'margin_ranking_loss': (False, None),
    'cosine_embedding_loss': (True, -1.049106),
    'triplet_margin_loss': (True, 1.380752),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_double_backward_matches_pytorch(name):
    import minitorch

    expected = EXPECTED[name]
    got = outcome(minitorch, name)
    assert got is not None, f"{name}: minitorch lacks the op"
    assert got[0] == expected[0], f"{name}: g.requires_grad {got[0]}, PyTorch {expected[0]}"
    if isinstance(expected[1], float):
        assert got[1] == pytest.approx(expected[1], rel=1e-6, abs=1e-6), name
    else:
        assert got[1] == expected[1], name


@pytest.mark.parametrize(
    "function, raises",
    [  # PyTorch 2.13: these ops save their input (their backward takes it), so writing into it breaks backward
        (lambda t, x: F(t).avg_pool1d(x, 2), True),
        (lambda t, x: F(t).adaptive_avg_pool1d(x, 3), True),
        (lambda t, x: F(t).pad(x, (2, 2), mode="reflect"), True),
        (lambda t, x: F(t).pad(x, (2, 2), mode="replicate"), True),
        (lambda t, x: F(t).pad(x, (2, 2), mode="circular"), False),
        (lambda t, x: F(t).nll_loss(x[:, :, 0], _idx(t, 0, 2)), True),
        (lambda t, x: F(t).batch_norm(x, t.zeros(3, dtype=t.float64), t.ones(3, dtype=t.float64)), True),
        (lambda t, x: F(t).conv1d(x, t.ones(2, 3, 2, dtype=t.float64)), True),
    ],
)
def test_ops_that_read_their_input_in_backward_save_it(function, raises):
    import minitorch

    x = _input(minitorch, "real", (2, 3, 6)) * 1
    y = function(minitorch, x)
    x.mul_(2)
    if raises:
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
    else:
        y.sum().backward()


def test_the_table_covers_every_case():
    assert set(EXPECTED) <= set(CASES)


if __name__ == "__main__":  # regenerate EXPECTED: the reference implementation is PyTorch (or --minitorch)
    import importlib

    library = importlib.import_module("minitorch" if "--minitorch" in sys.argv else "torch")
    for case in CASES:
        try:
            result = outcome(library, case)
        except Exception as error:  # noqa: BLE001 - a case the library cannot run is reported, not fatal
            result = ("call", f"{type(error).__name__}: {str(error)[:60]}")
        if result is not None:
            print(f"    {case!r}: {result!r},")
