"""The platform modules (docs/platform.md): cuda, backends, accelerator, mps, amp, utils.checkpoint,
multiprocessing, jit, fx, profiler, futures. Without a GPU each behaves as a CPU-only PyTorch build."""

from __future__ import annotations

import json
import operator
import pickle
import warnings

import pytest

import minitorch as torch
import minitorch.backends.cudnn
from minitorch import nn
from minitorch.amp import GradScaler
from minitorch.cuda.amp import autocast as cuda_autocast
from minitorch.utils.checkpoint import checkpoint, checkpoint_sequential

no_gpu = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the behaviour without a GPU")


# cuda, accelerator, mps: CPU-only PyTorch's answers -----------------------------------------------------------


@no_gpu
def test_cuda_without_gpu_reports_nothing_and_raises_pytorchs_errors():
    assert torch.cuda.is_available() is False and torch.cuda.device_count() == 0
    assert torch.cuda.memory_allocated() == torch.cuda.max_memory_allocated() == 0
    assert torch.cuda.memory_reserved() == torch.cuda.max_memory_reserved() == 0
    assert dict(torch.cuda.memory_stats()) == {} and torch.cuda.is_bf16_supported() is False
    assert torch.cuda.get_arch_list() == [] and torch.cuda.is_initialized() is False
    torch.cuda.empty_cache()
    torch.cuda.set_device(-1)  # a negative index is a no-op
    for call in (torch.cuda.current_device, torch.cuda.get_device_name, torch.cuda.get_device_capability,
                 torch.cuda.synchronize, torch.cuda.current_stream, torch.cuda.init, torch.cuda.mem_get_info):
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            call()
    with pytest.raises(AttributeError):
        torch.cuda.set_device(0)
    with pytest.raises(AttributeError):
        torch.cuda.reset_peak_memory_stats()
    with pytest.raises(KeyError):
        torch.cuda.memory_summary()
    with pytest.raises(RuntimeError, match="requires CUDA support"):
        torch.cuda.Stream()
    with pytest.raises(RuntimeError, match="dummy base class Event"):
        torch.cuda.Event(enable_timing=True)
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        torch.cuda.set_device("cpu")
    with torch.cuda.stream(None):
        pass
    with pytest.warns(FutureWarning, match="memory_reserved"):
        assert torch.cuda.memory_cached() == 0


@no_gpu
def test_cuda_manual_seed_leaves_the_cpu_stream_alone():
    torch.manual_seed(0)
    first = torch.rand(3)
    torch.manual_seed(0)
    torch.cuda.manual_seed(123)
    torch.cuda.manual_seed_all(7)
    assert torch.equal(first, torch.rand(3))


@no_gpu
def test_accelerator_and_mps_without_device():
    assert torch.accelerator.is_available() is False and torch.accelerator.current_accelerator() is None
    assert torch.accelerator.device_count() == 0
    for call in (torch.accelerator.current_device_index, torch.accelerator.synchronize,
                 lambda: torch.accelerator.set_device_index(0), torch.accelerator.memory_allocated):
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
            call()
    with torch.accelerator.device_index(None):
        pass
    with pytest.raises(RuntimeError, match="none is available"):
        with torch.accelerator.device_index(0):
            pass
    assert torch.mps.is_available() is False and torch.mps.device_count() == 0
    assert torch.backends.mps.is_available() is False and torch.backends.mps.is_built() is False
    with pytest.raises(RuntimeError, match="without MPS backend"):
        torch.mps.synchronize()


@no_gpu
def test_pin_memory_needs_an_accelerator():
    x = torch.ones(3)
    assert x.is_pinned() is False
    with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
        x.pin_memory()


# backends flags ------------------------------------------------------------------------------------------------


