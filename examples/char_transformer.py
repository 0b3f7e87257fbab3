"""Train a tiny character-level transformer on Shakespeare's sonnets, and watch its samples improve.

    python examples/char_transformer.py

A decoder-only transformer in the GPT mould: token and position embeddings, pre-LayerNorm blocks of
causal multi-head self-attention and a GELU MLP with residual connections, trained with AdamW to predict
the next character of the bundled text (examples/data/sonnets.txt, sonnets 1-50). Every
``--sample-every`` steps it prints a sample: noise at first, then words, line breaks and the sonnets'
punctuation. The checkpoint is saved, reloaded and checked to give the same validation loss and sample.
With ``--compile`` the training forward (dropout included) and its backward run through ``torch.compile(model)``
and AdamW's update through a compiled step: the same losses and weights, bit for bit, in less time.
"""

from __future__ import annotations

import math

import _common  # examples/_common.py: data, flags, checkpoint and plotting helpers

import minitorch as torch
import minitorch.nn as nn
import minitorch.nn.functional as F
from minitorch.utils.progress import progress


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention in which position t attends to positions <= t only."""

    def __init__(self, n_embd: int, n_head: int, dropout: float):
        super().__init__()
        if n_embd % n_head:
            raise ValueError(f"n_embd ({n_embd}) must be divisible by n_head ({n_head})")
        self.n_head = n_head
        self.dropout = dropout
        self.qkv = nn.Linear(n_embd, 3 * n_embd)  # queries, keys and values in one matmul
        self.proj = nn.Linear(n_embd, n_embd)
        self.resid_dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        # (B, T, 3C) -> three (B, n_head, T, head_size) tensors
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in self.qkv(x).split(C, dim=2))
        # softmax(q k^T / sqrt(head_size) + causal mask) v
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # heads side by side again
        return self.resid_dropout(self.proj(y))


class Block(nn.Module):
    """Pre-norm transformer block: x + attention(LN(x)), then x + MLP(LN(x))."""

    def __init__(self, n_embd: int, n_head: int, dropout: float):
        super().__init__()
        self.ln1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, dropout)
        self.ln2 = nn.LayerNorm(n_embd)
        # GPT-2's tanh form of GELU (the exact erf form now costs about the same; either trains as well)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * n_embd, n_embd), nn.Dropout(dropout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class CharTransformer(nn.Module):
    def __init__(self, vocab_size: int, block_size: int, n_embd: int, n_head: int, n_layer: int,
                 dropout: float = 0.0):
        super().__init__()
        self.block_size = block_size
        self.token_embedding = nn.Embedding(vocab_size, n_embd)
        self.position_embedding = nn.Embedding(block_size, n_embd)
        self.blocks = nn.Sequential(*[Block(n_embd, n_head, dropout) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, vocab_size)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None):
        """Logits (B, T, vocab) for the next character at every position, and the loss if targets are given."""
        T = idx.shape[1]
        positions = torch.arange(T, device=idx.device)
        x = self.token_embedding(idx) + self.position_embedding(positions)
        logits = self.head(self.ln_f(self.blocks(x)))
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))

    @torch.no_grad()
    def generate(self, idx: torch.Tensor, max_new_tokens: int, temperature: float = 1.0,
                 generator: torch.Generator | None = None) -> torch.Tensor:
        """Append ``max_new_tokens`` characters to ``idx`` (B, T), each sampled from the model's prediction."""
        for _ in range(max_new_tokens):
            logits, _ = self(idx[:, -self.block_size:])
            probs = F.softmax(logits[:, -1, :] / temperature, dim=-1)
            idx = torch.cat([idx, torch.multinomial(probs, 1, generator=generator)], dim=1)
        return idx


class CharData:
    """The text as a tensor of character codes, split 90/10 into training and validation."""

    def __init__(self, text: str):
        self.chars = sorted(set(text))
        self.code = {c: i for i, c in enumerate(self.chars)}
        data = torch.tensor([self.code[c] for c in text], dtype=torch.long)
        n_train = int(0.9 * len(data))
        self.train, self.val = data[:n_train], data[n_train:]

    def encode(self, text: str) -> torch.Tensor:
        return torch.tensor([self.code[c] for c in text], dtype=torch.long)

    def decode(self, codes: torch.Tensor) -> str:
        return "".join(self.chars[i] for i in codes.tolist())

    @staticmethod
    def batch(data: torch.Tensor, batch_size: int, block_size: int, generator: torch.Generator):
        """``batch_size`` random windows of the text and, as targets, the same windows shifted by one."""
        starts = torch.randint(len(data) - block_size, (batch_size, 1), generator=generator)
        index = starts + torch.arange(block_size)
        return data[index], data[index + 1]


@torch.no_grad()
def validation_loss(model: CharTransformer, batches: list, device) -> float:
    model.eval()
    losses = [model(x.to(device), y.to(device))[1].item() for x, y in batches]
    model.train()
    return sum(losses) / len(losses)


def sample(model: CharTransformer, data: CharData, device, length: int, seed: int, prompt: str = "\n") -> str:
    """A reproducible sample: the same weights and seed always give the same text."""
    model.eval()
    generator = torch.Generator().manual_seed(seed)
    out = model.generate(data.encode(prompt)[None].to(device), length, temperature=0.8, generator=generator)
    model.train()
    return data.decode(out[0, len(prompt):].cpu())


