"""Whole documents: open, identify, parse pages, resolve footnotes and links, build edges."""

from __future__ import annotations

import logging
import re
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dkg.errors import IngestError
from dkg.fingerprint import file_sha256
from dkg.pdf.layout import VERSION, assemble_page
from dkg.pdf.models import DocumentInfo, Edge, GuidelineGraph, PageGraph
from dkg.pdf.vector import page_primitives

log = logging.getLogger(__name__)

MIN_TEXT_CHARS = 20


@dataclass(frozen=True)
class PdfLimits:
    """Bounds on untrusted PDFs: file size, pages, inflated content per page, pixels rendered for OCR."""

    max_bytes: int = 200_000_000
    max_pages: int = 1000
    max_page_stream_bytes: int = 64_000_000
    max_pixels: int = 120_000_000

    @staticmethod
    def current() -> PdfLimits:
        """The limits of the settings (``DKG_PDF_MAX_BYTES`` etc.)."""
        from dkg.settings import current_settings

        s = current_settings()
        return PdfLimits(s.pdf_max_bytes, s.pdf_max_pages, s.pdf_max_page_stream_bytes, s.ocr_max_pixels)


def _inflated_size(data: bytes, cap: int) -> int:
    """Bytes a Flate stream inflates to, counted in steps and given up just past ``cap``."""
    d = zlib.decompressobj()
    total = 0
    chunk = data
    try:
        while chunk and total <= cap:
            total += len(d.decompress(chunk, 1 << 20))
            chunk = d.unconsumed_tail
    except zlib.error:
        return len(data)  # not a clean zlib stream: the parser reports it, this check has nothing to bound
    return total


def check_page_streams(page: Any, path: Path, index: int, cap: int) -> None:
    """Refuse a page whose content streams inflate past ``cap`` bytes, before anything decodes them.

    Raises:
        IngestError: naming the file, the page and the limit.
    """
    from pdfminer.ascii85 import ascii85decode, asciihexdecode
    from pdfminer.pdftypes import resolve1

    contents = resolve1(page.page_obj.attrs.get("Contents"))
    streams = contents if isinstance(contents, list) else [contents]
    total = 0
    for ref in streams:
        st = resolve1(ref)
        raw = getattr(st, "rawdata", None)
        if raw is None:
            continue
        filters = resolve1(st.attrs.get("Filter")) if hasattr(st, "attrs") else None
        names = [str(getattr(f, "name", f)) for f in (filters if isinstance(filters, list) else [filters]) if f]
        if names and names[-1] == "FlateDecode" and all(n in ("ASCII85Decode", "A85", "ASCIIHexDecode", "AHx")
                                                        for n in names[:-1]):
            for n in names[:-1]:  # text encodings before the compression only shrink the data
                raw = ascii85decode(raw) if n in ("ASCII85Decode", "A85") else asciihexdecode(raw)
            total += _inflated_size(raw, cap - total)
        else:
            total += len(raw)
        if total > cap:
            raise IngestError(f"{path} page {index}: its content inflates past {cap} bytes (a PDF bomb?); "
                              "refused (DKG_PDF_MAX_PAGE_STREAM_BYTES)")


