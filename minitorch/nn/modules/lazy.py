"""LazyModuleMixin: modules whose parameter shapes come from their first input (``LazyLinear`` and friends).

A lazy module starts with ``UninitializedParameter``/``UninitializedBuffer`` attributes and a forward
pre-hook. The first call runs ``initialize_parameters(*args)``, which materializes them in place (so an
optimizer built before it already holds the real parameters) and re-initializes them as the eager layer
would; then the hook removes itself and the module becomes ``cls_to_become`` (``LazyLinear`` -> ``Linear``).
Loading a state dict into a lazy module materializes its parameters with the saved shapes.
"""

from __future__ import annotations

import itertools

from ...autograd import grad_mode
from ..parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Mix in before the eager layer (``class LazyLinear(LazyModuleMixin, Linear)``) and define
    ``initialize_parameters(input)``; set ``cls_to_become`` to the eager class."""

    cls_to_become: type | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        super()._save_to_state_dict(destination, prefix, keep_vars)
        for name, value in itertools.chain(self._parameters.items(), self._buffers.items()):
            if is_lazy(value) and prefix + name in destination:  # saved as itself: it has no values to detach
                destination[prefix + name] = value

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        for name, value in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and is_lazy(value) and not is_lazy(state_dict[key]):
                with grad_mode.no_grad():
                    value.materialize(state_dict[key].shape)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def initialize_parameters(self, *args, **kwargs) -> None:
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def has_uninitialized_params(self) -> bool:
        """Whether any parameter or buffer of this module (not its children) is still uninitialized."""
        return any(is_lazy(v) for v in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None) -> None:
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        del module._initialize_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError(
            "Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy forward pass to "
            "correctly initialize the modules"
        )
