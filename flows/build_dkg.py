"""Flow: guideline PDF → edges → constraints → GX gate → load or update the DKG in Neo4j."""

from __future__ import annotations

from pathlib import Path

from prefect import flow
from pydantic import BaseModel

from dkg.settings import load_settings
from flows.extract_constraints import extract_constraints
from flows.ingest_guideline import ingest_guideline
from tasks.common import rename_run
from tasks.graph import current_sha_task, load_task, publish_diff_task, read_state_task, render_task
from tasks.runners import configured_runner


class BuildResult(BaseModel):
    """What was loaded."""

    guideline: str
    version: str
    loaded: bool
    message: str
    changed: int
    added: int
    removed: int


@flow(name="load-dkg", flow_run_name="load {constraints_csv}")
def load_dkg(constraints_csv: str) -> BuildResult:
    """Load a validated constraint CSV (refuses any other) as a new version, updating in place."""
    state = read_state_task(Path(constraints_csv))
    rename_run(f"load {state.code} {state.version}", [f"guideline:{state.code}"])
    report = load_task(Path(constraints_csv))
    publish_diff_task(report)
    render_task(report.code, Path(constraints_csv).with_name(f"{report.code}-{report.version}.svg"))
    d = report.diff
    return BuildResult(guideline=report.code, version=report.version, loaded=report.loaded, message=report.message,
                       changed=len(d.changed), added=len(d.added), removed=len(d.removed))


@flow(name="build-dkg", flow_run_name="build {source}")
def build_dkg(source: str, out_dir: str | None = None, force: bool = False) -> BuildResult:
    """The whole pipeline for one guideline PDF, each stage a subflow visible in the UI.

    A PDF whose bytes the graph already holds as the guideline's current version stops after the
    (cached) ingestion: nothing is extracted, validated or written again.

    Args:
        source: a local PDF path or an http(s) URL.
        out_dir: folder for the run's CSVs (default: a new run folder).
        force: extract and load even when the graph already holds this PDF.
    """
    runner = configured_runner(load_settings())  # pages on the Dask cluster when DKG_DASK_ADDRESS is set
    ingest = ingest_guideline.with_options(task_runner=runner) if runner is not None else ingest_guideline
    ingested = ingest(source, out_dir)
    label = f"{ingested.guideline or 'guideline'} {ingested.version or ''}".strip()
    rename_run(f"build {label}", [f"guideline:{ingested.guideline}"] if ingested.guideline else None)
    if not force and ingested.guideline and ingested.sha256 and \
            current_sha_task(ingested.guideline) == ingested.sha256:
        return BuildResult(guideline=ingested.guideline, version=ingested.version or "", loaded=False,
                           message=f"{label} is already the current version (same PDF); nothing to do",
                           changed=0, added=0, removed=0)
    extracted = extract_constraints(ingested.edges_csv)
    return load_dkg(extracted.constraints_csv)


if __name__ == "__main__":
    import sys

    build_dkg(sys.argv[1])
