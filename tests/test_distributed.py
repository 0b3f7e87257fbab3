"""minitorch.distributed with 2 real processes (mpiexec from the mpich wheel); skipped without mpi4py.

Each test starts tests/distributed/worker.py on 2 ranks with a timeout; the worker compares every result with
the single-process computation and fails the job on a difference. The tests at the end start the processes
without mpiexec (mp.spawn, multiprocessing.Process, by hand) and run a PyTorch script unchanged.
"""

import importlib.util
import os
import socket
import subprocess
import sys
import time
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


# Processes that mpiexec did not start: they meet in a store and become one MPI world (rendezvous.py).

RENDEZVOUS = str(ROOT / "tests" / "distributed" / "rendezvous_worker.py")
SCRIPT = str(ROOT / "tests" / "distributed" / "pytorch_ddp_script.py")


def _free_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


@pytest.mark.parametrize("how,n", [("spawn-env", 2), ("process-tcp", 2), ("spawn-store", 3)])
def test_independently_started_processes_form_a_world(how, n):
    """mp.spawn with MASTER_ADDR/MASTER_PORT, multiprocessing.Process with tcp://, a TCPStore passed in: the
    collectives and DDP training equal the single-process results (worker.py's checks)."""
    out = _run([sys.executable, RENDEZVOUS, how, str(n), _free_port()])
    assert all(f"OK {how} rank {r}" in out for r in range(n)), out


def test_file_init_method_and_its_file_serves_the_next_job(tmp_path):
    """The rendezvous deletes its keys once the world stands, so a second job can use the same file."""
    for _ in range(2):
        out = _run([sys.executable, RENDEZVOUS, "spawn-file", "2", str(tmp_path / "store")])
        assert "OK spawn-file rank 0" in out and "OK spawn-file rank 1" in out


def test_a_rank_that_never_joins_the_rendezvous_makes_the_others_fail_in_time():
    start = time.monotonic()
    out = _run([sys.executable, RENDEZVOUS, "timeout", "2", _free_port()])
    assert "TIMEOUT-RAISED rank 0" in out and "TIMEOUT-RAISED rank 1" in out, out
    assert "never joined: [2] of 3" in out and time.monotonic() - start < 60


def _numbers(out: str) -> list[float]:
    return [float(w) for line in out.splitlines() if line.startswith(("step", "params")) for w in line.split()[1:]
            if w not in ("loss",)]


def test_a_pytorch_ddp_script_runs_unchanged():
    """pytorch_ddp_script.py imports torch only. On minitorch (minitorch.as_torch; the launcher's --as-torch) it
    trains to the same losses and parameters whether started by mp.spawn, by the launcher, by hand with
    RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, or as one process, and equal to real PyTorch's when installed."""
    one = _run([sys.executable, "-m", "minitorch.as_torch", SCRIPT, "1", _free_port()])
    spawned = _run([sys.executable, "-m", "minitorch.as_torch", SCRIPT, "2", _free_port()])
    launched = _run([sys.executable, "-m", "minitorch.distributed.run", "--as-torch", "--nproc-per-node", "2",
                     SCRIPT])
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
               OMP_NUM_THREADS="1", MASTER_ADDR="127.0.0.1", MASTER_PORT=port, WORLD_SIZE="2")
    by_hand = [subprocess.Popen([sys.executable, "-m", "minitorch.as_torch", SCRIPT], env=dict(env, RANK=str(r)),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT) for r in (1, 0)]
    outputs = [p.communicate(timeout=120) for p in by_hand]
    assert all(p.returncode == 0 for p in by_hand), outputs
    manual = outputs[1][0]
    assert "world_size 1 backend gloo" in one and "world_size 2 backend gloo" in spawned
    assert "world_size 2 backend gloo" in launched and "world_size 2 backend gloo" in manual
    reference = _numbers(one)
    assert len(reference) == 14  # 5 x (step, loss) and 4 parameter sums
    for out in (spawned, launched, manual):
        assert _numbers(out) == pytest.approx(reference, rel=1e-5, abs=2e-6)
    if importlib.util.find_spec("torch") is not None:  # the oracle: the same script on real PyTorch
        env = dict(os.environ, OMP_NUM_THREADS="1")
        for _ in range(2):  # a second port if another program took the first between _free_port and the bind
            done = subprocess.run([sys.executable, SCRIPT, "2", _free_port()], capture_output=True, text=True,
                                  timeout=180, env=env, cwd=ROOT)
            if done.returncode == 0:
                break
        assert done.returncode == 0, done.stderr
        assert _numbers(done.stdout) == pytest.approx(reference, rel=1e-5, abs=2e-6)
