"""torch.onnx.export: each exported model runs in onnxruntime and gives minitorch's outputs (skipped without the
onnx extra: pip install -e ".[onnx]")."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
onnxruntime = pytest.importorskip("onnxruntime")

import minitorch as torch  # noqa: E402
import minitorch.nn.functional as F  # noqa: E402
from minitorch import nn  # noqa: E402
from minitorch.onnx._tensor_ops import reshape_target  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _flat(value) -> list:
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in _flat(v)]
    return [] if value is None else [value]


def export_and_run(model, args, *, others=(), rtol=1e-5, atol=1e-5, **options):
    """Export ``model`` on ``args``, check the file, then run it in onnxruntime on ``args`` and on each input
    tuple of ``others`` (a dynamic axis at another size) and compare with minitorch's outputs."""
    if isinstance(args, torch.Tensor):
        args = (args,)
    if isinstance(model, nn.Module):
        model.eval()
    buffer = io.BytesIO()
    result = torch.onnx.export(model, args, buffer, dynamo=False, **options)
    assert result is None
    proto = onnx.load_from_string(buffer.getvalue())
    onnx.checker.check_model(proto, full_check=True)
    session = onnxruntime.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])
    for inputs in (args, *others):
        with torch.no_grad():
            expected = _flat(model(*inputs))
        feed = {i.name: a.numpy() for i, a in zip(session.get_inputs(), _flat(inputs))}
        got = session.run(None, feed)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert g.dtype == e.numpy().dtype
            np.testing.assert_allclose(g, e.numpy(), rtol=rtol, atol=atol)
    return proto


def _ops(proto) -> set:
    return {node.op_type for node in proto.graph.node}


# layers ----------------------------------------------------------------------------------------------------
def test_linear_mlp_with_dynamic_batch():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3), nn.LogSoftmax(dim=1))
    proto = export_and_run(model, torch.randn(2, 4), others=[(torch.randn(5, 4),)], input_names=["x"],
                           output_names=["logp"], dynamic_axes={"x": {0: "batch"}, "logp": {0: "batch"}})
    assert [i.name for i in proto.graph.input] == ["x"]
    assert [o.name for o in proto.graph.output] == ["logp"]
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert proto.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert {t.name for t in proto.graph.initializer} == {"0.weight", "0.bias", "2.weight", "2.bias"}
    assert "Gemm" in _ops(proto)


def test_linear_on_3d_input_and_without_bias():
    torch.manual_seed(0)
    export_and_run(nn.Linear(4, 3, bias=False), torch.randn(2, 5, 4), others=[(torch.randn(3, 5, 4),)],
                   dynamic_axes={"input": [0]})


@pytest.mark.parametrize("make, shape", [
    (lambda: nn.Conv1d(2, 4, 3, stride=2, padding=2, dilation=2), (2, 2, 17)),
    (lambda: nn.Conv2d(3, 6, 3, padding=1, groups=3), (2, 3, 8, 8)),
    (lambda: nn.Conv2d(1, 4, (3, 2), stride=(2, 1), bias=False), (2, 1, 9, 7)),
    (lambda: nn.Conv2d(2, 2, 3, padding="same"), (1, 2, 6, 6)),
])
def test_convolutions(make, shape):
    torch.manual_seed(0)
    proto = export_and_run(make(), torch.randn(*shape), others=[(torch.randn(3, *shape[1:]),)],
                           dynamic_axes={"input": [0]})
    assert "Conv" in _ops(proto)


@pytest.mark.parametrize("make, shape", [
    (lambda: nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1), (2, 2, 4, 4)),
    (lambda: nn.ConvTranspose1d(2, 4, 4, stride=3, padding=2, groups=2, dilation=2), (2, 2, 5)),
    (lambda: nn.ConvTranspose2d(2, 3, 2, stride=2, bias=False), (1, 2, 3, 3)),
])
def test_transposed_convolutions(make, shape):
    torch.manual_seed(0)
    proto = export_and_run(make(), torch.randn(*shape), others=[(torch.randn(3, *shape[1:]),)],
                           dynamic_axes={"input": [0]})
    assert "ConvTranspose" in _ops(proto)


