"""The result both QA-dataset flows return (and `dkg qa build --json` prints)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from dkg.qa.build import LeakageReport
from dkg.qa.dataset import QAItem, summarize
from dkg.qa.store import Manifest
from dkg.qa.validate import StaleReport, ValidationReport


class QABuildResult(BaseModel):
    """Counts of the dataset as saved."""

    items: int
    valid: int
    stale: int
    stale_ids: list[str]
    regenerated: int
    added: int
    dropped: int
    by_type: dict[str, int]
    by_split: dict[str, int]
    by_guideline: dict[str, int]
    failures: int
    schema_ok: bool
    leakage: LeakageReport
    dataset_version: str | None
    export: str | None
    data_docs: str | None
    seconds: float


def result_of(items: Sequence[QAItem], report: ValidationReport, stale: StaleReport | None, leak: LeakageReport,
              manifest: Manifest | None, seconds: float) -> QABuildResult:
    s = summarize(items)
    return QABuildResult(items=s.items, valid=report.valid, stale=len(stale.stale) if stale else 0,
                         stale_ids=stale.stale if stale else [],
                         regenerated=stale.regenerated if stale else 0, added=stale.added if stale else 0,
                         dropped=stale.dropped if stale else 0, by_type=s.by_type, by_split=s.by_split,
                         by_guideline=s.by_guideline, failures=len(report.failures), schema_ok=report.schema_ok,
                         leakage=leak, dataset_version=manifest.dataset_version if manifest else None,
                         export=manifest.export if manifest else None, data_docs=report.data_docs,
                         seconds=round(seconds, 1))
