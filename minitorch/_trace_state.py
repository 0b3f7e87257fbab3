"""The one switch the compiler's tracer reads outside its own package (minitorch.compile, compiler/tracer.py).

While ``minitorch.compile`` traces a function's first call, ``tracer`` is the active tracer; the few places
that let a value leave the traced ops (``item()``, ``tolist()``, ``numpy()``, printing a tensor) or make a
tensor from Python values (the factories) tell it, so that it can end the trace there (a graph break) or
record the tensor as a constant. Op dispatch reads its own class attribute, ``Op._tracer``, instead.
"""

from __future__ import annotations

tracer = None  # the active compiler Tracer, or None (nearly always)


def data_read(tensor, what: str) -> None:
    """A tensor's values were read into Python while tracing: the trace cannot replay that."""
    if tracer is not None:
        tracer.data_read(tensor, what)


def factory(tensor) -> None:
    """A factory made ``tensor`` from Python values while tracing (a constant of the trace)."""
    if tracer is not None:
        tracer.factory(tensor)


def backward_called() -> None:
    """The engine was asked for gradients while tracing (``backward()`` inside the compiled function)."""
    if tracer is not None:
        tracer.backward_called()


def detached(tensor, alias) -> None:
    """``alias = tensor.detach()`` while tracing (the trace records it as a view without history)."""
    if tracer is not None:
        tracer.detached(tensor, alias)


def random_fill(tensor, redraw, fill):
    """``fill()`` writes ``tensor`` with values drawn from the default generator; ``redraw()`` draws the same
    number of values again (the next ones of the stream) as an array of ``tensor``'s shape. A compiled plan
    replays the draw with it instead of treating the tensor as one it cannot make."""
    if tracer is not None:
        return tracer.random_fill(tensor, redraw, fill)
    return fill()
