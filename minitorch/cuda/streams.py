"""CUDA streams and events (CuPy's, wrapped in PyTorch's API).

Without a GPU, constructing one raises what CPU-only PyTorch raises (RuntimeError), ``current_stream()``
raises its AssertionError, and ``with minitorch.cuda.stream(None):`` is a no-op, as in PyTorch.
"""

from __future__ import annotations

from .._backends import cuda_device
from .util import device_index, require_cuda


def _current_index(device) -> int:
    index = device_index(device, optional=True) if device is not None else -1
    return index if index >= 0 else cuda_device.current_device()


class Stream:
    """A queue of GPU work; kernels queued on one stream run in order."""

    def __init__(self, device=None, priority: int = 0, **kwargs) -> None:
        if cuda_device.device_count() == 0:
            raise RuntimeError("torch.cuda.Stream requires CUDA support")
        self.device_index = _current_index(device)
        self.cupy_stream = kwargs.get("_cupy_stream") or cuda_device.new_stream(self.device_index, priority)

    def synchronize(self) -> None:
        self.cupy_stream.synchronize()

    def query(self) -> bool:
        """Whether all work queued on this stream has finished."""
        return self.cupy_stream.done

    def wait_event(self, event: Event) -> None:
        self.cupy_stream.wait_event(event.cupy_event)

    def wait_stream(self, stream: Stream) -> None:
        self.wait_event(stream.record_event())

    def record_event(self, event: Event | None = None) -> Event:
        event = event if event is not None else Event()
        event.record(self)
        return event

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and self.cupy_stream.ptr == other.cupy_stream.ptr

    def __hash__(self) -> int:
        return hash(self.cupy_stream.ptr)

    def __repr__(self) -> str:
        return f"<minitorch.cuda.Stream device=cuda:{self.device_index} cuda_stream={self.cupy_stream.ptr:#x}>"


class Event:
    """A marker in a stream: wait for it, or time the work between two of them (``enable_timing=True``)."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> None:
        if cuda_device.device_count() == 0:
            raise RuntimeError("Tried to instantiate dummy base class Event")  # CPU-only PyTorch's words
        self.cupy_event = cuda_device.new_event(enable_timing, blocking, interprocess)

    def record(self, stream: Stream | None = None) -> None:
        self.cupy_event.record((stream or current_stream()).cupy_stream)

    def wait(self, stream: Stream | None = None) -> None:
        (stream or current_stream()).wait_event(self)

    def query(self) -> bool:
        return self.cupy_event.done

    def synchronize(self) -> None:
        self.cupy_event.synchronize()

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds between this event and ``end_event`` (both recorded, with ``enable_timing=True``)."""
        return cuda_device.elapsed_ms(self.cupy_event, end_event.cupy_event)


def current_stream(device=None) -> Stream:
    require_cuda()
    index = _current_index(device)
    return Stream(index, _cupy_stream=cuda_device.current_stream(index))


def default_stream(device=None) -> Stream:
    require_cuda()
    return Stream(_current_index(device), _cupy_stream=cuda_device.null_stream())


class StreamContext:
    """``with minitorch.cuda.stream(s):`` queues the block's GPU work on ``s``; ``None`` changes nothing."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream

    def __enter__(self) -> Stream | None:
        if self.stream is not None:
            self.stream.cupy_stream.__enter__()
        return self.stream

    def __exit__(self, *exc) -> None:
        if self.stream is not None:
            self.stream.cupy_stream.__exit__(*exc)


def stream(stream: Stream | None) -> StreamContext:
    return StreamContext(stream)
