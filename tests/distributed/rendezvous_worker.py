"""Processes that were not started by mpiexec form one world (tests/test_distributed.py).

``python rendezvous_worker.py HOW NPROCS PORT_OR_FILE`` starts NPROCS processes the way HOW says (each is an
MPI singleton until init_process_group joins them) and runs worker.py's checks against single-process results:

- ``spawn-env``: minitorch.multiprocessing.spawn; MASTER_ADDR/MASTER_PORT set inside, env:// (PyTorch's tutorial)
- ``process-tcp``: multiprocessing.Process with init_method="tcp://127.0.0.1:PORT"
- ``spawn-file``: init_method="file://PATH"
- ``spawn-store``: store=TCPStore(...) made by each process (rank 0 serves it)
- ``timeout``: a world of NPROCS + 1 ranks of which one never starts: every started rank must fail in time
"""

import datetime
import multiprocessing
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import worker  # noqa: E402 - tests/distributed/worker.py: the checks against one process

import minitorch.distributed as dist  # noqa: E402
import minitorch.multiprocessing as mp  # noqa: E402


def run(rank: int, how: str, n: int, where: str) -> None:
    timeout = datetime.timedelta(seconds=60)
    if how == "spawn-env":
        os.environ["MASTER_ADDR"] = "localhost"
        os.environ["MASTER_PORT"] = where
        dist.init_process_group("gloo", rank=rank, world_size=n, timeout=timeout)
    elif how == "process-tcp":
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{where}", rank=rank, world_size=n,
                                timeout=timeout)
    elif how == "spawn-file":
        dist.init_process_group("gloo", init_method=f"file://{where}", rank=rank, world_size=n, timeout=timeout)
    elif how == "spawn-store":
        store = dist.TCPStore("127.0.0.1", int(where), n, rank == 0, timeout=timeout)
        dist.init_process_group("gloo", store=store, rank=rank, world_size=n, timeout=timeout)
    elif how == "timeout":
        os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", where
        try:
            dist.init_process_group("gloo", rank=rank, world_size=n + 1, timeout=datetime.timedelta(seconds=3))
        except RuntimeError as error:
            print(f"TIMEOUT-RAISED rank {rank}: {error}", flush=True)
            return
        raise AssertionError("init_process_group returned although a rank never joined")
    assert dist.get_rank() == rank and dist.get_world_size() == n, (dist.get_rank(), dist.get_world_size())
    if n == 2:
        worker.collectives(rank, n)
    worker.ddp(rank, n)
    dist.destroy_process_group()
    print(f"OK {how} rank {rank}", flush=True)


def _process(rank: int, how: str, n: int, where: str) -> None:
    try:
        run(rank, how, n, where)
    except BaseException:
        traceback.print_exc()
        sys.exit(1)


if __name__ == "__main__":
    how, n, where = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if how == "process-tcp":
        context = multiprocessing.get_context("spawn")
        processes = [context.Process(target=_process, args=(r, how, n, where)) for r in range(n)]
        for p in processes:
            p.start()
        for p in processes:
            p.join()
        sys.exit(max(p.exitcode for p in processes))
    mp.spawn(run, args=(how, n, where), nprocs=n)
