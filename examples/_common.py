"""Helpers the example scripts share: the bundled digits data, command-line flags, checkpoints, loss curves.

Everything here is ordinary user code: the scripts would read the same with ``import torch``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import minitorch as torch
import minitorch.nn as nn
from minitorch.utils.data import DataLoader, TensorDataset, bundled

DATA_DIR = Path(__file__).resolve().parent / "data"
RUNS_DIR = Path(__file__).resolve().parent / "runs"


def base_parser(description: str, epochs: int, lr: float, batch_size: int) -> argparse.ArgumentParser:
    """The flags every example takes; scripts add their own."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default: cpu)")
    parser.add_argument("--epochs", type=int, default=epochs, help=f"passes over the training data (default: {epochs})")
    parser.add_argument("--seed", type=int, default=0, help="seed for weights, shuffling and dropout (default: 0)")
    parser.add_argument("--lr", type=float, default=lr, help=f"learning rate (default: {lr})")
    parser.add_argument("--batch-size", type=int, default=batch_size, help=f"(default: {batch_size})")
    parser.add_argument("--max-steps", type=int, default=None, help="stop after this many optimizer steps")
    parser.add_argument("--out-dir", type=Path, default=RUNS_DIR, help="where the checkpoint and the loss curve go")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (plain log lines only)")
    parser.add_argument("--tensorboard", type=Path, default=None, metavar="DIR",
                        help="also write the run (losses, flags and results, the model's graph) as TensorBoard event "
                             "files into DIR: view with `tensorboard --logdir DIR`")
    return parser


def load_digits(seed: int = 0, test_fraction: float = 0.2):
    """The 8x8 digits (``minitorch.utils.data.bundled``), standardized: (x_train, y_train, x_test, y_test).

    The split is a fixed permutation from ``seed``; mean and standard deviation come from the training
    images only, so nothing about the test set leaks into the inputs.
    """
    images, labels = (t.numpy() for t in bundled.load_digits())  # shipped inside the package
    images = images.astype(np.float32)
    order = np.random.default_rng(seed).permutation(len(labels))
    n_test = int(round(len(labels) * test_fraction))
    test, train = order[:n_test], order[n_test:]
    mean = images[train].mean(axis=0)
    std = images[train].std(axis=0)
    std[std == 0] = 1.0  # pixels that are blank in every training image stay 0
    images = (images - mean) / std
    return (torch.from_numpy(images[train]), torch.from_numpy(labels[train]),
            torch.from_numpy(images[test]), torch.from_numpy(labels[test]))


def train_loader(x: torch.Tensor, y: torch.Tensor, batch_size: int, seed: int) -> DataLoader:
    """Shuffled mini-batches whose order depends only on ``seed``."""
    generator = torch.Generator().manual_seed(seed)
    return DataLoader(TensorDataset(x, y), batch_size=batch_size, shuffle=True, generator=generator)


@torch.no_grad()
def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor, device, batch_size: int = 512) -> float:
    """Fraction of ``x`` that ``model`` classifies as ``y`` (eval mode, no graph)."""
    was_training = model.training
    model.eval()
    correct = 0
    for start in range(0, len(y), batch_size):
        logits = model(x[start:start + batch_size].to(device))
        correct += (logits.argmax(dim=1).cpu() == y[start:start + batch_size]).sum().item()
    model.train(was_training)
    return correct / len(y)


