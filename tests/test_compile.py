"""minitorch.compile: replayed plans give eager mode's values and gradients bit for bit; guards retrace; graph
breaks replay compiled pieces while the function's Python runs (never a wrong answer); fullgraph raises; compiled
optimizer steps and whole training steps match eager mode over several steps; every benchmark case and example
model runs compiled and matches eager mode."""

from __future__ import annotations

import importlib
import sys
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

import minitorch as torch
from minitorch.compiler import Unsupported, fusion
from minitorch.compiler import api as compiler_api

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks import cases  # noqa: E402

F = torch.nn.functional


@pytest.fixture(autouse=True)
def no_timing_trial(monkeypatch):
    """Guided plans replay from their second call on (the trial that times them against eager mode would make
    which calls replay depend on the machine's timing; it has tests of its own below)."""
    monkeypatch.setattr(compiler_api, "TRIAL_CALLS", 0)


def same(a, b) -> None:
    """Bit-identical tensors (NaNs in the same places)."""
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def grads_after(fn, args, params):
    for p in params:
        p.grad = None
    out = fn(*args)
    loss = out if out.dim() == 0 else out.sum()
    loss.backward()
    grads = [p.grad for p in params]
    for p in params:
        p.grad = None
    return out, grads


def check_matches_eager(fn, args, params, calls: int = 3):
    """Compiled ``fn`` agrees with ``fn`` bit for bit on each of ``calls`` calls (the trace, then replays)."""
    compiled = torch.compile(fn)
    for _ in range(calls):
        expected, expected_grads = grads_after(fn, args, params)
        got, got_grads = grads_after(compiled, args, params)
        same(got, expected)
        for g, e in zip(got_grads, expected_grads):
            assert (g is None) == (e is None)
            if g is not None:
                same(g, e)
    return compiled


def plans(compiled):
    return [entry.plan for _, entry in compiled.history]


def chain(x, y):
    z = x
    for _ in range(3):
        z = ((z + y) * x - y).tanh().exp()
    return z.sum()


def test_replay_is_bit_identical_and_records_one_node():
    x = torch.randn(5, requires_grad=True)
    y = torch.randn(5, requires_grad=True)
    compiled = check_matches_eager(chain, (x, y), [x, y])
    out = compiled(x, y)
    assert out.grad_fn.name() == "CompiledFunctionBackward"
    [plan] = plans(compiled)
    assert plan is not None and plan.fused_groups, compiled.explain()
    assert plan.fused_groups[0].backward is not None  # the chain's backward runs fused too


@pytest.mark.parametrize("shape", [(70_001,), (300, 257)])
def test_large_groups_run_block_by_block_bit_identically(shape, monkeypatch):
    """Arrays of 2 blocks or more run their fused programs block by block (a last, shorter block included;
    blocks of 16K float32 elements here, so that small arrays have several)."""
    monkeypatch.setattr(fusion, "BLOCK_BYTES", 65536)
    x = torch.randn(*shape, requires_grad=True)
    y = torch.randn(*shape, requires_grad=True)
    compiled = check_matches_eager(lambda x, y: ((x * y + x).tanh() * y - x.exp()).sum(), (x, y), [x, y])
    group = plans(compiled)[0].fused_groups[0]
    assert group.kernel.size == x.numel() and group.backward is not None and group.backward.kernel.size


def test_fused_backward_adds_an_input_gradients_in_eager_order():
    """A fused group's input that other ops read too gets the group's gradient contributions one by one, where the
    engine adds them (summing them inside the group first would round differently)."""
    a = torch.randn(5, 3, requires_grad=True)
    b = torch.randn(3, 7, requires_grad=True)
    v = torch.randn(7, requires_grad=True)

    def fn(a, b, v):
        h = a @ b
        return ((h * 1.7).exp() - h).sum() + (h * v).mean() + (h.sin() * h).sum()

    compiled = check_matches_eager(fn, (a, b, v), [a, b, v], calls=4)
    assert plans(compiled)[0].fused_groups


def test_unfused_backend_gives_the_same_results():
    x = torch.randn(3, 4, requires_grad=True)
    y = torch.randn(4, requires_grad=True)

    def fn(x, y):
        return (x * y + x).tanh().sum(0) * 2

    compiled = torch.compile(fn, backend="eager")
    for _ in range(3):
        expected, (ex, ey) = grads_after(fn, (x, y), [x, y])
        got, (gx, gy) = grads_after(compiled, (x, y), [x, y])
        same(got, expected)
        same(gx, ex)
        same(gy, ey)
    assert not plans(compiled)[0].fused_groups


def test_decorator_forms_and_methods():
    @torch.compile
    def f(x):
        return x.exp() + 1

    @torch.compile(fullgraph=True, dynamic=False, mode="reduce-overhead")
    def g(x):
        return x.sin() * 2

    class Scaler:
        def __init__(self, k):
            self.k = k

        @torch.compile
        def __call__(self, x):
            return x * self.k

    x = torch.randn(4)
    for _ in range(2):
        same(f(x), x.exp() + 1)
        same(g(x), x.sin() * 2)
        same(Scaler(3.0)(x), x * 3.0)
    assert torch.compile(f, disable=True) is f


def test_argument_errors_follow_pytorch():
    with pytest.raises(RuntimeError, match="Invalid backend"):
        torch.compile(chain, backend="nonexistent")
    with pytest.raises(RuntimeError, match="Either mode or options"):
        torch.compile(chain, mode="default", options={})
    with pytest.raises(RuntimeError, match="Unrecognized mode"):
        torch.compile(chain, mode="fastest")


def test_guards_retrace_on_shape_dtype_requires_grad_and_grad_mode():
    compiled = torch.compile(lambda x: (x * 2).tanh())
    a = torch.randn(3)
    same(compiled(a), (a * 2).tanh())
    e = torch.randn(3)
    same(compiled(e), (e * 2).tanh())  # replayed from the cache
    assert len(compiled.history) == 1
    b = torch.randn(4)
    same(compiled(b), (b * 2).tanh())
    c = torch.randn(4, dtype=torch.float64)
    same(compiled(c), (c * 2).tanh())
    d = torch.randn(4, requires_grad=True)
    out = compiled(d)
    assert out.requires_grad
    with torch.no_grad():
        out = compiled(d)
    assert not out.requires_grad
    assert len(compiled.history) == 5  # shape, dtype, requires_grad and grad mode each made a new plan
    out = compiled(d)  # the requires_grad plan again, from the cache
    assert out.requires_grad and len(compiled.history) == 5


