"""Primitives of a page with a text layer, read with pdfplumber."""

from __future__ import annotations

import itertools
import math
from typing import Any

from dkg.pdf.geometry import Segment, dedupe_segments
from dkg.pdf.layout import Primitives
from dkg.pdf.models import BBox
from dkg.pdf.text import Glyph

MIN_BOX_W, MIN_BOX_H = 14.0, 8.0
MAX_HEAD = 14.0


def _bbox(obj: dict[str, Any]) -> BBox:
    return (float(obj["x0"]), float(obj["top"]), float(obj["x1"]), float(obj["bottom"]))


def _closed(pts: list[tuple[float, float]]) -> bool:
    return len(pts) >= 3 and math.dist(pts[0], pts[-1]) < 1.0


def _shape_name(pts: list[tuple[float, float]], bbox: BBox) -> str:
    n = len(pts)
    w, h = bbox[2] - bbox[0], bbox[3] - bbox[1]
    if n <= 6:
        corner = any(abs(p[0] - bbox[0]) < 1 and abs(p[1] - bbox[1]) < 1 for p in pts)
        return "diamond" if n == 5 and not corner else "polygon"
    return "oval" if abs(w - h) < 0.1 * max(w, h) or n > 40 else "rounded"


def page_primitives(page: Any, page_objid_to_index: dict[int, int]) -> Primitives:
    """Read boxes, arrowheads, connector segments, glyphs and link annotations from a page."""
    width, height = float(page.width), float(page.height)
    shapes: list[tuple[BBox, str]] = []
    heads: list[BBox] = []
    segments: list[Segment] = []
    for r in page.rects:
        b = _bbox(r)
        w, h = b[2] - b[0], b[3] - b[1]
        if w >= MIN_BOX_W and h >= MIN_BOX_H:
            if r.get("stroke") or r.get("fill"):
                shapes.append((b, "rect"))
        elif max(w, h) <= MAX_HEAD and min(w, h) >= 1.5 and r.get("fill"):
            heads.append(b)
        elif h < 1.5 or w < 1.5:  # hairline rectangles drawn as lines
            y = (b[1] + b[3]) / 2
            x = (b[0] + b[2]) / 2
            segments.append(Segment((b[0], y), (b[2], y)) if w > h else Segment((x, b[1]), (x, b[3])))
    for c in page.curves:
        pts = [(float(x), float(y)) for x, y in c["pts"]]
        b = _bbox(c)
        w, h = b[2] - b[0], b[3] - b[1]
        if _closed(pts) or c.get("fill"):
            if max(w, h) <= MAX_HEAD:
                heads.append(b)
            elif w >= MIN_BOX_W and h >= MIN_BOX_H:
                shapes.append((b, _shape_name(pts, b)))
            continue
        segments += [Segment(a, z) for a, z in itertools.pairwise(pts) if math.dist(a, z) > 0.2]
    for ln in page.lines:
        pts = [(float(x), float(y)) for x, y in ln["pts"]]
        segments += [Segment(a, z) for a, z in itertools.pairwise(pts) if math.dist(a, z) > 0.2]
    glyphs: list[Glyph] = []
    space = False
    for ch in page.chars:
        text = str(ch["text"])
        if not text.strip():
            space = True  # some PDFs (word processors) print the spaces between words
            continue
        glyphs.append(Glyph(text, float(ch["x0"]), float(ch["top"]), float(ch["x1"]), float(ch["bottom"]),
                            float(ch["size"]), space_before=space))
        space = False
    links: list[tuple[BBox, int | None]] = []
    for a in page.annots or []:
        data = a.get("data") or {}
        if str(data.get("Subtype", "")).strip("/'") not in ("Link", "/'Link'") and "Link" not in str(
                data.get("Subtype", "")):
            continue
        if a.get("uri"):
            continue
        links.append((_bbox(a), _dest_page(data, page, page_objid_to_index)))
    # Arrows drawn over each other (several sources joining one leg) repeat strokes: keep one.
    segments = dedupe_segments(segments)
    return Primitives(width, height, "vector", shapes, heads, segments, glyphs, links)


def _dest_page(data: dict[str, Any], page: Any, objids: dict[int, int]) -> int | None:
    dest = data.get("Dest")
    action = data.get("A")
    try:
        from pdfminer.pdftypes import resolve1

        if dest is None and action is not None:
            action = resolve1(action)
            dest = action.get("D") if isinstance(action, dict) else None
        dest = resolve1(dest)
        if isinstance(dest, bytes | str):  # a named destination
            name = dest.decode("latin-1") if isinstance(dest, bytes) else dest
            doc = page.pdf.doc
            dest = resolve1(doc.get_dest(name))
            if isinstance(dest, dict):
                dest = resolve1(dest.get("D"))
        if isinstance(dest, list) and dest:
            ref = dest[0]
            objid = getattr(ref, "objid", None)
            if objid is not None:
                return objids.get(int(objid))
            if isinstance(ref, int):
                return ref + 1
    except Exception:  # a broken destination is reported as unresolved, not fatal
        return None
    return None
