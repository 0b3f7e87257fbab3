"""nn.Module, nn.Parameter and the containers: registration, traversal order, state_dict, hooks, repr, moves."""

from __future__ import annotations

import copy
import io
from collections import OrderedDict

import numpy as np
import pytest

import minitorch as torch
from minitorch import nn


class Affine(nn.Module):
    """A tiny layer defined here so these tests depend only on Module itself."""

    def __init__(self, n_in: int, n_out: int, device=None, bias: bool = True):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_out, n_in, device=device))
        self.bias = nn.Parameter(torch.zeros(n_out, device=device)) if bias else None
        self.register_buffer("calls", torch.zeros((), dtype=torch.int64, device=device))
        self.register_buffer("scratch", torch.zeros(n_out, device=device), persistent=False)
        self.n_in, self.n_out = n_in, n_out

    def forward(self, x):
        y = x @ self.weight.t()
        return y + self.bias if self.bias is not None else y

    def extra_repr(self) -> str:
        return f"n_in={self.n_in}, n_out={self.n_out}"


class Net(nn.Module):
    def __init__(self, device=None):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1, device=device))
        self.body = nn.Sequential(Affine(3, 4, device), nn.Module(), Affine(4, 2, device))
        self.head = Affine(2, 1, device)
        self.register_buffer("step", torch.zeros((), device=device))

    def forward(self, x):
        return self.head(self.body[2](self.body[0](x))) * self.scale


def round_trip(obj):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer)


# Parameter --------------------------------------------------------------------------------------------


