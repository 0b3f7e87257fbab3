"""``minitorch.backends.mkldnn``: oneDNN flags. minitorch's CPU kernels are numpy's (not oneDNN), so
``is_available()`` is False; ``enabled`` keeps PyTorch's default and type check (setting it changes nothing)."""

from __future__ import annotations

from ._flags import BoolFlag, FlagsModule, install, scoped


def is_available() -> bool:
    return False


class MkldnnModule(FlagsModule):
    enabled = BoolFlag(True, "set_enabled_mkldnn")
    deterministic = BoolFlag(False, "set_deterministic_mkldnn")
    allow_tf32 = BoolFlag(True, "set_allow_tf32_mkldnn")


def flags(enabled: bool = False, deterministic: bool = False, allow_tf32: bool = True):
    return scoped(__name__, enabled=enabled, deterministic=deterministic, allow_tf32=allow_tf32)


install(__name__, MkldnnModule)
