"""One rank of the 2-process tests in tests/test_distributed.py (started by mpiexec or the launcher).

Each scenario checks the distributed result against the same computation done in one process, and raises
(a non-zero exit, which mpiexec turns into the job's failure) on any difference.
"""

import datetime
import os
import sys
import time

import minitorch as torch
import minitorch.distributed as dist
from minitorch.nn.parallel import DistributedDataParallel as DDP


def data(rank: int, shape=(2, 3), dtype=torch.float64):
    return (torch.arange(6, dtype=dtype).reshape(shape) + 1) * (rank + 2)


def check(got, want, what):
    if not torch.equal(got, want) and not torch.allclose(got, want, rtol=1e-12, atol=0):
        raise AssertionError(f"{what}: got {got}, want {want}")


def collectives(rank: int, n: int) -> None:
    everyone = [data(r) for r in range(n)]
    for op, want in [(dist.ReduceOp.SUM, sum(everyone)), (dist.ReduceOp.AVG, sum(everyone) / n),
                     (dist.ReduceOp.MAX, torch.stack(everyone).amax(0)),
                     (dist.ReduceOp.MIN, torch.stack(everyone).amin(0)),
                     (dist.ReduceOp.PRODUCT, torch.stack(everyone).prod(0))]:
        t = data(rank)
        dist.all_reduce(t, op=op)
        check(t, want, f"all_reduce {op}")
    t = data(rank, (3, 2)).t()  # non-contiguous: reduced in a copy, written back
    dist.all_reduce(t)
    check(t, sum(data(r, (3, 2)).t() for r in range(n)), "all_reduce non-contiguous")
    ints = torch.tensor([rank + 1, 10 * (rank + 1)])
    dist.all_reduce(ints, op=dist.ReduceOp.MAX)
    check(ints, torch.tensor([n, 10 * n]), "all_reduce int64 MAX")
    t = data(rank)
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    check(t, sum(everyone), "all_reduce async")
    t = data(rank)
    dist.broadcast(t, src=1)
    check(t, data(1), "broadcast")
    out = [torch.zeros(2, 3, dtype=torch.float64) for _ in range(n)]
    dist.all_gather(out, data(rank))
    for r in range(n):
        check(out[r], data(r), "all_gather")
    big = torch.zeros(2 * n, 3, dtype=torch.float64)
    dist.all_gather_into_tensor(big, data(rank))
    check(big, torch.cat(everyone), "all_gather_into_tensor")
    stacked = torch.zeros(n, 2, 3, dtype=torch.float64)
    dist.all_gather_into_tensor(stacked, data(rank))
    check(stacked, torch.stack(everyone), "all_gather_into_tensor stacked")
    out = torch.zeros(2, 3, dtype=torch.float64)
    dist.reduce_scatter(out, [data(rank) * (k + 1) for k in range(n)])
    check(out, sum(data(r) * (rank + 1) for r in range(n)), "reduce_scatter")
    out = torch.zeros(3, dtype=torch.float64)
    dist.reduce_scatter_tensor(out, torch.cat([d.reshape(-1) for d in [data(rank)] * 1]), op=dist.ReduceOp.AVG)
    check(out, (sum(everyone) / n).reshape(-1)[3 * rank:3 * rank + 3], "reduce_scatter_tensor AVG")
    t = data(rank)
    dist.reduce(t, dst=1)
    check(t, sum(everyone) if rank == 1 else data(rank), "reduce")
    gathered = [torch.zeros(2, 3, dtype=torch.float64) for _ in range(n)] if rank == 0 else None
    dist.gather(data(rank), gathered, dst=0)
    if rank == 0:
        for r in range(n):
            check(gathered[r], data(r), "gather")
    t = torch.zeros(2, 3, dtype=torch.float64)
    dist.scatter(t, [data(10 + r) for r in range(n)] if rank == 1 else None, src=1)
    check(t, data(10 + rank), "scatter")
    if rank == 0:
        dist.send(data(7), dst=1)
        t = torch.zeros(2, 3, dtype=torch.float64)
        if dist.recv(t) != 1:
            raise AssertionError("recv: wrong sender")
        check(t, data(8), "recv on 0")
    else:
        t = torch.zeros(2, 3, dtype=torch.float64)
        if dist.recv(t, src=0) != 0:
            raise AssertionError("recv: wrong sender")
        check(t, data(7), "recv on 1")
        dist.isend(data(8), dst=0).wait()
    dist.barrier()
    objects = [{"rank": rank}, "x"] if rank == 0 else [None, None]
    dist.broadcast_object_list(objects, src=0)
    if objects != [{"rank": 0}, "x"]:
        raise AssertionError(f"broadcast_object_list: {objects}")
    gathered = [None] * n
    dist.all_gather_object(gathered, ("r", rank))
    if gathered != [("r", r) for r in range(n)]:
        raise AssertionError(f"all_gather_object: {gathered}")
    solo = dist.new_group([1])
    t = data(rank)
    dist.all_reduce(t, group=solo)
    check(t, data(rank), "all_reduce on a new_group")
    if dist.get_rank(solo) != (0 if rank == 1 else -1):
        raise AssertionError("get_rank(new_group)")
    try:
        dist.all_reduce(torch.zeros(rank + 1))
    except RuntimeError as error:
        if "differ in shape" not in str(error):
            raise
    else:
        raise AssertionError("all_reduce accepted tensors of different shapes")


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)).double()


