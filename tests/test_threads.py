"""Threads: grad mode and inference mode are thread-local (as in PyTorch), and backward on separate graphs
runs concurrently with the same results as serially.

Every thread is joined with a timeout and every barrier has one, so a bug fails a test instead of hanging it.
"""

from __future__ import annotations

import sys
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch as torch

TIMEOUT = 30.0


def run_threads(*targets):
    """Run each target in its own thread; re-raise the first exception a thread raised."""
    errors = []

    def guarded(target):
        def run():
            try:
                target()
            except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
                errors.append(exc)

        return run

    threads = [threading.Thread(target=guarded(t), daemon=True) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
        assert not t.is_alive(), "a thread did not finish in time"
    if errors:
        raise errors[0]


def in_new_thread(fn):
    """``fn()`` evaluated in a fresh thread."""
    result = []
    run_threads(lambda: result.append(fn()))
    return result[0]


@pytest.fixture
def fast_switching():
    """Switch threads every 10 µs, so that threads really interleave between ops."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(previous)


def modes():
    return torch.is_grad_enabled(), torch.is_inference_mode_enabled(), records()


def records() -> bool:
    y = torch.ones(2, requires_grad=True) * 2
    assert y.requires_grad == (y.grad_fn is not None)
    return y.requires_grad


@pytest.mark.parametrize(
    "make",
    [torch.no_grad, lambda: torch.set_grad_enabled(False), torch.inference_mode, lambda: torch.inference_mode(True)],
)
def test_new_threads_start_with_grad_enabled(make):
    with make():
        assert not torch.is_grad_enabled()
        assert in_new_thread(modes) == (True, False, True)
    assert modes() == (True, False, True)


def test_set_grad_enabled_as_a_call_stays_in_its_thread():
    def switch_off():
        torch.set_grad_enabled(False)
        assert modes() == (False, False, False)

    run_threads(switch_off)
    assert modes() == (True, False, True)
    torch.set_grad_enabled(False)
    try:
        assert in_new_thread(modes) == (True, False, True)
    finally:
        torch.set_grad_enabled(True)


def test_no_grad_in_one_thread_does_not_affect_another():
    entered, checked = threading.Event(), threading.Event()
    seen = {}

    def in_no_grad():
        with torch.no_grad():
            entered.set()
            assert checked.wait(TIMEOUT)
            seen["no_grad thread"] = modes()

    def recording():
        assert entered.wait(TIMEOUT)
        seen["other thread"] = modes()
        checked.set()

    run_threads(in_no_grad, recording)
    assert seen == {"no_grad thread": (False, False, False), "other thread": (True, False, True)}


def test_inference_tensor_made_in_another_thread_is_an_inference_tensor():
    made = in_new_thread(lambda: _make_in_inference_mode())
    assert made.is_inference() and not torch.is_inference_mode_enabled()


def _make_in_inference_mode():
    with torch.inference_mode():
        return torch.ones(2) * 2


# A mode step: ("ctx", factory) enters a context manager for the following steps; ("call", flag) is a plain
# set_grad_enabled(flag) call, which lasts until the enclosing context exits; ("exit", None) leaves the innermost.
CONTEXTS = {
    "no_grad": (torch.no_grad, lambda g, i: (False, i)),
    "enable_grad": (torch.enable_grad, lambda g, i: (True, i)),
    "set_grad_enabled(False)": (lambda: torch.set_grad_enabled(False), lambda g, i: (False, i)),
    "set_grad_enabled(True)": (lambda: torch.set_grad_enabled(True), lambda g, i: (True, i)),
    "inference_mode()": (torch.inference_mode, lambda g, i: (False, True)),
    "inference_mode(False)": (lambda: torch.inference_mode(False), lambda g, i: (True, False)),
}
step = st.one_of(
    st.tuples(st.just("ctx"), st.sampled_from(sorted(CONTEXTS))),
    st.tuples(st.just("call"), st.booleans()),
    st.just(("exit", None)),
)


def expected_modes(steps):
    """The (grad, inference) state seen after each step, run alone in one thread."""
    state, stack, seen = (True, False), [], []
    for kind, arg in steps:
        if kind == "ctx":
            stack.append(state)
            state = CONTEXTS[arg][1](*state)
        elif kind == "call":
            state = (arg, state[1])
        elif stack:
            state = stack.pop()
        seen.append(state)
    return seen


def run_steps(steps, barrier, seen):
    """Apply ``steps`` in this thread, waiting at ``barrier`` after each so that all threads go in lockstep."""
    stack = []
    try:
        for kind, arg in steps:
            if kind == "ctx":
                context = CONTEXTS[arg][0]()
                context.__enter__()
                stack.append(context)
            elif kind == "call":
                torch.set_grad_enabled(arg)
            elif stack:
                stack.pop().__exit__(None, None, None)
            barrier.wait(TIMEOUT)  # every thread has made its step: now each reads its own state
            seen.append((torch.is_grad_enabled(), torch.is_inference_mode_enabled()))
            barrier.wait(TIMEOUT)
    except BaseException:
        barrier.abort()  # the other threads stop waiting at once
        raise
    finally:
        while stack:
            stack.pop().__exit__(None, None, None)


@given(st.lists(st.lists(step, min_size=1, max_size=8), min_size=2, max_size=4))
def test_each_thread_sees_only_its_own_modes(programs):
    length = max(len(p) for p in programs)
    padded = [p + [("exit", None)] * (length - len(p)) for p in programs]  # lockstep needs equal lengths
    barrier = threading.Barrier(len(padded))
    seen = [[] for _ in padded]
    run_threads(*[lambda p=p, s=s: run_steps(p, barrier, s) for p, s in zip(padded, seen)])
    assert seen == [expected_modes(p) for p in padded]
    assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()


def test_recording_thread_is_unaffected_by_backward_in_another(fast_switching):
    """The engine turns grad mode off while it runs backward: only in its own thread."""
    stop = threading.Event()

    def backward_loop():
        x = torch.randn(3, requires_grad=True)
        try:
            for _ in range(200):
                (x.tanh() * x).sum().backward()
        finally:
            stop.set()

    def record_loop():
        while not stop.is_set():
            assert records()

    run_threads(backward_loop, record_loop)


def graph_grads(seed: int):
    """First and second derivatives of a small graph with views, in-place ops and a matmul."""
    gen = torch.Generator().manual_seed(seed)
    w = torch.randn(4, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    x = torch.randn(5, 4, generator=gen, dtype=torch.float64, requires_grad=True)
    h = (x @ w).tanh()
    h = h.clone()
    h[1:3].mul_(2.0)
    loss = (h.t()[0] * h[:, 1]).sum() + h.exp().mean()
    (gw,) = torch.autograd.grad(loss, w, create_graph=True)
    gw.pow(2).sum().backward()
    return [t.detach().clone() for t in (gw, w.grad, x.grad)]


def test_concurrent_backward_on_separate_graphs_matches_serial(fast_switching):
    seeds = list(range(4))
    serial = {s: [graph_grads(s) for _ in range(3)] for s in seeds}
    concurrent = {s: [] for s in seeds}
    barrier = threading.Barrier(len(seeds))

    def work(s):
        barrier.wait(TIMEOUT)
        for _ in range(3):
            concurrent[s].append(graph_grads(s))

    run_threads(*[lambda s=s: work(s) for s in seeds])
    for s in seeds:
        for expected, got in zip(serial[s], concurrent[s], strict=True):
            for e, g in zip(expected, got, strict=True):
                torch.testing.assert_close(g, e, rtol=0, atol=0)


def test_concurrent_backward_with_one_thread_in_no_grad(fast_switching):
    """One thread evaluates under no_grad while another trains: the trainer's gradients are the serial ones."""
    expected = graph_grads(7)
    stop = threading.Event()
    got = []

    def evaluate():
        with torch.no_grad():
            while not stop.is_set():
                assert not (torch.ones(2, requires_grad=True) * 2).requires_grad

    def train():
        try:
            for _ in range(5):
                got.append(graph_grads(7))
        finally:
            stop.set()

    run_threads(evaluate, train)
    for grads in got:
        for e, g in zip(expected, grads, strict=True):
            torch.testing.assert_close(g, e, rtol=0, atol=0)
