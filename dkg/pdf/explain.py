"""What the parser saw on one page, drawn over the page as a PNG (``dkg ingest --explain PAGE``).

A data engineer looking for a missing arrow sees, over a faded copy of the page: the boxes the parser
found (blue, with their ids), the line segments it traced (orange), the arrow heads (red), the arrows it
read (green, from the source box to the head of the target box, with their labels) and the page links
(purple, with the page they point to). A connector with no green arrow along it is a connector the
parser could not attach; a head with no arrow ending at it is a lost head.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dkg.errors import IngestError
from dkg.pdf.document import _open, _page_ids, needs_ocr
from dkg.pdf.layout import Primitives, assemble_page
from dkg.pdf.models import BBox, PageGraph
from dkg.pdf.vector import page_primitives

BLUE, ORANGE, RED, GREEN, PURPLE = (30, 90, 220), (240, 140, 0), (220, 20, 20), (0, 150, 60), (140, 40, 170)


@dataclass
class Explained:
    """The picture and what is drawn on it."""

    png: Path
    page: PageGraph
    segments: int
    heads: int
    path: str
    notes: list[str] = field(default_factory=list)


def _parse(path: Path, index: int, ocr_dpi: int) -> tuple[Primitives, PageGraph]:
    pdf = _open(path)
    try:
        if not 1 <= index <= len(pdf.pages):
            raise IngestError(f"{path}: page {index} does not exist ({len(pdf.pages)} pages)")
        page = pdf.pages[index - 1]
        try:
            if needs_ocr(page):
                from dkg.pdf.ocr import ocr_primitives, ocr_tolerances

                prim = ocr_primitives(path, index, page, dpi=ocr_dpi)
                return prim, assemble_page(prim, index, ocr_tolerances())
            prim = page_primitives(page, _page_ids(pdf))
            return prim, assemble_page(prim, index)
        finally:
            page.close()
    finally:
        pdf.close()


def explain_page(path: Path, index: int, out: Path, dpi: int = 110, ocr_dpi: int = 200) -> Explained:
    """Parse page ``index`` (1-based) of ``path`` and write the picture of what was read to ``out``.

    Raises:
        IngestError: the file or the page cannot be read.
    """
    import numpy as np
    from PIL import Image, ImageDraw

    from dkg.pdf.ocr import render_gray

    prim, graph = _parse(path, index, ocr_dpi)
    s = dpi / 72.0
    gray = render_gray(path, index, dpi).astype(np.float32)
    faded = (255 - (255 - gray) * 0.35).astype(np.uint8)  # the page at a third of its ink
    img = Image.fromarray(faded).convert("RGB")
    draw = ImageDraw.Draw(img)

    def box(b: BBox, colour: tuple[int, int, int], width: int = 2) -> None:
        draw.rectangle([b[0] * s, b[1] * s, b[2] * s, b[3] * s], outline=colour, width=width)

    for seg in prim.segments:
        draw.line([seg.a[0] * s, seg.a[1] * s, seg.b[0] * s, seg.b[1] * s], fill=ORANGE, width=2)
    for h in prim.heads:
        draw.rectangle([h[0] * s, h[1] * s, h[2] * s, h[3] * s], fill=RED)
    by_id = {b.id: b for b in graph.boxes}
    for b in graph.boxes:
        box(b.bbox, BLUE)
        draw.text((b.bbox[0] * s + 2, b.bbox[1] * s - 11), b.id, fill=BLUE)
    for a in graph.arrows:
        src, tgt = by_id.get(a.source), by_id.get(a.target)
        if src is None or tgt is None:
            continue
        centre = ((tgt.bbox[0] + tgt.bbox[2]) / 2 * s, (tgt.bbox[1] + tgt.bbox[3]) / 2 * s)
        p = _entry_point(src.bbox, centre, s)
        q = _entry_point(tgt.bbox, p, s)
        draw.line([p, q], fill=GREEN, width=3)
        draw.ellipse([q[0] - 4, q[1] - 4, q[0] + 4, q[1] + 4], fill=GREEN)
        if a.label:
            draw.text(((p[0] + q[0]) / 2 + 3, (p[1] + q[1]) / 2), a.label, fill=GREEN)
    for rect, _target in prim.links:
        box(rect, PURPLE, 1)
    for link in graph.links:
        src = by_id.get(link.source)
        if src is not None:
            where = link.target_page_label or (f"module {link.target_module}" if link.target_module else "?")
            if link.target_box_number:
                where += f" box {link.target_box_number}"
            draw.text((src.bbox[2] * s + 3, src.bbox[3] * s - 11), f"-> {where}", fill=PURPLE)
    legend = (f"page {index} ({graph.label or 'no label'}, {prim.path}): {len(graph.boxes)} boxes (blue), "
              f"{len(prim.segments)} segments (orange), {len(prim.heads)} heads (red), {len(graph.arrows)} arrows "
              f"(green), {len(graph.links)} links (purple)")
    draw.rectangle([0, 0, img.width, 14], fill=(255, 255, 255))
    draw.text((4, 2), legend, fill=(0, 0, 0))
    out.parent.mkdir(parents=True, exist_ok=True)
    img.save(out)
    return Explained(out, graph, len(prim.segments), len(prim.heads), prim.path, list(graph.warnings))


def _entry_point(b: BBox, frm: tuple[float, float], s: float) -> tuple[float, float]:
    """Where a line from ``frm`` meets the box ``b`` (scaled), on the side facing it."""
    cx, cy = (b[0] + b[2]) / 2 * s, (b[1] + b[3]) / 2 * s
    dx, dy = cx - frm[0], cy - frm[1]
    if abs(dy) >= abs(dx):
        return (cx, b[1] * s) if dy > 0 else (cx, b[3] * s)
    return (b[0] * s, cy) if dx > 0 else (b[2] * s, cy)
