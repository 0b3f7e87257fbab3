"""``explain()`` / ``print_plan()``: a compiled function's plans in words (docs/compile.md walks through one)."""

from __future__ import annotations

from .guards import describe


def render(compiled) -> str:
    name = getattr(compiled.fn, "__qualname__", None) or type(compiled.fn).__name__
    lines = [f"torch.compile'd {name}: {len(compiled.history)} trace(s), backend {compiled.backend!r}"]
    for n, (_, entry) in enumerate(compiled.history):
        lines.append("")
        if entry.plan is None:
            lines.append(f"trace {n}: graph break, runs eagerly")
            lines.append(f"  reason: {entry.reason}")
            continue
        render_plan = _pieces if entry.plan.guided else _plan
        lines.extend(f"  {line}" if i else line for i, line in enumerate(render_plan(entry.plan, n)))
    for step in getattr(compiled, "_steps", {}).values():  # the optimizers stepped inside, compiled
        lines.append("")
        lines.append(step.explain())
    return "\n".join(lines)


def _pieces(plan, n: int) -> list[str]:
    """A plan with graph breaks: its breaks, then its pieces and eager steps in call order (pieces.py)."""
    eager = sum(1 for e in plan.events if not hasattr(e, "piece"))
    lines = [f"trace {n}: compiled in {plan.compile_seconds * 1e3:.1f} ms; {len(plan.breaks)} graph break(s): "
             f"{len(plan.pieces)} compiled piece(s), {eager} eager op(s); the function's Python runs at every call, "
             "its ops checked against the trace"]
    lines.append("guards:")
    lines.extend(f"  {g}" for g in describe(plan))
    lines.append("graph breaks:")
    lines.extend(f"  before op {position}{' (a new piece)' if cut else ''}: {reason}"
                 for position, reason, cut in plan.breaks)
    lines.append("pieces and eager ops, in call order:")
    for i, event in enumerate(plan.events):
        piece = getattr(event, "piece", None)
        if piece is None:
            lines.append(f"  [{i}] eager {event.cls.__name__}: {event.reason}")
        elif event.local == 0:
            body = _plan(piece.plan, piece.number)[1:]
            kernels = sum(1 for s in piece.plan.steps if s.fused is None or s.fused_head)
            first, last = piece.indices[0], piece.indices[-1]
            lines.append(f"  piece {piece.number}: ops {first}-{last} ({len(piece.indices)} ops, "
                         f"{kernels} kernels after fusion), backward recorded: {piece.records}")
            lines.extend(f"    {line}" for line in body if not line.startswith(("guards", "  grad mode", "  input",
                                                                                  "graph breaks"))
                         and " is the traced tensor" not in line)
    if plan.diverged:
        lines.append(f"left the traced path in {plan.diverged} call(s) (the rest of those calls ran eagerly); "
                     f"last: {plan.divergence}")
    return lines


def _plan(plan, n: int) -> list[str]:
    kernels = sum(1 for s in plan.steps if s.fused is None or s.fused_head)
    lines = [f"trace {n}: compiled in {plan.compile_seconds * 1e3:.1f} ms; {len(plan.steps)} ops, {kernels} kernels "
             f"after fusion; backward recorded: {plan.records}"]
    lines.append("guards:")
    lines.extend(f"  {g}" for g in describe(plan))
    lines.append("graph breaks: none")
    randoms = getattr(plan, "randoms", ())
    if randoms:
        values = ", ".join(f"v{slot} {list(plan.slot_info[slot][1])}" for slot, _ in randoms)
        lines.append(f"random values, drawn again at each call from the default generator in this order: {values}")
    lines.append("forward kernels:")
    for i, step in enumerate(plan.steps):
        if step.fused is not None and not step.fused_head:
            continue
        if step.fused is not None:
            group = step.fused_group
            lines.append(f"  [{i}] fused {group.describe()}")
            continue
        reads = ", ".join(f"v{slot}" for _, slot in step.arg_slots)
        writes = ", ".join(f"v{slot}" for slot in step.outputs)
        kind = "view" if step.views is not None else "kernel"
        kept = f", saves for backward: {step.traced.name}" if step.traced is not None else ""
        lines.append(f"  [{i}] {writes} = {step.cls.__name__}({reads}) {kind}{kept}")
    if plan.records:
        names = [plan.steps[i].traced.name for i in plan.schedule]
        lines.append(f"backward kernels ({len(names)} nodes, engine order): " + ", ".join(names))
    if plan.fused_groups:
        lines.append(f"fused groups: {len(plan.fused_groups)}")
        for group in plan.fused_groups:
            lines.append(f"  {group.describe()}")
    return lines
