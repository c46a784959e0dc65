"""Primitives of an image-only (scanned) page: rasterise, deskew, OCR, find boxes and arrows.

OpenCV (opencv-python-headless) does the image work: its contour hierarchy finds closed
outlines of any shape (rectangles, rounded boxes, ovals, hexagons) as holes with a parent,
and its distance transform tells an arrowhead (a filled triangle, thick) from a connector
line (thin). Tesseract, through pytesseract's ``image_to_data``, reads the words with boxes.
"""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Any

import numpy as np

from dkg.pdf.geometry import Segment, merge_collinear, point_segment_distance
from dkg.pdf.layout import Primitives, Tolerances
from dkg.pdf.models import BBox
from dkg.pdf.ocr_words import MIN_BOX_CONF, holds_text, inside_outline, known_words, read_box, read_words
from dkg.pdf.text import Glyph

_ARROWISH = set("vVyYwW^<>A|/\\")
"""Letters an arrowhead is read as."""


def ocr_tolerances() -> Tolerances:
    """Looser distances for geometry recovered from pixels."""
    return Tolerances(join=3.0, source=8.0, head_terminal=4.0, head_box=7.0, open_head=12.0, label=18.0, fan=6.0)


_PDFIUM = threading.Lock()
"""PDFium is not thread-safe, not even on different documents: every call into it holds this lock.
Pages are still parsed in parallel; only opening, rendering and closing are serialised."""


def render_gray(path: Path, index: int, dpi: int) -> np.ndarray:
    """Render page ``index`` (1-based) to an 8-bit grey image."""
    import pypdfium2 as pdfium

    with _PDFIUM:
        doc = pdfium.PdfDocument(str(path))
        try:
            img = doc[index - 1].render(scale=dpi / 72, grayscale=True).to_numpy().copy()
        finally:
            doc.close()
    if img.ndim == 3:
        img = img[..., 0]
    return np.ascontiguousarray(img.astype(np.uint8))