def ddp(rank: int, n: int) -> None:
    steps, accumulate = 3, 2
    torch.manual_seed(1234)
    batches = [(torch.randn(4 * n, 4, dtype=torch.float64), torch.randn(4 * n, 2, dtype=torch.float64))
               for _ in range(steps * accumulate)]
    torch.manual_seed(100 + rank)  # different local weights: DDP must broadcast rank 0's
    local = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)).double()
    if rank == 0:
        local.load_state_dict(make_model().state_dict())
    model = DDP(local, bucket_cap_mb=200 / 2**20)  # small buckets: several all-reduces per step
    if len(model._buckets) < 2:
        raise AssertionError("expected several buckets")
    reference = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    loss_fn = torch.nn.MSELoss()
    for step in range(steps):
        opt.zero_grad()
        ref_opt.zero_grad()
        for k in range(accumulate):
            x, y = batches[step * accumulate + k]
            loss_fn(reference(x), y).backward()
            mine = slice(4 * rank, 4 * rank + 4)
            if k < accumulate - 1:
                with model.no_sync():
                    loss_fn(model(x[mine]), y[mine]).backward()
            else:
                loss_fn(model(x[mine]), y[mine]).backward()
        opt.step()
        ref_opt.step()
    for (name, p), q in zip(model.module.named_parameters(), reference.parameters()):
        if not torch.allclose(p, q, rtol=1e-10, atol=1e-12):
            raise AssertionError(f"DDP parameter {name} differs from single-process training")
        copies = [torch.zeros_like(p) for _ in range(n)]
        dist.all_gather(copies, p.detach())
        if not all(torch.equal(c, copies[0]) for c in copies):
            raise AssertionError(f"DDP parameter {name} differs between ranks")
    if not list(model.state_dict())[0].startswith("module."):
        raise AssertionError("state_dict keys lack the module. prefix")