def test_backends_flags_defaults_checks_and_scoping():
    b = torch.backends
    assert (b.cudnn.enabled, b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.allow_tf32) == (True, False, False,
                                                                                                  True)
    assert b.cudnn.is_available() is False and b.cudnn.version() is None
    assert minitorch.backends.cudnn is b.cudnn
    b.cudnn.benchmark = True
    try:
        assert b.cudnn.benchmark is True
        with b.cudnn.flags(enabled=False, benchmark=False):
            assert b.cudnn.enabled is False and b.cudnn.benchmark is False
        assert b.cudnn.enabled is True and b.cudnn.benchmark is True
    finally:
        b.cudnn.benchmark = False
    with pytest.raises(RuntimeError, match="set_benchmark_cudnn expects a bool, but got int"):
        b.cudnn.benchmark = 1
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        b.cuda.matmul.foo  # noqa: B018
    assert b.openmp.is_available() is True and b.opt_einsum.is_available() is False
    assert b.cpu.get_cpu_capability() in ("AVX512", "AVX2", "DEFAULT")
    assert b.mkldnn.enabled is True and b.mkldnn.is_available() is False


def test_float32_matmul_precision_is_tied_to_allow_tf32():
    assert torch.get_float32_matmul_precision() == "highest"
    assert torch.backends.cuda.matmul.allow_tf32 is False
    try:
        torch.backends.cuda.matmul.allow_tf32 = True
        assert torch.get_float32_matmul_precision() == "high"
        torch.set_float32_matmul_precision("medium")
        assert torch.backends.cuda.matmul.allow_tf32 is True
        with pytest.warns(UserWarning, match="has no effect"):
            torch.set_float32_matmul_precision("fast")
        assert torch.get_float32_matmul_precision() == "medium"
    finally:
        torch.set_float32_matmul_precision("highest")


# autocast ------------------------------------------------------------------------------------------------------


def test_cpu_autocast_casts_the_matmul_family_and_keeps_losses_in_float32():
    a, b = torch.randn(3, 4), torch.randn(4, 5)
    with torch.autocast("cpu", dtype=torch.float16):
        assert torch.is_autocast_enabled("cpu") and not torch.is_autocast_enabled()
        assert (a @ b).dtype is torch.float16 and torch.mm(a, b).dtype is torch.float16
        assert nn.functional.linear(a, b.t(), torch.zeros(5)).dtype is torch.float16
        assert torch.addmm(torch.zeros(5), a, b).dtype is torch.float16
        assert (a + a).dtype is torch.float32 and torch.relu(a).dtype is torch.float32
        assert (a.double() @ b.double()).dtype is torch.float64  # float64 is never cast
        half = a.half()
        assert nn.functional.mse_loss(half, half).dtype is torch.float32
        assert nn.functional.cross_entropy(half, torch.tensor([0, 1, 2])).dtype is torch.float32
        with torch.autocast("cpu", enabled=False):
            assert (a @ b).dtype is torch.float32
        assert (a @ b).dtype is torch.float16
    assert not torch.is_autocast_enabled("cpu") and (a @ b).dtype is torch.float32


def test_autocast_gradients_reach_leaves_in_their_dtype():
    w = torch.randn(4, 3, dtype=torch.float32, requires_grad=True)
    x = torch.randn(2, 4)
    with torch.autocast("cpu", dtype=torch.float16):
        y = x @ w
    assert y.dtype is torch.float16
    y.float().sum().backward()
    assert w.grad.dtype is torch.float32
    expected = x.half().t() @ torch.ones(2, 3, dtype=torch.float16)
    assert torch.allclose(w.grad, expected.float())


def test_autocast_decorator_and_unsupported_dtype():
    @torch.autocast("cpu", dtype=torch.float16)
    def product(a, b):
        return a @ b

    assert product(torch.ones(2, 2), torch.ones(2, 2)).dtype is torch.float16
    with pytest.warns(UserWarning, match="target dtype is not supported"):
        region = torch.autocast("cpu", dtype=torch.float32)
    with region:
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype is torch.float32
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        torch.autocast(1)


@no_gpu
def test_cuda_autocast_and_grad_scaler_disable_themselves_without_gpu():
    with pytest.warns(UserWarning, match="CUDA is not available"):
        region = torch.autocast("cuda")
    with region:
        assert not torch.is_autocast_enabled()
    with pytest.warns(FutureWarning, match="deprecated"), pytest.warns(UserWarning, match="Disabling"):
        cuda_autocast()
    with pytest.warns(UserWarning, match="CUDA is not available.  Disabling."):
        scaler = GradScaler()
    assert scaler.is_enabled() is False and scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    loss = torch.tensor(2.0)
    assert scaler.scale(loss) is loss


