"""minitorch.utils.tensorboard: event files written with TensorBoard's protobufs, read back with TensorBoard's
own EventAccumulator (what `tensorboard --logdir` uses)."""

import importlib
import importlib.util
import os
import sys
import zlib

import pytest

import minitorch as torch


def test_importing_without_tensorboard_names_the_extra(monkeypatch):
    for name in [m for m in sys.modules if m == "minitorch.utils.tensorboard" or m.startswith("minitorch.utils.tensorboard.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "tensorboard", None)  # as if not installed
    with pytest.raises(ImportError, match=r"TensorBoard logging requires TensorBoard.*minitorch\[tensorboard\]"):
        importlib.import_module("minitorch.utils.tensorboard")


HAVE_TENSORBOARD = importlib.util.find_spec("tensorboard") is not None
if HAVE_TENSORBOARD:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from minitorch.utils.tensorboard import SummaryWriter
needs_tensorboard = pytest.mark.skipif(not HAVE_TENSORBOARD, reason="the tensorboard extra is not installed")


def read(log_dir):
    accumulator = EventAccumulator(str(log_dir), size_guidance={"tensors": 0, "scalars": 0, "histograms": 0})
    accumulator.Reload()
    return accumulator


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 5)
        self.seq = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Linear(5, 2))

    def forward(self, x):
        return self.seq(self.fc(x)) * 2