def test_non_contiguous_inputs_get_their_own_plan():
    compiled = torch.compile(lambda x: x.exp() * x)
    x = torch.randn(4, 6)
    same(compiled(x), x.exp() * x)
    t = x.t()
    same(compiled(t), t.exp() * t)
    same(compiled(t), t.exp() * t)
    assert len(compiled.history) == 2


def test_the_same_tensor_twice_is_guarded():
    compiled = torch.compile(lambda a, b: a * 2 + b)
    x, y = torch.randn(3), torch.randn(3)
    same(compiled(x, x), x * 2 + x)
    same(compiled(x, y), x * 2 + y)
    same(compiled(y, y), y * 2 + y)


def test_module_parameters_are_read_afresh_and_guarded():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    compiled = torch.compile(model)
    assert isinstance(compiled, torch.nn.Module) and compiled._orig_mod is model
    assert list(compiled.state_dict()) == ["_orig_mod." + k for k in model.state_dict()]
    x = torch.randn(5, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):  # the optimizer updates the weights in place between calls: replays see the new values
        expected = model(x)
        got = compiled(x)
        same(got, expected)
        optimizer.zero_grad()
        got.sum().backward()
        optimizer.step()
    model[0].weight = torch.nn.Parameter(torch.ones(8, 4))  # a new parameter object: the guard retraces
    same(compiled(x), model(x))
    assert len(compiled._compiled.history) == 2
    model.eval()  # the training flag is guarded
    same(compiled(x), model(x))
    assert len(compiled._compiled.history) == 3


def test_closure_and_global_tensors_are_externals():
    w = torch.randn(3, requires_grad=True)

    def fn(x):
        return (x * w).sum()

    check_matches_eager(fn, (torch.randn(3),), [w])
    compiled = torch.compile(fn)
    compiled(torch.randn(3))
    assert "fn" in compiled.explain() and "w is the traced tensor" in compiled.explain()


def test_data_dependent_control_flow_is_a_graph_break_and_stays_right():
    def fn(x):
        if x.sum() > 0:
            return x * 2
        return x * 3

    compiled = torch.compile(fn)
    for sign in (1, -1, 1, -1):
        x = torch.ones(3) * sign
        same(compiled(x), fn(x))
    [plan] = plans(compiled)
    assert plan.guided and len(plan.pieces) == 1  # Sum, Gt | bool() | Mul (a read does not cut the piece)
    assert plan.diverged == 2  # the calls that took the other branch left the traced path: the rest ran eagerly
    text = compiled.explain()
    assert "item()" in text and "graph break" in text and "left the traced path in 2" in text


def _piecewise(x, w):
    h = (x * w + x).tanh()  # piece 0: Mul -> Add -> Tanh, fused
    scale = float(h.sum())  # a break: the value goes to Python
    print("scale", round(scale, 3))  # another (print runs at every call)
    return ((h * scale).exp() - h).sum() + (h * w).mean()  # the same piece: values and ops as traced


def test_graph_break_pieces_replay_compiled_and_match_eager(capsys):
    x = torch.randn(6, requires_grad=True)
    w = torch.randn(6, requires_grad=True)
    compiled = check_matches_eager(_piecewise, (x, w), [x, w], calls=4)
    [plan] = plans(compiled)
    assert plan.guided and plan.diverged == 0 and plan.pieces[0].plan.fused_groups, compiled.explain()
    assert capsys.readouterr().out.count("scale") == 8  # print ran at every call, eager and compiled alike
    out = compiled(x, w)
    assert out.grad_fn.name() == "CompiledFunctionBackward"
    text = compiled.explain()
    for expected in ("graph breaks:", "item()", "print()", "piece 0", "fused Mul -> Add -> Tanh"):
        assert expected in text, text
    with pytest.raises(Unsupported, match="graph break: item"):
        torch.compile(_piecewise, fullgraph=True)(x, w)


def test_pieces_around_an_untraced_tensor_and_an_eager_op():
    x = torch.randn(4, 3, requires_grad=True)

    def fn(x):
        a = x.exp()
        noise = torch.randn(4, 3)  # a random factory: a foreign tensor, read at every call as it is
        b = (a * noise).sum(1)
        idx = torch.tensor([2, 0])
        return b[idx].sum() + a.sum() * 2  # indices read from a tensor: compared at every call

    compiled = torch.compile(fn)
    for seed in range(3):
        torch.manual_seed(seed)
        expected, expected_grads = grads_after(fn, (x,), [x])
        torch.manual_seed(seed)
        got, got_grads = grads_after(compiled, (x,), [x])
        same(got, expected)
        same(got_grads[0], expected_grads[0])
    [plan] = plans(compiled)
    assert plan.guided and len(plan.pieces) == 1 and plan.diverged == 0, compiled.explain()  # noise: bound late


def test_varying_index_tensors_are_not_replayed_as_constants():
    compiled = torch.compile(lambda x, i: x[i] * 2)
    x = torch.arange(5.0)
    for index in ([0, 1], [3, 4], [3, 4], [2, 2]):
        i = torch.tensor(index)
        same(compiled(x, i), x[i] * 2)


def test_a_piece_refuses_a_backward_through_a_value_written_in_place_as_eager_mode_does():
    x = torch.randn(3, requires_grad=True)

    def fn(x):
        y = x * 2
        z = y.exp()  # saves its output
        float(z.sum())  # a break: the function's Python runs at every call
        return z

    compiled = torch.compile(fn)
    for call in range(3):
        out = compiled(x)
        with torch.no_grad():
            out.add_(1)  # written after ExpBackward saved it
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()
    assert plans(compiled)[0].guided


