"""Differential test: PyTorch's word-language-model example trained in PyTorch and in minitorch.

The example (pytorch/examples, word_language_model) trains Embedding -> nn.RNN(tanh) -> Linear, or a
causal nn.Transformer encoder, with NLLLoss on log_softmax, ``clip_grad_norm_(params, 0.25)``, plain SGD
by hand (``p.data.add_(p.grad, alpha=-lr)``) and the hidden state detached between windows of
``bptt`` words; then it scores a validation split in eval mode under ``no_grad``. Here both libraries
start from the same weights (PyTorch's, copied through numpy) and see the same batches, so every
loss, the step-0 gradients, the clipped norms and the validation loss must agree to float32 rounding.

The runs are short on purpose: SGD at lr 2 with clipping is chaotic. Float32 rounding (PyTorch's float32
norm of a large decoder gradient is off by up to ~3e-4 relative, which moves the clip coefficient by
~6e-5) grows by orders of magnitude over a few hundred steps, and two full runs from identical weights
then end a few percent apart in perplexity: a longer comparison measures that noise, not minitorch.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minitorch  # noqa: E402

SONNETS = Path(__file__).resolve().parents[2] / "examples" / "data" / "sonnets.txt"


@pytest.fixture(autouse=True)
def one_torch_thread():
    """PyTorch's thread pool only adds contention for ops this small (about 10x slower on two busy cores)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def corpus():
    """Word ids of the sonnets (each line's words, then ``<eos>``, as the example's data.py does),
    split 90/10 into training and validation."""
    vocab: dict[str, int] = {}
    ids = [vocab.setdefault(w, len(vocab)) for line in SONNETS.read_text().splitlines() for w in line.split() + ["<eos>"]]
    ids = np.array(ids, dtype=np.int64)
    split = int(len(ids) * 0.9)
    return ids[:split], ids[split:], len(vocab)


def batchify(ids: np.ndarray, bsz: int) -> np.ndarray:
    """(len // bsz, bsz): column b is the b-th contiguous slice of the text."""
    n = len(ids) // bsz
    return ids[: n * bsz].reshape(bsz, n).T.copy()


def build(lib, kind: str, ntoken: int, ninp: int = 32, nhid: int = 32, nlayers: int = 2):
    """The example's RNNModel (tied weights off) or TransformerModel, written against ``lib``."""
    nn, F = lib.nn, lib.nn.functional

    class RNNModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Embedding(ntoken, ninp)
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity="tanh", dropout=0.0)
            self.decoder = nn.Linear(nhid, ntoken)

        def forward(self, x, hidden):
            output, hidden = self.rnn(self.encoder(x), hidden)
            return F.log_softmax(self.decoder(output).view(-1, ntoken), dim=1), hidden

        def init_hidden(self, bsz):
            return next(self.parameters()).new_zeros(nlayers, bsz, nhid)

    class TransformerModel(nn.Transformer):
        # dropout=0 (the example leaves nn.Transformer's 0.1): random masks cannot match across libraries
        def __init__(self):
            super().__init__(d_model=ninp, nhead=2, dim_feedforward=nhid, num_encoder_layers=nlayers, dropout=0.0)
            self.input_emb = nn.Embedding(ntoken, ninp)
            self.decoder = nn.Linear(ninp, ntoken)
            pe = lib.zeros(64, ninp)
            position = lib.arange(0, 64, dtype=lib.float).unsqueeze(1)
            div_term = lib.exp(lib.arange(0, ninp, 2).float() * (-math.log(10000.0) / ninp))
            pe[:, 0::2] = lib.sin(position * div_term)
            pe[:, 1::2] = lib.cos(position * div_term)
            self.register_buffer("pe", pe.unsqueeze(1))

        def forward(self, x, hidden):
            mask = (lib.triu(lib.ones(len(x), len(x))) == 1).transpose(0, 1)
            mask = mask.float().masked_fill(mask == 0, float("-inf")).masked_fill(mask == 1, 0.0)
            src = self.input_emb(x) * math.sqrt(ninp) + self.pe[: x.size(0)]
            output = self.encoder(src, mask=mask)
            return F.log_softmax(self.decoder(output), dim=-1).view(-1, ntoken), hidden

        def init_hidden(self, bsz):
            return None

    model = RNNModel() if kind == "RNN_TANH" else TransformerModel()
    nn.init.uniform_(model.encoder.weight if kind == "RNN_TANH" else model.input_emb.weight, -0.1, 0.1)
    nn.init.zeros_(model.decoder.bias)
    nn.init.uniform_(model.decoder.weight, -0.1, 0.1)
    return model


