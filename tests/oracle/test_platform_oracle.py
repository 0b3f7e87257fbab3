"""The platform modules against CPU-only PyTorch: return values and exception types of each public call, the
GradScaler's arithmetic, CPU autocast dtypes, checkpointed gradients and fx graph structure."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minitorch  # noqa: E402

pytestmark = pytest.mark.skipif(torch.cuda.is_available() or minitorch.cuda.is_available(),
                                reason="compares the behaviour without a GPU")


def _outcome(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = fn()
        except Exception as error:  # the exception type is part of the behaviour compared
            return ("raises", type(error).__name__)
    if isinstance(value, dict):
        value = dict(value)
    return ("returns", value)


CALLS = [
    "cuda.is_available()", "cuda.device_count()", "cuda.set_device(0)", "cuda.set_device(-1)",
    "cuda.set_device('cpu')", "cuda.set_device(1.5)", "cuda.current_device()", "cuda.get_device_name()",
    "cuda.get_device_name(0)", "cuda.get_device_capability()", "cuda.get_device_properties(0)",
    "cuda.is_bf16_supported()", "cuda.memory_allocated()", "cuda.max_memory_allocated()", "cuda.memory_reserved()",
    "cuda.max_memory_reserved()", "cuda.reset_peak_memory_stats()", "cuda.reset_max_memory_allocated()",
    "cuda.empty_cache()", "cuda.synchronize()", "cuda.memory_stats()", "cuda.memory_summary()",
    "cuda.memory_cached()", "cuda.mem_get_info()", "cuda.is_initialized()", "cuda.init()", "cuda.manual_seed(0)",
    "cuda.manual_seed_all(0)", "cuda.seed()", "cuda.get_arch_list()", "cuda.current_stream()",
    "cuda.default_stream()", "cuda.Stream()", "cuda.Event()", "cuda.stream(None).__enter__()",
    "cuda.nccl.version()", "cuda.nccl.is_available([zeros(1)])", "cuda.max_memory_cached()",
    "backends.cudnn.enabled", "backends.cudnn.benchmark", "backends.cudnn.deterministic",
    "backends.cudnn.allow_tf32", "backends.cudnn.is_available()", "backends.cudnn.version()",
    "backends.cuda.matmul.allow_tf32", "backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
    "backends.cuda.matmul.allow_bf16_reduced_precision_reduction", "backends.cuda.is_built()",
    "backends.cuda.flash_sdp_enabled()", "backends.cuda.math_sdp_enabled()",
    "backends.cuda.mem_efficient_sdp_enabled()", "backends.cuda.is_flash_attention_available()",
    "backends.mps.is_available()", "backends.mps.is_built()", "backends.mkldnn.enabled",
    "backends.openmp.is_available()", "backends.opt_einsum.is_available()", "backends.opt_einsum.enabled",
    "backends.opt_einsum.strategy", "backends.opt_einsum.get_opt_einsum()", "backends.cudnn.benchmark_limit",
    "accelerator.is_available()", "accelerator.current_accelerator()", "accelerator.device_count()",
    "accelerator.current_device_index()", "accelerator.set_device_index(0)", "accelerator.synchronize()",
    "accelerator.empty_cache()", "accelerator.memory_allocated()", "accelerator.current_device_idx()",
    "mps.is_available()", "mps.device_count()", "mps.synchronize()", "mps.empty_cache()",
    "mps.current_allocated_memory()", "mps.manual_seed(0)", "mps.seed()",
    "get_float32_matmul_precision()", "zeros(2).is_pinned()", "zeros(2).pin_memory()",
    "amp.GradScaler('cpu').is_enabled()", "amp.GradScaler('cpu').get_scale()",
    "amp.GradScaler('cpu').state_dict()", "amp.GradScaler('cuda').is_enabled()",
    "amp.GradScaler('cuda').state_dict()", "cuda.amp.GradScaler().is_enabled()",
    "amp.GradScaler('cpu', growth_factor=1.0)", "amp.GradScaler('cpu', backoff_factor=1.0)",
    "amp.autocast('cuda')._enabled", "amp.autocast('cpu', dtype=float16).fast_dtype",
    "amp.autocast('cpu', dtype=float32)._enabled", "amp.autocast(1)", "amp.is_autocast_available('cpu')",
    "is_autocast_enabled()", "is_autocast_enabled('cpu')", "get_autocast_dtype('cuda')",
    "jit.is_scripting()", "jit.is_tracing()", "jit.annotate(int, 3)",
    "multiprocessing.get_sharing_strategy()", "sorted(multiprocessing.get_all_sharing_strategies())",
]


def _normalize(outcome):
    kind, value = outcome
    text = str(value)
    for name in ("torch.", "minitorch."):
        text = text.replace(name, "")
    return kind, text


@pytest.mark.parametrize("call", CALLS)
def test_cpu_only_behaviour_matches_pytorch(call):
    mine = _outcome(lambda: eval(call, {"sorted": sorted, "int": int}, vars(minitorch)))
    theirs = _outcome(lambda: eval(call, {"sorted": sorted, "int": int}, vars(torch)))
    if call in ("zeros(2).pin_memory()",) or "amp.autocast(1)" in call:
        assert mine[0] == theirs[0] == "raises"
    assert _normalize(mine) == _normalize(theirs)


def test_cpu_autocast_dtypes_match():
    a, b = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    for lib in (torch, minitorch):
        x, y = lib.tensor(a), lib.tensor(b).t()
        with lib.autocast("cpu", dtype=lib.float16):
            dtypes = [str((x @ y).dtype), str(lib.mm(x, y).dtype), str(lib.nn.functional.linear(x, y.t()).dtype),
                      str(lib.bmm(x[None], y[None]).dtype), str((x + x).dtype), str(lib.relu(x).dtype),
                      str(lib.nn.functional.mse_loss(x.half(), x.half()).dtype),
                      str(lib.nn.functional.l1_loss(x.half(), x.half()).dtype),
                      str(lib.einsum("ij,jk->ik", x, y).dtype), str((x.double() @ y.double()).dtype)]
        if lib is torch:
            expected = [d.replace("torch.", "") for d in dtypes]
        else:
            assert [d.replace("minitorch.", "").replace("torch.", "") for d in dtypes] == expected


def _scaler_run(lib, grads_per_step):
    scaler = lib.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=2)
    p = lib.nn.Parameter(lib.zeros(3))
    opt = lib.optim.SGD([p], lr=0.5)
    trace = []
    for grad in grads_per_step:
        loss = scaler.scale((p * lib.tensor(grad, dtype=lib.float32)).sum())
        loss.backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
        trace.append((scaler.get_scale(), scaler._get_growth_tracker(), p.detach().numpy().tolist()))
    return trace


def test_grad_scaler_trajectory_matches():
    steps = [[1.0, 2.0, 3.0], [1.0, float("inf"), 0.0], [0.5, 0.5, 0.5], [1.0, 1.0, 1.0], [float("nan"), 1, 1],
             [2.0, 0.0, 1.0]]
    assert _scaler_run(minitorch, steps) == _scaler_run(torch, steps)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_gradients_match(use_reentrant):
    rng = np.random.default_rng(1)
    w1, w2, xs = rng.standard_normal((5, 4)), rng.standard_normal((2, 5)), rng.standard_normal((3, 4))
    grads = []
    for lib in (torch, minitorch):
        from importlib import import_module

        ckpt = import_module(f"{lib.__name__}.utils.checkpoint")
        a, b = lib.tensor(w1, requires_grad=True), lib.tensor(w2, requires_grad=True)
        x = lib.tensor(xs, requires_grad=True)
        out = ckpt.checkpoint(lambda t: lib.tanh(t @ a.t()) @ b.t(), x, use_reentrant=use_reentrant)
        out.pow(2).sum().backward()
        grads.append([t.grad.numpy() for t in (a, b, x)])
    for mine, theirs in zip(grads[1], grads[0]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)


def _graph_structure(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = lib.nn.Linear(4, 5)
            self.layers = lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Linear(5, 3))
            self.scale = lib.nn.Parameter(lib.ones(3))

        def forward(self, x):
            y = lib.relu(self.linear(x)) + 1
            z = self.layers(y).sigmoid().view(-1, 3)
            return z * self.scale, z.shape[0], y[:, 0]

    gm = lib.fx.symbolic_trace(Net())
    return [(n.op, n.name, n.target if isinstance(n.target, str) else n.target.__name__,
             [str(a) for a in n.args], len(n.users)) for n in gm.graph.nodes]


def test_fx_graph_structure_matches():
    assert _graph_structure(minitorch) == _graph_structure(torch)


def _rewritten(lib):
    class Blocks(lib.nn.Module):
        def forward(self, x, w):
            a = lib.add(x, w).relu()
            return lib.add(a, w).relu() * a

    gm = lib.fx.symbolic_trace(Blocks())
    matches = lib.fx.replace_pattern(gm, lambda x, w: lib.add(x, w).relu(), lambda x, w: lib.mul(x, w).sigmoid())
    x, w = np.array([1.0, -2.0]), np.array([0.5, 3.0])
    return ([m.anchor.name for m in matches], [(n.op, n.name, [str(a) for a in n.args]) for n in gm.graph.nodes],
            gm(lib.tensor(x), lib.tensor(w)).numpy().tolist())


def test_fx_replace_pattern_matches():
    assert _rewritten(minitorch) == _rewritten(torch)


def _amp_training(lib):
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((8, 4)).astype(np.float32) * 0.3
    x = lib.tensor(rng.standard_normal((32, 4)).astype(np.float32))
    y = lib.tensor(rng.standard_normal((32, 8)).astype(np.float32))
    model = lib.nn.Linear(4, 8)
    with lib.no_grad():
        model.weight.copy_(lib.tensor(weight))
        model.bias.zero_()
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    scaler = lib.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=5)
    losses = []
    for _ in range(12):
        opt.zero_grad()
        with lib.autocast("cpu", dtype=lib.float16):
            out = model(x)
            loss = lib.nn.functional.mse_loss(out, y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append((str(out.dtype).split(".")[-1], loss.item(), scaler.get_scale()))
    return losses, model.weight.detach().numpy()


def test_float16_autocast_training_with_grad_scaler_matches():
    (mine, w_mine), (theirs, w_theirs) = _amp_training(minitorch), _amp_training(torch)
    assert [m[0] for m in mine] == [t[0] for t in theirs] and [m[2] for m in mine] == [t[2] for t in theirs]
    np.testing.assert_allclose([m[1] for m in mine], [t[1] for t in theirs], rtol=2e-3)
    np.testing.assert_allclose(w_mine, w_theirs, rtol=2e-3, atol=1e-4)