# GradScaler on the CPU -----------------------------------------------------------------------------------------


def _model_and_optimizer():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    return model, torch.optim.SGD(model.parameters(), lr=0.1)


def test_grad_scaler_scales_unscales_and_steps():
    model, opt = _model_and_optimizer()
    scaler = GradScaler("cpu", init_scale=8.0, growth_interval=2)
    x = torch.ones(2, 3)
    loss = model(x).sum()
    scaled = scaler.scale(loss)
    assert torch.allclose(scaled, loss * 8)
    scaled.backward()
    before = model.weight.detach().clone()
    scaler.unscale_(opt)
    assert torch.allclose(model.weight.grad, torch.full((1, 3), 2.0))  # unscaled: d(sum)/dw = 2 per entry
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    assert torch.allclose(model.weight, before - 0.2)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 8.0 and scaler._get_growth_tracker() == 1


def test_grad_scaler_skips_the_step_and_backs_off_on_inf():
    model, opt = _model_and_optimizer()
    scaler = GradScaler("cpu", init_scale=4.0, growth_interval=1)
    scaler.scale(model(torch.ones(1, 3)).sum()).backward()
    model.weight.grad[0, 0] = float("inf")
    before = model.weight.detach().clone()
    assert scaler.step(opt) is None
    assert torch.equal(model.weight, before)
    scaler.update()
    assert scaler.get_scale() == 2.0
    opt.zero_grad()
    scaler.scale(model(torch.ones(1, 3)).sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 4.0  # growth_interval=1: one clean step doubles it


def test_grad_scaler_state_dict_pickle_and_errors():
    scaler = GradScaler("cpu", init_scale=16.0)
    with pytest.raises(AssertionError, match="_scale is None"):
        scaler.update()
    scaler.scale(torch.ones(1))
    state = scaler.state_dict()
    assert state == {"scale": 16.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2000,
                     "_growth_tracker": 0}
    clone = pickle.loads(pickle.dumps(scaler))
    assert clone.get_scale() == 16.0
    other = GradScaler("cpu")
    other.load_state_dict(state)
    assert other.get_scale() == 16.0
    with pytest.raises(RuntimeError, match="state dict is empty"):
        other.load_state_dict({})
    with pytest.raises(AssertionError, match="growth factor must be > 1.0"):
        GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients"):
        p = nn.Parameter(torch.ones(2, dtype=torch.float16))
        p.grad = torch.ones(2, dtype=torch.float16)
        s = GradScaler("cpu")
        s.scale(torch.ones(1))
        s.unscale_(torch.optim.SGD([p], lr=0.1))


def test_amp_foreach_non_finite_check_and_unscale():
    grads = [torch.tensor([2.0, 4.0]), torch.tensor([float("nan")])]
    found = torch.zeros(())
    torch._amp_foreach_non_finite_check_and_unscale_(grads, found, torch.tensor(0.5))
    assert found.item() == 1.0 and grads[0].tolist() == [1.0, 2.0]


# checkpoint ----------------------------------------------------------------------------------------------------


def _net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Dropout(0.3), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))


def _grads(net, run, x):
    torch.manual_seed(5)
    net.zero_grad()
    run(net, x).pow(2).sum().backward()
    return [p.grad.clone() for p in net.parameters()], (x.grad.clone() if x.grad is not None else None)


@pytest.mark.parametrize("input_requires_grad", [False, True])
def test_non_reentrant_checkpoint_gives_the_same_gradients(input_requires_grad):
    net = _net()
    x = torch.randn(3, 4, dtype=torch.float64).float().requires_grad_(input_requires_grad)
    plain, plain_x = _grads(net, lambda n, t: n(t), x)
    x.grad = None
    ckpt, ckpt_x = _grads(net, lambda n, t: checkpoint(n, t, use_reentrant=False), x)
    for a, b in zip(plain, ckpt):
        assert torch.allclose(a, b)  # dropout drew the same mask in the recomputation
    assert (plain_x is None) == (ckpt_x is None)
    if plain_x is not None:
        assert torch.allclose(plain_x, ckpt_x)