def detach(hidden):
    return None if hidden is None else hidden.detach()


def train_and_evaluate(lib, model, train, valid, steps, lr=2.0, clip=0.25, bptt=35):
    """The example's train(), epoch after epoch, for ``steps`` windows, then its evaluate() on ``valid``."""
    criterion = lib.nn.NLLLoss()
    losses, norms, grads = [], [], []
    model.train()
    while len(losses) < steps:
        hidden = model.init_hidden(train.shape[1])  # each epoch starts from a zero state
        for i in range(0, len(train) - 1, bptt):
            if len(losses) == steps:
                break
            seq_len = min(bptt, len(train) - 1 - i)
            x = lib.from_numpy(train[i : i + seq_len].copy())
            y = lib.from_numpy(train[i + 1 : i + 1 + seq_len].reshape(-1).copy())
            hidden = detach(hidden)
            model.zero_grad()
            output, hidden = model(x, hidden)
            loss = criterion(output, y)
            loss.backward()
            if len(grads) < 3:
                grads.append({n: p.grad.numpy().copy() for n, p in model.named_parameters()})
            norms.append(float(lib.nn.utils.clip_grad_norm_(model.parameters(), clip)))
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
            losses.append(loss.item())
    model.eval()
    total, hidden = 0.0, model.init_hidden(valid.shape[1])
    with lib.no_grad():
        for i in range(0, len(valid) - 1, bptt):
            seq_len = min(bptt, len(valid) - 1 - i)
            output, hidden = model(lib.from_numpy(valid[i : i + seq_len].copy()), hidden)
            hidden = detach(hidden)
            y = lib.from_numpy(valid[i + 1 : i + 1 + seq_len].reshape(-1).copy())
            total += seq_len * criterion(output, y).item()
    return np.array(losses), np.array(norms), grads, total / (len(valid) - 1)


# Tolerances measured on PyTorch against itself (weights perturbed by 1e-7 relative, then trained the same
# way): the RNN's losses and clipped norms then stay within ~1e-6, the Transformer's losses within ~4e-5
# but its norms drift ~3e-3 in 12 steps. Its attention-projection gradients start tiny (near-uniform
# attention), so one step's float32 rounding moves them by ~1e-4 of their scale: its gradients are compared
# at step 0 only (from identical weights, every step agrees with a float64 reference to ~1e-6 in both).
@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")  # PyTorch's, about its fast path
@pytest.mark.parametrize(
    "kind, steps, grad_steps, loss_rtol, norm_rtol",
    [("RNN_TANH", 30, 3, 2e-5, 2e-5), ("Transformer", 12, 1, 2e-4, 2e-2)],
)
def test_training_from_identical_weights_matches_pytorch(kind, steps, grad_steps, loss_rtol, norm_rtol):
    train_ids, valid_ids, ntoken = corpus()
    train, valid = batchify(train_ids, 20), batchify(valid_ids, 10)
    torch.manual_seed(0)
    reference = build(torch, kind, ntoken)
    model = build(minitorch, kind, ntoken)
    state = {k: v.detach().numpy().copy() for k, v in reference.state_dict().items()}
    model.load_state_dict({k: minitorch.from_numpy(v) for k, v in state.items()})

    t_losses, t_norms, t_grads, t_valid = train_and_evaluate(torch, reference, train, valid, steps)
    m_losses, m_norms, m_grads, m_valid = train_and_evaluate(minitorch, model, train, valid, steps)

    for step, (tg, mg) in enumerate(zip(t_grads[:grad_steps], m_grads[:grad_steps])):
        assert list(mg) == list(tg)
        for name in tg:
            scale = np.abs(tg[name]).max()
            np.testing.assert_allclose(mg[name], tg[name], rtol=0, atol=2e-5 * scale, err_msg=f"step {step} {name}")
    assert t_losses[-5:].mean() < t_losses[:5].mean() - 0.5  # it learned something
    np.testing.assert_allclose(m_losses, t_losses, rtol=loss_rtol)
    np.testing.assert_allclose(m_valid, t_valid, rtol=loss_rtol)
    np.testing.assert_allclose(m_norms, t_norms, rtol=norm_rtol)
    m_params = dict(model.named_parameters())
    for name, p in reference.named_parameters():
        expected = p.detach().numpy()
        np.testing.assert_allclose(m_params[name].detach().numpy(), expected, rtol=0,
                                   atol=norm_rtol * np.abs(expected).max(), err_msg=name)
