"""Flow: edges.csv → constraints.csv (CoreNLP + rules) → Great Expectations gate."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from prefect import flow
from prefect.exceptions import FlowPauseTimeout
from prefect.flow_runs import pause_flow_run
from prefect.input import RunInput
from prefect.logging import get_run_logger
from pydantic import BaseModel, Field

from dkg.errors import ConstraintError
from dkg.settings import load_settings
from tasks.common import rename_run
from tasks.constraints import (
    build_task,
    decide_attributes_task,
    parse_task,
    publish_pending_task,
    read_edges_task,
    texts_to_parse,
    validate_task,
)


class AttributeDecision(RunInput):
    """A data engineer's answer to new attributes (the form the Prefect UI shows on the paused run)."""

    action: Literal["approve_all", "approve_with_changes", "reject"] = Field(
        default="approve_all", description="approve every new attribute; approve after the renames and merges "
                                           "below; or reject them all (nothing is loaded)")
    rename: dict[str, str] = Field(default_factory=dict, description="new attribute → the name it should have")
    merge: dict[str, str] = Field(default_factory=dict,
                                  description="new attribute → an existing attribute it is the same as")
    reject: list[str] = Field(default_factory=list, description="new attributes to refuse (the run then fails)")


class ExtractResult(BaseModel):
    """Where the validated constraint CSV is, and what the gate said."""

    constraints_csv: str
    rows: int
    expectations: int
    data_docs: str | None
    registry_version: int = 0
    approved: list[str] = []


@flow(name="extract-constraints", flow_run_name="extract {edges_csv}", log_prints=True)
def extract_constraints(edges_csv: str, out_dir: str | None = None, paper_format: bool = False,
                        row_tolerance: float = 0.0) -> ExtractResult:
    """Extract patient constraints for every edge, then validate the CSV before anything loads it.

    Args:
        edges_csv: an ``edges.csv`` written by the ingestion flow (``graph.json`` beside it adds footnotes).
        out_dir: folder for ``constraints.csv`` and the GX project (default: beside the edges).
        paper_format: write the paper's comma-separated constraints instead of JSON lists.
        row_tolerance: accepted deviation of the row count from the edge count (0: exactly equal).
    """
    edges = Path(edges_csv)
    run_dir = Path(out_dir) if out_dir else edges.parent
    rows = read_edges_task(edges)
    if rows and rows[0].get("guideline"):
        rename_run(f"extract {rows[0]['guideline']} {rows[0].get('version', '')}".strip(),
                   [f"guideline:{rows[0]['guideline']}"])
    parses = parse_task(texts_to_parse(rows))
    built = build_task(rows, edges, parses, run_dir / "constraints.csv", paper_format)
    approved: list[str] = []
    if built.pending:
        label = f"{rows[0].get('guideline', '')} {rows[0].get('version', '')}".strip() or str(edges)
        approved = _approve(built.pending, label)
        built = build_task(rows, edges, parses, run_dir / "constraints.csv", paper_format)
    out_csv = Path(built.csv)
    n = len(rows)
    expected = (int(n * (1 - row_tolerance)), int(n * (1 + row_tolerance)) + (1 if row_tolerance else 0))
    if paper_format:
        return ExtractResult(constraints_csv=str(out_csv), rows=n, expectations=0, data_docs=None,
                             registry_version=built.registry_version, approved=approved)
    report = validate_task(out_csv, run_dir, expected)
    return ExtractResult(constraints_csv=str(out_csv), rows=report.rows, expectations=report.evaluated,
                         data_docs=report.data_docs, registry_version=built.registry_version, approved=approved)


def _approve(pending: list[str], label: str) -> list[str]:
    """Ask for (or, with auto-approval, give) a decision on new attributes; nothing loads before it."""
    settings = load_settings()
    publish_pending_task(pending, label)
    if settings.auto_approve_attributes:
        return decide_attributes_task(pending, {"action": "approve_all"}, "DKG_AUTO_APPROVE_ATTRIBUTES")
    get_run_logger().warning(
        "%s brings %d attribute(s) the registry has not approved (%s): the run pauses for a decision in the Prefect "
        "UI (artifact 'pending-attributes'), or `dkg vocab approve --all --resume`", label, len(pending),
        ", ".join(pending))
    try:
        answer = pause_flow_run(wait_for_input=AttributeDecision, timeout=settings.approval_timeout_s,
                                key="attribute-approval")
    except FlowPauseTimeout as e:
        raise ConstraintError(f"{label}: no decision on the new attribute(s) {', '.join(pending)} within "
                              f"{settings.approval_timeout_s} s; nothing was loaded") from e
    decision = {"action": answer.action, "rename": answer.rename, "merge": answer.merge, "reject": answer.reject}
    return decide_attributes_task(pending, decision, "a data engineer (Prefect UI)")


if __name__ == "__main__":
    import sys

    extract_constraints(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
