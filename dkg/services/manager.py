"""Bring all local services up, down, or report on them."""

from __future__ import annotations

from collections.abc import Callable

from dkg.services import corenlp, neo4j
from dkg.services.status import ServiceStatus
from dkg.settings import Settings

Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    return None


def services_up(settings: Settings, progress: Progress = _quiet) -> list[ServiceStatus]:
    """Start (or verify) Neo4j and CoreNLP; each is healthy when this returns.

    Idempotent: services already running are left as they are (``started`` is False).
    """
    results = []
    progress("neo4j: external server" if settings.uses_external_neo4j else "neo4j: starting")
    results.append(neo4j.start(settings))
    progress("corenlp: external server" if settings.uses_external_corenlp else "corenlp: starting")
    results.append(corenlp.start(settings))
    return results


def services_status(settings: Settings) -> list[ServiceStatus]:
    """Health of each service, without starting anything."""
    return [neo4j.status(settings), corenlp.status(settings)]


def services_down(settings: Settings) -> dict[str, bool]:
    """Stop the processes this project started (by recorded PID); external ones are left alone."""
    return {"neo4j": neo4j.stop(settings), "corenlp": corenlp.stop(settings)}
