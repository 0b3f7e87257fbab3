"""Train a bag-of-words text classifier whose embedding table has 100,000 rows, with sparse gradients.

    python examples/sparse_embeddings.py

Synthetic documents (no download): each of 4 topics owns 2,000 indicative words of a 100,000-word
vocabulary, and every document mixes 12 topic words with 28 common words. The model is PyTorch code with
``import minitorch as torch``: ``nn.EmbeddingBag(100_000, 64, mode="mean", sparse=True)`` feeding a linear
layer; ``optim.SparseAdam`` updates only the embedding rows a batch used, ``optim.Adam`` the classifier.

It then trains the same model with dense gradients (``sparse=False``, Adam) for the same steps and prints
what the sparse gradients saved (bytes held by the embedding's ``.grad``, seconds per step) beside the
test accuracy each run reached.
"""

from __future__ import annotations

import time

import _common  # examples/_common.py: flags and plotting helpers
import numpy as np

import minitorch as torch
import minitorch.nn as nn
from minitorch.utils.progress import progress

VOCAB, DIM, TOPICS, TOPIC_WORDS = 100_000, 64, 4, 2_000
DOC_TOPIC_WORDS, DOC_COMMON_WORDS = 12, 28


def make_documents(n: int, rng: np.random.Generator):
    """(flat word ids, offsets, labels): bags for ``nn.EmbeddingBag`` with offsets."""
    labels = rng.integers(0, TOPICS, n)
    topic_words = rng.integers(0, TOPIC_WORDS, (n, DOC_TOPIC_WORDS)) + labels[:, None] * TOPIC_WORDS
    common = rng.integers(TOPICS * TOPIC_WORDS, VOCAB, (n, DOC_COMMON_WORDS))
    words = np.concatenate([topic_words, common], axis=1)
    offsets = np.arange(n) * words.shape[1]
    return words.reshape(-1), offsets, labels


class BagOfWords(nn.Module):
    def __init__(self, sparse: bool):
        super().__init__()
        self.embedding = nn.EmbeddingBag(VOCAB, DIM, mode="mean", sparse=sparse)
        self.classifier = nn.Linear(DIM, TOPICS)

    def forward(self, words: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.embedding(words, offsets))


def grad_bytes(grad: torch.Tensor) -> int:
    """Memory held by a gradient: the dense array, or a sparse tensor's indices plus values."""
    if grad.is_sparse:
        return grad._indices().numel() * 8 + grad._values().numel() * grad.element_size()
    return grad.numel() * grad.element_size()


def train(sparse: bool, batches, test, args) -> dict:
    torch.manual_seed(args.seed)
    model = BagOfWords(sparse).to(args.device)
    if sparse:
        optimizers = [torch.optim.SparseAdam(model.embedding.parameters(), lr=args.lr),
                      torch.optim.Adam(model.classifier.parameters(), lr=args.lr)]
    else:
        optimizers = [torch.optim.Adam(model.parameters(), lr=args.lr)]
    losses, seconds, peak_grad = [], 0.0, 0
    steps = [b for _ in range(args.epochs) for b in batches][:args.max_steps]
    name = "sparse" if sparse else "dense"
    with progress(steps, desc=f"{name} gradients", unit="step", disable=args.no_progress or None) as bar:
        for words, offsets, labels in bar:
            start = time.perf_counter()
            for opt in optimizers:
                opt.zero_grad()
            loss = nn.functional.cross_entropy(model(words, offsets), labels)
            loss.backward()
            peak_grad = max(peak_grad, grad_bytes(model.embedding.weight.grad))
            for opt in optimizers:
                opt.step()
            seconds += time.perf_counter() - start
            losses.append(loss.item())
            bar.set_postfix(loss=f"{losses[-1]:.3f}")
    with torch.no_grad():
        words, offsets, labels = test
        accuracy = (model(words, offsets).argmax(1) == labels).float().mean().item()
    return {"losses": losses, "seconds_per_step": seconds / len(steps), "grad_bytes": peak_grad,
            "accuracy": accuracy}


def main(argv=None) -> dict:
    parser = _common.base_parser(__doc__.splitlines()[0], epochs=1, lr=0.05, batch_size=64)
    parser.add_argument("--steps", type=int, default=60, help="synthetic batches per epoch (default: 60)")
    parser.add_argument("--no-dense", action="store_true", help="skip the dense-gradient comparison run")
    args = parser.parse_args(argv)

    rng = np.random.default_rng(args.seed)

    def tensors(words, offsets, labels):
        return (torch.tensor(words, device=args.device), torch.tensor(offsets, device=args.device),
                torch.tensor(labels, device=args.device))

    batches = [tensors(*make_documents(args.batch_size, rng)) for _ in range(args.steps)]
    test = tensors(*make_documents(1000, rng))
    results = {"sparse": train(True, batches, test, args)}
    if not args.no_dense:
        results["dense"] = train(False, batches, test, args)
    for name, r in results.items():
        print(f"{name:>6} gradients: loss {r['losses'][0]:.3f} -> {r['losses'][-1]:.3f}, test accuracy "
              f"{r['accuracy']:.1%}, {r['seconds_per_step'] * 1e3:.1f} ms/step, embedding .grad "
              f"{r['grad_bytes'] / 2**20:.2f} MiB")
    if "dense" in results:
        s, d = results["sparse"], results["dense"]
        # the speed-up only means something beside the quality each run reached (same steps, data and lr;
        # SparseAdam and Adam treat rows a batch did not touch differently, so the two can end apart)
        gap = 100 * (s["accuracy"] - d["accuracy"])
        print(f"sparse gradients hold {d['grad_bytes'] / s['grad_bytes']:.0f}x less memory and take "
              f"{d['seconds_per_step'] / s['seconds_per_step']:.1f}x less time per step than dense ones, "
              f"at {gap:+.1f} points of test accuracy ({s['accuracy']:.1%} sparse vs {d['accuracy']:.1%} dense)")
    curve = _common.save_loss_curve({name: r["losses"] for name, r in results.items()},
                                    args.out_dir / "sparse_embeddings_loss.png",
                                    "bag of words, 100,000-row embedding")
    _common.log_to_tensorboard(args.tensorboard, {name: r["losses"] for name, r in results.items()}, args,
                               {f"{name}_accuracy": r["accuracy"] for name, r in results.items()})
    if curve is not None:
        print(f"loss curve: {curve}")
    return results


if __name__ == "__main__":
    main()
