"""`dkg eval rag`: referenced pages, effective references, answered vs refused, grounding, hit rate."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from dkg.settings import Settings
from dkg.web.rag import RagAnswer, SiteIndex, ask, grounding
from dkg.web.text import detect_language


class GroupReport(BaseModel):
    """One row of the evaluation table (in-scope or out-of-scope questions)."""

    questions: int
    referenced_pages_mean: float
    effective_references_pct: float
    answered: int
    refused: int
    answered_pct: float
    refused_pct: float
    grounding_mean: float | None
    hit_rate: float | None = None
    """Share of questions whose expected page is among the references (when the questions name one)."""


class RagEvaluation(BaseModel):
    in_scope: GroupReport | None
    out_of_scope: GroupReport | None
    seconds: float
    latency_ms_p50: float
    latency_ms_p95: float


def load_questions(path: Path) -> list[dict[str, Any]]:
    """JSONL rows: ``question``, ``in_scope`` (bool), optionally ``expected_url``."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _group(rows: Sequence[tuple[dict[str, Any], RagAnswer]], index: SiteIndex) -> GroupReport | None:
    if not rows:
        return None
    medical = {p.url for p in index.pages}
    refs = [len(a.references) for _, a in rows]
    total = sum(refs)
    effective = sum(len({r.url for r in a.references} & medical) for _, a in rows)
    answered = [(q, a) for q, a in rows if a.status == "answered"]
    grounds = []
    text_of = {p.url: p.text for p in index.pages}
    for q, a in answered:
        reference = " ".join(text_of.get(r.url, "") for r in a.references)
        grounds.append(grounding(a.answer, reference, detect_language(str(q["question"]))))
    with_expected = [(q, a) for q, a in rows if q.get("expected_url")]
    hits = sum(1 for q, a in with_expected if any(r.url.endswith(str(q["expected_url"])) for r in a.references))
    n = len(rows)
    return GroupReport(questions=n, referenced_pages_mean=round(total / n, 2),
                       effective_references_pct=round(100 * effective / total, 1) if total else 100.0,
                       answered=len(answered), refused=n - len(answered),
                       answered_pct=round(100 * len(answered) / n, 1),
                       refused_pct=round(100 * (n - len(answered)) / n, 1),
                       grounding_mean=round(sum(grounds) / len(grounds), 3) if grounds else None,
                       hit_rate=round(hits / len(with_expected), 3) if with_expected else None)


def evaluate(settings: Settings, index: SiteIndex, questions: Sequence[dict[str, Any]]) -> RagEvaluation:
    """Ask every question (each on its own) and summarise per scope."""
    t0 = time.perf_counter()
    rows = []
    lat = []
    for q in questions:
        t = time.perf_counter()
        rows.append((q, ask(settings, index, str(q["question"]))))
        lat.append((time.perf_counter() - t) * 1000)
    lat.sort()
    return RagEvaluation(in_scope=_group([r for r in rows if r[0].get("in_scope")], index),
                         out_of_scope=_group([r for r in rows if not r[0].get("in_scope")], index),
                         seconds=round(time.perf_counter() - t0, 1),
                         latency_ms_p50=round(lat[len(lat) // 2], 1) if lat else 0.0,
                         latency_ms_p95=round(lat[int(len(lat) * 0.95)] if lat else 0.0, 1))