def test_parameter_is_a_leaf_sharing_storage(device):
    data = torch.randn(2, 3, device=device)
    p = nn.Parameter(data)
    assert isinstance(p, torch.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert p.data_ptr() == data.data_ptr()
    with torch.no_grad():
        p.add_(1)
    assert torch.equal(data, p.detach())
    assert not nn.Parameter(data, requires_grad=False).requires_grad
    # history of the source is dropped: a Parameter is always a leaf
    source = torch.ones(2, device=device, requires_grad=True) * 2
    assert nn.Parameter(source).is_leaf
    assert nn.Parameter().shape == (0,)
    # ops on a Parameter give plain tensors
    assert type(p * 2) is torch.Tensor


def test_parameter_repr_and_errors():
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    with pytest.raises(TypeError):
        nn.Parameter([1.0, 2.0])


def test_parameter_receives_gradients_and_deepcopies(device):
    p = nn.Parameter(torch.tensor([1.0, 2.0], device=device))
    (p * p).sum().backward()
    assert p.grad.tolist() == [2.0, 4.0]
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q.requires_grad and q.data_ptr() != p.data_ptr()
    assert q.grad.tolist() == [2.0, 4.0]


# registration -----------------------------------------------------------------------------------------


def test_setattr_registers_parameters_buffers_and_modules(device):
    m = Affine(3, 2, device)
    assert list(m._parameters) == ["weight", "bias"]
    assert list(m._buffers) == ["calls", "scratch"]
    assert m.n_in == 3 and "n_in" in m.__dict__
    child = Affine(2, 2, device)
    m.child = child
    assert m._modules["child"] is child and m.child is child
    # reassigning a registered parameter name with None keeps the slot, a tensor is refused
    m.bias = None
    assert "bias" in m._parameters and m.bias is None
    with pytest.raises(TypeError, match="cannot assign 'torch.FloatTensor' as parameter 'weight'"):
        m.weight = torch.zeros(2, 3)
    with pytest.raises(TypeError, match="as child module 'child'"):
        m.child = 3
    # a buffer name takes tensors
    m.calls = torch.ones((), dtype=torch.int64)
    assert m.calls.item() == 1 and "calls" in m._buffers
    # deleting
    del m.child
    assert "child" not in m._modules
    del m.scratch
    assert "scratch" not in m._buffers and "scratch" not in m._non_persistent_buffers_set
    with pytest.raises(AttributeError, match="'Affine' object has no attribute 'missing'"):
        m.missing


def test_registration_errors():
    m = nn.Module()
    with pytest.raises(KeyError, match="name can.+t contain"):
        m.register_parameter("a.b", nn.Parameter(torch.zeros(1)))
    with pytest.raises(KeyError, match="empty string"):
        m.register_buffer("", torch.zeros(1))
    with pytest.raises(TypeError, match="cannot assign 'torch.FloatTensor' object to parameter 'w'"):
        m.register_parameter("w", torch.zeros(1))
    m.plain = 3
    with pytest.raises(KeyError, match="attribute 'plain' already exists"):
        m.register_buffer("plain", torch.zeros(1))
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("x", 3)
    with pytest.raises(TypeError, match="object to buffer"):
        m.register_buffer("b", [1.0])

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(torch.zeros(1))

    with pytest.raises(AttributeError, match="cannot assign parameters before Module.__init__"):
        Early()


def test_buffer_marker_registers_a_buffer():
    m = nn.Module()
    m.stats = nn.Buffer(torch.ones(2), persistent=False)
    assert "stats" in m._buffers and "stats" in m._non_persistent_buffers_set
    assert type(m.stats) is torch.Tensor
    assert list(m.state_dict()) == []


def test_parameter_replacing_attribute_moves_between_stores():
    m = nn.Module()
    m.register_buffer("x", torch.zeros(1))
    m.x = torch.ones(1)  # stays a buffer
    assert "x" in m._buffers
    m.x = nn.Parameter(torch.ones(1))
    assert "x" in m._parameters and "x" not in m._buffers
    m.y = 1
    m.y = nn.Module()
    assert "y" in m._modules and "y" not in m.__dict__


# traversal --------------------------------------------------------------------------------------------


def test_named_parameters_follow_registration_order(device):
    net = Net(device)
    names = [name for name, _ in net.named_parameters()]
    assert names == ["scale", "body.0.weight", "body.0.bias", "body.2.weight", "body.2.bias",
                     "head.weight", "head.bias"]
    assert [n for n, _ in net.named_parameters(recurse=False)] == ["scale"]
    assert [n for n, _ in net.named_parameters(prefix="model")][:2] == ["model.scale", "model.body.0.weight"]
    assert [p is net.get_parameter(n) for n, p in net.named_parameters()] == [True] * 7
    assert [n for n, _ in net.named_buffers()] == ["step", "body.0.calls", "body.0.scratch", "body.2.calls",
                                                   "body.2.scratch", "head.calls", "head.scratch"]
    assert [n for n, _ in net.named_children()] == ["body", "head"]
    assert [n for n, _ in net.named_modules()] == ["", "body", "body.0", "body.1", "body.2", "head"]
    assert len(list(net.modules())) == 6 and next(net.modules()) is net
    assert len(list(net.parameters())) == 7 and len(list(net.buffers())) == 7


def test_shared_parameters_and_modules_are_deduplicated():
    shared = Affine(2, 2)
    net = nn.Sequential(shared, shared)
    net.extra = nn.Module()
    net.extra.tied = shared.weight
    assert [n for n, _ in net.named_parameters()] == ["0.weight", "0.bias"]
    all_names = [n for n, _ in net.named_parameters(remove_duplicate=False)]
    assert all_names == ["0.weight", "0.bias", "1.weight", "1.bias", "extra.tied"]
    assert [n for n, _ in net.named_modules()] == ["", "0", "extra"]
    assert [n for n, _ in net.named_modules(remove_duplicate=False)] == ["", "0", "1", "extra"]
    assert len(list(net.children())) == 2
    assert list(net.state_dict()) == ["0.weight", "0.bias", "0.calls", "1.weight", "1.bias", "1.calls",
                                      "extra.tied"]


def test_get_submodule_parameter_buffer_errors():
    net = Net()
    assert net.get_submodule("body.0") is net.body[0]
    assert net.get_submodule("") is net
    assert net.get_buffer("body.0.calls") is net.body[0].calls
    with pytest.raises(AttributeError, match="Sequential has no attribute `7`"):
        net.get_submodule("body.7")
    with pytest.raises(AttributeError, match="`n_in` is not an nn.Module"):
        net.get_submodule("head.n_in")
    with pytest.raises(AttributeError, match="`step` is not an nn.Parameter"):
        net.get_parameter("step")
    with pytest.raises(AttributeError, match="`weight` is not a buffer"):
        net.get_buffer("head.weight")


def test_dir_lists_registered_names():
    net = Net()
    names = dir(net)
    assert {"scale", "body", "head", "step", "forward", "training"} <= set(names)
    assert names == sorted(names)
    assert "0" not in dir(net.body)


def test_train_eval_apply_and_requires_grad(device):
    net = Net(device)
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train("yes")
    seen = []
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen == ["Affine", "Module", "Affine", "Sequential", "Affine", "Net"]
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_forward_call_and_zero_grad(device):
    net = Net(device)
    x = torch.randn(5, 3, device=device)
    out = net(x)
    assert out.shape == (5, 1)
    out.sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    grads = [p.grad for p in net.parameters()]
    net.zero_grad(set_to_none=False)
    assert all(p.grad is g and not g.any() for p, g in zip(net.parameters(), grads))
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    with pytest.raises(NotImplementedError, match='Module \\[Module\\] is missing the required "forward"'):
        nn.Module()(x)


# moving -----------------------------------------------------------------------------------------------


def test_to_dtype_keeps_parameter_identity(device):
    net = Net(device)
    net(torch.randn(2, 3, device=device)).sum().backward()
    params = list(net.parameters())
    grads = [p.grad for p in params]
    assert net.to(torch.float64) is net
    assert [p is q for p, q in zip(net.parameters(), params)] == [True] * len(params)
    assert all(isinstance(p, nn.Parameter) and p.dtype is torch.float64 and p.requires_grad for p in params)
    assert all(p.grad is g and g.dtype is torch.float64 for p, g in zip(params, grads))
    assert net.step.dtype is torch.float64
    assert net.head.calls.dtype is torch.int64  # integer buffers keep their dtype
    assert net.float().scale.dtype is torch.float32 and net.double().scale.dtype is torch.float64
    assert net.half().scale.dtype is torch.float16
    net.to(torch.zeros(1, dtype=torch.float32, device=device))
    assert net.scale.dtype is torch.float32 and net.head.calls.dtype is torch.int64
    assert net.to(device).scale is params[0] and net.scale.device.type == torch.device(device).type
    # a training step after the move updates the same objects an optimizer would hold
    out = net(torch.randn(2, 3, device=device)).sum()
    out.backward()
    assert params[0].grad is not None and params[0].grad.dtype is torch.float32
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex dtypes"):
        net.to(torch.int32)


def test_cpu_and_type(device):
    net = Affine(2, 2, device)
    assert net.cpu().weight.device.type == "cpu"
    assert net.type(torch.float64).weight.dtype is torch.float64
    assert net.calls.dtype is torch.float64  # type() casts every tensor, like PyTorch


# state dict -------------------------------------------------------------------------------------------


def test_state_dict_keys_detached_and_sharing_storage(device):
    net = Net(device)
    sd = net.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == ["scale", "step", "body.0.weight", "body.0.bias", "body.0.calls", "body.2.weight",
                        "body.2.bias", "body.2.calls", "head.weight", "head.bias", "head.calls"]
    assert all(not v.requires_grad and type(v) is torch.Tensor for v in sd.values())
    assert sd["scale"].data_ptr() == net.scale.data_ptr()
    kept = net.state_dict(keep_vars=True)
    assert kept["scale"] is net.scale
    assert list(net.head.state_dict(prefix="h.")) == ["h.weight", "h.bias", "h.calls"]


def test_state_dict_round_trip_through_save_and_load(device):
    source, target = Net(device), Net(device)
    with torch.no_grad():
        source.step.fill_(7)
    loaded = round_trip(source.state_dict())
    weight = target.body[0].weight
    result = target.load_state_dict(loaded)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    assert target.body[0].weight is weight  # copied in place
    for (name, a), (_, b) in zip(source.state_dict().items(), target.state_dict().items()):
        np.testing.assert_array_equal(a.cpu().numpy(), b.cpu().numpy(), err_msg=name)
    x = torch.randn(4, 3, device=device)
    np.testing.assert_allclose(source(x).detach().cpu().numpy(), target(x).detach().cpu().numpy())
    # loading does not record autograd history
    assert target.body[0].weight.is_leaf and target.body[0].weight.requires_grad


def test_load_state_dict_strict_errors():
    m = Affine(3, 2)
    sd = m.state_dict()
    del sd["bias"]
    sd["extra"] = torch.zeros(1)
    with pytest.raises(RuntimeError) as info:
        m.load_state_dict(sd)
    assert str(info.value) == ('Error(s) in loading state_dict for Affine:\n\tMissing key(s) in state_dict: "bias". '
                               '\n\tUnexpected key(s) in state_dict: "extra". ')
    before = m.weight.detach().clone()
    sd["weight"] = torch.full((2, 3), 5.0)
    result = m.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["extra"]
    assert not torch.equal(before, m.weight.detach()) and m.weight.detach().eq(5).all()


def test_load_state_dict_size_mismatch_and_nested_keys():
    net = Net()
    sd = net.state_dict()
    sd["head.weight"] = torch.zeros(3, 3)
    sd["body.9.weight"] = torch.zeros(1)
    with pytest.raises(RuntimeError) as info:
        net.load_state_dict(sd)
    message = str(info.value)
    assert message.startswith("Error(s) in loading state_dict for Net:\n\tUnexpected key(s) in state_dict: "
                              '"body.9.weight". ')
    assert ("size mismatch for head.weight: copying a param with shape torch.Size([3, 3]) from checkpoint, the "
            "shape in current model is torch.Size([1, 2]).") in message
    with pytest.raises(RuntimeError, match="size mismatch"):
        net.load_state_dict(sd, strict=False)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        net.load_state_dict([1, 2])


def test_load_state_dict_assign_and_non_persistent():
    m = Affine(2, 2)
    sd = {"weight": torch.ones(2, 2), "bias": torch.ones(2), "calls": torch.ones((), dtype=torch.int64)}
    assert "scratch" not in m.state_dict()
    m.load_state_dict(sd, assign=True)
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad
    assert m.weight.data_ptr() == sd["weight"].data_ptr()


def test_load_state_dict_keeps_optimizer_references():
    m = Affine(2, 2)
    held = list(m.parameters())
    m.load_state_dict(Affine(2, 2).state_dict())
    assert [a is b for a, b in zip(held, m.parameters())] == [True, True]


def test_extra_state_is_saved_and_restored():
    class Stateful(nn.Module):
        def __init__(self):
            super().__init__()
            self.counter = 0

        def get_extra_state(self):
            return {"counter": self.counter}

        def set_extra_state(self, state):
            self.counter = state["counter"]

    a, b = Stateful(), Stateful()
    a.counter = 5
    sd = a.state_dict()
    assert sd["_extra_state"] == {"counter": 5}
    b.load_state_dict(round_trip(sd))
    assert b.counter == 5
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "_extra_state"'):
        b.load_state_dict({})


# hooks ------------------------------------------------------------------------------------------------


def test_forward_hooks_modify_inputs_and_outputs():
    m = Affine(2, 2)
    calls = []

    def pre(module, args):
        calls.append("pre")
        return (args[0] * 0,)

    def post(module, args, output):
        calls.append("post")
        return output + 1

    h1 = m.register_forward_pre_hook(pre)
    h2 = m.register_forward_hook(post)
    out = m(torch.ones(1, 2))
    assert calls == ["pre", "post"] and out.tolist() == [[1.0, 1.0]]
    h1.remove()
    h2.remove()
    assert m(torch.zeros(1, 2)).tolist() == [[0.0, 0.0]] and calls == ["pre", "post"]


def test_hooks_with_kwargs_prepend_and_context_manager():
    class Scale(nn.Module):
        def forward(self, x, *, factor=1.0):
            return x * factor

    m = Scale()
    order = []
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"factor": 3.0}), with_kwargs=True)
    m.register_forward_hook(lambda mod, args, out: order.append("second"))
    m.register_forward_hook(lambda mod, args, out: order.append("first"), prepend=True)
    seen = {}
    with m.register_forward_hook(lambda mod, args, kwargs, out: seen.update(kwargs), with_kwargs=True):
        assert m(torch.ones(1)).item() == 3.0
    assert order == ["first", "second"] and seen == {"factor": 3.0}
    assert len(m._forward_hooks) == 2 and len(m._forward_hooks_with_kwargs) == 0
    m.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        m(torch.ones(1))