def test_reentrant_checkpoint_and_its_warnings():
    net = _net()
    x = torch.randn(3, 4, requires_grad=True)
    plain, plain_x = _grads(net, lambda n, t: n(t), x)
    x.grad = None
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        ckpt, ckpt_x = _grads(net, lambda n, t: checkpoint(n, t), x)
    assert all(torch.allclose(a, b) for a, b in zip(plain, ckpt)) and torch.allclose(plain_x, ckpt_x)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        out = checkpoint(net, torch.ones(1, 4), use_reentrant=True)
    assert out.requires_grad is False
    with pytest.raises(ValueError, match="Unexpected keyword arguments"):
        checkpoint(lambda t, s: t * s, x, use_reentrant=True, s=2)


def test_checkpoint_keyword_arguments_tuples_and_no_grad():
    w = torch.randn(3, requires_grad=True)

    def fn(t, scale=1.0):
        return (t * w * scale).sin(), "tag"

    x = torch.randn(3, requires_grad=True)
    out, tag = checkpoint(fn, x, use_reentrant=False, scale=2.0)
    assert tag == "tag"
    out.sum().backward()
    assert torch.allclose(w.grad, (x * w * 2).cos() * x * 2)
    assert torch.allclose(x.grad, (x * w * 2).cos() * w * 2)
    with torch.no_grad():
        assert checkpoint(fn, x, use_reentrant=False)[0].requires_grad is False


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_sequential_matches(use_reentrant):
    net = _net()
    x = torch.randn(3, 4, requires_grad=True)
    plain, plain_x = _grads(net, lambda n, t: n(t), x)
    x.grad = None
    seq, seq_x = _grads(net, lambda n, t: checkpoint_sequential(n, 3, t, use_reentrant=use_reentrant), x)
    assert all(torch.allclose(a, b) for a, b in zip(plain, seq)) and torch.allclose(plain_x, seq_x)


# multiprocessing -----------------------------------------------------------------------------------------------


def _square_worker(rank, queue):
    queue.put((rank, float((torch.ones(2) * (rank + 1)).pow(2).sum())))


def _failing_worker(rank):
    if rank == 1:
        raise ValueError("worker one fails")


def test_spawn_runs_two_processes_and_reports_failures():
    mp = torch.multiprocessing
    queue = mp.get_context("spawn").SimpleQueue()
    mp.spawn(_square_worker, args=(queue,), nprocs=2)
    assert sorted([queue.get(), queue.get()]) == [(0, 2.0), (1, 8.0)]
    with pytest.raises(mp.ProcessRaisedException, match="worker one fails") as info:
        mp.spawn(_failing_worker, nprocs=2)
    assert info.value.error_index == 1
    assert mp.Process is not None and callable(mp.set_start_method)


# jit and futures -----------------------------------------------------------------------------------------------


def test_jit_is_pytorchs_eager_fallback():
    model = nn.Linear(2, 2)
    with pytest.warns(DeprecationWarning):
        assert torch.jit.script(model) is model
    with pytest.warns(DeprecationWarning):
        assert torch.jit.trace(model, torch.ones(1, 2)) is model

    @torch.jit.ignore
    def helper(x):
        return x + 1

    assert helper(1) == 2 and torch.jit.unused(helper) is helper and torch.jit.export(helper) is helper
    assert torch.jit.is_scripting() is False and torch.jit.is_tracing() is False
    assert torch.jit.wait(torch.jit.fork(operator.add, 2, 3)) == 5
    with pytest.raises(NotImplementedError, match="state_dict"):
        torch.jit.save(model, "m.pt")
    with pytest.raises(NotImplementedError, match="no TorchScript"):
        torch.jit.load("m.pt")


def test_futures():
    fut = torch.futures.Future()
    chained = fut.then(lambda f: f.wait() * 2)
    assert not fut.done()
    fut.set_result(21)
    assert chained.wait() == 42 and torch.futures.wait_all([fut, chained]) == [21, 42]
    with pytest.raises(RuntimeError, match="only be marked completed once"):
        fut.set_result(1)
    failed = torch.futures.Future()
    failed.set_exception(ValueError("no"))
    with pytest.raises(ValueError, match="no"):
        failed.wait()
    assert torch.futures.collect_all([fut]).wait() == [fut]


# fx ------------------------------------------------------------------------------------------------------------


def _tripled(x):
    return x * 3


