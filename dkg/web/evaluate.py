"""`dkg eval rag`: both modes side by side — reference recall, answered in scope, refused out of scope,
answer-span recall and token F1 (SQuAD-style, when the questions carry the gold answer), grounding, latency."""

from __future__ import annotations

import json
import re
import string
import time
from collections import Counter
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
    """Reference recall: share of questions whose expected page is among the references (when the questions
    name one)."""
    answered_on_page: float | None = None
    """Share of questions (naming an expected page) answered with that page among the references: what a
    clinician gets, an answer from the right page."""
    span_recall: float | None = None
    """Share of questions (with a gold ``answer``) answered with a text that contains the gold answer
    (both normalised as in SQuAD: lower case, no punctuation or articles); a refusal counts as a miss."""
    token_f1: float | None = None
    """Mean SQuAD token F1 of the answer against the gold answer (a refusal scores 0)."""


class RagEvaluation(BaseModel):
    mode: str = "protocol"
    in_scope: GroupReport | None
    out_of_scope: GroupReport | None
    seconds: float
    latency_ms_p50: float
    latency_ms_p95: float


class RagComparison(BaseModel):
    """``dkg eval rag``: every mode over the same questions in one run."""

    questions: int
    modes: dict[str, RagEvaluation]


def normalise(text: str) -> str:
    """SQuAD's answer normalisation: lower case, punctuation and articles removed, whitespace collapsed."""
    t = "".join(c for c in text.lower() if c not in string.punctuation)
    return " ".join(re.sub(r"\b(?:a|an|the)\b", " ", t).split())


def token_f1(prediction: str, gold: str) -> float:
    p, g = normalise(prediction).split(), normalise(gold).split()
    common = sum((Counter(p) & Counter(g)).values())
    if not common:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


def load_questions(path: Path) -> list[dict[str, Any]]:
    """JSONL rows: ``question``, ``in_scope`` (bool), optionally ``expected_url``."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _group(rows: Sequence[tuple[dict[str, Any], RagAnswer]], index: SiteIndex, best: bool = False,
           ) -> GroupReport | None:
    if not rows:
        return None
    # pages the mode searches: the medical ones (protocol), and in the best mode also those it keeps as the
    # site's own text although the fixed clinical-word list turned them down
    medical = {p.url for p in index.pages} | ({p.url for p in index.passages.passages} if best else set())
    refs = [len(a.references) for _, a in rows]
    total = sum(refs)
    effective = sum(len({r.url for r in a.references} & medical) for _, a in rows)
    answered = [(q, a) for q, a in rows if a.status == "answered"]
    grounds = []
    text_of = {p.url: p.text for p in index.all_pages}
    for q, a in answered:
        reference = " ".join(text_of.get(r.url, "") for r in a.references)
        grounds.append(grounding(a.answer, reference, detect_language(str(q["question"]))))
    with_expected = [(q, a) for q, a in rows if q.get("expected_url")]
    hits = sum(1 for q, a in with_expected if any(r.url.endswith(str(q["expected_url"])) for r in a.references))
    on_page = sum(1 for q, a in with_expected if a.status == "answered" and
                  any(r.url.endswith(str(q["expected_url"])) for r in a.references))
    gold = [(q, a) for q, a in rows if q.get("answer")]
    spans = sum(1 for q, a in gold if a.status == "answered" and normalise(str(q["answer"])) in normalise(a.answer))
    f1 = sum(token_f1(a.answer, str(q["answer"])) for q, a in gold if a.status == "answered")
    n = len(rows)
    return GroupReport(questions=n, referenced_pages_mean=round(total / n, 2),
                       effective_references_pct=round(100 * effective / total, 1) if total else 100.0,
                       answered=len(answered), refused=n - len(answered),
                       answered_pct=round(100 * len(answered) / n, 1),
                       refused_pct=round(100 * (n - len(answered)) / n, 1),
                       grounding_mean=round(sum(grounds) / len(grounds), 3) if grounds else None,
                       hit_rate=round(hits / len(with_expected), 3) if with_expected else None,
                       answered_on_page=round(on_page / len(with_expected), 3) if with_expected else None,
                       span_recall=round(spans / len(gold), 3) if gold else None,
                       token_f1=round(f1 / len(gold), 3) if gold else None)


def evaluate(settings: Settings, index: SiteIndex, questions: Sequence[dict[str, Any]],
             mode: str | None = None) -> RagEvaluation:
    """Ask every question (each on its own) in one mode (the setting ``rag_mode`` by default) and summarise
    per scope."""
    mode = mode or settings.rag_mode
    t0 = time.perf_counter()
    rows = []
    lat = []
    for q in questions:
        t = time.perf_counter()
        rows.append((q, ask(settings, index, str(q["question"]), mode=mode)))
        lat.append((time.perf_counter() - t) * 1000)
    lat.sort()
    best = mode == "best"
    return RagEvaluation(mode=mode, in_scope=_group([r for r in rows if r[0].get("in_scope")], index, best),
                         out_of_scope=_group([r for r in rows if not r[0].get("in_scope")], index, best),
                         seconds=round(time.perf_counter() - t0, 1),
                         latency_ms_p50=round(lat[len(lat) // 2], 1) if lat else 0.0,
                         latency_ms_p95=round(lat[int(len(lat) * 0.95)] if lat else 0.0, 1))


def compare(settings: Settings, index: SiteIndex, questions: Sequence[dict[str, Any]],
            modes: Sequence[str] = ("protocol", "best")) -> RagComparison:
    """The same questions through every mode, in one run."""
    return RagComparison(questions=len(questions), modes={m: evaluate(settings, index, questions, m) for m in modes})
