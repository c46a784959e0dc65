"""Serve every dkg flow with its schedule from one process (single-machine set-up).

Run ``.venv/bin/python deployments/serve.py`` with ``PREFECT_API_URL`` pointing at a
``prefect server start`` (``make ui``); the deployments then show in the UI and can be
triggered there. ``prefect.yaml`` holds the same deployments for work-pool set-ups.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prefect import serve
from prefect.deployments.runner import RunnerDeployment

from dkg.settings import load_settings
from flows.build_dkg import build_dkg, load_dkg
from flows.build_qa_dataset import build_qa_dataset
from flows.export_fhir import export_fhir
from flows.extract_constraints import extract_constraints
from flows.guideline_pipeline import guideline_pipeline, refresh_qa_and_model
from flows.healthcheck import healthcheck
from flows.ingest_guideline import ingest_guideline
from flows.ingest_web_guideline import ingest_web_guideline
from flows.train_text2cypher import train_text2cypher
from flows.validate_qa_dataset import validate_qa_dataset
from flows.watch_guidelines import watch_guidelines


def build_deployments() -> list[RunnerDeployment]:
    """The deployments served on one machine, with their schedules.

    The watcher polls ``DKG_WATCH_SOURCES`` on the cron ``DKG_WATCH_CRON`` and runs the whole chain
    (DKG, QA dataset, retraining) for what changed.
    """
    settings = load_settings()
    # Called synchronously, to_deployment returns the deployment itself (not a coroutine).
    return [
        cast(RunnerDeployment, healthcheck.to_deployment(
            name="healthcheck-every-15min", interval=900, tags=["dkg", "ops"]
        )),
        cast(RunnerDeployment, ingest_guideline.to_deployment(name="ingest-guideline", tags=["dkg", "ingest"])),
        cast(RunnerDeployment, extract_constraints.to_deployment(
            name="extract-constraints", tags=["dkg", "constraints", "gx"])),
        cast(RunnerDeployment, build_dkg.to_deployment(name="build-dkg", tags=["dkg", "pipeline"])),
        cast(RunnerDeployment, load_dkg.to_deployment(name="load-dkg", tags=["dkg", "graph"])),
        cast(RunnerDeployment, watch_guidelines.to_deployment(
            name="watch-guidelines-nightly", cron=settings.watch_cron, tags=["dkg", "watcher"],
            parameters={"sources_file": str(settings.watch_sources), "full_pipeline": True})),
        cast(RunnerDeployment, build_qa_dataset.to_deployment(name="build-qa-dataset", tags=["dkg", "qa", "gx"])),
        cast(RunnerDeployment, validate_qa_dataset.to_deployment(
            name="validate-qa-dataset", tags=["dkg", "qa", "gx"])),
        cast(RunnerDeployment, train_text2cypher.to_deployment(name="train-text2cypher", tags=["dkg", "qa", "model"])),
        cast(RunnerDeployment, ingest_web_guideline.to_deployment(name="ingest-web-guideline",
                                                                  tags=["dkg", "web", "rag"])),
        cast(RunnerDeployment, export_fhir.to_deployment(name="export-fhir", tags=["dkg", "fhir"])),
        cast(RunnerDeployment, guideline_pipeline.to_deployment(name="guideline-pipeline", tags=["dkg", "pipeline"])),
        cast(RunnerDeployment, refresh_qa_and_model.to_deployment(name="refresh-qa-and-model",
                                                                  tags=["dkg", "qa", "model"])),
    ]


def main() -> None:
    """Serve the deployments until interrupted."""
    serve(*build_deployments())


if __name__ == "__main__":
    main()