def test_always_call_hook_runs_when_forward_raises():
    class Broken(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = Broken()
    seen = []
    m.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=True)
    m.register_forward_hook(lambda mod, args, out: seen.append("never"))
    with pytest.raises(ValueError, match="boom"):
        m(torch.ones(1))
    assert seen == [None]


def test_global_forward_hook():
    from minitorch.nn.modules.module import register_module_forward_hook

    seen = []
    handle = register_module_forward_hook(lambda mod, args, out: seen.append(type(mod).__name__))
    try:
        Net()(torch.ones(1, 3))
    finally:
        handle.remove()
    assert seen == ["Affine", "Affine", "Affine", "Net"]


# repr -------------------------------------------------------------------------------------------------


def test_repr_nested_like_pytorch():
    net = Net()
    assert repr(net) == (
        "Net(\n"
        "  (body): Sequential(\n"
        "    (0): Affine(n_in=3, n_out=4)\n"
        "    (1): Module()\n"
        "    (2): Affine(n_in=4, n_out=2)\n"
        "  )\n"
        "  (head): Affine(n_in=2, n_out=1)\n"
        ")"
    )

    class Multi(nn.Module):
        def extra_repr(self):
            return "a=1\nb=2"

    assert repr(Multi()) == "Multi(\n  a=1\n  b=2\n)"
    holder = nn.Module()
    holder.slot = None
    holder.add_module("empty", None)
    assert repr(holder) == "Module(\n  (empty): None\n)"


