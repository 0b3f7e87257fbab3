"""Quantized state dicts cross between PyTorch and minitorch: a converted model's state dict saved by
``torch.save`` loads into minitorch's converted model of the same architecture and gives PyTorch's outputs, and
the reverse. Quantized ``copy_`` gives PyTorch's integers, quantizers and error messages."""

import io
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minitorch as mt  # noqa: E402
import minitorch.ao.quantization as mtq  # noqa: E402

tq = torch.ao.quantization

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")


def converted(lib, quant, seed: int, bias: bool, calibrate: bool):
    """QuantStub -> Linear(8, 16) -> ReLU -> Linear(16, 4) -> DeQuantStub, QAT-prepared and converted."""
    lib.manual_seed(seed)

    class MLP(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = quant.QuantStub()
            self.layers = lib.nn.Sequential(lib.nn.Linear(8, 16), lib.nn.ReLU(), lib.nn.Linear(16, 4, bias=bias))
            self.dequant = quant.DeQuantStub()

        def forward(self, x):
            return self.dequant(self.layers(self.quant(x)))

    model = MLP()
    model.qconfig = quant.get_default_qat_qconfig("x86")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prepared = quant.prepare_qat(model)
        if calibrate:
            for _ in range(3):
                prepared(lib.randn(32, 8) * 2)
        prepared.eval()
        return quant.convert(prepared)


def inputs() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((64, 8)).astype(np.float32) * 2


@pytest.mark.parametrize("bias", [True, False])
def test_pytorch_state_dict_loads_into_minitorch(bias):
    theirs = converted(torch, tq, 0, bias, calibrate=True)
    buffer = io.BytesIO()
    torch.save(theirs.state_dict(), buffer)
    buffer.seek(0)
    ours = converted(mt, mtq, 1, bias, calibrate=False)
    state = mt.load(buffer)
    assert list(state) == list(theirs.state_dict())
    ours.load_state_dict(state)
    x = inputs()
    expected = theirs(torch.from_numpy(x)).numpy()
    got = ours(mt.tensor(x)).numpy()
    step = theirs.layers[2].scale
    # minitorch's requantization may differ from FBGEMM's fixed-point one by one step (docs/quantization.md)
    assert np.abs(got - expected).max() <= step * 1.0001
    assert (got == expected).mean() > 0.95
    assert ours.layers[0].scale == theirs.layers[0].scale and ours.layers[0].zero_point == theirs.layers[0].zero_point
    np.testing.assert_array_equal(ours.layers[0].weight().int_repr().numpy(),
                                  theirs.layers[0].weight().int_repr().numpy())


@pytest.mark.parametrize("bias", [True, False])
def test_minitorch_state_dict_loads_into_pytorch(bias):
    ours = converted(mt, mtq, 0, bias, calibrate=True)
    buffer = io.BytesIO()
    mt.save(ours.state_dict(), buffer)
    buffer.seek(0)
    theirs = converted(torch, tq, 1, bias, calibrate=False)
    theirs.load_state_dict(torch.load(buffer))  # weights_only=True: PyTorch's safe loader accepts the file
    x = inputs()
    expected = theirs(torch.from_numpy(x)).numpy()
    got = ours(mt.tensor(x)).numpy()
    assert np.abs(got - expected).max() <= ours.layers[2].scale * 1.0001
    assert (got == expected).mean() > 0.95
    assert float(theirs.quant.scale) == float(ours.quant.scale)


def quantized(lib, values, scheme, dtype="qint8"):
    x = lib.tensor(values, dtype=lib.float32)
    if scheme == "per_tensor":
        return lib.quantize_per_tensor(x, 0.1, 3, getattr(lib, dtype))
    scales = lib.tensor([0.1, 0.25][: x.shape[0]], dtype=lib.float64)
    return lib.quantize_per_channel(x, scales, lib.tensor([0, 1][: x.shape[0]]), 0, getattr(lib, dtype))


X = [[-1.0, 0.5, 2.0], [0.3, 0.7, -0.26]]
Z = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]

CASES = {
    "q <- q": (lambda lib: quantized(lib, Z, "per_tensor"), lambda lib: quantized(lib, X, "per_tensor")),
    "q <- q row (broadcast)": (lambda lib: quantized(lib, Z, "per_tensor"), lambda lib: quantized(lib, X, "per_tensor")[1]),
    "pc <- pc": (lambda lib: quantized(lib, Z, "per_channel"), lambda lib: quantized(lib, X, "per_channel")),
    "q <- float": (lambda lib: quantized(lib, Z, "per_tensor"), lambda lib: lib.tensor(X) * 7),
    "pc <- float": (lambda lib: quantized(lib, Z, "per_channel"), lambda lib: lib.tensor(X) * 3),
    "quint8 <- float": (lambda lib: quantized(lib, Z, "per_tensor", "quint8"), lambda lib: lib.tensor(X) * 30),
    "qint32 <- float": (lambda lib: quantized(lib, Z, "per_tensor", "qint32"), lambda lib: lib.tensor(X) * 1e9),
    "view <- q": (lambda lib: quantized(lib, Z, "per_tensor")[0], lambda lib: quantized(lib, X, "per_channel")[1]),
    "q <- non-contiguous q": (lambda lib: quantized(lib, Z, "per_tensor"),
                              lambda lib: quantized(lib, X, "per_tensor").t().contiguous().t()),
    # errors
    "dtype": (lambda lib: quantized(lib, Z, "per_tensor", "quint8"), lambda lib: quantized(lib, X, "per_tensor")),
    "qscheme": (lambda lib: quantized(lib, Z, "per_tensor"), lambda lib: quantized(lib, X, "per_channel")),
    "shape": (lambda lib: quantized(lib, Z, "per_tensor"), lambda lib: quantized(lib, [[1.0, 2.0]] * 3, "per_tensor")),
    "float64 source": (lambda lib: quantized(lib, Z, "per_tensor"), lambda lib: lib.tensor(X, dtype=lib.float64)),
    "int source": (lambda lib: quantized(lib, Z, "per_tensor"), lambda lib: lib.ones(2, 3, dtype=lib.int64)),
    "float broadcast": (lambda lib: quantized(lib, Z, "per_tensor"), lambda lib: lib.ones(3)),
    "non-contiguous float": (lambda lib: quantized(lib, Z, "per_tensor"), lambda lib: lib.ones(3, 2).t()),
    "non-contiguous self": (lambda lib: quantized(lib, Z, "per_tensor").t(), lambda lib: lib.ones(3, 2)),
    "float <- q": (lambda lib: lib.zeros(2, 3), lambda lib: quantized(lib, X, "per_tensor")),
    "int8 <- q": (lambda lib: lib.zeros(2, 3, dtype=lib.int8), lambda lib: quantized(lib, X, "per_tensor")),
}


def run_copy(lib, case):
    make_self, make_src = CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        self, src = make_self(lib), make_src(lib)
        try:
            out = self.copy_(src)
        except Exception as exc:  # noqa: BLE001 - the outcome compared is the exception
            return type(exc).__name__, str(exc).split("\n")[0]
    assert out is self
    if self.qscheme() == lib.per_tensor_affine:
        params = (self.q_scale(), self.q_zero_point())
    else:
        params = (self.q_per_channel_scales().tolist(), self.q_per_channel_zero_points().tolist(),
                  self.q_per_channel_axis())
    return str(self.dtype), self.int_repr().tolist(), params


@pytest.mark.parametrize("case", list(CASES))
def test_quantized_copy_matches_pytorch(case):
    assert run_copy(mt, case) == run_copy(torch, case)
