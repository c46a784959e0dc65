"""Constraint accuracy against a truth file: P/R/F1 per attribute and overall, whole-box exact."""

from __future__ import annotations

import csv
import json
import re
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


_POLARITY = {"yes": "+", "present": "+", "positive": "+", "no": "-", "absent": "-", "negative": "-", "none": "-"}


def _norm_value(v: Any, polarity: bool = False) -> Any:
    if isinstance(v, list):
        return sorted(_norm_value(x, polarity) for x in v)
    if polarity and isinstance(v, str) and v.strip().lower() in _POLARITY:
        return _POLARITY[v.strip().lower()]
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str):
        return re.sub(r"[\s_-]+", " ", v.strip().lower())
    return v


def _norm_unit(u: str | None) -> str:
    return re.sub(r"\s+", "", (u or "").lower())


def _shape(c: Constraint, polarity: bool = False) -> str:
    """A constraint without its attribute name: operator, value and unit (case and separators ignored)."""
    return json.dumps([c.op, _norm_value(c.value, polarity), _norm_unit(c.unit)], sort_keys=True, default=str)


def _members(items: list[Item]) -> list[Constraint]:
    return [m for i in items for m in ([c for alt in i.alternatives for c in alt] if isinstance(i, AnyOf) else [i])]


def attribute_map(pairs: list[tuple[list[Item], list[Item]]], polarity: bool = False) -> dict[str, str]:
    """Predicted attribute name → truth attribute name, one to one, from the boxes both sides describe.

    Two names are paired by how many boxes hold a predicted and a true constraint of the same operator,
    value and unit under them, most first (an exact name match, then shared words, break ties). Values and
    operators must agree; only the naming is free, as a guideline nobody here wrote names its attributes its
    own way.
    """
    votes: dict[tuple[str, str], int] = defaultdict(int)
    for want, have in pairs:
        truth_by_shape: dict[str, set[str]] = defaultdict(set)
        for c in _members(want):
            truth_by_shape[_shape(c, polarity)].add(c.attr)
        for c in _members(have):
            for t in truth_by_shape.get(_shape(c, polarity), ()):
                votes[(c.attr, t)] += 1
    mapping: dict[str, str] = {}
    used: set[str] = set()
    def shared_words(a: str, b: str) -> int:
        return len(set(re.split(r"[\W_]+", a.lower())) & set(re.split(r"[\W_]+", b.lower())))

    ranked = sorted(votes.items(), key=lambda kv: (-kv[1], kv[0][0] != kv[0][1], -shared_words(*kv[0]), kv[0]))
    for (pred, true), _ in ranked:
        if pred not in mapping and true not in used:
            mapping[pred] = true
            used.add(true)
    return mapping


def _canonical(items: list[Item], mapping: dict[str, str] | None, polarity: bool = False) -> list[Item]:
    """Items with attributes renamed by ``mapping`` and values normalised (case, separators, 1.0 = 1; with
    ``polarity``, yes/present/positive and no/absent/negative/none as one value each)."""
    def one(c: Constraint) -> Constraint:
        attr = mapping.get(c.attr, "~" + c.attr) if mapping is not None else c.attr
        return Constraint(attr=attr, op=c.op, value=_norm_value(c.value, polarity), unit=_norm_unit(c.unit) or None)

    return [AnyOf(alternatives=tuple(tuple(one(c) for c in alt) for alt in i.alternatives)) if isinstance(i, AnyOf)
            else one(i) for i in items]


def score_constraints(csv_path: Path, truth: dict[str, Any], naming_blind: bool = False,
                      polarity_blind: bool = False) -> ConstraintScores:
    """Compare a constraint CSV with the truth's node constraints (a constraint counts when attr,
    op, value and unit all match; an ``any_of`` counts when it matches as a whole).

    With ``naming_blind`` the attribute names are paired first (:func:`attribute_map`), so a guideline's
    ``bulky`` may be the extractor's ``bulky_disease``; operators, values and units must still agree.
    ``polarity_blind`` (with ``naming_blind``) also takes yes/present/positive for one value, and no/absent/
    negative/none for the other: annotators name a two-valued finding's values in each of these ways.
    """
    got = read_csv_boxes(csv_path)
    if naming_blind:
        pairs = [(items_from_json(n.get("constraints", [])), got[box]) for n in truth["nodes"]
                 if (box := ((n.get("page") or ""), normalise(n["text"]))) in got]
        mapping = attribute_map(pairs, polarity_blind)
        truth_attrs = {c.attr for n in truth["nodes"] for c in _members(items_from_json(n.get("constraints", [])))}
        identity = {a: a for a in truth_attrs}
        got = {k: _canonical(v, mapping, polarity_blind) for k, v in got.items()}
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    exact = matched = 0
    for node in truth["nodes"]:
        key = (node.get("page") or "", normalise(node["text"]))
        want = items_from_json(node.get("constraints", []))
        if naming_blind:
            want = _canonical(want, identity, polarity_blind)
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
