"""Shared fixtures: settings, the real services, and one Prefect test harness per session."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"

# Prefect reads these when it is imported; set them before any test module imports it.
os.environ.setdefault("PREFECT_HOME", str(ROOT / ".dkg" / "prefect-tests"))
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("NO_PROXY", "localhost,127.0.0.1")

from dkg.services import services_up  # noqa: E402
from dkg.settings import Settings, load_settings  # noqa: E402


@pytest.fixture(scope="session")
def settings() -> Settings:
    """The settings the suite runs with (state folder of the checkout, default ports)."""
    return load_settings(state_dir=ROOT / ".dkg")


@pytest.fixture(scope="session")
def services(settings: Settings) -> Settings:
    """Ensure Neo4j and CoreNLP are up (idempotent: `make test` has started them already)."""
    statuses = services_up(settings)
    assert all(s.healthy for s in statuses), [s.detail for s in statuses]
    return settings


@pytest.fixture(scope="session")
def prefect_harness() -> Iterator[None]:
    """One temporary Prefect API for the whole session (its start-up takes ~20 s)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=180):
        yield
