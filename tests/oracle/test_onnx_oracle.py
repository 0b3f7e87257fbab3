"""minitorch.onnx.export against PyTorch's own exporter: the same model with the same weights, exported by both,
gives the same outputs in onnxruntime, the same initializer names and the same heavy nodes (convolutions, pools,
GEMMs, gathers)."""

import io
from collections import Counter

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
onnxruntime = pytest.importorskip("onnxruntime")

import minitorch as mt  # noqa: E402

HEAVY = {"Conv", "ConvTranspose", "Gemm", "MaxPool", "AveragePool", "Gather"}


def mlp(nn):
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 4), nn.LogSoftmax(dim=1))


def cnn(nn):
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(4, 8, 3, padding=1),
                         nn.AvgPool2d(2), nn.Flatten(), nn.Linear(8 * 2 * 2, 10))


def embedding_bag_of_words(nn):
    return nn.Sequential(nn.Embedding(20, 6), nn.Flatten(), nn.Linear(18, 2), nn.Tanh())


def _export(library, model, args, **options) -> bytes:
    buffer = io.BytesIO()
    library.onnx.export(model, args, buffer, input_names=["x"], output_names=["y"],  # PyTorch: its TorchScript exporter
                        dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, dynamo=False, **options)
    return buffer.getvalue()


def _run(model_bytes: bytes, x: np.ndarray) -> np.ndarray:
    session = onnxruntime.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")
@pytest.mark.parametrize("build, make_input", [
    (mlp, lambda n: np.random.default_rng(0).standard_normal((n, 8), dtype=np.float32)),
    (cnn, lambda n: np.random.default_rng(0).standard_normal((n, 1, 8, 8), dtype=np.float32)),
    (embedding_bag_of_words, lambda n: np.random.default_rng(0).integers(0, 20, (n, 3))),
])
def test_same_model_exported_by_both(build, make_input):
    torch.manual_seed(0)
    reference = build(torch.nn).eval()
    model = build(mt.nn).eval()
    model.load_state_dict({k: mt.from_numpy(v.detach().numpy().copy()) for k, v in reference.state_dict().items()})
    x = make_input(2)
    ours = _export(mt, model, (mt.from_numpy(x),))
    theirs = _export(torch, reference, (torch.from_numpy(x),))
    for n in (2, 5):
        np.testing.assert_allclose(_run(ours, make_input(n)), _run(theirs, make_input(n)), rtol=1e-5, atol=1e-6)
    ours_proto, theirs_proto = onnx.load_from_string(ours), onnx.load_from_string(theirs)
    assert {t.name for t in ours_proto.graph.initializer} >= {t.name for t in theirs_proto.graph.initializer
                                                               if "." in t.name}
    assert ours_proto.opset_import[0].version == theirs_proto.opset_import[0].version

    def heavy(proto):
        return Counter(n.op_type for n in proto.graph.node if n.op_type in HEAVY)

    assert heavy(ours_proto) == heavy(theirs_proto)
