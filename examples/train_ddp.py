"""Data-parallel training with DistributedDataParallel, written as a PyTorch DDP script.

    pip install -e ".[distributed]"
    python -m minitorch.distributed.run --nproc-per-node 2 examples/train_ddp.py
    mpiexec -n 2 python examples/train_ddp.py        # the same, with MPI's launcher
    python examples/train_ddp.py                     # one process (a world of size 1)

Each rank reads its share of a synthetic regression set (DistributedSampler), DDP averages the gradients, and
every rank ends with the same weights; rank 0 prints the loss.
"""

from __future__ import annotations

import contextlib
import os

import _common  # examples/_common.py: the shared flags

import minitorch as torch
import minitorch.distributed as dist
from minitorch.nn.parallel import DistributedDataParallel as DDP
from minitorch.utils.data import DataLoader, TensorDataset
from minitorch.utils.data.distributed import DistributedSampler


def main(argv: list[str] | None = None) -> list[float]:
    parser = _common.base_parser(__doc__.splitlines()[0], epochs=5, lr=0.05, batch_size=32)
    parser.add_argument("--accumulate", type=int, default=1, help="micro-batches per step (no_sync)")
    args = parser.parse_args(argv)
    if torch.device(args.device).type != "cpu":
        parser.error("the MPI backend moves CPU tensors; NCCL (CUDA) is not implemented yet (docs/distributed.md)")

    dist.init_process_group(backend="gloo")  # RANK/WORLD_SIZE from the launcher, or MPI's ranks
    rank, world = dist.get_rank(), dist.get_world_size()

    torch.manual_seed(args.seed)  # the same data on every rank; the sampler splits it
    x = torch.randn(1024, 8)
    y = x @ torch.randn(8, 1) + 0.1 * torch.randn(1024, 1)
    dataset = TensorDataset(x, y)
    sampler = DistributedSampler(dataset, shuffle=True, seed=args.seed)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)

    torch.manual_seed(args.seed + rank)  # different initial weights: DDP broadcasts rank 0's
    model = DDP(torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    loss_fn = torch.nn.MSELoss()
    losses, steps = [], 0
    for epoch in range(args.epochs):
        if args.max_steps is not None and steps >= args.max_steps:
            break  # every rank has as many batches, so every rank stops at the same step
        sampler.set_epoch(epoch)  # a new shuffle each epoch, the same on every rank
        total = torch.zeros(2)
        for i, (xb, yb) in enumerate(loader):
            if args.max_steps is not None and steps >= args.max_steps:
                break
            last = (i + 1) % args.accumulate == 0
            with model.no_sync() if not last else contextlib.nullcontext():
                loss = loss_fn(model(xb), yb)
                (loss / args.accumulate).backward()
            if last:
                optimizer.step()
                optimizer.zero_grad()
                steps += 1
            total += torch.tensor([loss.item() * len(xb), len(xb)])
        dist.all_reduce(total)  # the epoch's mean loss over all ranks
        losses.append((total[0] / total[1]).item())
        if rank == 0:  # plain log lines from rank 0 (there is no progress bar to turn off with --no-progress)
            print(f"epoch {epoch}: loss {losses[-1]:.4f} ({world} process(es), pid {os.getpid()})")
    if rank == 0:
        args.out_dir.mkdir(parents=True, exist_ok=True)
        torch.save(model.module.state_dict(), args.out_dir / "train_ddp.pt")  # without DDP's "module." prefix
        _common.save_loss_curve(losses, args.out_dir / "train_ddp_loss.png", "DDP training loss")
        _common.log_to_tensorboard(args.tensorboard, losses, args, {"final_loss": losses[-1]})
    dist.destroy_process_group()
    return losses


if __name__ == "__main__":
    main()