@needs_tensorboard
def test_scalars_read_back(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        for step in range(4):
            writer.add_scalar("loss", torch.tensor(1.0 / (step + 1)), step)
        writer.add_scalar("lr", 0.5, 7, walltime=123.0)
        writer.add_scalar("new", 2.5, 1, new_style=True, double_precision=True)
        with pytest.raises(AssertionError, match="one element"):
            writer.add_scalar("bad", torch.ones(3))
    events = read(tmp_path)
    assert [(e.step, e.value) for e in events.Scalars("loss")] == [(0, 1.0), (1, 0.5), (2, pytest.approx(1 / 3)),
                                                                     (3, 0.25)]
    assert events.Scalars("lr")[0].wall_time == 123.0 and events.Scalars("lr")[0].step == 7
    assert events.Tensors("new")[0].tensor_proto.double_val == [2.5]
    assert len(os.listdir(tmp_path)) == 1 and os.listdir(tmp_path)[0].startswith("events.out.tfevents.")


@needs_tensorboard
def test_add_scalars_writes_one_sub_run_per_tag(tmp_path):
    writer = SummaryWriter(tmp_path)
    for step in range(3):
        writer.add_scalars("run", {"sin": float(step), "cos": -float(step)}, step)
    writer.close()
    assert sorted(p for p in os.listdir(tmp_path) if not p.startswith("events")) == ["run_cos", "run_sin"]
    assert [e.value for e in read(tmp_path / "run_cos").Scalars("run")] == [0.0, -1.0, -2.0]


@needs_tensorboard
def test_histogram_counts_every_value(tmp_path):
    values = torch.linspace(-3, 3, 1001)
    with SummaryWriter(tmp_path) as writer:
        writer.add_histogram("w", values, 0)
        writer.add_histogram("auto", values, 1, bins="auto", max_bins=10)
        with pytest.raises(ValueError, match="no element"):
            writer.add_histogram("empty", torch.zeros(0))
        writer.add_histogram_raw("raw", 0, 3, 4, 6.0, 14.0, torch.tensor([1.0, 2.0, 3.0]), [1, 2, 1], 2)
        with pytest.raises(ValueError, match="len\\(bucket_limits\\) != len\\(bucket_counts\\)"):
            writer.add_histogram_raw("bad", 0, 1, 1, 1.0, 1.0, [1.0, 2.0], [1])
    events = read(tmp_path)
    h = events.Histograms("w")[0].histogram_value
    assert h.num == 1001 and h.min == -3 and h.max == 3 and sum(h.bucket) == 1001
    assert h.sum == pytest.approx(0, abs=1e-3)
    assert h.sum_squares == pytest.approx(float((values.double() ** 2).sum()), rel=1e-6)
    raw = events.Histograms("raw")[0]
    assert raw.step == 2 and list(raw.histogram_value.bucket) == [1, 2, 1]
    assert list(raw.histogram_value.bucket_limit) == [1.0, 2.0, 3.0] and raw.histogram_value.sum_squares == 14.0
    auto = events.Histograms("auto")[0].histogram_value
    assert sum(auto.bucket) == 1001 and len(auto.bucket) <= 12


@needs_tensorboard
def test_text_image_and_context_manager(tmp_path):
    picture = torch.zeros(3, 4, 6)
    picture[0] = 1.0  # red
    with SummaryWriter(tmp_path) as writer:
        writer.add_text("note", "hello *world*", 3)
        writer.add_image("red", picture, 0)
        writer.add_image("gray", torch.arange(12, dtype=torch.uint8).view(3, 4), 0, dataformats="HW")
        writer.add_images("batch", torch.rand(10, 1, 2, 2), 0)
    assert writer.all_writers is None
    writer.close()  # a second close does nothing
    events = read(tmp_path)
    assert events.Tensors("note/text_summary")[0].tensor_proto.string_val == [b"hello *world*"]
    image = events.Images("red")[0]
    assert (image.width, image.height) == (6, 4)
    assert decode_png(image.encoded_image_string) == (6, 4, bytes([255, 0, 0]) * 24)
    gray = decode_png(events.Images("gray")[0].encoded_image_string)
    assert gray[2] == bytes(v for v in range(12) for _ in range(3))
    assert (events.Images("batch")[0].width, events.Images("batch")[0].height) == (16, 4)  # 8 per row, 2 rows


def decode_png(data: bytes):
    """(width, height, RGB bytes) of the filter-0 RGB PNGs SummaryWriter writes."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        assert zlib.crc32(kind + body) == int.from_bytes(data[pos + 8 + length:pos + 12 + length], "big")
        chunks[kind] = chunks.get(kind, b"") + body
        pos += 12 + length
    width, height = int.from_bytes(chunks[b"IHDR"][:4], "big"), int.from_bytes(chunks[b"IHDR"][4:8], "big")
    raw = zlib.decompress(chunks[b"IDAT"])
    row = 1 + width * 3
    assert all(raw[i * row] == 0 for i in range(height))
    return width, height, b"".join(raw[i * row + 1:(i + 1) * row] for i in range(height))


@needs_tensorboard
def test_graph_names_nodes_by_module_scope_with_shapes(tmp_path, capsys):
    model = Net()
    model.train()
    with SummaryWriter(tmp_path) as writer:
        writer.add_graph(model, torch.randn(4, 3), verbose=True)
    assert "call_function" in capsys.readouterr().out and model.training
    events = read(tmp_path)
    nodes = {n.name: n for n in events.Graph().node}
    assert nodes["input/x"].op == "IO Node"
    linear = nodes["Net/Linear[fc]/linear"]
    assert list(linear.input) == ["input/x", "Net/Linear[fc]/fc_weight", "Net/Linear[fc]/fc_bias"]
    assert [d.size for d in linear.attr["_output_shapes"].list.shape[0].dim] == [4, 5]
    assert nodes["Net/Linear[fc]/fc_weight"].op == "prim::GetAttr"
    assert "Net/Sequential[seq]/ReLU[0]/relu" in nodes and "Net/Sequential[seq]/Linear[1]/linear_1" in nodes
    output = nodes["output/output.1"]
    assert [d.size for d in output.attr["_output_shapes"].list.shape[0].dim] == [4, 2]
    assert nodes[output.input[0]].attr["attr"].s == b"{ 2 }"
    assert events.Tags()["run_metadata"] == ["step1"]


@needs_tensorboard
def test_hparams_are_read_by_the_hparams_plugin(tmp_path):
    from tensorboard.plugins.hparams import plugin_data_pb2

    with SummaryWriter(tmp_path) as writer:
        writer.add_hparams({"lr": 0.1, "opt": "adam", "layers": 2, "none": None}, {"hparam/acc": 0.75},
                           hparam_domain_discrete={"opt": ["adam", "sgd"]}, run_name="trial")
        with pytest.raises(TypeError, match="dictionary"):
            writer.add_hparams([("lr", 0.1)], {})
        with pytest.raises(ValueError, match="value should be one of"):
            writer.add_hparams({"lr": [0.1]}, {})
    events = read(tmp_path / "trial")
    assert events.Scalars("hparam/acc")[0].value == 0.75
    content = events.SummaryMetadata("_hparams_/session_start_info").plugin_data.content
    start = plugin_data_pb2.HParamsPluginData.FromString(content).session_start_info
    assert start.hparams["lr"].number_value == 0.1 and start.hparams["opt"].string_value == "adam"
    assert "none" not in start.hparams
    experiment = plugin_data_pb2.HParamsPluginData.FromString(
        events.SummaryMetadata("_hparams_/experiment").plugin_data.content).experiment
    assert [m.name.tag for m in experiment.metric_infos] == ["hparam/acc"]
    assert [v.string_value for v in experiment.hparam_infos[1].domain_discrete.values] == ["adam", "sgd"]


@needs_tensorboard
def test_constructor_arguments(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    writer = SummaryWriter(comment="_lr0.1", filename_suffix=".x", max_queue=1, flush_secs=1)
    writer.add_scalar("a", 1.0, 0)
    writer.flush()
    run = os.listdir(tmp_path / "runs")[0]
    assert run.endswith("_lr0.1") and writer.get_logdir() == os.path.join("runs", run)
    assert os.listdir(tmp_path / "runs" / run)[0].endswith(".x")
    writer.close()
    writer.add_scalar("a", 2.0, 1)  # reopens: a second event file
    writer.close()
    assert len(os.listdir(tmp_path / "runs" / run)) == 2
    resumed = SummaryWriter(tmp_path / "resumed", purge_step=5)
    resumed.add_scalar("x", 1.0, 5)
    resumed.close()
    first = read(tmp_path / "resumed")
    assert first.Scalars("x")[0].step == 5
