"""``transformer_step``: one training step of examples/char_transformer.py's model (the example's class, loaded
from the file), beside a hand-written numpy forward and backward of the same network.

The step is the example's: ``zero_grad``, forward with cross-entropy, ``backward``, ``clip_grad_norm_(1.0)``,
one AdamW step (weight decay 0.1 on the matrices, none on biases, LayerNorm gains and embeddings). Two
differences from the example's training loop, the same on both sides: dropout is 0 (the numpy version has no
random masks to draw) and the learning-rate schedule is left out (a scalar per step). The numpy version is a
faithful decomposition of the whole model, not a stand-in: embeddings, pre-LayerNorm blocks of causal
multi-head attention (one qkv matmul, softmax over the causal mask) and the tanh-GELU MLP, the final LayerNorm,
the head and the cross-entropy, each with its hand-derived backward, then the same clipping and AdamW update.
"""

from __future__ import annotations

import importlib.util
import inspect
import math
import sys
from pathlib import Path

import numpy as np

import minitorch

from .base import Case, torch_module

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "char_transformer.py"
_TANH_GELU_K = math.sqrt(2 / math.pi)


def load_example_model_class():
    """``CharTransformer`` from examples/char_transformer.py (which imports its sibling ``_common``)."""
    module = sys.modules.get("char_transformer_example")
    if module is None:
        sys.path.insert(0, str(EXAMPLE.parent))
        try:
            spec = importlib.util.spec_from_file_location("char_transformer_example", EXAMPLE)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        finally:
            sys.path.remove(str(EXAMPLE.parent))
        sys.modules["char_transformer_example"] = module
    return module.CharTransformer


def _decays(name: str, shape) -> bool:
    """The example's grouping: weight decay on matrices, not on biases, LayerNorm gains or embeddings."""
    return len(shape) >= 2 and "embedding" not in name


