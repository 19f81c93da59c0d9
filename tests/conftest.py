"""Shared test configuration: hypothesis profiles and the path to ../shared."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

pytest_plugins = ["fedpriv_pytest"]

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    max_examples=50,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, max_examples=100)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

#: ``../shared`` beside the checkout (CI places it there); tests that need it skip
#: with a reason when it is absent.
SHARED = Path(__file__).resolve().parents[1].parent / "shared"
HOSPITAL_SAMPLE = SHARED / "data" / "diabetic_data_first4999.csv"


@pytest.fixture
def hospital_sample() -> Path:
    """Path of the real 4,999-encounter UCI sample, or skip."""
    if not HOSPITAL_SAMPLE.is_file():
        pytest.skip(f"shared data sample not found at {HOSPITAL_SAMPLE}")
    return HOSPITAL_SAMPLE
