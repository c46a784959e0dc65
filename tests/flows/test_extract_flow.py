"""The constraint flow under a Prefect test API: artifacts on success, quarantine on failure."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

import pytest

from dkg.pdf import ingest_pdf
from dkg.pdf.export import write_outputs
from dkg.services import neo4j
from dkg.settings import Settings
from tests.pdf_support import reference_pdfs

pytestmark = [pytest.mark.services, pytest.mark.slow]


def _edges(tmp_path: Path) -> Path:
    pdf = next(p for p in reference_pdfs() if p.stem == "BONE-2.2023")
    csv_path, _ = write_outputs(ingest_pdf(pdf), tmp_path)
    return csv_path


def _artifact_keys(*wanted: str) -> set[str]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    async def keys() -> set[str]:
        # filtered by key: unfiltered, the API returns one page, and the session's other tests fill it
        async with get_client() as client:
            by_key = ArtifactFilter(key=ArtifactFilterKey(any_=list(wanted)))
            found = await client.read_artifacts(artifact_filter=by_key)
            return {a.key for a in found if a.key}

    return asyncio.run(keys())


def test_flow_validates_and_links_data_docs(services: Settings, prefect_harness: None, tmp_path: Path) -> None:
    from flows.extract_constraints import extract_constraints

    result = extract_constraints(str(_edges(tmp_path)))
    assert result.expectations >= 15
    assert result.data_docs and Path(result.data_docs).exists()
    assert {"gx-data-docs", "gx-constraint-gate"} <= _artifact_keys("gx-data-docs", "gx-constraint-gate")
    rows = list(csv.DictReader(Path(result.constraints_csv).read_text(encoding="utf-8").splitlines()))
    assert list(rows[0])[:4] == ["head", "head_constraints", "tail", "tail_constraints"]
    decisions = [r for r in rows if r["tail_kind"] == "decision"]
    assert decisions and all(json.loads(r["tail_constraints"]) for r in decisions)


def test_bad_edges_fail_the_flow_and_the_graph_stays_unchanged(services: Settings, prefect_harness: None,
                                                                tmp_path: Path) -> None:
    from flows.extract_constraints import extract_constraints

    def count() -> int:
        with neo4j.open_driver(services) as driver:
            records, _, _ = driver.execute_query("MATCH (n) RETURN count(n) AS n", database_=services.neo4j_database)
            return int(records[0]["n"])

    before = count()
    edges = _edges(tmp_path)
    rows = list(csv.DictReader(edges.read_text(encoding="utf-8").splitlines()))
    with open(edges, "w", newline="", encoding="utf-8") as fh:  # the same edge twice: a duplicate
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows([*rows, rows[0]])
    with pytest.raises(Exception, match=r"ExpectCompoundColumnsToBeUnique|expect_compound_columns_to_be_unique"):
        extract_constraints(str(edges), str(tmp_path / "out"), row_tolerance=0.5)
    assert not (tmp_path / "out" / "constraints.csv").exists()  # quarantined, not left for a loader
    quarantine = services.state_path / "quarantine"
    assert any(p.name.startswith("constraints-") for p in quarantine.iterdir())
    assert count() == before
