"""minitorch.distributed without MPI: the API is importable, and refuses clearly before init_process_group."""

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
