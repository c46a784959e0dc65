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

# A glyph of the Symbol font in a PDF without a /ToUnicode map is decoded by its code in the Standard encoding:
# "≥" (code 0xB3) comes out as "‡", "≤" (0xA3) as "£", "≠" as "„", "→" as "ﬁ", "×" as "·", and Latin letters
# stand for Greek ones. Word processors and PDF libraries put ≥ and ≤ in that font when the text font lacks them.
SYMBOL_FONT = {"‡": "≥", "£": "≤", "„": "≠", "ﬁ": "→", "ﬂ": "↓", "‹": "←", "›": "↑", "¥": "∞", "·": "×", "–": "±",
               "†": "″", "¢": "′", "a": "α", "b": "β", "g": "γ", "d": "δ", "e": "ε", "k": "κ", "l": "λ", "m": "μ",
               "p": "π", "s": "σ", "t": "τ", "c": "χ", "f": "φ", "w": "ω", "D": "Δ"}


def glyph_text(text: str, fontname: str) -> str:
    """A character's text, with the Symbol font's codes read as that font's glyphs."""
    if "symbol" in fontname.lower():
        return SYMBOL_FONT.get(text, text)
    return text


def _bbox(obj: dict[str, Any]) -> BBox:
    return (float(obj["x0"]), float(obj["top"]), float(obj["x1"]), float(obj["bottom"]))


def _closed(pts: list[tuple[float, float]]) -> bool:
    return len(pts) >= 3 and math.dist(pts[0], pts[-1]) < 1.0


def _flatten(path: list[Any] | None, pts: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The points along a path, with each cubic Bézier piece sampled (pdfplumber's ``pts`` keep only the
    ends of a curve, so a curved connector would become its chord and pass close by its own arrowhead)."""
    if not path or not any(op[0] == "c" for op in path):
        return pts
    out: list[tuple[float, float]] = []
    for op in path:
        kind, args = op[0], [(float(x), float(y)) for x, y in op[1:]]
        if kind in ("m", "l") and args:
            out.append(args[-1])
        elif kind == "c" and len(args) == 3 and out:
            p0, (c1, c2, p3) = out[-1], args
            # about one point per 3 pt of the control polygon: fine enough that the last piece runs along
            # the curve's own tangent into its arrowhead
            steps = max(8, min(48, int((math.dist(p0, c1) + math.dist(c1, c2) + math.dist(c2, p3)) / 3)))
            for i in range(1, steps + 1):
                t = i / steps
                u = 1 - t
                out.append((u ** 3 * p0[0] + 3 * u * u * t * c1[0] + 3 * u * t * t * c2[0] + t ** 3 * p3[0],
                            u ** 3 * p0[1] + 3 * u * u * t * c1[1] + 3 * u * t * t * c2[1] + t ** 3 * p3[1]))
        elif kind == "h" and out:
            out.append(out[0])
    return out or pts


def _shape_name(pts: list[tuple[float, float]], bbox: BBox, curved: bool = False) -> str:
    if curved:  # drawn with Bézier pieces: an ellipse, or a box with rounded corners
        w, h = bbox[2] - bbox[0], bbox[3] - bbox[1]
        straight = sum(1 for a, z in itertools.pairwise(pts) if abs(a[0] - z[0]) < 0.01 or abs(a[1] - z[1]) < 0.01)
        return "rounded" if straight >= 4 and min(w, h) > 0 else "oval"
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
                curved = any(op[0] == "c" for op in c.get("path") or [])
                shapes.append((b, _shape_name(pts, b, curved)))
            continue
        flat = _flatten(c.get("path"), pts)
        if len(flat) > len(pts):  # a curve: its pieces join the rest of the drawing only at its two ends
            pieces = [(a, z) for a, z in itertools.pairwise(flat) if math.dist(a, z) > 0.01]
            segments += [Segment(a, z, inner=(k > 0, k < len(pieces) - 1)) for k, (a, z) in enumerate(pieces)]
            continue
        segments += [Segment(a, z) for a, z in itertools.pairwise(pts) if math.dist(a, z) > 0.2]
    for ln in page.lines:
        pts = [(float(x), float(y)) for x, y in ln["pts"]]
        segments += [Segment(a, z) for a, z in itertools.pairwise(pts) if math.dist(a, z) > 0.2]
    glyphs: list[Glyph] = []
    space = False
    for ch in page.chars:
        text = glyph_text(str(ch["text"]), str(ch.get("fontname") or ""))
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
