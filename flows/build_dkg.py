"""Flow: guideline PDF → edges → constraints → GX gate → load or update the DKG in Neo4j."""

from __future__ import annotations

from pathlib import Path

from prefect import flow
from pydantic import BaseModel

from flows.extract_constraints import extract_constraints
from flows.ingest_guideline import ingest_guideline
from tasks.graph import load_task, publish_diff_task, read_state_task, render_task


class BuildResult(BaseModel):
    """What was loaded."""

    guideline: str
    version: str
    loaded: bool
    message: str
    changed: int
    added: int
    removed: int


@flow(name="load-dkg", flow_run_name="load-{constraints_csv}")
def load_dkg(constraints_csv: str) -> BuildResult:
    """Load a validated constraint CSV (refuses any other) as a new version, updating in place."""
    state = read_state_task(Path(constraints_csv))
    report = load_task(state)
    publish_diff_task(report)
    render_task(report.code, Path(constraints_csv).with_name(f"{report.code}-{report.version}.svg"))
    d = report.diff
    return BuildResult(guideline=report.code, version=report.version, loaded=report.loaded, message=report.message,
                       changed=len(d.changed), added=len(d.added), removed=len(d.removed))


@flow(name="build-dkg", flow_run_name="build-{source}")
def build_dkg(source: str, out_dir: str | None = None) -> BuildResult:
    """The whole pipeline for one guideline PDF, each stage a subflow visible in the UI."""
    ingested = ingest_guideline(source, out_dir)
    extracted = extract_constraints(ingested.edges_csv)
    return load_dkg(extracted.constraints_csv)


if __name__ == "__main__":
    import sys

    build_dkg(sys.argv[1])
