"""Page layout analysis shared by the vector and the OCR path.

Input: primitives (candidate box outlines, arrowheads, connector segments, glyphs, link
annotations). Output: a :class:`PageGraph` with boxes and their text, arrows, column headers,
footnotes, page furniture, arrow labels and page links.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from dkg.pdf.geometry import (
    Connector,
    Point,
    Segment,
    box_box_distance,
    build_connectors,
    contains,
    point_box_distance,
    point_segment_distance,
)
from dkg.pdf.models import Arrow, BBox, Box, FootnoteRef, PageGraph, PageLink, PagePath
from dkg.pdf.text import (
    Glyph,
    Line,
    dominant_size,
    glyphs_in,
    group_lines,
    join_lines,
    render_line,
    split_segments,
)

PAGE_LABEL = re.compile(r"\b([A-Z][A-Z0-9]{0,9}-\d{1,3})\b")
VERSION = re.compile(r"\bVersion\s+(\d+\.\d{4}|\d+(?:\.\d+)*)\b", re.IGNORECASE)
SEE_LINK = re.compile(r"\(?\bSee\s+([A-Z][A-Z0-9]{0,9}-\d{1,3})\)?")
GOTO_LINK = re.compile(r"\bGo\s*to\s*Module\s*([A-Z0-9]{1,3})\b\W{0,3}(?:Box\s*(\d{1,3}))?", re.IGNORECASE)
BOX_NUMBER = re.compile(r"^\d{1,3}$")


@dataclass
class Primitives:
    """Everything a page offers before interpretation."""

    width: float
    height: float
    path: PagePath
    shapes: list[tuple[BBox, str]]
    heads: list[BBox]
    segments: list[Segment]
    glyphs: list[Glyph]
    links: list[tuple[BBox, int | None]] = field(default_factory=list)
    """Link annotations: rectangle and 1-based target page (None if unresolvable)."""
    confidences: dict[BBox, float] = field(default_factory=dict)
    """OCR only: confidence per word bbox."""
    weak: list[Glyph] = field(default_factory=list)
    """OCR only: words outside boxes read with low confidence. They never start a box or a label; they complete a
    borderless box that confident words start (a word read badly at a block's end or in its middle)."""


@dataclass
class Tolerances:
    """Distances in points; the OCR path scales them to its noisier geometry."""

    join: float = 1.5
    source: float = 6.0
    head_terminal: float = 3.0
    head_box: float = 5.0
    open_head: float = 12.0
    label: float = 16.0
    fan: float = 1.5
    """How close the starts of lines fanning out of one spot lie (a scan's traced lines stop a few points apart)."""


def _dedupe_shapes(shapes: Sequence[tuple[BBox, str]], glyphs: Sequence[Glyph]) -> list[tuple[BBox, str]]:
    kept: list[tuple[BBox, str]] = []
    for bbox, shape in sorted(shapes, key=lambda s: (s[0][2] - s[0][0]) * (s[0][3] - s[0][1])):
        if not glyphs_in(glyphs, bbox, pad=0.0):
            continue
        if any(all(abs(a - b) < 1.5 for a, b in zip(bbox, k, strict=True)) for k, _ in kept):
            continue
        kept.append((bbox, shape))
    # A frame around several boxes (a panel, the whole chart) is not a box.
    inner_counts = [sum(1 for other, _ in kept if other != bbox and contains(bbox, other)) for bbox, _ in kept]
    return [s for s, n in zip(kept, inner_counts, strict=True) if n == 0]


def _box_text(glyphs: Sequence[Glyph]) -> tuple[list[str], str, str, list[tuple[str, str]]]:
    lines = group_lines(glyphs, dominant_size(glyphs))
    plains, markups, refs = [], [], []
    for line in lines:
        plain, markup, r = render_line(line)
        plains.append(plain)
        markups.append(markup)
        refs += r
    return [p for p in plains if p], join_lines(plains), join_lines(markups), refs


def _heads_from_open_arrows(conn: Connector, tol: Tolerances) -> tuple[list[Point], list[Point]]:
    """Open arrowheads (two short wings meeting at the tip): return (tips, wing terminals)."""
    short = []
    for t in conn.terminals:
        length = sum(conn.segments[i].length for i in conn.branches[t])
        if length <= tol.open_head:
            short.append(t)
    tips: list[Point] = []
    wings: list[Point] = []
    for i, a in enumerate(short):
        for b in short[i + 1:]:
            ea = _junction(conn, a)
            eb = _junction(conn, b)
            if ea is not None and eb is not None and math.dist(ea, eb) <= tol.join * 2:
                tips.append(ea)
                wings += [a, b]
    return tips, wings


def _junction(conn: Connector, terminal: Point) -> Point | None:
    idx = conn.branches[terminal]
    if not idx:
        return None
    last = conn.segments[idx[-1]]
    # the far end of the branch's last segment
    first_seg = conn.segments[idx[0]]
    if len(idx) == 1:
        return first_seg.b if math.dist(first_seg.a, terminal) < math.dist(first_seg.b, terminal) else first_seg.a
    prev = conn.segments[idx[-2]]
    return last.a if min(math.dist(last.b, prev.a), math.dist(last.b, prev.b)) < 1e-6 + 3 else last.b


def _borderless_blocks(prim: Primitives, shapes: Sequence[tuple[BBox, str]], body: float,
                       tol: Tolerances) -> list[tuple[BBox, str]]:
    """Boxes drawn without an outline: blocks of text where connectors end but no outline is.

    Lines of text outside every outline are grouped into blocks (stacked, overlapping lines); a
    block of at least two words becomes a box when a loose connector end or an arrowhead, not
    near any outlined box, touches it. Arrow labels sit along a line, not at its ends, and stay text.
    """
    # only connectors that are arrows (they carry a head) count; rules and underlines do not
    ends: list[Point] = [((h[0] + h[2]) / 2, (h[1] + h[3]) / 2) for h in prim.heads]
    # where arrows end (filled heads and the tips of open ones), with the way the arrow runs there when known
    pointed: list[tuple[Point, tuple[float, float] | None]] = []
    along: dict[int, tuple[float, float]] = {}
    for conn in build_connectors(prim.segments, tol.join):
        tips, _ = _heads_from_open_arrows(conn, tol)
        # a head at a loose end, or at the end several arrows share (a merge into one head)
        ends_of = [*conn.terminals, *(p for s in conn.segments for p in (s.a, s.b) if _is_fan_point(conn, p, tol))]
        headed = tips or any(point_box_distance(t, _grow(h, tol.head_terminal)) == 0
                             for t in ends_of for h in prim.heads)
        if headed:
            ends += [*conn.terminals, *tips]
            pointed += [(t, None) for t in tips]
        for t in conn.terminals:
            for k, h in enumerate(prim.heads):
                if k not in along and conn.branches.get(t) and point_box_distance(t, _grow(h, tol.head_terminal)) == 0:
                    seg = conn.segments[conn.branches[t][0]]
                    far = seg.b if math.dist(seg.a, t) < math.dist(seg.b, t) else seg.a
                    d = math.dist(far, t)
                    if d > 1.0:
                        along[k] = ((t[0] - far[0]) / d, (t[1] - far[1]) / d)
    pointed += [(((h[0] + h[2]) / 2, (h[1] + h[3]) / 2), along.get(k)) for k, h in enumerate(prim.heads)]
    free = [p for p in ends if all(point_box_distance(p, _grow(b, tol.source)) > 0 for b, _ in shapes)]
    if len(free) < 2:
        return []
    # the running footer (page label, version line) ends the page's flow, wherever this page puts it
    footer = [ln.top for ln in group_lines([g for g in prim.glyphs if g.cy >= prim.height * 0.8], body)
              if PAGE_LABEL.search(render_line(ln)[0]) or VERSION.search(render_line(ln)[0])]
    floor = max(footer, default=prim.height * 0.88) - 1
    outside = [g for g in prim.glyphs
               if not any(b[0] - 1 <= g.cx <= b[2] + 1 and b[1] - 1 <= g.cy <= b[3] + 1 for b, _ in shapes)
               and prim.height * 0.1 < g.cy < floor]
    weak: set[tuple[float, float, str]] = set()
    if prim.path == "ocr":  # Tesseract's sparse-text lines split a block's words: group them by place instead
        # (a weak word of no text's size, or on a line that runs on past it, is an arrow's ink read as letters:
        # "cee" for an elbow between two blocks; the word's own letters leave short strokes inside it)
        def on_a_line(g: Glyph) -> bool:
            word = (g.x0, g.top, g.x1, g.bottom)
            return any(point_segment_distance((g.cx, g.cy), sg) <= (g.bottom - g.top) / 2 + 2
                       and max(point_box_distance(sg.a, word), point_box_distance(sg.b, word)) > 3.0
                       for sg in prim.segments)

        extra = [g for g in prim.weak if not any(b[0] - 1 <= g.cx <= b[2] + 1 and b[1] - 1 <= g.cy <= b[3] + 1
                                                 for b, _ in shapes) and prim.height * 0.1 < g.cy < floor
                 and g.bottom - g.top <= 2 * body and g.x1 - g.x0 <= len(g.text) * body and not on_a_line(g)]
        weak = {(g.x0, g.top, g.text) for g in extra}
        outside = [replace(g, line_key=None, space_before=True) for g in [*outside, *extra]]
    # OCR drops a low-confidence word now and then ("Stage I, T1a" read as "Stage T1a"): a wider gap splits there
    gap = max(1.5 * body, 8.0) if prim.path == "vector" else max(2.5 * body, 12.0)
    segs = [s for ln in group_lines(outside, body) for s in split_segments(ln, gap=gap) if s.glyphs]
    # a footnote starts with its raised marker; the notes and all below them are no box
    notes = [s.top for s in segs if s.markers and s.markers[0][0] <= s.glyphs[0].x0 + 0.5 and s.top > prim.height * 0.5]
    if notes:
        segs = [s for s in segs if s.top < min(notes) - 0.5]
    blocks: list[list[Line]] = []
    for s in sorted(segs, key=lambda s: (s.top, s.x0)):
        for blk in blocks:
            last = blk[-1]
            overlap = min(last.x1, s.x1) - max(last.x0, s.x0)
            if 0 <= s.top - last.bottom <= 0.8 * s.size and overlap > 0:
                blk.append(s)
                break
        else:
            blocks.append([s])
    out: list[tuple[BBox, str]] = []
    for blk in blocks:
        if all((g.x0, g.top, g.text) in weak for s in blk for g in s.glyphs):
            continue  # weak words alone start no box
        text = " ".join(render_line(s)[0] for s in blk)
        if sum(ch.isalpha() for ch in text) < 4:
            continue
        bbox = (min(s.x0 for s in blk) - 3, min(s.top for s in blk) - 3,
                max(s.x1 for s in blk) + 3, max(s.bottom for s in blk) + 3)
        # One short word is a box only where an arrowhead points straight at it ("Surveillance"): the head
        # lies level with the text or right above or below it. An arrow's label ("Yes", "Good") sits beside
        # its line, so the head that may be near it is off to one side.
        x0, top, x1, bottom = bbox[0] + 3, bbox[1] + 3, bbox[2] - 3, bbox[3] - 3
        if (len(text.split()) < 2 or len(text) < 8) and not any(_points_at(p, d, bbox, (x0, top, x1, bottom), tol)
                                                               for p, d in pointed):
            continue
        if any(point_box_distance(p, bbox) <= tol.head_box for p in free):
            out.append((bbox, "borderless"))
    return out


def _points_at(p: Point, d: tuple[float, float] | None, grown: BBox, text: BBox, tol: Tolerances) -> bool:
    """Whether the arrowhead at ``p`` (running along ``d`` where known) points straight at a block of text.

    With the direction known, the block lies just ahead of the head. A label set beside its line close to the
    head ("Good" just before the tip) is level with or above the head, but not ahead of it. Without it, the
    head lies level with the text or right above or below it.
    """
    if point_box_distance(p, grown) > tol.head_box:
        return False
    if d is None:
        return text[1] <= p[1] <= text[3] or text[0] <= p[0] <= text[2]
    ahead = (p[0] + d[0] * 2 * tol.head_box, p[1] + d[1] * 2 * tol.head_box)
    return point_box_distance(ahead, grown) == 0


def _is_shaft(u: tuple[float, float], length: float, ui: tuple[float, float], uj: tuple[float, float],
              wing: float) -> bool:
    """Whether a line leaving a V's tip in direction ``u`` is its shaft: it runs back between the wings (unit
    directions ``ui``, ``uj``), each wing about as far from it, and it is longer than they are (a branch fanning
    out beside others is not). A curve's last piece (``length`` infinite) need only run roughly along."""
    norm = math.hypot(ui[0] + uj[0], ui[1] + uj[1]) or 1.0
    along = (u[0] * (ui[0] + uj[0]) + u[1] * (ui[1] + uj[1])) / norm > math.cos(math.radians(35))
    if length == math.inf:
        return along
    a_i = math.acos(max(-1.0, min(1.0, u[0] * ui[0] + u[1] * ui[1])))
    a_j = math.acos(max(-1.0, min(1.0, u[0] * uj[0] + u[1] * uj[1])))
    return along and abs(a_i - a_j) < math.radians(20) and length >= 1.2 * wing


def _open_heads(segments: Sequence[Segment], tol: Tolerances) -> tuple[list[Segment], list[BBox]]:
    """Open arrowheads (a "V" of two short strokes whose tip ends a longer line) as head boxes.

    The strokes are taken out of the segments, so a wing that happens to touch its own line (a curve
    that bends into its head) no longer hides the head. A "V" is a head only where its opening faces
    the line that comes in: the wings' bisector runs along that line, back from the tip.
    """
    def ends_at(s: Segment, p: Point) -> Point | None:
        if math.dist(s.a, p) <= tol.join:
            return s.b
        if math.dist(s.b, p) <= tol.join:
            return s.a
        return None

    def unit(a: Point, b: Point) -> tuple[float, float]:
        d = math.dist(a, b) or 1.0
        return ((b[0] - a[0]) / d, (b[1] - a[1]) / d)

    short = [i for i, s in enumerate(segments) if s.length <= tol.open_head]
    # short strokes by the grid cells of their ends, so only strokes that meet are paired
    cell = max(tol.join, 0.5)
    grid: dict[tuple[int, int], list[int]] = {}
    for i in short:
        for p in (segments[i].a, segments[i].b):
            grid.setdefault((int(p[0] // cell), int(p[1] // cell)), []).append(i)

    def meeting(i: int) -> list[int]:
        out: set[int] = set()
        for p in (segments[i].a, segments[i].b):
            gx, gy = int(p[0] // cell), int(p[1] // cell)
            out.update(j for dx in (-1, 0, 1) for dy in (-1, 0, 1) for j in grid.get((gx + dx, gy + dy), ()) if j > i)
        return sorted(out)

    wings: set[int] = set()
    heads: list[BBox] = []
    for i in short:
        for j in meeting(i):
            if i in wings or j in wings:
                continue
            si, sj = segments[i], segments[j]
            for tip in (si.a, si.b):
                oi, oj = ends_at(si, tip), ends_at(sj, tip)
                if oi is None or oj is None:
                    continue
                # a wing ends in the open (it may brush its own line, but no stroke goes on from its end): the
                # first pieces of lines fanning out of one spot go on, so they make no V
                # (a stroke that is a piece of a curve goes on; another curve passing through a wing's end there,
                # mid-curve, does not go on from it)
                if any(si.inner) or any(sj.inner) or any(
                        n not in (i, j) and min((math.dist(q, o) for q, inner in ((t.a, t.inner[0]), (t.b, t.inner[1]))
                                                 if not inner for o in (oi, oj)), default=1.0) < 0.05
                        for n, t in enumerate(segments)):
                    continue
                ui, uj = unit(tip, oi), unit(tip, oj)
                if ui[0] * uj[0] + ui[1] * uj[1] < math.cos(math.radians(120)) or \
                        ui[0] * uj[0] + ui[1] * uj[1] > math.cos(math.radians(15)):
                    continue  # not a V: a straight run or a hairpin
                if not 0.5 <= si.length / sj.length <= 2.0:
                    continue  # the two wings of a head are about as long as each other
                # (a piece of a curve counts as long: the curve goes on past its inner end)
                lines = [(o, t.length if not any(t.inner) else math.inf) for n, t in enumerate(segments)
                         if n not in (i, j) and t.length > 0.5 and (o := ends_at(t, tip)) is not None]

                if not any(_is_shaft(unit(tip, o), n_, ui, uj, max(si.length, sj.length)) for o, n_ in lines):
                    continue
                wings.update((i, j))
                xs, ys = [tip[0], oi[0], oj[0]], [tip[1], oi[1], oj[1]]
                heads.append((min(xs), min(ys), max(xs), max(ys)))
                break
    return [s for n, s in enumerate(segments) if n not in wings], heads


def assemble_page(prim: Primitives, index: int, tol: Tolerances | None = None) -> PageGraph:
    """Interpret one page's primitives as a flowchart page."""
    tol = tol or Tolerances()
    segments, open_heads = _open_heads(prim.segments, tol)
    if open_heads:
        prim = replace(prim, segments=segments, heads=[*prim.heads, *open_heads])
    body = dominant_size(prim.glyphs)
    shapes = _dedupe_shapes(prim.shapes, prim.glyphs)
    # On a scan, text blocks become boxes only on a page drawn without outlines: among outlined boxes,
    # OCR noise would invent more
    if prim.path == "vector" or len(shapes) < 2:
        borderless = _borderless_blocks(prim, shapes, body, tol)
        shapes += borderless
        # the weak words inside a borderless box are its text too
        inside = [g for g in prim.weak if any(b[0] <= g.cx <= b[2] and b[1] <= g.cy <= b[3] for b, _ in borderless)]
        if inside:
            prim = replace(prim, glyphs=[*prim.glyphs, *inside])
    page = PageGraph(index=index, path=prim.path)

    # --- glyphs inside boxes -------------------------------------------------------------
    owner: dict[int, int] = {}
    for gi, g in enumerate(prim.glyphs):
        best = None
        for bi, (bbox, _) in enumerate(shapes):
            if bbox[0] - 1 <= g.cx <= bbox[2] + 1 and bbox[1] - 1 <= g.cy <= bbox[3] + 1:
                area = (bbox[2] - bbox[0]) * (bbox[3] - bbox[1])
                if best is None or area < best[0]:
                    best = (area, bi)
        if best is not None:
            owner[gi] = best[1]
    raw_boxes = []
    for bi, (bbox, shape) in enumerate(shapes):
        gl = [g for gi, g in enumerate(prim.glyphs) if owner.get(gi) == bi]
        lines, text, markup, refs = _box_text(gl)
        if sum(ch.isalnum() for ch in text) < 2:
            continue  # an empty outline, or a hole between crossing lines read as "/\"
        conf = None
        if prim.confidences:
            confs = [c for b, c in prim.confidences.items() if bbox[0] <= (b[0] + b[2]) / 2 <= bbox[2]
                     and bbox[1] <= (b[1] + b[3]) / 2 <= bbox[3]]
            conf = sum(confs) / len(confs) if confs else None
        raw_boxes.append((bbox, shape, lines, text, markup, refs, conf))
    raw_boxes.sort(key=lambda r: (round(r[0][0] / 20), r[0][1]))
    for k, (bbox, shape, lines, text, markup, refs, conf) in enumerate(raw_boxes):
        page.boxes.append(Box(
            id=f"p{index}_b{k + 1}", page_index=index, page_label="", bbox=bbox, shape=shape,
            lines=lines, text=text, text_markup=markup,
            footnotes=[FootnoteRef(marker=m, anchor=a) for group, a in refs for m in group.split(",") if m],
            confidence=conf,
        ))

    outside = [g for gi, g in enumerate(prim.glyphs) if gi not in owner]
    outside = _read_box_numbers(page, outside)
    labels = _read_furniture(page, outside, prim, body)
    _read_arrows(page, prim, tol, labels)
    # a text block taken for a borderless box that no arrow reaches was just text
    linked = {a.source for a in page.arrows} | {a.target for a in page.arrows}
    page.boxes = [b for b in page.boxes if b.shape != "borderless" or b.id in linked]
    _read_links(page, prim)
    if len(page.boxes) < 2 or not page.arrows:
        page.kind = "non_flowchart"
    return page


def _read_furniture(page: PageGraph, outside: list[Glyph], prim: Primitives,
                    body: float) -> list[tuple[float, float, str]]:
    """Header, title, column headers, footnotes and footer label; returns arrow-label candidates."""
    lines = group_lines(outside, body)
    segs: list[Line] = [s for ln in lines for s in split_segments(ln, gap=max(1.5 * body, 8.0))]
    top_of_boxes = min((b.bbox[1] for b in page.boxes), default=prim.height * 0.2)
    bottom_of_boxes = max((b.bbox[3] for b in page.boxes), default=prim.height * 0.8)
    header_parts, footer_parts = [], []
    for seg in segs:
        plain, _, _ = render_line(seg)
        if seg.glyphs and seg.bottom <= prim.height * 0.12:
            header_parts.append(plain)
        if seg.glyphs and seg.top >= prim.height * 0.88:
            footer_parts.append(plain)
    page.header_text = " ".join(header_parts)
    labels = [m.group(1) for t in footer_parts for m in PAGE_LABEL.finditer(t)]
    labels = [lb for lb in labels if not VERSION.search(lb)]
    if labels:
        page.label = labels[-1]
    elif m := PAGE_LABEL.search(" ".join(header_parts)):
        page.label = m.group(1)

    # Title: the largest text above the boxes, below the running header.
    above = [s for s in segs if s.glyphs and s.bottom <= top_of_boxes + 1]
    title_seg = None
    candidates = [s for s in above if s.top > prim.height * 0.06 and s.size >= body * 1.05
                  and not VERSION.search(render_line(s)[0])]
    if candidates:
        title_seg = max(candidates, key=lambda s: (s.size, s.top))
        # the guideline name is usually the largest and topmost; the title then comes below it
        tops = sorted(candidates, key=lambda s: s.top)
        if len(tops) >= 2 and tops[0].size > tops[1].size and title_seg is tops[0]:
            title_seg = tops[1]
        page.title = render_line(title_seg)[0]
    # Column headers: text between the title and the first box.
    floor = title_seg.bottom if title_seg is not None else prim.height * 0.1
    heads = [s for s in above if s.top > floor - 0.5 and s is not title_seg]
    # A header printed on two lines ("RELAPSED/REFRACTORY" over "DISEASE") is one header.
    heads.sort(key=lambda s: (s.top, s.x0))
    stacked: list[Line] = []
    for s in heads:
        for h in stacked:
            overlap = min(h.x1, s.x1) - max(h.x0, s.x0)
            if overlap > 0.3 * min(h.x1 - h.x0, s.x1 - s.x0) and 0 <= s.top - h.bottom < 1.2 * s.size:
                h.glyphs.extend(s.glyphs)
                break
        else:
            stacked.append(Line(list(s.glyphs), list(s.markers)))
    heads = sorted(stacked, key=lambda s: s.x0)
    page.column_headers = [_header_text(s) for s in heads]
    for box in page.boxes:
        cx0, cx1 = box.bbox[0], box.bbox[2]
        best = None
        for s in heads:
            overlap = min(cx1, s.x1) - max(cx0, s.x0)
            centre = abs((s.x0 + s.x1) / 2 - (cx0 + cx1) / 2)
            score = (overlap > -5, -centre)
            if best is None or score > best[0]:
                best = (score, s)
        if best is not None and best[0][0]:
            box.column_header = _header_text(best[1])

    # Footnotes: below the boxes, above the footer; a line starting with a raised marker.
    footer_tops = [s.top for s in segs if s.glyphs and s.top >= prim.height * 0.85
                   and (PAGE_LABEL.search(render_line(s)[0]) or VERSION.search(render_line(s)[0]))]
    footer_top = min(footer_tops, default=prim.height * 0.95)
    foot_segs = [s for s in segs if s.top > bottom_of_boxes and s.top < footer_top - 0.5]
    foot_segs.sort(key=lambda s: (s.top, s.x0))
    notes: list[tuple[Line, str, list[str]]] = []
    for s in foot_segs:
        plain, _, _ = render_line(s)
        lead = s.markers[0] if s.markers else None
        if lead is not None and (not s.glyphs or lead[0] <= s.glyphs[0].x0 + 0.5):
            notes.append((s, lead[1].strip(","), [plain]))
        elif notes:
            # continuation: the note above in the same column
            col = [n for n in notes if abs(n[0].x0 - s.x0) < 30 or (n[0].glyphs and abs(n[0].glyphs[0].x0 - s.x0) < 6)]
            if col:
                col[-1][2].append(plain)
    for _, marker, texts in notes:
        for key in marker.split(","):
            if key:
                page.footnotes[key] = join_lines(texts)

    # Arrow labels: short text outside boxes between the first and last box rows.
    page_labels = []
    for s in segs:
        if not s.glyphs or s.top < top_of_boxes - 2 or s.bottom > bottom_of_boxes + 2:
            continue
        plain = render_line(s)[0]
        if 0 < len(plain.split()) <= 3 and not SEE_LINK.search(plain) and any(ch.isalpha() for ch in plain):
            page_labels.append(((s.x0 + s.x1) / 2, (s.top + s.bottom) / 2, plain))
    return page_labels


def _read_box_numbers(page: PageGraph, outside: list[Glyph]) -> list[Glyph]:
    """Numbers printed just outside a box's top-left corner are box numbers; return the rest.

    Characters of a vector page are joined into numbers first ("1", "0" → "10").
    """
    tokens: list[tuple[str, BBox, list[int]]] = []
    for i, g in enumerate(outside):
        if not g.text.isdigit():
            continue
        if tokens and g.line_key is None:
            text, (x0, top, x1, bottom), idx = tokens[-1]
            if abs(g.top - top) < 1 and 0 <= g.x0 - x1 < 0.3 * g.size:
                tokens[-1] = (text + g.text, (x0, top, g.x1, bottom), [*idx, i])
                continue
        tokens.append((g.text, (g.x0, g.top, g.x1, g.bottom), [i]))
    used: set[int] = set()
    taken: set[str] = set()
    for text, (x0, top, x1, bottom), idx in sorted(tokens, key=lambda t: t[1][1]):
        if not BOX_NUMBER.match(text):
            continue
        cx, cy = (x0 + x1) / 2, (top + bottom) / 2
        best = None
        for b in page.boxes:
            if b.id in taken or (b.bbox[0] - 1 <= cx <= b.bbox[2] + 1 and b.bbox[1] - 1 <= cy <= b.bbox[3] + 1):
                continue
            d = math.dist((cx, cy), (b.bbox[0], b.bbox[1]))
            if cx <= b.bbox[0] + 0.35 * (b.bbox[2] - b.bbox[0]) and cy <= b.bbox[1] + 0.5 * (b.bbox[3] - b.bbox[1]) \
                    and d <= 24 and (best is None or d < best[0]):
                best = (d, b)
        if best is not None:
            best[1].number = text
            taken.add(best[1].id)
            used.update(idx)
    return [g for i, g in enumerate(outside) if i not in used]


def _header_text(line: Line) -> str:
    """Text of a (possibly two-line) header: its lines top to bottom."""
    rows = group_lines(line.glyphs)
    return join_lines([render_line(r)[0] for r in rows])


def _read_arrows(page: PageGraph, prim: Primitives, tol: Tolerances,
                 labels: list[tuple[float, float, str]]) -> None:
    boxes = page.boxes
    long_rule = prim.width * 0.8
    segs = [s for s in prim.segments if not (abs(s.a[1] - s.b[1]) < 0.5 and s.length > long_rule)]
    # Box outlines drawn as separate lines are not connectors.
    segs = [s for s in segs if not any(_on_border(s, b.bbox) for b in boxes)]
    connectors = build_connectors(segs, tol.join)
    used_labels: set[int] = set()
    seen: set[tuple[str, str]] = set()
    read: list[tuple[Connector, list[tuple[Point, str]], list[tuple[Point, str]]]] = []
    n = 0
    for conn in connectors:
        tips, wings = _heads_from_open_arrows(conn, tol)
        sources: list[tuple[Point, str]] = []
        targets: list[tuple[Point, str]] = []
        # Where an arrow starts: loose ends, and also the shared start point of arrows that fan
        # out from one spot on a box edge (their ends meet each other, so none is loose).
        points = list(dict.fromkeys([*conn.terminals, *(p for s in conn.segments for p in (s.a, s.b))]))
        # Each arrowhead belongs to the one loose end nearest to it: on a short arrow both ends
        # can lie within the tolerance of the head.
        owner: dict[Point, BBox] = {}
        for h in prim.heads:
            near = [(point_box_distance(t, h), t) for t in conn.terminals
                    if point_box_distance(t, _grow(h, tol.head_terminal)) == 0]
            if near:
                owner.setdefault(min(near)[1], h)
        if len(owner) > 1:
            # a speck at a line's start is no head: a head of one connector is not far smaller than its others
            area = {t: (h[2] - h[0]) * (h[3] - h[1]) for t, h in owner.items()}
            biggest = max(area.values())
            owner = {t: h for t, h in owner.items() if area[t] >= 0.35 * biggest}
        for t in points:
            if t in wings or any(math.dist(t, tip) <= tol.join for tip in tips):
                continue  # an arrowhead's wing or tip is where an arrow ends, not where one starts
            head = owner.get(t)
            if head is None and t not in conn.terminals:
                head = next((h for h in prim.heads if point_box_distance(t, h) == 0), None)
            if head is not None:
                box = _nearest_box(boxes, head, tol.head_box)
                # arrows from several boxes may end in one shared head (a merge): their ends meet, or on a
                # scan come within a few points of each other inside the head's ink
                if box and (t in conn.terminals or _is_fan_point(conn, t, tol) or prim.path == "ocr"):
                    targets.append((t, box))
            elif t in conn.terminals and any(point_box_distance(t, _grow(h, tol.head_terminal)) == 0
                                             and not set(conn.branches.get(t, [])) & set(conn.branches.get(o, []))
                                             for o, h in owner.items()):
                continue  # a loose wing of a head another end of this line owns (a scan kept one wing apart); the
                # start of a short arrow, on the same stroke as the end that owns the head, is no wing
            elif t in conn.terminals or _is_fan_point(conn, t, tol):
                box = _nearest_point_box(boxes, t, tol.source)
                if box:
                    sources.append((t, box))
        for tip in tips:
            box = _nearest_point_box(boxes, tip, tol.head_box)
            if box:
                targets.append((tip, box))
        read.append((conn, sources, targets))
    headless = [(conn, sources) for conn, sources, targets in read if not targets]
    read = _crossing_starts(read)
    centre = {b.id: ((b.bbox[0] + b.bbox[2]) / 2, (b.bbox[1] + b.bbox[3]) / 2) for b in boxes}
    bbox = {b.id: b.bbox for b in boxes}
    flow = _page_flow(centre, [(src, dst) for _, ss, ts in read if len({b for _, b in ss}) == 1
                               for _, src in ss[:1] for _, dst in ts if src != dst])
    for conn, sources, targets in read:
        if flow is not None and targets and len({b for _, b in sources}) > 1:
            sources, targets = _lost_heads_of_a_fan(sources, targets, centre, bbox, flow, tol)
        for _, src in sources:
            for tpoint, dst in targets:
                if src == dst or (src, dst) in seen:
                    continue
                seen.add((src, dst))
                n += 1
                label = _label_for(conn, tpoint, targets, labels, used_labels, tol)
                page.arrows.append(Arrow(id=f"p{page.index}_a{n}", source=src, target=dst, label=label))
    for src, dst in _by_the_flow(page, headless, centre, tol):
        if (src, dst) not in seen:
            seen.add((src, dst))
            n += 1
            page.arrows.append(Arrow(id=f"p{page.index}_a{n}", source=src, target=dst, label=None))


def _crossing_starts(read: list[tuple[Connector, list[tuple[Point, str]], list[tuple[Point, str]]]]
                     ) -> list[tuple[Connector, list[tuple[Point, str]], list[tuple[Point, str]]]]:
    """A line with heads but no start that crosses a line which has one: the crossing is their junction.

    On a scan the line from a box to the middle branch of a fan-out runs straight through the bus, and both
    are traced as whole strokes that cross; neither ends at the junction, so the bus stands alone. Every arrow
    starts somewhere: the bus's heads are reached from the starts of the line it crosses.
    """
    out = []
    for conn, sources, targets in read:
        if targets and not sources:
            for other, other_sources, _ in read:
                if other is not conn and other_sources and any(
                        _crosses(s, t) for s in conn.segments for t in other.segments):
                    sources = list(other_sources)
                    break
        out.append((conn, sources, targets))
    return out


def _crosses(s: Segment, t: Segment) -> bool:
    """Whether two strokes cross each other inside both (not at an end)."""
    def side(a: Point, b: Point, p: Point) -> float:
        return (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])

    return side(s.a, s.b, t.a) * side(s.a, s.b, t.b) < 0 and side(t.a, t.b, s.a) * side(t.a, t.b, s.b) < 0


def _page_flow(centre: dict[str, Point], pairs: list[tuple[str, str]]) -> tuple[float, float] | None:
    """The way a page's arrows run: the mean of their unit directions, or None when they run every way."""
    units = []
    for src, dst in pairs:
        if src in centre and dst in centre:
            dx, dy = centre[dst][0] - centre[src][0], centre[dst][1] - centre[src][1]
            d = math.hypot(dx, dy) or 1.0
            units.append((dx / d, dy / d))
    if len(units) < 2:
        return None
    flow = (sum(u[0] for u in units) / len(units), sum(u[1] for u in units) / len(units))
    return flow if math.hypot(*flow) >= 0.5 else None


def _lost_heads_of_a_fan(sources: list[tuple[Point, str]], targets: list[tuple[Point, str]],
                         centre: dict[str, Point], bbox: dict[str, BBox], flow: tuple[float, float],
                         tol: Tolerances) -> tuple[list[tuple[Point, str]], list[tuple[Point, str]]]:
    """A fan whose heads were found at some targets but not at one: that target's loose end reads as a start,
    and arrows would run from it to its siblings. A "source" in the rank of the targets (level with one of them
    along the page's flow), with another source upstream of it, whose line comes in on the side facing up the
    flow, is a target whose head was lost."""
    def rank(box: str) -> float:
        return centre[box][0] * flow[0] + centre[box][1] * flow[1]

    def entered(p: Point, box: str) -> bool:
        # the line meets the box on its side that faces up the flow, where arrows come in; a line leaving a box
        # sideways (a "No" branch returning to the main column) is a start
        b = bbox[box]
        u = ((p[0] - centre[box][0]) / max(1.0, (b[2] - b[0]) / 2),
             (p[1] - centre[box][1]) / max(1.0, (b[3] - b[1]) / 2))
        return -(u[0] * flow[0] + u[1] * flow[1]) / norm > 0.7

    norm = math.hypot(*flow)
    boxes = {b for _, b in sources}
    upstream = min(rank(b) for b in boxes)
    lost = {b for b in boxes if rank(b) > upstream + 4 * tol.source * norm
            and any(abs(rank(b) - rank(t)) <= 2 * tol.source * norm for _, t in targets)
            and all(entered(p, b) for p, s in sources if s == b)}
    if not lost or lost == boxes:
        return sources, targets
    return [(p, b) for p, b in sources if b not in lost], [*targets, *((p, b) for p, b in sources if b in lost)]


def _by_the_flow(page: PageGraph, headless: list[tuple[Connector, list[tuple[Point, str]]]],
                 centre: dict[str, Point], tol: Tolerances) -> list[tuple[str, str]]:
    """Direction from the page's flow where the heads are lost: several lines meeting at one box's edge, each
    coming from another box, with no head found on any of them (on a scan, a merge's heads drawn over each
    other make one tangle at the tip). They are a merge into that box when the page's arrows run towards it,
    and a fan out of it when they run away. Lines with no such meeting point stay unread."""
    flow = _page_flow(centre, [(a.source, a.target) for a in page.arrows])
    if flow is None:
        return []  # too few arrows, or the page runs every way: no flow to go by
    out: list[tuple[str, str]] = []
    for conn, sources in headless:
        ends = [p for s in conn.segments for p in (s.a, s.b)]
        for p in dict.fromkeys(ends):
            if sum(math.dist(p, q) <= tol.fan for q in ends) < 3:
                continue
            hub = _nearest_point_box(page.boxes, p, tol.head_box)
            others = sorted({box for _, box in sources} - {hub} if hub else set())
            if hub is None or len(others) < 2:
                continue
            mx = sum(centre[o][0] for o in others) / len(others)
            my = sum(centre[o][1] for o in others) / len(others)
            towards = (centre[hub][0] - mx) * flow[0] + (centre[hub][1] - my) * flow[1]
            out += [(o, hub) if towards > 0 else (hub, o) for o in others]
            break
    return out


def _is_fan_point(conn: Connector, p: Point, tol: Tolerances) -> bool:
    """A point where two or more segments start together (arrows fanning out of one spot).

    Two pieces of one line that continue each other (a curve drawn as many short pieces) meet there too;
    they leave the point in nearly opposite directions and make no fan.
    """
    meet = [(q2[0] - q[0], q2[1] - q[1], inner) for s in conn.segments
            for q, q2, inner in ((s.a, s.b, s.inner[0]), (s.b, s.a, s.inner[1])) if math.dist(p, q) <= tol.fan]
    if len(meet) == 2:
        (ax, ay, ia), (bx, by, ib) = meet
        if ia and ib:
            return False  # two pieces of one drawn curve
        na, nb = math.hypot(ax, ay), math.hypot(bx, by)
        # nearly straight on: one line drawn (or traced from ink) in two pieces. Two straight arrows leaving a
        # diamond's corner for boxes far above and below it may meet at 150 degrees, and are a fan.
        if na and nb and (ax * bx + ay * by) / (na * nb) < math.cos(math.radians(165)):
            return False
    return len(meet) >= 2


def _label_for(conn: Connector, tpoint: Point, targets: list[tuple[Point, str]],
               labels: list[tuple[float, float, str]], used: set[int], tol: Tolerances) -> str | None:
    branch = conn.branches.get(tpoint, list(range(len(conn.segments))))
    if len(targets) > 1:
        # With several heads, judge by the last leg into each head: a fan point of two legs
        # looks like a bend, so a longer branch could swallow the sibling leg.
        branch = branch[:1]
    best = None
    for li, (x, y, text) in enumerate(labels):
        d_all = min(point_segment_distance((x, y), s) for s in conn.segments)
        if d_all > tol.label:
            continue
        d_branch = min((point_segment_distance((x, y), conn.segments[i]) for i in branch), default=1e9)
        others = [min((point_segment_distance((x, y), conn.segments[i]) for i in conn.branches.get(p, [])[:1]),
                      default=1e9) for p, _ in targets if p != tpoint]
        if len(targets) > 1 and others and min(others) < d_branch:
            continue
        if best is None or d_branch < best[0]:
            best = (d_branch, li, text)
    if best is None:
        return None
    used.add(best[1])
    return best[2]


def _grow(b: BBox, d: float) -> BBox:
    return (b[0] - d, b[1] - d, b[2] + d, b[3] + d)


def _on_border(s: Segment, b: BBox, tol: float = 1.0) -> bool:
    def on(p: Point) -> bool:
        x, y = p
        inside = b[0] - tol <= x <= b[2] + tol and b[1] - tol <= y <= b[3] + tol
        edge = min(abs(x - b[0]), abs(x - b[2]), abs(y - b[1]), abs(y - b[3])) <= tol
        return inside and edge
    return on(s.a) and on(s.b) and (abs(s.a[0] - s.b[0]) <= tol or abs(s.a[1] - s.b[1]) <= tol)


def _nearest_box(boxes: Sequence[Box], head: BBox, limit: float) -> str | None:
    best = min(((box_box_distance(b.bbox, head), b.id) for b in boxes), default=None)
    return best[1] if best is not None and best[0] <= limit else None


def _nearest_point_box(boxes: Sequence[Box], p: Point, limit: float) -> str | None:
    best = min(((point_box_distance(p, b.bbox), b.id) for b in boxes), default=None)
    return best[1] if best is not None and best[0] <= limit else None


def _read_links(page: PageGraph, prim: Primitives) -> None:
    by_box: dict[str, list[tuple[BBox, int | None]]] = {}
    for rect, target in prim.links:
        cx, cy = (rect[0] + rect[2]) / 2, (rect[1] + rect[3]) / 2
        box_id = _nearest_point_box(page.boxes, (cx, cy), 1.0)
        if box_id:
            by_box.setdefault(box_id, []).append((rect, target))
    for box in page.boxes:
        found = list(SEE_LINK.finditer(box.text))
        annots = by_box.get(box.id, [])
        for i, m in enumerate(found):
            target_index = annots[i][1] if i < len(annots) else None
            page.links.append(PageLink(
                source=box.id, page_label="", target_page_label=m.group(1), target_page_index=target_index,
                link_text=f"See {m.group(1)}", annotation=i < len(annots),
            ))
        for _rect, target in annots[len(found):]:
            page.links.append(PageLink(source=box.id, page_label="", target_page_label=None,
                                       target_page_index=target, link_text="", annotation=True))
        for m in GOTO_LINK.finditer(box.text):
            page.links.append(PageLink(
                source=box.id, page_label="", target_page_label=None, target_page_index=None,
                link_text=m.group(0).strip(), annotation=False, target_module=m.group(1).upper(),
                target_box_number=m.group(2),
            ))