def test_three_dimensional_layers_and_pixel_shuffle():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv3d(2, 3, 3, padding=1), nn.MaxPool3d(2), nn.AvgPool3d(2), nn.ConvTranspose3d(3, 8, 2, stride=2))
    export_and_run(model, torch.randn(1, 2, 8, 8, 8))
    export_and_run(nn.PixelShuffle(2), torch.randn(1, 8, 3, 3), others=[(torch.randn(2, 8, 3, 3),)],
                   dynamic_axes={"input": [0]})


def test_scaled_dot_product_attention_with_masks():
    class Model(nn.Module):
        def forward(self, q, mask):
            return (F.scaled_dot_product_attention(q, q, q, attn_mask=mask),
                    F.scaled_dot_product_attention(q, q, q, is_causal=True))

    torch.manual_seed(0)
    export_and_run(Model(), (torch.randn(2, 2, 4, 8), torch.randn(4, 4)), rtol=1e-4)


def test_elementwise_losses():
    class Model(nn.Module):
        def forward(self, x, y):
            return (F.mse_loss(x, y), F.l1_loss(x, y, reduction="none"), F.binary_cross_entropy_with_logits(x, y),
                    F.smooth_l1_loss(x, y), F.huber_loss(x, y), F.kl_div(x, y, reduction="batchmean"))

    torch.manual_seed(0)
    export_and_run(Model(), (torch.randn(3, 5), torch.rand(3, 5)))


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_upsampling_is_traced_as_constant_matrices(mode):
    export_and_run(nn.Upsample(scale_factor=2, mode=mode), torch.randn(1, 2, 4, 3), others=[(torch.randn(3, 2, 4, 3),)],
                   dynamic_axes={"input": [0]})


@pytest.mark.parametrize("layer, shape", [
    (nn.MaxPool2d(2), (2, 3, 8, 8)),
    (nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True), (2, 3, 9, 9)),
    (nn.MaxPool1d(3, stride=2, dilation=2), (2, 3, 15)),
    (nn.AvgPool2d(2), (2, 3, 8, 8)),
    (nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False), (2, 3, 9, 9)),
    (nn.AvgPool1d(2, ceil_mode=True, padding=1), (2, 3, 10)),
    (nn.AdaptiveAvgPool2d(1), (2, 3, 7, 5)),
    (nn.AdaptiveAvgPool2d((3, 2)), (2, 3, 7, 5)),
    (nn.AdaptiveAvgPool1d(4), (2, 3, 10)),
    (nn.AdaptiveMaxPool2d((2, 3)), (2, 3, 8, 9)),
])
def test_pooling(layer, shape):
    export_and_run(layer, torch.randn(*shape), others=[(torch.randn(1, *shape[1:]),)], dynamic_axes={"input": [0]})


def test_normalization_layers_in_eval_mode():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.GroupNorm(2, 4), nn.InstanceNorm2d(4),
                          nn.Flatten(), nn.LayerNorm(4 * 4 * 4), nn.BatchNorm1d(64))
    model.train()
    for _ in range(3):  # running statistics away from their initial values
        model(torch.randn(8, 2, 6, 6))
    export_and_run(model, torch.randn(2, 2, 6, 6), others=[(torch.randn(5, 2, 6, 6),)], dynamic_axes={"input": [0]})
    assert not model.training  # export_and_run put it in eval mode; the export itself restores the mode it found


def test_export_runs_the_model_in_eval_mode_and_restores_training():
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.BatchNorm1d(4))
    model.train()
    buffer = io.BytesIO()
    torch.onnx.export(model, (torch.randn(3, 4),), buffer, dynamo=False)
    assert model.training
    assert "Dropout" not in _ops(onnx.load_from_string(buffer.getvalue()))


