"""The health-check flow under a real (temporary) Prefect API."""

from __future__ import annotations

import asyncio

import pytest

from dkg.services import neo4j
from dkg.settings import Settings

pytestmark = [pytest.mark.services, pytest.mark.slow]


def test_healthcheck_flow_reports_both_services(services: Settings, prefect_harness: None) -> None:
    from flows.healthcheck import healthcheck

    report = healthcheck()
    assert report.healthy
    by_name = {s.name: s for s in report.services}
    assert set(by_name) == {"neo4j", "corenlp"}
    assert by_name["neo4j"].version is not None and by_name["neo4j"].version.startswith("5.26")
    assert by_name["corenlp"].version == "4.5.10"


def test_health_artifact_holds_no_password(services: Settings, prefect_harness: None) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from flows.healthcheck import healthcheck

    healthcheck()

    async def _artifacts() -> list[str]:
        async with get_client() as client:
            arts = await client.read_artifacts(
                artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["service-health"]))
            )
            return [str(a.data) for a in arts]

    data = asyncio.run(_artifacts())
    assert data and "neo4j" in data[0] and "corenlp" in data[0]
    secret = neo4j.password_file(services).read_text().strip()
    assert all(secret not in d for d in data)


def test_healthcheck_fails_clearly_when_neo4j_is_unreachable(
    services: Settings, prefect_harness: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flows.healthcheck import healthcheck

    # The real flow, its real retries (2 + 5 + 10 s), against a port where nothing listens.
    monkeypatch.setenv("DKG_NEO4J_PORT", "1")
    monkeypatch.setenv("DKG_STATE_DIR", str(services.state_path))
    with pytest.raises(Exception, match=r"Neo4j at bolt://127.0.0.1:1 is not answering"):
        healthcheck()
