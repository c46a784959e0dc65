"""Constraint accuracy against a truth file: P/R/F1 per attribute and overall, whole-box exact."""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from dkg.constraints.models import AnyOf, Constraint, Item, items_from_json
from dkg.pdf.evaluate import normalise


class AttrScore(BaseModel):
    """Counts and scores of one attribute (``any_of`` counts disjunctions as one item)."""

    tp: int
    fp: int
    fn: int
    precision: float
    recall: float
    f1: float


class ConstraintScores(BaseModel):
    """The report of ``dkg eval constraints``."""

    boxes: int
    boxes_matched: int
    overall: AttrScore
    box_exact: float
    per_attribute: dict[str, AttrScore]


def _attr(i: Item) -> str:
    return "any_of" if isinstance(i, AnyOf) else i.attr


def _score(tp: int, fp: int, fn: int) -> AttrScore:
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return AttrScore(tp=tp, fp=fp, fn=fn, precision=p, recall=r, f1=2 * p * r / (p + r) if p + r else 0.0)


def read_csv_boxes(path: Path) -> dict[tuple[str, str], list[Item]]:
    """(page label, normalised text) → constraints, from a constraint CSV."""
    out: dict[tuple[str, str], list[Item]] = {}
    with open(path, encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            for side in ("head", "tail"):
                key = (row[f"{side}_page"], normalise(row[f"{side}_plain"]))
                out.setdefault(key, items_from_json(json.loads(row[f"{side}_constraints"] or "[]")))
    return out


def score_constraints(csv_path: Path, truth: dict[str, Any]) -> ConstraintScores:
    """Compare a constraint CSV with the truth's node constraints (a constraint counts when attr,
    op, value and unit all match; an ``any_of`` counts when it matches as a whole)."""
    got = read_csv_boxes(csv_path)
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    exact = matched = 0
    for node in truth["nodes"]:
        key = (node.get("page") or "", normalise(node["text"]))
        want = items_from_json(node.get("constraints", []))
        if key not in got:
            for w in want:
                counts[_attr(w)][2] += 1
            continue
        matched += 1
        have = got[key]
        wk = {i.key(): i for i in want}
        hk = {i.key(): i for i in have}
        for k, i in hk.items():
            counts[_attr(i)][0 if k in wk else 1] += 1
        for k, i in wk.items():
            if k not in hk:
                counts[_attr(i)][2] += 1
        exact += set(wk) == set(hk)
    total = [sum(c[i] for c in counts.values()) for i in range(3)]
    return ConstraintScores(
        boxes=len(truth["nodes"]), boxes_matched=matched, overall=_score(*total),
        box_exact=exact / len(truth["nodes"]) if truth["nodes"] else 1.0,
        per_attribute={a: _score(*c) for a, c in sorted(counts.items())},
    )


__all__ = ["AttrScore", "Constraint", "ConstraintScores", "score_constraints"]
