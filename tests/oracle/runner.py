"""Run a range of seeds: generate (in PyTorch), compare (in minitorch), shrink failures, group them."""

import collections
import traceback
import warnings

import torch

import minitorch

from .pending import known_outcome
from .program import compare, generate
from .shrink import report, shrink

# Outcome flags counted over a run: each is a narrow, explicit allowance (see program.py)
COUNTED = ("diverged", "zero_dependence", "partial_write", "unimplemented_in_pytorch", "layout_inherited",
           "float32_rounding", "overlapping_write",
           "gelu_of_inf", "forward_rounding", "empty_structure")


def compare_generated(prog, ns):
    """``compare`` against the PyTorch run made while generating. That run also did the generator's own reads,
    which can change PyTorch's state (reading a stale view's grad_fn rebuilds it: seed 380803), so a
    disagreement counts only if a plain PyTorch run of the program repeats it."""
    out = compare(prog, torch, minitorch, ns)
    if out.failure:
        fresh = compare(prog, torch, minitorch)
        if fresh.failure is None:
            return fresh
    return out


def run_one(seed, dtype=None, pending=True, do_shrink=True):
    """(program, outcome) for one seed, the program shrunk when it fails."""
    prog, ns = generate(torch, seed, dtype, pending)
    out = compare_generated(prog, ns)
    if out.failure and do_shrink:
        prog, out = shrink(prog, out, torch, minitorch)
    return prog, out


def group_key(prog, out):
    """A failure's cause: where and what differs, and the ops of its shrunk program."""
    ops = sorted({s.op for s in prog.steps})
    return f"{out.key}: {out.failure.split(':')[0][:60]} [{', '.join(ops)}]"


def run_range(lo, hi, dtype=None, pending=True, shrink_per_group=2):
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    failures = collections.defaultdict(list)
    shrunk = collections.Counter()
    counts = collections.Counter()
    ran = 0
    for seed in range(lo, hi):
        try:
            prog, ns = generate(torch, seed, dtype, pending)
            out = compare_generated(prog, ns)
        except Exception as e:  # noqa: BLE001 - a harness error is reported, not fatal to the run
            failures[f"harness error {type(e).__name__}"].append((seed, f"seed {seed}: {traceback.format_exc()}"))
            continue
        ran += 1
        for flag in COUNTED:
            counts[flag] += bool(getattr(out, flag))
        if not out.failure:
            continue
        defect = known_outcome(prog, out, ns) if pending else None
        if defect:
            counts["pending: " + defect] += 1
            continue
        raw = f"{out.key}: {out.failure.split(':')[0][:60]}"
        if shrunk[raw] < shrink_per_group:  # shrinking costs ~100 runs: a few per raw cause are enough
            shrunk[raw] += 1
            prog, out = shrink(prog, out, torch, minitorch)
            failures[group_key(prog, out)].append((seed, report(prog, out)))
        else:
            failures[raw + " [not shrunk]"].append((seed, f"seed {seed}: not shrunk (same cause as above)"))
    return {"ran": ran, "counts": counts, "failures": dict(failures)}
