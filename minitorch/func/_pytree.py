"""A minimal pytree: nested tuples, lists and dicts of leaves, flattened to a list and rebuilt.

The transforms in minitorch.func take and return such nests (a dict of parameters, a tuple of outputs),
as PyTorch's torch.utils._pytree does for torch.func.
"""

from __future__ import annotations

from typing import Any

LEAF = None  # the spec of a leaf


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def tree_flatten(tree: Any) -> tuple[list, Any]:
    """The leaves of ``tree`` in order, and a spec that ``tree_unflatten`` rebuilds it from."""
    leaves: list = []

    def walk(node):
        if isinstance(node, dict):
            keys = list(node)
            return (dict, tuple(keys), tuple(walk(node[k]) for k in keys))
        if isinstance(node, (tuple, list)):
            return (type(node), len(node), tuple(walk(c) for c in node))
        leaves.append(node)
        return LEAF

    return leaves, walk(tree)


def tree_unflatten(leaves, spec: Any) -> Any:
    it = iter(leaves)

    def build(s):
        if s is LEAF:
            return next(it)
        kind, keys, children = s
        values = [build(c) for c in children]
        if kind is dict:
            return dict(zip(keys, values))
        if kind is list:
            return values
        if issubclass(kind, tuple) and hasattr(kind, "_fields"):
            return kind(*values)
        return kind(values) if kind is not tuple else tuple(values)

    return build(spec)


def tree_map(fn, tree: Any) -> Any:
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def spec_str(spec: Any) -> str:
    """A short readable form of a spec, for error messages."""
    if spec is LEAF:
        return "*"
    kind, keys, children = spec
    inner = ", ".join(spec_str(c) for c in children)
    if kind is dict:
        return "{" + ", ".join(f"{k!r}: {spec_str(c)}" for k, c in zip(keys, children)) + "}"
    if kind is list:
        return f"[{inner}]"
    return f"({inner}{',' if len(children) == 1 else ''})"


def broadcast_prefix(prefix: Any, tree: Any, is_leaf_prefix=None) -> list | None:
    """``prefix`` (a tree whose leaves apply to whole subtrees of ``tree``) expanded to one entry per
    leaf of ``tree``; None when the structures do not match (vmap's in_dims/out_dims)."""
    out: list = []

    def walk(p, t):
        if not isinstance(p, (tuple, list, dict)):
            out.extend([p] * len(tree_flatten(t)[0]))
            return True
        if isinstance(p, dict):
            if not isinstance(t, dict) or set(p) != set(t):
                return False
            return all(walk(p[k], t[k]) for k in t)
        if not isinstance(t, (tuple, list)) or isinstance(t, dict) or len(p) != len(t):
            return False
        return all(walk(a, b) for a, b in zip(p, t))

    return out if walk(prefix, tree) else None