@pytest.mark.parametrize("body, reason", [
    (lambda x: x * float(x[0]), "item()"),
    (lambda x: x * len(x.tolist()), "tolist()"),
    (lambda x: x + x.numpy().sum(), "numpy()"),
    (lambda x: (repr(x), x * 2)[1], "printing"),
    (lambda x: (print("hello"), x * 2)[1], "print()"),
    (lambda x: x.mul_(2) * 1, "in-place"),
    (lambda x: torch.randn(3) + x, "unknown origin"),
])
def test_graph_breaks(body, reason, capsys):
    compiled = torch.compile(body)
    for n in range(3):
        x = torch.ones(3) * (n + 1)
        torch.manual_seed(n)
        expected = body(x.clone())
        torch.manual_seed(n)
        same(compiled(x.clone()), expected)
    assert reason in compiled.explain()
    with pytest.raises(Unsupported, match="graph break"):
        torch.compile(body, fullgraph=True)(x.clone())


def test_backward_inside_the_function_runs_eagerly():
    w = torch.randn(3, requires_grad=True)

    def step(x):
        loss = (x * w).sum()
        loss.backward()
        return loss

    compiled = torch.compile(step)
    for _ in range(3):
        w.grad = None
        compiled(torch.ones(3))
        same(w.grad, torch.ones(3))
    assert "backward()" in compiled.explain()


def test_optimizer_steps_and_zero_grad_inside_are_graph_breaks():
    w = torch.nn.Parameter(torch.ones(3))
    optimizer = torch.optim.SGD([w], lr=0.5)
    w.grad = torch.ones(3)
    compiled = torch.compile(lambda: optimizer.step())  # no op reads w: only the write shows
    for n in range(3):
        compiled()
        same(w.detach(), torch.full((3,), 1 - 0.5 * (n + 1)))
    assert "in-place write" in compiled.explain()

    def zero(x):
        optimizer.zero_grad()
        return x * 2

    compiled = torch.compile(zero)
    for _ in range(2):
        w.grad = torch.ones(3)
        compiled(torch.ones(1))
        assert w.grad is None
    assert "setting .grad" in compiled.explain()


def test_custom_function_and_hooks_run_eagerly():
    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = torch.randn(3, requires_grad=True)
    compiled = torch.compile(lambda x: Double.apply(x).exp())
    for _ in range(2):
        x.grad = None
        compiled(x).sum().backward()
        same(x.grad, (x * 2).exp().detach() * 2)
    assert plans(compiled)[0].guided  # the Function's output is read as a foreign tensor, in a piece of its own

    def hooked(x):
        y = x * 3
        y.register_hook(lambda g: g * 10)
        return y.sum()

    compiled = torch.compile(hooked)
    for _ in range(2):
        x.grad = None
        compiled(x).backward()
        same(x.grad, torch.full((3,), 30.0))
    assert plans(compiled) == [None]  # a hook on an intermediate: this call runs eagerly (a piece would skip it)


def test_compiler_disable_is_a_graph_break():
    @torch.compiler.disable
    def helper(x):
        return x + 1

    compiled = torch.compile(lambda x: helper(x) * 2)
    x = torch.randn(2)
    same(compiled(x), (x + 1) * 2)
    same(compiled(x), (x + 1) * 2)
    assert "torch.compiler.disable" in compiled.explain()
    assert not torch.compiler.is_compiling()


def test_recompile_limit_warns_and_runs_eagerly():
    compiled = torch.compile(lambda x: x * 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 12):
            x = torch.randn(n)
            same(compiled(x), x * 2)
    assert len(compiled.history) == torch.compiler.api.cache_size_limit
    assert any("recompile limit" in str(w.message) for w in caught)
    torch.compiler.reset()
    assert not compiled.history


def test_double_backward_through_a_compiled_output_raises():
    x = torch.randn(3, requires_grad=True)
    compiled = torch.compile(lambda x: (x * x).sum())
    compiled(x)
    out = compiled(x)
    with pytest.raises(Unsupported, match="double backward"):
        torch.autograd.grad(out, x, create_graph=True)
    out = compiled(x)
    out.backward(retain_graph=True)
    out.backward()  # retain_graph keeps the replay's saved values
    with pytest.raises(RuntimeError, match="second time"):
        out.backward()


def test_outputs_structure_and_passthrough():
    def fn(x, y):
        return {"sum": x + y, "pair": (x * y, 3), "same": x}

    compiled = torch.compile(fn)
    x, y = torch.randn(2), torch.randn(2)
    for _ in range(2):
        got, expected = compiled(x, y), fn(x, y)
        same(got["sum"], expected["sum"])
        same(got["pair"][0], expected["pair"][0])
        assert got["pair"][1] == 3 and got["same"] is x


def test_views_and_broadcasting_match_eager():
    a = torch.randn(4, 6, requires_grad=True)
    b = torch.randn(6, requires_grad=True)

    def fn(a, b):
        h = (a + b).view(2, 12).t()
        q, k = h.chunk(2, dim=1)
        return (q.relu() * k.sigmoid()).transpose(0, 1).reshape(-1)[::2].sum() + a[1:, :3].exp().mean()

    check_matches_eager(fn, (a, b), [a, b])


def test_outputs_that_are_views_of_inputs_stay_views():
    compiled = torch.compile(lambda x: (x.view(2, 2).t(), x.detach()[1:], x * 2))
    x = torch.randn(4, requires_grad=True)
    for _ in range(3):
        v, d, y = compiled(x)
        assert v._base is x and d._storage is x._storage and not d.requires_grad
        same(y, x * 2)
        v.sum().backward()
        same(x.grad, torch.ones(4))
        x.grad = None
    assert plans(compiled)[0] is not None


def _mlp_loss(case):
    def loss(x, y, w1, w2, w3, b1, b2, b3):
        h = F.relu(F.linear(x, w1, b1))
        h = F.relu(F.linear(h, w2, b2))
        return F.cross_entropy(F.linear(h, w3, b3), y)

    return loss, (case.tx, case.ty, *case.params), case.params


def _conv_loss(case):
    return (lambda x, w: F.relu(F.conv2d(x, w)).mean()), (case.tx, case.tw), [case.tx, case.tw]


def _pair_loss(expression):
    return lambda case: (expression, (case.x, case.y), [case.x, case.y])


