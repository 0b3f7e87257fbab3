"""nn.RNN / LSTM / GRU and their cells: values against a numpy reference that reads the module's own
weights by their PyTorch names, gradients (gradcheck/gradgradcheck in float64), options and errors."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch as torch
import minitorch.nn as nn
from minitorch.autograd import gradcheck, gradgradcheck
from minitorch.testing.strategies import tensors

fixture_ok = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
RNG = np.random.default_rng(11)
F64 = torch.float64


def npy(t):
    return t.detach().cpu().numpy()


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


# numpy reference ----------------------------------------------------------------------------------


def np_step(mode, x, state, w_ih, w_hh, b_ih, b_hh, w_hr):
    """One step of PyTorch's documented equations, gate by gate."""
    b_ih = np.zeros(w_ih.shape[0]) if b_ih is None else b_ih
    b_hh = np.zeros(w_hh.shape[0]) if b_hh is None else b_hh
    if mode in ("tanh", "relu"):
        pre = x @ w_ih.T + b_ih + state @ w_hh.T + b_hh
        return np.tanh(pre) if mode == "tanh" else np.maximum(pre, 0)
    if mode == "GRU":
        h = state
        (w_ir, w_iz, w_in), (w_hr_, w_hz, w_hn) = np.split(w_ih, 3), np.split(w_hh, 3)
        (b_ir, b_iz, b_in), (b_hr, b_hz, b_hn) = np.split(b_ih, 3), np.split(b_hh, 3)
        r = sigmoid(x @ w_ir.T + b_ir + h @ w_hr_.T + b_hr)
        z = sigmoid(x @ w_iz.T + b_iz + h @ w_hz.T + b_hz)
        n = np.tanh(x @ w_in.T + b_in + r * (h @ w_hn.T + b_hn))
        return (1 - z) * n + z * h
    h, c = state
    w = np.split(w_ih, 4)
    u = np.split(w_hh, 4)
    bi, bh = np.split(b_ih, 4), np.split(b_hh, 4)
    i, f, g, o = (x @ w[k].T + bi[k] + h @ u[k].T + bh[k] for k in range(4))
    c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    h = sigmoid(o) * np.tanh(c)
    return (h if w_hr is None else h @ w_hr.T), c


def np_rnn(module, mode, x, h0, c0=None, layer_input_override=None):
    """x (T, N, I); h0/c0 (L * D, N, *). Returns output (T, N, D * H_out), h_n (and c_n)."""
    directions = 2 if module.bidirectional else 1
    finals_h, finals_c = [], []
    for layer in range(module.num_layers):
        outs = []
        for d in range(directions):
            sfx = f"_l{layer}" + ("_reverse" if d else "")

            def p(name, sfx=sfx):
                t = getattr(module, name + sfx, None)
                return None if t is None else npy(t)

            k = layer * directions + d
            state = h0[k] if mode != "LSTM" else (h0[k], c0[k])
            out = [None] * x.shape[0]
            for t in (range(x.shape[0] - 1, -1, -1) if d else range(x.shape[0])):
                state = np_step(mode, x[t], state, p("weight_ih"), p("weight_hh"), p("bias_ih"), p("bias_hh"),
                                p("weight_hr"))
                out[t] = state[0] if mode == "LSTM" else state
            outs.append(np.stack(out))
            finals_h.append(state[0] if mode == "LSTM" else state)
            if mode == "LSTM":
                finals_c.append(state[1])
        x = np.concatenate(outs, -1)
        if layer_input_override is not None and layer < module.num_layers - 1:
            x = layer_input_override(x)
    return x, np.stack(finals_h), (np.stack(finals_c) if mode == "LSTM" else None)


def make(mode, input_size, hidden, device, **kwargs):
    if mode in ("tanh", "relu"):
        return nn.RNN(input_size, hidden, nonlinearity=mode, dtype=F64, device=device, **kwargs)
    cls = nn.LSTM if mode == "LSTM" else nn.GRU
    return cls(input_size, hidden, dtype=F64, device=device, **kwargs)


