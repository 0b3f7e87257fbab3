"""Random sequences of views and in-place ops vs. an independent numpy model.

The model keeps, per element of the written tensor, its value and its derivative with respect to
the same element of the leaf (every in-place op here is elementwise, and every view only selects
elements, so the Jacobian is diagonal). Views are replayed on a numpy index array with numpy's own
view semantics, which are PyTorch's for these ops. At the end, the gradient minitorch computes for
``(y * w).sum()`` must equal ``w * derivative``.
"""

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import minitorch as torch

SHAPE = (3, 4, 5)

# name: (apply to minitorch view, value function, derivative function)
INPLACE = {
    "mul": (lambda t, c: t.mul_(c), lambda v, c: v * c, lambda v, c: np.full_like(v, c)),
    "add": (lambda t, c: t.add_(c), lambda v, c: v + c, lambda v, c: np.ones_like(v)),
    "sin": (lambda t, c: t.sin_(), lambda v, c: np.sin(v), lambda v, c: np.cos(v)),
    "tanh": (lambda t, c: t.tanh_(), lambda v, c: np.tanh(v), lambda v, c: 1 - np.tanh(v) ** 2),
    "setitem": (lambda t, c: t.fill_(c), lambda v, c: np.full_like(v, c), lambda v, c: np.zeros_like(v)),
}


class ViewsAndInplace(RuleBasedStateMachine):
    @initialize(seed=st.integers(0, 2**16))
    def start(self, seed):
        rng = np.random.default_rng(seed)
        self.x = torch.tensor(rng.uniform(-1, 1, SHAPE), dtype=torch.float64, requires_grad=True)
        self.y = self.x * 1
        self.value = self.x.detach().numpy().copy()
        self.derivative = np.ones(SHAPE)
        self.cursor = self.y
        self.index = np.arange(self.value.size).reshape(SHAPE)  # which elements the cursor sees
        self.saved_result = False  # a tanh_ saved its result: any later write to y must make backward raise
        self.expect_version_error = False

    # views -----------------------------------------------------------------------------------
    @precondition(lambda self: self.cursor.dim() >= 1)
    @rule(data=st.data())
    def slice_with_step(self, data):
        dim = data.draw(st.integers(0, self.cursor.dim() - 1))
        n = self.cursor.shape[dim]
        start = data.draw(st.integers(0, max(0, n - 1)))
        step = data.draw(st.integers(1, 2))
        key = (slice(None),) * dim + (slice(start, None, step),)
        self.cursor, self.index = self.cursor[key], self.index[key]

    @precondition(lambda self: self.cursor.dim() >= 2)
    @rule(data=st.data())
    def transpose(self, data):
        d0 = data.draw(st.integers(0, self.cursor.dim() - 1))
        d1 = data.draw(st.integers(0, self.cursor.dim() - 1))
        self.cursor, self.index = self.cursor.transpose(d0, d1), np.swapaxes(self.index, d0, d1)

    @precondition(lambda self: self.cursor.dim() >= 1 and self.cursor.numel() > 0)
    @rule(data=st.data())
    def select(self, data):
        dim = data.draw(st.integers(0, self.cursor.dim() - 1))
        i = data.draw(st.integers(0, self.cursor.shape[dim] - 1))
        self.cursor, self.index = self.cursor.select(dim, i), np.take(self.index, i, axis=dim)

    @precondition(lambda self: self.cursor.dim() >= 2)
    @rule(offset=st.integers(-1, 1))
    def diagonal(self, offset):
        self.cursor, self.index = self.cursor.diagonal(offset), np.diagonal(self.index, offset).copy()

    @precondition(lambda self: self.cursor.is_contiguous() and self.cursor.numel() > 0)
    @rule()
    def flatten_view(self):
        self.cursor, self.index = self.cursor.view(-1), self.index.reshape(-1)

    @rule()
    def unsqueeze(self):
        self.cursor, self.index = self.cursor.unsqueeze(0), self.index[None]

    @rule()
    def back_to_base(self):
        self.cursor, self.index = self.y, np.arange(self.value.size).reshape(SHAPE)

    # writes ----------------------------------------------------------------------------------
    @rule(op=st.sampled_from(sorted(INPLACE)), c=st.floats(-1.5, 1.5))
    def write(self, op, c):
        apply, value_fn, derivative_fn = INPLACE[op]
        apply(self.cursor, c)
        self.expect_version_error |= self.saved_result
        self.saved_result |= op == "tanh"
        flat_value, flat_derivative = self.value.reshape(-1), self.derivative.reshape(-1)
        touched = self.index.reshape(-1)
        old = flat_value[touched]
        flat_derivative[touched] = derivative_fn(old, c) * flat_derivative[touched]
        flat_value[touched] = value_fn(old, c)

    @rule()
    def expanded_write_is_refused(self):
        try:
            self.y[0:1].expand(2, 4, 5).mul_(2)
        except RuntimeError as error:
            assert "more than one element of the written-to tensor" in str(error)
        else:
            raise AssertionError("a write through an expanded view must raise")

    @invariant()
    def values_match(self):
        if hasattr(self, "y"):
            np.testing.assert_allclose(self.y.detach().numpy(), self.value, rtol=1e-12, atol=1e-12)

    def teardown(self):
        if not hasattr(self, "y"):
            return
        w = np.random.default_rng(0).uniform(-1, 1, SHAPE)
        loss = (self.y * torch.tensor(w)).sum()
        if self.expect_version_error:  # PyTorch's rule: tanh_ saved a result that a later write changed
            try:
                loss.backward()
            except RuntimeError as error:
                assert "modified by an inplace operation" in str(error)
                return
            raise AssertionError("backward must detect the write over a saved result")
        loss.backward()
        np.testing.assert_allclose(self.x.grad.numpy(), w * self.derivative, rtol=1e-10, atol=1e-12)


TestViewsAndInplace = ViewsAndInplace.TestCase
TestViewsAndInplace.settings = settings(
    stateful_step_count=25, max_examples=settings.default.max_examples * 10, deadline=None
)
