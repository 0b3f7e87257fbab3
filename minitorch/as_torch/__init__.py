"""Run a program written for PyTorch on minitorch without changing it: ``import torch`` means minitorch.

``python -m minitorch.as_torch script.py [args]`` runs one process so; ``python -m minitorch.distributed.run
--as-torch --nproc-per-node N script.py`` does it on every rank. Both put ``SHIM_PATH`` first on PYTHONPATH: a
folder holding a package named ``torch`` that replaces itself by minitorch and maps ``torch.nn``,
``torch.distributed``, ... to minitorch's modules. Processes the script starts (``torch.multiprocessing.spawn``,
``multiprocessing.Process``, ``subprocess``) inherit PYTHONPATH and see the same ``torch``.
"""

from __future__ import annotations

import os
import runpy
import sys

__all__ = ["SHIM_PATH", "enable", "main"]

SHIM_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shim")


def enable(environ: dict | None = None) -> dict:
    """Put SHIM_PATH first on ``environ``'s PYTHONPATH (``os.environ`` by default) and return it."""
    environ = os.environ if environ is None else environ
    parts = [p for p in environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != SHIM_PATH]
    environ["PYTHONPATH"] = os.pathsep.join([SHIM_PATH] + parts)
    return environ


def main(argv: list[str] | None = None) -> None:
    """``python -m minitorch.as_torch [-m module | script.py] [args]``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        raise SystemExit("usage: python -m minitorch.as_torch [-m module | script.py] [args]")
    enable()
    sys.path.insert(0, SHIM_PATH)
    sys.modules.pop("torch", None)
    run_as_main(args)


def run_as_main(args: list[str]) -> None:
    """Run ``["-m", module, *argv]`` or ``[script.py, *argv]`` as ``__main__``, as ``python`` would (also what each
    process of ``minitorch.distributed.run`` does after setting its rank variables)."""
    if args[0] == "-m":
        sys.argv = args[1:]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = args
        sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
        runpy.run_path(args[0], run_name="__main__")
