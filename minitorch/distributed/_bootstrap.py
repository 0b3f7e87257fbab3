"""What each process of ``minitorch.distributed.run`` runs first: set RANK/LOCAL_RANK/ROLE_RANK from MPI's
process-manager variables (without initialising MPI), then run the script as ``__main__``."""

from __future__ import annotations

import os
import runpy
import sys

_RANK_VARIABLES = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK")


def main() -> None:
    rank = next((os.environ[v] for v in _RANK_VARIABLES if v in os.environ), "0")
    for name in ("RANK", "LOCAL_RANK", "ROLE_RANK"):
        os.environ[name] = rank
    args = sys.argv[1:]
    if args and args[0] == "-m":
        sys.argv = args[1:]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = args
        sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
        runpy.run_path(args[0], run_name="__main__")


if __name__ == "__main__":
    main()
