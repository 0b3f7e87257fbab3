"""``python -m minitorch.distributed.run --nproc-per-node N train.py [args]``: torchrun for one machine, on MPI.

It starts the N processes with the ``mpiexec`` that the mpich wheel installs (found next to the Python
interpreter or on PATH), each with torchrun's environment: RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
GROUP_RANK, ROLE_RANK, ROLE_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID. Its exit status is
the job's: if a process fails, mpiexec ends the others. With ``--as-torch`` the script's ``import torch`` (and
that of the processes it starts) gives minitorch (minitorch.as_torch), so a PyTorch program runs unchanged.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

from .. import as_torch

__all__ = ["main", "get_args_parser", "find_mpiexec"]


def get_args_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m minitorch.distributed.run",
                                     description="Start N processes of a training script on this machine (MPI).")
    parser.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1)
    parser.add_argument("--nnodes", type=str, default="1")
    parser.add_argument("--node-rank", "--node_rank", type=int, default=0)
    parser.add_argument("--master-addr", "--master_addr", default="127.0.0.1")
    parser.add_argument("--master-port", "--master_port", type=int, default=29500)
    parser.add_argument("--standalone", action="store_true")
    parser.add_argument("--rdzv-id", "--rdzv_id", default=None)
    parser.add_argument("-m", "--module", action="store_true", help="run the script as a module (python -m)")
    parser.add_argument("--no-python", "--no_python", action="store_true")
    parser.add_argument("--as-torch", "--as_torch", action="store_true",
                        help="run a PyTorch script unchanged: its `import torch` gives minitorch")
    parser.add_argument("training_script")
    parser.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return parser


def find_mpiexec() -> str:
    """The mpiexec beside this interpreter (the mpich wheel's, in a virtualenv) or on PATH."""
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.exists():
        return str(beside)
    found = shutil.which("mpiexec")
    if found is None:
        raise RuntimeError("mpiexec not found: pip install 'minitorch[distributed]' (the mpich wheel provides it)")
    return found


def main(argv: list[str] | None = None) -> int:
    args = get_args_parser().parse_args(argv)
    if args.nnodes not in ("1", "1:1"):
        raise SystemExit("minitorch.distributed.run: only one node (--nnodes 1) is supported; "
                         "use mpiexec with a host file for several machines")
    n = args.nproc_per_node
    env = dict(os.environ, WORLD_SIZE=str(n), LOCAL_WORLD_SIZE=str(n), GROUP_RANK="0", GROUP_WORLD_SIZE="1",
               ROLE_NAME="default", ROLE_WORLD_SIZE=str(n), MASTER_ADDR=args.master_addr,
               MASTER_PORT=str(args.master_port), TORCHELASTIC_RUN_ID=args.rdzv_id or uuid.uuid4().hex,
               OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    if args.as_torch:
        as_torch.enable(env)
    if args.no_python:
        target = [args.training_script]
    else:
        target = [sys.executable, "-m", "minitorch.distributed._bootstrap"]
        target += ["-m", args.training_script] if args.module else [args.training_script]
    command = [find_mpiexec(), "-n", str(n)] + target + list(args.training_script_args)
    return subprocess.call(command, env=env)


if __name__ == "__main__":
    sys.exit(main())
