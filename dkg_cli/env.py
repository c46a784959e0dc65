"""Environment defaults that must be in place before Prefect is imported."""

from __future__ import annotations

import os

from dkg.settings import Settings


def configure_prefect(settings: Settings) -> None:
    """Default Prefect to an ephemeral API with its home in the state folder.

    Values already set in the environment win (e.g. ``PREFECT_API_URL`` pointing at
    ``prefect server start`` so runs appear in the UI).
    """
    os.environ.setdefault("PREFECT_HOME", str(settings.state_path / "prefect"))
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "INFO")
    os.environ.setdefault("NO_PROXY", "localhost,127.0.0.1")
