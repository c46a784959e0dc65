"""The ingestion flow under a real (temporary) Prefect API, and the CLI around it."""

from __future__ import annotations

import asyncio
import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.pdf_support import ROOT, reference_pdfs, truth_of

pytestmark = pytest.mark.slow


def _pdf(stem: str) -> Path:
    return next(p for p in reference_pdfs() if p.stem == stem)


def test_flow_writes_csv_json_and_page_artifact(prefect_harness: None, tmp_path: Path) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId, ArtifactFilterKey

    from flows.ingest_guideline import IngestResult, ingest_guideline

    pdf = _pdf("KID-1.2023")
    truth = json.loads(truth_of(pdf).read_text())
    state = ingest_guideline(str(pdf), str(tmp_path / "out"), return_state=True)
    result = state.result()
    assert isinstance(result, IngestResult)
    run_id = state.state_details.flow_run_id  # other tests of the session ingest other PDFs
    assert (result.guideline, result.version, result.pages) == ("KID", "1.2023", 4)
    assert result.flowchart_pages == 4 and result.skipped_pages == 0
    assert result.arrows == len(truth["edges"])
    rows = list(csv.DictReader(Path(result.edges_csv).read_text(encoding="utf-8").splitlines()))
    assert sum(r["kind"] == "arrow" for r in rows) == len(truth["edges"])
    assert {r["guideline"] for r in rows} == {"KID"} and {r["version"] for r in rows} == {"1.2023"}
    graph = json.loads(Path(result.graph_json).read_text())
    assert len(graph["pages"]) == 4

    async def _artifact() -> list[dict[str, object]]:
        async with get_client() as client:
            arts = await client.read_artifacts(
                artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["ingest-pages"]),
                                               flow_run_id=ArtifactFilterFlowRunId(any_=[run_id])))
            data = arts[0].data
            return json.loads(data) if isinstance(data, str) else list(data)  # type: ignore[arg-type]

    table = asyncio.run(_artifact())
    assert [row["label"] for row in table] == ["KID-1", "KID-2", "KID-3", "KID-4"]
    assert all(row["path"] == "vector" for row in table)
    assert {"boxes", "arrows", "footnotes_resolved", "links_resolved", "seconds"} <= set(table[0])


def test_cli_ingest_and_eval(tmp_path: Path) -> None:
    pdf = _pdf("BONE-1.2023")
    env = {**os.environ, "DKG_STATE_DIR": str(tmp_path / "state")}
    out = subprocess.run(
        [sys.executable, "-m", "dkg_cli.main", "ingest", str(pdf), "--out", str(tmp_path / "o"), "--json"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=600, check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["guideline"] == "BONE" and (tmp_path / "o" / "edges.csv").exists()
    ev = subprocess.run(
        [sys.executable, "-m", "dkg_cli.main", "eval", "ingest", str(pdf), "--truth", str(truth_of(pdf)), "--json"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=600, check=False,
    )
    assert ev.returncode == 0, ev.stderr[-2000:]
    scores = json.loads(ev.stdout.strip().splitlines()[-1])
    assert scores["edge_f1"] >= 0.98 and scores["box_exact"] >= 0.97


def test_cli_reports_a_corrupt_pdf_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"not a pdf at all")
    env = {**os.environ, "DKG_STATE_DIR": str(tmp_path / "state")}
    out = subprocess.run([sys.executable, "-m", "dkg_cli.main", "eval", "ingest", str(bad), "--truth",
                          str(truth_of(_pdf("BONE-1.2023")))],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=300, check=False)
    assert out.returncode == 1
    assert "Traceback" not in out.stderr
    assert re.search(r"bad\.pdf: not a (readable )?PDF", out.stderr), out.stderr


def test_flow_ingests_a_pdf_served_over_http(prefect_harness: None, tmp_path: Path) -> None:
    import functools
    import http.server
    import threading

    from flows.ingest_guideline import ingest_guideline

    pdf = _pdf("ALL-2.2022")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(pdf.parent))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{pdf.name}"
        result = ingest_guideline(url, str(tmp_path / "url"))
    finally:
        server.shutdown()
    assert (result.guideline, result.version) == ("ALL", "2.2022")
    assert (tmp_path / "url" / pdf.name).read_bytes() == pdf.read_bytes()