def _open(path: Path, limits: PdfLimits | None = None) -> Any:
    import pdfplumber
    from pdfminer.pdfdocument import PDFPasswordIncorrect
    from pdfminer.pdfparser import PDFSyntaxError

    lim = limits or PdfLimits.current()
    if not path.exists():
        raise IngestError(f"{path}: no such file")
    size = path.stat().st_size
    if size == 0:
        raise IngestError(f"{path}: the file is empty")
    if size > lim.max_bytes:
        raise IngestError(f"{path}: {size} bytes, more than the limit of {lim.max_bytes} (DKG_PDF_MAX_BYTES)")
    with open(path, "rb") as fh:
        head = fh.read(1024)
    if b"%PDF-" not in head:
        raise IngestError(f"{path}: not a PDF (no %PDF- header; starts with {head[:16]!r})")
    try:
        pdf = pdfplumber.open(path)
        _ = len(pdf.pages)
    except PDFPasswordIncorrect as e:
        raise IngestError(f"{path}: the PDF is encrypted and needs a password") from e
    except (PDFSyntaxError, Exception) as e:
        inner = [e, e.__context__, *(a for a in e.args if isinstance(a, BaseException))]
        if any(isinstance(x, PDFPasswordIncorrect) for x in inner) or "encrypt" in str(e).lower():
            raise IngestError(f"{path}: the PDF is encrypted and needs a password") from e
        raise IngestError(f"{path}: not a readable PDF ({type(e).__name__}: {str(e)[:120]})") from e
    if len(pdf.pages) == 0:
        pdf.close()
        raise IngestError(f"{path}: the PDF has no pages")
    if len(pdf.pages) > lim.max_pages:
        n = len(pdf.pages)
        pdf.close()
        raise IngestError(f"{path}: {n} pages, more than the limit of {lim.max_pages} (DKG_PDF_MAX_PAGES)")
    return pdf


def read_document_info(path: Path) -> DocumentInfo:
    """Identity of a guideline PDF (name, version, code come later from its pages).

    Raises:
        IngestError: missing, empty, encrypted, corrupt or zero-page file.
    """
    pdf = _open(path)
    try:
        return DocumentInfo(path=str(path), sha256=file_sha256(path), page_count=len(pdf.pages))
    finally:
        pdf.close()


def figure_in_text(page: Any) -> bool:
    """A picture that takes less than half the page, set in running text, is a figure.

    Flowchart pages pasted in as pictures fill the page (a title and a footer around them);
    a study-flow diagram or an illustration inside a page of prose does not.
    """
    area = float(page.width) * float(page.height)
    big = [im for im in page.images
           if (float(im["x1"]) - float(im["x0"])) * (float(im["bottom"]) - float(im["top"])) >= 0.25 * area]
    if not big:
        return False
    im = max(big, key=lambda i: (float(i["x1"]) - float(i["x0"])) * (float(i["bottom"]) - float(i["top"])))
    share = (float(im["x1"]) - float(im["x0"])) * (float(im["bottom"]) - float(im["top"])) / area
    x0, x1, top, bottom = float(im["x0"]), float(im["x1"]), float(im["top"]), float(im["bottom"])
    words = [w for w in page.extract_words() if not (x0 <= w["x0"] <= x1 and top <= w["top"] <= bottom)]
    return share < 0.45 and len(words) > 60


def needs_ocr(page: Any) -> bool:
    """Read a page by OCR when it is a picture: no text layer, or a large image without text on it.

    A scanned page has images and (almost) no characters. A page of a born-digital document
    whose flowchart was pasted in as a picture has a title and footer as text, but the big
    image itself carries no characters.
    """
    text = [c for c in page.chars if str(c["text"]).strip()]
    if len(text) < MIN_TEXT_CHARS and page.images:
        return True
    area = float(page.width) * float(page.height)
    for im in page.images:
        x0, top, x1, bottom = float(im["x0"]), float(im["top"]), float(im["x1"]), float(im["bottom"])
        if (x1 - x0) * (bottom - top) < 0.25 * area:
            continue
        inside = sum(1 for c in text if x0 <= c["x0"] <= x1 and top <= c["top"] <= bottom)
        if inside < MIN_TEXT_CHARS:
            return True
    return False


def parse_page(path: Path, index: int, ocr_dpi: int = 200) -> PageGraph:
    """Parse page ``index`` (1-based) of ``path``: vector path, or OCR for image-only pages.

    Raises:
        IngestError: the file or the page cannot be read at all.
    """
    pdf = _open(path)
    try:
        if not 1 <= index <= len(pdf.pages):
            raise IngestError(f"{path}: page {index} does not exist ({len(pdf.pages)} pages)")
        return _parse_open_page(pdf, path, index, _page_ids(pdf), ocr_dpi)
    finally:
        pdf.close()


