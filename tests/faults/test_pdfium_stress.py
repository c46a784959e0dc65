"""Scanned PDFs ingested concurrently, many rounds, in threads and on a Dask cluster.

A user's run died with a segfault in libpdfium when two scanned guidelines were ingested together:
PDFium is not thread-safe, and every page task rendered its page from its own thread. Every PDFium
call now holds one process-wide lock (``dkg.pdf.ocr._PDFIUM``). Here three 8-page scanned PDFs are
ingested at the same time, all 24 pages in flight at once, round after round (five in the suite, twenty in
``make faults``: ``DKG_STRESS_ROUNDS``): the process must not
crash and every ``edges.csv`` must equal the one a single-threaded ingestion wrote.

Each round submits every page's ``parse_page`` — the work of the flow's ``parse-page`` task:
open, render with PDFium, deskew, OCR, geometry — to the pool at once, then assembles and writes
each document as the flow does. In threads the pool is a 24-thread executor in this process; on
Dask it is a cluster of two worker processes with four threads each. One further round of each goes
through the ``ingest-guideline`` flow itself (Prefect's thread pool, then the ``DaskTaskRunner``).
Round 1 reads every word with Tesseract; later rounds take Tesseract's words from the OCR cache
(keyed on the pixels), which keeps the rounds affordable in CI while rendering (PDFium),
deskewing and the geometry run anew every time — and checks that cached words give the same edges
as fresh ones. The suite's kernel-log check (tests/conftest.py) fails the run if a segfault shows
up meanwhile, which also covers crashes inside the Dask worker processes.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from dkg.pdf.document import finish_document, ingest_pdf, parse_page, read_document_info
from dkg.pdf.export import write_outputs
from dkg.pdf.models import PageGraph
from tests.fixtures.stress_pdfs import scanned_pdf

pytestmark = [pytest.mark.slow]

ROUNDS = int(os.environ.get("DKG_STRESS_ROUNDS", "5"))  # CI time: the long run is `make faults`
FLOW_ROUNDS = 1
PAGES = 8
CODES = ("STA", "STB", "STC")

Submit = Callable[[Path, int], Any]
"""Submits one page's parse; returns a future (concurrent.futures or distributed) of its PageGraph."""


@pytest.fixture(scope="module")
def stress_state(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A state folder of the module's own (set before any Dask worker starts): its OCR cache starts empty."""
    state = tmp_path_factory.mktemp("stress-state")
    old = {k: os.environ.get(k) for k in ("DKG_STATE_DIR", "DKG_OCR_CACHE")}
    os.environ["DKG_STATE_DIR"] = str(state)
    os.environ.pop("DKG_OCR_CACHE", None)
    yield state
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="module")
def scans(stress_state: Path) -> dict[Path, str]:
    """Three scanned 8-page PDFs and the edges.csv a single-threaded ingestion without the OCR cache
    writes for each."""
    folder = stress_state / "pdfs"
    out: dict[Path, str] = {}
    os.environ["DKG_OCR_CACHE"] = "false"
    try:
        for i, code in enumerate(CODES):
            pdf = scanned_pdf(folder, code, pages=PAGES, seed=11 + i)
            csv, _ = write_outputs(ingest_pdf(pdf), folder / f"{code}-sequential")
            out[pdf] = csv.read_text(encoding="utf-8")
            assert out[pdf].count("\n") >= PAGES + 1, out[pdf]  # header and at least one arrow a page
    finally:
        os.environ.pop("DKG_OCR_CACHE")
    assert not (stress_state / "cache" / "ocr").exists()
    return out


