"""Evaluation as in the DKG paper's Table 2: ROUGE-1 P/R/F, BLEU, Jaccard and accuracy.

(a) with the DKG: the model writes Cypher, the checked query runs on Neo4j, the matched node is the
answer; correct when the answer nodes are the expected nodes (and, for "is X advisable", the yes/no
is right; for questions the guideline does not cover, when the answer is ``not_covered``).
(b) without the DKG (the paper's baseline): a transformer of the same size writes the answer text;
correct when the text equals the expected answer.

Text metrics compare the answer text with the item's ``ANSWER``: ROUGE-1 from ``rouge-score``,
BLEU from nltk's ``sentence_bleu`` with equal weights over 1–4-grams (smoothing method 1, since
many answers are shorter than four words), Jaccard of the lower-cased word sets.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from dkg.qa.answer import Answer, Answerer
from dkg.qa.config import load_config
from dkg.qa.dataset import QAItem
from dkg.qa.model import Seq2Seq

PAPER = {"with_dkg": {"accuracy": 0.676, "rouge1_f": 0.96, "bleu": 0.95, "jaccard": 0.92},
         "without_dkg": {"accuracy": 0.259}}


class Metrics(BaseModel):
    """One column of Table 2."""

    n: int
    rouge1_p: float
    rouge1_r: float
    rouge1_f: float
    bleu: float
    jaccard: float
    accuracy: float
    seconds: float = 0.0


def _words(text: str) -> list[str]:
    return re.findall(r"[\w+±≥≤%-]+", text.lower())


def text_scores(preds: Sequence[str], refs: Sequence[str]) -> dict[str, float]:
    """Mean ROUGE-1 P/R/F, BLEU and Jaccard over pairs."""
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=False)
    smooth = SmoothingFunction().method1
    p = r = f = b = j = 0.0
    for pred, ref in zip(preds, refs, strict=True):
        s = scorer.score(ref, pred)["rouge1"]
        p, r, f = p + s.precision, r + s.recall, f + s.fmeasure
        pw, rw = _words(pred), _words(ref)
        b += sentence_bleu([rw], pw, weights=(0.25, 0.25, 0.25, 0.25), smoothing_function=smooth) if pw and rw \
            else 0.0
        sp, sr = set(pw), set(rw)
        j += len(sp & sr) / len(sp | sr) if sp | sr else 1.0
    n = max(1, len(preds))
    return {"rouge1_p": round(p / n, 4), "rouge1_r": round(r / n, 4), "rouge1_f": round(f / n, 4),
            "bleu": round(b / n, 4), "jaccard": round(j / n, 4)}


def correct(item: QAItem, a: Answer) -> bool:
    """Is the DKG answer the expected node (and the right yes/no, or a refusal where due)?"""
    if item.type == "not_covered":
        return a.status == "not_covered"
    if a.status != "answered" or a.nodes != sorted(item.Expected_Node):
        return False
    return item.type != "advisable" or a.advisable == item.advisable


def _answer_text(a: Answer) -> str:
    return load_config().not_covered_answer if a.status == "not_covered" else a.answer


class EvalRecord(BaseModel):
    id: str
    type: str
    question: str
    status: str
    correct: bool
    answer: str
    expected: str
    cypher: str | None


def evaluate_dkg(answerer: Answerer, items: Sequence[QAItem]) -> tuple[Metrics, list[EvalRecord]]:
    """Column (a): the questions answered through the DKG."""
    t0 = time.perf_counter()
    answers = answerer.ask_many([it.QUESTION for it in items])
    ok = [correct(it, a) for it, a in zip(items, answers, strict=True)]
    texts = [_answer_text(a) for a in answers]
    m = Metrics(n=len(items), accuracy=round(sum(ok) / max(1, len(items)), 4),
                seconds=round(time.perf_counter() - t0, 1), **text_scores(texts, [it.ANSWER for it in items]))
    recs = [EvalRecord(id=it.id, type=it.type, question=it.QUESTION, status=a.status, correct=c, answer=a.answer,
                       expected=it.ANSWER, cypher=a.cypher) for it, a, c in zip(items, answers, ok, strict=True)]
    return m, recs


def _norm(text: str) -> str:
    return " ".join(_words(text))


def evaluate_baseline(model: Seq2Seq, items: Sequence[QAItem]) -> Metrics:
    """Column (b): the transformer that writes the answer without the DKG."""
    t0 = time.perf_counter()
    preds = model.generate([it.QUESTION for it in items])
    ok = sum(_norm(p) == _norm(it.ANSWER) for p, it in zip(preds, items, strict=True))
    return Metrics(n=len(items), accuracy=round(ok / max(1, len(items)), 4), seconds=round(time.perf_counter() - t0, 1),
                   **text_scores(preds, [it.ANSWER for it in items]))


def table(with_dkg: Metrics, without: Metrics | None) -> list[dict[str, Any]]:
    """Rows of Table 2 beside the paper's numbers."""
    rows = []
    for key, label in (("rouge1_p", "ROUGE-1 precision"), ("rouge1_r", "ROUGE-1 recall"), ("rouge1_f", "ROUGE-1 F"),
                       ("bleu", "BLEU"), ("jaccard", "Jaccard"), ("accuracy", "accuracy")):
        rows.append({"metric": label, "with DKG": getattr(with_dkg, key),
                     "without DKG": getattr(without, key) if without else None,
                     "paper with DKG": PAPER["with_dkg"].get(key), "paper without DKG": PAPER["without_dkg"].get(key)})
    return rows
