"""Flow: re-check the saved QA dataset on the current graph; stale items are regenerated."""

from __future__ import annotations

import time

from prefect import flow, get_run_logger

from dkg.errors import DataValidationError
from dkg.qa.build import QABuildResult, result_of, save_result
from dkg.qa.validate import StaleReport, ambiguous_items, require_valid, without_removed
from dkg.settings import load_settings
from tasks.qa import (
    fingerprint_task,
    generate_task,
    leakage_task,
    load_saved_task,
    publish_task,
    regenerate_task,
    save_task,
    stale_task,
    validate_task,
    views_task,
)


@flow(name="validate-qa-dataset", flow_run_name="validate-qa-dataset")
def validate_qa_dataset(regenerate: bool = True) -> QABuildResult:
    """Run every saved item's query on the graph; report stale items and, by default, regenerate them.

    Args:
        regenerate: rewrite stale items (and add items for new decisions) and save the result;
            with False the flow only reports, and fails if anything is stale.
    """
    t0 = time.perf_counter()
    settings = load_settings()
    folder = settings.qa_path / "current"
    fingerprint = fingerprint_task()
    items = load_saved_task(folder)
    if items is None:
        raise DataValidationError(f"no QA dataset in {folder}; run `dkg qa build` first", None, None)
    views = views_task()
    stale = stale_task(items)
    report_stale: StaleReport | None = None
    if stale and regenerate:
        items, report_stale = regenerate_task(items, stale, views, generate_task(views))
    elif stale:
        report_stale = StaleReport(stale=[s.id for s in stale], regenerated=0, dropped=0, added=0, by_guideline={})
    else:
        report_stale = StaleReport(stale=[], regenerated=0, dropped=0, added=0, by_guideline={})
    if regenerate:
        items, gone = without_removed(items, views)
        report_stale = report_stale.with_removed(gone)
    run_dir = settings.qa_path / "runs"
    filled, report = validate_task(items, run_dir, sorted(views))
    ambiguous = [it.id for it in ambiguous_items(filled)]
    if ambiguous and regenerate:  # asked of every guideline, now answered by two: they go, the named ones stay
        report_stale = report_stale.with_ambiguous(ambiguous)
        items = [it for it in items if it.id not in set(ambiguous)]
        filled, report = validate_task(items, run_dir, sorted(views))
    get_run_logger().info("QA dataset: %s", report_stale.summary())
    leak = leakage_task(filled)
    manifest = None
    if regenerate or not stale:
        require_valid(report, str(folder))
        manifest = save_task(filled, folder, settings.qa_path / "datasets", fingerprint)
    publish_task(report, report_stale, leak, manifest)
    if stale and not regenerate:
        require_valid(report, str(folder))
    result = result_of(filled, report, report_stale, leak, manifest, time.perf_counter() - t0)
    if manifest is not None:
        save_result(folder, result)
    return result


if __name__ == "__main__":
    validate_qa_dataset()
