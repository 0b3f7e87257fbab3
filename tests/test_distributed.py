"""minitorch.distributed with 2 real processes (mpiexec from the mpich wheel); skipped without mpi4py.

Each test starts tests/distributed/worker.py on 2 ranks with a timeout; the worker compares every result with
the single-process computation and fails the job on a difference.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mpi4py")

from minitorch.distributed.run import find_mpiexec  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
WORKER = str(ROOT / "tests" / "distributed" / "worker.py")


def _run(command: list[str]) -> str:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
               OMP_NUM_THREADS="1")
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _mpiexec(scenario: str) -> str:
    return _run([find_mpiexec(), "-n", "2", sys.executable, WORKER, scenario])


def test_collectives_match_single_process():
    out = _mpiexec("collectives")
    assert "OK collectives rank 0" in out and "OK collectives rank 1" in out


def test_ddp_equals_single_process_training_with_no_sync_accumulation():
    out = _mpiexec("ddp")
    assert "OK ddp rank 0" in out and "OK ddp rank 1" in out


def test_sync_batch_norm_equals_batch_norm_on_the_whole_batch():
    out = _mpiexec("syncbn")
    assert "OK syncbn rank 0" in out and "OK syncbn rank 1" in out


def test_a_rank_that_never_joins_times_out_instead_of_hanging():
    assert "TIMEOUT-RAISED" in _mpiexec("timeout")


def test_launcher_sets_torchrun_variables():
    out = _run([sys.executable, "-m", "minitorch.distributed.run", "--nproc-per-node", "2", WORKER, "launcher"])
    assert "OK launcher rank 0" in out and "OK launcher rank 1" in out


def test_single_process_group_without_mpiexec():
    code = ("import minitorch as torch, minitorch.distributed as dist\n"
            "dist.init_process_group('gloo', rank=0, world_size=1)\n"
            "t = torch.ones(3); dist.all_reduce(t, op=dist.ReduceOp.AVG); assert t.tolist() == [1.0] * 3\n"
            "assert dist.get_rank() == 0 and dist.get_world_size() == 1 and dist.get_backend() == 'gloo'\n"
            "try:\n    dist.init_process_group('gloo')\nexcept ValueError as e:\n    print('twice:', e)\n"
            "dist.destroy_process_group(); assert not dist.is_initialized()\n"
            "try:\n    dist.init_process_group('gloo', rank=0, world_size=2)\nexcept RuntimeError as e:\n"
            "    print('unjoinable:', e)\n")
    out = _run([sys.executable, "-c", code])
    assert "twice: trying to initialize the default process group twice!" in out
    assert "unjoinable:" in out and "MPI can be initialised only once per process" in out
