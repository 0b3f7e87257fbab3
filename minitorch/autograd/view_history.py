"""View history: what autograd does when a view, or the base it shares memory with, is written in place.

PyTorch keeps this in autograd (``CopySlices`` and the view's ``grad_fn`` regeneration), not in the ops:

- a write through a view rewrites the base's history as ``CopySlices`` (``rebase_base_through_view``):
  the gradient outside the written region goes to the old base unchanged, inside it goes through the
  in-place op's backward;
- any other view of that storage notices the version change the next time its ``grad_fn`` is read and
  rebuilds it as an ``AsStridedBackward0`` of its base's current history (``refresh_view_grad_fn``);
- some views may not be rewritten at all (``check_view_rebase``, PyTorch's handle_view_on_rebase).

The write itself (``run_inplace``) is in ops/inplace.py. The three view ops this needs are reached as
tensor methods (``as_strided``, ``_view_scatter``, ``_replace_region``; ops/views.py), as the engine reaches
``sum_to_size``: autograd imports no op.
"""

from __future__ import annotations

import math

from ..tensor import Tensor
from . import grad_mode
from .graph import Node, edge_of

INTERNAL_OVERLAP_MESSAGE = (
    "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
    "Please clone() the tensor before performing the operation."
)

_WHY_NOT_IN_PLACE = {
    "multi_output": (
        " This view is the output of a function that returns multiple views. Such functions do not allow the output "
        "views to be modified inplace. You should replace the inplace operation by an out-of-place one."
    ),
    "no_grad": (
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving "
        "both the view and the inplace either both inside the no_grad block (if you don't want the inplace to be "
        "tracked) or both outside (if you want the inplace to be tracked)."
    ),
    "inference_mode": (
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving "
        "both the view and the inplace either both inside the inference_mode block (if you don't want the inplace to "
        "be tracked) or both outside (if you want the inplace to be tracked)."
    ),
    "custom_function": (
        " This view was created inside a custom Function (or because an input was returned as-is) and the autograd "
        "logic to handle view+inplace would override the custom backward associated with the custom Function, "
        "leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the output of the "
        "custom Function."
    ),
}


def check_view_rebase(view: Tensor, indirect: bool) -> None:
    """Raise if ``view``'s history may not be rewritten (PyTorch's handle_view_on_rebase): it was made by a
    multi-output op, in no_grad or inference mode, or by a custom Function, or is a view of such a view
    (``view_creation``). ``indirect``: its base or another view was written, not the view itself."""
    creation = view._meta.creation
    if creation == "default":
        return
    node = view._grad_fn
    modified = "its base or another view of its base has been" if indirect else "is being"
    if creation in ("no_grad", "inference_mode") or node is None:
        if node is not None:
            prefix = f"Output {view._output_nr} of {_forward_name(node)} is a view of a view which was created in"
        else:
            prefix = "A view was created in"
        if creation == "inference_mode":
            message = f"{prefix} inference mode and {modified} modified inplace in normal mode."
        else:
            message = f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled."
    else:
        message = f"Output {view._output_nr} of {_forward_name(node)} is a view and {modified} modified inplace."
    raise RuntimeError(message + _WHY_NOT_IN_PLACE[creation])


def _forward_name(node: Node) -> str:
    """The forward op a node records, as PyTorch's messages name it (``SplitBackward0`` -> ``Split``)."""
    return node.name().rstrip("0123456789").removesuffix("Backward")