def _overhead(x, y):
    z = x
    for _ in range(20):
        z = ((z + y) * x - y).tanh().exp()
    return z.sum()


def _views_inplace(x):
    y = x * 1
    y[:, ::2].mul_(2)
    y.t()[10:20].add_(1)
    return y.sum()


LOSSES = {
    "overhead": _pair_loss(_overhead),
    "views_inplace": lambda case: (_views_inplace, (case.x,), [case.x]),
    "elementwise_big": _pair_loss(lambda x, y: (x * y + x).tanh().sum()),
    "matmul_big": _pair_loss(lambda x, y: (x @ y).sum()),
    "mlp_step": _mlp_loss,
    "conv_step": _conv_loss,
}


@pytest.mark.parametrize("name", list(cases.CASES))
def test_every_benchmark_case_matches_eager_compiled(name):
    case = cases.CASES[name]("cpu", small=True)
    if name == "transformer_step":
        model = torch.compile(case.model)
        for _ in range(3):
            _, expected = case.model(case.tidx, case.ttargets)
            case.optimizer.zero_grad()
            expected.backward()
            expected_grads = [p.grad for p in case.model.parameters()]
            case.optimizer.zero_grad()
            _, got = model(case.tidx, case.ttargets)
            got.backward()
            same(got, expected)
            for p, e in zip(case.model.parameters(), expected_grads):
                same(p.grad, e)
            torch.nn.utils.clip_grad_norm_(case.model.parameters(), 1.0)
            case.optimizer.step()
        assert plans(model._compiled)[0] is not None, model.explain()
        return
    if name == "sparse_mm":  # sparse tensors are not compiled: the case's step runs eagerly, unchanged
        compiled = torch.compile(case.minitorch)
        for _ in range(2):
            (loss, grads), (e_loss, e_grads) = compiled(), case.minitorch()
            same(loss, e_loss)
            for g, e in zip(grads, e_grads):
                same(g.to_dense() if g.layout == torch.sparse_coo else g, e.to_dense() if e.layout == torch.sparse_coo
                     else e)
        return
    loss, args, params = LOSSES[name](case)
    compiled = check_matches_eager(loss, args, params)
    if name != "views_inplace":  # in-place writes are graph breaks: the others compile whole
        assert plans(compiled)[0] is not None, compiled.explain()


@pytest.fixture
def example(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "examples"))

    def load(name: str):
        sys.modules.pop(name, None)
        return importlib.import_module(name)

    return load


@pytest.mark.parametrize("name, make, shape", [
    ("train_mlp", lambda m: m.MLP(hidden=16), (6, 8, 8)),
    ("train_cnn", lambda m: m.DigitsCNN(channels=4), (3, 64)),
    ("quantize_mlp", lambda m: m.MLP(hidden=16), (6, 8, 8)),
])
def test_example_models_match_eager_compiled(example, name, make, shape):
    module = example(name)
    torch.manual_seed(0)
    model = make(module)
    compiled = torch.compile(model)
    x = torch.randn(*shape)
    target = torch.randint(0, 10, (shape[0],))
    params = list(model.parameters())
    for training in (True, True, False, False):
        model.train(training)
        torch.manual_seed(1)  # dropout draws the same masks on both sides
        expected, expected_grads = grads_after(lambda x: F.cross_entropy(model(x), target), (x,), params)
        torch.manual_seed(1)
        got, got_grads = grads_after(lambda x: F.cross_entropy(compiled(x), target), (x,), params)
        same(got, expected)
        for g, e in zip(got_grads, expected_grads):
            same(g, e)


def test_char_transformer_generation_matches_eager(example):
    module = example("char_transformer")
    torch.manual_seed(0)
    model = module.CharTransformer(11, 8, 16, 2, 1, dropout=0.0).eval()
    compiled = torch.compile(model)
    idx = torch.randint(0, 11, (2, 8))
    with torch.no_grad():
        for _ in range(2):
            same(compiled(idx)[0], model(idx)[0])


def test_sparse_embeddings_example_model_runs_compiled(example):
    module = example("sparse_embeddings")
    torch.manual_seed(0)
    for sparse in (False, True):
        model = module.BagOfWords(sparse)
        compiled = torch.compile(model)
        words = torch.randint(0, module.VOCAB, (12,))
        offsets = torch.tensor([0, 5, 9])
        for _ in range(2):
            expected, expected_grads = grads_after(model, (words, offsets), list(model.parameters()))
            got, got_grads = grads_after(compiled, (words, offsets), list(model.parameters()))
            same(got, expected)
            for g, e in zip(got_grads, expected_grads):
                if g.layout == torch.sparse_coo:
                    g, e = g.to_dense(), e.to_dense()
                same(g, e)


def test_explain_lists_guards_kernels_and_fused_groups(capsys):
    x = torch.randn(4, requires_grad=True)
    compiled = torch.compile(chain)
    compiled(x, x)
    compiled.print_plan()
    text = capsys.readouterr().out
    for expected in ("guards:", "input 0: shape [4]", "graph breaks: none", "forward kernels:", "fused",
                     "backward kernels", "TanhBackward0", "ufunc calls"):
        assert expected in text, text


OPTIMIZERS = [
    (torch.optim.SGD, {"momentum": 0.9}),
    (torch.optim.SGD, {"momentum": 0.9, "nesterov": True, "maximize": True, "dampening": 0.0}),
    (torch.optim.SGD, {}),
    (torch.optim.Adam, {}),
    (torch.optim.Adam, {"amsgrad": True, "maximize": True}),
    (torch.optim.AdamW, {"betas": (0.8, 0.95)}),
]


def _training(kind, options, seed=0):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
    groups = [{"params": [model[0].weight, model[2].weight], "weight_decay": 0.1},
              {"params": [model[0].bias, model[2].bias]}]
    optimizer = kind(groups, lr=0.05, **options)
    return model, optimizer, torch.optim.lr_scheduler.StepLR(optimizer, 2, gamma=0.5)


