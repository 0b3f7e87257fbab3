"""Quantization-aware training of the digits MLP, then conversion to an int8 model.

    pip install -e . && python examples/quantize_mlp.py

The eager-mode flow of ``torch.ao.quantization`` with ``import minitorch as torch``: train a float MLP,
fine-tune it with fake-quantized weights and activations (``prepare_qat``), convert it to int8 modules
(``convert``: int8 weights, int32 accumulation, quint8 activations), then compare test accuracy, model size
in bytes and inference time of the float and the int8 model. The int8 state dict is saved and loaded back into
a fresh converted model, which must give the same outputs.
"""

from __future__ import annotations

import _common  # examples/_common.py: data, flags, timing and plotting helpers

import minitorch as torch
import minitorch.ao.quantization as tq
import minitorch.nn as nn
from minitorch.utils.progress import progress


class MLP(nn.Module):
    def __init__(self, hidden: int = 128):
        super().__init__()
        self.quant = tq.QuantStub()
        self.layers = nn.Sequential(
            nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 10),
        )
        self.dequant = tq.DeQuantStub()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dequant(self.layers(self.quant(x.flatten(1))))


def train(model: nn.Module, loader, epochs: int, lr: float, max_steps: int | None, losses: list[float],
          desc: str, no_progress: bool) -> None:
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    first = len(losses)
    with progress(range(epochs), desc=desc, unit="epoch", disable=no_progress or None) as bar:
        for _ in bar:
            for x, y in loader:
                loss = loss_fn(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
                if max_steps is not None and len(losses) - first >= max_steps:
                    return
            bar.set_postfix(loss=f"{losses[-1]:.4f}")


def model_bytes(model: nn.Module) -> int:
    """Bytes of every tensor in the state dict (quantized tensors count their integer storage; a quantized
    Linear's entry ``_packed_params._packed_params`` is its (weight, bias) pair)."""
    total = 0
    for value in model.state_dict().values():
        for t in value if isinstance(value, tuple) else (value,):
            if isinstance(t, torch.Tensor):
                total += _tensor_bytes(t)
    return total


def _tensor_bytes(t: torch.Tensor) -> int:
    total = t.numel() * t.element_size()
    if t.is_quantized and str(t.qscheme()) == "torch.per_channel_affine":
        total += t.q_per_channel_scales().numel() * 8 + t.q_per_channel_zero_points().numel() * 8
    return total


@torch.no_grad()
def inference_seconds(model: nn.Module, x: torch.Tensor, repeats: int = 5) -> float:
    model.eval()
    with _common.Timer() as timer:
        for _ in range(repeats):
            model(x)
    return timer.seconds / repeats


def fresh_int8_model(hidden: int) -> nn.Module:
    """A converted int8 model with untrained weights and qparams, to load a saved int8 state dict into."""
    model = MLP(hidden)
    model.qconfig = tq.get_default_qat_qconfig("x86")
    prepared = tq.prepare_qat(model)
    prepared.eval()
    return tq.convert(prepared)


def main(argv: list[str] | None = None) -> dict:
    parser = _common.base_parser(__doc__.splitlines()[0], epochs=20, lr=1e-3, batch_size=64)
    parser.add_argument("--qat-epochs", type=int, default=5, help="epochs of quantization-aware fine-tuning")
    parser.add_argument("--hidden", type=int, default=128, help="width of the two hidden layers (default: 128)")
    args = parser.parse_args(argv)
    if args.device != "cpu":
        print("note: the int8 kernels run on the tensors' device; this example trains on", args.device)

    torch.manual_seed(args.seed)
    x_train, y_train, x_test, y_test = _common.load_digits()
    loader = _common.train_loader(x_train, y_train, args.batch_size, args.seed)
    print(f"digits: {len(y_train)} training and {len(y_test)} test images")

    model = MLP(args.hidden)
    losses: list[float] = []
    with _common.Timer() as timer:
        train(model, loader, args.epochs, args.lr, args.max_steps, losses, "float training", args.no_progress)
    float_accuracy = _common.accuracy(model, x_test, y_test, "cpu")
    print(f"float model: {len(losses)} steps in {timer.seconds:.1f} s, test accuracy {float_accuracy:.2%}")

    model.qconfig = tq.get_default_qat_qconfig("x86")
    prepared = tq.prepare_qat(model)
    qat_losses: list[float] = []
    max_qat_steps = None if args.max_steps is None else max(1, args.max_steps // 2)
    train(prepared, loader, args.qat_epochs, args.lr / 10, max_qat_steps, qat_losses, "QAT", args.no_progress)
    qat_accuracy = _common.accuracy(prepared, x_test, y_test, "cpu")
    print(f"QAT fine-tuning: {len(qat_losses)} steps, fake-quantized test accuracy {qat_accuracy:.2%}")

    prepared.eval()
    int8_model = tq.convert(prepared)
    int8_accuracy = _common.accuracy(int8_model, x_test, y_test, "cpu")
    float_bytes, int8_bytes = model_bytes(model), model_bytes(int8_model)
    float_seconds = inference_seconds(model, x_test)
    int8_seconds = inference_seconds(int8_model, x_test)
    print(int8_model)
    print(f"test accuracy: float {float_accuracy:.2%}, int8 {int8_accuracy:.2%} "
          f"(difference {100 * (float_accuracy - int8_accuracy):+.2f} points)")
    print(f"model size: float {float_bytes} bytes, int8 {int8_bytes} bytes ({float_bytes / int8_bytes:.2f}x smaller)")
    print(f"inference on {len(y_test)} images: float {1000 * float_seconds:.2f} ms, int8 {1000 * int8_seconds:.2f} ms "
          "(numpy has no int8 GEMM: the int32 products are not faster here, only smaller)")
    # the float weights, and the int8 ones (quantized tensors save as torch.save writes them: PyTorch loads them)
    checkpoint = args.out_dir / "mlp_digits_float.pt"
    checkpoint.parent.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), checkpoint)
    print(f"float state dict: {checkpoint}")
    int8_checkpoint = args.out_dir / "mlp_digits_int8.pt"
    torch.save(int8_model.state_dict(), int8_checkpoint)
    print(f"int8 state dict: {int8_checkpoint} ({int8_checkpoint.stat().st_size} bytes)")
    # and back: a fresh converted model takes the int8 weights, biases and scales/zero points from the file
    reloaded = fresh_int8_model(args.hidden)
    reloaded.load_state_dict(torch.load(int8_checkpoint))
    with torch.no_grad():
        reloaded_matches = bool(reloaded(x_test).equal(int8_model(x_test)))
    print(f"int8 state dict reloaded into a fresh converted model: outputs {'match' if reloaded_matches else 'DIFFER'}")
    if not reloaded_matches:
        raise RuntimeError("the reloaded int8 model does not reproduce the converted model's outputs")
    curve = _common.save_loss_curve({"float": losses, "QAT fine-tuning": losses[-1:] + qat_losses},
                                    args.out_dir / "quantize_mlp_loss.png", "MLP on 8x8 digits: float, then QAT")
    _common.log_to_tensorboard(args.tensorboard, {"float": losses, "qat": qat_losses}, args,
                               {"float_accuracy": float_accuracy, "int8_accuracy": int8_accuracy})
    if curve is not None:
        print(f"loss curve: {curve}")
    return {"losses": losses + qat_losses, "checkpoint": checkpoint, "int8_checkpoint": int8_checkpoint,
            "reloaded_matches": reloaded_matches,
            "float_accuracy": float_accuracy,
            "qat_accuracy": qat_accuracy,
            "int8_accuracy": int8_accuracy, "float_bytes": float_bytes, "int8_bytes": int8_bytes,
            "float_seconds": float_seconds, "int8_seconds": int8_seconds, "int8_model": int8_model}


if __name__ == "__main__":
    main()