def _page_rounds(scans: dict[Path, str], out: Path, submit: Submit) -> float:
    """ROUNDS times: every page of every PDF submitted at once; each document assembled and written as the
    flow does and compared with the single-threaded edges.csv. The seconds a round took."""
    infos = {pdf: read_document_info(pdf) for pdf in scans}
    t0 = time.monotonic()
    for r in range(ROUNDS):
        jobs = {(pdf, i): submit(pdf, i) for pdf in scans for i in range(1, PAGES + 1)}
        for pdf, expected in scans.items():
            pages: list[PageGraph] = [jobs[(pdf, i)].result() for i in range(1, PAGES + 1)]
            assert [p.kind for p in pages] == ["flowchart"] * PAGES, (r, pdf.name)
            csv, _ = write_outputs(finish_document(pdf, infos[pdf], pages), out / f"r{r}" / pdf.stem)
            assert csv.read_text(encoding="utf-8") == expected, (r, pdf.name)
    return (time.monotonic() - t0) / ROUNDS


def _flow_rounds(scans: dict[Path, str], out: Path, ingest: Callable[[str, str], Any]) -> None:
    """FLOW_ROUNDS times: every PDF through the ingest-guideline flow at once, each flow from its own thread."""
    with ThreadPoolExecutor(max_workers=len(scans)) as pool:
        for r in range(FLOW_ROUNDS):
            runs = {pdf: pool.submit(ingest, str(pdf), str(out / f"flow{r}" / pdf.stem)) for pdf in scans}
            for pdf, run in runs.items():
                result = run.result()
                assert result.pages == PAGES and result.flowchart_pages == PAGES, (r, pdf.name, result)
                assert Path(result.edges_csv).read_text(encoding="utf-8") == scans[pdf], (r, pdf.name)


def test_concurrent_scanned_ingestion_in_threads(prefect_harness: None, scans: dict[Path, str], stress_state: Path,
                                                 tmp_path: Path, record: Callable[..., None]) -> None:
    from flows.ingest_guideline import ingest_guideline

    shutil.rmtree(stress_state / "cache" / "ocr", ignore_errors=True)  # round 1 reads every word concurrently
    with ThreadPoolExecutor(max_workers=len(scans) * PAGES) as pool:
        per_round = _page_rounds(scans, tmp_path, lambda pdf, i: pool.submit(parse_page, pdf, i))
    _flow_rounds(scans, tmp_path, lambda src, out: ingest_guideline(src, out, refresh_cache=True))
    record("scanned PDFs ingested concurrently (threads)",
           f"{ROUNDS} rounds x 3 PDFs x {PAGES} scanned pages, all 24 pages in flight on 24 threads of one process; "
           f"{FLOW_ROUNDS} more rounds through the ingest-guideline flow",
           "no crash; every edges.csv equal to a single-threaded ingestion", 0, None, seconds=round(per_round, 1))


@pytest.fixture(scope="module")
def dask_cluster(stress_state: Path) -> Iterator[tuple[Any, str]]:
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=4, processes=True, dashboard_address=None)
    client = Client(cluster)
    try:
        yield client, str(cluster.scheduler_address)
    finally:
        client.close()
        cluster.close()


def test_concurrent_scanned_ingestion_on_dask(prefect_harness: None, scans: dict[Path, str],
                                              dask_cluster: tuple[Any, str],
                                              stress_state: Path, tmp_path: Path,
                                              record: Callable[..., None]) -> None:
    from prefect_dask.task_runners import DaskTaskRunner

    from flows.ingest_guideline import ingest_guideline

    client, address = dask_cluster  # Tesseract's words may come from the cache the threaded test filled
    per_round = _page_rounds(scans, tmp_path, lambda pdf, i: client.submit(parse_page, pdf, i, pure=False))

    def ingest(src: str, out: str) -> Any:
        runner = DaskTaskRunner(address=address)
        return ingest_guideline.with_options(task_runner=runner)(src, out, refresh_cache=True)

    _flow_rounds(scans, tmp_path, ingest)
    record("scanned PDFs ingested concurrently (Dask)",
           f"{ROUNDS} rounds x 3 PDFs x {PAGES} scanned pages on 2 Dask worker processes x 4 threads; "
           f"{FLOW_ROUNDS} more rounds through the flow with the DaskTaskRunner",
           "no crash; every edges.csv equal to a single-threaded ingestion", 0, None, seconds=round(per_round, 1))
