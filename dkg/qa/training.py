"""Turning dataset items into training examples, reading exports, drawing training curves, and
scoring hand-written questions."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from dkg.qa.answer import Answerer
from dkg.qa.dataset import QAItem
from dkg.qa.facts import Linker, tag_all
from dkg.qa.model import EpochLog, Example, Target, delexicalize, source_text


def examples(items: Iterable[QAItem], linker: Linker, target: Target) -> list[Example]:
    """(source, target) pairs: the Cypher with the tagged values as slots, or the answer text."""
    out = []
    for it in items:
        tags = tag_all(it.QUESTION, linker)
        out.append(Example(source_text(it.QUESTION, linker, tags),
                           delexicalize(it.QUERY, tags) if target == "cypher" else it.ANSWER))
    return out


def items_from_export(path: Path) -> dict[str, list[QAItem]]:
    """The splits of a saved ``DatasetDict`` as items."""
    from dkg.qa.store import load_hf

    dd = load_hf(path)
    out: dict[str, list[QAItem]] = {}
    for split in dd:
        out[str(split)] = [QAItem(**{**row, "DKG_response": row["DKG_response"] or None})
                           for row in dd[split].to_list()]
    return out


def curves_svg(histories: Mapping[str, Sequence[EpochLog]], path: Path) -> Path:
    """Training and validation loss per epoch, one colour per model, as a small SVG."""
    w, h, pad = 640, 320, 40
    series = [(f"{name} {kind}", [getattr(e, kind) for e in hist])
              for name, hist in histories.items() for kind in ("train_loss", "val_loss") if hist]
    ymax = max((max(v) for _, v in series if v), default=1.0) or 1.0
    xmax = max((len(v) for _, v in series), default=1)
    colours = ["#1f77b4", "#aec7e8", "#d62728", "#ff9896"]
    lines = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
             'font-size="11">', f'<rect width="{w}" height="{h}" fill="white"/>',
             f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="black"/>',
             f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="black"/>',
             f'<text x="{w / 2}" y="{h - 8}" text-anchor="middle">epoch</text>',
             f'<text x="8" y="{pad - 10}">loss (max {ymax:.3f})</text>']
    for i, (label, values) in enumerate(series):
        pts = " ".join(f"{pad + (w - 2 * pad) * (k / max(1, xmax - 1)):.1f},"
                       f"{h - pad - (h - 2 * pad) * (v / ymax):.1f}" for k, v in enumerate(values))
        c = colours[i % len(colours)]
        dash = ' stroke-dasharray="4 3"' if "val" in label else ""
        lines.append(f'<polyline fill="none" stroke="{c}" stroke-width="2"{dash} points="{pts}"/>')
        lines.append(f'<text x="{w - pad - 150}" y="{pad + 14 * i}" fill="{c}">{label}</text>')
    lines.append("</svg>")
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


class HandCase(BaseModel):
    """A question written by hand, with what the graph should answer."""

    question: str
    status: str
    answer: list[str] = []
    """Box texts of the expected answer (any order)."""
    advisable: bool | None = None
    missing: list[str] = []
    """Attributes a needs_more_info answer must ask for (labels)."""


class HandResult(BaseModel):
    question: str
    expected_status: str
    status: str
    correct: bool
    answer: str


def load_hand_cases(path: Path) -> list[HandCase]:
    return [HandCase(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def score_hand_cases(answerer: Answerer, cases: Sequence[HandCase]) -> tuple[float, list[HandResult]]:
    """Accuracy on hand-written questions: status, answer boxes, yes/no and missing facts must match."""
    answers = answerer.ask_many([c.question for c in cases])
    results = []
    for c, a in zip(cases, answers, strict=True):
        ok = a.status == c.status
        if ok and c.status == "answered":
            ok = sorted(e.text for e in a.evidence) == sorted(c.answer)
            if c.advisable is not None:
                ok = ok and a.advisable == c.advisable
        if ok and c.status == "needs_more_info" and c.missing:
            ok = all(any(m in got for got in a.missing_facts) for m in c.missing)
        results.append(HandResult(question=c.question, expected_status=c.status, status=a.status, correct=ok,
                                  answer=a.answer))
    return (sum(r.correct for r in results) / max(1, len(results))), results


def metrics_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: ("" if v is None else v) for k, v in r.items()} for r in rows]
