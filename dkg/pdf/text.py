"""Glyphs to lines of text, with superscript footnote markers told apart from the body text."""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from dkg.pdf.models import BBox

MARKER_CHARS = re.compile(r"^(?:[a-z*†‡§,]|[a-z](?:,[a-z])+)$")
"""One marker character, or a comma-separated run of letters ("e,j") read as one token."""


@dataclass(frozen=True)
class Glyph:
    """A character (vector path) or a word (OCR path) with its box and font size."""

    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    size: float
    line_key: tuple[int, ...] | None = None
    """OCR only: Tesseract's (block, paragraph, line) numbers, which order words reliably."""
    space_before: bool = False
    """Vector only: the PDF put a space character before this glyph (a word starts here)."""

    @property
    def cx(self) -> float:
        return (self.x0 + self.x1) / 2

    @property
    def cy(self) -> float:
        return (self.top + self.bottom) / 2


@dataclass
class Line:
    """One printed line: body glyphs plus the marker groups raised above it."""

    glyphs: list[Glyph]
    markers: list[tuple[float, str]] = field(default_factory=list)
    """(x position, marker text such as "e,j")."""

    @property
    def x0(self) -> float:
        xs = [g.x0 for g in self.glyphs] + [x for x, _ in self.markers]
        return min(xs)

    @property
    def x1(self) -> float:
        return max(g.x1 for g in self.glyphs) if self.glyphs else self.x0

    @property
    def top(self) -> float:
        return min(g.top for g in self.glyphs)

    @property
    def bottom(self) -> float:
        return max(g.bottom for g in self.glyphs)

    @property
    def size(self) -> float:
        return statistics.median(g.size for g in self.glyphs)


def dominant_size(glyphs: Sequence[Glyph]) -> float:
    """The most common glyph size (by count), i.e. the body text size."""
    sizes = [round(g.size, 1) for g in glyphs if g.text.strip()]
    if not sizes:
        return 0.0
    return float(statistics.mode(sizes))