torch.fx.wrap("_tripled")


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 5)
        self.layers = nn.Sequential(nn.ReLU(), nn.Linear(5, 3))
        self.scale = nn.Parameter(torch.ones(3))

    def forward(self, x):
        y = torch.relu(self.linear(x)) + 1
        z = self.layers(y).sigmoid()
        return nn.functional.softmax(z * self.scale, dim=-1), z.shape[0]


def test_symbolic_trace_records_pytorchs_graph_and_runs():
    torch.manual_seed(0)
    model = _Net()
    gm = torch.fx.symbolic_trace(model)
    kinds = [(n.op, n.name) for n in gm.graph.nodes]
    assert kinds == [("placeholder", "x"), ("call_module", "linear"), ("call_function", "relu"),
                     ("call_function", "add"), ("call_module", "layers_0"), ("call_module", "layers_1"),
                     ("call_method", "sigmoid"), ("get_attr", "scale"), ("call_function", "mul"),
                     ("call_function", "softmax"), ("call_function", "getattr_1"), ("call_function", "getitem"),
                     ("output", "output")]
    text = str(gm.graph)
    assert text.startswith("graph():\n    %x : [num_users=1] = placeholder[target=x]")
    assert "%add : [num_users=1] = call_function[target=operator.add](args = (%relu, 1), kwargs = {})" in text
    assert "return (%softmax, %getitem)" in text
    assert "relu = torch.relu(linear)" in gm.code and "def forward(self, x):" in gm.code
    x = torch.randn(2, 4)
    (got, n), (want, m) = gm(x), model(x)
    assert torch.allclose(got, want) and n == m == 2
    assert torch.allclose(torch.fx.Interpreter(gm).run(x)[0], want)


def test_graph_edits_and_recompile(capsys):
    model = _Net()
    gm = torch.fx.symbolic_trace(model)
    graph = gm.graph
    relu = next(n for n in graph.nodes if n.op == "call_function" and n.target is torch.relu)
    with graph.inserting_after(relu):
        sigmoid = graph.call_function(torch.sigmoid, relu.args)
    assert relu.replace_all_uses_with(sigmoid)
    with pytest.raises(RuntimeError, match="still had 0 users|still had"):
        graph.erase_node(relu.args[0])
    graph.erase_node(relu)
    graph.lint()
    gm.recompile()
    assert "torch.sigmoid(linear)" in gm.code and "torch.relu" not in gm.code
    x = torch.randn(2, 4)
    expected = model.layers(torch.sigmoid(model.linear(x)) + 1).sigmoid()
    assert torch.allclose(gm(x)[0], nn.functional.softmax(expected * model.scale, dim=-1))
    graph.print_tabular()
    assert "call_module    linear" in capsys.readouterr().out


def test_trace_a_function_and_control_flow_error():
    def f(x, y):
        return (x + y).relu().sum(dim=0, keepdim=True)

    gm = torch.fx.symbolic_trace(f)
    assert [n.op for n in gm.graph.nodes] == ["placeholder", "placeholder", "call_function", "call_method",
                                              "call_method", "output"]
    assert gm(torch.ones(2), -torch.ones(2) * 3).tolist() == [0.0]

    def branchy(x):
        return x if x.sum() > 0 else -x

    with pytest.raises(torch.fx.proxy.TraceError, match="control flow"):
        torch.fx.symbolic_trace(branchy)
    # a Graph built by hand, with Proxy and map_arg
    graph = torch.fx.Graph()
    a = torch.fx.Proxy(graph.placeholder("a"))
    graph.output((a * 2).node)
    built = torch.fx.GraphModule(nn.Module(), graph)
    assert built(torch.tensor(3.0)).item() == 6.0
    assert torch.fx.map_arg((a.node, 1), lambda n: n.name) == ("a", 1)


