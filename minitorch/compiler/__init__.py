"""``minitorch.compiler`` (PyTorch's ``torch.compiler``) and the machinery behind ``minitorch.compile``.

tracer.py records a first call's ops through one hook in dispatch; guards.py keys the plan cache; plan.py
replays a plan on arrays; backward.py is the one graph node a replayed call records; fusion.py runs chains of
elementwise ops as one pass into reused buffers; explain.py prints a plan. docs/compile.md walks through it.
"""

from .api import OptimizedModule, compile, disable, is_compiling, reset
from .errors import Unsupported

__all__ = ["OptimizedModule", "Unsupported", "compile", "disable", "is_compiling", "reset"]
