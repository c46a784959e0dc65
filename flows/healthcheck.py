"""Flow: check that Neo4j and CoreNLP answer, as two retried tasks."""

from __future__ import annotations

from prefect import flow
from pydantic import BaseModel

from dkg.services.status import ServiceStatus
from tasks.health import check_corenlp, check_neo4j, publish_health


class HealthReport(BaseModel):
    """Result of the health-check flow."""

    healthy: bool
    services: list[ServiceStatus]


@flow(name="healthcheck", flow_run_name="healthcheck", log_prints=True)
def healthcheck() -> HealthReport:
    """Check Neo4j (Bolt ``RETURN 1``) and CoreNLP (a constituency parse) in parallel."""
    neo = check_neo4j.submit()
    nlp = check_corenlp.submit()
    statuses = [neo.result(), nlp.result()]
    publish_health(statuses)
    report = HealthReport(healthy=all(s.healthy for s in statuses), services=statuses)
    for s in statuses:
        print(f"{s.name}: {'healthy' if s.healthy else 'UNHEALTHY'} at {s.address} ({s.version})")
    return report


if __name__ == "__main__":
    healthcheck()