def _page_ids(pdf: Any) -> dict[int, int]:
    """PDF object id of each page → 1-based page number (link annotations point at objects)."""
    return {int(p.page_obj.pageid): i + 1 for i, p in enumerate(pdf.pages)}


def _parse_open_page(pdf: Any, path: Path, index: int, objids: dict[int, int], ocr_dpi: int = 200) -> PageGraph:
    t0 = time.perf_counter()
    lim = PdfLimits.current()
    page = pdf.pages[index - 1]
    try:
        check_page_streams(page, path, index, lim.max_page_stream_bytes)
        ocr = needs_ocr(page)
        pixels = float(page.width) * float(page.height) * (ocr_dpi / 72) ** 2
        if ocr and pixels > lim.max_pixels:
            raise IngestError(f"{path} page {index}: {float(page.width):.0f} × {float(page.height):.0f} pt would "
                              f"render to {pixels / 1e6:.0f} million pixels at {ocr_dpi} dpi, more than the limit of "
                              f"{lim.max_pixels / 1e6:.0f} million (DKG_OCR_MAX_PIXELS); refused")
        if ocr and figure_in_text(page):
            note = f"{path.name} page {index}: a figure in running text, not a flowchart page"
            result = PageGraph(index=index, kind="non_flowchart", path="vector", warnings=[note])
        elif ocr:
            from dkg.pdf.ocr import ocr_primitives, ocr_tolerances

            result = assemble_page(ocr_primitives(path, index, page, dpi=ocr_dpi), index, ocr_tolerances())
        else:
            prim = page_primitives(page, objids)
            result = assemble_page(prim, index)
            if not prim.glyphs and not page.images:
                result.warnings.append(f"{path.name} page {index}: empty page")
    finally:
        page.close()
    if result.path == "ocr" and result.kind == "non_flowchart" and not result.boxes:
        result.warnings.append(f"{path.name} page {index}: image-only page with no detectable boxes")
    result.seconds = time.perf_counter() - t0
    return result


def _identity(pages: list[PageGraph]) -> tuple[str | None, str | None, str | None]:
    versions = [m.group(1) for p in pages if (m := VERSION.search(p.header_text))]
    labels = [p.label for p in pages if p.label]
    code = None
    if labels:
        prefixes = [lb.rsplit("-", 1)[0] for lb in labels]
        code = max(set(prefixes), key=prefixes.count)
    name = None
    for p in pages:
        if p.header_text:
            head = VERSION.split(p.header_text)[0].strip()
            name = re.split(r"\s{2,}|Illustrative|Version", head)[0].strip() or None
            if name:
                break
    version = max(set(versions), key=versions.count) if versions else None
    return name, code, version


def finish_document(path: Path, info: DocumentInfo, pages: list[PageGraph]) -> GuidelineGraph:
    """Resolve footnotes and links across pages, name the guideline, and build the edges."""
    name, code, version = _identity(pages)
    info = info.model_copy(update={"name": name, "code": code, "version": version})
    all_notes: dict[str, str] = {}
    for p in pages:
        for k, v in p.footnotes.items():
            all_notes.setdefault(k, v)
    label_to_page = {p.label: p for p in pages if p.label}
    index_to_page = {p.index: p for p in pages}
    for p in pages:
        for box in p.boxes:
            box.page_label = p.label or f"p{p.index}"
            _resolve_footnotes(box, p.footnotes, all_notes)
        for link in p.links:
            link.page_label = p.label or f"p{p.index}"
            target = None
            if link.target_page_index is not None:
                target = index_to_page.get(link.target_page_index)
            if target is None and link.target_page_label:
                target = label_to_page.get(link.target_page_label)
            if target is None and link.target_module:
                target = _module_page(pages, link.target_module, p.index)
            if target is not None:
                link.target_page_index = target.index
                link.target_page_label = target.label
                numbered = [b.id for b in target.boxes if link.target_box_number and b.number == link.target_box_number]
                link.target_boxes = numbered or entry_boxes(target)
                link.resolved = bool(link.target_boxes)
    edges = build_edges(info, pages)
    return GuidelineGraph(info=info, pages=pages, edges=edges)