def syncbn(rank: int, n: int) -> None:
    """SyncBatchNorm on each rank's part of a batch equals BatchNorm on the whole batch: outputs, input gradients,
    the summed weight gradients and the running statistics; DDP training with it equals one process."""
    torch.manual_seed(7)
    x = torch.randn(3 * n, 4, 2, 2, dtype=torch.float64) * 3 + 1
    w = torch.randn(3 * n, 4, 2, 2, dtype=torch.float64)
    mine = slice(3 * rank, 3 * rank + 3)
    full = torch.nn.BatchNorm2d(4).double()
    sync = torch.nn.SyncBatchNorm(4).double()
    with torch.no_grad():
        for m in (full, sync):
            m.weight.copy_(torch.linspace(0.5, 2, 4))
            m.bias.copy_(torch.linspace(-1, 1, 4))
    xf, xs = x.clone().requires_grad_(), x[mine].clone().requires_grad_()
    yf, ys = full(xf), sync(xs)
    check(ys, yf[mine], "SyncBatchNorm output")
    (yf * w).sum().backward()
    (ys * w[mine]).sum().backward()
    check(xs.grad, xf.grad[mine], "SyncBatchNorm input gradient")
    for name in ("weight", "bias"):
        g = getattr(sync, name).grad.clone()
        dist.all_reduce(g)
        check(g, getattr(full, name).grad, f"SyncBatchNorm {name} gradient summed over ranks")
    check(sync.running_mean, full.running_mean, "running_mean")
    check(sync.running_var, full.running_var, "running_var")
    sync.eval()
    check(sync(xs.detach()), full.eval()(x[mine]), "SyncBatchNorm in eval mode")

    # the differentiable collectives: every rank's loss reads every rank's input
    import minitorch.distributed.nn.functional as dist_nn
    a = data(rank).requires_grad_()
    gathered = dist_nn.all_gather(a)
    (sum(g * (k + 1) for k, g in enumerate(gathered)) * (rank + 1)).sum().backward()
    check(a.grad, torch.full((2, 3), float((rank + 1) * sum(r + 1 for r in range(n))), dtype=torch.float64),
          "distributed.nn all_gather gradient")
    b = data(rank).requires_grad_()
    (dist_nn.broadcast(b, src=1) * (rank + 1)).sum().backward()
    check(b.grad, torch.full((2, 3), float(sum(r + 1 for r in range(n)) if rank == 1 else 0), dtype=torch.float64),
          "distributed.nn broadcast gradient")

    def net():
        torch.manual_seed(3)
        return torch.nn.Sequential(torch.nn.Conv2d(4, 3, 1), torch.nn.BatchNorm2d(3), torch.nn.ReLU(),
                                   torch.nn.Flatten(), torch.nn.Linear(12, 2)).double()
    reference = net()
    model = DDP(torch.nn.SyncBatchNorm.convert_sync_batchnorm(net()))
    opt, ref_opt = (torch.optim.SGD(m.parameters(), lr=0.1) for m in (model, reference))
    target = torch.randn(3 * n, 2, dtype=torch.float64)
    for _ in range(3):
        for o in (opt, ref_opt):
            o.zero_grad()
        torch.nn.functional.mse_loss(reference(x), target).backward()
        torch.nn.functional.mse_loss(model(x[mine]), target[mine]).backward()
        opt.step()
        ref_opt.step()
    for (name, p), q in zip(model.module.state_dict().items(), reference.state_dict().values()):
        if not torch.allclose(p.double(), q.double(), rtol=1e-10, atol=1e-12):
            raise AssertionError(f"DDP + SyncBatchNorm: {name} differs from single-process training")


def timeout(rank: int, n: int) -> None:
    """Rank 1 never calls the collective: rank 0 must fail within its timeout, not hang."""
    if rank == 0:
        try:
            dist.all_reduce(torch.ones(3))
        except RuntimeError as error:
            if "timed out" not in str(error):
                raise
            print("TIMEOUT-RAISED", flush=True)
            os._exit(0)  # the pending collective cannot be cancelled: skip MPI_Finalize
        raise AssertionError("all_reduce returned although rank 1 never joined")
    time.sleep(8)  # stay alive past rank 0's timeout (mpiexec would end the job when a rank leaves)
    os._exit(0)


def launcher(rank: int, n: int) -> None:
    env = {k: os.environ.get(k) for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR")}
    if env["RANK"] != str(rank) or env["LOCAL_RANK"] != str(rank) or env["WORLD_SIZE"] != str(n):
        raise AssertionError(f"torchrun variables: {env}")


if __name__ == "__main__":
    scenario = sys.argv[1]
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=3 if scenario == "timeout" else 60))
    rank, n = dist.get_rank(), dist.get_world_size()
    globals()[scenario](rank, n)
    dist.destroy_process_group()
    print(f"OK {scenario} rank {rank}", flush=True)
