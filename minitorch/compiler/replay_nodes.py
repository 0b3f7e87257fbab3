"""Graph nodes of a replay: op instances given what their backward reads (plan.py, backward.py)."""

from __future__ import annotations


def saved_values(step, args, values) -> tuple:
    """A replayed node's ``_saved``: the recipe recorded from the traced node, filled from this call's arrays."""
    saved = []
    for entry in step.saved:
        if entry is None:
            saved.append(None)
        elif entry[0] == "arg":
            saved.append(args[entry[1]] if args is not None else values[dict(step.arg_slots)[entry[1]]])
        elif entry[0] == "out":
            saved.append(values[step.outputs[entry[1]]])
        else:
            saved.append(entry[1])
    return tuple(saved)


def fused_node(step, group, values, i: int):
    """The graph node of a fused step, for an unfused backward: the attributes its forward set, its saved values."""
    cls = step.cls
    node = cls.__new__(cls)
    node.backend, node.device = step.backend, step.device
    node.__dict__.update(group.extras[i])
    node._saved = saved_values(step, None, values)
    return node
