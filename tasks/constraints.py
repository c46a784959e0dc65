"""Constraint tasks: read edges, parse with CoreNLP (cached, retried), build, write, GX gate."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.artifacts import create_link_artifact, create_table_artifact
from prefect.logging import get_run_logger

from dkg.constraints.extract import prepare
from dkg.constraints.parse import Parse, ParseCache, parse_texts
from dkg.constraints.table import box_texts, build_rows, read_edges, write_rows
from dkg.constraints.vocabulary import load_vocabulary
from dkg.settings import load_settings
from dkg.validate import GateReport, validate_constraint_csv
from tasks.common import retry_transient


@task(name="read-edges")
def read_edges_task(edges_csv: Path) -> list[dict[str, str]]:
    """Rows of the edge CSV (bad files fail at once, naming file and row)."""
    return read_edges(edges_csv)


@task(name="parse-box-texts", retries=3, retry_delay_seconds=[5, 15, 30], retry_condition_fn=retry_transient)
def parse_task(texts: list[str]) -> dict[str, Parse]:
    """Constituency parses of the texts; a sentence parsed before comes from the cache."""
    settings = load_settings()
    cache = ParseCache(settings.state_path / "cache" / "corenlp.sqlite")
    try:
        parses = parse_texts(settings, texts, cache)
        get_run_logger().info("parsed %d texts: %d from cache, %d by CoreNLP", len(texts), cache.hits, cache.misses)
    finally:
        cache.close()
    return dict(zip(texts, parses, strict=True))


@task(name="build-constraint-csv")
def build_task(rows: list[dict[str, str]], edges_csv: Path, parses: dict[str, Parse], out_csv: Path,
               paper: bool = False) -> Path:
    """Extract each box's constraints and write the constraint CSV."""
    vocab = load_vocabulary()
    boxes = box_texts(rows, edges_csv.with_name("graph.json"))
    return write_rows(build_rows(rows, boxes, vocab, parses.get, paper=paper), out_csv)


def texts_to_parse(rows: list[dict[str, str]]) -> list[str]:
    """The prepared text of every box in the edge rows (what CoreNLP sees)."""
    vocab = load_vocabulary()
    seen = {r[f"{s}_plain"] for r in rows for s in ("head", "tail")}
    return sorted({prepare(vocab, t) for t in seen if t})


@task(name="gx-validate-constraints")
def validate_task(csv_path: Path, run_dir: Path, expected_rows: tuple[int, int] | None) -> GateReport:
    """Great Expectations gate; a failing CSV is quarantined and the run fails here."""
    settings = load_settings()
    report = validate_constraint_csv(csv_path, run_dir, load_vocabulary(), settings.state_path / "quarantine",
                                     expected_rows)
    if report.data_docs:
        create_link_artifact(key="gx-data-docs", link=Path(report.data_docs).resolve().as_uri(),
                             link_text="GX Data Docs for the constraint CSV",
                             description=f"{report.evaluated} expectations, all passed")
    create_table_artifact(key="gx-constraint-gate", table=[{
        "csv": report.csv, "rows": report.rows, "expectations": report.evaluated, "success": report.success,
    }])
    return report