def test_module_list_repr_compresses_repeats():
    layers = nn.ModuleList([Affine(2, 2) for _ in range(3)] + [nn.Module(), Affine(2, 2)])
    assert repr(layers) == (
        "ModuleList(\n"
        "  (0-2): 3 x Affine(n_in=2, n_out=2)\n"
        "  (3): Module()\n"
        "  (4): Affine(n_in=2, n_out=2)\n"
        ")"
    )
    assert repr(nn.ModuleList()) == "ModuleList()"


def test_parameter_containers_repr():
    plist = nn.ParameterList([torch.zeros(2, 3), nn.Parameter(torch.ones(1, dtype=torch.float64)), "x"])
    assert repr(plist) == (
        "ParameterList(\n"
        "    (0): Parameter containing: [torch.float32 of size 2x3]\n"
        "    (1): Parameter containing: [torch.float64 of size 1]\n"
        "    (2): Object of type: str\n"
        ")"
    )
    pdict = nn.ParameterDict(OrderedDict(b=torch.zeros(2), a=torch.ones(3)))
    assert repr(pdict) == (
        "ParameterDict(\n"
        "    (b): Parameter containing: [torch.float32 of size 2]\n"
        "    (a): Parameter containing: [torch.float32 of size 3]\n"
        ")"
    )