# forward values -------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["tanh", "relu", "GRU", "LSTM", "LSTM-proj"])
@fixture_ok
@given(data=st.data())
def test_forward_matches_numpy(device, mode, data):
    proj = mode == "LSTM-proj"
    mode = "LSTM" if proj else mode
    T, N, I, H = (data.draw(st.integers(1, 3)) for _ in range(4))
    H += 1
    opts = {
        "num_layers": data.draw(st.integers(1, 2)), "bias": data.draw(st.booleans()),
        "batch_first": data.draw(st.booleans()), "bidirectional": data.draw(st.booleans()),
    }
    if proj:
        opts["proj_size"] = data.draw(st.integers(1, H - 1))
    module = make(mode, I, H, device, **opts)
    batched, with_state = data.draw(st.booleans()), data.draw(st.booleans())
    D = 2 if opts["bidirectional"] else 1
    h_out = opts.get("proj_size", H)
    x = RNG.standard_normal((T, N, I))
    h0 = RNG.standard_normal((opts["num_layers"] * D, N, h_out)) if with_state else np.zeros((opts["num_layers"] * D, N, h_out))
    c0 = RNG.standard_normal((opts["num_layers"] * D, N, H)) if with_state else np.zeros((opts["num_layers"] * D, N, H))
    if not batched:
        x, h0, c0 = x[:, :1], h0[:, :1], c0[:, :1]
    out_ref, h_ref, c_ref = np_rnn(module, mode, x, h0, c0)

    def t(a, squeeze_dim):
        a = a.squeeze(squeeze_dim) if not batched else a
        return torch.tensor(a, device=device)

    xin = t(x, 1)
    if batched and opts["batch_first"]:
        xin = xin.transpose(0, 1)  # a non-contiguous (N, T, I) input
    hx = None
    if with_state:
        hx = (t(h0, 1), t(c0, 1)) if mode == "LSTM" else t(h0, 1)
    out, state = module(xin, hx)
    if batched and opts["batch_first"]:
        out_ref = out_ref.transpose(1, 0, 2)
    if not batched:
        out_ref, h_ref = out_ref[:, 0], h_ref[:, 0]
        c_ref = None if c_ref is None else c_ref[:, 0]
    assert tuple(out.shape) == out_ref.shape
    np.testing.assert_allclose(npy(out), out_ref, rtol=1e-10, atol=1e-12)
    if mode == "LSTM":
        h_n, c_n = state
        np.testing.assert_allclose(npy(c_n), c_ref, rtol=1e-10, atol=1e-12)
    else:
        h_n = state
    np.testing.assert_allclose(npy(h_n), h_ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["tanh", "relu", "GRU", "LSTM"])