class CopySlices(Node):
    """The base's history after a write through one of its views (PyTorch's CopySlices).

    Backward: the gradient outside the view's region goes to the old base unchanged; inside the
    region it goes through the in-place op's backward (``fn``), whose other inputs get the rest.
    The region is described relative to a row-major tensor of the base's shape when the base is
    contiguous (the common case: one copy of the gradient), else relative to the whole storage.
    """

    def __init__(self, base: Tensor, view: Tensor, fn: Node, fn_output_nr: int, view_input: int = 0):
        super().__init__()
        self.base_shape = base._array.shape
        if base.is_contiguous():
            self.region = (view._array.shape, view.stride(), view._offset - base._offset)
            self.storage_geometry = None
        else:
            self.region = (view._array.shape, view.stride(), view._offset)
            self.storage_geometry = (len(base._storage), base._array.shape, base.stride(), base._offset)
        self.fn, self.fn_output_nr, self.view_input = fn, fn_output_nr, view_input
        edges, metas = list(fn.next_functions), list(fn._input_meta)
        edges[view_input], metas[view_input] = edge_of(base), (base._array.shape, base.dtype)
        self.next_functions, self._input_meta = tuple(edges), tuple(metas)

    def name(self) -> str:
        return "CopySlices"

    def release_saved(self) -> None:
        self.fn.release_saved()

    def wrap_grad(self, array, output_nr: int):
        return self.fn.wrap_grad(array, self.fn_output_nr)

    def _evaluate(self, grad):
        size, stride = self.region[:2]
        if self.next_functions[self.view_input][0] is not None and math.prod(size) and any(
                n > 1 and s == 0 for n, s in zip(size, stride)):
            # PyTorch copies the op's gradient into the view's region of the base's gradient: an expanded
            # region (a fill_/masked_fill_ through an expand) refuses that copy, as a write would
            raise RuntimeError(INTERNAL_OVERLAP_MESSAGE)
        whole, region_grad = self._whole_and_region(grad)
        grads = [None] * self.fn._n_outputs
        grads[self.fn_output_nr] = region_grad
        results = list(self.fn._evaluate(*grads))
        others = results[: self.view_input] + results[self.view_input + 1 :]
        inside = results[self.view_input]
        inside = inside if inside is not None else whole.new_zeros(())
        if grad_mode.state.enabled:  # create_graph: stay differentiable
            merged = whole._replace_region(inside, *self.region)
        elif _same_view(inside, region_grad):  # e.g. add_: the region's gradient passes through
            merged = whole
        else:  # one private copy of the gradient, region overwritten in place
            if not whole.is_contiguous():
                merged = whole.contiguous()  # a single-value gradient: this copy is the private one
            elif whole._storage is grad._storage or any(r is not None and r._storage is whole._storage for r in others):
                merged = whole.clone()
            else:
                merged = whole
            merged._storage.backend.as_strided(merged._array.reshape(-1), *self.region)[...] = inside._array
        if self.storage_geometry is not None:
            merged = merged.as_strided(*self.storage_geometry[1:])
        results[self.view_input] = merged
        return tuple(results)

    def _whole_and_region(self, grad):
        """The base's gradient in a layout ``region`` describes, and the view's part of it.

        A gradient with one value everywhere (what ``sum`` and ``mean`` send back) is kept as it is:
        any region of it is that value, so the base's gradient is copied only if a region is written
        (``mul_`` through a view), and that copy is private, so it needs no second clone. The region
        is filled in a fresh contiguous array: numpy's ufuncs run 3-4x slower on a stride-0 or
        strided input than on a contiguous one, and a fill costs less than that difference."""
        if self.storage_geometry is not None:
            numel, shape, stride, offset = self.storage_geometry
            whole = grad._view_scatter(numel, shape, stride, offset)
        elif _is_single_value(grad) and not grad_mode.state.enabled:
            size = self.region[0]
            return grad, grad.as_strided(size, (0,) * len(size), grad._offset).contiguous()
        else:
            whole = grad.contiguous()
        return whole, region_of(whole, *self.region)


def region_of(t: Tensor, size, stride, offset) -> Tensor:
    """The strided window ``(size, stride, offset)`` of ``t``'s elements in row-major order, with
    ``offset`` counted from ``t``'s own first element (``t`` may itself be an offset view)."""
    if not t.is_contiguous():
        t = t.contiguous()
    return t.as_strided(size, stride, t._offset + offset)


def _is_single_value(t: Tensor) -> bool:
    """Whether every element of ``t`` is one memory location (an expanded scalar)."""
    return all(s == 0 or n == 1 for n, s in zip(t._array.shape, t.stride()))


def _same_view(t: Tensor, view: Tensor) -> bool:
    """Whether ``t`` is exactly the window ``view`` shows of the same memory."""
    return (
        t._storage is view._storage and t._array.shape == view._array.shape and t.stride() == view.stride()
        and t._offset == view._offset
    )


def rebase_base_through_view(view: Tensor, node: Node, output_nr: int, view_input: int = 0) -> None:
    """After ``node`` wrote into ``view`` (its input ``view_input``): the base's history becomes CopySlices."""
    base = view._meta.base
    copy_slices = CopySlices(base, view, node, output_nr, view_input)
    base._grad_fn = copy_slices
    base._output_nr = 0
    base._requires_grad = True
    refresh_view_grad_fn(view)


def refresh_view_grad_fn(view: Tensor) -> None:
    """Rebuild a stale view's history as an as_strided view of its base's current history (after the
    checks of ``check_view_rebase``: a view whose history may not be rewritten raises instead)."""
    meta = view._meta
    base = meta.base
    if view._grad_fn is None and not base._requires_grad:
        meta.view_version = view._storage.version
        return
    check_view_rebase(view, indirect=True)
    meta.view_version = view._storage.version
    if not base._requires_grad:
        view._grad_fn = None
        return
    source = base
    if base._storage.dtype is not view._storage.dtype:  # a view of the complex base's memory as real pairs
        if not base._storage.dtype.is_complex:
            raise RuntimeError("minitorch cannot rebuild the history of a view_as_complex view whose base was written")
        with grad_mode.enable_grad():
            source = base.view_as_real()
    with grad_mode.enable_grad():
        fresh = source.as_strided(view._array.shape, view.stride(), view._offset)
    view._grad_fn = fresh._grad_fn
    view._output_nr = 0
    view._requires_grad = True


def grad_fn(self: Tensor):
    """``Tensor.grad_fn``: the node that produced this tensor. A view whose storage was written since its
    grad_fn was set gets a fresh one built from its base's current history (PyTorch's stale-view rule)."""
    meta = self._meta
    if meta is not None and meta.base is not None and meta.view_version != self._storage.version:
        refresh_view_grad_fn(self)
    return self._grad_fn


def set_grad_fn(self: Tensor, node) -> None:
    self._grad_fn = node