class TransformerStep(Case):
    """char_transformer's model (vocab 65, context 64, width 64, 4 heads, 2 blocks), batch 32: forward,
    cross-entropy, backward, clip_grad_norm_, AdamW step."""

    lr, betas, eps, weight_decay = 3e-3, (0.9, 0.99), 1e-8, 0.1

    def __init__(self, device, small: bool = False, gelu: str = "tanh"):
        vocab, block, width, heads, layers, batch = (11, 8, 16, 2, 1, 3) if small else (65, 64, 64, 4, 2, 32)
        minitorch.manual_seed(0)
        self.model = load_example_model_class()(vocab, block, width, heads, layers, dropout=0.0).to(device)
        for module in self.model.modules():  # gelu="none": the exact erf form, to measure the erf kernel
            if isinstance(module, minitorch.nn.GELU):
                module.approximate = gelu
        self.gelu = gelu
        named = list(self.model.named_parameters())
        decay = [p for name, p in named if _decays(name, p.shape)]
        no_decay = [p for name, p in named if not _decays(name, p.shape)]
        self.optimizer = minitorch.optim.AdamW(
            [{"params": decay, "weight_decay": self.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
            lr=self.lr, betas=self.betas, eps=self.eps)
        rng = np.random.default_rng(0)
        self.idx = rng.integers(0, vocab, (batch, block))
        self.targets = rng.integers(0, vocab, (batch, block))
        self.tidx = minitorch.tensor(self.idx, device=device)
        self.ttargets = minitorch.tensor(self.targets, device=device)
        self.heads = heads
        self.layers = layers
        # the numpy side: its own copy of the same initial weights, and its own Adam state
        self.params = {name: p.detach().cpu().numpy().copy() for name, p in named}
        self.names = [name for name, _ in named]
        self.m = {name: np.zeros_like(a) for name, a in self.params.items()}
        self.v = {name: np.zeros_like(a) for name, a in self.params.items()}
        self.t = 0
        # the compiled side: the model (forward and backward, one plan) and AdamW's step (optim_step.py) compiled
        self.compiled_model = minitorch.compile(self.model)
        self.compiled_optimizer_step = minitorch.compile(self.optimizer.step)
        self.compiled_functions = (self.compiled_model._compiled,)
        torch = torch_module(device)
        if torch is not None:
            self._setup_torch(torch, named, gelu)

    def _setup_torch(self, torch, named, gelu) -> None:
        """The example's classes run on PyTorch (their source, with ``torch`` bound to PyTorch), same weights."""
        source = "\n\n".join(inspect.getsource(getattr(self._example_module(), name))
                             for name in ("CausalSelfAttention", "Block", "CharTransformer"))
        namespace = {"torch": torch, "nn": torch.nn, "F": torch.nn.functional, "math": math}
        exec(source, namespace)
        vocab, width = self.model.token_embedding.weight.shape
        block = self.model.position_embedding.weight.shape[0]
        model = namespace["CharTransformer"](vocab, block, width, self.heads, self.layers, dropout=0.0)
        model.load_state_dict({name: torch.tensor(self.params[name]) for name in self.names})
        for module in model.modules():
            if isinstance(module, torch.nn.GELU):
                module.approximate = gelu
        decay = [p for name, p in model.named_parameters() if _decays(name, p.shape)]
        no_decay = [p for name, p in model.named_parameters() if not _decays(name, p.shape)]
        optimizer = torch.optim.AdamW(
            [{"params": decay, "weight_decay": self.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
            lr=self.lr, betas=self.betas, eps=self.eps)
        idx, targets = torch.tensor(self.idx), torch.tensor(self.targets)

        def step():
            optimizer.zero_grad()
            _, loss = model(idx, targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            return loss, [p.grad for p in model.parameters()]

        self.torch = step

    @staticmethod
    def _example_module():
        load_example_model_class()
        return sys.modules["char_transformer_example"]

    def compiled(self):
        """The example's step with the model and the optimizer step compiled (PyTorch's usual pattern): forward and
        backward replay one plan, AdamW's update its recorded ufunc calls; clipping runs eagerly."""
        self.optimizer.zero_grad()
        _, loss = self.compiled_model(self.tidx, self.ttargets)
        loss.backward()
        minitorch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.compiled_optimizer_step()
        return loss, [p.grad for p in self.model.parameters()]

    # minitorch -------------------------------------------------------------------------------
    def minitorch(self):
        """The example's step; returns the loss and the clipped gradients (by parameter name order)."""
        self.optimizer.zero_grad()
        _, loss = self.model(self.tidx, self.ttargets)
        loss.backward()
        minitorch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.optimizer.step()
        return loss, [p.grad for p in self.model.parameters()]

    # numpy -----------------------------------------------------------------------------------
    def numpy(self):
        """Forward, backward, clipping and AdamW by hand; returns the loss and the clipped gradients."""
        P = self.params
        loss, grads = self._loss_and_grads(P)
        total = math.sqrt(sum(float((g.astype(np.float64) ** 2).sum()) for g in grads.values()))
        scale = min(1.0 / (total + 1e-6), 1.0)
        self.t += 1
        b1, b2 = self.betas
        for name in self.names:
            p, g, m, v = P[name], grads[name], self.m[name], self.v[name]
            g *= scale
            if _decays(name, p.shape):
                p *= 1 - self.lr * self.weight_decay
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * g * g
            denominator = np.sqrt(v / (1 - b2**self.t))
            denominator += self.eps
            p -= (self.lr / (1 - b1**self.t)) * m / denominator
        return loss, [grads[name] for name in self.names]

    def _loss_and_grads(self, P):
        idx, targets = self.idx, self.targets
        B, T = idx.shape
        h = P["token_embedding.weight"][idx] + P["position_embedding.weight"][:T]
        caches = []
        for i in range(self.layers):
            h, cache = self._block_forward(P, f"blocks.{i}.", h)
            caches.append(cache)
        hf, ln_cache = _layer_norm(h, P["ln_f.weight"], P["ln_f.bias"])
        C = h.shape[-1]
        logits = hf.reshape(-1, C) @ P["head.weight"].T + P["head.bias"]
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        rows, flat_targets = np.arange(B * T), targets.reshape(-1)
        loss = -log_probs[rows, flat_targets].mean()

        grads = {}
        dlogits = np.exp(log_probs)
        dlogits[rows, flat_targets] -= 1
        dlogits /= B * T
        grads["head.weight"] = dlogits.T @ hf.reshape(-1, C)
        grads["head.bias"] = dlogits.sum(0)
        dh, grads["ln_f.weight"], grads["ln_f.bias"] = _layer_norm_backward(
            (dlogits @ P["head.weight"]).reshape(B, T, C), ln_cache)
        for i in reversed(range(self.layers)):
            dh = self._block_backward(P, f"blocks.{i}.", dh, caches[i], grads)
        dtoken = np.zeros_like(P["token_embedding.weight"])
        np.add.at(dtoken, idx.reshape(-1), dh.reshape(-1, C))
        grads["token_embedding.weight"] = dtoken
        dposition = np.zeros_like(P["position_embedding.weight"])
        dposition[:T] = dh.sum(0)
        grads["position_embedding.weight"] = dposition
        return loss, grads

    def _block_forward(self, P, prefix, h):
        B, T, C = h.shape
        H, D = self.heads, C // self.heads
        a, ln1 = _layer_norm(h, P[prefix + "ln1.weight"], P[prefix + "ln1.bias"])
        qkv = a.reshape(-1, C) @ P[prefix + "attn.qkv.weight"].T + P[prefix + "attn.qkv.bias"]
        q, k, v = (part.reshape(B, T, H, D).transpose(0, 2, 1, 3) for part in np.split(qkv.reshape(B, T, 3 * C), 3, 2))
        scores = (q @ k.transpose(0, 1, 3, 2)) * (1 / math.sqrt(D))
        scores[..., np.triu(np.ones((T, T), bool), 1)] = -np.inf
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        y = (probs @ v).transpose(0, 2, 1, 3).reshape(-1, C)
        h = h + (y @ P[prefix + "attn.proj.weight"].T + P[prefix + "attn.proj.bias"]).reshape(B, T, C)
        m, ln2 = _layer_norm(h, P[prefix + "ln2.weight"], P[prefix + "ln2.bias"])
        f = m.reshape(-1, C) @ P[prefix + "mlp.0.weight"].T + P[prefix + "mlp.0.bias"]
        g, gelu_cache = _gelu(f, self.gelu)
        h = h + (g @ P[prefix + "mlp.2.weight"].T + P[prefix + "mlp.2.bias"]).reshape(B, T, C)
        return h, (a, ln1, q, k, v, probs, y, m, ln2, f, g, gelu_cache)

    def _block_backward(self, P, prefix, dh, cache, grads):
        a, ln1, q, k, v, probs, y, m, ln2, f, g, gelu_cache = cache
        B, T, C = dh.shape
        H, D = self.heads, C // self.heads
        dout = dh.reshape(-1, C)
        grads[prefix + "mlp.2.weight"] = dout.T @ g
        grads[prefix + "mlp.2.bias"] = dout.sum(0)
        df = (dout @ P[prefix + "mlp.2.weight"]) * _gelu_derivative(f, gelu_cache, self.gelu)
        grads[prefix + "mlp.0.weight"] = df.T @ m.reshape(-1, C)
        grads[prefix + "mlp.0.bias"] = df.sum(0)
        dm, grads[prefix + "ln2.weight"], grads[prefix + "ln2.bias"] = _layer_norm_backward(
            (df @ P[prefix + "mlp.0.weight"]).reshape(B, T, C), ln2)
        dh = dh + dm
        dout = dh.reshape(-1, C)
        grads[prefix + "attn.proj.weight"] = dout.T @ y
        grads[prefix + "attn.proj.bias"] = dout.sum(0)
        dy = (dout @ P[prefix + "attn.proj.weight"]).reshape(B, T, H, D).transpose(0, 2, 1, 3)
        dprobs = dy @ v.transpose(0, 1, 3, 2)
        dv = probs.transpose(0, 1, 3, 2) @ dy
        dscores = probs * (dprobs - (dprobs * probs).sum(-1, keepdims=True)) * (1 / math.sqrt(D))
        dq, dk = dscores @ k, dscores.transpose(0, 1, 3, 2) @ q
        dqkv = np.concatenate([d.transpose(0, 2, 1, 3).reshape(-1, C) for d in (dq, dk, dv)], axis=1)
        grads[prefix + "attn.qkv.weight"] = dqkv.T @ a.reshape(-1, C)
        grads[prefix + "attn.qkv.bias"] = dqkv.sum(0)
        da, grads[prefix + "ln1.weight"], grads[prefix + "ln1.bias"] = _layer_norm_backward(
            (dqkv @ P[prefix + "attn.qkv.weight"]).reshape(B, T, C), ln1)
        return dh + da


def _layer_norm(x, weight, bias, eps: float = 1e-5):
    mean = x.mean(-1, keepdims=True)
    centered = x - mean
    rstd = 1 / np.sqrt((centered * centered).mean(-1, keepdims=True) + eps)
    normalized = centered * rstd
    return normalized * weight + bias, (normalized, rstd, weight)


def _layer_norm_backward(dout, cache):
    normalized, rstd, weight = cache
    C = normalized.shape[-1]
    dweight = (dout * normalized).reshape(-1, C).sum(0)
    dbias = dout.reshape(-1, C).sum(0)
    dnorm = dout * weight
    dx = rstd * (dnorm - dnorm.mean(-1, keepdims=True) - normalized * (dnorm * normalized).mean(-1, keepdims=True))
    return dx, dweight, dbias


def _gelu(f, approximate: str):
    """GELU and what its derivative needs: tanh(inner) for the tanh form, Phi(f) for the exact one."""
    if approximate == "tanh":
        t = np.tanh(_TANH_GELU_K * (f + 0.044715 * f * f * f))
        return 0.5 * f * (1 + t), t
    from scipy.special import erf  # the exact form needs an erf ufunc, which numpy lacks

    cdf = 0.5 * (1 + erf(f * (1 / math.sqrt(2))))
    return f * cdf, cdf


def _gelu_derivative(f, cache, approximate: str):
    if approximate == "tanh":
        t = cache
        return 0.5 * (1 + t) + 0.5 * f * (1 - t * t) * _TANH_GELU_K * (1 + 3 * 0.044715 * f * f)
    return cache + f * np.exp(-0.5 * f * f) * (1 / math.sqrt(2 * math.pi))
