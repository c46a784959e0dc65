"""Growth curves: fitting the order of a cost curve and drawing it as an SVG (no plotting library needed)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Curve:
    """Cost (seconds, milliseconds or MiB) against input size, measured at several sizes."""

    name: str
    x_label: str
    y_label: str
    xs: list[float] = field(default_factory=list)
    ys: list[float] = field(default_factory=list)
    note: str = ""
    """Why a curve is above linear, or how a point was obtained."""

    def add(self, x: float, y: float) -> None:
        self.xs.append(float(x))
        self.ys.append(float(y))

    @property
    def exponent(self) -> float:
        """b of the least-squares fit y = a·x^b on log–log axes."""
        return log_log_slope(self.xs, self.ys)

    @property
    def order(self) -> str:
        return order_of(self.exponent)


def log_log_slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys, strict=True) if x > 0 and y > 0]
    if len(pts) < 2:
        return float("nan")
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx if sxx else float("nan")


def order_of(b: float) -> str:
    """The growth class an exponent stands for (n log n shows as an exponent a little above 1)."""
    if math.isnan(b):
        return "n/a"
    if b < 0.25:
        return "constant"
    if b < 0.85:
        return "sub-linear"
    if b <= 1.12:
        return "linear"
    if b <= 1.3:
        return "n log n"
    if b <= 1.7:
        return "super-linear"
    return "quadratic" if b <= 2.3 else "worse than quadratic"


def svg(curves: Sequence[Curve], path: Path, title: str) -> Path:
    """One log–log chart of ``curves`` (each normalised to its own first point, so different units share it),
    with dashed linear and quadratic guides."""
    w, h, left, right, top, bottom = 640, 420, 70, 190, 40, 50
    series = [(c, [y / c.ys[0] for y in c.ys]) for c in curves if c.xs and c.ys and c.ys[0] > 0]
    xs = [x for c, _ in series for x in c.xs]
    ys = [y for _, ny in series for y in ny]
    if not xs:
        raise ValueError(f"nothing to draw for {title}")
    lx0, lx1 = math.log10(min(xs)), math.log10(max(xs))
    lx1 = lx1 if lx1 > lx0 else lx0 + 1
    ly0, ly1 = math.log10(min([*ys, 1.0])), math.log10(max([*ys, max(xs) / min(xs)]))
    ly1 = ly1 if ly1 > ly0 else ly0 + 1

    def px(x: float) -> float:
        return left + (math.log10(x) - lx0) / (lx1 - lx0) * (w - left - right)

    def py(y: float) -> float:
        return h - bottom - (math.log10(y) - ly0) / (ly1 - ly0) * (h - top - bottom)

    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
             f'font-size="11"><rect width="{w}" height="{h}" fill="white"/>',
             f'<text x="{left}" y="22" font-size="14">{_esc(title)}</text>',
             f'<line x1="{left}" y1="{h - bottom}" x2="{w - right}" y2="{h - bottom}" stroke="black"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{h - bottom}" stroke="black"/>']
    for k in range(math.floor(lx0), math.ceil(lx1) + 1):
        if lx0 - 1e-9 <= k <= lx1 + 1e-9:
            parts.append(f'<text x="{px(10 ** k):.1f}" y="{h - bottom + 16}" text-anchor="middle">{10 ** k:g}</text>')
    for k in range(math.floor(ly0), math.ceil(ly1) + 1):
        if ly0 - 1e-9 <= k <= ly1 + 1e-9:
            parts.append(f'<text x="{left - 6}" y="{py(10 ** k) + 4:.1f}" text-anchor="end">{10 ** k:g}×</text>')
    x0 = min(xs)
    for power, label in ((1, "linear"), (2, "quadratic")):
        end = min(max(xs), x0 * (10 ** ly1) ** (1 / power))
        parts.append(f'<line x1="{px(x0):.1f}" y1="{py(1):.1f}" x2="{px(end):.1f}" y2="{py((end / x0) ** power):.1f}" '
                     f'stroke="#bbb" stroke-dasharray="4 3"/>')
        parts.append(f'<text x="{px(end):.1f}" y="{py((end / x0) ** power) - 4:.1f}" fill="#999">{label}</text>')
    for i, (c, ny) in enumerate(series):
        col = colours[i % len(colours)]
        pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(c.xs, ny, strict=True))
        parts.append(f'<polyline points="{pts}" fill="none" stroke="{col}" stroke-width="2"/>')
        parts += [f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{col}"/>'
                  for x, y in zip(c.xs, ny, strict=True)]
        ly = top + 16 * i
        parts.append(f'<text x="{w - right + 10}" y="{ly + 10}" fill="{col}">{_esc(c.name)}</text>')
        parts.append(f'<text x="{w - right + 10}" y="{ly + 10 + 8}" fill="{col}" font-size="8">'
                     f'b={c.exponent:.2f} {c.order}</text>')
    xl = series[0][0].x_label
    parts.append(f'<text x="{(left + w - right) / 2}" y="{h - 12}" text-anchor="middle">{_esc(xl)} (log)</text>')
    parts.append(f'<text x="14" y="{(top + h - bottom) / 2}" transform="rotate(-90 14 {(top + h - bottom) / 2})" '
                 'text-anchor="middle">cost relative to the smallest size (log)</text>')
    parts.append("</svg>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