def checkpoint_round_trip(model: nn.Module, fresh: nn.Module, path: Path, evaluate) -> tuple[float, float]:
    """Save ``model``'s state dict, load it into the untrained ``fresh`` copy, and evaluate both.

    Returns (score of model, score of fresh after loading); a faithful checkpoint gives the same number.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), path)
    fresh.load_state_dict(torch.load(path))
    return evaluate(model), evaluate(fresh)


def export_onnx(model: nn.Module, example: torch.Tensor, path: Path, x: torch.Tensor, y: torch.Tensor) -> float:
    """Export ``model`` to ``path`` with a dynamic batch dim, run it in onnxruntime on ``x`` and return its
    accuracy on ``y`` (the same number as ``accuracy`` when the export is faithful)."""
    import onnxruntime  # the onnx extra: pip install -e ".[onnx]"

    path.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(model, (example,), str(path), input_names=["images"], output_names=["logits"],
                      dynamic_axes={"images": {0: "batch"}, "logits": {0: "batch"}}, dynamo=False)
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (logits,) = session.run(None, {"images": x.cpu().numpy()})
    return (torch.from_numpy(logits).argmax(dim=1) == y.cpu()).sum().item() / len(y)


PLOT_HINT = "pip install -e '.[plot]'"


def save_loss_curve(losses: list[float] | dict[str, list[float]], path: Path, title: str) -> Path | None:
    """Write the per-step training loss (one curve, or one per label) as a PNG when matplotlib is installed.

    Without matplotlib it prints one line saying how to get the plot, so a missing picture is never a mystery.
    """
    try:
        import matplotlib  # optional: the ``plot`` extra

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FormatStrFormatter, FuncFormatter
    except ImportError:
        print(f"no loss curve: matplotlib is not installed ({PLOT_HINT} to get {path.name})")
        return None
    curves = losses if isinstance(losses, dict) else {None: losses}
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, values in curves.items():
        ax.plot(values, linewidth=0.8, label=label)
    ax.set_xlabel("step")
    ax.set_ylabel("training loss")
    ax.set_yscale("log")
    # plain numbers (0.01, 0.1, 1) on the log axis, not 10^-2 and 10^-1; within about one decade, where
    # fewer than two powers of ten show, the in-between ticks 2, 3 and 5 get labels as well
    low, high = ax.get_ylim()
    few_decades = high / low < 30
    ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(FuncFormatter(
        lambda v, _: f"{v:g}" if few_decades and f"{v:.0e}"[0] in "235" else ""))
    ax.set_title(title)
    if len(curves) > 1:
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


TENSORBOARD_HINT = "pip install -e '.[tensorboard]'"


def log_to_tensorboard(log_dir: Path | None, losses: list[float] | dict[str, list[float]], flags, results: dict,
                       model: nn.Module | None = None, example_input=None) -> Path | None:
    """Write the per-step training loss (``train/loss``, or ``train/loss/<label>`` per curve), the run's flags
    and its final ``results`` (HParams tab) and, given an example input, the model's graph into ``log_dir``.

    Does nothing without ``--tensorboard``; without the tensorboard package it prints how to get it."""
    if log_dir is None:
        return None
    try:
        from minitorch.utils.tensorboard import SummaryWriter  # optional: the ``tensorboard`` extra
    except ImportError:
        print(f"no TensorBoard logs: tensorboard is not installed ({TENSORBOARD_HINT})")
        return None
    curves = losses if isinstance(losses, dict) else {None: losses}
    hparams = {k: v for k, v in vars(flags).items()
               if k in ("lr", "batch_size", "epochs", "seed", "max_steps") and v is not None}
    with SummaryWriter(log_dir) as writer:
        for label, values in curves.items():
            for step, value in enumerate(values):
                writer.add_scalar("train/loss" if label is None else f"train/loss/{label}", value, step)
        if model is not None and example_input is not None:
            writer.add_graph(model, example_input)
        writer.add_hparams(hparams, {f"result/{k}": v for k, v in results.items()}, run_name="hparams")
    print(f"TensorBoard logs: {log_dir} (tensorboard --logdir {log_dir})")
    return log_dir


class Timer:
    """Wall-clock seconds of a ``with`` block (``seconds``), and the CPU seconds this process spent in it
    (``cpu_seconds``: what a benchmark on a shared machine compares, less disturbed by other processes)."""

    def __enter__(self) -> Timer:
        self.start, self.cpu_start = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc) -> None:
        self.seconds = time.perf_counter() - self.start
        self.cpu_seconds = time.process_time() - self.cpu_start
