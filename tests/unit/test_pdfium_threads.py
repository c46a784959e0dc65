"""PDFium from many threads at once: the rendering behind scanned-page OCR must neither crash nor differ.

pypdfium2 documents that PDFium must not be called from several threads at once, not even on
different documents; a scanned guideline's pages are parsed concurrently, so every PDFium call in
``dkg.pdf.ocr`` holds one process-wide lock. The crash (a segfault in libpdfium, seen by a user on
two scanned PDFs) does not reproduce on every machine, so the lock itself is tested too: a render
waits while another holder has it.
"""

from __future__ import annotations

import hashlib
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from dkg.pdf import ocr
from dkg.pdf.ocr import render_gray
from tests.fixtures.scans import scan_pdf
from tests.pdf_support import reference_pdfs

ROUNDS = 20


@pytest.fixture(scope="module")
def scans(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = tmp_path_factory.mktemp("scans")
    pdfs = [p for p in reference_pdfs() if p.stem.endswith(("-2.2022", "-2.2023"))]
    return [scan_pdf(p, out / f"{p.stem}-scan.pdf", dpi=100) for p in pdfs]


def test_concurrent_rendering_is_stable_and_identical(scans: list[Path]) -> None:
    import pypdfium2 as pdfium

    pages = []
    for pdf in scans:
        doc = pdfium.PdfDocument(str(pdf))
        pages += [(pdf, i + 1) for i in range(len(doc))]
        doc.close()
    assert len(pages) >= 12

    def digest(job: tuple[Path, int]) -> str:
        return hashlib.sha256(render_gray(job[0], job[1], 72).tobytes()).hexdigest()

    first = [digest(j) for j in pages]
    with ThreadPoolExecutor(max_workers=8) as pool:
        for _ in range(ROUNDS):
            assert list(pool.map(digest, pages)) == first


def test_every_render_holds_the_process_wide_lock(scans: list[Path]) -> None:
    done = threading.Event()

    def render() -> None:
        render_gray(scans[0], 1, 36)
        done.set()

    with ocr._PDFIUM:
        t = threading.Thread(target=render)
        t.start()
        assert not done.wait(1.0)  # blocked: PDFium is in use
    assert done.wait(30.0)
    t.join()
