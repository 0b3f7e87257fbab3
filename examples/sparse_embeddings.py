"""Train a bag-of-words text classifier whose embedding table has 100,000 rows, with sparse gradients.

    python examples/sparse_embeddings.py

Synthetic documents (no download): each of 4 topics owns 2,000 indicative words of a 100,000-word
vocabulary, and every document mixes 12 topic words with 28 common words. The model is PyTorch code with
``import minitorch as torch``: ``nn.EmbeddingBag(100_000, 64, mode="mean", sparse=True)`` feeding a linear
layer; ``optim.SparseAdam`` updates only the embedding rows a batch used, ``optim.Adam`` the classifier.

It then trains the same model with dense gradients (``sparse=False``, Adam) for the same steps and prints
what the sparse gradients saved: bytes held by the embedding's ``.grad`` and seconds per step.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import minitorch as torch
import minitorch.nn as nn

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


def train(sparse: bool, batches, test, device: str, lr: float, seed: int) -> dict:
    torch.manual_seed(seed)
    model = BagOfWords(sparse).to(device)
    if sparse:
        optimizers = [torch.optim.SparseAdam(model.embedding.parameters(), lr=lr),
                      torch.optim.Adam(model.classifier.parameters(), lr=lr)]
    else:
        optimizers = [torch.optim.Adam(model.parameters(), lr=lr)]
    losses, seconds, peak_grad = [], 0.0, 0
    for words, offsets, labels in batches:
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
    with torch.no_grad():
        words, offsets, labels = test
        accuracy = (model(words, offsets).argmax(1) == labels).float().mean().item()
    return {"losses": losses, "seconds_per_step": seconds / len(batches), "grad_bytes": peak_grad,
            "accuracy": accuracy}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-dense", action="store_true", help="skip the dense-gradient comparison run")
    args = parser.parse_args(argv)

    rng = np.random.default_rng(args.seed)

    def tensors(words, offsets, labels):
        return (torch.tensor(words, device=args.device), torch.tensor(offsets, device=args.device),
                torch.tensor(labels, device=args.device))

    batches = [tensors(*make_documents(args.batch_size, rng)) for _ in range(args.steps)]
    test = tensors(*make_documents(1000, rng))
    results = {"sparse": train(True, batches, test, args.device, args.lr, args.seed)}
    if not args.no_dense:
        results["dense"] = train(False, batches, test, args.device, args.lr, args.seed)
    for name, r in results.items():
        print(f"{name:>6} gradients: loss {r['losses'][0]:.3f} -> {r['losses'][-1]:.3f}, test accuracy "
              f"{r['accuracy']:.1%}, {r['seconds_per_step'] * 1e3:.1f} ms/step, embedding .grad "
              f"{r['grad_bytes'] / 2**20:.2f} MiB")
    if "dense" in results:
        s, d = results["sparse"], results["dense"]
        print(f"sparse gradients hold {d['grad_bytes'] / s['grad_bytes']:.0f}x less memory and take "
              f"{d['seconds_per_step'] / s['seconds_per_step']:.1f}x less time per step than dense ones")
    return results


if __name__ == "__main__":
    main()