@pytest.mark.parametrize("kind, options", OPTIMIZERS)
def test_compiled_optimizer_step_matches_eager(kind, options):
    x, y = torch.randn(5, 8), torch.randint(0, 4, (5,))
    results = []
    for compiled in (False, True):
        model, optimizer, scheduler = _training(kind, options)
        step = torch.compile(optimizer.step) if compiled else optimizer.step
        for _ in range(6):  # the scheduler halves lr every 2 steps: the replay reads it at every call
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            step()
            scheduler.step()
        results.append([p.detach().clone() for p in model.parameters()] + [
            t for p in model.parameters() for t in optimizer.state[p].values() if isinstance(t, torch.Tensor)])
    for got, expected in zip(results[1], results[0]):
        same(got, expected)
    assert step.replays == 5 and "replay" in step.explain()
    assert optimizer._opt_called  # schedulers see the step


@pytest.mark.parametrize("kind, options", OPTIMIZERS[::2])
def test_whole_training_step_replays_forward_backward_and_update(kind, options):
    x, y = torch.randn(5, 8), torch.randint(0, 4, (5,))
    runs = []
    for compiled in (False, True):
        model, optimizer, scheduler = _training(kind, options)

        def train_step(x, y):
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            return loss

        step = torch.compile(train_step) if compiled else train_step
        losses = []
        for _ in range(5):
            losses.append(step(x, y))
            scheduler.step()
        runs.append((losses, [p.detach().clone() for p in model.parameters()]))
    for got, expected in zip(runs[1][0] + runs[1][1], runs[0][0] + runs[0][1]):
        same(got, expected)
    [plan] = plans(step)
    assert plan.guided and plan.diverged == 0 and plan.pieces[0].records, step.explain()
    [compiled_step] = step._steps.values()
    assert compiled_step.replays == 4 and f"{kind.__name__}.step" in step.explain()
    assert "step" not in optimizer.__dict__  # the compiled step is installed only during the call


def test_compiled_optimizer_step_guards():
    model, optimizer, _ = _training(torch.optim.Adam, {})
    twin, twin_optimizer, _ = _training(torch.optim.Adam, {})
    x, y = torch.randn(5, 8), torch.randint(0, 4, (5,))
    step = torch.compile(optimizer.step)

    def both(change=lambda o: None):
        for m, o, s in ((model, optimizer, step), (twin, twin_optimizer, twin_optimizer.step)):
            change(o)
            o.zero_grad()
            F.cross_entropy(m(x), y).backward()
            s()
        for p, q in zip(model.parameters(), twin.parameters()):
            same(p, q)

    both()
    both()
    assert step.replays == 1
    both(lambda o: o.param_groups[0].update(weight_decay=0.3))  # another option: recorded again (eager call)
    assert step.traces == 2 and step.replays == 1
    both()
    assert step.replays == 2
    handle = optimizer.register_step_pre_hook(lambda *a: None)  # hooks: the eager step runs them
    both()
    assert "hooks" in step.explain()
    handle.remove()
    both()
    assert step.replays == 3
    step(lambda: None)  # a closure: eager
    assert "closure" in step.explain()


@pytest.mark.parametrize("fn", [lambda x: x.sum(), lambda x: x.sum(1).exp().sum(),
                                lambda x: x.sum(0, keepdim=True).tanh().sum(), lambda x: (x * 2).sum(dim=(0, 1))])
def test_sum_backward_on_arrays_matches_eager(fn):
    x = torch.randn(3, 4, requires_grad=True)
    check_matches_eager(fn, (x,), [x])


def test_training_mode_dropout_replays_in_a_piece():
    """Dropout draws its mask into ``empty_like(x)`` in place: the mask is read from each call (not a constant
    of the trace), so the replays follow the trace and draw the same masks as eager mode."""
    runs = []
    for compiled in (False, True):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Dropout(0.3),
                                    torch.nn.Linear(8, 3))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
        x, y = torch.randn(5, 6), torch.randint(0, 3, (5,))

        def train_step(x, y):
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            return loss

        step = torch.compile(train_step) if compiled else train_step
        torch.manual_seed(1)
        runs.append([step(x, y) for _ in range(5)] + [p.detach().clone() for p in model.parameters()])
    for got, expected in zip(runs[1], runs[0]):
        same(got, expected)
    [plan] = plans(step)
    assert plan.guided and plan.diverged == 0 and len(plan.pieces) == 1, step.explain()


def test_a_leaf_switched_to_no_grad_mid_call_leaves_the_traced_path():
    """A change the trace did not see (here a parameter frozen by Python state) fails the replay's checks: the
    rest of that call runs eagerly, and no gradient reaches the frozen parameter."""
    w = torch.randn(3, requires_grad=True)
    state = {"freeze": False}

    def fn(x):
        y = (x * 2).exp()
        float(y.sum())  # a break: the function's Python runs at every call
        if state["freeze"]:
            w.requires_grad_(False)
        out = (y * w).sum()
        w.requires_grad_(True)
        return out

    compiled = torch.compile(fn)
    x = torch.randn(3, requires_grad=True)
    for freeze in (False, False, True, False):
        state["freeze"] = freeze
        expected, (ex, ew) = grads_after(fn, (x,), [x, w])
        got, (gx, gw) = grads_after(compiled, (x,), [x, w])
        same(got, expected)
        same(gx, ex)
        assert (gw is None) == (ew is None) == freeze
        if gw is not None:
            same(gw, ew)
    assert plans(compiled)[0].diverged == 1


def _dropout_mlp(p=0.3):
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Dropout(p), torch.nn.Linear(8, 8),
                               torch.nn.ReLU(), torch.nn.Dropout(p), torch.nn.Linear(8, 3))


