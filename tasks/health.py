"""Health-check tasks: Neo4j over Bolt, CoreNLP through stanza's client."""

from __future__ import annotations

from prefect import task
from prefect.artifacts import create_table_artifact
from prefect.logging import get_run_logger

from dkg.errors import ServiceUnavailableError
from dkg.services import corenlp, neo4j
from dkg.services.status import ServiceStatus
from dkg.settings import load_settings
from tasks.common import retry_transient

PROBE = "Adult patients should be less than 65 years of age and without substantial comorbidities."


@task(name="check-neo4j", retries=3, retry_delay_seconds=[2, 5, 10], retry_condition_fn=retry_transient)
def check_neo4j() -> ServiceStatus:
    """Run ``RETURN 1`` over Bolt and report the server's version and memory."""
    settings = load_settings()
    version = neo4j.ping(settings)
    status = neo4j.status(settings)
    get_run_logger().info("Neo4j %s answers at %s", version, settings.bolt_uri)
    return status


@task(name="check-corenlp", retries=3, retry_delay_seconds=[2, 5, 10], retry_condition_fn=retry_transient)
def check_corenlp() -> ServiceStatus:
    """Parse one sentence through ``stanza.server.CoreNLPClient`` and report the server."""
    settings = load_settings()
    trees = corenlp.constituency_parse(settings, PROBE)
    if not trees or "(QP (JJR less) (IN than) (CD 65))" not in trees[0]:
        raise ServiceUnavailableError(f"CoreNLP returned an unexpected parse: {trees[:1]}")
    status = corenlp.status(settings)
    get_run_logger().info("CoreNLP parsed the probe sentence at %s", settings.corenlp_endpoint)
    return status


@task(name="publish-health-report")
def publish_health(statuses: list[ServiceStatus]) -> None:
    """Publish the service table as a Prefect artifact (no secrets in it)."""
    rows = [
        {
            "service": s.name,
            "address": s.address,
            "healthy": s.healthy,
            "version": s.version or "",
            "managed_pid": s.pid or "",
            "rss_mib": round(s.rss_mib, 1) if s.rss_mib else "",
            "peak_rss_mib": round(s.peak_rss_mib, 1) if s.peak_rss_mib else "",
            "detail": s.detail,
        }
        for s in statuses
    ]
    create_table_artifact(key="service-health", table=rows, description="Health of Neo4j and CoreNLP")
