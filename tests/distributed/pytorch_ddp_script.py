"""A CPU DDP training program written for PyTorch (``import torch`` only), started the ways PyTorch's tutorials
start one: ``python pytorch_ddp_script.py NPROCS PORT`` runs ``torch.multiprocessing.spawn`` with MASTER_ADDR and
MASTER_PORT set inside the spawned function and ``init_process_group("gloo", rank=rank, world_size=...)``
(the DDP tutorial's ``setup``); under torchrun (or ``minitorch.distributed.run``), RANK in the environment,
it calls ``init_process_group("gloo")`` (env://). tests/test_distributed.py runs it with real PyTorch and, unchanged,
on minitorch (``python -m minitorch.as_torch``, the launcher's ``--as-torch``) and compares the printed numbers.

Each rank trains the tutorial's ToyModel on its share of one fixed batch of 40 samples, so the averaged loss and
the final parameters do not depend on the number of processes (DDP averages the gradients).
"""

import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.optim as optim
from torch.nn.parallel import DistributedDataParallel as DDP


class ToyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net1 = nn.Linear(10, 10)
        self.relu = nn.ReLU()
        self.net2 = nn.Linear(10, 5)

    def forward(self, x):
        return self.net2(self.relu(self.net1(x)))


def train(rank, world_size):
    torch.manual_seed(0)
    model = ToyModel()
    ddp_model = DDP(model)
    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.1)
    torch.manual_seed(1)
    inputs, labels = torch.randn(40, 10), torch.randn(40, 5)
    share = 40 // world_size
    mine = slice(rank * share, (rank + 1) * share)
    for step in range(5):
        optimizer.zero_grad()
        loss = loss_fn(ddp_model(inputs[mine]), labels[mine])
        loss.backward()
        optimizer.step()
        total = loss.detach().clone()
        dist.all_reduce(total, op=dist.ReduceOp.SUM)
        if rank == 0:
            print(f"step {step} loss {total.item() / world_size:.6f}", flush=True)
    if rank == 0:
        print("params " + " ".join(f"{p.sum().item():.6f}" for p in model.parameters()), flush=True)
        print(f"world_size {dist.get_world_size()} backend {dist.get_backend()}", flush=True)


def demo_basic(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = port
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    train(rank, world_size)
    dist.destroy_process_group()


if __name__ == "__main__":
    if "RANK" in os.environ:
        dist.init_process_group("gloo")
        train(dist.get_rank(), dist.get_world_size())
        dist.destroy_process_group()
    else:
        world_size, port = int(sys.argv[1]), sys.argv[2]
        mp.spawn(demo_basic, args=(world_size, port), nprocs=world_size, join=True)
