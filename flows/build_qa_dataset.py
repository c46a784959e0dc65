"""Flow: the CPG-QA dataset from the loaded graph — generate, validate on the graph, save, export."""

from __future__ import annotations

import time

from prefect import flow, get_run_logger

from dkg.qa import store
from dkg.qa.build import QABuildResult, generator_fingerprint, result_of, save_result, unchanged_result
from dkg.qa.validate import require_valid
from dkg.settings import load_settings
from flows.validate_qa_dataset import validate_qa_dataset
from tasks.qa import (
    fingerprint_task,
    generate_task,
    leakage_task,
    publish_task,
    publish_unchanged_task,
    save_task,
    validate_task,
    views_task,
)


@flow(name="build-qa-dataset", flow_run_name="build-qa-dataset")
def build_qa_dataset(fresh: bool = False) -> QABuildResult:
    """Build the dataset for every loaded guideline.

    With a saved dataset (and ``fresh`` false) this re-checks it on the current graph and
    regenerates only the stale items (the validation flow, as a subflow); otherwise it generates
    every item anew. Either way every query must return its expected node before anything is saved.
    When the graph, the generator and its configuration are those the saved dataset was validated
    against, nothing is run again (the saved report comes back with ``skipped``).
    """
    settings = load_settings()
    folder = settings.qa_path / "current"
    fingerprint = fingerprint_task()
    manifest = None if fresh else store.load_manifest(folder)
    if manifest is not None and manifest.generator != generator_fingerprint():
        get_run_logger().info("the saved dataset was written by another generator version: generating anew")
        manifest = None
    if manifest is not None:  # a saved dataset: unchanged, or re-checked (its items are read there, once)
        same = unchanged_result(folder, manifest, fingerprint)
        if same is not None:
            publish_unchanged_task(same)
            return same
        return validate_qa_dataset(regenerate=True)
    t0 = time.perf_counter()
    views = views_task()
    items = generate_task(views)
    filled, report = validate_task(items, settings.qa_path / "runs", sorted(views))
    leak = leakage_task(filled)
    require_valid(report, "generated QA dataset")
    manifest = save_task(filled, folder, settings.qa_path / "datasets", fingerprint)
    publish_task(report, None, leak, manifest)
    result = result_of(filled, report, None, leak, manifest, time.perf_counter() - t0)
    save_result(folder, result)
    return result


if __name__ == "__main__":
    build_qa_dataset()