def test_compiled_model_draws_dropout_masks_inside_one_plan():
    """``torch.compile(model)`` with dropout in training mode is one whole-call plan (no graph break): each replay
    draws the masks from the default generator - the same calls in the same order as eager mode - so losses,
    weights and the generator's state after training are eager mode's bit for bit."""
    runs = []
    for compiled in (False, True):
        torch.manual_seed(0)
        model = _dropout_mlp()
        optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
        net = torch.compile(model) if compiled else model
        x, y = torch.randn(5, 6), torch.randint(0, 3, (5,))
        torch.manual_seed(1)
        losses = []
        for _ in range(5):
            loss = F.cross_entropy(net(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss)
        runs.append(losses + [p.detach().clone() for p in model.parameters()] + [torch.rand(3)])
    for got, expected in zip(runs[1], runs[0]):
        same(got, expected)
    [plan] = plans(net._compiled)
    assert not plan.guided and len(plan.randoms) == 2, net.explain()
    assert "graph breaks: none" in net.explain() and "random values, drawn again at each call" in net.explain()


def test_random_fills_replay_in_order_and_others_stay_breaks():
    """A factory's tensor filled by a sampler before any op reads it is drawn again at each replay (in the
    trace's order); a fill of an input, of a tensor already read, or with a tensor of probabilities is not."""

    def fresh(x):
        a = torch.empty(4).normal_()
        b = torch.empty_like(x).uniform_(-1, 1)
        c = torch.zeros(4).bernoulli_(0.5)
        return x * b + a * c

    compiled = torch.compile(fresh)
    x = torch.randn(4)
    for seed in (3, 4, 3):
        torch.manual_seed(seed)
        expected = fresh(x)
        torch.manual_seed(seed)
        same(compiled(x), expected)
    [plan] = plans(compiled)
    assert not plan.guided and len(plan.randoms) == 3

    def on_input(x):
        x.normal_()  # writes the caller's tensor: the Python code must run
        return x * 2

    def read_first(x):
        z = torch.zeros(4)
        y = x + z
        z.uniform_()
        return y * z

    def tensor_p(x):
        return x * torch.empty(4).bernoulli_(torch.full((4,), 0.5))

    for fn in (on_input, read_first, tensor_p):
        compiled = torch.compile(fn)
        for _ in range(3):
            torch.manual_seed(5)
            expected = fn(torch.ones(4))
            torch.manual_seed(5)
            same(compiled(torch.ones(4)), expected)
        [plan] = plans(compiled)
        assert plan is None or plan.guided or not plan.randoms, compiled.explain()


def _slow_function(x):
    y = x * 2
    float(y.sum())  # a break: pieces
    return (y + 1).sum()


@pytest.mark.parametrize("slower, eager", [(0.0, True), (1e9, False)])
def test_guided_plan_measured_slower_than_eager_falls_back(monkeypatch, slower, eager):
    """A plan with graph breaks is timed against eager mode on its first calls (alternating, results identical
    either way); one measured slower than ``SLOWER`` times eager mode runs eagerly from then on."""
    monkeypatch.setattr(compiler_api, "TRIAL_CALLS", 4)
    monkeypatch.setattr(compiler_api, "SLOWER", slower)
    compiled = torch.compile(_slow_function)
    x = torch.randn(3, requires_grad=True)
    for _ in range(8):
        got = compiled(x)
        got.backward()
        got_grad, x.grad = x.grad, None
        expected = _slow_function(x)
        expected.backward()
        same(got, expected)
        same(got_grad, x.grad)
        x.grad = None
    [(_, entry)] = compiled.history
    assert (entry.plan is None) == eager and entry.trial is None
    if eager:
        assert "measured slower than eager mode" in compiled.explain()
        assert entry.slow_plan is not None and entry.slow_plan.guided


def test_a_traced_fill_of_an_input_still_replays_in_pieces():
    """A sampler filling an input is traced as ops (the caller sees the write): the guided replay answers them
    as traced and does not leave the traced path, while a dropout mask in the same function is a random value."""

    def fn(x, w):
        x.uniform_()
        y = F.dropout(x * w, 0.5)
        float(y.sum())
        return (y * 2).sum()

    compiled = torch.compile(fn)
    w = torch.randn(4, requires_grad=True)
    for seed in (1, 2, 3):
        x, x2 = torch.zeros(4), torch.zeros(4)
        torch.manual_seed(seed)
        expected = fn(x, w)
        torch.manual_seed(seed)
        same(compiled(x2, w), expected)
        same(x2, x)
    [plan] = plans(compiled)
    assert plan.guided and plan.fills == (False, True) and plan.diverged == 0, compiled.explain()


def test_a_generator_seeded_inside_the_function_is_a_graph_break():
    """``manual_seed`` inside the function: a whole-call plan would not reseed, so it is a break, and the Python
    code (seeding, then drawing the mask) runs at every call: the same mask at every call, as in eager mode."""

    def fn(x):
        torch.manual_seed(7)
        return F.dropout(x, 0.5) * 2

    compiled = torch.compile(fn)
    x = torch.ones(16)
    for _ in range(3):
        torch.manual_seed(0)
        expected = fn(x)
        torch.manual_seed(1)
        same(compiled(x), expected)
    [plan] = plans(compiled)
    assert plan.guided and "a generator was seeded" in compiled.explain()
    assert torch.random.manual_seed is not None and "seeding" not in torch.Generator.manual_seed.__name__


# fourth round: fewer calls per replay ---------------------------------------------------------------------------


def _group_backward(compiled):
    [plan] = plans(compiled)
    [group] = [g for g in plan.fused_groups if g.backward is not None]
    return group


@pytest.mark.parametrize("special", [False, True])
def test_a_unit_gradient_drops_its_products_and_matches_eager(special):
    """``loss.backward()`` through a sum hands the fused backward a gradient of exactly 1: the program without
    the ``g * v`` calls runs, and gives eager mode's bits (-0.0, infinities and NaNs included)."""
    x = torch.randn(6, requires_grad=True)
    y = torch.randn(6, requires_grad=True)
    if special:
        with torch.no_grad():
            x[0], x[1], y[2], y[3] = -0.0, float("inf"), float("nan"), 1e30

    def fn(x, y):
        return ((x * y + x).tanh() * y).sum()

    compiled = check_matches_eager(fn, (x, y), [x, y])
    backward = _group_backward(compiled).backward
    assert backward.unit is not None
    assert len(backward.unit.instructions) < len(backward.kernel.instructions)
    # a gradient other than 1 (a scaled loss) runs the full program, also as eager mode
    check_matches_eager(lambda x, y: fn(x, y) * 3, (x, y), [x, y])


def test_a_unit_gradient_in_a_blocked_group(monkeypatch):
    monkeypatch.setattr(fusion, "BLOCK_BYTES", 4096)
    x = torch.randn(5000, requires_grad=True)
    y = torch.randn(5000, requires_grad=True)
    compiled = check_matches_eager(lambda x, y: (x * y + x).tanh().sum(), (x, y), [x, y])
    backward = _group_backward(compiled).backward
    assert backward.kernel.size and backward.unit is not None and backward.unit.size


def test_frames_are_reused_only_once_no_graph_holds_them():
    """Values only the backward reads live in a frame reused at the next call, unless a graph still holds it:
    two losses kept alive, backward in the reverse order, still give eager mode's gradients."""
    x = torch.randn(4, requires_grad=True)
    y = torch.randn(4, requires_grad=True)
    compiled = check_matches_eager(chain, (x, y), [x, y])
    group = _group_backward(compiled)
    assert group.framed
    expected = []
    for scale in (1.0, 2.0):
        with torch.no_grad():
            y.mul_(scale)
        x.grad = y.grad = None
        chain(x, y).backward()
        expected.append((x.grad, y.grad))
    with torch.no_grad():
        y.div_(2.0)
    first = compiled(x, y)
    with torch.no_grad():
        y.mul_(2.0)
    second = compiled(x, y)  # the first graph holds its frame: this call takes another
    assert len(group.frames) >= 2
    for loss, (ex, ey) in ((second, expected[1]), (first, expected[0])):
        x.grad = y.grad = None
        loss.backward()
        same(x.grad, ex)
        same(y.grad, ey)
    frames = len(group.frames)
    for _ in range(3):  # graphs freed after backward: their frames come back
        compiled(x, y).backward()
    assert len(group.frames) == frames


@pytest.mark.parametrize("fn", [lambda x: (1 - x * x).sum(), lambda x: (x * 0.1 + 2.5).exp().sum(),
                                lambda x: (x ** 2 - 3 * x).tanh().sum(), lambda x: (x / 3 + True).sum(),
                                lambda x: (0.3 - x).tanh().mul(1e-3).sum()])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_number_constants_as_0d_arrays_give_eager_bits(fn, dtype):
    x = torch.randn(7, dtype=dtype, requires_grad=True)
    compiled = check_matches_eager(fn, (x,), [x])
    [plan] = plans(compiled)
    kernels = [g.kernel for g in plan.fused_groups] + [g.backward.kernel for g in plan.fused_groups if g.backward]
    constants = [r for k in kernels for r in k.regs if hasattr(r, "ndim") and r.ndim == 0]
    assert constants and all(c.dtype == x.detach().numpy().dtype for c in constants)


@pytest.mark.parametrize("approximate", ["tanh", "none"])
def test_gelu_fuses_alone_with_its_tensor_derivative_recorded(approximate):
    x = torch.randn(3, 5, 8, requires_grad=True)
    compiled = check_matches_eager(lambda x: F.gelu(x, approximate=approximate).sum(), (x,), [x])
    if approximate == "tanh":  # (the exact form's erf is no numpy ufunc: it stays an op)
        group = _group_backward(compiled)
        assert group.names == ["Gelu"] and group.backward is not None


def test_a_recorded_derivative_that_differs_from_the_tensor_path_is_not_used(monkeypatch):
    """The recording of a derivative written in Tensor ops is checked against the Tensor path: here the
    stand-ins' ``tanh`` is made wrong, the check fails, and the group's backward runs unfused (eager's bits)."""
    monkeypatch.setattr(fusion.Symbolic, "tanh", lambda self: fusion._xp_of(self.value).sinh(self))
    x = torch.randn(4, 8, requires_grad=True)
    compiled = check_matches_eager(lambda x: F.gelu(x, approximate="tanh").sum(), (x,), [x])
    [plan] = plans(compiled)
    assert all(g.backward is None for g in plan.fused_groups)


def test_static_derivative_parts_run_batched_across_rounds():
    """The tanh derivative's ``t * t`` and ``1 - tt`` read only forward values: the chain's rounds lay their ``t``
    out in one array and compute them in one call each (bit-identical: exact ufuncs), here and in the unit-gradient
    program."""
    x = torch.randn(4, requires_grad=True)
    y = torch.randn(4, requires_grad=True)
    compiled = check_matches_eager(chain, (x, y), [x, y], calls=4)
    backward = _group_backward(compiled).backward
    assert [len(leaves) for leaves in backward.batches] == [3, 3]  # the rounds' t, and their s = z + y
    assert len(backward.unit.instructions) < len(backward.unit_program.instructions) - 3
    check_matches_eager(lambda x, y: chain(x, y) * 0.5, (x, y), [x, y])  # the full program, batched too


def test_contributions_added_at_the_end_run_as_one_call():
    """``-g`` (y's part of each round's subtraction) and ``g * s`` (x's part of each product) are read only when
    the inputs' gradients are summed at the end: each set runs as one call on rows, after its last member, and
    the sums (in eager mode's order) give eager mode's bits."""
    x = torch.randn(4, requires_grad=True)
    y = torch.randn(4, requires_grad=True)
    compiled = check_matches_eager(chain, (x, y), [x, y], calls=4)
    backward = _group_backward(compiled).backward
    for kernel, program in ((backward.unit, backward.unit_program), (backward.kernel, backward.program)):
        names = [f.__name__ for f, *_ in kernel.instructions]
        assert names.count("negative") == 1 and [f.__name__ for f, *_ in program.instructions].count("negative") == 3
        assert len(kernel.instructions) == len(program.instructions) - 4 - 2 - 2  # static 4, -g 2, g * s 2


def test_batches_next_to_other_reads_of_the_same_values_give_eager_bits():
    """Rounds whose ``t`` other derivatives read too (``t * t + t`` in the forward): the batched static parts and
    the unbatched reads of the same frame values agree with eager mode bit for bit."""
    x = torch.randn(5, requires_grad=True)

    def fn(x):
        z = x
        for _ in range(3):
            t = (z * 1.5).tanh()
            z = t * t + t  # t * t in the forward; the backward's t * t (tanh's) and the products' reads of t
        return z.sum()

    check_matches_eager(fn, (x,), [x], calls=4)


def test_a_full_sum_hands_its_gradient_to_the_fused_backward_as_one_value():
    x = torch.randn(4, requires_grad=True)
    y = torch.randn(4, requires_grad=True)
    compiled = check_matches_eager(chain, (x, y), [x, y])
    [plan] = plans(compiled)
    assert plan.handoffs and all(plan.steps[i].sum_node is not None for i in plan.handoffs)


def test_no_hand_off_when_the_summed_value_gets_another_gradient():
    """The group's output is also returned and differentiated outside: its gradient is not one value, the sum's
    backward runs as eager mode's (and the group's backward takes the full gradient)."""
    x = torch.randn(3, 4, requires_grad=True)
    y = torch.randn(3, 4, requires_grad=True)

    def fn(x, y):
        z = (x * y + x).tanh() * y
        return z.sum(), z

    compiled = torch.compile(fn)
    for _ in range(3):
        grads = []
        for f in (fn, compiled):
            x.grad = y.grad = None
            loss, z = f(x, y)
            (loss + (z * z).sum()).backward()
            grads.append((loss, x.grad, y.grad))
        for got, expected in zip(grads[1], grads[0]):
            same(got, expected)


def test_resident_bytes_count_the_buffers_every_program_keeps(monkeypatch):
    """The unit-gradient program's pooled gradients and a frame's arrays stay between calls: the benchmark's peak
    memory of the compiled side adds them."""
    monkeypatch.setattr(fusion, "BLOCK_BYTES", 4096)
    x = torch.randn(5000, requires_grad=True)
    y = torch.randn(5000, requires_grad=True)
    compiled = check_matches_eager(lambda x, y: (x * y + x).tanh().sum(), (x, y), [x, y])
    [plan] = plans(compiled)
    unit = plan.fused_groups[0].backward.unit
    pooled = sum(b.nbytes for _, pool in unit.outputs for b in pool.buffers)
    assert pooled >= 2 * x.numel() * 4 and plan.resident_bytes() >= pooled
    small = check_matches_eager(chain, (x[:4].detach().requires_grad_(), y[:4].detach().requires_grad_()), [])
    [small_plan] = plans(small)
    group = small_plan.fused_groups[0]
    assert group.frames and small_plan.resident_bytes() >= sum(a.nbytes for a in group.frames[0][-1:])


@pytest.mark.parametrize("body", [
    lambda z, x, y: (z * x + y).sigmoid(),
    lambda z, x, y: (z - x).exp() * y - z,
    lambda z, x, y: ((z + y) * x).tanh() - x * 0.5,
    lambda z, x, y: (z * z - y).tanh() / (x * x + 1),
])
@pytest.mark.parametrize("shape", [(4,), (3, 5)])
def test_chains_with_batched_and_deferred_parts_give_eager_bits(body, shape):
    x = torch.randn(*shape, requires_grad=True)
    y = torch.randn(*shape, requires_grad=True)

    def fn(x, y):
        z = x
        for _ in range(4):
            z = body(z, x, y)
        return z.sum()

    check_matches_eager(fn, (x, y), [x, y], calls=4)
    check_matches_eager(lambda x, y: fn(x, y) * 1.5, (x, y), [x, y], calls=3)


def test_threads_replaying_one_plan_get_eager_results():
    """A plan's buffers (pools, scratch, frames) serve one replay at a time: a call made while another thread
    replays the same plan runs eagerly, and backward replays take turns, so every thread gets eager's values."""
    def step(x, y):
        return ((x * y + x).tanh() * y).exp().sum()

    compiled = torch.compile(step)
    rng = np.random.default_rng(0)
    inputs = [(torch.tensor(rng.standard_normal(200_000).astype(np.float32) * 0.1, requires_grad=True),
               torch.tensor(rng.standard_normal(200_000).astype(np.float32) * 0.1, requires_grad=True))
              for _ in range(4)]
    expected = []
    for x, y in inputs:
        loss = step(x, y)
        loss.backward()
        expected.append((loss.item(), x.grad.clone(), y.grad.clone()))
        x.grad = y.grad = None
    compiled(*inputs[0])[()].backward()  # traced
    inputs[0][0].grad = inputs[0][1].grad = None
    failures = []

    def worker(k):
        x, y = inputs[k]
        for _ in range(15):
            loss = compiled(x, y)
            loss.backward()
            value, gx, gy = expected[k]
            if loss.item() != value or not (torch.equal(x.grad, gx) and torch.equal(y.grad, gy)):
                failures.append(k)
            x.grad = y.grad = None

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_a_plan_without_steps_returns_its_inputs_and_their_views():
    """A function whose results are its inputs and views of them records no step; its replays hand them back."""
    x = torch.randn(3, 4, requires_grad=True)
    compiled = torch.compile(lambda t: (t, t[0], t.t()))
    for _ in range(3):
        same, row, transposed = compiled(x)
        assert same is x and torch.equal(row, x[0]) and torch.equal(transposed, x.t())
        assert row.grad_fn is not None and transposed._base is x
    for fn in (torch.positive, lambda t: torch.flatten(t, 0, 0)):  # (fuzzer seeds 2001353, 2000707)
        compiled = torch.compile(fn)
        for _ in range(3):
            assert compiled(x) is x


@pytest.mark.parametrize("target", ["argument", "intermediate"])
def test_a_write_that_gives_a_tensor_history_runs_eagerly(target):
    """Writing a value that requires grad into a tensor that had no history (an argument, or a result made in the
    call) attaches a history to it, and a replay would write only the values: the gradient through the written
    tensor was lost on replays (None instead of eager's). Such a call runs eagerly (fuzzer seeds 2000362,
    2000523 and five more)."""

    def write_into_argument(base, value):
        view = base[::2]
        view[0, 0] = value
        return view * 3

    def write_into_intermediate(base, value):
        made = base.log()
        made[None] = value
        return made * 3

    fn = write_into_argument if target == "argument" else write_into_intermediate
    compiled = torch.compile(fn)
    for _ in range(3):
        base = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]) if target == "argument" else torch.tensor(2.0)
        value = torch.tensor(0.5, requires_grad=True)
        fn(base.clone(), value).sum().backward()
        expected, value.grad = value.grad, None
        compiled(base, value).sum().backward()
        same(value.grad, expected)
    assert plans(compiled) == [None] and "new autograd history" in compiled.explain()

