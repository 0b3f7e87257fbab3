"""Differentiable ops: each defined once, its forward (backend arrays) beside its backward (Tensors)."""
