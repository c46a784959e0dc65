"""Plane geometry for flowcharts: segments, connector graphs, distances to boxes."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from dkg.pdf.models import BBox

Point = tuple[float, float]


@dataclass(frozen=True)
class Segment:
    """A straight piece of a connector."""

    a: Point
    b: Point
    inner: tuple[bool, bool] = (False, False)
    """Whether end a, end b lies inside one drawn line (pieces of a curve drawn as many short pieces): such an
    end joins only the neighbouring piece that shares it exactly, not another line passing close by."""

    @property
    def length(self) -> float:
        return math.dist(self.a, self.b)


def point_segment_distance(p: Point, s: Segment) -> float:
    """Shortest distance from ``p`` to segment ``s``."""
    (x, y), (x1, y1), (x2, y2) = p, s.a, s.b
    dx, dy = x2 - x1, y2 - y1
    if dx == 0 and dy == 0:
        return math.dist(p, s.a)
    t = max(0.0, min(1.0, ((x - x1) * dx + (y - y1) * dy) / (dx * dx + dy * dy)))
    return math.dist(p, (x1 + t * dx, y1 + t * dy))


def point_box_distance(p: Point, box: BBox) -> float:
    """Distance from ``p`` to a rectangle (0 inside)."""
    x, y = p
    x0, top, x1, bottom = box
    dx = max(x0 - x, 0.0, x - x1)
    dy = max(top - y, 0.0, y - bottom)
    return math.hypot(dx, dy)


def box_box_distance(a: BBox, b: BBox) -> float:
    """Gap between two rectangles (0 when they touch or overlap)."""
    dx = max(b[0] - a[2], 0.0, a[0] - b[2])
    dy = max(b[1] - a[3], 0.0, a[1] - b[3])
    return math.hypot(dx, dy)


def contains(outer: BBox, inner: BBox, pad: float = 0.5) -> bool:
    """True when ``inner`` lies within ``outer`` (grown by ``pad``)."""
    return (outer[0] - pad <= inner[0] and outer[1] - pad <= inner[1]
            and inner[2] <= outer[2] + pad and inner[3] <= outer[3] + pad)


@dataclass
class Connector:
    """A connected set of segments with its loose ends (terminals)."""

    segments: list[Segment]
    terminals: list[Point]
    branches: dict[Point, list[int]]
    """For each terminal, the indices of the segments from it to the first junction."""


class _UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, i: int, j: int) -> None:
        self.parent[self.find(i)] = self.find(j)


def build_connectors(segments: Sequence[Segment], tol: float = 1.5) -> list[Connector]:
    """Join segments that meet end to end or end to side (T-junctions) into connectors.

    A terminal is an endpoint that meets nothing else: where an arrow starts or ends.
    """
    n = len(segments)
    uf = _UnionFind(n)
    ends = [(i, p) for i, s in enumerate(segments) for p in (s.a, s.b)]
    degree: dict[tuple[int, int], int] = defaultdict(int)  # (segment, end) -> contacts
    for ia, (i, p) in enumerate(ends):
        for j, s in enumerate(segments):
            if j == i:
                continue
            if segments[i].inner[ia % 2] and p != s.a and p != s.b:
                continue
            if point_segment_distance(p, s) <= tol:
                uf.union(i, j)
                degree[(i, ia % 2)] += 1
    groups: dict[int, list[int]] = defaultdict(list)
    for i in range(n):
        groups[uf.find(i)].append(i)
    connectors = []
    for members in groups.values():
        segs = [segments[i] for i in members]
        terminals: list[Point] = []
        branches: dict[Point, list[int]] = {}
        for local, i in enumerate(members):
            for end, p in enumerate((segments[i].a, segments[i].b)):
                if degree[(i, end)] == 0:
                    terminals.append(p)
                    branches[p] = _branch(local, segs, tol)
        connectors.append(Connector(segs, terminals, branches))
    return connectors


def _branch(start: int, segs: Sequence[Segment], tol: float) -> list[int]:
    """Segments from a terminal segment up to the first junction (where the path forks)."""
    path = [start]
    current = start
    seen = {start}
    while True:
        touching = [j for j, s in enumerate(segs) if j not in seen and _touches(segs[current], s, tol)]
        if len(touching) != 1:
            return path
        # A junction: more than two segments meet at the shared point.
        nxt = touching[0]
        meeting = [j for j, s in enumerate(segs) if j != current and _touches(segs[current], s, tol)]
        if len(meeting) > 1:
            return path
        path.append(nxt)
        seen.add(nxt)
        current = nxt


def _touches(s: Segment, t: Segment, tol: float) -> bool:
    return min(point_segment_distance(s.a, t), point_segment_distance(s.b, t),
               point_segment_distance(t.a, s), point_segment_distance(t.b, s)) <= tol


def merge_collinear(segments: Sequence[Segment], angle_deg: float = 5.0, offset: float = 2.0,
                    gap: float = 2.5) -> list[Segment]:
    """Fuse segments that lie on one line and overlap or nearly touch (Hough gives many per stroke).

    Returns one segment per stroke, spanning the extreme ends of the fused pieces.
    """
    segs = [s for s in segments if s.length > 0]
    changed = True
    while changed:
        changed = False
        out: list[Segment] = []
        used = [False] * len(segs)
        for i, s in enumerate(segs):
            if used[i]:
                continue
            used[i] = True
            cur = s
            for j in range(i + 1, len(segs)):
                if used[j]:
                    continue
                merged = _fuse(cur, segs[j], angle_deg, offset, gap)
                if merged is not None:
                    cur = merged
                    used[j] = True
                    changed = True
            out.append(cur)
        segs = out
    return segs


def _fuse(s: Segment, t: Segment, angle_deg: float, offset: float, gap: float) -> Segment | None:
    ax, ay = s.b[0] - s.a[0], s.b[1] - s.a[1]
    bx, by = t.b[0] - t.a[0], t.b[1] - t.a[1]
    la, lb = math.hypot(ax, ay), math.hypot(bx, by)
    cos = abs(ax * bx + ay * by) / (la * lb)
    if cos < math.cos(math.radians(angle_deg)):
        return None
    ux, uy = ax / la, ay / la
    # perpendicular offset of t's ends from s's line
    for p in (t.a, t.b):
        if abs((p[0] - s.a[0]) * uy - (p[1] - s.a[1]) * ux) > offset:
            return None
    proj = [((p[0] - s.a[0]) * ux + (p[1] - s.a[1]) * uy, p) for p in (s.a, s.b, t.a, t.b)]
    ts = sorted(q for q, _ in proj[2:])
    if ts[0] > la + gap or ts[1] < -gap:
        return None
    lo = min(proj, key=lambda q: q[0])[1]
    hi = max(proj, key=lambda q: q[0])[1]
    return Segment(lo, hi)


def dedupe_segments(segments: Sequence[Segment], tol: float = 0.5) -> list[Segment]:
    """Drop repeated strokes (same two ends, either direction) and zero-length ones.

    Pieces of curves stay: curves that converge on one head share their last pieces, and dropping one
    curve's copy would cut that curve short of the head.
    """
    out: list[Segment] = []
    for s in segments:
        if s.length <= tol:
            continue
        if not any(s.inner) and any((math.dist(s.a, t.a) <= tol and math.dist(s.b, t.b) <= tol)
               or (math.dist(s.a, t.b) <= tol and math.dist(s.b, t.a) <= tol) for t in out):
            continue
        out.append(s)
    return out
