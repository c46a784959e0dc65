"""Constraint tasks: read edges, parse with CoreNLP (cached, retried), build, write, GX gate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import task
from prefect.artifacts import create_link_artifact, create_markdown_artifact, create_table_artifact
from prefect.concurrency.sync import concurrency
from prefect.logging import get_run_logger
from pydantic import BaseModel

from dkg.constraints.extract import prepare
from dkg.constraints.parse import Parse, ParseCache, parse_texts
from dkg.constraints.registry import (
    Registry,
    apply_decision,
    pending_markdown,
    read_registry,
    registry_path,
    write_registry,
)
from dkg.constraints.table import box_texts, build_rows, read_edges, write_rows
from dkg.constraints.vocabulary import base_seed, load_vocabulary
from dkg.settings import load_settings
from dkg.validate import GateReport, validate_constraint_csv
from tasks.common import CORENLP_LIMIT, retry_transient


@task(name="read-edges")
def read_edges_task(edges_csv: Path) -> list[dict[str, str]]:
    """Rows of the edge CSV (bad files fail at once, naming file and row)."""
    return read_edges(edges_csv)


@task(name="parse-box-texts", retries=3, retry_delay_seconds=[5, 15, 30], retry_condition_fn=retry_transient)
def parse_task(texts: list[str]) -> dict[str, Parse]:
    """Constituency parses of the texts; a sentence parsed before comes from the cache."""
    settings = load_settings()
    cache = ParseCache(settings.cache_path / "corenlp.sqlite")
    try:
        with concurrency(CORENLP_LIMIT, occupy=1):  # a slot of the shared server (no limit set: no wait)
            parses = parse_texts(settings, texts, cache)
        get_run_logger().info("parsed %d texts: %d from cache, %d by CoreNLP", len(texts), cache.hits, cache.misses)
    finally:
        cache.close()
    return dict(zip(texts, parses, strict=True))


class BuildOutput(BaseModel):
    """The written constraint CSV and the registry attributes it uses that are not approved yet."""

    csv: str
    pending: list[str]
    registry_version: int


@task(name="build-constraint-csv")
def build_task(rows: list[dict[str, str]], edges_csv: Path, parses: dict[str, Parse], out_csv: Path,
               paper: bool = False) -> BuildOutput:
    """Extract each box's constraints (open vocabulary included) and write the constraint CSV.

    Attributes met for the first time are proposed to the registry (saved as a new registry
    version); the CSV then names them, and the GX gate refuses it until they are approved.
    """
    settings = load_settings()
    vocab = load_vocabulary()
    path = registry_path(settings)
    registry = read_registry(path, base_seed())
    before = registry.model_dump_json()
    boxes = box_texts(rows, edges_csv.with_name("graph.json"))
    written = write_rows(build_rows(rows, boxes, vocab, parses.get, paper=paper, registry=registry), out_csv)
    if registry.model_dump_json() != before:
        write_registry(registry, path)
        get_run_logger().info("registry version %d: %d attribute(s) wait for approval", registry.version,
                              len(registry.pending()))
    used = _attributes_in(written)
    pending = sorted(a.name for a in registry.pending() if a.name in used)
    return BuildOutput(csv=str(written), pending=pending, registry_version=registry.version)


def _attributes_in(csv_path: Path) -> set[str]:
    import csv as _csv
    import json as _json

    from dkg.constraints.models import attrs_of, items_from_json

    out: set[str] = set()
    with open(csv_path, encoding="utf-8", newline="") as fh:
        for row in _csv.DictReader(fh):
            for side in ("head", "tail"):
                cell = row.get(f"{side}_constraints") or ""
                if cell.startswith("["):
                    out |= attrs_of(items_from_json(_json.loads(cell)))
    return out


@task(name="publish-pending-attributes")
def publish_pending_task(names: list[str], label: str) -> str:
    """A markdown artifact listing the attributes that wait for a decision (type, values, boxes, page)."""
    settings = load_settings()
    registry = read_registry(registry_path(settings), base_seed())
    shown = Registry(version=registry.version,
                     attributes={n: a for n, a in registry.attributes.items() if n in set(names)})
    text = pending_markdown(shown, f"New attributes in {label}")
    create_markdown_artifact(key="pending-attributes", markdown=text,
                             description=f"{len(names)} attribute(s) wait for approval")
    return text


@task(name="decide-attributes")
def decide_attributes_task(names: list[str], decision: dict[str, Any], who: str) -> list[str]:
    """Apply a decision to the registry (merges, renames, rejections, then approval) and save it."""
    settings = load_settings()
    path = registry_path(settings)
    registry = read_registry(path, base_seed())
    return apply_decision(registry, names, decision, path, who)


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
