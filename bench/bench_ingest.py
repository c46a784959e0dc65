"""PDF ingestion speed: pages per second on the vector and the OCR path, against plain extraction."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from bench.common import Row

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT.parent / "shared" / "reference" / "guidelines"


def run() -> list[Row]:
    """Vector: our parser vs pdfplumber's extract_text; OCR: our parser vs one Tesseract pass per page."""
    import pdfplumber
    import pytesseract

    from dkg.pdf import ingest_pdf
    from dkg.pdf.ocr import render_gray

    sys.path.insert(0, str(ROOT))
    from tests.fixtures.scans import scan_pdf

    pdfs = sorted(REFERENCE.glob("*/*/*.pdf"))
    if not pdfs:
        return []
    t0 = time.perf_counter()
    pages = sum(len(ingest_pdf(p).pages) for p in pdfs)
    ours = pages / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    for p in pdfs:
        with pdfplumber.open(p) as pdf:
            for page in pdf.pages:
                page.extract_text()
    plain = pages / (time.perf_counter() - t0)
    rows = [Row("vector path pages/s", ours, "pdfplumber extract_text pages/s", plain, "p/s")]
    with tempfile.TemporaryDirectory() as tmp:
        scanned = scan_pdf(pdfs[0], Path(tmp) / "scan.pdf")
        cold, os.environ["DKG_OCR_CACHE"] = os.environ.get("DKG_OCR_CACHE"), "false"  # every word read anew
        try:
            t0 = time.perf_counter()
            n = len(ingest_pdf(scanned).pages)
            ocr = n / (time.perf_counter() - t0)
        finally:
            if cold is None:
                os.environ.pop("DKG_OCR_CACHE")
            else:
                os.environ["DKG_OCR_CACHE"] = cold
        t0 = time.perf_counter()
        for i in range(1, n + 1):
            pytesseract.image_to_string(render_gray(scanned, i, 200))
        base = n / (time.perf_counter() - t0)
    rows.append(Row("OCR path pages/s", ocr, "one tesseract pass pages/s", base, "p/s"))
    return rows
