"""``examples/train_mlp.py`` with and without ``--compile``, in one process, taking turns: the seconds of the
training loop (the script's own timer), and a check that both runs give the same losses bit for bit.

    python -m benchmarks.compile_training            # 5 turns of 5 epochs each
    python -m benchmarks.compile_training --turns 3 --epochs 10
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


def _train_mlp():
    """examples/train_mlp.py as a module (it imports its sibling ``_common``)."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        spec = importlib.util.spec_from_file_location("train_mlp_benchmark", EXAMPLES / "train_mlp.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(EXAMPLES))
    return module


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args(argv)
    minitorch.set_num_threads(1)
    script = _train_mlp()
    seconds: dict = {"eager": [], "compiled": []}
    losses: dict = {}
    with tempfile.TemporaryDirectory() as out:
        for _ in range(args.turns):
            for name, flags in (("eager", []), ("compiled", ["--compile"])):
                result = script.main(["--epochs", str(args.epochs), "--no-progress", "--out-dir", out, *flags])
                seconds[name].append(result["seconds"])
                losses[name] = result["losses"]
    ratios = [c / e for c, e in zip(seconds["compiled"], seconds["eager"])]
    eager = statistics.median(seconds["eager"])
    print(f"\ntrain_mlp.py, {args.epochs} epochs, {args.turns} turns: eager {eager:.2f} s, "
          f"compiled {statistics.median(seconds['compiled']):.2f} s (medians); compiled / eager per turn "
          f"{', '.join(f'{r:.2f}' for r in ratios)}, median {statistics.median(ratios):.2f}; the same losses: "
          f"{losses['eager'] == losses['compiled']}")


if __name__ == "__main__":
    main()
