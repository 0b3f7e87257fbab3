"""mlp_step on 2 processes: DistributedDataParallel (MPI) against one process, same global batch.

    python -m benchmarks.distributed_scaling            # needs the distributed extra (mpi4py, mpich)

The model and batch are mlp_step's (MLP 784-512-512-10, float32, global batch 256, SGD). One process trains
on the whole batch; then 2 processes (mpiexec) each train a DDP replica on half of it, so each step does the
same work in total. Both use one BLAS thread per process. Reported: the median step time of each and the
speed-up (ideal: 2x on 2 free cores; the gradients' all-reduce, 2.6 MB per step, is the overhead).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import minitorch

STEPS, WARMUP = 30, 5


def train(rank: int, world: int, ddp: bool) -> dict:
    rng = np.random.default_rng(0)
    x = minitorch.tensor(rng.standard_normal((256, 784)).astype(np.float32))
    y = minitorch.tensor(rng.integers(0, 10, 256))
    mine = slice(rank * 256 // world, (rank + 1) * 256 // world)
    minitorch.manual_seed(0)
    nn = minitorch.nn
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
    if ddp:
        model = nn.parallel.DistributedDataParallel(model)
    opt = minitorch.optim.SGD(model.parameters(), lr=0.01)
    times = []
    for step in range(WARMUP + STEPS):
        start = time.perf_counter()
        opt.zero_grad()
        nn.functional.cross_entropy(model(x[mine]), y[mine]).backward()
        opt.step()
        if step >= WARMUP:
            times.append(time.perf_counter() - start)
    return {"median_ms": 1e3 * statistics.median(times)}


def worker() -> None:
    import minitorch.distributed as dist

    dist.init_process_group("gloo")
    result = train(dist.get_rank(), dist.get_world_size(), ddp=True)
    if dist.get_rank() == 0:
        print("RESULT " + json.dumps(result), flush=True)
    dist.destroy_process_group()


def main() -> None:
    from minitorch.distributed.run import find_mpiexec

    minitorch.set_num_threads(1)
    one = train(0, 1, ddp=False)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(Path(__file__).resolve().parent.parent),
                                                        os.environ.get("PYTHONPATH")])))
    done = subprocess.run([find_mpiexec(), "-n", "2", sys.executable, "-m", "benchmarks.distributed_scaling",
                           "--worker"], capture_output=True, text=True, env=env, timeout=600)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode or not lines:
        raise SystemExit(f"the 2-process run failed:\n{done.stdout}\n{done.stderr}")
    two = json.loads(lines[0][len("RESULT "):])
    print(f"mlp_step, global batch 256, float32, {os.cpu_count()} cores, 1 BLAS thread per process")
    print(f"{'processes':<12}{'step ms':>10}{'speed-up':>10}")
    print(f"{1:<12}{one['median_ms']:>10.2f}{1.0:>10.2f}")
    print(f"{2:<12}{two['median_ms']:>10.2f}{one['median_ms'] / two['median_ms']:>10.2f}")


if __name__ == "__main__":
    if "--worker" in sys.argv:
        minitorch.set_num_threads(1)
        worker()
    else:
        main()
