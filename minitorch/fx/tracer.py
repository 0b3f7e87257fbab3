"""Symbolic tracing: run ``forward`` on Proxies and record what it does.

While tracing, ``Module.__call__`` records a ``call_module`` node for a leaf module (minitorch's own layers)
and traces into any other; a parameter or buffer read in ``forward`` becomes a ``get_attr`` node; and the
public functions of ``minitorch``, ``minitorch.nn.functional``, ``minitorch.special`` and ``minitorch.linalg``,
called through their module (``torch.relu(x)``, ``F.relu(x)``), record ``call_function`` nodes when given a
Proxy. (PyTorch intercepts functions with ``__torch_function__``; minitorch swaps the namespace entries for
the duration of the trace, so a function imported by name before tracing, ``from torch import relu``, is not
seen: it receives a Proxy and raises.)
"""

from __future__ import annotations

import functools
import inspect
import types

import minitorch

from ..nn import Module, ModuleDict, ModuleList, Sequential
from ..tensor import Tensor
from .graph import Graph
from .graph_module import GraphModule
from .node import map_aggregate
from .proxy import Proxy, TracerBase

_NAMESPACES = ("", "nn.functional", "special", "linalg")
_wrapped: list[tuple[dict, str]] = []  # (a module's globals, a function name there): recorded as one call


def wrap(fn_or_name):
    """Record calls of a module-level function as one ``call_function`` node instead of tracing into it (call at
    module level: ``torch.fx.wrap("my_fn")`` or ``torch.fx.wrap(my_fn)``)."""
    caller = inspect.currentframe().f_back
    if caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    if name.startswith("_") and not callable(caller.f_globals.get(name)):
        raise NotImplementedError(f"wrap: {name!r} is not a function of the calling module")
    _wrapped.append((caller.f_globals, name))
    return fn_or_name


def _namespace(path: str):
    value = minitorch
    for part in filter(None, path.split(".")):
        value = getattr(value, part)
    return value


def _proxy_tracer(value):
    """The tracer of the first Proxy inside ``value`` (nested containers searched), or None."""
    found = []
    map_aggregate(value, lambda x: found.append(x.tracer) if isinstance(x, Proxy) and not found else None)
    return found[0] if found else None


def _recording(function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        tracer = _proxy_tracer((args, kwargs))
        if tracer is None:
            return function(*args, **kwargs)
        return tracer.create_proxy("call_function", function, args, kwargs)

    return wrapper


class Tracer(TracerBase):
    """``Tracer().trace(module_or_function)`` -> Graph. Override ``is_leaf_module`` to choose which modules
    stay one ``call_module`` node."""

    def __init__(self, autowrap_modules=(), autowrap_functions=(), param_shapes_constant: bool = False) -> None:
        self.root: Module | None = None
        self.graph = Graph()
        self._module_paths: dict[int, str] = {}
        self._attr_proxies: dict[str, Proxy] = {}
        self._constants = 0

    # what becomes a node ---------------------------------------------------------------------------------------
    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        """minitorch's own layers are leaves; containers and your modules are traced through."""
        return type(m).__module__.startswith("minitorch.nn") and not isinstance(m, (Sequential, ModuleList,
                                                                                     ModuleDict))

    def path_of_module(self, mod: Module) -> str:
        path = self._module_paths.get(id(mod))
        if path is None:
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(self, m: Module, forward, args: tuple, kwargs: dict):
        path = self.path_of_module(m)
        if not self.is_leaf_module(m, path):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", path, args, kwargs)

    def getattr(self, attr: str, attr_val, parameter_proxy_cache: dict):
        return attr_val

    def create_arg(self, a):
        def convert(x):
            if isinstance(x, Proxy):
                return x.node
            if isinstance(x, Tensor):  # a tensor made in forward (or a parameter passed along): an attribute
                return self._tensor_attribute(x).node
            if isinstance(x, Module):
                raise RuntimeError(f"fx: cannot record the module {type(x).__name__} as an argument")
            return x

        return map_aggregate(a, convert)

    def _tensor_attribute(self, t: Tensor) -> Proxy:
        for name, value in list(self.root.named_parameters()) + list(self.root.named_buffers()):
            if value is t:
                return self._get_attr(name)
        name = f"_tensor_constant{self._constants}"
        self._constants += 1
        self.root.__dict__[name] = t  # a plain attribute of the root, as in PyTorch
        return self._get_attr(name)

    def _get_attr(self, qualified_name: str) -> Proxy:
        if qualified_name not in self._attr_proxies:
            self._attr_proxies[qualified_name] = self.create_proxy("get_attr", qualified_name, (), {})
        return self._attr_proxies[qualified_name]

    # the trace -------------------------------------------------------------------------------------------------
    def trace(self, root, concrete_args: dict | None = None) -> Graph:
        if isinstance(root, Module):
            self.root, function = root, type(root).forward
            bound = (root,)
        else:
            self.root, function, bound = Module(), root, ()
        self.graph = Graph(owning_module=self.root)
        self._module_paths = {id(m): name for name, m in self.root.named_modules()}
        self._attr_proxies = {}
        concrete_args = concrete_args or {}
        parameters = list(inspect.signature(function).parameters.values())[len(bound):]
        args = []
        for p in parameters:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise RuntimeError(f"fx: cannot trace a forward with *args or **kwargs ({p.name})")
            if p.name in concrete_args:
                args.append(concrete_args[p.name])
                continue
            default = () if p.default is p.empty else (p.default,)
            args.append(self.create_proxy("placeholder", p.name, default, {}))
        with _Patched(self):
            result = function(*bound, *args)
        self.create_node("output", "output", (self.create_arg(result),), {})
        return self.graph


class _Patched:
    """For the trace's duration: module calls and attribute reads, and the namespace functions, record."""

    def __init__(self, tracer: Tracer) -> None:
        self.tracer = tracer
        self.saved: list = []
        self.saved_globals: list = []

    def _swap(self, owner, name: str, value) -> None:
        self.saved.append((owner, name, owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)))
        setattr(owner, name, value)

    def __enter__(self) -> None:
        tracer = self.tracer
        original_call, original_getattr = Module.__call__, Module.__getattr__

        def module_call(module, *args, **kwargs):
            return tracer.call_module(module, functools.partial(original_call, module), args, kwargs)

        def module_getattr(module, name):
            value = original_getattr(module, name)
            path = tracer._module_paths.get(id(module))
            if isinstance(value, Tensor) and path is not None:
                return tracer._get_attr(f"{path}.{name}" if path else name)
            return value

        self._swap(Module, "__call__", module_call)
        self._swap(Module, "__getattr__", module_getattr)
        for module_globals, name in _wrapped:
            if callable(module_globals.get(name)):
                self._swap_global(module_globals, name)
        for path in _NAMESPACES:
            namespace = _namespace(path)
            for name, value in list(vars(namespace).items()):
                if not name.startswith("_") and isinstance(value, types.FunctionType):
                    self._swap(namespace, name, _recording(value))

    def _swap_global(self, module_globals: dict, name: str) -> None:
        self.saved_globals.append((module_globals, name, module_globals[name]))
        module_globals[name] = _recording(module_globals[name])

    def __exit__(self, *exc) -> None:
        for owner, name, value in reversed(self.saved):
            setattr(owner, name, value)
        for module_globals, name, value in reversed(self.saved_globals):
            module_globals[name] = value
        self.saved, self.saved_globals = [], []


def symbolic_trace(root, concrete_args: dict | None = None):
    """A GraphModule recording what ``root`` (a Module or a function) computes."""
    graph = Tracer().trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(root if isinstance(root, Module) else graph.owning_module, graph, name)