# containers -------------------------------------------------------------------------------------------


def test_sequential_indexing_slicing_and_editing():
    a, b, c = Affine(3, 3), nn.Module(), Affine(3, 3)
    seq = nn.Sequential(a, b, c)
    assert len(seq) == 3 and seq[0] is a and seq[-1] is c and list(seq) == [a, b, c]
    sub = seq[1:]
    assert isinstance(sub, nn.Sequential) and list(sub._modules) == ["1", "2"] and sub[0] is b
    with pytest.raises(IndexError, match="index 3 is out of range"):
        seq[3]
    seq[1] = Affine(3, 3)
    d = Affine(3, 3)
    assert seq.append(d) is seq and seq[3] is d
    del seq[1]
    assert list(seq._modules) == ["0", "1", "2"] and seq[1] is c
    seq.insert(0, b)
    assert seq[0] is b and seq[1] is a and len(seq) == 4
    assert seq.pop(0) is b and len(seq) == 3
    assert len(seq + nn.Sequential(b)) == 4
    with pytest.raises(ValueError, match="add operator supports only objects of Sequential class"):
        seq + [b]


def test_sequential_forward_and_ordered_dict():
    first, second = Affine(3, 2), Affine(2, 1)
    seq = nn.Sequential(OrderedDict([("first", first), ("second", second)]))
    assert list(seq._modules) == ["first", "second"] and seq.first is first
    x = torch.randn(4, 3)
    np.testing.assert_allclose(seq(x).detach().numpy(), second(first(x)).detach().numpy())
    assert [n for n, _ in seq.named_parameters()] == ["first.weight", "first.bias", "second.weight", "second.bias"]


