"""QA-dataset tasks: read the graph, generate, run every query, find stale items, save, publish."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.artifacts import create_link_artifact, create_markdown_artifact, create_table_artifact

from dkg.qa import build, store
from dkg.qa.config import load_config
from dkg.qa.dataset import GuidelineView, QAItem
from dkg.qa.validate import (
    StaleReport,
    ValidationReport,
    regenerate,
    run_items,
    stale_items,
    validate_dataset,
)
from dkg.settings import load_settings
from tasks.common import retry_transient


@task(name="read-graph-for-qa", retries=3, retry_delay_seconds=[2, 5, 10], retry_condition_fn=retry_transient)
def views_task() -> dict[str, GuidelineView]:
    """Every loaded guideline with its decision paths."""
    return build.graph_views(load_settings())


@task(name="graph-fingerprint", retries=3, retry_delay_seconds=[2, 5, 10], retry_condition_fn=retry_transient)
def fingerprint_task() -> str:
    """Digest of the loaded versions, generator code and config: unchanged means the dataset is still valid."""
    return build.graph_fingerprint(load_settings())


@task(name="load-saved-dataset")
def load_saved_task(folder: Path) -> list[QAItem] | None:
    return store.load(folder)


@task(name="generate-qa-items")
def generate_task(views: dict[str, GuidelineView]) -> list[QAItem]:
    """A fresh dataset for the guidelines as loaded now."""
    return build.generate(views)


@task(name="find-stale-items", retries=3, retry_delay_seconds=[2, 5, 10], retry_condition_fn=retry_transient)
def stale_task(items: list[QAItem]) -> list[QAItem]:
    """Items whose query no longer returns their recorded answer on the current graph."""
    return stale_items(items, run_items(load_settings(), items), load_config())


@task(name="regenerate-stale-items")
def regenerate_task(items: list[QAItem], stale: list[QAItem], views: dict[str, GuidelineView],
                    fresh: list[QAItem]) -> tuple[list[QAItem], StaleReport]:
    return regenerate(items, stale, views, fresh, load_config())


@task(name="validate-qa-dataset", retries=3, retry_delay_seconds=[2, 5, 10], retry_condition_fn=retry_transient)
def validate_task(items: list[QAItem], run_dir: Path, codes: list[str]) -> tuple[list[QAItem], ValidationReport]:
    """Every query read-only on the graph, then the GX schema suite."""
    return validate_dataset(load_settings(), items, load_config(), run_dir, codes)


@task(name="check-split-leakage")
def leakage_task(items: list[QAItem]) -> build.LeakageReport:
    return build.leakage(items)


@task(name="save-qa-dataset")
def save_task(items: list[QAItem], folder: Path, export_root: Path, fingerprint: str | None = None) -> store.Manifest:
    """JSONL + manifest, and a DatasetDict export named by the dataset version."""
    manifest = store.save(items, folder, fingerprint, build.generator_fingerprint())
    target = store.export_hf(items, export_root, manifest.dataset_version)
    manifest = manifest.model_copy(update={"export": str(target)})
    (folder / "manifest.json").write_text(manifest.model_dump_json(indent=1), encoding="utf-8")
    return manifest


@task(name="publish-qa-unchanged")
def publish_unchanged_task(result: build.QABuildResult) -> None:
    """The summary artifact of a run that had nothing to do."""
    create_markdown_artifact(key="qa-validation-summary",
                             markdown=f"# QA dataset {result.dataset_version}\n\n- unchanged: {result.reason}\n"
                                      f"- items {result.items}, valid {result.valid}")


@task(name="publish-qa-report")
def publish_task(report: ValidationReport, stale: StaleReport | None, leak: build.LeakageReport,
                 manifest: store.Manifest | None) -> None:
    """Counts per type and guideline, stale items, failures and the GX Data Docs link."""
    rows = [{"type": t, "items": c["items"], "valid": c["valid"]} for t, c in report.by_type.items()]
    rows += [{"guideline": g, "items": c["items"], "valid": c["valid"]} for g, c in report.by_guideline.items()]
    create_table_artifact(key="qa-validation-counts", table=rows,
                          description=f"{report.valid}/{report.items} queries return their expected node")
    lines = [f"# QA dataset {manifest.dataset_version if manifest else ''}", "",
             f"- items {report.items}, valid {report.valid}, failures {len(report.failures)}",
             f"- GX schema suite: {'passed' if report.schema_ok else 'FAILED: ' + ' | '.join(report.schema_failed)}",
             f"- leakage: shared decisions {leak.shared_decisions}, shared templates {leak.shared_templates}, "
             f"identical questions {leak.identical_questions}, max trigram Jaccard {leak.max_trigram_jaccard}"]
    if stale is not None:
        lines += [f"- stale {len(stale.stale)} (by guideline {stale.by_guideline}): regenerated {stale.regenerated}, "
                  f"dropped {stale.dropped}; new items {stale.added}", f"- {stale.summary()}"]
        if stale.reasons:
            lines += ["", "## Why items changed", "", "| reason | items |", "|---|---|"]
            lines += [f"| {r} | {n} |" for r, n in stale.reasons.items()]
        if stale.stale:
            lines += ["", "## Stale items (first 30)", ""] + [f"- `{s}`" for s in stale.stale[:30]]
    if report.failures:
        lines += ["", "## Failures (first 30)", ""] + [f"- `{f.id}` {f.type} {f.guideline}: {f.reason}"
                                                       for f in report.failures[:30]]
    create_markdown_artifact(key="qa-validation-summary", markdown="\n".join(lines))
    if report.data_docs:
        create_link_artifact(key="qa-gx-data-docs", link=Path(report.data_docs).resolve().as_uri(),
                             link_text="GX Data Docs for the QA dataset")
