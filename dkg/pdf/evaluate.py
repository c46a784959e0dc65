"""Compare a parsed guideline with a ground-truth file (the format of ``shared/reference``)."""

from __future__ import annotations

import difflib
import json
import re
import unicodedata
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from dkg.pdf.models import GuidelineGraph


class IngestScores(BaseModel):
    """Accuracy of one parsed document against its truth."""

    document: str
    boxes_truth: int
    boxes_found: int
    boxes_matched: int
    box_exact: float
    cer: float
    edge_precision: float
    edge_recall: float
    edge_f1: float
    footnote_rate: float
    link_rate: float
    label_accuracy: float


def normalise(text: str) -> str:
    """NFKC, unified dashes and quotes, collapsed whitespace."""
    t = unicodedata.normalize("NFKC", text)
    t = t.replace("\u2019", "'").replace("\u201c", '"').replace("\u201d", '"')
    t = re.sub("[\u2010-\u2015\u2212]", "-", t)  # hyphen, en and em dashes, minus: one dash
    return re.sub(r"\s+", " ", t).strip()


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions)."""
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def match_boxes(graph: GuidelineGraph, truth: dict[str, Any]) -> dict[str, str]:
    """Map truth node id → predicted box id, greedily by text similarity within each page."""
    mapping: dict[str, str] = {}
    by_page: dict[int, list[Any]] = {}
    for b in graph.boxes:
        by_page.setdefault(b.page_index, []).append(b)
    for page_index in {n["page_index"] for n in truth["nodes"]}:
        nodes = [n for n in truth["nodes"] if n["page_index"] == page_index]
        boxes = by_page.get(page_index, [])
        pairs = []
        for n in nodes:
            for b in boxes:
                r = difflib.SequenceMatcher(None, normalise(n["text"]), normalise(b.text)).ratio()
                # Identical texts on one page ("Wide excision" twice) are told apart by position.
                pairs.append((r + 0.3 * _iou(tuple(n["bbox"]), b.bbox), n["id"], b.id))
        used_b: set[str] = set()
        for r, nid, bid in sorted(pairs, reverse=True):
            if r < 0.55 or nid in mapping or bid in used_b:
                continue
            mapping[nid] = bid
            used_b.add(bid)
    _resolve_twins(mapping, graph, truth)
    return mapping


def _resolve_twins(mapping: dict[str, str], graph: GuidelineGraph, truth: dict[str, Any]) -> None:
    """Truth boxes with the same text on one page and no position ("Go to Module B, Box 18" twice in a truth
    written without coordinates) cannot be told apart by text: they take the assignment of their matched
    boxes that agrees with the most truth arrows (the arrows are what makes them different boxes)."""
    import itertools

    nodes = {n["id"]: n for n in truth["nodes"]}
    groups: dict[tuple[int, str], list[str]] = {}
    for nid in mapping:
        n = nodes[nid]
        if not any(n.get("bbox") or [0]):
            groups.setdefault((n["page_index"], normalise(n["text"])), []).append(nid)
    pred = {(a.source, a.target) for p in graph.pages for a in p.arrows}
    want = [(e["from"], e["to"]) for e in truth["edges"]]
    for twins in groups.values():
        if not 1 < len(twins) <= 6:
            continue
        boxes = [mapping[t] for t in twins]

        def agreement(order: tuple[str, ...], twins: list[str] = twins) -> int:
            trial = {**mapping, **dict(zip(twins, order, strict=True))}
            return sum((trial.get(a), trial.get(b)) in pred for a, b in want if a in twins or b in twins)
        best = max(itertools.permutations(boxes), key=agreement)
        mapping.update(zip(twins, best, strict=True))


def _iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def text_errors(graph: GuidelineGraph, truth: dict[str, Any],
                mapping: dict[str, str] | None = None) -> tuple[int, int]:
    """Character edits from each truth box's text to its matched box's (a box not found: all its characters),
    and the truth's characters: their ratio is the box-text character error rate."""
    mapping = match_boxes(graph, truth) if mapping is None else mapping
    boxes = {b.id: b for b in graph.boxes}
    errors = total = 0
    for n in truth["nodes"]:
        want = normalise(n["text"])
        total += len(want)
        errors += levenshtein(normalise(boxes[mapping[n["id"]]].text), want) if n["id"] in mapping else len(want)
    return errors, total


def score(graph: GuidelineGraph, truth: dict[str, Any]) -> IngestScores:
    """Box-text exact match and CER, edge P/R/F1, footnote and link resolution, label accuracy."""
    mapping = match_boxes(graph, truth)
    boxes = {b.id: b for b in graph.boxes}
    exact = sum(1 for n in truth["nodes"] if n["id"] in mapping
                and normalise(boxes[mapping[n["id"]]].text) == normalise(n["text"]))
    errors, total = text_errors(graph, truth, mapping)
    back = {v: k for k, v in mapping.items()}
    pred_edges = {(back.get(a.source), back.get(a.target)): a.label for p in graph.pages for a in p.arrows}
    truth_edges = {(e["from"], e["to"]): e.get("label") for e in truth["edges"]}
    tp = sum(1 for e in pred_edges if e in truth_edges)
    precision = tp / len(pred_edges) if pred_edges else 0.0
    recall = tp / len(truth_edges) if truth_edges else 1.0
    labelled = [e for e, lab in truth_edges.items() if lab]
    label_ok = sum(1 for e in labelled if (pred_edges.get(e) or None) == truth_edges[e])
    unlabelled_ok = sum(1 for e, lab in truth_edges.items() if not lab and e in pred_edges and not pred_edges[e])
    label_acc = (label_ok + unlabelled_ok) / len(truth_edges) if truth_edges else 1.0
    notes_total = notes_ok = 0
    for n in truth["nodes"]:
        for f in n.get("footnotes", []):
            notes_total += 1
            b = boxes.get(mapping.get(n["id"], ""))
            if b and any(r.marker == f["marker"] and r.text and normalise(r.text) == normalise(f["text"])
                         for r in b.footnotes):
                notes_ok += 1
    links_total = links_ok = 0
    pred_links = [lk for p in graph.pages for lk in p.links]
    for lk in truth.get("page_links", []):
        links_total += 1
        src = mapping.get(lk["from"])
        want_boxes = {mapping.get(t) for t in lk["target_nodes"]}
        if any(p.source == src and p.target_page_label == lk["target_page"] and set(p.target_boxes) == want_boxes
               and p.resolved for p in pred_links):
            links_ok += 1
    return IngestScores(
        document=truth["document"]["pdf"], boxes_truth=len(truth["nodes"]), boxes_found=len(graph.boxes),
        boxes_matched=len(mapping), box_exact=exact / len(truth["nodes"]) if truth["nodes"] else 1.0,
        cer=errors / total if total else 0.0, edge_precision=precision, edge_recall=recall,
        edge_f1=_f1(precision, recall), footnote_rate=notes_ok / notes_total if notes_total else 1.0,
        link_rate=links_ok / links_total if links_total else 1.0, label_accuracy=label_acc,
    )


def load_truth(path: Path) -> dict[str, Any]:
    """Read a truth.json file."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data