def find_superscripts(glyphs: Sequence[Glyph], ratio: float = 0.82) -> set[int]:
    """Indices of raised, smaller marker glyphs, judged against their neighbours on the line.

    A glyph is a superscript when a glyph beside it (same line, within two sizes) is clearly
    larger and sits lower: footnote body text in a small font is therefore not mistaken for
    markers, whatever the page's dominant size.
    """
    buckets: dict[int, list[int]] = {}
    for i, g in enumerate(glyphs):
        buckets.setdefault(int(g.cy // 10), []).append(i)
    supers: set[int] = set()
    for i, g in enumerate(glyphs):
        if not MARKER_CHARS.match(g.text.strip()):
            continue
        key = int(g.cy // 10)
        for j in (*buckets.get(key - 1, []), *buckets.get(key, []), *buckets.get(key + 1, [])):
            n = glyphs[j]
            if n.size * ratio <= g.size:
                continue
            near = min(abs(n.x0 - g.x1), abs(g.x0 - n.x1)) <= 2.0 * n.size
            overlap = min(n.bottom, g.bottom) - max(n.top, g.top) > 0
            raised = g.bottom < n.bottom - 0.15 * n.size
            if g.line_key is not None and g.top > n.top + 0.15 * (n.bottom - n.top):
                # an OCR word's box ends at its descenders ("multidisciplinary"): a lower-case word beside it
                # ("a") ends higher without being raised; a marker also reaches as high as its neighbour's capitals
                raised = False
            if near and overlap and raised:
                supers.add(i)
                break
    return supers


def group_lines(glyphs: Sequence[Glyph], body: float | None = None) -> list[Line]:
    """Cluster glyphs into lines; superscript glyphs become marker groups of their line.

    A superscript is attached to the body line whose vertical span holds its centre (raised
    markers overlap the upper half of the line they belong to).
    """
    body = body if body is not None else dominant_size(glyphs)
    sup_idx = find_superscripts(glyphs)
    normal = sorted((g for i, g in enumerate(glyphs) if g.text.strip() and i not in sup_idx),
                    key=lambda g: (g.top, g.x0))
    supers = [g for i, g in enumerate(glyphs) if g.text.strip() and i in sup_idx]
    lines: list[Line] = []
    keyed: dict[tuple[int, ...], int] = {}
    spans: list[list[float]] = []  # [top, bottom] of each line so far, kept as glyphs join (not recomputed)

    def join(i: int, g: Glyph) -> None:
        lines[i].glyphs.append(g)
        spans[i][0], spans[i][1] = min(spans[i][0], g.top), max(spans[i][1], g.bottom)

    def start(g: Glyph) -> int:
        lines.append(Line([g]))
        spans.append([g.top, g.bottom])
        return len(lines) - 1

    for g in normal:
        if g.line_key is not None:  # OCR words: trust Tesseract's own line structure
            if g.line_key in keyed:
                join(keyed[g.line_key], g)
            else:
                keyed[g.line_key] = start(g)
            continue
        for i, (line, span) in enumerate(zip(lines, spans, strict=True)):
            ref = line.glyphs[-1]
            overlap = min(span[1], g.bottom) - max(span[0], g.top)
            # Text far to the side and half a line lower is another block's line (a one-line box
            # centred beside a two-line one), not this line: it must share nearly all its height.
            far = g.x0 - ref.x1 > 1.5 * body or ref.x0 - g.x1 > 1.5 * body
            if overlap > (0.75 if far else 0.5) * min(g.bottom - g.top, ref.bottom - ref.top):
                join(i, g)
                break
        else:
            start(g)
    for line in lines:
        line.glyphs.sort(key=lambda g: g.x0)
    lines.sort(key=lambda ln: (ln.top, ln.x0))
    # Markers: attach each superscript run to the line it overlaps (or the nearest below it).
    for g in sorted(supers, key=lambda g: (g.top, g.x0)):
        best = None
        for line in lines:
            if not line.glyphs:
                continue  # a line of markers only, made just above
            if line.top - 0.6 * line.size <= g.cy <= line.bottom:
                # a marker follows the word it marks: the line with a glyph ending just before it wins (two
                # blocks side by side, half a line apart, both reach up to a marker's height)
                gaps = [g.x0 - q.x1 for q in line.glyphs if -1.0 <= g.x0 - q.x1 <= body]
                d = min(gaps) - body if gaps else 0.0 if line.x0 - 2 <= g.cx <= line.x1 + body * 2 else min(
                    abs(g.cx - line.x0), abs(g.cx - line.x1))
                if best is None or d < best[0]:
                    best = (d, line)
        if best is None:
            lines.append(Line([], [(g.x0, g.text)]))
            continue
        line = best[1]
        if line.markers and g.x0 - _marker_end(line) < 0.6 * body and g.x0 >= line.markers[-1][0]:
            x, txt = line.markers[-1]
            line.markers[-1] = (x, txt + g.text)
        else:
            line.markers.append((g.x0, g.text))
    for line in lines:
        line.markers.sort()
    return [ln for ln in lines if ln.glyphs or ln.markers]


def _marker_end(line: Line) -> float:
    x, txt = line.markers[-1]
    return x + 0.5 * len(txt) * max(line.size, 1) * 0.6


def _word_glyphs(line: Line, gap_ratio: float = 0.18) -> list[list[Glyph]]:
    """Glyphs of a line grouped into words, split where the gap between glyphs is wide."""
    words: list[list[Glyph]] = []
    for g in line.glyphs:
        if words:
            prev = words[-1][-1]
            if g.x0 - prev.x1 < gap_ratio * g.size and len(g.text) == 1 and not g.space_before:
                words[-1].append(g)
                continue
        words.append([g])
    # Punctuation split off by a marker between it and its word ("monitoring^g;") rejoins it.
    merged: list[list[Glyph]] = []
    for w in words:
        if merged and re.fullmatch(r"[;:,.)\]]+", "".join(g.text for g in w)):
            merged[-1] = merged[-1] + w
        else:
            merged.append(w)
    return merged


def line_words(line: Line, gap_ratio: float = 0.18) -> list[tuple[float, float, str]]:
    """Words of a line as (x0, x1, text)."""
    return [(w[0].x0, w[-1].x1, "".join(g.text for g in w)) for w in _word_glyphs(line, gap_ratio)]


def render_line(line: Line) -> tuple[str, str, list[tuple[str, str]]]:
    """Return (plain text, markup text, [(marker group, anchor word)]) of one line.

    A marker is placed at its printed position inside the word's glyphs, so
    ``ablation^{f};`` keeps the marker before the punctuation that follows it.
    """
    words = _word_glyphs(line)
    plain = " ".join("".join(g.text for g in w) for w in words)
    parts: list[str] = []
    refs: list[tuple[str, str]] = []
    markers = sorted(line.markers)
    for w in words:
        x0, x1 = w[0].x0, w[-1].x1
        inserts: list[tuple[int, str]] = []
        while markers and x0 <= markers[0][0] <= x1 + 0.5 * line.size:
            mx, group = markers.pop(0)
            group = group.strip(",")
            pos = next((i for i, g in enumerate(w) if g.x0 >= mx - 0.1), len(w))
            inserts.append((pos, group))
            anchor = "".join(g.text for g in w[:pos]).strip("(;:,.)")
            refs.append((group, anchor))
        text = ""
        for i, g in enumerate(w):
            text += "".join("^{" + grp + "}" for pos, grp in inserts if pos == i) + g.text
        text += "".join("^{" + grp + "}" for pos, grp in inserts if pos == len(w))
        parts.append(text)
    for _, group in markers:  # markers after the last word (or on an empty line)
        group = group.strip(",")
        if parts:
            parts[-1] += "^{" + group + "}"
        refs.append((group, "".join(g.text for g in words[-1]) if words else ""))
    return plain, " ".join(parts), refs


BULLETS = "•▪◦‣●○■□"
"""Marks that open an item of a printed list."""


def join_lines(texts: Sequence[str]) -> str:
    """Join printed lines: a word broken after a hyphen before a lower-case letter is rejoined; a line opening
    with a bullet is an item of a list, set off from what came before by a semicolon (none after a colon)."""
    out = ""
    for t in (t.strip() for t in texts):
        if t[:1] in BULLETS:
            t = t.lstrip(BULLETS + " ")
            if out and not out.endswith((":", ";", ",")):
                out += ";"
        if not t:
            continue
        if not out:
            out = t
        elif out.endswith("-") and not out.endswith(" -") and t[:1].islower():
            out += t
        else:
            out += " " + t
    return re.sub(r"\s+", " ", out).strip()


def glyphs_in(glyphs: Sequence[Glyph], bbox: BBox, pad: float = 1.0) -> list[Glyph]:
    """Glyphs whose centre lies inside ``bbox`` (grown by ``pad``)."""
    x0, top, x1, bottom = bbox
    return [g for g in glyphs if x0 - pad <= g.cx <= x1 + pad and top - pad <= g.cy <= bottom + pad]


def split_segments(line: Line, gap: float) -> list[Line]:
    """Split a visual line into segments where glyphs are more than ``gap`` apart (columns)."""
    segs: list[Line] = []
    for g in line.glyphs:
        if segs and g.x0 - segs[-1].glyphs[-1].x1 <= gap:
            segs[-1].glyphs.append(g)
        else:
            segs.append(Line([g]))
    def dist(s: Line, x: float) -> float:
        first = s.glyphs[0].x0
        if 0 <= first - x <= gap:  # a leading marker, just before the segment's text
            return first - x
        if first <= x <= s.x1 + 2 * s.size:  # a marker inside or right after the text
            return 0.0
        return abs(x - first) + gap

    for x, txt in line.markers:
        target = min(segs, key=lambda s: dist(s, x)) if segs else None
        if target is None:
            segs.append(Line([], [(x, txt)]))
        else:
            target.markers.append((x, txt))
    return segs
