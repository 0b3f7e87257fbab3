"""How many modes that must see every op are on: the one number the fast paths read instead of each mode's flag.

Named tensors, forward AD, saved-tensor hooks, anomaly mode, the compiler's tracer, the profiler and the ONNX
exporter each change what an op does or records. Each keeps its own state, and also counts itself here while it is
on (``hold(True)`` on the way in, ``hold(False)`` on the way out, only on real changes of its state), so the fast
paths of ops/fast_path.py check one module attribute: while ``holds`` is not zero every op takes the general path.
The count is over all threads: a mode on in one thread only makes the others take the (correct) general path too.
"""

from __future__ import annotations

import threading

holds = 0  # modes on, in every thread
_lock = threading.Lock()


def hold(on: bool) -> None:
    """A mode turned on (``on``) or off."""
    global holds
    with _lock:
        holds += 1 if on else -1
