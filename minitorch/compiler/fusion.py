"""Fusion of elementwise chains (filled in below)."""

from __future__ import annotations


def fuse(plan) -> None:
    plan.fused_groups = []