def test_wrap_and_replace_pattern():
    class Blocks(nn.Module):
        def forward(self, x, w):
            a = torch.add(x, w).relu()
            b = torch.add(a, w).relu()
            return _tripled(b) + a

    def pattern(x, w):
        return torch.add(x, w).relu()

    def replacement(x, w):
        return torch.mul(x, w).sigmoid()

    gm = torch.fx.symbolic_trace(Blocks())
    wrapped = [n for n in gm.graph.nodes if n.op == "call_function" and n.target is _tripled]
    assert len(wrapped) == 1  # recorded as one call, not traced into (no mul node)
    matches = torch.fx.replace_pattern(gm, pattern, replacement)
    assert [m.nodes_map[m.anchor].name for m in matches] == ["relu", "relu_1"]  # anchor: the pattern's node
    assert [n.name for n in gm.graph.nodes] == ["x", "w", "mul", "sigmoid", "mul_1", "sigmoid_1", "_tripled",
                                                "add_2", "output"]
    x, w = torch.ones(2), torch.full((2,), 2.0)
    a = (x * w).sigmoid()
    assert torch.allclose(gm(x, w), (a * w).sigmoid() * 3 + a)
    # an intermediate value read outside the pattern is not replaced
    def shared(x, w):
        s = torch.add(x, w)
        return s.relu() + s

    kept = torch.fx.symbolic_trace(shared)
    assert torch.fx.replace_pattern(kept, pattern, replacement) == []


# profiler ------------------------------------------------------------------------------------------------------


def test_profiler_times_ops_and_ranges(tmp_path):
    from minitorch.profiler import ProfilerActivity, profile, record_function

    model, x = nn.Linear(8, 8), torch.randn(4, 8)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function("forward_pass"):
            loss = model(x).relu().sum()
        loss.backward()
    averages = {e.key: e for e in prof.key_averages()}
    assert averages["forward_pass"].count == 1 and averages["minitorch::Linear"].count >= 1
    outer = next(e for e in prof.events() if e.name == "forward_pass")
    inner = [child.name for child in outer.children]
    assert "minitorch::Linear" in inner and "minitorch::Sum" in inner  # the ops run inside the range
    assert outer.cpu_time_total >= sum(child.cpu_time_total for child in outer.children) > 0
    assert outer.self_cpu_time_total >= 0
    by_shape = [e for e in prof.key_averages(group_by_input_shape=True) if e.key == "minitorch::Linear"]
    assert by_shape[0].input_shapes == [[4, 8], [8, 8], [8]]
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=5)
    assert "Self CPU %" in table and "forward_pass" in table
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    assert any(e["name"] == "forward_pass" for e in json.loads(path.read_text())["traceEvents"])
    # after the profile, ops run untimed again
    assert torch.ops.op.Op.__dict__["apply"] is torch.profiler.events._untimed_apply


def test_profiler_schedule_and_trace_handler(tmp_path):
    from minitorch.profiler import ProfilerAction, profile, schedule, tensorboard_trace_handler

    plan = schedule(wait=1, warmup=1, active=2, repeat=1)
    assert [plan(i) for i in range(5)] == [ProfilerAction.NONE, ProfilerAction.WARMUP, ProfilerAction.RECORD,
                                           ProfilerAction.RECORD_AND_SAVE, ProfilerAction.NONE]
    cycles = []
    handler = tensorboard_trace_handler(str(tmp_path))
    with profile(schedule=plan, on_trace_ready=lambda p: (cycles.append(p.events()), handler(p))) as prof:
        for _ in range(6):
            torch.ones(2).sum()
            prof.step()
    assert len(cycles) == 1
    names = {e.name for e in cycles[0]}
    assert {"ProfilerStep#2", "ProfilerStep#3"} <= names and "ProfilerStep#1" not in names
    assert len(list(tmp_path.glob("*.pt.trace.json"))) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AssertionError, match="Invalid profiler schedule"):
            schedule(wait=0, warmup=0, active=0)


def test_autograd_profiler():
    with torch.autograd.profiler.profile() as prof:
        with torch.autograd.profiler.record_function("block"):
            torch.ones(3).exp()
    assert "block" in prof.table() and prof.self_cpu_time_total > 0


# the GPU path, through a stand-in for CuPy (the wiring of minitorch.cuda to _backends/cuda_device.py) ----------


