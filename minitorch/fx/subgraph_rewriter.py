"""``replace_pattern``: find every occurrence of one traced function's graph in a GraphModule and put another's
in its place (PyTorch's ``torch.fx.replace_pattern``, for patterns of function and method calls)."""

from __future__ import annotations

from typing import NamedTuple

from .graph import Graph
from .node import Node, map_arg
from .tracer import symbolic_trace


class Match(NamedTuple):
    anchor: Node  # the pattern's node the match was found from (its output's value), as in PyTorch
    nodes_map: dict  # pattern node -> the GraphModule's node (or value, for a placeholder bound to a constant)


def _pattern_graph(fn) -> Graph:
    return fn.graph if hasattr(fn, "graph") else symbolic_trace(fn).graph


def _match(pattern: Node, node, bound: dict) -> bool:
    """Whether ``node`` (and what it reads) has the shape of ``pattern``, extending ``bound``."""
    if pattern.op == "placeholder":
        if pattern in bound:
            return bound[pattern] is node
        bound[pattern] = node
        return True
    if not isinstance(node, Node) or (pattern.op, pattern.target) != (node.op, node.target):
        return False
    if len(pattern.args) != len(node.args) or pattern.kwargs.keys() != node.kwargs.keys():
        return False
    pairs = list(zip(pattern.args, node.args)) + [(pattern.kwargs[k], node.kwargs[k]) for k in pattern.kwargs]
    for p, n in pairs:
        if isinstance(p, Node):
            if not _match(p, n, bound):
                return False
        elif isinstance(n, Node) or p != n:
            return False
    if pattern in bound and bound[pattern] is not node:
        return False
    bound[pattern] = node
    return True


def _insert_replacement(graph: Graph, replacement: Graph, inputs: list, before: Node):
    """Copy ``replacement``'s nodes in before ``before``, its placeholders standing for ``inputs``; its result."""
    values: dict = {}
    lookup = values.__getitem__
    placeholders = iter(inputs)
    result = None
    with graph.inserting_before(before):
        for r in replacement.nodes:
            if r.op == "placeholder":
                values[r] = next(placeholders)
            elif r.op == "output":
                result = map_arg(r.args[0], lookup)
            else:
                values[r] = graph.node_copy(r, lookup)
    return result


def replace_pattern(gm, pattern, replacement) -> list[Match]:
    """Replace each non-overlapping match of ``pattern`` in ``gm`` with ``replacement`` (functions or
    GraphModules with the same arguments); returns the matches and recompiles ``gm``."""
    pattern_graph, replacement_graph = _pattern_graph(pattern), _pattern_graph(replacement)
    (pattern_output,) = [n for n in pattern_graph.nodes if n.op == "output"]
    anchor = pattern_output.args[0]
    if not isinstance(anchor, Node):
        raise ValueError("replace_pattern: the pattern must return one value computed from its arguments")
    pattern_inputs = [n for n in pattern_graph.nodes if n.op == "placeholder"]
    graph: Graph = gm.graph
    matches, taken = [], set()
    for node in graph.nodes:
        bound: dict = {}
        if node in taken or not _match(anchor, node, bound):
            continue
        inner = [n for p, n in bound.items() if p.op != "placeholder"]
        if any(n in taken for n in inner):
            continue
        inner_set = set(inner)
        if any(user not in inner_set for n in inner if n is not node for user in n.users):
            continue  # an intermediate value is read outside the match: replacing would lose it
        taken |= inner_set
        matches.append(Match(anchor, dict(bound)))
    replaced: dict = {}  # an earlier match's anchor -> what replaced it (a later match may read it)
    for match in matches:
        found = match.nodes_map[anchor]
        inputs = [match.nodes_map.get(p) for p in pattern_inputs]
        result = _insert_replacement(graph, replacement_graph, [replaced.get(n, n) for n in inputs], found)
        replaced[found] = result
        found.replace_all_uses_with(result)
        for n in reversed(graph.nodes):
            if n in match.nodes_map.values() and n.op != "placeholder" and not n.users:
                graph.erase_node(n)
    gm.recompile()
    return matches
