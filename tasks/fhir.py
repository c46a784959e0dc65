"""FHIR export tasks: build and write a version's Bundle, validate it offline, publish what was exported."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from dkg.errors import ExportError
from dkg.fhir import run
from dkg.settings import load_settings
from tasks.common import retry_transient


@task(name="export-fhir-bundle", retries=2, retry_delay_seconds=[2, 10], retry_condition_fn=retry_transient)
def export_task(code: str, version: str | None, out_dir: Path) -> dict[str, Any]:
    """Write ``<CODE>-<VERSION>.bundle.json`` and its CQL; returns paths, counts and the action diff."""
    settings = load_settings()
    ex = run.export(settings, code, version)
    bundle, cql = run.write(ex, out_dir)
    exported_version = str(ex.bundle["entry"][0]["resource"]["version"])
    diff = run.diff_against_previous(settings, ex, code, exported_version)
    rows = [{"resource": f"{r['resourceType']}/{r['id']}", "title": r.get("title", ""), "version": r["version"],
             "url": r["url"]} for r in ex.resources()]
    create_table_artifact(key=f"fhir-export-{code.lower()}", table=rows,
                          description=f"{code} {exported_version}: {ex.counts()} → {bundle}")
    if diff is not None:
        lines = [f"# {code} {diff['from']} → {diff['to']}: PlanDefinition actions", ""]
        for kind in ("changed", "added", "removed"):
            lines += [f"## {kind} ({len(diff[kind])})", ""] + [f"- `{a}`" for a in diff[kind]] + [""]
        create_markdown_artifact(key=f"fhir-action-diff-{code.lower()}", markdown="\n".join(lines))
    get_run_logger().info("exported %s %s to %s (%s)", code, exported_version, bundle, ex.counts())
    return {"bundle": str(bundle), "cql": str(cql), "version": exported_version, "counts": ex.counts(),
            "diff": diff}


@task(name="validate-fhir-bundle")
def validate_task(bundle: str, cql: str, hapi: bool = True) -> dict[str, Any]:
    """HAPI's validator, the CQL-to-ELM translator and the CPG/reference checks; fails on any error."""
    v = run.validate(load_settings(), Path(bundle), Path(cql), hapi=hapi)
    create_markdown_artifact(key="fhir-validation", markdown="\n".join(
        [f"# {Path(bundle).name}", "", v.summary(), ""] + [f"- {e}" for e in (v.checks + v.cql_errors +
                                                                             v.hapi_errors)[:100]]))
    if not v.ok:
        raise ExportError(v.summary())
    get_run_logger().info(v.summary())
    return {"summary": v.summary(), "seconds": round(v.seconds, 1)}