class _FakeCupy:
    """Just enough of CuPy's API for minitorch.cuda: two GPUs, a memory pool, events and streams."""

    def __init__(self):
        fake = self
        self.current, self.synced, self.used, self.held, self.freed = 0, [], 0, 0, False

        class Runtime:
            getDeviceCount = staticmethod(lambda: 2)
            getDevice = staticmethod(lambda: fake.current)
            deviceSynchronize = staticmethod(lambda: fake.synced.append(fake.current))
            memGetInfo = staticmethod(lambda: (1000, 4000))

            @staticmethod
            def setDevice(i):
                fake.current = i

            @staticmethod
            def getDeviceProperties(i):
                return {"name": b"Fake GPU %d" % i, "major": 8 if i == 0 else 7, "minor": 0,
                        "totalGlobalMem": 2**34, "multiProcessorCount": 108}

        class Device:
            def __init__(self, i):
                self.i = i

            def __enter__(self):
                self.previous, fake.current = fake.current, self.i

            def __exit__(self, *exc):
                fake.current = self.previous

        class Pool:
            used_bytes = staticmethod(lambda: fake.used)
            total_bytes = staticmethod(lambda: fake.held)

            @staticmethod
            def free_all_blocks():
                fake.freed = True

        class Event:
            def __init__(self, block=False, disable_timing=False, interprocess=False):
                self.timing, self.recorded_on, self.done = not disable_timing, None, True

            def record(self, stream=None):
                self.recorded_on = stream

            def synchronize(self):
                pass

        class Stream:
            null = None

            def __init__(self, priority=0):
                self.ptr, self.done, self.waited = id(self), True, []

            def synchronize(self):
                pass

            def wait_event(self, event):
                self.waited.append(event)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                pass

        Stream.null = Stream()
        self.pool = Pool()
        self.cuda = type("cuda", (), {"runtime": Runtime, "Device": Device, "Event": Event, "Stream": Stream,
                                      "get_current_stream": staticmethod(lambda: Stream.null),
                                      "get_elapsed_time": staticmethod(lambda a, b: 2.5)})

    def get_default_memory_pool(self):
        return self.pool

    get_default_pinned_memory_pool = get_default_memory_pool


@pytest.fixture
def fake_gpu(monkeypatch):
    from minitorch._backends import cuda_device

    fake = _FakeCupy()
    monkeypatch.setattr(cuda_device, "_cupy", fake)
    monkeypatch.setattr(cuda_device, "_peak_bytes", {})
    return fake


def test_cuda_with_a_gpu_reports_cupys_devices_and_pool(fake_gpu):
    assert torch.cuda.is_available() and torch.cuda.device_count() == 2
    assert torch.cuda.get_device_name() == "Fake GPU 0" and torch.cuda.get_device_capability(1) == (7, 0)
    assert torch.cuda.is_bf16_supported() is True and torch.cuda.get_arch_list() == ["sm_70", "sm_80"]
    torch.cuda.set_device("cuda:1")
    assert torch.cuda.current_device() == 1 and torch.cuda.is_bf16_supported() is False
    with torch.cuda.device(0):
        assert torch.cuda.current_device() == 0
    assert torch.cuda.current_device() == 1
    torch.cuda.synchronize()
    assert fake_gpu.synced == [1]
    fake_gpu.used, fake_gpu.held = 100, 512
    assert torch.cuda.memory_allocated() == 100 and torch.cuda.memory_reserved() == 512
    assert torch.cuda.max_memory_allocated() == 100
    fake_gpu.used = 40
    assert torch.cuda.max_memory_allocated() == 100  # the peak stays until reset
    torch.cuda.reset_peak_memory_stats()
    assert torch.cuda.max_memory_allocated() == 40
    assert torch.cuda.memory_stats()["allocated_bytes.all.current"] == 40 and "Allocated" in torch.cuda.memory_summary()
    torch.cuda.empty_cache()
    assert fake_gpu.freed and torch.cuda.mem_get_info() == (1000, 4000)
    assert torch.accelerator.current_accelerator() == torch.device("cuda")
    assert torch.accelerator.current_device_index() == 1


def test_cuda_events_and_streams_wrap_cupys(fake_gpu):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    end.record()
    assert start.elapsed_time(end) == 2.5 and start.query()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream) as entered:
        assert entered is stream
    event = stream.record_event()
    torch.cuda.current_stream().wait_event(event)
    assert stream.query() and torch.cuda.current_stream() == torch.cuda.default_stream()
    assert torch.amp.GradScaler("cuda").is_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with torch.autocast("cuda"):
            assert torch.is_autocast_enabled()
