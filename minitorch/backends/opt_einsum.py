"""``minitorch.backends.opt_einsum``: the opt_einsum contraction-order package. minitorch's einsum contracts
with numpy's own path search (``optimize=True``), so this reports what PyTorch reports when the package is not
installed: not available, not enabled, no strategy."""

from __future__ import annotations

from ._flags import BoolFlag, FlagsModule, install

strategy: str | None = None


def is_available() -> bool:
    return False


def get_opt_einsum():
    return None


class OptEinsumModule(FlagsModule):
    enabled = BoolFlag(False, "set_enabled_opt_einsum")


install(__name__, OptEinsumModule)
