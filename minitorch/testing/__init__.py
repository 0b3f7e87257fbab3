"""minitorch.testing: check your own functions, and their gradients, in CI.

Values: ``assert_close`` compares tensors (or nested lists/dicts of them, or Python numbers) with
tolerances chosen by dtype, and names the worst element when they differ. ``make_tensor`` draws a
random test input of a given shape, dtype and device, optionally non-contiguous::

    import minitorch as torch
    from minitorch.testing import assert_close, make_tensor

    def softplus(x):
        return (1 + x.exp()).log()

    def test_softplus_values():
        x = make_tensor(3, 4, dtype=torch.float64, device="cpu")
        assert_close(softplus(x), x.exp().log1p())

Gradients: run ``torch.autograd.gradcheck`` (first derivatives against central finite differences)
and ``gradgradcheck`` (second derivatives) on **float64** inputs that require grad; both work for
custom ``torch.autograd.Function`` s too::

    def test_softplus_gradients():
        x = make_tensor(3, 4, dtype=torch.float64, device="cpu", requires_grad=True, noncontiguous=True)
        assert torch.autograd.gradcheck(softplus, (x,))
        assert torch.autograd.gradgradcheck(softplus, (x,))

Property tests: with hypothesis installed, ``minitorch.testing.strategies`` draws shapes, dtypes and
tensors in contiguous and non-contiguous layouts (``gradcheck_inputs(n)``: n float64 tensors of
broadcastable shapes that require grad)::

    from hypothesis import given
    from minitorch.testing.strategies import gradcheck_inputs

    @given(gradcheck_inputs(2))
    def test_mul_gradients(inputs):
        assert torch.autograd.gradcheck(torch.mul, inputs)
"""

from ._comparison import assert_allclose, assert_close
from ._creation import make_tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]
