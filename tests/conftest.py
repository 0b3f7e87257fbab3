"""Shared fixtures: the ``device`` parameter and hypothesis profiles.

``MINITORCH_TEST_DEVICES=cpu,cuda`` runs every device-parametrized test on each listed device
(CI runs ``cpu``). Hypothesis has a fast ``ci`` profile (the default) and a thorough ``dev`` one:
``HYPOTHESIS_PROFILE=dev python -m pytest``.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

# ci: derandomized, so CI never fails on a draw no one has seen before; dev draws new examples every run.
settings.register_profile(
    "ci", max_examples=15, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=200, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

DEVICES = [d.strip() for d in os.environ.get("MINITORCH_TEST_DEVICES", "cpu").split(",") if d.strip()]


@pytest.fixture(params=DEVICES)
def device(request):
    """The device a test runs on (one test instance per entry of MINITORCH_TEST_DEVICES)."""
    return request.param
