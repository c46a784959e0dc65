"""Scanned PDFs ingested concurrently, 20 rounds, with Prefect's thread pool and with a Dask cluster.

A user's run died with a segfault in libpdfium when two scanned guidelines were ingested together:
PDFium is not thread-safe, and every page task rendered its page from its own thread. Every PDFium
call now holds one process-wide lock (``dkg.pdf.ocr._PDFIUM``). Here three 8-page scanned PDFs go
through the ``ingest-guideline`` flow at the same time, page tasks in parallel (24 pages in
flight), twenty times over, every page parsed again each round (``refresh_cache``): the process
must not crash and every ``edges.csv`` must equal the one a single-threaded ingestion wrote. The
first round reads every word with Tesseract, 24 pages at once; later rounds take Tesseract's words
from the OCR cache (keyed on the pixels), which keeps 20 rounds affordable in CI while rendering
(PDFium), deskewing and the geometry run anew every time — and checks that cached words give the
same edges as fresh ones. The
same again with the page tasks on a Dask cluster of two worker processes with four threads each.
The suite's kernel-log check (tests/conftest.py) fails the run if a segfault shows up meanwhile,
which also covers crashes inside the Dask worker processes.
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

from dkg.pdf.document import ingest_pdf
from dkg.pdf.export import write_outputs
from tests.fixtures.stress_pdfs import scanned_pdf

pytestmark = [pytest.mark.slow]

ROUNDS = 20
CODES = ("STA", "STB", "STC")


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
            pdf = scanned_pdf(folder, code, pages=8, seed=11 + i)
            csv, _ = write_outputs(ingest_pdf(pdf), folder / f"{code}-sequential")
            out[pdf] = csv.read_text(encoding="utf-8")
            assert out[pdf].count("\n") >= 9, out[pdf]  # header and at least one arrow a page
    finally:
        os.environ.pop("DKG_OCR_CACHE")
    assert not (stress_state / "cache" / "ocr").exists()
    return out


def _rounds(scans: dict[Path, str], tmp_path: Path, ingest: Callable[[str, str], Any]) -> float:
    """ROUNDS times: every PDF ingested at once, each from its own thread; the seconds a round took."""
    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=len(scans)) as pool:
        for r in range(ROUNDS):
            jobs = {pdf: pool.submit(ingest, str(pdf), str(tmp_path / f"r{r}" / pdf.stem)) for pdf in scans}
            for pdf, job in jobs.items():
                result = job.result()
                assert result.pages == 8 and result.flowchart_pages == 8, (r, pdf.name, result)
                assert Path(result.edges_csv).read_text(encoding="utf-8") == scans[pdf], (r, pdf.name)
    return (time.monotonic() - t0) / ROUNDS


def test_concurrent_scanned_ingestion_in_threads(prefect_harness: None, scans: dict[Path, str], stress_state: Path,
                                                 tmp_path: Path, record: Callable[..., None]) -> None:
    from flows.ingest_guideline import ingest_guideline

    shutil.rmtree(stress_state / "cache" / "ocr", ignore_errors=True)  # round 1 reads every word concurrently
    per_round = _rounds(scans, tmp_path, lambda src, out: ingest_guideline(src, out, refresh_cache=True))
    record("scanned PDFs ingested concurrently (threads)",
           f"{ROUNDS} rounds x 3 PDFs x 8 scanned pages, 24 page tasks in flight in one process",
           "no crash; every edges.csv equal to a single-threaded ingestion", 0, None,
           seconds=round(per_round, 1))


@pytest.fixture(scope="module")
def dask_cluster(stress_state: Path) -> Iterator[str]:
    from distributed import LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=4, processes=True, dashboard_address=None)
    try:
        yield str(cluster.scheduler_address)
    finally:
        cluster.close()


def test_concurrent_scanned_ingestion_on_dask(prefect_harness: None, scans: dict[Path, str], dask_cluster: str,
                                              stress_state: Path, tmp_path: Path,
                                              record: Callable[..., None]) -> None:
    from prefect_dask.task_runners import DaskTaskRunner

    from flows.ingest_guideline import ingest_guideline

    shutil.rmtree(stress_state / "cache" / "ocr", ignore_errors=True)

    def ingest(src: str, out: str) -> Any:
        runner = DaskTaskRunner(address=dask_cluster)
        return ingest_guideline.with_options(task_runner=runner)(src, out, refresh_cache=True)

    per_round = _rounds(scans, tmp_path, ingest)
    record("scanned PDFs ingested concurrently (Dask)",
           f"{ROUNDS} rounds x 3 PDFs x 8 scanned pages on 2 Dask worker processes x 4 threads",
           "no crash; every edges.csv equal to a single-threaded ingestion", 0, None,
           seconds=round(per_round, 1))
