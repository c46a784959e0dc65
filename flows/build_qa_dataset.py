"""Flow: the CPG-QA dataset from the loaded graph — generate, validate on the graph, save, export."""

from __future__ import annotations

import time

from prefect import flow

from dkg.qa import store
from dkg.qa.build import QABuildResult, result_of
from dkg.qa.validate import require_valid
from dkg.settings import load_settings
from flows.validate_qa_dataset import validate_qa_dataset
from tasks.qa import generate_task, leakage_task, publish_task, save_task, validate_task, views_task


@flow(name="build-qa-dataset", flow_run_name="build-qa-dataset")
def build_qa_dataset(fresh: bool = False) -> QABuildResult:
    """Build the dataset for every loaded guideline.

    With a saved dataset (and ``fresh`` false) this re-checks it on the current graph and
    regenerates only the stale items (the validation flow, as a subflow); otherwise it generates
    every item anew. Either way every query must return its expected node before anything is saved.
    """
    settings = load_settings()
    folder = settings.qa_path / "current"
    if not fresh and store.load(folder) is not None:
        return validate_qa_dataset(regenerate=True)
    t0 = time.perf_counter()
    views = views_task()
    items = generate_task(views)
    filled, report = validate_task(items, settings.qa_path / "runs", sorted(views))
    leak = leakage_task(filled)
    require_valid(report, "generated QA dataset")
    manifest = save_task(filled, folder, settings.qa_path / "datasets")
    publish_task(report, None, leak, manifest)
    return result_of(filled, report, None, leak, manifest, time.perf_counter() - t0)


if __name__ == "__main__":
    build_qa_dataset()