def _module_page(pages: list[PageGraph], module: str, origin: int) -> PageGraph | None:
    """The flowchart page whose title names ``Module X`` (VA/DoD style), other than the origin."""
    pattern = re.compile(rf"\bModule\s+{re.escape(module)}\b", re.IGNORECASE)
    for p in pages:
        if p.index != origin and p.kind == "flowchart" and pattern.search(p.title or ""):
            return p
    return None


def _resolve_footnotes(box: Any, page_notes: dict[str, str], all_notes: dict[str, str]) -> None:
    for ref in box.footnotes:
        ref.text = page_notes.get(ref.marker) or all_notes.get(ref.marker)

    def repl(m: re.Match[str]) -> str:
        texts = [page_notes.get(k) or all_notes.get(k) for k in m.group(1).split(",")]
        known = [t for t in texts if t]
        return " (" + " ".join(known) + ")" if known else ""

    box.text_resolved = re.sub(r"\s+", " ", re.sub(r"\^\{([^}]*)\}", repl, box.text_markup)).strip()


def entry_boxes(page: PageGraph) -> list[str]:
    """Boxes where a page's flow starts: no incoming arrow, at least one outgoing."""
    incoming = {a.target for a in page.arrows}
    outgoing = {a.source for a in page.arrows}
    entries = [b.id for b in page.boxes if b.id not in incoming and b.id in outgoing]
    if not entries and page.boxes:
        entries = [min(page.boxes, key=lambda b: (b.bbox[0], b.bbox[1])).id]
    return entries


def build_edges(info: DocumentInfo, pages: list[PageGraph]) -> list[Edge]:
    """The public edge list: one row per arrow, and per resolved page link and entry box."""
    boxes = {b.id: b for p in pages for b in p.boxes}
    edges = []
    common = {"guideline": info.code or "", "version": info.version or "", "source_pdf_sha256": info.sha256}
    for p in pages:
        for a in p.arrows:
            h, t = boxes[a.source], boxes[a.target]
            edges.append(Edge(kind="arrow", head_id=h.id, tail_id=t.id, head=h.text_resolved, tail=t.text_resolved,
                              head_plain=h.text, tail_plain=t.text, head_page=h.page_label,
                              tail_page=t.page_label, label=a.label or "", head_column=h.column_header or "",
                              tail_column=t.column_header or "", **common))
        for link in p.links:
            h = boxes[link.source]
            for tid in link.target_boxes:
                t = boxes[tid]
                edges.append(Edge(kind="page_link", head_id=h.id, tail_id=t.id, head=h.text_resolved,
                                  tail=t.text_resolved, head_plain=h.text, tail_plain=t.text,
                                  head_page=h.page_label, tail_page=t.page_label, label="",
                                  head_column=h.column_header or "", tail_column=t.column_header or "", **common))
    return edges


def ingest_pdf(path: Path, progress: Callable[[PageGraph], None] | None = None,
               pages: Iterable[int] | None = None) -> GuidelineGraph:
    """Parse a whole PDF in this process, opening it once (the flow runs pages as separate tasks)."""
    info = read_document_info(path)
    results = []
    pdf = _open(path)
    try:
        objids = _page_ids(pdf)
        for i in pages or range(1, info.page_count + 1):
            if not 1 <= i <= info.page_count:
                raise IngestError(f"{path}: page {i} does not exist ({info.page_count} pages)")
            try:
                page = _parse_open_page(pdf, path, i, objids)
            except IngestError:
                raise  # a page past the limits (a bomb, a giant page): the document is refused, as in the flow
            except Exception as e:  # one unreadable page must not lose the others
                log.warning("%s page %d: %s", path, i, e)
                page = PageGraph(index=i, kind="error", warnings=[f"{path.name} page {i}: {type(e).__name__}: {e}"])
            results.append(page)
            if progress:
                progress(page)
    finally:
        pdf.close()
    return finish_document(path, info, results)
