"""minitorch.utils.tensorboard against torch.utils.tensorboard: the same calls write the same summaries
(read back with TensorBoard's EventAccumulator)."""

import io

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from tensorboard.plugins.hparams import plugin_data_pb2  # noqa: E402
from torch.utils.tensorboard import SummaryWriter as TorchWriter  # noqa: E402

import minitorch as mt  # noqa: E402
from minitorch.utils.tensorboard import SummaryWriter  # noqa: E402


def log(lib, writer_class, log_dir):
    values = np.random.default_rng(0).standard_normal(500).astype(np.float32)
    picture = np.linspace(0, 1, 3 * 5 * 7, dtype=np.float32).reshape(3, 5, 7)
    with writer_class(str(log_dir)) as w:
        for step in range(3):
            w.add_scalar("loss", lib.tensor(1.5 / (step + 1)), step, walltime=10.0 + step)
        w.add_scalar("styled", 0.25, 0, walltime=1.0, new_style=True)
        w.add_histogram("h", lib.tensor(values), 0, walltime=1.0)
        w.add_histogram("h_auto", lib.tensor(values), 1, bins="auto", max_bins=7, walltime=1.0)
        w.add_histogram("h_ten", lib.tensor(values), 2, bins=10, walltime=1.0)
        w.add_text("t", "some *markdown*", 4, walltime=1.0)
        w.add_histogram_raw("raw", -1.0, 2.0, 6, 3.5, 9.25, [0.0, 1.0, 2.0], [1, 3, 2], 5, walltime=1.0)
        w.add_image("img", lib.tensor(picture), 0, walltime=1.0)
        w.add_images("imgs", lib.tensor(np.stack([picture] * 3)), 0, walltime=1.0)
        w.add_scalars("pair", {"a": 1.0, "b": 2.0}, 0, walltime=1.0)
        w.add_hparams({"lr": 0.01, "opt": "adam", "flag": True}, {"hparam/loss": 0.5}, run_name="hp",
                      hparam_domain_discrete={"opt": ["adam", "sgd"]})


def read(path):
    events = EventAccumulator(str(path), size_guidance={"tensors": 0, "histograms": 0, "images": 0})
    events.Reload()
    return events


def pixels(encoded: bytes):
    pil = pytest.importorskip("PIL.Image")
    return np.asarray(pil.open(io.BytesIO(encoded)).convert("RGB"))


@pytest.mark.filterwarnings("ignore")
def test_the_same_calls_write_the_same_summaries(tmp_path):
    log(mt, SummaryWriter, tmp_path / "ours")
    log(torch, TorchWriter, tmp_path / "theirs")
    ours, theirs = read(tmp_path / "ours"), read(tmp_path / "theirs")
    assert ours.Tags() == theirs.Tags()
    assert ours.Scalars("loss") == theirs.Scalars("loss")
    assert ours.Tensors("styled") == theirs.Tensors("styled")
    for tag in ("h", "h_auto", "h_ten", "raw"):
        assert ours.Histograms(tag) == theirs.Histograms(tag)
    assert ours.Tensors("t/text_summary") == theirs.Tensors("t/text_summary")
    assert ours.SummaryMetadata("t/text_summary") == theirs.SummaryMetadata("t/text_summary")
    for tag in ("img", "imgs"):
        a, b = ours.Images(tag)[0], theirs.Images(tag)[0]
        assert (a.width, a.height) == (b.width, b.height)
        np.testing.assert_array_equal(pixels(a.encoded_image_string), pixels(b.encoded_image_string))
    for sub in ("pair_a", "pair_b"):
        assert read(tmp_path / "ours" / sub).Scalars("pair") == read(tmp_path / "theirs" / sub).Scalars("pair")
    hp_ours, hp_theirs = read(tmp_path / "ours" / "hp"), read(tmp_path / "theirs" / "hp")
    for tag in ("_hparams_/experiment", "_hparams_/session_start_info", "_hparams_/session_end_info"):
        a = plugin_data_pb2.HParamsPluginData.FromString(hp_ours.SummaryMetadata(tag).plugin_data.content)
        b = plugin_data_pb2.HParamsPluginData.FromString(hp_theirs.SummaryMetadata(tag).plugin_data.content)
        assert a == b, tag
    assert [e.value for e in hp_ours.Scalars("hparam/loss")] == [e.value for e in hp_theirs.Scalars("hparam/loss")]


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 5)
        self.seq = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Linear(5, 2))

    def forward(self, x):
        return self.seq(self.fc(x))


TorchNet = Net


class Net(mt.nn.Module):  # noqa: F811 (the same class name: it names the graph's root scope)
    def __init__(self):
        super().__init__()
        self.fc = mt.nn.Linear(3, 5)
        self.seq = mt.nn.Sequential(mt.nn.ReLU(), mt.nn.Linear(5, 2))

    def forward(self, x):
        return self.seq(self.fc(x))


@pytest.mark.filterwarnings("ignore")
def test_graphs_have_the_same_module_scopes_and_io_shapes(tmp_path):
    """PyTorch writes JIT ops, minitorch fx functions; the module scopes, IO nodes and shapes agree."""
    with TorchWriter(str(tmp_path / "theirs")) as w:
        w.add_graph(TorchNet(), torch.randn(4, 3))
    with SummaryWriter(tmp_path / "ours") as w:
        w.add_graph(Net(), mt.randn(4, 3))
    graphs = {name: read(tmp_path / name).Graph() for name in ("ours", "theirs")}

    def scopes(graph):
        return {n.name.rpartition("/")[0] for n in graph.node if n.op not in ("IO Node", "prim::GetAttr")}

    def io(graph):
        return sorted((n.name, tuple(d.size for d in n.attr["_output_shapes"].list.shape[0].dim))
                      for n in graph.node if n.op == "IO Node")

    assert scopes(graphs["ours"]) == scopes(graphs["theirs"]) == {
        "Net/Linear[fc]", "Net/Sequential[seq]/ReLU[0]", "Net/Sequential[seq]/Linear[1]"}
    assert io(graphs["ours"]) == io(graphs["theirs"])