def test_module_list():
    layers = nn.ModuleList([Affine(2, 2), Affine(2, 2)])
    layers.append(Affine(2, 3))
    layers.extend([nn.Module()])
    layers += [Affine(1, 1)]
    assert len(layers) == 5 and [n for n, _ in layers.named_children()] == ["0", "1", "2", "3", "4"]
    assert isinstance(layers[1:3], nn.ModuleList) and len(layers[1:3]) == 2
    assert layers[-1].n_in == 1
    layers.insert(1, nn.Module())
    assert type(layers[1]) is nn.Module and layers[2].n_in == 2
    del layers[0]
    assert list(layers._modules) == [str(i) for i in range(5)]
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable"):
        layers.extend(3)
    holder = nn.Module()
    holder.layers = layers
    assert len(list(holder.parameters())) == 2 * 3  # three Affines left


def test_module_dict():
    md = nn.ModuleDict({"z": Affine(1, 1), "a": nn.Module()})
    assert list(md) == ["z", "a"] and "z" in md and len(md) == 2
    md["b"] = Affine(2, 2)
    md.update([("c", nn.Module())])
    assert list(md.keys()) == ["z", "a", "b", "c"]
    assert md.pop("a") is not None and "a" not in md
    with pytest.raises(ValueError, match="has length 1; 2 is required"):
        md.update([("x",)])
    assert [n for n, _ in md.named_parameters()] == ["z.weight", "z.bias", "b.weight", "b.bias"]
    md.clear()
    assert len(md) == 0


def test_parameter_list_and_dict(device):
    plist = nn.ParameterList([torch.zeros(2, device=device)])
    plist.append(nn.Parameter(torch.ones(3, device=device)))
    assert len(plist) == 2 and all(isinstance(p, nn.Parameter) for p in plist)
    assert [n for n, _ in plist.named_parameters()] == ["0", "1"]
    assert isinstance(plist[0:1], nn.ParameterList) and plist[-1].shape == (3,)
    with pytest.raises(RuntimeError, match="ParameterList should not be called"):
        plist()
    pdict = nn.ParameterDict({"b": torch.zeros(1, device=device), "a": torch.ones(1, device=device)})
    assert list(pdict) == ["a", "b"]  # PyTorch sorts a plain dict's keys
    pdict["c"] = torch.ones(2, device=device)
    assert isinstance(pdict["c"], nn.Parameter) and "c" in pdict and len(pdict) == 3
    assert pdict.get("zz") is None and pdict.setdefault("d", None) is None
    assert pdict.pop("d") is None and list(pdict.keys()) == ["a", "b", "c"]
    with pytest.raises(TypeError, match="not a string"):
        pdict[0]
    holder = nn.Module()
    holder.plist, holder.pdict = plist, pdict
    assert [n for n, _ in holder.named_parameters()] == ["plist.0", "plist.1", "pdict.a", "pdict.b", "pdict.c"]
    merged = pdict | nn.ParameterDict(OrderedDict(z=torch.zeros(1)))
    assert list(merged) == ["a", "b", "c", "z"]
    assert merged.popitem()[0] == "z"
    holder.to(torch.float64)
    assert plist[0].dtype is torch.float64 and pdict["a"].dtype is torch.float64


def test_deepcopy_module():
    net = Net()
    clone = copy.deepcopy(net)
    assert [n for n, _ in clone.named_parameters()] == [n for n, _ in net.named_parameters()]
    assert all(a.data_ptr() != b.data_ptr() for a, b in zip(net.parameters(), clone.parameters()))
    assert all(isinstance(p, nn.Parameter) for p in clone.parameters())
    x = torch.randn(2, 3)
    np.testing.assert_allclose(net(x).detach().numpy(), clone(x).detach().numpy())