def main(argv: list[str] | None = None) -> dict:
    parser = _common.base_parser(__doc__.splitlines()[0], epochs=100, lr=3e-3, batch_size=32)
    parser.add_argument("--block-size", type=int, default=64, help="context length in characters (default: 64)")
    parser.add_argument("--n-embd", type=int, default=64, help="embedding width (default: 64)")
    parser.add_argument("--n-head", type=int, default=4, help="attention heads (default: 4)")
    parser.add_argument("--n-layer", type=int, default=2, help="transformer blocks (default: 2)")
    parser.add_argument("--dropout", type=float, default=0.1, help="dropout probability (default: 0.1)")
    parser.add_argument("--compile", action="store_true",
                        help="train through torch.compile(model) and a compiled AdamW step (the same losses and "
                             "weights, faster)")
    parser.add_argument("--sample-every", type=int, default=250, help="steps between samples (default: 250)")
    parser.add_argument("--sample-length", type=int, default=200, help="characters per sample (default: 200)")
    args = parser.parse_args(argv)

    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    data = CharData((_common.DATA_DIR / "sonnets.txt").read_text(encoding="utf-8"))
    batches = torch.Generator().manual_seed(args.seed)
    # One epoch draws as many characters as the training text holds, in random windows.
    steps_per_epoch = max(1, len(data.train) // (args.batch_size * args.block_size))
    total_steps = args.epochs * steps_per_epoch
    if args.max_steps is not None:
        total_steps = min(total_steps, args.max_steps)
    val_batches = [CharData.batch(data.val, args.batch_size, args.block_size, torch.Generator().manual_seed(i))
                   for i in range(4)]
    print(f"text: {len(data.train)} training and {len(data.val)} validation characters, "
          f"vocabulary of {len(data.chars)}; {total_steps} steps of {args.batch_size}x{args.block_size}; "
          f"device {device}")

    def new_model() -> CharTransformer:
        return CharTransformer(len(data.chars), args.block_size, args.n_embd, args.n_head, args.n_layer,
                               args.dropout).to(device)

    model = new_model()
    print(f"{sum(p.numel() for p in model.parameters())} parameters")
    # Weight decay on the matrices only; biases, LayerNorm gains and embeddings are left alone.
    decay = [p for name, p in model.named_parameters() if p.dim() >= 2 and "embedding" not in name]
    no_decay = [p for name, p in model.named_parameters() if not (p.dim() >= 2 and "embedding" not in name)]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                                  lr=args.lr, betas=(0.9, 0.99))
    # Linear warm-up over the first 5% of steps, then cosine decay to a tenth of the peak rate.
    warmup = max(1, total_steps // 20)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(
        (step + 1) / warmup, 0.1 + 0.45 * (1 + math.cos(math.pi * min(1.0, step / total_steps)))))

    # --compile: the training forward and backward replay one compiled plan (sampling and validation, with their
    # changing shapes, use the plain module); ``model`` keeps its state_dict keys.
    net = torch.compile(model) if args.compile else model
    optimizer_step = torch.compile(optimizer.step) if args.compile else optimizer.step

    print(f"--- sample before training ---\n{sample(model, data, device, args.sample_length, args.seed)}\n")
    losses: list[float] = []
    with _common.Timer() as timer:
        bar = progress(range(1, total_steps + 1), desc="training", disable=args.no_progress or None)
        for step in bar:
            x, y = CharData.batch(data.train, args.batch_size, args.block_size, batches)
            _, loss = net(x.to(device), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer_step()
            scheduler.step()
            losses.append(loss.item())
            bar.set_postfix(loss=f"{losses[-1]:.3f}")
            if step % args.sample_every == 0 or step == total_steps:
                val = validation_loss(model, val_batches, device)
                text = sample(model, data, device, args.sample_length, args.seed)
                bar.write(f"--- step {step}: train loss {losses[-1]:.3f}, validation loss {val:.3f} ---\n{text}\n")
    print(f"trained {len(losses)} steps in {timer.seconds:.1f} s")

    checkpoint = args.out_dir / "char_transformer.pt"
    val_loss, reloaded_val_loss = _common.checkpoint_round_trip(
        model, new_model(), checkpoint, lambda m: validation_loss(m, val_batches, device))
    print(f"validation loss {val_loss:.4f}; reloaded from {checkpoint}: {reloaded_val_loss:.4f}")
    if reloaded_val_loss != val_loss:
        raise RuntimeError("the reloaded checkpoint does not reproduce the validation loss")

    curve = _common.save_loss_curve(losses, args.out_dir / "char_transformer_loss.png",
                                    "character transformer on the sonnets")
    _common.log_to_tensorboard(args.tensorboard, losses, args, {"val_loss": val_loss})
    if curve is not None:
        print(f"loss curve: {curve}")
    return {"model": model, "losses": losses, "val_loss": val_loss, "reloaded_val_loss": reloaded_val_loss,
            "seconds": timer.seconds, "cpu_seconds": timer.cpu_seconds, "checkpoint": checkpoint}


if __name__ == "__main__":
    main()
