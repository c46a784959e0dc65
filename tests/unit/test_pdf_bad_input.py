"""Bad documents give a clear error or warning naming the file and page; what can be read is kept."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pytest
from PIL import Image
from reportlab.lib.pagesizes import letter
from reportlab.pdfgen.canvas import Canvas

from dkg.errors import IngestError
from dkg.pdf import ingest_pdf, parse_page, read_document_info
from dkg.pdf.export import write_outputs
from tests.fixtures.scans import scan_pdf
from tests.pdf_support import reference_pdfs


def _text_pdf(path: Path, pages: int, encrypt: str | None = None) -> Path:
    c = Canvas(str(path), pagesize=letter, encrypt=encrypt)
    for i in range(pages):
        c.setFont("Helvetica", 10)
        for k in range(30):
            c.drawString(72, 720 - 14 * k, f"Discussion page {i + 1}, paragraph line {k + 1} about treatment.")
        c.showPage()
    c.save()
    return path


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match=r"missing\.pdf: no such file"):
        read_document_info(tmp_path / "missing.pdf")


def test_empty_file(tmp_path: Path) -> None:
    (tmp_path / "empty.pdf").write_bytes(b"")
    with pytest.raises(IngestError, match=r"empty\.pdf: the file is empty"):
        read_document_info(tmp_path / "empty.pdf")


def test_corrupt_file(tmp_path: Path) -> None:
    (tmp_path / "corrupt.pdf").write_bytes(b"%PDF-1.7\n garbage that is not a pdf \x00\x01\x02")
    with pytest.raises(IngestError, match=r"corrupt\.pdf: not a readable PDF"):
        read_document_info(tmp_path / "corrupt.pdf")


def test_encrypted_file(tmp_path: Path) -> None:
    path = _text_pdf(tmp_path / "locked.pdf", 1, encrypt="s3cret")
    with pytest.raises(IngestError, match=r"locked\.pdf: the PDF is encrypted and needs a password"):
        read_document_info(path)


def test_zero_page_file(tmp_path: Path) -> None:
    doc = pdfium.PdfDocument.new()
    doc.save(str(tmp_path / "zero.pdf"))
    doc.close()
    with pytest.raises(IngestError, match=r"zero\.pdf: (the PDF has no pages|not a readable PDF)"):
        read_document_info(tmp_path / "zero.pdf")


def test_page_out_of_range(tmp_path: Path) -> None:
    path = _text_pdf(tmp_path / "one.pdf", 1)
    with pytest.raises(IngestError, match=r"one\.pdf: page 3 does not exist \(1 pages\)"):
        parse_page(path, 3)


def test_text_pages_are_recognised_as_non_flowchart(tmp_path: Path) -> None:
    graph = ingest_pdf(_text_pdf(tmp_path / "discussion.pdf", 3))
    assert [p.kind for p in graph.pages] == ["non_flowchart"] * 3
    assert graph.edges == []


def test_image_page_without_boxes_warns_with_file_and_page(tmp_path: Path) -> None:
    img = Image.fromarray(np.full((1100, 850), 255, dtype=np.uint8))
    img.save(tmp_path / "blank-scan.pdf", "PDF", resolution=100.0)
    page = parse_page(tmp_path / "blank-scan.pdf", 1)
    assert page.path == "ocr" and page.kind == "non_flowchart"
    assert page.warnings == ["blank-scan.pdf page 1: image-only page with no detectable boxes"]


@pytest.mark.slow
def test_three_hundred_pages_are_read_page_by_page(tmp_path: Path) -> None:
    path = _text_pdf(tmp_path / "long.pdf", 300)
    seen: list[int] = []
    graph = ingest_pdf(path, progress=lambda p: seen.append(p.index))
    assert seen == list(range(1, 301))
    assert sum(p.kind == "non_flowchart" for p in graph.pages) == 300


@pytest.mark.slow
def test_mixed_vector_and_scanned_pages_choose_their_path_per_page(tmp_path: Path) -> None:
    src = next(p for p in reference_pdfs() if p.stem == "KID-1.2023")
    scanned = scan_pdf(src, tmp_path / "scan.pdf", seed=3)
    mixed = pdfium.PdfDocument.new()
    mixed.import_pages(pdfium.PdfDocument(str(src)), [0])
    mixed.import_pages(pdfium.PdfDocument(str(scanned)), [1])
    mixed.save(str(tmp_path / "mixed.pdf"))
    graph = ingest_pdf(tmp_path / "mixed.pdf")
    assert [p.path for p in graph.pages] == ["vector", "ocr"]
    assert all(p.kind == "flowchart" and p.arrows for p in graph.pages)


def test_edge_csv_has_the_public_columns(tmp_path: Path) -> None:
    import csv

    src = next(p for p in reference_pdfs() if p.stem == "ALL-1.2022")
    csv_path, json_path = write_outputs(ingest_pdf(src), tmp_path)
    rows = list(csv.DictReader(csv_path.read_text(encoding="utf-8").splitlines()))
    for col in ("head", "tail", "head_plain", "tail_plain", "head_page", "tail_page", "label", "kind"):
        assert col in rows[0]
    arrows = [r for r in rows if r["kind"] == "arrow"]
    links = [r for r in rows if r["kind"] == "page_link"]
    assert len(arrows) == 46
    first = next(r for r in arrows if r["head_plain"] == "Suspected acute lymphoblastic leukemia (ALL)")
    assert first["tail_plain"].startswith("H&P, CBC with differential")
    assert first["head_page"] == first["tail_page"] == "ALL-1"
    link = next(r for r in links if r["head_plain"].endswith("(See ALL-2)"))
    assert link["tail_page"] == "ALL-2"
    assert json_path.exists()
