"""Hypothesis strategies for tensors: shapes, broadcastable shape pairs, dtypes, and tensors in every layout.

``tensors()`` draws values, then a *layout*: contiguous, transposed (a permuted view of a bigger
contiguous tensor) or strided (every other element of a bigger tensor), so code under test sees
non-contiguous inputs as often as contiguous ones. Use in your own CI gradient checks::

    @given(tensors(dtype=minitorch.float64, requires_grad=True))
    def test_my_fn(x):
        assert minitorch.autograd.gradcheck(my_fn, (x,))

    @given(gradcheck_inputs(2))  # two float64 leaves of broadcastable shapes
    def test_my_binary_fn(inputs):
        assert minitorch.autograd.gradcheck(my_binary_fn, inputs)
"""

from __future__ import annotations

from hypothesis import strategies as st

from .. import _dtype
from ..creation import tensor

LAYOUTS = ("contiguous", "transposed", "strided")


def shapes(min_dims: int = 0, max_dims: int = 3, min_side: int = 1, max_side: int = 4):
    """Tuples of sizes."""
    return st.lists(st.integers(min_side, max_side), min_size=min_dims, max_size=max_dims).map(tuple)


@st.composite
def broadcastable_shapes(draw, shape: tuple, min_dims: int = 0, max_dims: int = 3):
    """A shape that broadcasts with ``shape`` (some sizes set to 1, leading dims dropped or added)."""
    ndim = draw(st.integers(min_dims, max(min_dims, max_dims)))
    result = []
    for i in range(ndim):
        j = len(shape) - ndim + i
        if j >= 0:
            result.append(draw(st.sampled_from([shape[j], 1])))
        else:
            result.append(draw(st.integers(1, 3)))
    return tuple(result)


def _values(shape, dtype, min_value, max_value):
    size = 1
    for n in shape:
        size *= n
    if dtype.is_floating_point:
        elements = st.floats(min_value, max_value, allow_nan=False, allow_infinity=False, width=64)
    elif dtype is _dtype.bool:
        elements = st.booleans()
    else:
        elements = st.integers(int(min_value), int(max_value))
    return st.lists(elements, min_size=size, max_size=size)


@st.composite
def tensors(draw, shape=None, dtype=_dtype.float64, device="cpu", layout=None, min_value=-3.0, max_value=3.0,
            requires_grad: bool = False):
    """A tensor with drawn (or given) shape, values and memory layout (see LAYOUTS)."""
    if shape is None:
        shape = draw(shapes())
    elif not isinstance(shape, tuple):
        shape = draw(shape)
    layout = layout or draw(st.sampled_from(LAYOUTS))
    if layout == "transposed" and len(shape) >= 2:
        flat = draw(_values(shape, dtype, min_value, max_value))
        base = tensor(flat, dtype=dtype, device=device).reshape(shape[:-2] + (shape[-1], shape[-2]))
        t = base.transpose(-1, -2)
    elif layout == "strided" and len(shape) >= 1:
        doubled = shape[:-1] + (2 * shape[-1],)
        flat = draw(_values(doubled, dtype, min_value, max_value))
        t = tensor(flat, dtype=dtype, device=device).reshape(doubled)[..., ::2]
    else:
        flat = draw(_values(shape, dtype, min_value, max_value))
        t = tensor(flat, dtype=dtype, device=device).reshape(shape)
    t = t.detach()
    if requires_grad:
        t.requires_grad_(True)
    return t


FLOATING_DTYPES = (_dtype.float16, _dtype.float32, _dtype.float64)
INTEGRAL_DTYPES = (_dtype.uint8, _dtype.int8, _dtype.int16, _dtype.int32, _dtype.int64)


def dtypes(floating: bool = True, integral: bool = False, boolean: bool = False):
    """One of minitorch's dtypes from the chosen families."""
    choices = (FLOATING_DTYPES if floating else ()) + (INTEGRAL_DTYPES if integral else ())
    choices += (_dtype.bool,) if boolean else ()
    if not choices:
        raise ValueError("dtypes() needs at least one of floating, integral or boolean")
    return st.sampled_from(choices)


@st.composite
def _reduced_shapes(draw, target: tuple):
    """A shape that broadcasts *to* ``target``: a suffix of it with some sizes replaced by 1."""
    ndim = draw(st.integers(0, len(target)))
    return tuple(draw(st.sampled_from([n, 1])) for n in target[len(target) - ndim:])


@st.composite
def gradcheck_inputs(draw, n: int = 1, shape=None, broadcast: bool = True, device="cpu", layout=None,
                     min_value: float = -3.0, max_value: float = 3.0):
    """A tuple of ``n`` float64 leaf tensors that require grad, ready for ``gradcheck(fn, inputs)``.

    With ``broadcast`` the shapes all broadcast together to a drawn shape (to ``shape`` when given,
    which the first input then has); without, every input has the same shape. Each input is drawn
    in its own layout (see ``tensors``).
    """
    given = shape is not None
    if shape is None:
        shape = draw(shapes())
    elif not isinstance(shape, tuple):
        shape = draw(shape)
    result = []
    for i in range(n):
        full = not broadcast or (given and i == 0)
        shape_i = shape if full else draw(_reduced_shapes(shape))
        result.append(draw(tensors(shape_i, dtype=_dtype.float64, device=device, layout=layout,
                                   min_value=min_value, max_value=max_value, requires_grad=True)))
    return tuple(result)
