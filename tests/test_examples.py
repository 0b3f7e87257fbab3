"""Smoke tests of the example scripts: a few optimizer steps each, the loss falls, checkpoints round-trip.

Each script's ``main(argv)`` runs in-process with ``--max-steps`` so a test takes a few seconds; the full
runs (accuracy targets, wall times) are what the scripts print when run by hand.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

import minitorch as torch
from minitorch.utils.data import bundled

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture
def example(monkeypatch):
    """Import ``examples/<name>.py`` as a module (the scripts import their ``_common`` sibling)."""
    monkeypatch.syspath_prepend(str(EXAMPLES))

    def load(name: str):
        sys.modules.pop(name, None)
        return importlib.import_module(name)

    return load


def run(module, device: str, out_dir: Path, *flags: str) -> dict:
    return module.main(["--device", device, "--out-dir", str(out_dir), "--no-progress", "--seed", "0", *flags])


def assert_loss_falls(losses: list[float], window: int) -> None:
    first, last = np.mean(losses[:window]), np.mean(losses[-window:])
    assert np.isfinite(losses).all(), losses
    assert last < 0.8 * first, f"loss did not go down: first {window} steps {first:.3f}, last {window} {last:.3f}"


def assert_checkpoint_round_trips(model, path: Path) -> None:
    """The saved file holds exactly the model's state dict (same keys, values and dtypes)."""
    loaded = torch.load(path)
    state = model.state_dict()
    assert list(loaded) == list(state)
    for name, value in state.items():
        assert loaded[name].dtype == value.dtype, name
        np.testing.assert_array_equal(loaded[name].cpu().numpy(), value.cpu().numpy(), err_msg=name)


def test_bundled_digits_data():
    images, labels = (t.numpy() for t in bundled.load_digits())
    assert images.shape == (1797, 8, 8) and images.dtype == np.uint8
    assert labels.shape == (1797,) and labels.dtype == np.int64
    assert images.max() == 16 and np.bincount(labels).min() > 170  # 4x4 blocks of 0/1 pixels; ten classes


def test_train_mlp_smoke(example, device, tmp_path):
    result = run(example("train_mlp"), device, tmp_path, "--epochs", "2", "--max-steps", "30")
    assert len(result["losses"]) == 30
    assert_loss_falls(result["losses"], window=5)
    assert result["test_accuracy"] > 0.5  # 30 steps of Adam already beat chance (10%) by far
    assert result["reloaded_accuracy"] == result["test_accuracy"]
    assert_checkpoint_round_trips(result["model"], result["checkpoint"])


# (script, flags, the metric besides the losses): what each example's --compile run must reproduce
COMPILED_RUNS = [
    # torch.compile(model) with dropout's masks drawn inside the plan, a compiled Adam step, an epoch's last
    # (smaller) batch as a new trace
    ("train_mlp", ("--epochs", "2", "--max-steps", "40", "--hidden", "32"), "test_accuracy"),
    # convolutions, max-pool, dropout, Adam with the cosine schedule
    ("train_cnn", ("--epochs", "2", "--max-steps", "30", "--channels", "4"), "test_accuracy"),
    # attention, GELU, layer norms, dropout, AdamW with gradient clipping and a scheduler in between
    ("char_transformer", ("--max-steps", "12", "--sample-every", "100", "--sample-length", "5", "--batch-size", "8",
                          "--block-size", "16", "--n-embd", "16", "--n-layer", "1", "--dropout", "0.2"), "val_loss"),
]


@pytest.mark.parametrize("script,flags,metric", COMPILED_RUNS, ids=[c[0] for c in COMPILED_RUNS])
def test_compile_gives_the_same_run(example, tmp_path, script, flags, metric):
    """``--compile`` (``torch.compile(model)`` and a compiled optimizer step) gives the same losses, weights and
    metric as eager mode, bit for bit."""
    module = example(script)
    eager = run(module, "cpu", tmp_path / "eager", *flags)
    compiled = run(module, "cpu", tmp_path / "compiled", *flags, "--compile")
    assert compiled["losses"] == eager["losses"] and compiled[metric] == eager[metric]
    for (name, p), q in zip(eager["model"].state_dict().items(), compiled["model"].state_dict().values()):
        np.testing.assert_array_equal(p.numpy(), q.numpy(), err_msg=name)


def test_train_cnn_smoke(example, device, tmp_path):
    result = run(example("train_cnn"), device, tmp_path, "--epochs", "3", "--max-steps", "40", "--channels", "8")
    assert len(result["losses"]) == 40
    assert_loss_falls(result["losses"], window=5)
    assert result["reloaded_accuracy"] == result["test_accuracy"]
    assert_checkpoint_round_trips(result["model"], result["checkpoint"])


def test_char_transformer_smoke(example, device, tmp_path, capsys):
    module = example("char_transformer")
    result = run(module, device, tmp_path, "--max-steps", "40", "--sample-every", "20", "--sample-length", "20",
                 "--batch-size", "16", "--block-size", "32", "--n-embd", "32", "--n-layer", "1")
    assert len(result["losses"]) == 40
    assert_loss_falls(result["losses"], window=5)
    assert result["reloaded_val_loss"] == result["val_loss"]
    assert_checkpoint_round_trips(result["model"], result["checkpoint"])
    printed = capsys.readouterr().out
    assert "--- sample before training ---" in printed and "--- step 20:" in printed and "--- step 40:" in printed


