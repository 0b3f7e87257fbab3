"""Real training scripts with and without ``--compile``, in one process, taking turns: the seconds of the
training loop (the script's own timer, traces included: wall-clock and this process's CPU time, the latter less
disturbed by other processes on a shared machine), and a check that both runs give the same losses bit for bit.
``--compile`` means ``torch.compile(model)`` for the training forward and a compiled optimizer step.

    python -m benchmarks.compile_training                          # train_mlp.py: 5 turns of 5 epochs each
    python -m benchmarks.compile_training --turns 3 --epochs 10
    python -m benchmarks.compile_training --script train_cnn --epochs 3
    python -m benchmarks.compile_training --script char_transformer --steps 100
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
from pathlib import Path

import minitorch

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load_example(name: str):
    """examples/<name>.py as a module (it imports its sibling ``_common``)."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        spec = importlib.util.spec_from_file_location(f"{name}_benchmark", EXAMPLES / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(EXAMPLES))
    return module


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--script", choices=("train_mlp", "train_cnn", "char_transformer"), default="train_mlp")
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=5, help="train_mlp's and train_cnn's epochs per run")
    parser.add_argument("--steps", type=int, default=100, help="char_transformer's steps per run")
    args = parser.parse_args(argv)
    minitorch.set_num_threads(1)
    script = load_example(args.script)
    if args.script in ("train_mlp", "train_cnn"):
        flags, what = ["--epochs", str(args.epochs)], f"{args.epochs} epochs"
    else:
        flags = ["--max-steps", str(args.steps), "--sample-every", str(10 * args.steps), "--sample-length", "10"]
        what = f"{args.steps} steps"
    seconds: dict = {"eager": [], "compiled": []}
    cpu: dict = {"eager": [], "compiled": []}
    losses: dict = {}
    with tempfile.TemporaryDirectory() as out:
        for _ in range(args.turns):
            for name, extra in (("eager", []), ("compiled", ["--compile"])):
                result = script.main([*flags, "--no-progress", "--out-dir", out, *extra])
                seconds[name].append(result["seconds"])
                cpu[name].append(result["cpu_seconds"])
                losses[name] = result["losses"]
    print(f"\n{args.script}.py, {what}, {args.turns} turns; the same losses: {losses['eager'] == losses['compiled']}")
    for label, times in (("wall-clock", seconds), ("CPU", cpu)):
        ratios = [c / e for c, e in zip(times["compiled"], times["eager"])]
        print(f"  {label}: eager {statistics.median(times['eager']):.2f} s, compiled "
              f"{statistics.median(times['compiled']):.2f} s (medians); compiled / eager per turn "
              f"{', '.join(f'{r:.2f}' for r in ratios)}, median {statistics.median(ratios):.2f}")
        print(f"    per turn, eager: {', '.join(f'{t:.2f}' for t in times['eager'])}; compiled: "
              f"{', '.join(f'{t:.2f}' for t in times['compiled'])}")


if __name__ == "__main__":
    main()
