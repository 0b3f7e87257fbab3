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
        lines.extend(f"  {line}" if i else line for i, line in enumerate(_plan(entry.plan, n)))
    return "\n".join(lines)


def _plan(plan, n: int) -> list[str]:
    kernels = sum(1 for s in plan.steps if s.fused is None or s.fused_head)
    lines = [f"trace {n}: compiled in {plan.compile_seconds * 1e3:.1f} ms; {len(plan.steps)} ops, {kernels} kernels "
             f"after fusion; backward recorded: {plan.records}"]
    lines.append("guards:")
    lines.extend(f"  {g}" for g in describe(plan))
    lines.append("graph breaks: none")
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
