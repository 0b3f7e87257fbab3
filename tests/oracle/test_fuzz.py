"""The CI slice of the differential fuzzer: a fixed set of seeds, float64 and float32 programs.

Every program runs in PyTorch and in minitorch and must agree (see program.py); a failing chunk prints each
failure shrunk to a paste-able program. The long run is `python -m tests.oracle --programs N --jobs 2`.
Skipped when PyTorch is not installed (the README's test command runs without it).
"""

import pytest

pytest.importorskip("torch")

from .runner import run_range  # noqa: E402

SEEDS_PER_CHUNK = 50
CHUNKS = 6  # x 2 dtypes x 50 = 600 programs


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_random_programs_agree_with_pytorch(chunk, dtype):
    lo = 1_000_000 + chunk * SEEDS_PER_CHUNK
    result = run_range(lo, lo + SEEDS_PER_CHUNK, dtype)
    failures = [text for items in result["failures"].values() for _, text in items]
    assert not failures, "\n\n".join([f"{len(failures)} of {result['ran']} programs disagree:"] + failures)


def test_the_fuzzer_catches_a_wrong_gradient(monkeypatch):
    """The harness can fail: a wrong derivative planted in minitorch's sin is caught and shrunk."""
    import minitorch

    from .program import generate
    from .runner import run_one

    real_sin = minitorch.Tensor.sin

    def wrong_sin(self):
        return real_sin(self * 1.0) if not self.requires_grad else real_sin(self.detach()) + (self - self.detach()) * 2

    monkeypatch.setattr(minitorch.Tensor, "sin", wrong_sin)
    import torch

    for seed in range(2000):
        prog, _ = generate(torch, seed, "float64")
        if any(s.op == "Tensor.sin" for s in prog.steps) and any(lf.requires_grad for lf in prog.leaves):
            prog, out = run_one(seed, "float64")
            if out.failure:
                assert out.check in ("grad", "grad create_graph", "gradgrad", "value")
                assert "Tensor.sin" in {s.op for s in prog.steps} and len(prog.steps) <= 3
                assert "import torch" in prog.source("torch")
                return
    pytest.fail("no program with a differentiable Tensor.sin failed")


def test_gradients_that_differ_by_forward_rounding_are_rechecked_on_minitorchs_values():
    """Seed 170491: logaddexp2(-1., -1.) is 0 in minitorch and 1e-7 in PyTorch, and selu's second derivative then
    takes another branch. Rerun on minitorch's forward values, PyTorch agrees (counted as forward_rounding);
    a gradient that is wrong is still caught (test_the_fuzzer_catches_a_wrong_gradient)."""
    from .runner import run_one

    _, out = run_one(170491, do_shrink=False)
    assert out.failure is None and out.forward_rounding
