"""What each process of ``minitorch.distributed.run`` runs first: set RANK/LOCAL_RANK/ROLE_RANK from MPI's
process-manager variables (without initialising MPI), then run the script as ``__main__``."""

from __future__ import annotations

import os
import sys

from ..as_torch import run_as_main

_RANK_VARIABLES = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK")


def main() -> None:
    rank = next((os.environ[v] for v in _RANK_VARIABLES if v in os.environ), "0")
    for name in ("RANK", "LOCAL_RANK", "ROLE_RANK"):
        os.environ[name] = rank
    run_as_main(sys.argv[1:])


if __name__ == "__main__":
    main()
