"""Flow: edges.csv → constraints.csv (CoreNLP + rules) → Great Expectations gate."""

from __future__ import annotations

from pathlib import Path

from prefect import flow
from pydantic import BaseModel

from tasks.common import rename_run
from tasks.constraints import build_task, parse_task, read_edges_task, texts_to_parse, validate_task


class ExtractResult(BaseModel):
    """Where the validated constraint CSV is, and what the gate said."""

    constraints_csv: str
    rows: int
    expectations: int
    data_docs: str | None


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
    out_csv = build_task(rows, edges, parses, run_dir / "constraints.csv", paper_format)
    n = len(rows)
    expected = (int(n * (1 - row_tolerance)), int(n * (1 + row_tolerance)) + (1 if row_tolerance else 0))
    if paper_format:
        return ExtractResult(constraints_csv=str(out_csv), rows=n, expectations=0, data_docs=None)
    report = validate_task(out_csv, run_dir, expected)
    return ExtractResult(constraints_csv=str(out_csv), rows=report.rows, expectations=report.evaluated,
                         data_docs=report.data_docs)


if __name__ == "__main__":
    import sys

    extract_constraints(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
