"""minitorch.distributed without MPI: the API is importable, and refuses clearly before init_process_group."""

import datetime
import os
import subprocess
import sys
from pathlib import Path

import pytest

import minitorch as torch
import minitorch.distributed as dist
from minitorch.utils.data.distributed import DistributedSampler


def test_not_initialized_errors():
    assert dist.is_available() and not dist.is_initialized()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.get_rank()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.all_reduce(torch.ones(2))
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))


def test_nccl_is_refused_clearly_without_gpu():
    assert not dist.is_nccl_available()
    with pytest.raises(RuntimeError, match="GPU|NCCL"):
        dist.init_process_group("nccl")
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.init_process_group("tcp")


def test_reduce_op_names():
    assert {op.name for op in dist.ReduceOp} >= {"SUM", "AVG", "MAX", "MIN", "PRODUCT"}


def test_sampler_partitions_the_dataset():
    data = list(range(10))
    parts = [list(DistributedSampler(data, num_replicas=3, rank=r, shuffle=False)) for r in range(3)]
    assert parts == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    assert sorted(i for p in parts for i in p[:3]) == list(range(9))
    dropped = [list(DistributedSampler(data, num_replicas=3, rank=r, shuffle=False, drop_last=True))
               for r in range(3)]
    assert dropped == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    with pytest.raises(ValueError, match="Invalid rank 3"):
        DistributedSampler(data, num_replicas=3, rank=3)


def test_sampler_indices_equal_pytorchs():
    torch_ = pytest.importorskip("torch")
    from torch.utils.data.distributed import DistributedSampler as TorchSampler

    for n in (1, 7, 23):
        for kwargs in ({}, {"drop_last": True}, {"shuffle": False}, {"seed": 5}):
            for rank in range(3):
                ours, theirs = DistributedSampler(range(n), 3, rank, **kwargs), TorchSampler(range(n), 3, rank,
                                                                                             **kwargs)
                for epoch in range(3):
                    ours.set_epoch(epoch)
                    theirs.set_epoch(epoch)
                    assert list(ours) == list(theirs) and len(ours) == len(theirs), (n, kwargs, rank, epoch)
    assert torch_ is not None


def test_sync_batch_norm_without_a_process_group_is_batch_norm():
    """Without a group to synchronize with (or in eval mode) SyncBatchNorm is BatchNorm; the 2-process test in
    test_distributed.py checks the synchronized statistics and gradients."""
    torch.manual_seed(0)
    x = torch.randn(4, 3, 5, dtype=torch.float64)
    sync, plain = torch.nn.SyncBatchNorm(3).double(), torch.nn.BatchNorm1d(3).double()
    assert torch.allclose(sync(x), plain(x)) and torch.allclose(sync.running_var, plain.running_var)
    with pytest.raises(ValueError, match="expected at least 2D input"):
        sync(torch.ones(3))
    with pytest.raises(ValueError, match="number of input channels should be non-zero"):
        torch.nn.SyncBatchNorm(0)(torch.ones(2, 0))
    model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Sequential(torch.nn.BatchNorm1d(3)))
    model[1][0].running_mean.fill_(0.5)
    converted = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert type(converted[1][0]) is torch.nn.SyncBatchNorm and converted[1][0].weight is model[1][0].weight
    assert converted[1][0].running_mean.tolist() == [0.5] * 3
    assert torch.nn.modules.batchnorm.SyncBatchNorm is torch.nn.SyncBatchNorm


def test_default_backend_for_device():
    assert dist.get_default_backend_for_device("cpu") == "gloo"
    assert dist.get_default_backend_for_device(torch.device("cuda:0")) == "nccl"
    with pytest.raises(ValueError, match="Default backend not registered for device : meta"):
        dist.get_default_backend_for_device("meta")


