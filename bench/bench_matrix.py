"""Ingestion over the style matrix (issue 17): every style, vector and scanned, against the reference PDFs.

Prints the whole matrix (one row per style and copy: box, arrow and page-link precision/recall/F1,
seconds per page; the styles kept out of development marked) and returns, per cell, arrow F1 against
the reference PDFs' own arrow F1 and, for the scans, seconds per page against one plain Tesseract pass
over the same pages at the same resolution, both measured in this run.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

from bench.common import Row

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT.parent / "shared" / "reference" / "guidelines"


def run() -> list[Row]:
    """The matrix table on stdout; rows: arrow F1 per cell, OCR seconds per page per scanned cell."""
    import pytesseract

    from dkg.pdf import ingest_pdf
    from dkg.pdf.ocr import render_gray
    from dkg.pdf.stylematrix import STYLES, latest_truths, run_matrix, scan_for, score_document, worst

    truths = latest_truths(REFERENCE)
    if not truths:
        return []
    reference = 0.0
    for t in truths:
        pdf = next(t.parent.glob("*.pdf"))
        _, arrows, _ = score_document(ingest_pdf(pdf), json.loads(t.read_text(encoding="utf-8")))
        reference += arrows.f1 / len(truths)
    rows: list[Row] = []
    cold, os.environ["DKG_OCR_CACHE"] = os.environ.get("DKG_OCR_CACHE"), "false"  # every word read anew
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cells = run_matrix(truths, STYLES, Path(tmp),
                               progress=lambda what: print(f"  matrix: {what}", file=sys.stderr, flush=True))
            print(f"{'style':32} {'copy':6} {'held out':8} {'box P/R/F1':22} {'arrow P/R/F1':22} "
                  f"{'page link P/R':14} s/page")
            for c in cells:
                print(f"{c.style:32} {'scan' if c.scanned else 'vector':6} {'yes' if c.held_out else '':8} "
                      f"{c.boxes.precision:.3f}/{c.boxes.recall:.3f}/{c.boxes.f1:.3f}    "
                      f"{c.arrows.precision:.3f}/{c.arrows.recall:.3f}/{c.arrows.f1:.3f}    "
                      f"{c.links.precision:.3f}/{c.links.recall:.3f}    {c.seconds_per_page:.2f}")
                copy = "scan" if c.scanned else "vector"
                rows.append(Row(f"arrow F1 {c.style} {copy}", c.arrows.f1, "reference PDFs arrow F1", reference, ""))
                if c.scanned:
                    style = next(s for s in STYLES if s.name == c.style)
                    dpi = scan_for(style).dpi
                    t0 = time.perf_counter()
                    pages = 0
                    for doc in c.documents:
                        path = Path(tmp) / c.style / doc
                        n = _count_pages(path)
                        for i in range(1, n + 1):
                            pytesseract.image_to_string(render_gray(path, i, dpi))
                        pages += n
                    plain = (time.perf_counter() - t0) / max(pages, 1)
                    rows.append(Row(f"OCR s/page {c.style}", c.seconds_per_page, f"one tesseract pass at {dpi} dpi",
                                    plain, "s"))
            bad = worst(cells)
            if bad is not None:
                print(f"worst cell: {bad.style} {'scan' if bad.scanned else 'vector'} (arrow F1 {bad.arrows.f1:.3f}, "
                      f"box F1 {bad.boxes.f1:.3f})")
    finally:
        if cold is None:
            os.environ.pop("DKG_OCR_CACHE")
        else:
            os.environ["DKG_OCR_CACHE"] = cold
    return rows


def _count_pages(path: Path) -> int:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(path))
    try:
        return len(doc)
    finally:
        doc.close()