@pytest.mark.parametrize("layer", [
    nn.ReLU(), nn.GELU(), nn.GELU(approximate="tanh"), nn.Tanh(), nn.Sigmoid(), nn.Softmax(dim=-1),
    nn.LogSoftmax(dim=1), nn.Dropout(0.3), nn.SiLU(), nn.LeakyReLU(0.2), nn.ELU(0.7), nn.SELU(), nn.CELU(0.5),
    nn.Softplus(beta=2.0, threshold=3.0), nn.Hardtanh(-0.5, 0.5), nn.ReLU6(), nn.Hardsigmoid(), nn.Hardswish(),
    nn.Mish(), nn.LogSigmoid(), nn.PReLU(3),
])
def test_activations(layer):
    torch.manual_seed(0)
    x = torch.randn(2, 3, 5) * 4
    export_and_run(layer, x, others=[(torch.randn(4, 3, 5),)], dynamic_axes={"input": [0]})


@pytest.mark.parametrize("opset", [17, 18, 20])
def test_gelu_and_norms_at_each_opset(opset):
    """Below opset 20 GELU is written out (erf or tanh); below 18 the reductions take axes as an attribute."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.LayerNorm(6), nn.GELU(), nn.Linear(6, 6), nn.GELU(approximate="tanh"), nn.Mish())
    proto = export_and_run(model, torch.randn(2, 6), opset_version=opset)
    assert proto.opset_import[0].version == opset
    assert ("Gelu" in _ops(proto)) == (opset >= 20)


@pytest.mark.parametrize("dtype, onnx_type, tolerance", [("float64", "DOUBLE", 1e-12), ("float16", "FLOAT16", 2e-3)])
def test_other_float_dtypes(dtype, onnx_type, tolerance):
    """The graph keeps the model's dtype (onnxruntime's CPU kernels lack float64 Conv and Erf, bfloat16 Gemm)."""
    torch.manual_seed(0)
    dtype = getattr(torch, dtype)
    model = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.Tanh(), nn.Linear(8, 3), nn.Softmax(-1)).to(dtype)
    proto = export_and_run(model, torch.randn(2, 4).to(dtype), rtol=tolerance, atol=tolerance)
    assert proto.graph.input[0].type.tensor_type.elem_type == getattr(onnx.TensorProto, onnx_type)


def test_bfloat16_model_exports():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU()).to(torch.bfloat16)
    buffer = io.BytesIO()
    torch.onnx.export(model, torch.randn(2, 4).to(torch.bfloat16), buffer, dynamo=False)
    proto = onnx.load_from_string(buffer.getvalue())
    onnx.checker.check_model(proto, full_check=True)
    assert {t.data_type for t in proto.graph.initializer} == {onnx.TensorProto.BFLOAT16}


def test_embedding_with_dynamic_batch():
    torch.manual_seed(0)
    proto = export_and_run(nn.Embedding(10, 4, padding_idx=0), torch.tensor([[1, 2], [3, 0]]),
                           others=[(torch.tensor([[1, 2], [3, 4], [5, 6]]),)], dynamic_axes={"input": [0]})
    assert proto.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.INT64


@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention(batch_first):
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(8, 2, batch_first=batch_first)
    q = torch.randn(2, 3, 8)
    export_and_run(mha, (q, q, q), rtol=1e-4)


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_encoder_layer_with_dynamic_batch_and_length(batch_first):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=batch_first)
    export_and_run(layer, torch.randn(2, 3, 8), others=[(torch.randn(4, 5, 8),)], dynamic_axes={"src": [0, 1]},
                   rtol=1e-4)


def test_multihead_attention_with_dynamic_batch_and_length():
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(8, 2)
    x = torch.randn(3, 2, 8)
    y = torch.randn(5, 4, 8)
    export_and_run(mha, (x, x, x), others=[(y, y, y)], dynamic_axes={n: [0, 1] for n in ("query", "key", "value")},
                   rtol=1e-4)


def test_transformer_encoder_with_causal_mask():
    torch.manual_seed(0)
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, norm_first=True), num_layers=2)
    mask = nn.Transformer.generate_square_subsequent_mask(4)
    export_and_run(encoder, (torch.randn(4, 2, 8), mask), rtol=1e-4)


@pytest.mark.parametrize("cell", [nn.LSTM, nn.GRU, nn.RNN])
def test_recurrent_layers_with_dynamic_batch(cell):
    """Unrolled over the traced sequence length; the zero initial state follows the batch size."""
    torch.manual_seed(0)
    rnn = cell(4, 5, num_layers=2, batch_first=True)
    export_and_run(rnn, torch.randn(2, 3, 4), others=[(torch.randn(6, 3, 4),)], dynamic_axes={"input": [0]})
    if cell is nn.LSTM:  # the state tuple's tensors are inputs hx_0 and hx_1
        hx = (torch.randn(2, 2, 5), torch.randn(2, 2, 5))
        others = [(torch.randn(6, 3, 4), (torch.randn(2, 6, 5), torch.randn(2, 6, 5)))]
        axes = {"input": [0], "hx_0": [1], "hx_1": [1]}
    else:
        hx, others, axes = torch.randn(2, 2, 5), [(torch.randn(6, 3, 4), torch.randn(2, 6, 5))], {"input": [0], "hx": [1]}
    proto = export_and_run(rnn, (torch.randn(2, 3, 4), hx), others=others, dynamic_axes=axes)
    assert [i.name for i in proto.graph.input] == ["input"] + list(axes)[1:]


def test_sizes_computed_from_dynamic_dims():
    """A second trace with the dynamic dims one larger shows which shapes follow them: zeros, arange and masks
    built from ``x.shape``, and reshapes that split or merge dynamic dims."""
    class Model(nn.Module):
        def forward(self, x):
            b, t, c = x.shape
            merged = x.reshape(b * t, c).view(b, t, c)
            causal = torch.ones(t, t).triu(1).bool()
            scores = (x @ x.transpose(1, 2)).masked_fill(causal, float("-inf")).softmax(-1)
            return merged + torch.zeros(b, 1, c), torch.arange(t) * 2, scores @ x

    torch.manual_seed(0)
    export_and_run(Model(), torch.randn(2, 4, 3), others=[(torch.randn(5, 7, 3),)], dynamic_axes={"x": [0, 1]})


def test_a_model_that_takes_only_the_traced_size_still_exports():
    class Model(nn.Module):
        def forward(self, x):
            if x.shape[0] != 2:
                raise ValueError("batch of 2 only")
            return x.view(2, -1)

    proto = export_and_run(Model(), torch.randn(2, 3, 4), dynamic_axes={"x": [0]})
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "x_dynamic_axes_1"


# the examples' models --------------------------------------------------------------------------------------
@pytest.fixture
def examples_path(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    yield
    for name in ("train_mlp", "train_cnn", "char_transformer", "_common"):  # imported fresh by the next test
        sys.modules.pop(name, None)


def test_example_models(examples_path):
    from char_transformer import CharTransformer
    from train_cnn import DigitsCNN
    from train_mlp import MLP

    torch.manual_seed(0)
    export_and_run(MLP(), torch.randn(2, 8, 8), others=[(torch.randn(7, 8, 8),)], dynamic_axes={"x": [0]})
    export_and_run(DigitsCNN(), torch.randn(2, 64), others=[(torch.randn(7, 64),)], dynamic_axes={"x": [0]})
    model = CharTransformer(20, 8, 16, 2, 2, dropout=0.1)
    proto = export_and_run(model, torch.tensor([[1, 2, 3, 4], [5, 6, 7, 8]]),
                           others=[(torch.tensor([[9, 2, 3, 1]]),), (torch.tensor([[1, 2, 3, 4, 5, 6, 7]] * 3),)],
                           dynamic_axes={"idx": {0: "batch", 1: "time"}}, rtol=1e-4)
    assert len(proto.graph.output) == 1  # the loss is None without targets: not an output


def test_train_mlp_exports_onnx(examples_path, tmp_path):
    import train_mlp

    result = train_mlp.main(["--out-dir", str(tmp_path), "--no-progress", "--epochs", "1", "--max-steps", "10",
                             "--onnx"])
    assert result["onnx"].exists()
    assert result["onnx_accuracy"] == result["test_accuracy"]
    proto = onnx.load(str(result["onnx"]))
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"


# tensor ops, in-place writes, naming -----------------------------------------------------------------------
class _TensorOps(nn.Module):
    def forward(self, x):
        y = x[:, 1:] * 2 + 1
        y = torch.cat([y, x[:, :1].expand(-1, 1, 8)], 1)
        y = (y / 3 - 1).abs().sqrt().clamp(0, 1) + x.max(dim=1, keepdim=True).values
        y = torch.where(y > 0.5, y, 0.0) + x.masked_fill(x < -1, 2.0) + x.exp().log1p() - x.rsqrt().nan_to_num(0.0)
        y = y + x.std(-1, keepdim=True) + x.var(-1, keepdim=True) + x.amax(-1, keepdim=True) + x.mean(-1, keepdim=True)
        z = y.unsqueeze(1).squeeze(1).transpose(-1, -2).mT.permute(0, 1, 2)
        a, b = z.chunk(2, -1)
        z = torch.stack([a, b]).sum(0) + F.pad(x, (1, 1))[..., 1:-1][..., :4] + x.argmax(-1, keepdim=True).float()
        z = z + x[0, :, :4] + x[:, 0:1, None, :4].squeeze(2) + x.flip(-1)[..., :4] - (1 - x[..., 4:])
        z = z + torch.matmul(x[..., :4], x[0, :, :4].t() @ x[0, :, :4]) + torch.einsum("bij->bi", x)[..., None] ** 2
        z = z + (x[..., :4] // 0.5) + x[..., :4] % 0.7 + x[..., :4].div(0.3, rounding_mode="trunc") + x.select(2, 3)[..., None]
        z = z + x.narrow(2, 1, 4) + (x[..., :4] == 0).to(torch.float32) + (~(x[..., :4] > 0)).float()
        z = z + ((x[..., :4] > 0) & (x[..., :4] < 1) | x[..., :4].isnan()).float() + x[..., :4].isfinite().float()
        z = z.relu_()
        z += 1
        z.mul_(x[..., :4])
        return z.reshape(x.shape[0], -1), x.sum(), x.to(torch.float64).square()


def test_tensor_ops_and_inplace_writes_with_dynamic_batch():
    torch.manual_seed(0)
    export_and_run(_TensorOps(), torch.randn(2, 3, 8), others=[(torch.randn(5, 3, 8),)], dynamic_axes={"x": [0]})


def test_reductions_norms_topk_cumsum_gather():
    class Model(nn.Module):
        def forward(self, x, index):
            return (x.cumsum(-1), x.norm(dim=1), F.normalize(x, dim=-1), x.topk(2, -1).values,
                    x.topk(2, 1, largest=False).indices, (x > 0).all(-1), (x > 0).any(), x.norm(p=1, dim=-1),
                    x.norm(p=3, dim=-1), x.norm(p=float("inf"), dim=-1), torch.gather(x, 2, index), x.prod(-1))

    torch.manual_seed(0)
    index = torch.tensor([[[0, 3], [1, 1], [2, 0]]])
    with pytest.raises(torch.onnx.errors.UnsupportedOperatorError, match="minitorch::Prod"):
        export_and_run(Model(), (torch.randn(1, 3, 4), index))

    class WithoutProd(Model):
        def forward(self, x, index):
            return super().forward(x, index)[:-1]

    export_and_run(WithoutProd(), (torch.randn(1, 3, 4), index))


def test_indexing_with_a_tensor_is_refused_not_baked_in():
    """``x[i]`` hands its op the index as an array, which may come from an input: never folded into a constant."""
    class Model(nn.Module):
        def forward(self, i):
            return torch.arange(5.0)[i]

    with pytest.raises(torch.onnx.errors.UnsupportedOperatorError, match="AdvancedIndex"):
        torch.onnx.export(Model(), torch.tensor([1, 2]), io.BytesIO(), dynamo=False)


def test_views_and_reshapes_follow_a_dynamic_batch():
    class Model(nn.Module):
        def forward(self, x):
            b = x.shape[0]
            y = x.view(b, 2, -1).transpose(1, 2).reshape(b, -1)
            return y.unsqueeze(1).expand(b, 3, y.shape[1]).flatten(1) + 1

    export_and_run(Model(), torch.randn(2, 4, 3), others=[(torch.randn(7, 4, 3),)], dynamic_axes={"x": {0: "n"}})


@pytest.mark.parametrize("in_shape, out_shape, target", [
    ((2, 3, 4), (2, 12), [0, -1]),
    ((6, 4), (2, 3, 4), [-1, 3, 4]),
    ((2, 3, 4), (2, 3, 4), [0, 0, 0]),
    ((2, 3, 4), (24,), [-1]),
    ((2, 2, 3, 4), (2, 4, 12), [0, -1, 12]),
])
def test_reshape_targets(in_shape, out_shape, target):
    assert reshape_target(in_shape, out_shape) == target


def test_custom_function_and_empty_results():
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * x + 1

        @staticmethod
        def backward(ctx, grad):
            raise AssertionError("not called by an export")

    class Model(nn.Module):
        def forward(self, x):
            return Square.apply(x).relu() + x[:0].sum(), x.reshape(-1)[:0], x[:0].reshape(3, 0)

    export_and_run(Model(), torch.randn(2, 3), others=[(torch.randn(4, 3),)], dynamic_axes={"x": [0]})


def test_constants_made_inside_forward_are_folded():
    class Model(nn.Module):
        def forward(self, x):
            mask = torch.ones(4, 4, dtype=torch.bool).triu(1)  # folded: no Trilu node
            return x.masked_fill(mask, 0.0) + torch.arange(4.0)

    proto = export_and_run(Model(), torch.randn(2, 4, 4))
    assert _ops(proto) <= {"Where", "Add", "Identity", "Cast"}


def test_forward_writing_into_its_input_and_a_buffer():
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("count", torch.zeros(3))

        def forward(self, x):
            y = x * 3 + self.count
            x.add_(1)
            self.count.add_(x)
            return y + x + self.count

    with pytest.raises(torch.onnx.errors.SymbolicValueError, match="writes into 'count' in place"):
        torch.onnx.export(Model(), torch.randn(3), io.BytesIO(), dynamo=False)

    class IntoInput(nn.Module):
        def forward(self, x):
            y = x * 3
            x.add_(1)
            return y + x

    x = torch.randn(3)
    expected = IntoInput()(x.clone())
    buffer = io.BytesIO()
    torch.onnx.export(IntoInput(), x.clone(), buffer, dynamo=False)
    session = onnxruntime.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, {"x": x.numpy()})[0], expected.numpy(), rtol=1e-6)


def test_detached_alias_of_a_traced_value():
    class Model(nn.Module):
        def forward(self, x):
            y = x * 2
            return y.detach() + 1

    export_and_run(Model(), torch.randn(3))


def test_kwargs_file_path_and_default_names(tmp_path):
    class Model(nn.Module):
        def forward(self, x, scale=None):
            return x * scale, x + 1

    path = tmp_path / "model.onnx"
    x, scale = torch.randn(2, 3), torch.randn(3)
    assert torch.onnx.export(Model(), (x, {"scale": scale}), str(path), dynamo=False) is None
    proto = onnx.load(str(path))
    assert [i.name for i in proto.graph.input] == ["x", "scale"]
    assert [o.name for o in proto.graph.output] == ["output_0", "output_1"]
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = session.run(None, {"x": x.numpy(), "scale": scale.numpy()})
    np.testing.assert_allclose(got[0], (x * scale).numpy(), rtol=1e-6)


def test_export_params_false_makes_parameters_inputs():
    model = nn.Linear(3, 2)
    buffer = io.BytesIO()
    torch.onnx.export(model, torch.randn(1, 3), buffer, dynamo=False, export_params=False)
    proto = onnx.load_from_string(buffer.getvalue())
    assert [i.name for i in proto.graph.input] == ["input", "weight", "bias"]
    assert not proto.graph.initializer


def test_dynamo_returns_a_program_that_runs_and_saves(tmp_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
    x = torch.randn(2, 3)
    program = torch.onnx.export(model, (x,), dynamic_shapes={"input": {0: "batch"}}, verify=True)
    assert isinstance(program, torch.onnx.ONNXProgram)
    (out,) = program(torch.randn(5, 3))
    assert out.shape == (5, 4)
    program.save(tmp_path / "m.onnx")
    assert onnx.load(str(tmp_path / "m.onnx")).graph.node


def test_is_in_onnx_export():
    seen = []

    class Model(nn.Module):
        def forward(self, x):
            seen.append(torch.onnx.is_in_onnx_export())
            return x + 1

    torch.onnx.export(Model(), torch.randn(2), io.BytesIO(), dynamo=False)
    assert seen == [True] and not torch.onnx.is_in_onnx_export()


# errors ----------------------------------------------------------------------------------------------------
def test_unsupported_op_names_the_op():
    class Model(nn.Module):
        def forward(self, x):
            return torch.logcumsumexp(x, 0)

    with pytest.raises(torch.onnx.errors.UnsupportedOperatorError, match="minitorch::Logcumsumexp") as info:
        torch.onnx.export(Model(), torch.randn(3), io.BytesIO(), dynamo=False)
    assert isinstance(info.value, torch.onnx.OnnxExporterError) and isinstance(info.value, RuntimeError)
    assert "opset version 20" in str(info.value)


def test_unsupported_op_whose_result_is_unused_is_dropped():
    class Model(nn.Module):
        def forward(self, x):
            torch.logcumsumexp(x, 0)
            return x * 2

    export_and_run(Model(), torch.randn(3))


def test_max_pool_indices_are_not_exported():
    with pytest.raises(torch.onnx.errors.UnsupportedOperatorError, match="MaxPool"):
        torch.onnx.export(nn.MaxPool2d(2, return_indices=True), torch.randn(1, 1, 4, 4), io.BytesIO(), dynamo=False)


def test_write_through_a_view_is_refused():
    class Model(nn.Module):
        def forward(self, x):
            y = x * 1
            y[:, 0].add_(1)  # y changes through a view: not something a trace can follow
            return y

    with pytest.raises(torch.onnx.errors.SymbolicValueError, match="written in place"):
        torch.onnx.export(Model(), torch.randn(2, 3), io.BytesIO(), dynamo=False)


def test_bad_arguments():
    model = nn.Linear(2, 2)
    with pytest.raises(ValueError, match="Unsupported ONNX opset version: 9"):
        torch.onnx.export(model, torch.randn(1, 2), io.BytesIO(), opset_version=9, dynamo=False)
    with pytest.raises(ValueError, match="f .* is required"):
        torch.onnx.export(model, torch.randn(1, 2), dynamo=False)
    with pytest.raises(ValueError, match="2 input_names for 1 tensor inputs"):
        torch.onnx.export(model, torch.randn(1, 2), io.BytesIO(), input_names=["a", "b"], dynamo=False)
    with pytest.warns(UserWarning, match="not a valid input/output name"):
        torch.onnx.export(model, torch.randn(1, 2), io.BytesIO(), dynamic_axes={"nope": [0]}, dynamo=False)


def test_the_trace_leaves_the_ops_as_it_found_them():
    from minitorch.ops import inplace
    from minitorch.ops.op import Op
    from minitorch.ops.views import ViewOp

    before = (Op.__dict__["apply"], ViewOp.__dict__["apply"], inplace.write_result, inplace._update_in_place)

    class Broken(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        torch.onnx.export(Broken(), torch.randn(2), io.BytesIO(), dynamo=False)
    assert (Op.__dict__["apply"], ViewOp.__dict__["apply"], inplace.write_result, inplace._update_in_place) == before


def test_docs_list_every_translated_op():
    from minitorch.onnx._symbolics import TRANSLATIONS

    page = (Path(__file__).resolve().parents[1] / "docs" / "onnx.md").read_text()
    listed = page.split("The minitorch op classes translated")[1].split("## What is left")[0]
    missing = [name for name in TRANSLATIONS if f"`{name}`" not in listed]
    assert not missing, f"docs/onnx.md does not list {missing}"


def test_an_input_named_like_a_parameter_keeps_both():
    torch.manual_seed(0)
    proto = export_and_run(nn.Linear(3, 2), torch.randn(4, 3), input_names=["weight"])
    names = [i.name for i in proto.graph.input] + [t.name for t in proto.graph.initializer]
    assert names[0] == "weight" and len(set(names)) == 3
