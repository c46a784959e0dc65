"""The health record every service check returns."""

from __future__ import annotations

from pydantic import BaseModel


class ServiceStatus(BaseModel):
    """Health and identity of one service. Holds no secret, so it may be logged."""

    name: str
    address: str
    healthy: bool
    managed: bool
    """True when this project started the process (and ``down`` would stop it)."""
    version: str | None = None
    pid: int | None = None
    started: bool = False
    """True when the last ``up`` started it (False: it was already running or external)."""
    detail: str = ""
    rss_mib: float | None = None
    peak_rss_mib: float | None = None
    startup_s: float | None = None