def test_char_transformer_attention_is_causal(example):
    """Changing a later character never changes the logits at earlier positions."""
    module = example("char_transformer")
    torch.manual_seed(0)
    model = module.CharTransformer(vocab_size=11, block_size=8, n_embd=16, n_head=2, n_layer=2).eval()
    idx = torch.randint(11, (2, 8))
    changed = idx.clone()
    changed[:, 5:] = (changed[:, 5:] + 1) % 11
    before, _ = model(idx)
    after, _ = model(changed)
    torch.testing.assert_close(before[:, :5], after[:, :5])
    assert not torch.allclose(before[:, 5:], after[:, 5:])


SCRIPTS = sorted(p.stem for p in EXAMPLES.glob("*.py") if not p.stem.startswith("_"))
SHARED_FLAGS = ["--device", "--epochs", "--seed", "--lr", "--batch-size", "--max-steps", "--out-dir", "--no-progress",
                "--tensorboard"]


@pytest.mark.parametrize("name", SCRIPTS)
def test_every_example_takes_the_shared_flags(example, name, capsys):
    with pytest.raises(SystemExit) as exit_info:
        example(name).main(["--help"])
    assert exit_info.value.code == 0
    usage = capsys.readouterr().out
    missing = [flag for flag in SHARED_FLAGS if flag not in usage]
    assert not missing, f"{name}.py lacks {missing}"


def test_examples_readme_lists_every_script():
    readme = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    missing = [name for name in SCRIPTS if f"`{name}.py`" not in readme]
    assert not missing, missing


def test_sparse_embeddings_honours_the_shared_flags(example, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if matplotlib were not installed
    result = example("sparse_embeddings").main(["--no-progress", "--out-dir", str(tmp_path / "runs"), "--steps", "8",
                                                "--batch-size", "16", "--epochs", "2", "--max-steps", "12"])
    assert len(result["sparse"]["losses"]) == len(result["dense"]["losses"]) == 12
    printed = capsys.readouterr()
    assert "points of test accuracy" in printed.out  # the speed-up comes with the accuracy gap beside it
    assert "no loss curve: matplotlib is not installed (pip install -e '.[plot]'" in printed.out
    assert "it/s" not in printed.err and "step/s" not in printed.err  # --no-progress: no bar


def test_quantize_mlp_writes_into_out_dir(example, tmp_path, capsys):
    out_dir = tmp_path / "runs"
    result = example("quantize_mlp").main(["--no-progress", "--out-dir", str(out_dir), "--epochs", "1",
                                           "--qat-epochs", "1", "--max-steps", "10", "--hidden", "16"])
    assert result["checkpoint"].parent == out_dir and result["checkpoint"].exists()
    assert list(torch.load(result["checkpoint"])) == [f"layers.{i}.{p}" for i in (0, 2, 4) for p in ("weight", "bias")]
    int8 = torch.load(result["int8_checkpoint"])
    weight, bias = int8["layers.0._packed_params._packed_params"]  # PyTorch's layout of a quantized Linear
    assert weight.dtype is torch.qint8 and int8["layers.0._packed_params.dtype"] is torch.qint8
    assert weight.int_repr().equal(result["int8_model"].layers[0].weight().int_repr())
    assert bias.equal(result["int8_model"].layers[0].bias())
    assert float(int8["layers.0.scale"]) == result["int8_model"].layers[0].scale
    assert result["reloaded_matches"]
    assert "epoch/s" not in capsys.readouterr().err


def test_loss_curve_without_matplotlib_says_how_to_get_it(example, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert example("_common").save_loss_curve([1.0, 0.5], tmp_path / "curve.png", "t") is None
    assert capsys.readouterr().out.strip() == "no loss curve: matplotlib is not installed (pip install -e '.[plot]' to get curve.png)"
    assert not (tmp_path / "curve.png").exists()


def test_loss_curve_has_plain_log_tick_labels(example, tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    figures = []
    monkeypatch_close = plt.close
    plt.close = figures.append  # keep the figure to read its tick labels
    try:
        path = example("_common").save_loss_curve([2.3, 1.0, 0.4, 0.1, 0.05], tmp_path / "curve.png", "t")
    finally:
        plt.close = monkeypatch_close
    assert path.exists()
    labels = [t.get_text() for t in figures[0].axes[0].get_yticklabels() if t.get_text()]
    assert labels and all("$" not in label and "^" not in label for label in labels), labels
    plt.close(figures[0])


def test_tensorboard_flag_writes_the_run(example, tmp_path, capsys):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    logs = tmp_path / "tb"
    result = run(example("train_mlp"), "cpu", tmp_path, "--epochs", "1", "--max-steps", "6", "--hidden", "8",
                 "--tensorboard", str(logs))
    events = EventAccumulator(str(logs))
    events.Reload()
    assert [e.value for e in events.Scalars("train/loss")] == pytest.approx(result["losses"])
    assert any(n.op == "torch.nn.functional.linear" for n in events.Graph().node)
    hparams = EventAccumulator(str(logs / "hparams"))
    hparams.Reload()
    assert hparams.Scalars("result/test_accuracy")[0].value == pytest.approx(result["test_accuracy"])
    assert f"TensorBoard logs: {logs}" in capsys.readouterr().out


def test_tensorboard_flag_without_the_package_says_how_to_get_it(example, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorboard", None)  # as if tensorboard were not installed
    for name in [m for m in sys.modules if m.startswith("minitorch.utils.tensorboard")]:
        monkeypatch.delitem(sys.modules, name)
    run(example("train_mlp"), "cpu", tmp_path, "--epochs", "1", "--max-steps", "2", "--hidden", "8",
        "--tensorboard", str(tmp_path / "tb"))
    assert "no TensorBoard logs: tensorboard is not installed (pip install -e '.[tensorboard]')" in \
        capsys.readouterr().out
    assert not (tmp_path / "tb").exists()
