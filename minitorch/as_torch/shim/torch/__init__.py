"""``import torch`` gives minitorch. This folder's parent (``minitorch.as_torch.SHIM_PATH``) goes first on
PYTHONPATH; when Python imports this package as ``torch`` it puts minitorch in its place in ``sys.modules`` and
installs a finder that imports ``torch.x.y`` as ``minitorch.x.y`` (the same module object under both names)."""

import importlib
import importlib.abc
import importlib.util
import sys

import minitorch


class MinitorchAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``torch.<sub>`` where ``minitorch.<sub>`` exists, and loads it as that module."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("torch."):
            return None
        real = importlib.util.find_spec("mini" + fullname)
        if real is None:
            return None
        return importlib.util.spec_from_loader(fullname, self,
                                               is_package=real.submodule_search_locations is not None)

    def create_module(self, spec):
        return importlib.import_module("mini" + spec.name)

    def exec_module(self, module) -> None:
        """Nothing to run: create_module returned minitorch's module, already executed."""


if __name__ == "torch":  # imported under any other name (a scan of minitorch's files), it changes nothing
    sys.meta_path.insert(0, MinitorchAlias())
    sys.modules["torch"] = minitorch