def test_cells_match_numpy(device, mode):
    cls = {"tanh": nn.RNNCell, "relu": nn.RNNCell, "GRU": nn.GRUCell, "LSTM": nn.LSTMCell}[mode]
    for bias in (True, False):
        kwargs = {"nonlinearity": mode} if cls is nn.RNNCell else {}
        cell = cls(3, 4, bias=bias, dtype=F64, device=device, **kwargs)
        x, h, c = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 4)), RNG.standard_normal((2, 4))
        weights = [None if w is None else npy(w) for w in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)]
        state = (h, c) if mode == "LSTM" else h
        expected = np_step(mode, x, state, *weights, None)
        tx = torch.tensor(x, device=device)
        hx = (torch.tensor(h, device=device), torch.tensor(c, device=device)) if mode == "LSTM" else torch.tensor(
            h, device=device)
        got = cell(tx, hx)
        unbatched = cell(tx[1], tuple(s[1] for s in hx) if mode == "LSTM" else hx[1])
        zero_state = cell(tx)
        expected_zero = np_step(mode, x, (np.zeros((2, 4)),) * 2 if mode == "LSTM" else np.zeros((2, 4)), *weights,
                                None)
        if mode == "LSTM":
            for g, e, u, z, ez in zip(got, expected, unbatched, zero_state, expected_zero):
                np.testing.assert_allclose(npy(g), e, rtol=1e-12)
                np.testing.assert_allclose(npy(u), e[1], rtol=1e-12)
                np.testing.assert_allclose(npy(z), ez, rtol=1e-12)
        else:
            np.testing.assert_allclose(npy(got), expected, rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(npy(unbatched), expected[1], rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(npy(zero_state), expected_zero, rtol=1e-12, atol=1e-15)


def test_dropout_between_layers(device):
    """Dropout applies to every layer's output but the last, and only in training."""
    module = nn.GRU(2, 3, num_layers=3, dropout=1.0, dtype=F64, device=device)
    x = RNG.standard_normal((4, 2, 2))
    h0 = np.zeros((3, 2, 3))
    out, h_n = module(torch.tensor(x, device=device))
    ref, h_ref, _ = np_rnn(module, "GRU", x, h0, layer_input_override=lambda a: a * 0)
    np.testing.assert_allclose(npy(out), ref, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(npy(h_n), h_ref, rtol=1e-12, atol=1e-15)
    module.eval()
    out, _ = module(torch.tensor(x, device=device))
    np.testing.assert_allclose(npy(out), np_rnn(module, "GRU", x, h0)[0], rtol=1e-12)
    assert not np.allclose(ref, np_rnn(module, "GRU", x, h0)[0])


# gradients ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [nn.RNNCell, nn.GRUCell, nn.LSTMCell])
@given(data=st.data())
@settings(max_examples=5)
def test_cell_gradcheck(cls, data):
    n = data.draw(st.integers(1, 3))
    cell = cls(3, 2, dtype=F64)
    x = data.draw(tensors((n, 3), requires_grad=True))
    h = data.draw(tensors((n, 2), requires_grad=True))
    params = list(cell.parameters())
    if cls is nn.LSTMCell:
        c = data.draw(tensors((n, 2), requires_grad=True))

        def fn(x, h, c, *params):
            return cell(x, (h, c))

        inputs = (x, h, c, *params)
    else:

        def fn(x, h, *params):
            return cell(x, h)

        inputs = (x, h, *params)
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


@pytest.mark.parametrize("mode", ["tanh", "GRU", "LSTM-proj"])
def test_layer_gradcheck(mode):
    """A 2-layer bidirectional network: gradients reach the input, the initial state and every weight."""
    proj = mode == "LSTM-proj"
    module = make("LSTM" if proj else mode, 2, 3, "cpu", num_layers=2, bidirectional=True,
                  **({"proj_size": 2} if proj else {}))
    h_out = 2 if proj else 3
    x = torch.tensor(RNG.standard_normal((3, 2, 2)), requires_grad=True)
    h0 = torch.tensor(RNG.standard_normal((4, 2, h_out)), requires_grad=True)
    c0 = torch.tensor(RNG.standard_normal((4, 2, 3)), requires_grad=True)
    params = list(module.parameters())
    if proj:

        def fn(x, h0, c0, *params):
            out, (h, c) = module(x, (h0, c0))
            return out, h, c

        inputs = (x, h0, c0, *params)
    else:

        def fn(x, h0, *params):
            return module(x, h0)

        inputs = (x, h0, *params)
    assert gradcheck(fn, inputs, fast_mode=True)


def test_gradgradcheck_lstm_layer():
    module = nn.LSTM(2, 2, dtype=F64)
    x = torch.tensor(RNG.standard_normal((2, 2)), requires_grad=True)  # unbatched
    assert gradgradcheck(lambda x, w: module(x)[0], (x, module.weight_hh_l0))


def test_gradgradcheck_gru_layer():
    module = nn.GRU(2, 2, dtype=F64)
    x = torch.tensor(RNG.standard_normal((2, 2)), requires_grad=True)
    assert gradgradcheck(lambda x, w: module(x)[0], (x, module.weight_ih_l0))


def test_backward_fills_every_parameter(device):
    module = nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2, batch_first=True, device=device)
    out, (h, c) = module(torch.randn(2, 5, 3, device=device))
    (out.sum() + h.sum() + c.sum()).backward()
    for name, p in module.named_parameters():
        assert p.grad is not None and p.grad.shape == p.shape, name
        assert float(p.grad.abs().sum()) > 0, name


# parameters, options and errors ----------------------------------------------------------------------


def test_parameter_names_shapes_and_init(device):
    module = nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2, device=device)
    names = {n: tuple(p.shape) for n, p in module.named_parameters()}
    assert list(names)[:5] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_hr_l0"]
    assert names["weight_ih_l0"] == (20, 3) and names["weight_hh_l0"] == (20, 2)
    assert names["weight_ih_l1_reverse"] == (20, 4) and names["weight_hr_l1_reverse"] == (2, 5)
    assert len(names) == 20
    assert [[tuple(w.shape) for w in ws] for ws in module.all_weights][0] == [(20, 3), (20, 2), (20,), (20,), (2, 5)]
    bound = 1 / math.sqrt(5)
    values = np.concatenate([npy(p).ravel() for p in module.parameters()])
    assert values.min() >= -bound and values.max() <= bound and values.std() > bound / 3
    gru = nn.GRU(2, 3, bias=False)
    assert [n for n, _ in gru.named_parameters()] == ["weight_ih_l0", "weight_hh_l0"]
    assert tuple(gru.weight_ih_l0.shape) == (9, 2)
    assert set(nn.GRUCell(2, 3).state_dict()) == {"weight_ih", "weight_hh", "bias_ih", "bias_hh"}
    assert nn.LSTMCell(2, 3, bias=False).bias_ih is None


def test_reprs():
    assert repr(nn.LSTM(3, 5, 2, batch_first=True, proj_size=2)) == \
        "LSTM(3, 5, proj_size=2, num_layers=2, batch_first=True)"
    assert repr(nn.RNN(2, 3, nonlinearity="relu", bidirectional=True)) == "RNN(2, 3, bidirectional=True)"
    assert repr(nn.RNNCell(2, 3, bias=False, nonlinearity="relu")) == "RNNCell(2, 3, bias=False, nonlinearity=relu)"


def test_shapes_and_dtype_follow_input(device):
    module = nn.GRU(4, 3, num_layers=2, bidirectional=True, device=device)
    out, h = module(torch.randn(6, 2, 4, device=device))
    assert out.shape == (6, 2, 6) and h.shape == (4, 2, 3) and out.dtype == torch.float32
    out, h = module(torch.randn(6, 4, device=device))
    assert out.shape == (6, 6) and h.shape == (4, 3)
    module = nn.RNN(4, 3, batch_first=True, device=device)
    out, h = module(torch.randn(2, 6, 4, device=device))
    assert out.shape == (2, 6, 3) and h.shape == (1, 2, 3)


def test_constructor_errors():
    with pytest.raises(ValueError, match="Unknown nonlinearity 'gelu'"):
        nn.RNN(2, 3, nonlinearity="gelu")
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        nn.GRU(2, 3, dropout=1.5)
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(2, 3, proj_size=3)
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        nn.LSTM(2, 0)
    with pytest.raises(ValueError, match="num_layers must be greater than zero"):
        nn.LSTM(2, 3, num_layers=0)
    with pytest.raises(TypeError, match="hidden_size should be of type int, got: float"):
        nn.GRU(2, 3.0)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.LSTM(2, 3, dropout=0.5)


def test_forward_errors(device):
    lstm = nn.LSTM(3, 4, num_layers=2, device=device)
    x = torch.randn(5, 2, 3, device=device)
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D, got 4D input instead"):
        lstm(x.unsqueeze(0))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 3, got 2"):
        lstm(torch.randn(5, 2, 2, device=device))
    with pytest.raises(ValueError, match="input must have the type torch.float32, got type torch.float64"):
        lstm(x.double())
    h, c = torch.zeros(2, 2, 4, device=device), torch.zeros(2, 2, 4, device=device)
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(2, 2, 4\), got \[2, 3, 4\]"):
        lstm(x, (torch.zeros(2, 3, 4, device=device), c))
    with pytest.raises(RuntimeError, match="hx and cx should also be 3-D but got \\(2-D, 3-D\\) tensors"):
        lstm(x, (h[0], c))
    rnn = nn.RNN(3, 4, device=device)
    with pytest.raises(ValueError, match="RNN: Expected input to be 2D or 3D, got 1D tensor instead"):
        rnn(x[0, 0])
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 4\), got \[1, 2, 3\]"):
        rnn(x, torch.zeros(1, 2, 3, device=device))
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx should also be 2-D but got 3-D tensor"):
        rnn(x[:, 0], torch.zeros(1, 1, 4, device=device))
    cell = nn.GRUCell(3, 4, device=device)
    with pytest.raises(ValueError, match="GRUCell: Expected input to be 1D or 2D, got 3D instead"):
        cell(x)
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 2, expected 3"):
        cell(torch.zeros(2, 2, device=device))
    with pytest.raises(RuntimeError, match="Input batch size 2 doesn't match hidden batch size 3"):
        cell(x[0], torch.zeros(3, 4, device=device))
    with pytest.raises(RuntimeError, match=r"hidden\[1\] has inconsistent hidden_size: got 3, expected 4"):
        nn.LSTMCell(3, 4, device=device)(x[0], (torch.zeros(2, 4, device=device), torch.zeros(2, 3, device=device)))
    with pytest.raises(RuntimeError, match="Unknown nonlinearity: gelu"):
        bad = nn.RNNCell(3, 4, device=device)
        bad.nonlinearity = "gelu"
        bad(x[0])
