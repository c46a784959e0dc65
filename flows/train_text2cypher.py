"""Flow: train the text-to-Cypher model (and the paper's baseline), evaluate, promote if not worse."""

from __future__ import annotations

import random
from typing import Any

from prefect import flow
from pydantic import BaseModel

from dkg.errors import ModelError
from dkg.qa import registry, store
from dkg.qa.evaluate import Metrics
from dkg.settings import load_settings
from tasks.common import rename_run
from tasks.model import (
    evaluate_baseline_task,
    evaluate_current_task,
    evaluate_dkg_task,
    fresh_splits_task,
    linker_task,
    publish_task,
    splits_task,
    train_task,
)


class TrainReport(BaseModel):
    """What a retraining run did."""

    skipped: bool
    reason: str
    run: str | None = None
    dataset_version: str | None = None
    parameters: int | None = None
    seconds_per_epoch: float | None = None
    epochs_run: int | None = None
    with_dkg: Metrics | None = None
    without_dkg: Metrics | None = None
    current_accuracy: float | None = None
    promoted: bool = False
    training_data: str = ""
    """``fresh`` (a new generation from the current graph) or ``maintained`` (the saved dataset)."""


@flow(name="train-text2cypher", flow_run_name="train-text2cypher-{size}")
def train_text2cypher(size: str = "small", with_baseline: bool = True, force: bool = False,
                      epochs: int | None = None, max_train_items: int | None = None,
                      training_data: str = "fresh", baseline_epochs: int | None = None) -> TrainReport:
    """Retrain when the dataset version changed (or ``force``); promote when accuracy is not lower.

    Args:
        size: ``small`` (tests, quick runs) or ``paper`` (the paper's ~19M parameters), see conf/model.yaml.
        with_baseline: also train the baseline that writes answers without the DKG (Table 2, column b).
        force: train even when the promoted model was trained on the current dataset version.
        epochs: override the size's maximum number of epochs.
        max_train_items: train on a random sample of this many training items (default: the size's).
        training_data: ``fresh`` (default): train and evaluate on a fresh generation from the current graph;
            ``maintained``: on the saved dataset as the version watcher keeps it. Recorded in the run.
        baseline_epochs: the baseline's maximum number of epochs (default: as ``epochs``); the baseline only
            has to be measured, so a quick run may give it fewer.
    """
    if training_data not in ("fresh", "maintained"):
        raise ModelError(f"training_data must be 'fresh' or 'maintained', not {training_data!r}")
    settings = load_settings()
    manifest = store.load_manifest(settings.qa_path / "current")
    if manifest is None or not manifest.export:
        raise ModelError(f"no QA dataset in {settings.qa_path / 'current'}; run `dkg qa build` first")
    rename_run(f"train-text2cypher-{size} on {manifest.dataset_version}")
    current = registry.promoted(settings)
    if current is not None and current.dataset_version == manifest.dataset_version and not force:
        return TrainReport(skipped=True, reason=f"the promoted model already uses dataset {manifest.dataset_version}",
                           run=current.run, dataset_version=manifest.dataset_version)
    splits = fresh_splits_task() if training_data == "fresh" else splits_task(manifest.export)
    if settings.qa_max_test_items and len(splits["test"]) > settings.qa_max_test_items:  # a quick run (tests)
        splits["test"] = random.Random(13).sample(splits["test"], settings.qa_max_test_items)
    linker = linker_task()
    run = registry.new_run_dir(settings, size)
    cy = train_task(splits, linker, size, "cypher", run / "cypher", manifest.dataset_version, epochs,
                    max_train_items)
    histories = {"text2cypher": cy.history}
    without = None
    if with_baseline:
        base = train_task(splits, linker, size, "answer", run / "baseline", manifest.dataset_version,
                          baseline_epochs or epochs, max_train_items)
        histories["baseline"] = base.history
        without = evaluate_baseline_task(run / "baseline", splits["test"])
    current_acc, current_ok = evaluate_current_task(splits["test"])
    with_dkg, records = evaluate_dkg_task(run / "cypher", splits["test"])
    new_codes, known = _coverage(current, manifest.dataset_version, splits["test"], records, current_ok)
    ok, reason = registry.decide(with_dkg.accuracy, current_acc, new_codes, known)
    registry.write_run(run, {"dataset_version": manifest.dataset_version, "training_data": training_data,
                             "size": size, "cypher": cy.model_dump(),
                             "with_dkg": with_dkg.model_dump(),
                             "without_dkg": without.model_dump() if without else None,
                             "current_accuracy": current_acc, "promoted": ok, "reason": reason,
                             "errors": [r.model_dump() for r in records if not r.correct][:200]})
    if ok:
        registry.promote(settings, run, with_dkg.accuracy, manifest.dataset_version, reason)
    publish_task(with_dkg, without, reason, ok, histories, run)
    return TrainReport(skipped=False, reason=reason, run=str(run), dataset_version=manifest.dataset_version,
                       parameters=cy.parameters, seconds_per_epoch=cy.seconds_per_epoch, epochs_run=cy.epochs_run,
                       with_dkg=with_dkg, without_dkg=without, current_accuracy=current_acc, promoted=ok,
                       training_data=training_data)


def _coverage(current: registry.Promotion | None, dataset_version: str, test: list[Any], records: list[Any],
              current_ok: dict[str, bool]) -> tuple[list[str], tuple[int, int, int] | None]:
    """Guidelines of the dataset the promoted model was never trained on, and (items, new right, current right)
    on the test items of the guidelines both models know."""
    if current is None or not current_ok:
        return [], None
    had = registry.guidelines_of(current.dataset_version)
    new_codes = sorted(registry.guidelines_of(dataset_version) - had)
    if not new_codes:
        return [], None
    right = {r.id: r.correct for r in records}
    ids = [it.id for it in test if it.guideline in had]
    return new_codes, (len(ids), sum(right.get(i, False) for i in ids), sum(current_ok.get(i, False) for i in ids))


if __name__ == "__main__":
    import sys

    print(train_text2cypher(sys.argv[1] if len(sys.argv) > 1 else "small").model_dump_json(indent=1))