def estimate_skew(binary: np.ndarray) -> float:
    """Skew angle in degrees from the long, nearly horizontal or vertical strokes.

    Only strokes that survive an opening with a long horizontal or vertical bar reach the Hough
    transform (box outlines, connectors and rules; not the letters, which are most of the ink), and each
    segment's angle counts by its length (a long segment's angle is the exact one). On the 40 scanned
    pages of the reference copies and the stress cards: mean error 0.051 degrees against 0.067 with
    every stroke and an unweighted median, and a third of the time."""
    import cv2

    k = max(15, binary.shape[1] // 60)
    strokes = cv2.bitwise_or(cv2.morphologyEx(binary, cv2.MORPH_OPEN, np.ones((1, k), np.uint8)),
                             cv2.morphologyEx(binary, cv2.MORPH_OPEN, np.ones((k, 1), np.uint8)))
    lines = cv2.HoughLinesP(strokes, 1, np.pi / 1800, threshold=150,
                            minLineLength=binary.shape[1] // 12, maxLineGap=4)
    if lines is None:
        return 0.0
    angles: list[float] = []
    weights: list[float] = []
    for x1, y1, x2, y2 in np.asarray(lines).reshape(-1, 4):
        a = math.degrees(math.atan2(y2 - y1, x2 - x1))
        if abs(a) < 5:
            angles.append(a)
        elif abs(abs(a) - 90) < 5:
            angles.append(a - 90 if a > 0 else a + 90)
        else:
            continue
        weights.append(math.hypot(x2 - x1, y2 - y1))
    if not angles:
        return 0.0
    order = np.argsort(angles)
    cumulative = np.cumsum(np.asarray(weights)[order])
    return float(np.asarray(angles)[order][int(np.searchsorted(cumulative, cumulative[-1] / 2))])


def clear_border(gray: np.ndarray) -> np.ndarray:
    """Whiten the dark frame a photocopier or scanner leaves along the page edge.

    Ink connected to the edge of the image is no part of a flowchart (its margins are blank); left in,
    its long straight edges would also dominate the skew estimate.
    """
    import cv2

    _, binary = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8)
    h, w = gray.shape
    edge = [lab for lab in range(1, n) if stats[lab][0] == 0 or stats[lab][1] == 0
            or stats[lab][0] + stats[lab][2] >= w or stats[lab][1] + stats[lab][3] >= h]
    if not edge:
        return gray
    out = gray.copy()
    out[np.isin(labels, edge)] = 255
    return out


def _deskew(gray: np.ndarray) -> np.ndarray:
    import cv2

    _, binary = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    angle = estimate_skew(binary)
    if abs(angle) < 0.05:
        return gray
    h, w = gray.shape
    m = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
    return np.asarray(cv2.warpAffine(gray, m, (w, h), flags=cv2.INTER_CUBIC, borderValue=255))


def _clean_binary(gray: np.ndarray) -> np.ndarray:
    import cv2

    blur = cv2.GaussianBlur(gray, (3, 3), 0)  # a median filter would break 2-px outlines
    _, binary = cv2.threshold(blur, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    return np.asarray(binary)


PxBox = tuple[int, int, int, int]


def find_boxes(binary: np.ndarray, px_per_pt: float) -> list[tuple[PxBox, str]]:
    """Boxes as (x, y, w, h) of their interior in pixels, with a shape name."""
    return [(b, shape) for b, shape, _ in find_outlines(binary, px_per_pt)]


def find_outlines(binary: np.ndarray, px_per_pt: float) -> list[tuple[PxBox, str, np.ndarray]]:
    """Closed outlines big enough to hold text: (x, y, w, h) in pixels and a shape name."""
    import cv2

    closed = cv2.morphologyEx(binary, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    contours, hierarchy = cv2.findContours(closed, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    if hierarchy is None:
        return []
    h_img, w_img = binary.shape
    min_w, min_h = 14 * px_per_pt, 8 * px_per_pt
    boxes: list[tuple[PxBox, str, np.ndarray]] = []
    for i, cnt in enumerate(contours):
        parent = hierarchy[0][i][3]
        if parent < 0:
            continue  # an outer contour; boxes are the holes inside an outline
        x, y, w, h = cv2.boundingRect(cnt)
        if w < min_w or h < min_h or w > 0.9 * w_img or h > 0.6 * h_img:
            continue
        area = cv2.contourArea(cnt)
        fill = area / float(w * h)
        if fill < 0.45:
            continue
        # The box is the hole grown by the outline's stroke. Not the parent contour's box: the
        # arrowheads that touch the outline belong to the same ink and would be swallowed.
        px, py, pw, ph = x, y, w, h  # the hole: the box's interior
        approx = cv2.approxPolyDP(cnt, 0.02 * cv2.arcLength(cnt, True), True)
        shape = "rect" if fill > 0.93 and len(approx) <= 6 else "oval" if fill < 0.82 and len(approx) > 6 \
            else "polygon" if len(approx) <= 8 else "rounded"
        boxes.append(((px, py, pw, ph), shape, cnt))
    # Flowchart boxes do not overlap. A larger "hole" that overlaps real boxes is a region
    # fenced in by arrows and box edges; two near-identical holes are one outline.
    kept: list[tuple[PxBox, str, np.ndarray]] = []
    for b in sorted(boxes, key=lambda b: b[0][2] * b[0][3]):
        if not any(_overlap(b[0], k[0]) > 0.1 for k in kept):
            kept.append(b)
    return kept


def _overlap(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> float:
    """Intersection over the smaller area."""
    ix = max(0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
    return ix * iy / float(min(a[2] * a[3], b[2] * b[3]) or 1)


def ocr_primitives(path: Path, index: int, page: Any, dpi: int = 200) -> Primitives:
    """Everything the layout analysis needs, recovered from the page image."""
    import cv2

    gray = _deskew(clear_border(render_gray(path, index, dpi)))
    binary = _clean_binary(gray)
    scale = dpi / 72.0
    found = find_outlines(binary, scale)
    boxes_px = [(b, shape) for b, shape, _ in found]
    local_outlines = {b: cnt for b, _, cnt in found}
    glyphs: list[Glyph] = []
    confidences: dict[BBox, float] = {}
    masked = gray.copy()
    shapes: list[tuple[BBox, str]] = []
    doubtful: list[Glyph] = []  # box words read with hardly any confidence
    text_boxes = []
    line = _line_width(binary, scale)
    # outline width around a hole, in pixels: from the page's own lines (a 1.6 pt house style has thicker ones);
    # the measured width is about a pixel over the drawn one (anti-aliased edges binarise as ink)
    stroke = max(2, round(0.8 * scale), round(line - 1.0))
    for (x, y, w, h), shape in boxes_px:
        pad = 2  # non-rectangular outlines are masked below instead
        crop = gray[y + pad:y + h - pad, x + pad:x + w - pad].copy()
        if crop.size == 0:
            continue
        contour = local_outlines.get((x, y, w, h))
        if contour is not None:
            inside = inside_outline(contour, (x, y, w, h))
            crop[inside[pad:h - pad, pad:w - pad] == 0] = 255
        read_all = read_box(crop, scale, (x + pad, y + pad), holds_text)
        if read_all is None:
            continue
        words = [(g, c) for g, c in read_all if c >= MIN_BOX_CONF]
        x, y, w, h = x - stroke, y - stroke, w + 2 * stroke, h + 2 * stroke  # the outline's outer edge
        text_boxes.append(((x, y, w, h), shape))
        shapes.append(((x / scale, y / scale, (x + w) / scale, (y + h) / scale), shape))
        for g, conf in words:
            glyphs.append(g)
            confidences[(g.x0, g.top, g.x1, g.bottom)] = conf
        doubtful.extend(g for g, c in read_all if c < MIN_BOX_CONF)
        masked[y:y + h, x:x + w] = 255
    boxes_px = text_boxes
    read = read_words(masked, 11, scale, min_conf=5.0)
    glyphs.extend(known_words(doubtful, [*glyphs, *(g for g, c in read if c >= 60)]))
    # a "word" far shorter than the page's words is speckle or a line's edge read as letters ("is" one pixel high)
    heights = sorted(g.bottom - g.top for g, c in read if c >= 30)
    low = 0.4 * heights[len(heights) // 2] if heights else 0.0
    outside = [(g, c) for g, c in read if c >= 30 and g.bottom - g.top >= low]
    # words read with low confidence (a word with a raised marker glued on, "osteosarcoma?"): kept apart, they
    # only complete a borderless box that confident words start
    weak = [g for g, c in read if c < 30 and sum(ch.isalpha() for ch in g.text) >= max(3, 0.6 * len(g.text))]
    # A lone character can be an arrowhead read as a letter ("v" above a box): it stays ink for the head search
    spikes = _corner_spikes([cnt for _, shape, cnt in found if shape == "polygon"], line)
    heads, segments = _connectors(binary, boxes_px, [g for g, _ in outside if len(g.text) > 1], scale, line, spikes)
    for g, _ in outside:
        if len(g.text) == 1 and any(h[0] - 1 <= g.cx <= h[2] + 1 and h[1] - 1 <= g.cy <= h[3] + 1 for h in heads):
            continue  # that letter was the head
        if len(g.text) == 1 and any(cv2.pointPolygonTest(z, (g.cx * scale, g.cy * scale), False) >= 0 for z in spikes):
            continue  # a sharp corner's spike read as ">"
        if all(ch in _ARROWISH for ch in g.text) and max(g.x1 - g.x0, g.bottom - g.top) <= 12.0 and any(
                g.x0 - 2 <= p[0] <= g.x1 + 2 and g.top - 2 <= p[1] <= g.bottom + 2
                for sg in segments if sg.length > 2 * (g.bottom - g.top) for p in (sg.a, sg.b)):
            # an open head read as letters of a head's shape and size ("Vv") where a line ends
            heads.append((g.x0, g.top, g.x1, g.bottom))
            continue
        glyphs.append(g)
    return Primitives(float(page.width), float(page.height), "ocr", shapes, heads, segments, glyphs,
                      [], confidences, weak)


def _corner_spikes(holes: list[np.ndarray], line: float) -> list[np.ndarray]:
    """Where a polygon's sharp corners (a diamond's left and right tips) run out into a spike, in pixels.

    An outline drawn with mitred joins runs out past a sharp corner by the line width over the sine of half
    the corner's angle, far past the box's outline elsewhere. The spike, with a line leaving there, makes a
    blob that survives the head search, so a decision's corner would look like a head. The zone is a chevron
    between the hole's edges and the outer edges, which meet at the spike's tip; measured from the hole's own
    corner, every angle and line width is handled alike. A head pointing at the corner has its body beyond it.
    """
    import cv2

    zones = []
    for cnt in holes:
        approx = cv2.approxPolyDP(cnt, 0.02 * cv2.arcLength(cnt, True), True).reshape(-1, 2).astype(float)
        n = len(approx)
        for i in range(n):
            v, a, b = approx[i], approx[i - 1], approx[(i + 1) % n]
            ua, ub = (a - v) / (np.linalg.norm(a - v) or 1.0), (b - v) / (np.linalg.norm(b - v) or 1.0)
            angle = math.acos(max(-1.0, min(1.0, float(ua @ ub))))
            if angle >= math.radians(80):
                continue
            out_dir = -(ua + ub) / (np.linalg.norm(ua + ub) or 1.0)
            reach = line / math.sin(angle / 2)
            tip = v + out_dir * (reach + 1.5)
            arm = 2 * reach
            zones.append(np.array([v + ua * arm, v, v + ub * arm, tip + ub * arm, tip, tip + ua * arm], np.float32))
    return zones


def _line_width(binary: np.ndarray, scale: float) -> float:
    """The page's line width in pixels, from its long straight strokes (box outlines and connectors).

    Runs of ink across every horizontal and vertical stroke at least 20 pt long are measured, and their mean
    taken once runs over twice the median (crossings, filled heads) are left out. Text has no such strokes.
    Without any, the width of a 0.8 pt line is assumed.
    """
    import cv2

    kernel = np.ones((1, max(15, int(20 * scale))), np.uint8)
    runs: list[np.ndarray] = []
    for image in (binary, np.ascontiguousarray(binary.T)):  # horizontal strokes, then vertical ones
        along = np.asarray(cv2.morphologyEx(image, cv2.MORPH_OPEN, kernel)) > 0
        # the strokes lie along axis 1 here; runs across them go along axis 0, sampled every third column
        cols = along[:, ::3]
        pad = np.zeros((1, cols.shape[1]), bool)
        edges = np.diff(np.vstack([pad, cols, pad]).astype(np.int8), axis=0)
        starts, ends = np.nonzero(edges.T == 1), np.nonzero(edges.T == -1)
        runs.append(ends[1] - starts[1])
    widths = np.concatenate(runs)
    if widths.size < 20:
        return 0.8 * scale
    widths = widths[widths <= 2 * np.median(widths)]
    return float(widths.mean())


def _connectors(binary: np.ndarray, boxes_px: list[tuple[tuple[int, int, int, int], str]],
                words: list[Glyph], scale: float, line: float | None = None,
                spikes: list[np.ndarray] | None = None) -> tuple[list[BBox], list[Segment]]:
    """Arrowheads and connector segments from the ink left after removing boxes and words.

    Arrowheads are what survives a morphological opening with a disk wider than a line:
    a filled triangle does, a connector stroke does not. Connector strokes are straight
    pieces found by the probabilistic Hough transform; the vector path's connector graph
    then joins them, so elbows, fans and crossings are handled the same way on both paths.
    """
    import cv2

    ink = binary.copy()
    for (x, y, w, h), _ in boxes_px:
        ink[max(0, y - 1):y + h + 1, max(0, x - 1):x + w + 1] = 0
    for g in words:
        x0, y0, x1, y1 = (int(v * scale) for v in (g.x0, g.top, g.x1, g.bottom))
        ink[max(0, y0 - 1):y1 + 1, max(0, x0 - 1):x1 + 1] = 0
    # the opening's disk is wider than the page's lines (measured), so thick lines leave no specks
    k = max(3, round(1.8 * scale) | 1, round(1.6 * (line or 0.0)) | 1)
    blobs = cv2.morphologyEx(ink, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    n, _, stats, centres = cv2.connectedComponentsWithStats(blobs, connectivity=8)
    heads: list[BBox] = []
    for lab in range(1, n):
        x, y, w, h, area = stats[lab]
        centre = (float(centres[lab][0]), float(centres[lab][1]))
        if any(cv2.pointPolygonTest(z, centre, False) >= 0 for z in spikes or ()):
            continue  # a sharp corner's spike with a line's start, not a head
        # (An elbow's corner can survive too; it is harmless, as only loose ends take heads.)
        if area >= 0.3 * k * k and max(w, h) <= 14 * scale:
            heads.append(((x - 2) / scale, (y - 2) / scale, (x + w + 2) / scale, (y + h + 2) / scale))
    lines = cv2.HoughLinesP(ink, 1, np.pi / 360, threshold=int(5 * scale), minLineLength=int(4 * scale),
                            maxLineGap=int(2.5 * scale))
    segments: list[Segment] = []
    if lines is not None:
        for x1, y1, x2, y2 in np.asarray(lines).reshape(-1, 4):
            segments.append(Segment((x1 / scale, y1 / scale), (x2 / scale, y2 / scale)))
    segments = _drop_redundant(merge_collinear(segments), heads)
    segments += _ink_bridges(ink, segments, scale)
    heads = _without_junctions(heads, segments)
    extra = _open_heads_from_ink(ink, segments, heads, scale)
    if extra:
        heads = heads + extra
        segments = _drop_redundant(segments, heads)
    return heads, segments


def _ink_bridges(ink: np.ndarray, segments: list[Segment], scale: float, reach: float = 9.0) -> list[Segment]:
    """Short strokes the line finder missed (an elbow's short jog): two loose ends a few points apart with
    ink all the way between them are joined."""
    import cv2

    from dkg.pdf.geometry import build_connectors

    ends = [(k, t) for k, c in enumerate(build_connectors(segments, 3.0)) for t in c.terminals]
    thick = np.asarray(cv2.dilate(ink, np.ones((3, 3), np.uint8)))
    h_img, w_img = ink.shape
    out: list[Segment] = []
    for n, (ka, a) in enumerate(ends):
        for kb, b in ends[n + 1:]:
            d = math.dist(a, b)
            if ka == kb or not 3.0 < d <= reach:
                continue
            steps = max(4, int(d * scale))
            inked = 0
            for i in range(steps + 1):
                x = round((a[0] + (b[0] - a[0]) * i / steps) * scale)
                y = round((a[1] + (b[1] - a[1]) * i / steps) * scale)
                inked += 0 <= y < h_img and 0 <= x < w_img and thick[y, x] > 0
            if inked >= 0.9 * (steps + 1):
                out.append(Segment(a, b))
    return out


def _without_junctions(heads: list[BBox], segments: list[Segment]) -> list[BBox]:
    """Drop thick blobs where lines fan out in several directions towards heads elsewhere (curves leaving one
    spot pile up ink that survives the opening like a filled head). Lines merging into one head come from
    boxes, not from other heads."""
    from dkg.pdf.geometry import box_box_distance, build_connectors, point_box_distance

    conns = build_connectors(segments, 3.0)
    touched = [{i for i, h in enumerate(heads) for sg in c.segments for p in (sg.a, sg.b)
                if point_box_distance(p, h) <= 3.0} for c in conns]
    out = []
    for i, h in enumerate(heads):
        # only a blob whose lines carry a head at their far end is their start (overlapping heads of a merge
        # lie together)
        if not any(i in t and any(box_box_distance(heads[j], h) > 10.0 for j in t) for t in touched):
            out.append(h)
            continue
        cx, cy = (h[0] + h[2]) / 2, (h[1] + h[3]) / 2
        grown = (h[0] - 2, h[1] - 2, h[2] + 2, h[3] + 2)
        dirs = []
        for sg in segments:
            for p, q in ((sg.a, sg.b), (sg.b, sg.a)):
                if grown[0] <= p[0] <= grown[2] and grown[1] <= p[1] <= grown[3] and \
                        not (grown[0] <= q[0] <= grown[2] and grown[1] <= q[1] <= grown[3]):
                    dirs.append(math.atan2(q[1] - cy, q[0] - cx))
        spread = max((abs(math.remainder(a - b, 2 * math.pi)) for a in dirs for b in dirs), default=0.0)
        if len(dirs) >= 2 and spread > math.radians(25):
            continue
        out.append(h)
    return out


def _open_heads_from_ink(ink: np.ndarray, segments: list[Segment], heads: list[BBox],
                         scale: float) -> list[BBox]:
    """Heads at loose line ends where ink spreads away from the line: the wings of an open arrowhead.

    Around each loose end, the ink off the line itself is counted in a disk of the size of a head. A plain
    line end has none; wings (open heads of any angle) or a filled head have a lot. Measured in units of
    the page's own stroke width, so thick and thin drawings and every resolution are judged alike.
    """
    from dkg.pdf.geometry import build_connectors, point_box_distance

    if not segments:
        return []
    stroke = _stroke_width(ink)
    radius = 6.0 * scale
    h_img, w_img = ink.shape
    out: list[BBox] = []
    for conn in build_connectors(segments, 3.0):
        for t in conn.terminals:
            if any(point_box_distance(t, h) <= 3.0 for h in heads):
                continue
            own = next((s for s in conn.segments if t in (s.a, s.b)), None)
            if own is None:
                continue
            cx, cy = t[0] * scale, t[1] * scale
            x0, x1 = max(0, int(cx - radius)), min(w_img, int(cx + radius) + 1)
            y0, y1 = max(0, int(cy - radius)), min(h_img, int(cy + radius) + 1)
            ys, xs = np.nonzero(ink[y0:y1, x0:x1])
            if len(xs) == 0:
                continue
            px, py = xs + x0, ys + y0
            near = (px - cx) ** 2 + (py - cy) ** 2 <= radius ** 2
            (ax, ay), (bx, by) = ((s_ * scale for s_ in p) for p in (own.a, own.b))
            dx, dy = bx - ax, by - ay
            length = math.hypot(dx, dy) or 1.0
            off_line = np.abs((px - ax) * dy - (py - ay) * dx) / length > stroke + 1.5
            excess = int(np.count_nonzero(near & off_line))
            if excess >= 5.0 * stroke * scale:
                sel = near & off_line
                mx, my = float(px[sel].mean()) / scale, float(py[sel].mean()) / scale
                out.append((min(mx, t[0]) - 3, min(my, t[1]) - 3, max(mx, t[0]) + 3, max(my, t[1]) + 3))
    return out


def _stroke_width(ink: np.ndarray) -> float:
    """The page's typical line width in pixels (twice the median distance-transform peak along lines)."""
    import cv2

    dist = cv2.distanceTransform((ink > 0).astype(np.uint8), cv2.DIST_L2, 3)
    ridge = dist[(dist > 0) & (dist == cv2.dilate(dist, np.ones((3, 3), np.uint8)))]
    return float(max(1.0, 2 * np.median(ridge))) if ridge.size else 2.0


def _drop_redundant(segments: list[Segment], heads: list[BBox], tol: float = 2.0) -> list[Segment]:
    """Remove strokes that are part of an arrowhead, or lie along a longer stroke."""
    def inside(p: tuple[float, float], h: BBox) -> bool:
        return h[0] - 1 <= p[0] <= h[2] + 1 and h[1] - 1 <= p[1] <= h[3] + 1

    kept = [s for s in segments if not any(inside(s.a, h) and inside(s.b, h) for h in heads)]
    out = []
    for s in kept:
        covered = any(t is not s and t.length > s.length and point_segment_distance(s.a, t) <= tol
                      and point_segment_distance(s.b, t) <= tol for t in kept)
        if not covered:
            out.append(s)
    return out
