"""Pictures for notebooks: the autograd graph behind a tensor, how a view maps onto its storage, and
backward step by step (``graph``, ``storage`` and ``trace`` here; ``_drawing`` holds what they share).

All return a :class:`Drawing`, which Jupyter shows inline through ``_repr_svg_``. minitorch writes the
SVG itself (a small layered layout), so no Graphviz or other system package is needed; graph drawings
also offer ``to_dot()`` for people who have Graphviz. Output is deterministic: the same graph gives
the same text, so drawings can be compared in tests.
"""

from ._drawing import Drawing, GraphDrawing
from .graph import draw_graph, to_dot
from .storage import draw_storage
from .trace import BackwardStep, BackwardTrace, trace_backward

__all__ = ["BackwardStep", "BackwardTrace", "Drawing", "GraphDrawing", "draw_graph", "draw_storage", "to_dot",
           "trace_backward"]
