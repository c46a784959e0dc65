"""Flow: poll every configured guideline source; run the DKG pipeline only for what changed."""

from __future__ import annotations

from pathlib import Path

from prefect import flow, task
from prefect.artifacts import create_table_artifact
from prefect.logging import get_run_logger
from pydantic import BaseModel

from dkg.settings import load_settings
from dkg.watch import Detected, SeenState, Source, check, commit, load_sources, load_state
from flows.build_dkg import build_dkg
from tasks.common import retry_transient


class WatchReport(BaseModel):
    """What one poll found and did."""

    checked: int
    changed: list[Detected]
    loaded: list[str]


@task(name="check-source", task_run_name="check-{source.name}", retries=3, retry_delay_seconds=[5, 30, 120],
      retry_condition_fn=retry_transient)
def check_task(source: Source) -> list[Detected]:
    """New documents of one source."""
    settings = load_settings()
    state = load_state(settings.state_path).get(source.name)
    return check(source, state or SeenState(), settings.state_path / "watch" / source.name)


@flow(name="watch-guidelines", flow_run_name="watch-guidelines")
def watch_guidelines(sources_file: str = "conf/sources.yaml", full_pipeline: bool = False) -> WatchReport:
    """Check each source; for a new version run build-dkg (ingest → extract → gate → load), then remember it.

    Args:
        sources_file: YAML with a ``sources`` list (name, kind: folder|url, location, pattern).
        full_pipeline: run the whole guideline-pipeline (QA dataset, retraining) instead of build-dkg.
    """
    settings = load_settings()
    sources = load_sources(Path(sources_file))
    changed: list[Detected] = []
    loaded: list[str] = []
    for src in sources:
        for found in check_task(src):
            changed.append(found)
            if full_pipeline:
                from flows.guideline_pipeline import guideline_pipeline

                result = guideline_pipeline(found.path).graph
            else:
                result = build_dkg(found.path)
            commit(settings.state_path, found)  # only after the pipeline succeeded
            loaded.append(f"{result.guideline} {result.version}")
    get_run_logger().info("%d source(s) checked, %d new document(s)", len(sources), len(changed))
    create_table_artifact(key="watch-poll", table=[
        {"source": d.source, "version": d.version or "", "reason": d.reason, "file": d.path} for d in changed
    ] or [{"source": "-", "version": "", "reason": "no change", "file": ""}])
    return WatchReport(checked=len(sources), changed=changed, loaded=loaded)


if __name__ == "__main__":
    watch_guidelines()
