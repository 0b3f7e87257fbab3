"""Array kernels of the COO layout, written against ``xp`` (numpy or CuPy) and the backend's ``index_add``.

Everything here costs O(nnz log nnz) (a sort) or O(nnz) (a segment sum); nothing allocates the dense
size of a sparse tensor unless the caller asked for a dense result.
"""

from __future__ import annotations

import math

from .. import _dtype

CHUNK_ELEMENTS = 1 << 22  # rows x columns per block of a sparse @ dense product (bounds the temporary)


def int64(backend):
    return backend.array_dtype(_dtype.int64)


def linear_index(xp, indices, sparse_shape: tuple):
    """Row-major position of each column of ``indices`` among the ``prod(sparse_shape)`` sparse cells."""
    lin = xp.zeros(indices.shape[1], dtype=indices.dtype)
    for d, n in enumerate(sparse_shape):
        lin = lin * n + indices[d]
    return lin


def unravel(xp, lin, sparse_shape: tuple, dtype):
    """The inverse of ``linear_index``: a (len(sparse_shape), nnz) index array."""
    rows = []
    for n in reversed(sparse_shape):
        rows.append(lin % n if n else lin)
        lin = lin // n if n else lin
    if not rows:
        return xp.zeros((0, lin.shape[0]), dtype=dtype)
    return xp.stack(rows[::-1]).astype(dtype, copy=False)


def coalesce(backend, indices, values, shape: tuple):
    """Sorted unique indices with duplicates summed: ``(indices, values, inverse)`` where ``inverse[k]`` is
    the output entry input entry k went to."""
    xp = backend.xp
    sparse_shape = shape[: indices.shape[0]]
    lin = linear_index(xp, indices, sparse_shape)
    unique, inverse = xp.unique(lin, return_inverse=True)
    inverse = inverse.reshape(-1)
    summed = xp.zeros((unique.shape[0],) + values.shape[1:], dtype=values.dtype)
    backend.index_add(summed, inverse, values)
    return unravel(xp, unique, sparse_shape, indices.dtype), summed, inverse


def pattern(xp, indices, shape: tuple):
    """The sorted unique columns of ``indices`` and the position of each one's first occurrence."""
    sparse_shape = shape[: indices.shape[0]]
    unique, first = xp.unique(linear_index(xp, indices, sparse_shape), return_index=True)
    return unravel(xp, unique, sparse_shape, indices.dtype), first


def lookup(backend, indices, values, shape: tuple, query):
    """Values of the sparse tensor (indices, values) at the columns of ``query`` (0 where unspecified)."""
    xp = backend.xp
    sparse_shape = shape[: indices.shape[0]]
    indices, values, _ = coalesce(backend, indices, values, shape)
    known = linear_index(xp, indices, sparse_shape)
    wanted = linear_index(xp, query, sparse_shape)
    out = xp.zeros((query.shape[1],) + values.shape[1:], dtype=values.dtype)
    if known.shape[0] == 0 or wanted.shape[0] == 0:
        return out
    position = xp.minimum(xp.searchsorted(known, wanted), known.shape[0] - 1)
    found = known[position] == wanted
    out[found] = values[position[found]]
    return out


def sparse_dense_mm(backend, rows, cols, values, dense, n_rows: int):
    """``out[rows[e]] += values[e] * dense[cols[e]]``: O(nnz * k) time. Each output column is one weighted
    ``bincount`` (a segment sum far faster than a 2-D scatter-add), over blocks of columns so the gathered
    temporary stays bounded."""
    xp = backend.xp
    k = dense.shape[1]
    dtype = xp.result_type(values.dtype, dense.dtype)
    out = xp.empty((n_rows, k), dtype=dtype)
    if rows.shape[0] == 0:
        out[...] = 0
        return out
    step = max(1, CHUNK_ELEMENTS // max(rows.shape[0], 1))
    for start in range(0, k, step):
        block = xp.take(dense[:, start:start + step], cols, axis=0)
        block *= values[:, None]
        for j in range(block.shape[1]):
            out[:, start + j] = xp.bincount(rows, weights=block[:, j], minlength=n_rows)
    return out


def to_dense(backend, indices, values, shape: tuple):
    xp = backend.xp
    sparse_dim = indices.shape[0]
    out = xp.zeros(shape, dtype=values.dtype)
    flat = out.reshape((math.prod(shape[:sparse_dim]),) + tuple(shape[sparse_dim:]))
    backend.index_add(flat, linear_index(xp, indices, shape[:sparse_dim]), values)
    return out


def nonzero_pattern(backend, x, sparse_dim: int):
    """COO indices and values of the dense array ``x`` with ``sparse_dim`` sparse dims (sorted, coalesced)."""
    xp = backend.xp
    if sparse_dim == 0:
        return xp.zeros((0, 1), dtype=int64(backend)), x.reshape((1,) + x.shape)
    if sparse_dim == x.ndim:
        specified = x != 0
    else:
        specified = (x != 0).reshape(x.shape[:sparse_dim] + (-1,)).any(axis=-1)
    where = xp.nonzero(specified)
    indices = xp.stack(where).astype(int64(backend), copy=False) if where else xp.zeros((0, 0), int64(backend))
    return indices, x[where]
