"""Train a small convolutional network on the bundled 8x8 handwritten digits.

    python examples/train_cnn.py

Two 3x3 convolutions with ReLU, a 2x2 max-pool and two linear layers, trained with Adam and a cosine
learning-rate schedule. It reaches about 98-99% test accuracy; the checkpoint is saved, reloaded into a
fresh network and checked to give the same accuracy. With ``--compile`` the model and Adam's step run through
``torch.compile``: the same losses and weights, bit for bit.
"""

from __future__ import annotations

import _common  # examples/_common.py: data, flags, checkpoint and plotting helpers

import minitorch as torch
import minitorch.nn as nn
from minitorch.utils.progress import progress


class DigitsCNN(nn.Module):
    def __init__(self, channels: int = 16, dropout: float = 0.2):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, channels, kernel_size=3, padding=1), nn.ReLU(),         # 8x8
            nn.Conv2d(channels, 2 * channels, kernel_size=3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2),                                                      # 4x4
        )
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Dropout(dropout),
            nn.Linear(2 * channels * 4 * 4, 64), nn.ReLU(),
            nn.Linear(64, 10),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x.view(-1, 1, 8, 8)))


def main(argv: list[str] | None = None) -> dict:
    parser = _common.base_parser(__doc__.splitlines()[0], epochs=20, lr=2e-3, batch_size=64)
    parser.add_argument("--channels", type=int, default=16, help="channels of the first convolution (default: 16)")
    parser.add_argument("--compile", action="store_true",
                        help="train through torch.compile(model) and a compiled Adam step (the same losses and "
                             "weights, faster)")
    args = parser.parse_args(argv)

    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    x_train, y_train, x_test, y_test = _common.load_digits()
    loader = _common.train_loader(x_train, y_train, args.batch_size, args.seed)
    print(f"digits: {len(y_train)} training and {len(y_test)} test images; device {device}")

    model = DigitsCNN(args.channels).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs * len(loader))
    loss_fn = nn.CrossEntropyLoss()
    print(model)
    # --compile: forward (dropout included) and backward replay one compiled plan, the evaluation another; Adam's
    # update replays its ufunc calls. ``model`` stays the plain module (its state_dict keys have no prefix).
    net = torch.compile(model) if args.compile else model
    optimizer_step = torch.compile(optimizer.step) if args.compile else optimizer.step

    losses: list[float] = []
    with _common.Timer() as timer, progress(range(1, args.epochs + 1), desc="training", unit="epoch",
                                            disable=args.no_progress or None) as bar:
        for epoch in bar:
            model.train()
            first_step = len(losses)
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                loss = loss_fn(net(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer_step()
                scheduler.step()
                losses.append(loss.item())
                if args.max_steps is not None and len(losses) >= args.max_steps:
                    break
            epoch_loss = sum(losses[first_step:]) / (len(losses) - first_step)
            test_accuracy = _common.accuracy(net, x_test, y_test, device)
            bar.set_postfix(loss=f"{epoch_loss:.4f}", test_accuracy=f"{test_accuracy:.2%}")
            if epoch % 5 == 0 or epoch == args.epochs or args.max_steps is not None:
                bar.write(f"epoch {epoch:3d}  loss {epoch_loss:.4f}  test accuracy {test_accuracy:.2%}")
            if args.max_steps is not None and len(losses) >= args.max_steps:
                break
    print(f"trained {len(losses)} steps in {timer.seconds:.1f} s")

    checkpoint = args.out_dir / "cnn_digits.pt"
    test_accuracy, reloaded_accuracy = _common.checkpoint_round_trip(
        model, DigitsCNN(args.channels).to(device), checkpoint,
        lambda m: _common.accuracy(m, x_test, y_test, device))
    print(f"test accuracy {test_accuracy:.2%}; reloaded from {checkpoint}: {reloaded_accuracy:.2%}")
    if reloaded_accuracy != test_accuracy:
        raise RuntimeError("the reloaded checkpoint does not reproduce the test accuracy")

    curve = _common.save_loss_curve(losses, args.out_dir / "cnn_digits_loss.png", "CNN on 8x8 digits")
    _common.log_to_tensorboard(args.tensorboard, losses, args, {"test_accuracy": test_accuracy}, model,
                               x_test[:1].to(device))
    if curve is not None:
        print(f"loss curve: {curve}")
    return {"model": model, "losses": losses, "test_accuracy": test_accuracy, "reloaded_accuracy": reloaded_accuracy,
            "seconds": timer.seconds, "cpu_seconds": timer.cpu_seconds, "checkpoint": checkpoint}


if __name__ == "__main__":
    main()
