"""Graph tasks: read a validated CSV into a version state, load it atomically, publish the diff."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.artifacts import create_link_artifact, create_markdown_artifact, create_table_artifact

from dkg.graph import loader
from dkg.graph.model import VersionState, read_version
from dkg.settings import load_settings
from tasks.common import guideline_write_slot, retry_transient


@task(name="read-validated-csv", retries=3, retry_delay_seconds=[2, 5, 10], retry_condition_fn=retry_transient)
def read_state_task(constraints_csv: Path) -> VersionState:
    """The version as the graph should hold it (refuses a CSV the GX gate has not passed)."""
    settings = load_settings()
    # box identities follow the version the graph holds now
    return read_version(constraints_csv, lambda code: loader.current_state(settings, code))


@task(name="current-version-sha", retries=3, retry_delay_seconds=[2, 5, 10], retry_condition_fn=retry_transient)
def current_sha_task(code: str) -> str | None:
    """The sha256 of the PDF behind the guideline's current version in the graph (None: not loaded)."""
    rows = [r for r in loader.current_versions(load_settings()) if r["code"] == code]
    return str(rows[0]["sha256"]) if rows else None


@task(name="load-version", retries=3, retry_delay_seconds=[2, 10, 30], retry_condition_fn=retry_transient)
def load_task(source: VersionState | Path) -> loader.LoadReport:
    """Apply the difference to Neo4j in one transaction and record every change.

    Given the validated CSV, the state is rebuilt inside the load's transaction, under the
    guideline's lock in Neo4j: runs of one guideline on several workers are serialised there.
    """
    with guideline_write_slot(loader.code_of(source)):
        return loader.load_version(load_settings(), source)


@task(name="render-graph")
def render_task(code: str, out: Path) -> Path:
    """Draw the loaded version and attach a link to the picture to the run."""
    from dkg.graph.render import render

    path = render(load_settings(), code, out)
    create_link_artifact(key=f"graph-picture-{code.lower()}", link=path.resolve().as_uri(),
                         link_text=f"{code} decision graph (SVG)")
    return path


@task(name="publish-graph-diff")
def publish_diff_task(report: loader.LoadReport) -> None:
    """The change list and the decision paths whose recommendation changed, as artifacts."""
    d = report.diff
    rows = [{"change": kind, "uid": c.uid, "page": c.page, "before": c.text_before or "", "after": c.text_after or "",
             "constraints_before": str(c.constraints_before or ""), "constraints_after": str(c.constraints_after or "")}
            for kind, items in (("changed", d.changed), ("added", d.added), ("removed", d.removed)) for c in items]
    create_table_artifact(key=f"graph-diff-{report.code.lower()}", table=rows or [{"change": "none"}],
                          description=report.message)
    lines = [f"# {report.code} {d.from_version or '∅'} → {d.to_version}", "", report.message, "",
             "## Decision paths whose recommendation changed", ""]
    lines += [f"- **{p['page']}** {p['condition']}: {p['constraints_before']} → {p['constraints_after']} "
              f"(leads to: {'; '.join(p['recommendation'])})" for p in d.changed_paths] or ["- none"]
    create_markdown_artifact(key=f"changed-paths-{report.code.lower()}", markdown="\n".join(lines))