def _exercise(store, error=dist.DistStoreError) -> None:
    """The Store API as PyTorch's stores behave (bytes values, add on strings of digits, compare_set's rules)."""
    store.set("a", "1")
    store.set("b", b"\x00\xff")
    assert store.get("a") == b"1" and store.get("b") == b"\x00\xff"
    assert store.add("n", 2) == 2 and store.add("n", 3) == 5 and store.get("n") == b"5"
    assert store.compare_set("a", "1", "2") == b"2" and store.get("a") == b"2"
    assert store.compare_set("a", "x", "3") == b"2"
    assert store.compare_set("new", "", "v") == b"v" and store.compare_set("absent", "e", "v") == b"e"
    assert store.check(["a", "n"]) and not store.check(["a", "zzz"])
    assert store.num_keys() >= 4
    assert store.delete_key("a") and not store.check(["a"])
    if "FileStore" not in type(store).__name__:  # PyTorch's FileStore says True again (docs/differences.md)
        assert not store.delete_key("a")
    store.wait(["b"])
    with pytest.raises(error, match="(?i)timeout"):
        store.wait(["never"], datetime.timedelta(milliseconds=50))
    store.set_timeout(datetime.timedelta(milliseconds=50))
    with pytest.raises(error, match="(?i)timeout"):
        store.get("never")
    assert issubclass(error, RuntimeError)


def test_stores(tmp_path, monkeypatch):
    _exercise(dist.HashStore())
    _exercise(dist.FileStore(str(tmp_path / "file_store"), 1))
    master = dist.TCPStore("127.0.0.1", 0, 2, True, wait_for_workers=False)
    client = dist.TCPStore("127.0.0.1", master.port, 2, False)
    _exercise(client)
    assert master.get("n") == b"5" and int(master.get("init/")) == 2  # one table behind both
    prefixed = dist.PrefixStore("job", master)
    _exercise(prefixed)
    assert master.get("job/n") == b"5"
    with pytest.raises(dist.DistNetworkError, match="failed to listen"):
        dist.TCPStore("127.0.0.1", master.port, is_master=True)
    with pytest.raises(AssertionError, match="Cannot specify both init_method and store"):
        dist.init_process_group("gloo", init_method="env://", store=master, rank=0, world_size=1)
    with pytest.raises(ValueError, match="tcp:// rendezvous: rank parameter missing"):
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:1", world_size=2)
    monkeypatch.delenv("MASTER_ADDR", raising=False)
    with pytest.raises(ValueError, match="env:// rendezvous: environment variable MASTER_ADDR expected"):
        dist.init_process_group("gloo", rank=1, world_size=2)


def test_stores_behave_like_pytorchs(tmp_path):
    torch_ = pytest.importorskip("torch")
    error = torch_.distributed.DistStoreError
    _exercise(torch_.distributed.HashStore(), error)
    _exercise(torch_.distributed.FileStore(str(tmp_path / "torch_file_store"), 1), RuntimeError)  # no subclass
    _exercise(torch_.distributed.TCPStore("127.0.0.1", 0, 1, True), error)


def test_reduce_op_is_pytorchs_deprecated_alias():
    with pytest.warns(FutureWarning, match="reduce_op` is deprecated"):
        assert dist.reduce_op.SUM is dist.ReduceOp.SUM


def test_as_torch_makes_import_torch_minitorch(tmp_path):
    """``python -m minitorch.as_torch script.py``: torch and its submodules are minitorch's modules."""
    script = tmp_path / "uses_torch.py"
    script.write_text("import sys\nimport torch\nimport torch.nn.functional as F\nimport torch.distributed as d\n"
                      "import minitorch\n"
                      "assert torch is minitorch and F is minitorch.nn.functional and d is minitorch.distributed\n"
                      "from torch.nn.parallel import DistributedDataParallel\n"
                      "try:\n    import torch.no_such_module\nexcept ModuleNotFoundError:\n    print('missing ok')\n"
                      "print('args', sys.argv[1:], F.relu(torch.tensor([-1.0, 2.0])).tolist())\n")
    root = str(Path(__file__).resolve().parent.parent)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-m", "minitorch.as_torch", str(script), "x"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "missing ok" in done.stdout and "args ['x'] [0.0, 2.0]" in done.stdout
